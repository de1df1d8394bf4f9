/*-------------------------------------------------------------------------
 *
 * commit_rebase.h
 *	  A stale fast append rebased onto the head of its branch (see
 *	  commit_rebase.c).
 *
 * IDENTIFICATION
 *	  src/writer/commit_rebase.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_COMMIT_REBASE_H
#define SKADE_COMMIT_REBASE_H

#include "nodes/pg_list.h"
#include "utils/jsonb.h"

#include "format/metadata_json.h"
#include "io/route.h"

/* the snapshot of a stale append, as the client sent it */
typedef struct SkadeAppend
{
	int64		snapshot_id;
	int64		seq;
	const char *manifest_list;
	bool		has_parent;
	int64		parent_id;		/* the snapshot the client appended to */
	const char *operation;
	JsonbContainer *summary;	/* an object */
} SkadeAppend;

/* the same snapshot rebased onto the head: what changes in it */
typedef struct SkadeRebase
{
	int64		parent_id;		/* the head */
	int64		seq;			/* the head's table's next */
	char	   *manifest_list;	/* the new list (SkadeRebaseWrite) */
	char	   *summary;		/* JSON object, totals re-derived */
	int64		first_row_id;	/* v3: the table's next-row-id */
	int64		added_rows;		/* v3: the rows the new list assigns ids to */
	/* what the new list holds */
	int			format_version;
	const SkadeRoute *route;
	int64		snapshot_id;
	List	   *entries;		/* SkadeListEntry: the added manifests, then the head's */
} SkadeRebase;

extern bool SkadeRebaseEnabled(Jsonb *properties);
extern SkadeRebase *SkadeRebasePlan(const SkadeRoute *route, const SkadeMeta *base,
									int64 head_id, int64 next_row_id, const SkadeAppend *a,
									const char *dir);
extern void SkadeRebaseWrite(const SkadeRebase *rb);
extern void SkadeRebaseMemoBegin(MemoryContext cxt);
extern void SkadeRebaseMemoEnd(void);
extern bool SkadeIntText(const char *s, int len, int64 *value);

#endif							/* SKADE_COMMIT_REBASE_H */
