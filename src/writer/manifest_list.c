/*-------------------------------------------------------------------------
 *
 * manifest_list.c
 *	  A snapshot's manifest list read into entries (v1, v2 and v3 names,
 *	  inherited -1 sequence numbers resolved) and entries written back as
 *	  a manifest list file, as Iceberg's Java ManifestListWriter writes it.
 *
 * Invariants:
 *	 - a list is read through the manifest cache's reader (ManifestListOpen:
 *	   confined, bounded, validated); an entry without manifest_path,
 *	   manifest_length or partition_spec_id is an invalid file (22SK1);
 *	 - the Avro schemas (avro.schema and iceberg.schema headers), field
 *	   ids, header keys and the deflate codec are Java's (V1Metadata,
 *	   V2Metadata, V3Metadata);
 *	 - v3 row lineage as Java's ManifestListWriter.V3Writer: a data
 *	   manifest without a first_row_id gets the next row id, which then
 *	   grows by its existing and added rows; delete manifests have none;
 *	 - the file is only created (SkadeCreateFile: write roots, create-only,
 *	   fsync'ed), whole or not at all.
 *
 * Locking: none of its own; the commits that write lists serialise on
 * the table's row.
 *
 * IDENTIFICATION
 *	  src/writer/manifest_list.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "cache/manifest_cache.h"
#include "format/avro_reader.h"
#include "io/file_create.h"
#include "util/skade_limits.h"
#include "writer/avro_out.h"
#include "writer/manifest_list.h"

/*
 * A list is written whole on every commit that rebases (it names all the
 * snapshot's manifests, so it grows with the table) and inflates as fast
 * at any level: zlib's fastest, a few percent larger than level 9.
 */
#define LIST_DEFLATE_LEVEL 1

#define NCOUNTS SKADE_LIST_NCOUNTS

