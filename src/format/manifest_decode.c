/*-------------------------------------------------------------------------
 *
 * manifest_decode.c
 *	  An Iceberg manifest (Avro) decoded into the flat blob the L0.5 cache
 *	  keeps (SkadeManifest, manifest_cache.h), with skade's own record
 *	  decoder (avro_decode.c) rather than libavro-c's generic values.
 *
 * Invariants:
 *	 - the file's bytes are the caller's (read with SkadeReadLocation:
 *	   confinement, size cap, route), their length checked against the
 *	   manifest list's before anything is decoded, the container parsed and its writer schema validated and
 *	   compiled (avro_container.c, avro_schema.c);
 *	 - the schema must have the shape of a manifest (status int, data_file
 *	   record with file_path string, also as union branches), else 22SK1 as
 *	   avro_reader.c words it;
 *	 - fields are found by name once per schema node (a data_file or a
 *	   statistics entry is resolved again only if a union makes it another
 *	   record type), then read by index; a field the schema lacks, or a null
 *	   one, is absent; one of another type than Iceberg's is 22SK1;
 *	 - the blob holds exactly the live entries of the file (status ADDED or
 *	   EXISTING, in file order) with every field as recorded, nothing
 *	   inherited; each entry carries its partition as jsonb and, when the
 *	   manifest records its schema and every bound is readable, its
 *	   statistics as skade.files() returns them; an entry with an invalid
 *	   status or content type, or without data_file.file_path, fails the
 *	   decode;
 *	 - a decoded manifest takes at most SKADE_BLOB_FACTOR times
 *	   skade.max_manifest_size (54000 beyond).
 *
 * Memory: a decode runs in its own memory context ("skade manifest
 * decode", with a per-entry child "skade manifest decode entry"); only the
 * blob, which grows in the caller's context, is left.
 *
 * IDENTIFICATION
 *	  src/format/manifest_decode.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "format/avro_container.h"
#include "format/avro_decode.h"
#include "format/avro_reader.h"
#include "format/bound_json.h"
#include "util/guc.h"
#include "format/manifest_blob.h"
#include "format/manifest_decode.h"
#include "util/skade_limits.h"

/*
 * A decoded manifest takes at most this many times skade.max_manifest_size
 * (real ones take 2 to 4 times their decoded Avro bytes: paths, statistics
 * and their jsonb), and never more than a palloc'd buffer can hold.
 */
#define SKADE_BLOB_FACTOR	8

/* the data_file fields read, by index in df_names */
enum
{
	DF_FILE_PATH, DF_CONTENT, DF_RECORD_COUNT, DF_FILE_SIZE, DF_CONTENT_OFFSET,
	DF_CONTENT_SIZE, DF_PARTITION, DF_REFERENCED, DF_EQUALITY_IDS, DF_FILE_FORMAT,
	DF_STATS,					/* the six statistics maps, as stat_fields */
	DF_NFIELDS = DF_STATS + 6
};
static const char *const df_names[DF_NFIELDS] = {
	"file_path", "content", "record_count", "file_size_in_bytes", "content_offset",
	"content_size_in_bytes", "partition", "referenced_data_file", "equality_ids",
	"file_format",
	/* by SkadeManifestStat count/bound index */
	"column_sizes", "value_counts", "null_value_counts", "nan_value_counts",
	"lower_bounds", "upper_bounds"
};

/* the top-level fields read */
enum
{
	E_STATUS, E_SNAPSHOT_ID, E_SEQ, E_FILE_SEQ, E_DATA_FILE, E_NFIELDS
};
static const char *const e_names[E_NFIELDS] = {
	"status", "snapshot_id", "sequence_number", "file_sequence_number", "data_file"
};

/* where the fields are: their indices in the record nodes last seen (-1: absent) */
typedef struct EntryShape
{
	SkadeAvroDecoder *dec;
	const char *path;
	int			e[E_NFIELDS];
	int32		df_node;
	int			df[DF_NFIELDS];
	int		   *kv;				/* by record node: a statistics map entry's key
								 * and value (-2: not resolved yet) */
	const SkadeColumn *cols;	/* the manifest's schema, or NULL */
	int			ncols;
} EntryShape;

