/*-------------------------------------------------------------------------
 *
 * commit_fast_int.h
 *	  What commit_fast.c (the base, the new file), commit_require.c (the
 *	  requirements), commit_actions.c and commit_schema.c (the update
 *	  actions) share: one commit on update_table's C path, FastCommit, and
 *	  the helpers they use.  Private to those files.
 *
 * IDENTIFICATION
 *	  src/writer/commit_fast_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_COMMIT_FAST_INT_H
#define SKADE_COMMIT_FAST_INT_H

#include "nodes/pg_list.h"
#include "utils/jsonb.h"

#include "format/metadata_json.h"
#include "io/route.h"
#include "writer/commit_rebase.h"

#define MAX_MEMBERS		96		/* top-level members of a metadata file */
/*
 * members other than snapshots, logs, refs and properties a commit may
 * replace: format-version, location, schemas, current-schema-id,
 * last-column-id, partition-specs, default-spec-id, last-partition-id,
 * sort-orders, default-sort-order-id, statistics, partition-statistics (12;
 * a replace transaction changes them all), and v1's schema and
 * partition-spec (14)
 */
#define MAX_REPLACED	16
#define FUTURE_MARGIN_MS 59000	/* PL/pgSQL refuses > now + 60 s; leave it the edge */

/* a span of the base text */
typedef struct Span
{
	const char *p;
	int			len;
} Span;

/* a top-level member: its key (without quotes) and its value */
typedef struct Member
{
	Span		key;
	Span		value;
	Span	   *elems;			/* elements, for the arrays we edit */
	int			nelems;
} Member;

/* values of a JSON number for fast_jint() */
typedef enum JInt
{
	J_ABSENT,					/* missing or null */
	J_INT,						/* an integer literal within int64 */
	J_OTHER						/* anything else */
} JInt;

/* a top-level member the commit replaced (or added): its new text */
typedef struct Replaced
{
	const char *key;
	char	   *text;
} Replaced;

/* a snapshot a commit added: its text and its L0 summary entry */
typedef struct FastAdded
{
	char	   *text;
	int64		ts;
	SkadeMetaSnapshot snap;
	char	   *op;
	char	   *ml;
	char	   *summary;
} FastAdded;

/* a snapshot-log entry a move of main added */
typedef struct FastLogEntry
{
	int64		ts;
	int64		id;
	bool		added;			/* to a snapshot this commit added */
} FastLogEntry;

/* one commit on the fast path */
typedef struct FastCommit
{
	SkadeRoute	route;			/* the table's namespace's */
	const char *base_location;
	SkadeMeta  *base;			/* the base summary (no texts) */
	const char *text;			/* the base text (pinned in L0) */
	Size		len;
	Member		members[MAX_MEMBERS];
	int			nmembers;
	int64		now_ms;
	Jsonb	   *refs;			/* the refs object (NULL: none) */
	Jsonb	   *props;			/* the properties object (NULL: none) */
	bool		refs_changed;
	bool		props_changed;
	int			changes;
	int			idx;			/* the update being applied (its updates[] index) */
	int			format_version; /* the base's, or what an upgrade made it */
	bool		upgraded;		/* ... to v3 by this commit: next-row-id written */
	int64		current_schema_id;	/* the base's, or set-current-schema's */
	bool		bind_changed;	/* the current schema, default spec or sort
								 * order changed: they must still bind */
	/* add-sort-order: the last added order (Java's Builder), the ones added */
	int64		last_added_order;	/* -1: none */
	List	   *added_orders;	/* their ids (int) */
	int64		last_added_spec;	/* add-spec's likewise */
	List	   *added_specs;
	int64		last_added_schema;	/* add-schema's likewise */
	List	   *added_schemas;
	/* the added snapshots (FastAdded *), in order, less those removed again */
	List	   *adds;
	bool		added_any;		/* one was added: next-row-id set (v3) */
	bool		seq_set;		/* last-sequence-number set (v2+: by an added
								 * snapshot; an upgrade from v1 without one) */
	int64		last_seq;
	int64		next_row_id;	/* v3: the table's, after the added snapshots */
	/* main moved or removed: the current snapshot, the log entries added */
	bool		main_set;		/* main moved (at least once) */
	bool		main_removed;	/* main removed (at least once) */
	int64		current;		/* SKADE_NO_SNAPSHOT: none */
	List	   *new_log;		/* FastLogEntry *, one per move of main */
	/* other members the commit replaced or added, as their new JSON text */
	Replaced	repl[MAX_REPLACED];
	int			nrepl;
	char	   *table_location; /* set-location's (NULL: the base's) */
	char	   *specs_text;		/* remove-partition-specs': the summary's text */
	/* remove-snapshots: the base's snapshots removed, the log entries kept */
	bool	   *gone;			/* per base snapshot (NULL: no removal) */
	int64	   *gone_ids;		/* the ids removed (also added ones), sorted */
	int			ngone;
	int64	   *now_gone;		/* those of the removal being applied, sorted */
	int			nnow_gone;
	int		   *log_keep;		/* indexes of the base log entries kept (NULL: all) */
	int			nlog_keep;
	/* the new file */
	int			maxlog;
	char	   *location;
	bool		gzip;
	int64	   *keep;			/* snapshot ids the refs variant keeps */
	int			nkeep;
	/* a stale branch held back for a rebase (commit_rebase.c) */
	bool		rebase_on;		/* the table rebases stale appends */
	char	   *stale_ref;		/* the branch */
	int64		stale_have;		/* where it is */
	char	   *stale_msg;		/* the failure, raised if no rebase */
	SkadeRebase *rebase;
	/* a create (skade.create_table_fast): the base is update_table's empty table */
	Jsonb	   *create_base;	/* NULL: the base is the table's file */
	/* a step of a group (SkadeFastChain): the base is the chain's head, never written */
	const SkadeMeta *head;		/* NULL: the base is in L0 */
	const char *chain_location; /* the group's new file (NULL: not chosen yet) */
	bool		chain_gzip;
} FastCommit;