static const char LIST_AVRO_V3[] =
	"{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":[{\"name\":\"manifest_path\",\"type\":\"s"
	"tring\",\"doc\":\"Location URI with FS scheme\",\"field-id\":500},{\"name\":\"manifest_length\",\"ty"
	"pe\":\"long\",\"doc\":\"Total file size in bytes\",\"field-id\":501},{\"name\":\"partition_spec_id\""
	",\"type\":\"int\",\"doc\":\"Spec ID used to write\",\"field-id\":502},{\"name\":\"content\",\"type\""
	":\"int\",\"doc\":\"Contents of the manifest: 0=data, 1=deletes\",\"field-id\":517},{\"name\":\"seque"
	"nce_number\",\"type\":\"long\",\"doc\":\"Sequence number when the manifest was added\",\"field-id\":"
	"515},{\"name\":\"min_sequence_number\",\"type\":\"long\",\"doc\":\"Lowest sequence number in the man"
	"ifest\",\"field-id\":516},{\"name\":\"added_snapshot_id\",\"type\":\"long\",\"doc\":\"Snapshot ID th"
	"at added the manifest\",\"field-id\":503},{\"name\":\"added_files_count\",\"type\":\"int\",\"doc\":"
	"\"Added entry count\",\"field-id\":504},{\"name\":\"existing_files_count\",\"type\":\"int\",\"doc\":"
	"\"Existing entry count\",\"field-id\":505},{\"name\":\"deleted_files_count\",\"type\":\"int\",\"doc"
	"\":\"Deleted entry count\",\"field-id\":506},{\"name\":\"added_rows_count\",\"type\":\"long\",\"doc"
	"\":\"Added rows count\",\"field-id\":512},{\"name\":\"existing_rows_count\",\"type\":\"long\",\"doc"
	"\":\"Existing rows count\",\"field-id\":513},{\"name\":\"deleted_rows_count\",\"type\":\"long\",\"do"
	"c\":\"Deleted rows count\",\"field-id\":514},{\"name\":\"partitions\",\"type\":[\"null\",{\"type\":"
	"\"array\",\"items\":{\"type\":\"record\",\"name\":\"r508\",\"fields\":[{\"name\":\"contains_null\","
	"\"type\":\"boolean\",\"doc\":\"True if any file has a null partition value\",\"field-id\":509},{\"na"
	"me\":\"contains_nan\",\"type\":[\"null\",\"boolean\"],\"doc\":\"True if any file has a nan partition"
	" value\",\"default\":null,\"field-id\":518},{\"name\":\"lower_bound\",\"type\":[\"null\",\"bytes\"],"
	"\"doc\":\"Partition lower bound for all files\",\"default\":null,\"field-id\":510},{\"name\":\"upper"
	"_bound\",\"type\":[\"null\",\"bytes\"],\"doc\":\"Partition upper bound for all files\",\"default\":n"
	"ull,\"field-id\":511}]},\"element-id\":508}],\"doc\":\"Summary for each partition\",\"default\":null"
	",\"field-id\":507},{\"name\":\"key_metadata\",\"type\":[\"null\",\"bytes\"],\"doc\":\"Encryption key"
	" metadata blob\",\"default\":null,\"field-id\":519},{\"name\":\"first_row_id\",\"type\":[\"null\",\""
	"long\"],\"doc\":\"Starting row ID to assign to new rows in ADDED data files\",\"default\":null,\"fie"
	"ld-id\":520}]}";

static const char LIST_ICEBERG_V3[] =
	"{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":500,\"name\":\"manifest_path\",\"required\""
	":true,\"type\":\"string\",\"doc\":\"Location URI with FS scheme\"},{\"id\":501,\"name\":\"manifest_l"
	"ength\",\"required\":true,\"type\":\"long\",\"doc\":\"Total file size in bytes\"},{\"id\":502,\"name"
	"\":\"partition_spec_id\",\"required\":true,\"type\":\"int\",\"doc\":\"Spec ID used to write\"},{\"id"
	"\":517,\"name\":\"content\",\"required\":true,\"type\":\"int\",\"doc\":\"Contents of the manifest: 0"
	"=data, 1=deletes\"},{\"id\":515,\"name\":\"sequence_number\",\"required\":true,\"type\":\"long\",\"d"
	"oc\":\"Sequence number when the manifest was added\"},{\"id\":516,\"name\":\"min_sequence_number\","
	"\"required\":true,\"type\":\"long\",\"doc\":\"Lowest sequence number in the manifest\"},{\"id\":503,"
	"\"name\":\"added_snapshot_id\",\"required\":true,\"type\":\"long\",\"doc\":\"Snapshot ID that added "
	"the manifest\"},{\"id\":504,\"name\":\"added_files_count\",\"required\":true,\"type\":\"int\",\"doc"
	"\":\"Added entry count\"},{\"id\":505,\"name\":\"existing_files_count\",\"required\":true,\"type\":"
	"\"int\",\"doc\":\"Existing entry count\"},{\"id\":506,\"name\":\"deleted_files_count\",\"required\":"
	"true,\"type\":\"int\",\"doc\":\"Deleted entry count\"},{\"id\":512,\"name\":\"added_rows_count\",\"r"
	"equired\":true,\"type\":\"long\",\"doc\":\"Added rows count\"},{\"id\":513,\"name\":\"existing_rows_"
	"count\",\"required\":true,\"type\":\"long\",\"doc\":\"Existing rows count\"},{\"id\":514,\"name\":\""
	"deleted_rows_count\",\"required\":true,\"type\":\"long\",\"doc\":\"Deleted rows count\"},{\"id\":507"
	",\"name\":\"partitions\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":508,\"element"
	"\":{\"type\":\"struct\",\"fields\":[{\"id\":509,\"name\":\"contains_null\",\"required\":true,\"type"
	"\":\"boolean\",\"doc\":\"True if any file has a null partition value\"},{\"id\":518,\"name\":\"conta"
	"ins_nan\",\"required\":false,\"type\":\"boolean\",\"doc\":\"True if any file has a nan partition val"
	"ue\"},{\"id\":510,\"name\":\"lower_bound\",\"required\":false,\"type\":\"binary\",\"doc\":\"Partitio"
	"n lower bound for all files\"},{\"id\":511,\"name\":\"upper_bound\",\"required\":false,\"type\":\"bi"
	"nary\",\"doc\":\"Partition upper bound for all files\"}]},\"element-required\":true},\"doc\":\"Summa"
	"ry for each partition\"},{\"id\":519,\"name\":\"key_metadata\",\"required\":false,\"type\":\"binary"
	"\",\"doc\":\"Encryption key metadata blob\"},{\"id\":520,\"name\":\"first_row_id\",\"required\":fals"
	"e,\"type\":\"long\",\"doc\":\"Starting row ID to assign to new rows in ADDED data files\"}]}";

static const char LIST_AVRO_V2[] =
	"{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":[{\"name\":\"manifest_path\",\"type\":\"string"
	"\",\"doc\":\"Location URI with FS scheme\",\"field-id\":500},{\"name\":\"manifest_length\",\"type\":\""
	"long\",\"doc\":\"Total file size in bytes\",\"field-id\":501},{\"name\":\"partition_spec_id\",\"type"
	"\":\"int\",\"doc\":\"Spec ID used to write\",\"field-id\":502},{\"name\":\"content\",\"type\":\"int\",\"do"
	"c\":\"Contents of the manifest: 0=data, 1=deletes\",\"field-id\":517},{\"name\":\"sequence_numbe"
	"r\",\"type\":\"long\",\"doc\":\"Sequence number when the manifest was added\",\"field-id\":515},{\"n"
	"ame\":\"min_sequence_number\",\"type\":\"long\",\"doc\":\"Lowest sequence number in the manifest\","
	"\"field-id\":516},{\"name\":\"added_snapshot_id\",\"type\":\"long\",\"doc\":\"Snapshot ID that added "
	"the manifest\",\"field-id\":503},{\"name\":\"added_files_count\",\"type\":\"int\",\"doc\":\"Added entr"
	"y count\",\"field-id\":504},{\"name\":\"existing_files_count\",\"type\":\"int\",\"doc\":\"Existing ent"
	"ry count\",\"field-id\":505},{\"name\":\"deleted_files_count\",\"type\":\"int\",\"doc\":\"Deleted entr"
	"y count\",\"field-id\":506},{\"name\":\"added_rows_count\",\"type\":\"long\",\"doc\":\"Added rows coun"
	"t\",\"field-id\":512},{\"name\":\"existing_rows_count\",\"type\":\"long\",\"doc\":\"Existing rows coun"
	"t\",\"field-id\":513},{\"name\":\"deleted_rows_count\",\"type\":\"long\",\"doc\":\"Deleted rows count\""
	",\"field-id\":514},{\"name\":\"partitions\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"re"
	"cord\",\"name\":\"r508\",\"fields\":[{\"name\":\"contains_null\",\"type\":\"boolean\",\"doc\":\"True if an"
	"y file has a null partition value\",\"field-id\":509},{\"name\":\"contains_nan\",\"type\":[\"null\""
	",\"boolean\"],\"doc\":\"True if any file has a nan partition value\",\"default\":null,\"field-id\""
	":518},{\"name\":\"lower_bound\",\"type\":[\"null\",\"bytes\"],\"doc\":\"Partition lower bound for all"
	" files\",\"default\":null,\"field-id\":510},{\"name\":\"upper_bound\",\"type\":[\"null\",\"bytes\"],\"do"
	"c\":\"Partition upper bound for all files\",\"default\":null,\"field-id\":511}]},\"element-id\":5"
	"08}],\"doc\":\"Summary for each partition\",\"default\":null,\"field-id\":507},{\"name\":\"key_meta"
	"data\",\"type\":[\"null\",\"bytes\"],\"doc\":\"Encryption key metadata blob\",\"default\":null,\"field"
	"-id\":519}]}";

static const char LIST_ICEBERG_V2[] =
	"{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":500,\"name\":\"manifest_path\",\"required\":tru"
	"e,\"type\":\"string\",\"doc\":\"Location URI with FS scheme\"},{\"id\":501,\"name\":\"manifest_length"
	"\",\"required\":true,\"type\":\"long\",\"doc\":\"Total file size in bytes\"},{\"id\":502,\"name\":\"part"
	"ition_spec_id\",\"required\":true,\"type\":\"int\",\"doc\":\"Spec ID used to write\"},{\"id\":517,\"na"
	"me\":\"content\",\"required\":true,\"type\":\"int\",\"doc\":\"Contents of the manifest: 0=data, 1=de"
	"letes\"},{\"id\":515,\"name\":\"sequence_number\",\"required\":true,\"type\":\"long\",\"doc\":\"Sequence"
	" number when the manifest was added\"},{\"id\":516,\"name\":\"min_sequence_number\",\"required\":"
	"true,\"type\":\"long\",\"doc\":\"Lowest sequence number in the manifest\"},{\"id\":503,\"name\":\"add"
	"ed_snapshot_id\",\"required\":true,\"type\":\"long\",\"doc\":\"Snapshot ID that added the manifest"
	"\"},{\"id\":504,\"name\":\"added_files_count\",\"required\":true,\"type\":\"int\",\"doc\":\"Added entry "
	"count\"},{\"id\":505,\"name\":\"existing_files_count\",\"required\":true,\"type\":\"int\",\"doc\":\"Exis"
	"ting entry count\"},{\"id\":506,\"name\":\"deleted_files_count\",\"required\":true,\"type\":\"int\",\""
	"doc\":\"Deleted entry count\"},{\"id\":512,\"name\":\"added_rows_count\",\"required\":true,\"type\":\""
	"long\",\"doc\":\"Added rows count\"},{\"id\":513,\"name\":\"existing_rows_count\",\"required\":true,\""
	"type\":\"long\",\"doc\":\"Existing rows count\"},{\"id\":514,\"name\":\"deleted_rows_count\",\"require"
	"d\":true,\"type\":\"long\",\"doc\":\"Deleted rows count\"},{\"id\":507,\"name\":\"partitions\",\"require"
	"d\":false,\"type\":{\"type\":\"list\",\"element-id\":508,\"element\":{\"type\":\"struct\",\"fields\":[{\"i"
	"d\":509,\"name\":\"contains_null\",\"required\":true,\"type\":\"boolean\",\"doc\":\"True if any file h"
	"as a null partition value\"},{\"id\":518,\"name\":\"contains_nan\",\"required\":false,\"type\":\"boo"
	"lean\",\"doc\":\"True if any file has a nan partition value\"},{\"id\":510,\"name\":\"lower_bound\""
	",\"required\":false,\"type\":\"binary\",\"doc\":\"Partition lower bound for all files\"},{\"id\":511"
	",\"name\":\"upper_bound\",\"required\":false,\"type\":\"binary\",\"doc\":\"Partition upper bound for "
	"all files\"}]},\"element-required\":true},\"doc\":\"Summary for each partition\"},{\"id\":519,\"na"
	"me\":\"key_metadata\",\"required\":false,\"type\":\"binary\",\"doc\":\"Encryption key metadata blob\""
	"}]}";

static const char LIST_AVRO_V1[] =
	"{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":[{\"name\":\"manifest_path\",\"type\":\"string"
	"\",\"doc\":\"Location URI with FS scheme\",\"field-id\":500},{\"name\":\"manifest_length\",\"type\":\""
	"long\",\"doc\":\"Total file size in bytes\",\"field-id\":501},{\"name\":\"partition_spec_id\",\"type"
	"\":\"int\",\"doc\":\"Spec ID used to write\",\"field-id\":502},{\"name\":\"added_snapshot_id\",\"type\""
	":\"long\",\"doc\":\"Snapshot ID that added the manifest\",\"field-id\":503},{\"name\":\"added_files"
	"_count\",\"type\":[\"null\",\"int\"],\"doc\":\"Added entry count\",\"default\":null,\"field-id\":504},{"
	"\"name\":\"existing_files_count\",\"type\":[\"null\",\"int\"],\"doc\":\"Existing entry count\",\"defaul"
	"t\":null,\"field-id\":505},{\"name\":\"deleted_files_count\",\"type\":[\"null\",\"int\"],\"doc\":\"Delet"
	"ed entry count\",\"default\":null,\"field-id\":506},{\"name\":\"partitions\",\"type\":[\"null\",{\"typ"
	"e\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"r508\",\"fields\":[{\"name\":\"contains_null\",\"typ"
	"e\":\"boolean\",\"doc\":\"True if any file has a null partition value\",\"field-id\":509},{\"name\""
	":\"contains_nan\",\"type\":[\"null\",\"boolean\"],\"doc\":\"True if any file has a nan partition va"
	"lue\",\"default\":null,\"field-id\":518},{\"name\":\"lower_bound\",\"type\":[\"null\",\"bytes\"],\"doc\":"
	"\"Partition lower bound for all files\",\"default\":null,\"field-id\":510},{\"name\":\"upper_boun"
	"d\",\"type\":[\"null\",\"bytes\"],\"doc\":\"Partition upper bound for all files\",\"default\":null,\"f"
	"ield-id\":511}]},\"element-id\":508}],\"doc\":\"Summary for each partition\",\"default\":null,\"fi"
	"eld-id\":507},{\"name\":\"added_rows_count\",\"type\":[\"null\",\"long\"],\"doc\":\"Added rows count\","
	"\"default\":null,\"field-id\":512},{\"name\":\"existing_rows_count\",\"type\":[\"null\",\"long\"],\"doc"
	"\":\"Existing rows count\",\"default\":null,\"field-id\":513},{\"name\":\"deleted_rows_count\",\"typ"
	"e\":[\"null\",\"long\"],\"doc\":\"Deleted rows count\",\"default\":null,\"field-id\":514},{\"name\":\"ke"
	"y_metadata\",\"type\":[\"null\",\"bytes\"],\"doc\":\"Encryption key metadata blob\",\"default\":null,"
	"\"field-id\":519}]}";

static const char LIST_ICEBERG_V1[] =
	"{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":500,\"name\":\"manifest_path\",\"required\":tru"
	"e,\"type\":\"string\",\"doc\":\"Location URI with FS scheme\"},{\"id\":501,\"name\":\"manifest_length"
	"\",\"required\":true,\"type\":\"long\",\"doc\":\"Total file size in bytes\"},{\"id\":502,\"name\":\"part"
	"ition_spec_id\",\"required\":true,\"type\":\"int\",\"doc\":\"Spec ID used to write\"},{\"id\":503,\"na"
	"me\":\"added_snapshot_id\",\"required\":true,\"type\":\"long\",\"doc\":\"Snapshot ID that added the "
	"manifest\"},{\"id\":504,\"name\":\"added_files_count\",\"required\":false,\"type\":\"int\",\"doc\":\"Add"
	"ed entry count\"},{\"id\":505,\"name\":\"existing_files_count\",\"required\":false,\"type\":\"int\",\""
	"doc\":\"Existing entry count\"},{\"id\":506,\"name\":\"deleted_files_count\",\"required\":false,\"ty"
	"pe\":\"int\",\"doc\":\"Deleted entry count\"},{\"id\":507,\"name\":\"partitions\",\"required\":false,\"t"
	"ype\":{\"type\":\"list\",\"element-id\":508,\"element\":{\"type\":\"struct\",\"fields\":[{\"id\":509,\"nam"
	"e\":\"contains_null\",\"required\":true,\"type\":\"boolean\",\"doc\":\"True if any file has a null p"
	"artition value\"},{\"id\":518,\"name\":\"contains_nan\",\"required\":false,\"type\":\"boolean\",\"doc\""
	":\"True if any file has a nan partition value\"},{\"id\":510,\"name\":\"lower_bound\",\"required\""
	":false,\"type\":\"binary\",\"doc\":\"Partition lower bound for all files\"},{\"id\":511,\"name\":\"up"
	"per_bound\",\"required\":false,\"type\":\"binary\",\"doc\":\"Partition upper bound for all files\"}"
	"]},\"element-required\":true},\"doc\":\"Summary for each partition\"},{\"id\":512,\"name\":\"added_"
	"rows_count\",\"required\":false,\"type\":\"long\",\"doc\":\"Added rows count\"},{\"id\":513,\"name\":\"e"
	"xisting_rows_count\",\"required\":false,\"type\":\"long\",\"doc\":\"Existing rows count\"},{\"id\":51"
	"4,\"name\":\"deleted_rows_count\",\"required\":false,\"type\":\"long\",\"doc\":\"Deleted rows count\"}"
	",{\"id\":519,\"name\":\"key_metadata\",\"required\":false,\"type\":\"binary\",\"doc\":\"Encryption key "
	"metadata blob\"}]}";

static void assign_first_row_id(SkadeListEntry *le, int fv, int64 *next_row_id);
static void put_list_entry(SkadeAvroValue *rec, const SkadeListEntry *le, int fv);

/*
 * The entries of a manifest list (v1, v2 and v3 names) of the snapshot
 * snapshot_id with sequence number seq (what an entry's -1 or absent
 * values inherit).
 */
List *
SkadeManifestListRead(const SkadeRoute *route, const char *list, int64 snapshot_id, int64 seq)
{
	static const char *const names[NCOUNTS][2] = {
		{"added_files_count", "added_data_files_count"},
		{"existing_files_count", "existing_data_files_count"},
		{"deleted_files_count", "deleted_data_files_count"},
		{"added_rows_count", NULL}, {"existing_rows_count", NULL}, {"deleted_rows_count", NULL}};
	SkadeAvroFile *f = ManifestListOpen(route, list);
	const SkadeAvroValue *rec;
	List	   *out = NIL;

	while ((rec = SkadeAvroNext(f)) != NULL)
	{
		SkadeListEntry *le = palloc0(sizeof(SkadeListEntry));
		SkadeAvroValue *arr;
		const char *p;
		size_t		len;
		int64		v;
		int			k;

		CHECK_FOR_INTERRUPTS();
		if (!SkadeAvroText(rec, "manifest_path", &le->path) || le->path[0] == '\0' ||
			!SkadeAvroLong(rec, "manifest_length", &le->length) ||
			!SkadeAvroLong(rec, "partition_spec_id", &v))
			ereport(ERROR,
					(errcode(ERRCODE_SKADE_INVALID_FILE),
					 errmsg("manifest list \"%s\" has an entry without manifest_path, manifest_length or partition_spec_id",
							list)));
		le->spec_id = (int32) v;
		le->content = SkadeAvroLong(rec, "content", &v) ? (int32) v : 0;
		le->seq = SkadeAvroLong(rec, "sequence_number", &v) ? (v == -1 ? seq : v) : 0;
		le->min_seq = SkadeAvroLong(rec, "min_sequence_number", &v) ? (v == -1 ? seq : v) : 0;
		le->added_snapshot_id = SkadeAvroLong(rec, "added_snapshot_id", &v) ? v : snapshot_id;
		for (k = 0; k < NCOUNTS; k++)
			le->has_count[k] = SkadeAvroLong(rec, names[k][0], &le->count[k]) ||
				(names[k][1] && SkadeAvroLong(rec, names[k][1], &le->count[k]));
		if (SkadeAvroBytes(rec, "key_metadata", &p, &len))
		{
			le->key_metadata = SkadeBytesDup(p, len);
			le->key_metadata_len = (int) len;
		}
		le->has_first_row_id = SkadeAvroLong(rec, "first_row_id", &le->first_row_id);
		le->nsummaries = -1;
		if (SkadeAvroField(rec, "partitions", &arr))
		{
			le->nsummaries = SkadeAvroArrayLength(arr);
			le->summaries = palloc0(sizeof(SkadeListSummary) * (le->nsummaries + 1));
			for (k = 0; k < le->nsummaries; k++)
			{
				SkadeAvroValue *sv = SkadeAvroArrayElement(arr, k);
				SkadeListSummary *s = &le->summaries[k];
				bool		b;

				s->contains_null = SkadeAvroBool(sv, "contains_null", &b) ? b : true;
				s->contains_nan = SkadeAvroBool(sv, "contains_nan", &b) ? b : -1;
				if (SkadeAvroBytes(sv, "lower_bound", &p, &len))
				{
					s->lower = SkadeBytesDup(p, len);
					s->lower_len = (int) len;
				}
				if (SkadeAvroBytes(sv, "upper_bound", &p, &len))
				{
					s->upper = SkadeBytesDup(p, len);
					s->upper_len = (int) len;
				}
			}
		}
		out = lappend(out, le);
	}
	SkadeAvroClose(f);
	return out;
}

/*
 * v3 (Java's ManifestListWriter.V3Writer): a data manifest without a
 * first_row_id (a new one, or one written before the table became v3) gets
 * the next row id, which then grows by its existing and added rows, as its
 * files without one inherit from it; others keep theirs, delete manifests
 * have none.
 */
static void
assign_first_row_id(SkadeListEntry *le, int fv, int64 *next_row_id)
{
	if (le->content != 0)
	{
		le->has_first_row_id = false;
		return;
	}
	if (le->has_first_row_id)
		return;
	if (!le->has_count[3] || !le->has_count[4])
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("manifest list entry \"%s\" lacks added_rows_count or existing_rows_count, which format v%d requires",
						le->path, fv)));
	le->has_first_row_id = true;
	le->first_row_id = *next_row_id;
	*next_row_id += le->count[4] + le->count[3];
}

/*
 * The manifest list of snapshot h at path: entries in their order (in v3
 * *next_row_id, from h->first_row_id, is what the next commit assigns).
 */
void
SkadeManifestListWrite(const SkadeRoute *route, const char *path, const SkadeListHeader *h,
					   List *entries, int64 *next_row_id)
{
	const char *kv[16];
	int			fv = h->format_version;
	SkadeAvroFile *w;
	SkadeAvroOut o;
	ListCell   *lc;
	int			nkv = 0;
	int64		next = h->first_row_id;

	kv[nkv++] = "snapshot-id";
	kv[nkv++] = psprintf("%lld", (long long) h->snapshot_id);
	kv[nkv++] = "parent-snapshot-id";
	kv[nkv++] = h->has_parent ? psprintf("%lld", (long long) h->parent_id) : "null";
	kv[nkv++] = "format-version";
	kv[nkv++] = psprintf("%d", fv);
	kv[nkv++] = "iceberg.schema";
	kv[nkv++] = fv >= 3 ? LIST_ICEBERG_V3 : fv == 2 ? LIST_ICEBERG_V2 : LIST_ICEBERG_V1;
	kv[nkv++] = "avro.schema";
	kv[nkv++] = fv >= 3 ? LIST_AVRO_V3 : fv == 2 ? LIST_AVRO_V2 : LIST_AVRO_V1;
	kv[nkv++] = "avro.codec";
	kv[nkv++] = "deflate";
	if (fv >= 2)
	{
		kv[nkv++] = "sequence-number";
		kv[nkv++] = psprintf("%lld", (long long) h->seq);
	}
	if (fv >= 3)
	{
		kv[nkv++] = "first-row-id";
		kv[nkv++] = psprintf("%lld", (long long) h->first_row_id);
	}
	w = SkadeAvroWriterCreate(kv[9], path);
	SkadeAvroOutBegin(&o, kv, nkv / 2);
	o.level = LIST_DEFLATE_LEVEL;
	foreach(lc, entries)
	{
		SkadeListEntry *le = lfirst(lc);

		CHECK_FOR_INTERRUPTS();
		if (fv >= 3)
			assign_first_row_id(le, fv, &next);
		put_list_entry(SkadeAvroWriterRecord(w), le, fv);
		SkadeAvroWriterEncode(w, o.block);
		o.nrecords++;
		if (o.block->len >= SKADE_AVRO_BLOCK_BYTES)
			SkadeAvroOutFlush(&o);
	}
	SkadeAvroOutFlush(&o);
	SkadeAvroWriterFree(w);
	SkadeCreateFile(route, path, o.buf->data, o.buf->len);
	if (next_row_id)
		*next_row_id = next;
}

/* one entry, in the names of format version fv */
static void
put_list_entry(SkadeAvroValue *rec, const SkadeListEntry *le, int fv)
{
	static const char *const names[NCOUNTS] = {
		"added_files_count", "existing_files_count", "deleted_files_count",
		"added_rows_count", "existing_rows_count", "deleted_rows_count"};
	int			k;

	SkadeAvroSetBytes(rec, "manifest_path", le->path, strlen(le->path));
	SkadeAvroSetLong(rec, "manifest_length", le->length);
	SkadeAvroSetLong(rec, "partition_spec_id", le->spec_id);
	if (fv >= 2)
	{
		SkadeAvroSetLong(rec, "content", le->content);
		SkadeAvroSetLong(rec, "sequence_number", le->seq);
		SkadeAvroSetLong(rec, "min_sequence_number", le->min_seq);
	}
	SkadeAvroSetLong(rec, "added_snapshot_id", le->added_snapshot_id);
	for (k = 0; k < NCOUNTS; k++)
	{
		if (le->has_count[k])
			SkadeAvroSetLong(rec, names[k], le->count[k]);
		else if (fv < 2)
			SkadeAvroSetNull(rec, names[k]);
		else
			ereport(ERROR,
					(errcode(ERRCODE_SKADE_INVALID_FILE),
					 errmsg("manifest list entry \"%s\" lacks %s, which format v%d requires",
							le->path, names[k], fv)));
	}
	if (le->nsummaries < 0)
		SkadeAvroSetNull(rec, "partitions");
	else
	{
		SkadeAvroValue *arr = SkadeAvroSetRecord(rec, "partitions");

		for (k = 0; k < le->nsummaries; k++)
		{
			SkadeAvroValue *s = SkadeAvroAppend(arr);
			const SkadeListSummary *sm = &le->summaries[k];

			SkadeAvroSetBool(s, "contains_null", sm->contains_null);
			if (sm->contains_nan < 0)
				SkadeAvroSetNull(s, "contains_nan");
			else
				SkadeAvroSetBool(s, "contains_nan", sm->contains_nan != 0);
			if (sm->lower)
				SkadeAvroSetBytes(s, "lower_bound", sm->lower, sm->lower_len);
			else
				SkadeAvroSetNull(s, "lower_bound");
			if (sm->upper)
				SkadeAvroSetBytes(s, "upper_bound", sm->upper, sm->upper_len);
			else
				SkadeAvroSetNull(s, "upper_bound");
		}
	}
	if (le->key_metadata)
		SkadeAvroSetBytes(rec, "key_metadata", le->key_metadata, le->key_metadata_len);
	else
		SkadeAvroSetNull(rec, "key_metadata");
	if (fv >= 3 && le->has_first_row_id)
		SkadeAvroSetLong(rec, "first_row_id", le->first_row_id);
	else if (fv >= 3)
		SkadeAvroSetNull(rec, "first_row_id");
}