static Size max_blob_size(void);
static void check_shape(const SkadeAvroSchema *s, const char *location);
static bool schema_has(const SkadeAvroSchema *s, int32 rec, const char *field,
					   SkadeAvroType type, int32 *out);
static void resolve(const SkadeAvroSchema *s, int32 node, const char *const *names, int n,
					int *idx);
static void decode_entry(EntryShape *sh, const SkadeAvroDatum *entry, StringInfo blob);
static int	decode_stats(EntryShape *sh, const SkadeAvroDatum *df, SkadeManifestStat *stats,
						 StringInfo var, uint32 var_base);
static void decode_equality_ids(EntryShape *sh, const SkadeAvroDatum *ids,
								SkadeManifestEntry *e, StringInfo var, uint32 var_base);
static const SkadeAvroDatum *field(const EntryShape *sh, const SkadeAvroDatum *rec, int idx);
static bool field_long(const EntryShape *sh, const SkadeAvroDatum *rec, int idx,
					   const char *name, int64 *out);
static bool field_text(const EntryShape *sh, const SkadeAvroDatum *rec, int idx,
					   const char *name, char **out);
pg_noreturn static void type_mismatch(const EntryShape *sh, const char *name,
						  const char *expected);
static SkadeManifestStat *stat_for(SkadeManifestStat *stats, int *nstats, int32 field_id);
static uint32 put_bytes(StringInfo var, const char *p, size_t len, bool nul);
static uint32 put_varlena(StringInfo var, Datum d);
static uint32 put_text(StringInfo var, const char *s);
static void append_zeros(StringInfo buf, int n);
static int	entry_column_index(const SkadeColumn *cols, int ncols, int64 id);
static void add_columns_jsonb(StringInfo blob, int entry_start, const SkadeColumn *cols,
							  int ncols, const char *path);

static Size
max_blob_size(void)
{
	return Min((Size) skade_max_manifest_size * SKADE_BLOB_FACTOR, MaxAllocSize / 2);
}

/*
 * SkadeManifestDecode
 *		Decode the bytes of the Avro manifest at path (which must be
 *		expected_length bytes, -1: any) into a SkadeManifest palloc'd in the
 *		caller's context; *size its bytes.
 */
void *
SkadeManifestDecode(const char *path, const StringInfoData *bytes, int64 expected_length,
					Size *size)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext cxt = AllocSetContextCreate(caller, "skade manifest decode",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext entry_cxt = AllocSetContextCreate(cxt, "skade manifest decode entry",
													ALLOCSET_DEFAULT_SIZES);
	SkadeManifest hdr = {0};
	StringInfoData blob;
	SkadeAvroContainer *c;
	EntryShape	sh;
	const SkadeAvroDatum *entry;
	const char *s;

	MemoryContextSwitchTo(cxt);
	/* its length is checked before anything is decoded */
	SkadeAvroCheckLength(path, bytes->len, expected_length);
	c = SkadeAvroContainerDecode(path, bytes->data, bytes->len);
	check_shape(c->compiled, path);
	/* the blob is built in the caller's context: it is the result */
	MemoryContextSwitchTo(caller);
	initStringInfo(&blob);
	MemoryContextSwitchTo(cxt);
	append_zeros(&blob, MAXALIGN(sizeof(SkadeManifest)));

	hdr.file_size = bytes->len;
	hdr.spec_id = (s = SkadeAvroContainerMeta(c, "partition-spec-id")) ? atoi(s) : -1;
	if ((s = SkadeAvroContainerMeta(c, "schema")) != NULL)
		hdr.schema = put_bytes(&blob, s, strlen(s), true);
	if ((s = SkadeAvroContainerMeta(c, "partition-spec")) != NULL)
		hdr.partition_spec = put_bytes(&blob, s, strlen(s), true);
	hdr.path_text = put_text(&blob, path);
	while (blob.len % MAXIMUM_ALIGNOF)
		appendStringInfoChar(&blob, '\0');
	hdr.entries = blob.len;

	memset(&sh, 0, sizeof(sh));
	sh.dec = SkadeAvroDecoderBegin(c);
	sh.path = path;
	sh.df_node = -1;
	sh.kv = palloc(sizeof(int) * 2 * c->compiled->nnodes);
	for (int i = 0; i < 2 * c->compiled->nnodes; i++)
		sh.kv[i] = -2;
	resolve(c->compiled, c->compiled->root, e_names, E_NFIELDS, sh.e);
	/* the schema the manifest was written with decodes its bounds */
	if (hdr.schema)
		sh.cols = SkadeParseSchemaColumns(blob.data + hdr.schema, path, &sh.ncols);
	while ((entry = SkadeAvroDecodeNext(sh.dec)) != NULL)
	{
		int			before = blob.len;

		/* a decoded manifest may take a few times its Avro bytes, no more */
		if ((Size) blob.len > max_blob_size())
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("manifest \"%s\" is too large once decoded", path),
					 errdetail("Its entries take more than %zu bytes (%d times skade.max_manifest_size).",
							   max_blob_size(), SKADE_BLOB_FACTOR),
					 errhint("Raise skade.max_manifest_size if the file is legitimate.")));
		MemoryContextSwitchTo(entry_cxt);
		decode_entry(&sh, entry, &blob);
		MemoryContextSwitchTo(cxt);
		MemoryContextReset(entry_cxt);
		if (blob.len > before)
			hdr.nentries++;
		CHECK_FOR_INTERRUPTS();
	}
	hdr.total_size = blob.len;
	memcpy(blob.data, &hdr, sizeof(SkadeManifest));

	MemoryContextSwitchTo(caller);
	*size = blob.len;
	MemoryContextDelete(cxt);
	return blob.data;
}

