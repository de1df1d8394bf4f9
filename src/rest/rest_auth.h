/*-------------------------------------------------------------------------
 *
 * rest_auth.h
 *	  Who a REST request is: its credentials mapped to a role that may log
 *	  in now (see rest_auth.c).
 *
 * IDENTIFICATION
 *	  src/rest/rest_auth.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_REST_AUTH_H
#define SKADE_REST_AUTH_H

extern Oid	RestAuthenticate(const char *authorization, const char **problem);
extern bool RestRoleUsable(Oid role, bool need_login, const char **why);

#endif							/* SKADE_REST_AUTH_H */
