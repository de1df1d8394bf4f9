/*-------------------------------------------------------------------------
 *
 * rest_delegation.h
 *	  Access delegation on the REST catalog: vended credentials and remote
 *	  signing (see rest_delegation.c).
 *
 * IDENTIFICATION
 *	  src/rest/rest_delegation.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_REST_DELEGATION_H
#define SKADE_REST_DELEGATION_H

#include "lib/stringinfo.h"

#include "io/route.h"
#include "rest/rest_request.h"

typedef enum RestDelegation
{
	REST_DELEGATE_NONE,
	REST_DELEGATE_VENDED,
	REST_DELEGATE_SIGNING
} RestDelegation;

/* the table a delegation is for */
typedef struct RestTableRef
{
	const char *catalog;
	const char *ns;				/* dotted */
	const char *name;
	const char *location;		/* the table's location, as its metadata has it */
} RestTableRef;

extern const char *RestTableLocation(const SkadeRoute *route, const char *metadata_location,
									 bool refs);
extern int	RestDelegationAsked(const RestRequest *req, RestDelegation *modes);
extern void RestDelegationConfig(const RestRequest *req, const RestTableRef *t,
								 StringInfo config, StringInfo creds);
extern void RestCredentialsAnswer(const RestTableRef *t, StringInfo body);
extern void RestSignAnswer(const RestRequest *req, const RestTableRef *t, StringInfo body);

#endif							/* SKADE_REST_DELEGATION_H */
