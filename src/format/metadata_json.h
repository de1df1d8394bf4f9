/*-------------------------------------------------------------------------
 *
 * metadata_json.h
 *	  Iceberg table metadata (JSON) -> a flat, position-independent summary
 *	  (SkadeMeta) that can be copied into shared memory as is.
 *
 * IDENTIFICATION
 *	  src/format/metadata_json.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_METADATA_JSON_H
#define SKADE_METADATA_JSON_H

#include "lib/stringinfo.h"

/* "no snapshot" / "no parent" marker (the spec's -1) */
#define SKADE_NO_SNAPSHOT	INT64CONST(-1)

typedef struct SkadeMetaSnapshot
{
	int64		snapshot_id;
	int64		parent_id;		/* SKADE_NO_SNAPSHOT if none */
	int64		sequence_number;	/* 0 in format v1 */
	int64		timestamp_ms;
	int32		schema_id;		/* -1 if absent */
	uint32		operation;		/* string offsets into the blob (0: none) */
	uint32		manifest_list;
	uint32		summary;		/* JSON text of the summary object */
} SkadeMetaSnapshot;

typedef struct SkadeMetaLogEntry
{
	int64		timestamp_ms;
	int64		snapshot_id;
} SkadeMetaLogEntry;

typedef struct SkadeMetaRef
{
	uint32		name;
	bool		is_tag;
	int64		snapshot_id;
	int64		max_ref_age_ms;	/* -1 if absent */
	int64		max_snapshot_age_ms;	/* -1 if absent */
	int32		min_snapshots_to_keep;	/* -1 if absent */
} SkadeMetaRef;

/*
 * The summary.  One palloc'd (or shared-memory) chunk; every reference is an
 * offset from the start of the struct, so it can be copied anywhere.  The
 * file's text and the refs-only variant come last, so that callers needing
 * only the summary copy [0, json_off); they are stored as aligned text
 * varlenas so that a reader can use them in place as datums.
 */
typedef struct SkadeMeta
{
	uint32		total_size;
	int32		format_version;
	uint32		location;		/* the metadata location it was read from */
	uint32		table_uuid;		/* 0 if absent (v1) */
	uint32		table_location;
	int32		current_schema_id;
	uint32		current_schema;	/* JSON text of the current schema */
	uint32		partition_specs;	/* JSON text of the specs array; 0 if absent */
	int64		current_snapshot_id;	/* SKADE_NO_SNAPSHOT if none */
	int64		last_updated_ms;
	int64		last_sequence_number;
	uint32		nsnapshots;
	uint32		snapshots;		/* SkadeMetaSnapshot[nsnapshots] */
	uint32		nlog;
	uint32		snapshot_log;	/* SkadeMetaLogEntry[nlog] */
	uint32		nrefs;
	uint32		refs;			/* SkadeMetaRef[nrefs] */
	uint32		json_off;		/* the file's text: a text varlena (+ NUL) */
	uint32		json_len;		/* bytes of text, without the header */
	uint32		refs_json_off;	/* the refs-only variant, likewise */
	uint32		refs_json_len;
} SkadeMeta;

#define SkadeMetaStr(m, off)	((off) ? ((const char *) (m)) + (off) : NULL)
#define SkadeMetaSnapshots(m)	((const SkadeMetaSnapshot *) (((const char *) (m)) + (m)->snapshots))
#define SkadeMetaLog(m)			((const SkadeMetaLogEntry *) (((const char *) (m)) + (m)->snapshot_log))
#define SkadeMetaRefs(m)		((const SkadeMetaRef *) (((const char *) (m)) + (m)->refs))

/* a primitive column of a schema (nested struct fields named a.b) */
typedef struct SkadeColumn
{
	int32		id;
	const char *name;
	const char *type;			/* "long", "decimal(9,2)", "fixed[16]", ... */
	int16		width;			/* bytes of a bound of this type; -1: any */
	int16		narrow_width;	/* also accepted (4: a long or double read from
								 * an int or float before a promotion); -1 */
} SkadeColumn;

/* a field of a partition spec, as written (transform bound by partition_stats.c) */
typedef struct SkadePartitionField
{
	int32		source_id;
	int32		field_id;		/* -1 if not recorded (v1) */
	const char *name;
	const char *transform;		/* "identity", "day", "bucket[16]", ... */
} SkadePartitionField;

/* the parts SkadeMetaAssemble lays out (hdr: scalars and counts) */
typedef struct SkadeMetaParts
{
	const SkadeMeta *hdr;
	const SkadeMetaSnapshot *snapshots;
	const char **snap_op;		/* per snapshot, NULL: none */
	const char **snap_ml;
	const char **snap_summary;
	const SkadeMetaLogEntry *log;
	const SkadeMetaRef *refs;
	const char **ref_names;
	const char *location;
	const char *table_uuid;		/* NULL: none */
	const char *table_location;
	const char *current_schema;
	const char *partition_specs;	/* NULL: none */
	const char *text;
	size_t		text_len;
	/* or, instead of text: writes the text where it goes (text_len: a guess) */
	void		(*emit_text) (StringInfo buf, void *arg);
	void	   *emit_arg;
	const char *refs_text;		/* NULL: same as text */
	size_t		refs_text_len;
	/* bytes of all the strings above with their NULs but text and refs_text (0: unknown) */
	size_t		strings_len;
} SkadeMetaParts;

extern void SkadeJsonInit(void);
extern SkadeMeta *SkadeMetaAssemble(const SkadeMetaParts *parts);
extern char *SkadeCompactJson(const char *text, size_t len, const char *location);
extern char *SkadeSchemaText(const char *schemas, size_t len, int32 id, const char *location);
extern const SkadeMetaSnapshot *SkadeMetaSnapshotById(const SkadeMeta *m, int64 id);
extern void SkadeParseSnapshot(const char *text, size_t len, int format_version,
							   const char *location, int index, SkadeMetaSnapshot *snap,
							   char **op, char **ml, char **summary);
extern SkadeColumn *SkadeParseSchemaColumns(const char *schema_json, const char *what,
											int *ncolumns);
extern SkadePartitionField *SkadeParsePartitionSpec(const char *json, int32 spec_id,
													int *nfields);
extern SkadeMeta *SkadeParseMetadata(const char *text, size_t len, const char *location);

#endif							/* SKADE_METADATA_JSON_H */
