/*-------------------------------------------------------------------------
 *
 * manifest_blob.h
 *	  A decoded Iceberg manifest as one flat, position-independent blob
 *	  (SkadeManifest: header fields, then its live entries), as
 *	  manifest_decode.c writes it and the manifest cache keeps it.
 *
 * Every offset is from the start of the struct that holds it, so a blob is
 * read where it lies (in shared memory, or a copy) without fixing up.
 *
 * IDENTIFICATION
 *	  src/format/manifest_blob.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_MANIFEST_BLOB_H
#define SKADE_MANIFEST_BLOB_H

#include "format/scan_filter.h"

/* SkadeManifestEntry.flags: which optional fields the entry recorded */
#define SKADE_ME_SNAPSHOT_ID	0x01
#define SKADE_ME_SEQ			0x02
#define SKADE_ME_FILE_SEQ		0x04
#define SKADE_ME_RECORD_COUNT	0x08
#define SKADE_ME_FILE_SIZE		0x10
#define SKADE_ME_CONTENT_OFFSET	0x20	/* v3 deletion vectors */
#define SKADE_ME_CONTENT_SIZE	0x40

/* one value in single-value binary form: bytes at off, or null (len -1) */
typedef struct SkadeManifestValue
{
	uint32		off;			/* from the start of the entry */
	int32		len;			/* -1: null */
} SkadeManifestValue;

/* one column's statistics of a data file, by field id */
typedef struct SkadeManifestStat
{
	int32		field_id;
	uint8		has_count;		/* bit k: count[k] recorded (size, values, nulls, nans) */
	int64		count[4];
	SkadeManifestValue bound[2];	/* lower, upper */
} SkadeManifestStat;

/*
 * A live entry (status ADDED or EXISTING; DELETED ones are not kept).
 * Strings and arrays are at offsets from the start of the entry; the next
 * entry starts size bytes after this one.
 */
typedef struct SkadeManifestEntry
{
	uint32		size;
	uint8		status;			/* 0 existing, 1 added */
	uint8		content;		/* 0 data, 1 position deletes, 2 equality deletes */
	uint16		flags;			/* SKADE_ME_* */
	int64		snapshot_id;
	int64		sequence_number;
	int64		file_sequence_number;
	int64		record_count;
	int64		file_size;
	int64		content_offset; /* v3: a deletion vector's place in its file */
	int64		content_size;
	uint32		path;			/* NUL-terminated strings; path is also a
								 * text varlena (SkadeManifestText) */
	uint32		referenced_data_file;	/* 0: not recorded */
	int32		nequality;		/* equality_ids: -1 not recorded */
	uint32		equality_ids;	/* int32[nequality] */
	uint32		format;			/* 0: not recorded */
	uint32		partition_jsonb;	/* the partition record: a jsonb varlena */
	uint32		columns_jsonb;	/* the statistics as skade.files() shows them, decoded
								 * by the manifest's schema: a jsonb varlena; 0 if
								 * the manifest has no schema or a bound is bad */
	uint16		npartition;
	uint16		nstats;
	uint32		partition;		/* SkadeManifestValue[npartition], in spec order */
	uint32		stats;			/* SkadeManifestStat[nstats] */
} SkadeManifestEntry;

/* a decoded manifest: header fields, then its live entries */
typedef struct SkadeManifest
{
	uint32		total_size;
	uint32		nentries;
	uint64		file_size;		/* bytes of the Avro file */
	int32		spec_id;		/* "partition-spec-id" header; -1 if absent */
	uint32		schema;			/* "schema" header JSON text; 0 if absent */
	uint32		partition_spec; /* "partition-spec" header JSON text; 0 if absent */
	uint32		path_text;		/* the manifest's path (the cache key), as
								 * SkadeManifestText */
	uint32		entries;		/* the first SkadeManifestEntry */
} SkadeManifest;

#define SkadeManifestStr(base, off)	((off) ? ((const char *) (base)) + (off) : NULL)
/* the text varlena whose bytes are the C string at off (put as a text) */
#define SkadeManifestText(base, off) \
	((const struct varlena *) (((const char *) (base)) + (off) - VARHDRSZ))
#define SkadeManifestFirst(m)	((const SkadeManifestEntry *) (((const char *) (m)) + (m)->entries))
#define SkadeManifestNext(e)	((const SkadeManifestEntry *) (((const char *) (e)) + (e)->size))
#define SkadeManifestPartition(e) \
	((const SkadeManifestValue *) (((const char *) (e)) + (e)->partition))
#define SkadeManifestStats(e) \
	((const SkadeManifestStat *) (((const char *) (e)) + (e)->stats))

extern void ManifestEntryStats(const SkadeManifestEntry *e, const SkadeColumn *cols, int ncols,
							   SkadeColumnStats *stats);

#endif							/* SKADE_MANIFEST_BLOB_H */