/* commit_actions.c */
extern bool fast_apply_updates(FastCommit *fc, Jsonb *updates);
extern Jsonb *fast_member_jsonb(FastCommit *fc, const char *key);
extern void fast_replace_member(FastCommit *fc, const char *key, char *text);
extern const char *fast_replaced(FastCommit *fc, const char *key);
extern bool fast_snapshot_known(FastCommit *fc, int64 id);
extern FastAdded *fast_added(FastCommit *fc, int64 id);
extern bool fast_trim_log(FastCommit *fc);
extern bool fast_result_valid(FastCommit *fc);

/* commit_actions.c: refusals as the engine's, and what JSON values are */
extern bool fast_refuse(FastCommit *fc, int sqlstate, const char *hint, const char *fmt,...) pg_attribute_printf(4, 5);
extern const char *fast_jtype(JsonbContainer *obj, const char *key);
extern char *fast_jtext(JsonbContainer *obj, const char *key);
extern bool fast_json_int(FastCommit *fc, JsonbContainer *u, const char *key, const char *what, int64 *v);
extern bool fast_jtype_is(JsonbContainer *obj, const char *key, const char *type);
extern char *fast_lower(const char *s);

/* commit_schema.c */
extern bool fast_set_id(FastCommit *fc, JsonbContainer *u, const char *field, const char *member);
extern bool fast_defaults_bind(FastCommit *fc);
extern bool fast_add_sort_order(FastCommit *fc, JsonbContainer *u);
extern bool fast_add_spec(FastCommit *fc, JsonbContainer *u);
extern bool fast_add_schema(FastCommit *fc, JsonbContainer *u);
extern void fast_upgrade(FastCommit *fc, int v);
extern bool fast_v1_partition_spec(FastCommit *fc);

/* commit_require.c */
extern bool fast_check_requirements(FastCommit *fc, Jsonb *requirements);
pg_noreturn extern void fast_requirement_failed(FastCommit *fc, const char *what);

/* commit_fast.c */
extern Member *fast_member(FastCommit *fc, const char *key);
extern bool fast_member_int(FastCommit *fc, const char *key, int64 *value);
extern JInt fast_jint(JsonbContainer *obj, const char *key, int64 *value);
extern bool fast_jstring(JsonbContainer *obj, const char *key, char **value);
extern bool fast_jvalue(JsonbContainer *obj, const char *key, JsonbValue *v);
extern bool fast_jobject(JsonbContainer *obj, const char *key, JsonbContainer **value);
extern Jsonb *fast_jsonb_of_span(Span s);
extern Jsonb *fast_jsonb_object1(const char *key, JsonbValue *value);
extern Datum fast_text_array_of(JsonbContainer *arr, bool *ok);

#endif							/* SKADE_COMMIT_FAST_INT_H */
