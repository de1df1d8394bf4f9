/*-------------------------------------------------------------------------
 *
 * object_store.h
 *	  s3:// locations: confined reads, create-only writes and removals
 *	  (see object_store.c).
 *
 * IDENTIFICATION
 *	  src/io/object_store.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_OBJECT_STORE_H
#define SKADE_OBJECT_STORE_H

#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "utils/jsonb.h"

#include "io/route.h"
#include "io/s3_client.h"

/* Why a location could not be read (SkadeProbeLocation) */
typedef enum SkadeReadStatus
{
	SKADE_READ_OK,
	SKADE_READ_UNSUPPORTED,		/* a scheme other than file (s3://, ...) */
	SKADE_READ_DENIED,			/* outside skade.allowed_roots, or none set */
	SKADE_READ_MISSING,			/* no such file (inside the roots) */
	SKADE_READ_FAILED			/* anything else */
} SkadeReadStatus;

/* where a client's requests for the objects below a prefix go */
typedef struct SkadeObjectPrefix
{
	char	   *location;		/* canonical s3://bucket[/key], no trailing '/' */
	char	   *bucket;
	char	   *key;			/* "" for the whole bucket */
	char	   *url;			/* scheme://host/path of the prefix, as a request names it */
	char	   *host;
	char	   *region;
	char	   *endpoint;		/* as configured ("": AWS) */
	bool		path_style;
	bool		writable;		/* inside skade.write_roots */
	char	   *sts_endpoint;	/* the vending settings ("": none) */
	char	   *role_arn;
	char	   *external_id;
} SkadeObjectPrefix;

/*
 * The properties of namespace ns of catalog (a jsonb object, {} when none),
 * as the catalog layer reads them: given once by skade.c, so that storage
 * never calls up into the catalog.
 */
typedef Jsonb *(*SkadeNamespacePropertiesFn) (const char *catalog, const char *ns);

extern void SkadeObjectSetPropertiesReader(SkadeNamespacePropertiesFn reader);

/*
 * The journal of written files (written_files.c), as the writers of local
 * files and objects use it: journal a location before anything is created
 * there (an object with its route as resolved, for a SkadeRoute's
 * resolved; NULL: the settings, or a local file), remember what was
 * created (removed if the transaction aborts).
 * Given once by skade.c, so that the writers never call up into the
 * journal, which calls them to remove files.
 */
typedef struct SkadeWriteJournal
{
	void		(*journal) (const char *location, const char *route);
	void		(*remember) (const char *root, const char *rest);
} SkadeWriteJournal;

extern void SkadeSetWriteJournal(const SkadeWriteJournal *j);
extern const SkadeWriteJournal *SkadeWriteJournalOf(void);
extern StringInfo SkadeObjectRead(const SkadeRoute *route, const char *location, size_t cap,
								  char **real_path);
extern void SkadeObjectPrefetch(const SkadeRoute *route, List *locations, size_t cap);
extern bool SkadeObjectAllowed(const char *real_path);
extern void SkadeObjectWritable(const SkadeRoute *route, const char *location, const char *verb,
								char **root, char **rest);
extern char *SkadeObjectCreate(const SkadeRoute *route, const char *location, const char *data,
							   size_t len);
extern int	SkadeObjectRemove(const char *root, const char *rest);
extern SkadeReadStatus SkadeObjectProbe(const char *location);
extern List *SkadeObjectsAbsent(List *locations, List *routes);
extern void SkadeObjectPrefixRoute(const SkadeRoute *route, const char *location,
								   SkadeObjectPrefix *p);
extern const S3Credentials *SkadeObjectKey(void);

#endif							/* SKADE_OBJECT_STORE_H */