/* ---------------------------------------------------------------- the schema */

/*
 * The top-level fields a manifest must have, with their types: status
 * (int), data_file (record) with file_path (string); optional ones are
 * checked where they are read.
 */
static void
check_shape(const SkadeAvroSchema *s, const char *location)
{
	int32		df;
	const char *missing = NULL;

	if (!schema_has(s, s->root, "status", SKADE_AVRO_INT, NULL))
		missing = "status (int)";
	else if (!schema_has(s, s->root, "data_file", SKADE_AVRO_RECORD, &df))
		missing = "data_file (record)";
	else if (!schema_has(s, df, "file_path", SKADE_AVRO_STRING, NULL))
		missing = "data_file.file_path (string)";
	if (missing)
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("Avro file \"%s\" is not an Iceberg manifest", location),
				 errdetail("Its writer schema lacks %s.", missing)));
}

/* Has record rec a field of this type (also as a union branch)? */
static bool
schema_has(const SkadeAvroSchema *s, int32 rec, const char *field, SkadeAvroType type,
		   int32 *out)
{
	int			i = SkadeAvroFieldIndex(s, rec, field);
	int32		node;
	const SkadeAvroNode *n;
	int			b;

	if (i < 0)
		return false;
	node = s->child[s->nodes[rec].child + i];
	n = &s->nodes[node];
	if (n->type == SKADE_AVRO_UNION)
	{
		for (b = 0; b < n->nchild; b++)
			if (s->nodes[s->child[n->child + b]].type == type)
			{
				if (out)
					*out = s->child[n->child + b];
				return true;
			}
		return false;
	}
	if (out)
		*out = node;
	return n->type == type;
}

/* the indices of the named fields in record node (-1 where it has none) */
static void
resolve(const SkadeAvroSchema *s, int32 node, const char *const *names, int n, int *idx)
{
	int			i;

	for (i = 0; i < n; i++)
		idx[i] = SkadeAvroFieldIndex(s, node, names[i]);
}

/* ---------------------------------------------------------------- entries */

/*
 * Append one live entry to blob (nothing for a DELETED one): the fixed
 * part, then the partition values and statistics arrays, then the bytes
 * they point to.
 */
