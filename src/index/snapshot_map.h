/*-------------------------------------------------------------------------
 *
 * snapshot_map.h
 *	  skade.snapshot_map: snapshot id -> (table, metadata) from heap tables.
 *
 * IDENTIFICATION
 *	  src/index/snapshot_map.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_SNAPSHOT_MAP_H
#define SKADE_SNAPSHOT_MAP_H

#include "datatype/timestamp.h"
#include "format/metadata_json.h"

/*
 * One resolved snapshot: text datums, palloc'd (tables may share theirs).
 * When the caller asked for raw locations (IndexResolve), a tree answer's
 * location is raw_location instead: the NUL-terminated string inside the
 * mapped index generation, valid until this backend's next IndexResolve
 * (location is then 0); heap answers always come as datums.
 */
typedef struct SnapshotHit
{
	bool		found;
	Datum		catalog;
	Datum		ns;
	Datum		name;
	Datum		location;
	const char *raw_location;
} SnapshotHit;

/* write side: the commit-log trigger (runs as the log's owner) */
/*
 * Told of each change of the map before it is made, in the writer's
 * transaction: the snapshots a commit adds, a table whose snapshots move or
 * go, or everything (a truncate).
 */
typedef struct SnapshotMapListener
{
	void		(*snapshots) (Datum *ids, int n);
	void		(*table) (Datum catalog, Datum ns, Datum name);
	void		(*everything) (void);
} SnapshotMapListener;

extern void SnapshotMapListen(const SnapshotMapListener *l);
extern void SnapshotMapRecord(int64 seq, Datum catalog, Datum ns, Datum name,
							  const char *location, TimestampTz committed_at,
							  const SkadeMeta *meta, const SkadeMeta *old);
extern void SnapshotMapMove(Datum catalog, Datum ns, Datum name,
							Datum new_catalog, Datum new_ns, Datum new_name);
extern void SnapshotMapDrop(Datum catalog, Datum ns, Datum name);
extern void SnapshotMapTruncate(void);

/* read side: the heap path */
extern void SnapshotMapResolveHeap(const int64 *ids, const bool *nulls, int n,
								   const char *catalog, const char *ns, const char *name,
								   SnapshotHit *hits);

#endif							/* SKADE_SNAPSHOT_MAP_H */
