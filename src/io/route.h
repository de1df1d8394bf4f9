/*-------------------------------------------------------------------------
 *
 * route.h
 *	  Where an object's requests go: every read and write of a location
 *	  names its route, so that a path that forgets it does not compile.
 *
 * A route is one of
 *   - a namespace of a catalog (catalog and ns set): that namespace's, or
 *     its nearest ancestor's, s3.endpoint, s3.region, s3.path-style-access
 *     and the vending properties override the cluster's settings
 *     (object_store.c resolves them once per transaction, and checks the
 *     endpoint against skade.s3_allowed_endpoints);
 *   - the cluster's settings alone (SKADE_ROUTE_SETTINGS): for a location
 *     that belongs to no table the caller named (skade.metadata(location),
 *     local files);
 *   - a route as the journal of written files recorded it when the object
 *     was created (resolved: the text SkadeWriteJournal.journal was given),
 *     so that the sweep asks where the object was written.
 * Local files ignore the route.  The strings are the caller's, read during
 * the call only.
 *
 * IDENTIFICATION
 *	  src/io/route.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_ROUTE_H
#define SKADE_ROUTE_H

typedef struct SkadeRoute
{
	const char *catalog;		/* with ns: that namespace's overrides */
	const char *ns;
	const char *resolved;		/* or: as the journal recorded it */
} SkadeRoute;

/* the route of namespace ns of catalog (a compound literal: for one call or block) */
#define SKADE_ROUTE(catalog, ns)	(&(const SkadeRoute) {(catalog), (ns), NULL})

/* the cluster's settings alone */
#define SKADE_ROUTE_SETTINGS		(&(const SkadeRoute) {NULL, NULL, NULL})

#endif							/* SKADE_ROUTE_H */