static void
decode_entry(EntryShape *sh, const SkadeAvroDatum *entry, StringInfo blob)
{
	const SkadeAvroSchema *schema = SkadeAvroDecoderSchema(sh->dec);
	const char *path = sh->path;
	SkadeManifestEntry e = {0};
	const SkadeAvroDatum *df;
	const SkadeAvroDatum *part;
	const SkadeAvroDatum *arr;
	SkadeManifestValue *pvals;
	SkadeManifestStat *stats;
	int			nstats;
	int			maxstats = 0;
	StringInfoData var;			/* strings and bytes, after the arrays */
	StringInfoData tmp;
	uint32		var_base;
	int64		v;
	char	   *s;
	int			i,
				k;

	if (!field_long(sh, entry, sh->e[E_STATUS], "status", &v) || v < 0 || v > 2)
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("manifest \"%s\" has an entry without a valid status", path)));
	if (v == 2)
		return;					/* DELETED */
	e.status = (uint8) v;
	df = field(sh, entry, sh->e[E_DATA_FILE]);
	if (df && df->type == SKADE_AVRO_RECORD && df->node != sh->df_node)
	{
		resolve(schema, df->node, df_names, DF_NFIELDS, sh->df);
		sh->df_node = df->node;
	}
	if (df && df->type != SKADE_AVRO_RECORD)
		df = NULL;				/* it has no fields */
	if (df == NULL || !field_text(sh, df, sh->df[DF_FILE_PATH], "file_path", &s) ||
		s[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("manifest \"%s\" has an entry without data_file.file_path", path)));
	if (!field_long(sh, df, sh->df[DF_CONTENT], "content", &v))
		v = 0;
	if (v < 0 || v > 2)
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("manifest \"%s\" has a file of unknown content type %lld",
						path, (long long) v),
				 errdetail("File \"%s\".", s),
				 errhint("Content types are 0 (data), 1 (position deletes) and 2 (equality deletes).")));
	e.content = (uint8) v;

	initStringInfo(&var);
	if (field_long(sh, entry, sh->e[E_SNAPSHOT_ID], "snapshot_id", &e.snapshot_id))
		e.flags |= SKADE_ME_SNAPSHOT_ID;
	if (field_long(sh, entry, sh->e[E_SEQ], "sequence_number", &e.sequence_number))
		e.flags |= SKADE_ME_SEQ;
	if (field_long(sh, entry, sh->e[E_FILE_SEQ], "file_sequence_number", &e.file_sequence_number))
		e.flags |= SKADE_ME_FILE_SEQ;
	if (field_long(sh, df, sh->df[DF_RECORD_COUNT], "record_count", &e.record_count))
		e.flags |= SKADE_ME_RECORD_COUNT;
	if (field_long(sh, df, sh->df[DF_FILE_SIZE], "file_size_in_bytes", &e.file_size))
		e.flags |= SKADE_ME_FILE_SIZE;
	if (field_long(sh, df, sh->df[DF_CONTENT_OFFSET], "content_offset", &e.content_offset))
		e.flags |= SKADE_ME_CONTENT_OFFSET;
	if (field_long(sh, df, sh->df[DF_CONTENT_SIZE], "content_size_in_bytes", &e.content_size))
		e.flags |= SKADE_ME_CONTENT_SIZE;

	/* the arrays' sizes first: every offset is from the start of the entry */
	part = field(sh, df, sh->df[DF_PARTITION]);
	if (part && part->type == SKADE_AVRO_RECORD)
		e.npartition = (uint16) part->len;
	for (k = 0; k < 6; k++)
		if ((arr = field(sh, df, sh->df[DF_STATS + k])) != NULL && arr->type == SKADE_AVRO_ARRAY)
			maxstats += arr->len;
	stats = palloc0(sizeof(SkadeManifestStat) * Max(maxstats, 1));
	pvals = palloc0(sizeof(SkadeManifestValue) * Max(e.npartition, 1));
	var_base = MAXALIGN(sizeof(SkadeManifestEntry)) +
		MAXALIGN(sizeof(SkadeManifestValue) * e.npartition) +
		MAXALIGN(sizeof(SkadeManifestStat) * maxstats);

	e.path = var_base + put_text(&var, s);
	if (field_text(sh, df, sh->df[DF_REFERENCED], "referenced_data_file", &s))
		e.referenced_data_file = var_base + put_bytes(&var, s, strlen(s), true);
	e.nequality = -1;
	if ((arr = field(sh, df, sh->df[DF_EQUALITY_IDS])) != NULL)
		decode_equality_ids(sh, arr, &e, &var, var_base);
	if (field_text(sh, df, sh->df[DF_FILE_FORMAT], "file_format", &s))
		e.format = var_base + put_bytes(&var, s, strlen(s), true);
	e.partition_jsonb = var_base +
		put_varlena(&var, part ? SkadeAvroDatumJsonb(sh->dec, part)
					: DirectFunctionCall1(jsonb_in, CStringGetDatum("{}")));
	initStringInfo(&tmp);
	for (i = 0; i < e.npartition; i++)
	{
		resetStringInfo(&tmp);
		if (SkadeAvroDatumBinary(sh->dec, SkadeAvroDatumChild(sh->dec, part, i), &tmp))
		{
			pvals[i].off = var_base + put_bytes(&var, tmp.data, tmp.len, false);
			pvals[i].len = tmp.len;
		}
		else
			pvals[i].len = -1;
	}
	nstats = decode_stats(sh, df, stats, &var, var_base);
	e.nstats = (uint16) nstats;

	/* lay it out */
	e.partition = MAXALIGN(sizeof(SkadeManifestEntry));
	e.stats = e.partition + MAXALIGN(sizeof(SkadeManifestValue) * e.npartition);
	e.size = MAXALIGN(var_base + var.len);
	{
		int			start = blob->len;

		append_zeros(blob, e.size);
		memcpy(blob->data + start, &e, sizeof(e));
		memcpy(blob->data + start + e.partition, pvals,
			   sizeof(SkadeManifestValue) * e.npartition);
		memcpy(blob->data + start + e.stats, stats, sizeof(SkadeManifestStat) * nstats);
		memcpy(blob->data + start + var_base, var.data, var.len);
		if (sh->cols)
			add_columns_jsonb(blob, start, sh->cols, sh->ncols, path);
	}
}

