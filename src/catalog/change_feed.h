/*-------------------------------------------------------------------------
 *
 * change_feed.h
 *	  The commit log as an exact, resumable feed (skade.changes()): the
 *	  reservation of each row's seq beside the catalog writers still in
 *	  progress, the feed row that records them, and the wake-up.
 *
 * IDENTIFICATION
 *	  src/catalog/change_feed.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_CHANGE_FEED_H
#define SKADE_CHANGE_FEED_H

#include "format/metadata_json.h"

/* the notification channel; its payload is the new row's seq */
#define SKADE_CHANGES_CHANNEL "skade_changes"

extern Size SkadeFeedShmemSize(void);
extern void SkadeFeedShmemRequest(void);
extern void SkadeFeedShmemInit(void);

extern int64 SkadeFeedReserve(Oid seq_relid, Datum *pending);
extern void SkadeFeedRecord(int64 seq, Datum pending, const SkadeMeta *meta,
							const SkadeMeta *old, bool snapshots_known);

#endif							/* SKADE_CHANGE_FEED_H */