/*
 * The statistics maps of data file df (array<record{key: int, value: long |
 * bytes}>) into stats, by field id, their bounds' bytes into var; how many.
 */
static int
decode_stats(EntryShape *sh, const SkadeAvroDatum *df, SkadeManifestStat *stats,
			 StringInfo var, uint32 var_base)
{
	const SkadeAvroSchema *schema = SkadeAvroDecoderSchema(sh->dec);
	int			nstats = 0;
	int			i,
				k;

	for (k = 0; k < 6; k++)
	{
		const SkadeAvroDatum *arr = field(sh, df, sh->df[DF_STATS + k]);

		if (arr == NULL || arr->type != SKADE_AVRO_ARRAY)
			continue;
		for (i = 0; i < arr->len; i++)
		{
			const SkadeAvroDatum *kv = SkadeAvroDatumChild(sh->dec, arr, i);
			const SkadeAvroDatum *value;
			SkadeManifestStat *st;
			int		   *kvi;
			int64		key,
						count;

			if (kv->type != SKADE_AVRO_RECORD)
				continue;		/* no key: not a column's */
			kvi = &sh->kv[2 * kv->node];
			if (kvi[0] == -2)
			{
				static const char *const kv_names[2] = {"key", "value"};

				resolve(schema, kv->node, kv_names, 2, kvi);
			}
			if (!field_long(sh, kv, kvi[0], "key", &key) ||
				key < PG_INT32_MIN || key > PG_INT32_MAX)
				continue;		/* field ids are ints: not a column's */
			if (k < 4)
			{
				if (!field_long(sh, kv, kvi[1], "value", &count))
					continue;
				st = stat_for(stats, &nstats, (int32) key);
				st->count[k] = count;
				st->has_count |= 1 << k;
				continue;
			}
			if ((value = field(sh, kv, kvi[1])) == NULL)
				continue;
			if (value->type != SKADE_AVRO_BYTES && value->type != SKADE_AVRO_FIXED)
				type_mismatch(sh, "value", "bytes");
			st = stat_for(stats, &nstats, (int32) key);
			st->bound[k - 4].off = var_base + put_bytes(var, value->v.p, value->len, false);
			st->bound[k - 4].len = value->len;
		}
	}
	return nstats;
}

/* data_file.equality_ids (an array of ints; anything else: none) into e and var */
static void
decode_equality_ids(EntryShape *sh, const SkadeAvroDatum *ids, SkadeManifestEntry *e,
					StringInfo var, uint32 var_base)
{
	int32	   *arr;
	int			i;

	e->nequality = ids->type == SKADE_AVRO_ARRAY ? ids->len : 0;
	arr = palloc(sizeof(int32) * (e->nequality + 1));
	for (i = 0; i < e->nequality; i++)
	{
		const SkadeAvroDatum *id = SkadeAvroDatumChild(sh->dec, ids, i);

		if (id->type != SKADE_AVRO_NULL && id->type != SKADE_AVRO_INT &&
			id->type != SKADE_AVRO_LONG)
			ereport(ERROR,
					(errcode(ERRCODE_SKADE_INVALID_FILE),
					 errmsg("Avro file \"%s\" has a value of type %d where an int or long belongs",
							sh->path, (int) id->type)));
		if (id->type == SKADE_AVRO_NULL || id->v.l < PG_INT32_MIN || id->v.l > PG_INT32_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_SKADE_INVALID_FILE),
					 errmsg("manifest \"%s\" has an invalid equality field id", sh->path)));
		arr[i] = (int32) id->v.l;
	}
	while (var->len % sizeof(int32))
		appendStringInfoChar(var, '\0');
	e->equality_ids = var_base + put_bytes(var, (const char *) arr,
										   sizeof(int32) * e->nequality, false);
}

/* ---------------------------------------------------------------- fields */

/* field idx of record rec (union resolved); NULL if rec or it is absent, or it is null */
static const SkadeAvroDatum *
field(const EntryShape *sh, const SkadeAvroDatum *rec, int idx)
{
	const SkadeAvroDatum *v;

	if (rec == NULL || idx < 0 || rec->type != SKADE_AVRO_RECORD)
		return NULL;
	v = SkadeAvroDatumChild(sh->dec, rec, idx);
	return v->type == SKADE_AVRO_NULL ? NULL : v;
}

/* an int or long field; false if absent or null, 22SK1 if of another type */
static bool
field_long(const EntryShape *sh, const SkadeAvroDatum *rec, int idx, const char *name,
		   int64 *out)
{
	const SkadeAvroDatum *v = field(sh, rec, idx);

	if (v == NULL)
		return false;
	if (v->type != SKADE_AVRO_INT && v->type != SKADE_AVRO_LONG)
		type_mismatch(sh, name, "int or long");
	*out = v->v.l;
	return true;
}

/* a string field as text (palloc'd); false if absent or null */
static bool
field_text(const EntryShape *sh, const SkadeAvroDatum *rec, int idx, const char *name,
		   char **out)
{
	const SkadeAvroDatum *v = field(sh, rec, idx);

	if (v == NULL)
		return false;
	if (v->type != SKADE_AVRO_STRING)
		type_mismatch(sh, name, "string");
	*out = (char *) SkadeAvroDatumText(sh->dec, v, name);
	return true;
}

static void
type_mismatch(const EntryShape *sh, const char *name, const char *expected)
{
	ereport(ERROR,
			(errcode(ERRCODE_SKADE_INVALID_FILE),
			 errmsg("field \"%s\" of Avro file \"%s\" is not of type %s",
					name, sh->path, expected),
			 errhint("The file does not follow the Iceberg manifest schema.")));
}

/* ---------------------------------------------------------------- the blob */

/*
 * Precompute the entry's statistics as skade.files() returns them (jsonb,
 * after the entry, which grows by it), unless a bound would be an error:
 * that is raised when the file is returned, not for the whole manifest.
 */
static void
add_columns_jsonb(StringInfo blob, int entry_start, const SkadeColumn *cols, int ncols,
				  const char *path)
{
	SkadeColumnStats *stats = palloc(sizeof(SkadeColumnStats) * (ncols + 1));
	SkadeManifestEntry *e = (SkadeManifestEntry *) (blob->data + entry_start);
	Datum		d;
	uint32		off;

	ManifestEntryStats(e, cols, ncols, stats);
	d = SkadeColumnsJsonbIfReadable(cols, ncols, stats, path);
	if (d == (Datum) 0)
		return;

	off = e->size;
	append_zeros(blob, MAXALIGN(VARSIZE(DatumGetPointer(d))));
	e = (SkadeManifestEntry *) (blob->data + entry_start);	/* the blob may have moved */
	memcpy(blob->data + entry_start + off, DatumGetPointer(d), VARSIZE(DatumGetPointer(d)));
	e->columns_jsonb = off;
	e->size = off + MAXALIGN(VARSIZE(DatumGetPointer(d)));
}

/* the statistics record of field_id, added (all unknown) if new */
static SkadeManifestStat *
stat_for(SkadeManifestStat *stats, int *nstats, int32 field_id)
{
	int			i;

	for (i = 0; i < *nstats; i++)
		if (stats[i].field_id == field_id)
			return &stats[i];
	stats[i].field_id = field_id;
	stats[i].bound[0].len = -1;
	stats[i].bound[1].len = -1;
	(*nstats)++;
	return &stats[i];
}

/* append n zero bytes (appendStringInfoSpaces writes byte by byte) */
static void
append_zeros(StringInfo buf, int n)
{
	enlargeStringInfo(buf, n);
	memset(buf->data + buf->len, 0, n);
	buf->len += n;
	buf->data[buf->len] = '\0';
}

/* append a varlena to var, aligned; its offset in var */
static uint32
put_varlena(StringInfo var, Datum d)
{
	uint32		off;

	while (var->len % MAXIMUM_ALIGNOF)
		appendStringInfoChar(var, '\0');
	off = var->len;
	appendBinaryStringInfo(var, DatumGetPointer(d), VARSIZE(DatumGetPointer(d)));
	return off;
}

/*
 * append s to var as a text varlena (4-byte aligned header, then the bytes,
 * then a NUL that the varlena does not count): the offset of its bytes, so
 * that it reads as a C string too (SkadeManifestText gives the varlena)
 */
static uint32
put_text(StringInfo var, const char *s)
{
	size_t		len = strlen(s);
	int			start;

	if (len > MaxAllocSize - VARHDRSZ)
		elog(ERROR, "manifest string too long");	/* bounded by the file size cap */
	while (var->len % sizeof(int32))
		appendStringInfoChar(var, '\0');
	start = var->len;
	append_zeros(var, VARHDRSZ);
	SET_VARSIZE(var->data + start, len + VARHDRSZ);
	return put_bytes(var, s, len, true);
}

/* append bytes (NUL-terminated if nul) to var; their offset in var */
static uint32
put_bytes(StringInfo var, const char *p, size_t len, bool nul)
{
	uint32		off = var->len;

	appendBinaryStringInfo(var, p, (int) len);
	if (nul)
		appendStringInfoChar(var, '\0');
	return off;
}

/*
 * ManifestEntryStats
 *		The entry's statistics into stats (ncols + 1 of them), by position in
 *		cols; columns cols does not have are left out.
 */
void
ManifestEntryStats(const SkadeManifestEntry *e, const SkadeColumn *cols, int ncols,
				   SkadeColumnStats *stats)
{
	const SkadeManifestStat *ms = SkadeManifestStats(e);
	int			i,
				k;

	memset(stats, 0, sizeof(SkadeColumnStats) * (ncols + 1));
	for (i = 0; i < e->nstats; i++)
	{
		int			c = entry_column_index(cols, ncols, ms[i].field_id);
		SkadeColumnStats *st;

		if (c < 0)
			continue;			/* a column the schema no longer has */
		st = &stats[c];
		for (k = 0; k < 4; k++)
			if (ms[i].has_count & (1 << k))
			{
				st->count[k] = ms[i].count[k];
				st->has_count[k] = true;
			}
		for (k = 0; k < 2; k++)
			if (ms[i].bound[k].len >= 0)
			{
				st->bound[k] = ((const char *) e) + ms[i].bound[k].off;
				st->bound_len[k] = ms[i].bound[k].len;
			}
	}
}

static int
entry_column_index(const SkadeColumn *cols, int ncols, int64 id)
{
	int			i;

	for (i = 0; i < ncols; i++)
		if (cols[i].id == id)
			return i;
	return -1;
}
