/*-------------------------------------------------------------------------
 *
 * manifest_write.c
 *	  skade.rewrite_manifest_files(): the files of a rewrite_manifests
 *	  commit -- the data manifests of a table's current snapshot merged into
 *	  few per partition spec, and the manifest list of the snapshot that
 *	  replaces them -- written as Apache Iceberg's Java writes them (format
 *	  v1, v2 and v3); skade.rewrite_manifests() (SQL) commits them.
 *
 * Invariants:
 *	 - only data manifests whose spec is known are rewritten, and in a spec
 *	   only those shorter than the target size, and only when a spec has
 *	   two or more of them; delete manifests, big ones and lone ones are
 *	   kept as they are, in their order, after the new ones;
 *	 - every source manifest is read by the validated reader (avro_reader.c,
 *	   confined and bounded like every read) before anything is written, and
 *	   its live entry count must be what its manifest list says (else 22SK1,
 *	   nothing written);
 *	 - a live entry (ADDED or EXISTING) becomes EXISTING with its snapshot
 *	   id and data and file sequence numbers explicit (inherited nulls
 *	   resolved from its manifest list entry); everything else of the data
 *	   file is copied field by field; DELETED entries are dropped;
 *	 - within a spec, entries are ordered by partition tuple (nulls first,
 *	   by the partition type's order), and a manifest is closed once its
 *	   bytes reach the target size, checked every 250 entries as Java's
 *	   RollingManifestWriter does (so a manifest has at least 250 unless it
 *	   is a spec's last); Avro blocks end at 64 kB uncompressed and at
 *	   those checks;
 *	 - the Avro schemas (avro.schema and iceberg.schema headers), field ids,
 *	   header keys and the deflate codec are Java's (V1Metadata /
 *	   V2Metadata / V3Metadata); partition summaries are computed over the
 *	   entries of each new manifest (single-value serialised bounds, NaN
 *	   excluded);
 *	 - v3 row lineage as Java's BaseRewriteManifests: every rewritten data
 *	   file carries its first_row_id explicitly, as inherited when read
 *	   (null when its manifest had none); the new snapshot's first-row-id is
 *	   the table's next-row-id, from which the manifest list gives every
 *	   data manifest without a first_row_id (the new ones first) a range of
 *	   its existing + added rows; added-rows is the sum of those ranges;
 *	 - files are only created, through SkadeCreateFile (write roots,
 *	   create-only, fsync'ed); a failure later leaves them behind as
 *	   orphans for the caller's journal, never half-written;
 *	 - format versions above 3 are refused with 0A000.
 *
 * Locking: none of its own; the commit (skade.update_table, through
 * skade.rewrite_manifests) serialises on the table's row.
 *
 * IDENTIFICATION
 *	  src/writer/manifest_write.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include <math.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "cache/manifest_cache.h"
#include "format/avro_reader.h"
#include "format/metadata_json.h"
#include "format/scan_filter.h"
#include "io/file_access.h"
#include "io/file_create.h"
#include "util/guc.h"
#include "util/gzip.h"
#include "util/names.h"
#include "util/skade_limits.h"
#include "writer/avro_out.h"
#include "writer/manifest_list.h"

PG_FUNCTION_INFO_V1(skade_rewrite_manifest_files);

#define ROLL_ROWS		250		/* entries between checks of a manifest's size */

/* how the values of a partition type compare */
typedef enum PartKind
{
	PK_INT, PK_LONG, PK_FLOAT, PK_DOUBLE, PK_BOOL, PK_BYTES, PK_DECIMAL
} PartKind;

/* a field of the partition tuple of a spec, typed */
typedef struct PartField
{
	const SkadePartitionField *field;
	int32		field_id;
	const char *avro_type;		/* JSON */
	const char *iceberg_type;	/* JSON */
	PartKind	kind;
} PartField;

/* a rewritten entry, encoded, with its partition tuple */
typedef struct NewEntry
{
	char	   *bytes;
	int			len;
	int			ord;			/* the order it was read in */
	int64		record_count;
	int64		seq;
	char	  **part;			/* single-value bytes per field; NULL: null */
	int		   *part_len;
} NewEntry;

/* one rewrite: the table, the new snapshot, what was written */
typedef struct Rewrite
{
	SkadeRoute	route;			/* the table's namespace's (or the settings') */
	const SkadeMeta *meta;
	int			fv;
	const char *dir;
	int64		target;
	char		uuid[37];		/* of the commit, in file names */
	int64		snapshot_id;
	int64		seq;			/* the new snapshot's (0 in v1) */
	int64		first_row_id;	/* v3: the new snapshot's, the table's next-row-id */
	int64		next_row_id;	/* v3: the next to assign, after write_list */
	int			nmanifests;		/* written so far: -m<N> */
	List	   *created;		/* SkadeListEntry of the new manifests */
	int64		entries;		/* live entries rewritten */
	int			replaced;
} Rewrite;

/*
 * The Avro and Iceberg schemas of a manifest entry and of a manifest list
 * entry as Java's V3Metadata, V2Metadata and V1Metadata write them (iceberg
 * 1.10 to 1.12 alike); '@' stands for the fields of the partition tuple.
 */
static const char ENTRY_AVRO_V3[] =
	"{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":[{\"name\":\"status\",\"type\":\"int\","
	"\"field-id\":0},{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\""
	":1},{\"name\":\"sequence_number\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":3},{\"n"
	"ame\":\"file_sequence_number\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":4},{\"name"
	"\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":[{\"name\":\"content\",\"t"
	"ype\":\"int\",\"doc\":\"Contents of the file: 0=data, 1=position deletes, 2=equality deletes\",\"fie"
	"ld-id\":134},{\"name\":\"file_path\",\"type\":\"string\",\"doc\":\"Location URI with FS scheme\",\"f"
	"ield-id\":100},{\"name\":\"file_format\",\"type\":\"string\",\"doc\":\"File format name: avro, orc, "
	"or parquet\",\"field-id\":101},{\"name\":\"partition\",\"type\":{\"type\":\"record\",\"name\":\"r102"
	"\",\"fields\":[@]},\"doc\":\"Partition data tuple, schema based on the partition spec\",\"field-id\""
	":102},{\"name\":\"record_count\",\"type\":\"long\",\"doc\":\"Number of records in the file\",\"field"
	"-id\":103},{\"name\":\"file_size_in_bytes\",\"type\":\"long\",\"doc\":\"Total file size in bytes\","
	"\"field-id\":104},{\"name\":\"column_sizes\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"typ"
	"e\":\"record\",\"name\":\"k117_v118\",\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":11"
	"7},{\"name\":\"value\",\"type\":\"long\",\"field-id\":118}]},\"logicalType\":\"map\"}],\"doc\":\"Map"
	" of column id to total size on disk\",\"default\":null,\"field-id\":108},{\"name\":\"value_counts\","
	"\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"k119_v120\",\"field"
	"s\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":119},{\"name\":\"value\",\"type\":\"long\",\"fi"
	"eld-id\":120}]},\"logicalType\":\"map\"}],\"doc\":\"Map of column id to total count, including null "
	"and NaN\",\"default\":null,\"field-id\":109},{\"name\":\"null_value_counts\",\"type\":[\"null\",{\"t"
	"ype\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"k121_v122\",\"fields\":[{\"name\":\"key\","
	"\"type\":\"int\",\"field-id\":121},{\"name\":\"value\",\"type\":\"long\",\"field-id\":122}]},\"logic"
	"alType\":\"map\"}],\"doc\":\"Map of column id to null value count\",\"default\":null,\"field-id\":11"
	"0},{\"name\":\"nan_value_counts\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"recor"
	"d\",\"name\":\"k138_v139\",\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":138},{\"name"
	"\":\"value\",\"type\":\"long\",\"field-id\":139}]},\"logicalType\":\"map\"}],\"doc\":\"Map of column"
	" id to number of NaN values in the column\",\"default\":null,\"field-id\":137},{\"name\":\"lower_bou"
	"nds\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"k126_v127\","
	"\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":126},{\"name\":\"value\",\"type\":\"byte"
	"s\",\"field-id\":127}]},\"logicalType\":\"map\"}],\"doc\":\"Map of column id to lower bound\",\"defa"
	"ult\":null,\"field-id\":125},{\"name\":\"upper_bounds\",\"type\":[\"null\",{\"type\":\"array\",\"ite"
	"ms\":{\"type\":\"record\",\"name\":\"k129_v130\",\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"fi"
	"eld-id\":129},{\"name\":\"value\",\"type\":\"bytes\",\"field-id\":130}]},\"logicalType\":\"map\"}],"
	"\"doc\":\"Map of column id to upper bound\",\"default\":null,\"field-id\":128},{\"name\":\"key_metad"
	"ata\",\"type\":[\"null\",\"bytes\"],\"doc\":\"Encryption key metadata blob\",\"default\":null,\"fiel"
	"d-id\":131},{\"name\":\"split_offsets\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"long\",\""
	"element-id\":133}],\"doc\":\"Splittable offsets\",\"default\":null,\"field-id\":132},{\"name\":\"equ"
	"ality_ids\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"int\",\"element-id\":136}],\"doc\":\""
	"Equality comparison field IDs\",\"default\":null,\"field-id\":135},{\"name\":\"sort_order_id\",\"typ"
	"e\":[\"null\",\"int\"],\"doc\":\"Sort order ID\",\"default\":null,\"field-id\":140},{\"name\":\"firs"
	"t_row_id\",\"type\":[\"null\",\"long\"],\"doc\":\"The first row ID assigned to the first row in the "
	"data file\",\"default\":null,\"field-id\":142},{\"name\":\"referenced_data_file\",\"type\":[\"null\""
	",\"string\"],\"doc\":\"Fully qualified location (URI with FS scheme) of a data file that all deletes"
	" reference\",\"default\":null,\"field-id\":143},{\"name\":\"content_offset\",\"type\":[\"null\",\"lo"
	"ng\"],\"doc\":\"The offset in the file where the content starts\",\"default\":null,\"field-id\":144}"
	",{\"name\":\"content_size_in_bytes\",\"type\":[\"null\",\"long\"],\"doc\":\"The length of referenced"
	" content stored in the file\",\"default\":null,\"field-id\":145}]},\"field-id\":2}]}";

static const char ENTRY_ICEBERG_V3[] =
	"{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":0,\"name\":\"status\",\"required\":true,\"t"
	"ype\":\"int\"},{\"id\":1,\"name\":\"snapshot_id\",\"required\":false,\"type\":\"long\"},{\"id\":3,\""
	"name\":\"sequence_number\",\"required\":false,\"type\":\"long\"},{\"id\":4,\"name\":\"file_sequence_"
	"number\",\"required\":false,\"type\":\"long\"},{\"id\":2,\"name\":\"data_file\",\"required\":true,\""
	"type\":{\"type\":\"struct\",\"fields\":[{\"id\":134,\"name\":\"content\",\"required\":true,\"type\":"
	"\"int\",\"doc\":\"Contents of the file: 0=data, 1=position deletes, 2=equality deletes\"},{\"id\":10"
	"0,\"name\":\"file_path\",\"required\":true,\"type\":\"string\",\"doc\":\"Location URI with FS scheme"
	"\"},{\"id\":101,\"name\":\"file_format\",\"required\":true,\"type\":\"string\",\"doc\":\"File format"
	" name: avro, orc, or parquet\"},{\"id\":102,\"name\":\"partition\",\"required\":true,\"type\":{\"typ"
	"e\":\"struct\",\"fields\":[@]},\"doc\":\"Partition data tuple, schema based on the partition spec\"}"
	",{\"id\":103,\"name\":\"record_count\",\"required\":true,\"type\":\"long\",\"doc\":\"Number of recor"
	"ds in the file\"},{\"id\":104,\"name\":\"file_size_in_bytes\",\"required\":true,\"type\":\"long\",\""
	"doc\":\"Total file size in bytes\"},{\"id\":108,\"name\":\"column_sizes\",\"required\":false,\"type"
	"\":{\"type\":\"map\",\"key-id\":117,\"key\":\"int\",\"value-id\":118,\"value\":\"long\",\"value-requ"
	"ired\":true},\"doc\":\"Map of column id to total size on disk\"},{\"id\":109,\"name\":\"value_counts"
	"\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":119,\"key\":\"int\",\"value-id\":120,\"v"
	"alue\":\"long\",\"value-required\":true},\"doc\":\"Map of column id to total count, including null a"
	"nd NaN\"},{\"id\":110,\"name\":\"null_value_counts\",\"required\":false,\"type\":{\"type\":\"map\","
	"\"key-id\":121,\"key\":\"int\",\"value-id\":122,\"value\":\"long\",\"value-required\":true},\"doc\":"
	"\"Map of column id to null value count\"},{\"id\":137,\"name\":\"nan_value_counts\",\"required\":fal"
	"se,\"type\":{\"type\":\"map\",\"key-id\":138,\"key\":\"int\",\"value-id\":139,\"value\":\"long\",\"v"
	"alue-required\":true},\"doc\":\"Map of column id to number of NaN values in the column\"},{\"id\":12"
	"5,\"name\":\"lower_bounds\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":126,\"key\":\"i"
	"nt\",\"value-id\":127,\"value\":\"binary\",\"value-required\":true},\"doc\":\"Map of column id to lo"
	"wer bound\"},{\"id\":128,\"name\":\"upper_bounds\",\"required\":false,\"type\":{\"type\":\"map\",\"k"
	"ey-id\":129,\"key\":\"int\",\"value-id\":130,\"value\":\"binary\",\"value-required\":true},\"doc\":"
	"\"Map of column id to upper bound\"},{\"id\":131,\"name\":\"key_metadata\",\"required\":false,\"type"
	"\":\"binary\",\"doc\":\"Encryption key metadata blob\"},{\"id\":132,\"name\":\"split_offsets\",\"req"
	"uired\":false,\"type\":{\"type\":\"list\",\"element-id\":133,\"element\":\"long\",\"element-required"
	"\":true},\"doc\":\"Splittable offsets\"},{\"id\":135,\"name\":\"equality_ids\",\"required\":false,\""
	"type\":{\"type\":\"list\",\"element-id\":136,\"element\":\"int\",\"element-required\":true},\"doc\":"
	"\"Equality comparison field IDs\"},{\"id\":140,\"name\":\"sort_order_id\",\"required\":false,\"type"
	"\":\"int\",\"doc\":\"Sort order ID\"},{\"id\":142,\"name\":\"first_row_id\",\"required\":false,\"typ"
	"e\":\"long\",\"doc\":\"The first row ID assigned to the first row in the data file\"},{\"id\":143,\""
	"name\":\"referenced_data_file\",\"required\":false,\"type\":\"string\",\"doc\":\"Fully qualified loc"
	"ation (URI with FS scheme) of a data file that all deletes reference\"},{\"id\":144,\"name\":\"conte"
	"nt_offset\",\"required\":false,\"type\":\"long\",\"doc\":\"The offset in the file where the content "
	"starts\"},{\"id\":145,\"name\":\"content_size_in_bytes\",\"required\":false,\"type\":\"long\",\"doc"
	"\":\"The length of referenced content stored in the file\"}]}}]}";

static const char ENTRY_AVRO_V2[] =
	"{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":[{\"name\":\"status\",\"type\":\"int\",\"field-"
	"id\":0},{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":1},{\"name\""
	":\"sequence_number\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":3},{\"name\":\"file_seq"
	"uence_number\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":4},{\"name\":\"data_file\",\"t"
	"ype\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":[{\"name\":\"content\",\"type\":\"int\",\"doc\":\"Conten"
	"ts of the file: 0=data, 1=position deletes, 2=equality deletes\",\"field-id\":134},{\"name\":"
	"\"file_path\",\"type\":\"string\",\"doc\":\"Location URI with FS scheme\",\"field-id\":100},{\"name\":"
	"\"file_format\",\"type\":\"string\",\"doc\":\"File format name: avro, orc, or parquet\",\"field-id\""
	":101},{\"name\":\"partition\",\"type\":{\"type\":\"record\",\"name\":\"r102\",\"fields\":[@]},\"doc\":\"Par"
	"tition data tuple, schema based on the partition spec\",\"field-id\":102},{\"name\":\"record_c"
	"ount\",\"type\":\"long\",\"doc\":\"Number of records in the file\",\"field-id\":103},{\"name\":\"file_"
	"size_in_bytes\",\"type\":\"long\",\"doc\":\"Total file size in bytes\",\"field-id\":104},{\"name\":\"c"
	"olumn_sizes\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"k117_v118\","
	"\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":117},{\"name\":\"value\",\"type\":\"long\",\"fiel"
	"d-id\":118}]},\"logicalType\":\"map\"}],\"doc\":\"Map of column id to total size on disk\",\"defau"
	"lt\":null,\"field-id\":108},{\"name\":\"value_counts\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{"
	"\"type\":\"record\",\"name\":\"k119_v120\",\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":119},"
	"{\"name\":\"value\",\"type\":\"long\",\"field-id\":120}]},\"logicalType\":\"map\"}],\"doc\":\"Map of colu"
	"mn id to total count, including null and NaN\",\"default\":null,\"field-id\":109},{\"name\":\"nu"
	"ll_value_counts\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"k121_v1"
	"22\",\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":121},{\"name\":\"value\",\"type\":\"long\",\""
	"field-id\":122}]},\"logicalType\":\"map\"}],\"doc\":\"Map of column id to null value count\",\"def"
	"ault\":null,\"field-id\":110},{\"name\":\"nan_value_counts\",\"type\":[\"null\",{\"type\":\"array\",\"it"
	"ems\":{\"type\":\"record\",\"name\":\"k138_v139\",\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\""
	":138},{\"name\":\"value\",\"type\":\"long\",\"field-id\":139}]},\"logicalType\":\"map\"}],\"doc\":\"Map o"
	"f column id to number of NaN values in the column\",\"default\":null,\"field-id\":137},{\"name"
	"\":\"lower_bounds\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"k126_v1"
	"27\",\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":126},{\"name\":\"value\",\"type\":\"bytes\","
	"\"field-id\":127}]},\"logicalType\":\"map\"}],\"doc\":\"Map of column id to lower bound\",\"default"
	"\":null,\"field-id\":125},{\"name\":\"upper_bounds\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"t"
	"ype\":\"record\",\"name\":\"k129_v130\",\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":129},{\""
	"name\":\"value\",\"type\":\"bytes\",\"field-id\":130}]},\"logicalType\":\"map\"}],\"doc\":\"Map of colum"
	"n id to upper bound\",\"default\":null,\"field-id\":128},{\"name\":\"key_metadata\",\"type\":[\"null"
	"\",\"bytes\"],\"doc\":\"Encryption key metadata blob\",\"default\":null,\"field-id\":131},{\"name\":\""
	"split_offsets\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"long\",\"element-id\":133}],\"doc\":\"S"
	"plittable offsets\",\"default\":null,\"field-id\":132},{\"name\":\"equality_ids\",\"type\":[\"null\","
	"{\"type\":\"array\",\"items\":\"int\",\"element-id\":136}],\"doc\":\"Equality comparison field IDs\",\""
	"default\":null,\"field-id\":135},{\"name\":\"sort_order_id\",\"type\":[\"null\",\"int\"],\"doc\":\"Sort "
	"order ID\",\"default\":null,\"field-id\":140},{\"name\":\"referenced_data_file\",\"type\":[\"null\",\""
	"string\"],\"doc\":\"Fully qualified location (URI with FS scheme) of a data file that all de"
	"letes reference\",\"default\":null,\"field-id\":143}]},\"field-id\":2}]}";

static const char ENTRY_ICEBERG_V2[] =
	"{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":0,\"name\":\"status\",\"required\":true,\"type\":"
	"\"int\"},{\"id\":1,\"name\":\"snapshot_id\",\"required\":false,\"type\":\"long\"},{\"id\":3,\"name\":\"sequ"
	"ence_number\",\"required\":false,\"type\":\"long\"},{\"id\":4,\"name\":\"file_sequence_number\",\"requ"
	"ired\":false,\"type\":\"long\"},{\"id\":2,\"name\":\"data_file\",\"required\":true,\"type\":{\"type\":\"st"
	"ruct\",\"fields\":[{\"id\":134,\"name\":\"content\",\"required\":true,\"type\":\"int\",\"doc\":\"Contents "
	"of the file: 0=data, 1=position deletes, 2=equality deletes\"},{\"id\":100,\"name\":\"file_pat"
	"h\",\"required\":true,\"type\":\"string\",\"doc\":\"Location URI with FS scheme\"},{\"id\":101,\"name\""
	":\"file_format\",\"required\":true,\"type\":\"string\",\"doc\":\"File format name: avro, orc, or pa"
	"rquet\"},{\"id\":102,\"name\":\"partition\",\"required\":true,\"type\":{\"type\":\"struct\",\"fields\":[@"
	"]},\"doc\":\"Partition data tuple, schema based on the partition spec\"},{\"id\":103,\"name\":\"r"
	"ecord_count\",\"required\":true,\"type\":\"long\",\"doc\":\"Number of records in the file\"},{\"id\":"
	"104,\"name\":\"file_size_in_bytes\",\"required\":true,\"type\":\"long\",\"doc\":\"Total file size in "
	"bytes\"},{\"id\":108,\"name\":\"column_sizes\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":1"
	"17,\"key\":\"int\",\"value-id\":118,\"value\":\"long\",\"value-required\":true},\"doc\":\"Map of column"
	" id to total size on disk\"},{\"id\":109,\"name\":\"value_counts\",\"required\":false,\"type\":{\"ty"
	"pe\":\"map\",\"key-id\":119,\"key\":\"int\",\"value-id\":120,\"value\":\"long\",\"value-required\":true},"
	"\"doc\":\"Map of column id to total count, including null and NaN\"},{\"id\":110,\"name\":\"null_"
	"value_counts\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":121,\"key\":\"int\",\"value-id\":"
	"122,\"value\":\"long\",\"value-required\":true},\"doc\":\"Map of column id to null value count\"},"
	"{\"id\":137,\"name\":\"nan_value_counts\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":138,\""
	"key\":\"int\",\"value-id\":139,\"value\":\"long\",\"value-required\":true},\"doc\":\"Map of column id "
	"to number of NaN values in the column\"},{\"id\":125,\"name\":\"lower_bounds\",\"required\":false"
	",\"type\":{\"type\":\"map\",\"key-id\":126,\"key\":\"int\",\"value-id\":127,\"value\":\"binary\",\"value-re"
	"quired\":true},\"doc\":\"Map of column id to lower bound\"},{\"id\":128,\"name\":\"upper_bounds\",\""
	"required\":false,\"type\":{\"type\":\"map\",\"key-id\":129,\"key\":\"int\",\"value-id\":130,\"value\":\"bi"
	"nary\",\"value-required\":true},\"doc\":\"Map of column id to upper bound\"},{\"id\":131,\"name\":\""
	"key_metadata\",\"required\":false,\"type\":\"binary\",\"doc\":\"Encryption key metadata blob\"},{\"i"
	"d\":132,\"name\":\"split_offsets\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":133,\"e"
	"lement\":\"long\",\"element-required\":true},\"doc\":\"Splittable offsets\"},{\"id\":135,\"name\":\"eq"
	"uality_ids\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":136,\"element\":\"int\",\"ele"
	"ment-required\":true},\"doc\":\"Equality comparison field IDs\"},{\"id\":140,\"name\":\"sort_order"
	"_id\",\"required\":false,\"type\":\"int\",\"doc\":\"Sort order ID\"},{\"id\":143,\"name\":\"referenced_d"
	"ata_file\",\"required\":false,\"type\":\"string\",\"doc\":\"Fully qualified location (URI with FS "
	"scheme) of a data file that all deletes reference\"}]}}]}";

static const char ENTRY_AVRO_V1[] =
	"{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":[{\"name\":\"status\",\"type\":\"int\",\"field-"
	"id\":0},{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":1},{\"name\""
	":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":[{\"name\":\"file_path\",\"type\":\"s"
	"tring\",\"doc\":\"Location URI with FS scheme\",\"field-id\":100},{\"name\":\"file_format\",\"type\":"
	"\"string\",\"doc\":\"File format name: avro, orc, or parquet\",\"field-id\":101},{\"name\":\"partit"
	"ion\",\"type\":{\"type\":\"record\",\"name\":\"r102\",\"fields\":[@]},\"doc\":\"Partition data tuple, sc"
	"hema based on the partition spec\",\"field-id\":102},{\"name\":\"record_count\",\"type\":\"long\",\""
	"doc\":\"Number of records in the file\",\"field-id\":103},{\"name\":\"file_size_in_bytes\",\"type\""
	":\"long\",\"doc\":\"Total file size in bytes\",\"field-id\":104},{\"name\":\"block_size_in_bytes\",\""
	"type\":\"long\",\"field-id\":105},{\"name\":\"column_sizes\",\"type\":[\"null\",{\"type\":\"array\",\"item"
	"s\":{\"type\":\"record\",\"name\":\"k117_v118\",\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":1"
	"17},{\"name\":\"value\",\"type\":\"long\",\"field-id\":118}]},\"logicalType\":\"map\"}],\"doc\":\"Map of "
	"column id to total size on disk\",\"default\":null,\"field-id\":108},{\"name\":\"value_counts\",\""
	"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"k119_v120\",\"fields\":[{\"na"
	"me\":\"key\",\"type\":\"int\",\"field-id\":119},{\"name\":\"value\",\"type\":\"long\",\"field-id\":120}]},\""
	"logicalType\":\"map\"}],\"doc\":\"Map of column id to total count, including null and NaN\",\"de"
	"fault\":null,\"field-id\":109},{\"name\":\"null_value_counts\",\"type\":[\"null\",{\"type\":\"array\",\""
	"items\":{\"type\":\"record\",\"name\":\"k121_v122\",\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-i"
	"d\":121},{\"name\":\"value\",\"type\":\"long\",\"field-id\":122}]},\"logicalType\":\"map\"}],\"doc\":\"Map"
	" of column id to null value count\",\"default\":null,\"field-id\":110},{\"name\":\"nan_value_cou"
	"nts\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"k138_v139\",\"fields\""
	":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":138},{\"name\":\"value\",\"type\":\"long\",\"field-id\":13"
	"9}]},\"logicalType\":\"map\"}],\"doc\":\"Map of column id to number of NaN values in the column"
	"\",\"default\":null,\"field-id\":137},{\"name\":\"lower_bounds\",\"type\":[\"null\",{\"type\":\"array\",\""
	"items\":{\"type\":\"record\",\"name\":\"k126_v127\",\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-i"
	"d\":126},{\"name\":\"value\",\"type\":\"bytes\",\"field-id\":127}]},\"logicalType\":\"map\"}],\"doc\":\"Ma"
	"p of column id to lower bound\",\"default\":null,\"field-id\":125},{\"name\":\"upper_bounds\",\"ty"
	"pe\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"k129_v130\",\"fields\":[{\"name"
	"\":\"key\",\"type\":\"int\",\"field-id\":129},{\"name\":\"value\",\"type\":\"bytes\",\"field-id\":130}]},\"l"
	"ogicalType\":\"map\"}],\"doc\":\"Map of column id to upper bound\",\"default\":null,\"field-id\":12"
	"8},{\"name\":\"key_metadata\",\"type\":[\"null\",\"bytes\"],\"doc\":\"Encryption key metadata blob\",\""
	"default\":null,\"field-id\":131},{\"name\":\"split_offsets\",\"type\":[\"null\",{\"type\":\"array\",\"it"
	"ems\":\"long\",\"element-id\":133}],\"doc\":\"Splittable offsets\",\"default\":null,\"field-id\":132}"
	",{\"name\":\"sort_order_id\",\"type\":[\"null\",\"int\"],\"doc\":\"Sort order ID\",\"default\":null,\"fie"
	"ld-id\":140}]},\"field-id\":2}]}";

static const char ENTRY_ICEBERG_V1[] =
	"{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":0,\"name\":\"status\",\"required\":true,\"type\":"
	"\"int\"},{\"id\":1,\"name\":\"snapshot_id\",\"required\":false,\"type\":\"long\"},{\"id\":2,\"name\":\"data"
	"_file\",\"required\":true,\"type\":{\"type\":\"struct\",\"fields\":[{\"id\":100,\"name\":\"file_path\",\"r"
	"equired\":true,\"type\":\"string\",\"doc\":\"Location URI with FS scheme\"},{\"id\":101,\"name\":\"fil"
	"e_format\",\"required\":true,\"type\":\"string\",\"doc\":\"File format name: avro, orc, or parquet"
	"\"},{\"id\":102,\"name\":\"partition\",\"required\":true,\"type\":{\"type\":\"struct\",\"fields\":[@]},\"d"
	"oc\":\"Partition data tuple, schema based on the partition spec\"},{\"id\":103,\"name\":\"record"
	"_count\",\"required\":true,\"type\":\"long\",\"doc\":\"Number of records in the file\"},{\"id\":104,\""
	"name\":\"file_size_in_bytes\",\"required\":true,\"type\":\"long\",\"doc\":\"Total file size in bytes"
	"\"},{\"id\":105,\"name\":\"block_size_in_bytes\",\"required\":true,\"type\":\"long\"},{\"id\":108,\"name"
	"\":\"column_sizes\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":117,\"key\":\"int\",\"value-i"
	"d\":118,\"value\":\"long\",\"value-required\":true},\"doc\":\"Map of column id to total size on di"
	"sk\"},{\"id\":109,\"name\":\"value_counts\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":119,"
	"\"key\":\"int\",\"value-id\":120,\"value\":\"long\",\"value-required\":true},\"doc\":\"Map of column id"
	" to total count, including null and NaN\"},{\"id\":110,\"name\":\"null_value_counts\",\"required"
	"\":false,\"type\":{\"type\":\"map\",\"key-id\":121,\"key\":\"int\",\"value-id\":122,\"value\":\"long\",\"val"
	"ue-required\":true},\"doc\":\"Map of column id to null value count\"},{\"id\":137,\"name\":\"nan_v"
	"alue_counts\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":138,\"key\":\"int\",\"value-id\":1"
	"39,\"value\":\"long\",\"value-required\":true},\"doc\":\"Map of column id to number of NaN values"
	" in the column\"},{\"id\":125,\"name\":\"lower_bounds\",\"required\":false,\"type\":{\"type\":\"map\",\""
	"key-id\":126,\"key\":\"int\",\"value-id\":127,\"value\":\"binary\",\"value-required\":true},\"doc\":\"Ma"
	"p of column id to lower bound\"},{\"id\":128,\"name\":\"upper_bounds\",\"required\":false,\"type\":"
	"{\"type\":\"map\",\"key-id\":129,\"key\":\"int\",\"value-id\":130,\"value\":\"binary\",\"value-required\":"
	"true},\"doc\":\"Map of column id to upper bound\"},{\"id\":131,\"name\":\"key_metadata\",\"required"
	"\":false,\"type\":\"binary\",\"doc\":\"Encryption key metadata blob\"},{\"id\":132,\"name\":\"split_of"
	"fsets\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":133,\"element\":\"long\",\"element"
	"-required\":true},\"doc\":\"Splittable offsets\"},{\"id\":140,\"name\":\"sort_order_id\",\"required\""
	":false,\"type\":\"int\",\"doc\":\"Sort order ID\"}]}}]}";

/* the partition tuple entry_cmp sorts by (qsort has no argument) */
static const PartField *sort_parts;
static int	sort_nparts;

static int64 table_next_row_id(const char *metadata);
static SkadeAvroFile *open_manifest(const Rewrite *rw, const SkadeListEntry *le);
static bool choose(List *entries, int64 target);
static void rewrite_spec(Rewrite *rw, List *entries, int32 spec_id);
static PartField *partition_type(const Rewrite *rw, int32 spec_id, const char *manifest_schema,
								 int *nfields);
static void type_of(const char *type, PartField *pf);
static char *entry_schema(const char *tmpl, const PartField *parts, int nparts, bool avro);
static void read_manifest(Rewrite *rw, const SkadeListEntry *le, SkadeAvroFile *w,
						  const PartField *parts, int nparts, List **out);
static void partition_value(const SkadeAvroValue *part, int i, const PartField *pf,
							NewEntry *e, const char *manifest);
static int	entry_cmp(const void *a, const void *b);
static int	value_cmp(PartKind kind, const char *a, int alen, const char *b, int blen);
static void write_manifests(Rewrite *rw, NewEntry **sorted, int n, int32 spec_id,
							const PartField *parts, int nparts, const char *avro_schema,
							const char *iceberg_schema);
static void finish_manifest(Rewrite *rw, SkadeAvroOut *o, NewEntry **es, int n, int32 spec_id,
							const PartField *parts, int nparts);
static char *write_list(Rewrite *rw, List *kept, int64 parent_id);
static char *spec_fields_json(const PartField *parts, int nparts);

/*
 * skade.rewrite_manifest_files(metadata text, target_size_bytes bigint,
 *		metadata_dir text, namespace text, catalog text) -> jsonb
 *
 * metadata is the table's current metadata (JSON text), metadata_dir where
 * its metadata files go, namespace (and catalog) the table's, whose route
 * its files are read and written by (without: the settings').  Writes the new manifests and manifest list and
 * returns {"snapshot-id", "sequence-number", "manifest-list",
 * "manifests-created", "manifests-kept", "manifests-replaced",
 * "entries-processed"} (and in v3 "first-row-id" and "added-rows" of the
 * new snapshot), or NULL when there is nothing to rewrite (no
 * current snapshot, or at most one small data manifest per spec).
 */
Datum
skade_rewrite_manifest_files(PG_FUNCTION_ARGS)
{
	text	   *mtext;
	char	   *mstr;
	Rewrite		rw = {0};
	const SkadeMetaSnapshot *snap = NULL;
	List	   *entries;
	List	   *kept = NIL;
	List	   *specs = NIL;
	ListCell   *lc;
	char	   *list;
	uint8		rnd[16];
	StringInfoData res;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("metadata, target_size_bytes and metadata_dir must not be NULL")));
	if (XactReadOnly)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot rewrite manifests in a read-only transaction"),
				 RecoveryInProgress() ?
				 errdetail("This server is a hot standby: write through the primary.") : 0));
	mtext = PG_GETARG_TEXT_PP(0);
	mstr = text_to_cstring(mtext);
	rw.target = PG_GETARG_INT64(1);
	rw.dir = text_to_cstring(PG_GETARG_TEXT_PP(2));
	if (PG_NARGS() > 3 && !PG_ARGISNULL(3))
	{
		rw.route.ns = SkadeOptTextArg(fcinfo, 3);
		rw.route.catalog = SkadeResolveCatalog(SkadeOptTextArg(fcinfo, 4));
	}
	if (rw.target <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("target_size_bytes must be positive")));
	rw.meta = SkadeParseMetadata(mstr, strlen(mstr), "the table's metadata");
	rw.fv = rw.meta->format_version;
	if (rw.meta->current_snapshot_id == SKADE_NO_SNAPSHOT)
		PG_RETURN_NULL();
	if (rw.fv > 3)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("rewrite_manifests does not support format v%d tables", rw.fv)));
	if (rw.fv >= 3)
		rw.first_row_id = rw.next_row_id = table_next_row_id(mstr);
	snap = SkadeMetaSnapshotById(rw.meta, rw.meta->current_snapshot_id);
	if (snap == NULL || snap->manifest_list == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the current snapshot of the table has no manifest list"),
				 errdetail("Format v1 snapshots that embed a \"manifests\" array are not rewritten.")));
	list = pstrdup(SkadeMetaStr(rw.meta, snap->manifest_list));
	entries = SkadeManifestListRead(&rw.route, list, snap->snapshot_id, snap->sequence_number);
	if (!choose(entries, rw.target))
		PG_RETURN_NULL();

	/* the new snapshot: a random positive id (as Java), the next sequence number */
	do
	{
		if (!pg_strong_random(&rw.snapshot_id, sizeof(rw.snapshot_id)))
			elog(ERROR, "could not generate a random snapshot id");
		rw.snapshot_id &= PG_INT64_MAX;
		if (SkadeMetaSnapshotById(rw.meta, rw.snapshot_id) != NULL)
			rw.snapshot_id = 0;
	} while (rw.snapshot_id == 0);
	if (!pg_strong_random(rnd, sizeof(rnd)))
		elog(ERROR, "could not generate a random UUID");
	rnd[6] = (rnd[6] & 0x0f) | 0x40;
	rnd[8] = (rnd[8] & 0x3f) | 0x80;
	snprintf(rw.uuid, sizeof(rw.uuid),
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7], rnd[8], rnd[9],
			 rnd[10], rnd[11], rnd[12], rnd[13], rnd[14], rnd[15]);
	rw.seq = rw.fv >= 2 ? rw.meta->last_sequence_number + 1 : 0;

	foreach(lc, entries)
	{
		SkadeListEntry *le = lfirst(lc);

		if (!le->chosen)
			kept = lappend(kept, le);
		else if (!list_member_int(specs, le->spec_id))
			specs = lappend_int(specs, le->spec_id);
	}
	foreach(lc, specs)
		rewrite_spec(&rw, entries, lfirst_int(lc));
	list = write_list(&rw, kept, snap->snapshot_id);

	initStringInfo(&res);
	appendStringInfo(&res, "{\"snapshot-id\": %lld, \"sequence-number\": %lld, \"manifest-list\": ",
					 (long long) rw.snapshot_id, (long long) rw.seq);
	escape_json(&res, list);
	appendStringInfo(&res, ", \"manifests-created\": %d, \"manifests-kept\": %d, "
					 "\"manifests-replaced\": %d, \"entries-processed\": %lld",
					 list_length(rw.created), list_length(kept), rw.replaced,
					 (long long) rw.entries);
	if (rw.fv >= 3)
		appendStringInfo(&res, ", \"first-row-id\": %lld, \"added-rows\": %lld",
						 (long long) rw.first_row_id,
						 (long long) (rw.next_row_id - rw.first_row_id));
	appendStringInfoChar(&res, '}');
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(res.data)));
}

/* the table's next-row-id (format v3) */
static int64
table_next_row_id(const char *metadata)
{
	Jsonb	   *j = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(metadata)));
	JsonbValue *v = getKeyJsonValueFromContainer(&j->root, "next-row-id", strlen("next-row-id"),
												 NULL);
	int64		n = -1;

	if (v != NULL && v->type == jbvNumeric)
		n = DatumGetInt64(DirectFunctionCall1(numeric_int8, NumericGetDatum(v->val.numeric)));
	if (n < 0)
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("the table's format v3 metadata has no valid \"next-row-id\"")));
	pfree(j);
	return n;
}

/*
 * Mark the data manifests to rewrite: per spec, those shorter than target,
 * when there are two or more.  False if there is none.
 */
static bool
choose(List *entries, int64 target)
{
	ListCell   *lc,
			   *lc2;
	bool		any = false;

	foreach(lc, entries)
	{
		SkadeListEntry *le = lfirst(lc);
		int			n = 0;

		if (le->content != 0 || le->length >= target)
			continue;
		foreach(lc2, entries)
		{
			SkadeListEntry *o = lfirst(lc2);

			if (o->content == 0 && o->length < target && o->spec_id == le->spec_id)
				n++;
		}
		le->chosen = n >= 2;
		any |= le->chosen;
	}
	return any;
}

/* rewrite the chosen manifests of one spec */
static void
rewrite_spec(Rewrite *rw, List *entries, int32 spec_id)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "skade rewrite spec",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	PartField  *parts = NULL;
	int			nparts = 0;
	char	   *avro_schema = NULL;
	char	   *iceberg_schema = NULL;
	SkadeAvroFile *w = NULL;
	List	   *news = NIL;
	NewEntry  **sorted;
	ListCell   *lc;
	int			n = 0;

	foreach(lc, entries)
	{
		SkadeListEntry *le = lfirst(lc);

		if (!le->chosen || le->spec_id != spec_id)
			continue;
		if (w == NULL)
		{
			/* the partition types come from the table's schema, else the manifest's */
			SkadeAvroFile *first = open_manifest(rw, le);

			parts = partition_type(rw, spec_id, SkadeAvroMeta(first, "schema"), &nparts);
			SkadeAvroClose(first);
			avro_schema = entry_schema(rw->fv >= 3 ? ENTRY_AVRO_V3 :
									   rw->fv == 2 ? ENTRY_AVRO_V2 : ENTRY_AVRO_V1,
									   parts, nparts, true);
			iceberg_schema = entry_schema(rw->fv >= 3 ? ENTRY_ICEBERG_V3 :
										  rw->fv == 2 ? ENTRY_ICEBERG_V2 : ENTRY_ICEBERG_V1,
										  parts, nparts, false);
			w = SkadeAvroWriterCreate(avro_schema, "a rewritten manifest");
		}
		read_manifest(rw, le, w, parts, nparts, &news);
		rw->replaced++;
	}
	sorted = palloc(sizeof(NewEntry *) * (list_length(news) + 1));
	foreach(lc, news)
		sorted[n++] = lfirst(lc);
	sort_parts = parts;
	sort_nparts = nparts;
	qsort(sorted, n, sizeof(NewEntry *), entry_cmp);
	MemoryContextSwitchTo(old);
	write_manifests(rw, sorted, n, spec_id, parts, nparts, avro_schema, iceberg_schema);
	if (w)
		SkadeAvroWriterFree(w);
	MemoryContextDelete(cxt);
}

/*
 * The typed fields of a spec's partition tuple: each transform's result
 * type (identity, truncate and void: the source's; bucket, year, month,
 * hour: int; day: date), the source type from the table's current schema,
 * else from the schema the manifest was written with.
 */
static PartField *
partition_type(const Rewrite *rw, int32 spec_id, const char *manifest_schema, int *nfields)
{
	const SkadeMeta *m = rw->meta;
	SkadePartitionField *fields = NULL;
	SkadeColumn *cols = NULL,
			   *mcols = NULL;
	int			ncols = 0,
				nmcols = 0;
	PartField  *parts;
	int			i,
				j;

	if (m->partition_specs)
		fields = SkadeParsePartitionSpec(SkadeMetaStr(m, m->partition_specs), spec_id, nfields);
	if (fields == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("the table's metadata has no partition spec %d", spec_id)));
	if (m->current_schema)
		cols = SkadeParseSchemaColumns(SkadeMetaStr(m, m->current_schema), "the table", &ncols);
	if (manifest_schema)
		mcols = SkadeParseSchemaColumns(manifest_schema, "a manifest", &nmcols);
	parts = palloc0(sizeof(PartField) * (*nfields + 1));
	for (i = 0; i < *nfields; i++)
	{
		PartField  *pf = &parts[i];
		const char *tr = fields[i].transform;
		const char *src = NULL;

		pf->field = &fields[i];
		pf->field_id = fields[i].field_id >= 0 ? fields[i].field_id : 1000 + i;
		for (j = 0; j < ncols && src == NULL; j++)
			if (cols[j].id == fields[i].source_id)
				src = cols[j].type;
		for (j = 0; j < nmcols && src == NULL; j++)
			if (mcols[j].id == fields[i].source_id)
				src = mcols[j].type;
		if (strcmp(tr, "year") == 0 || strcmp(tr, "month") == 0 || strcmp(tr, "hour") == 0 ||
			strncmp(tr, "bucket[", 7) == 0)
			type_of("int", pf);
		else if (strcmp(tr, "day") == 0)
			type_of("date", pf);
		else if (strcmp(tr, "identity") != 0 && strcmp(tr, "void") != 0 &&
				 strncmp(tr, "truncate[", 9) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot rewrite manifests of partition spec %d: unknown transform \"%s\"",
							spec_id, tr)));
		else if (src == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_SKADE_INVALID_FILE),
					 errmsg("partition field \"%s\" of spec %d has no source column %d",
							fields[i].name, spec_id, fields[i].source_id)));
		else
			type_of(src, pf);
	}
	return parts;
}

/* the Avro and Iceberg types of a partition value of Iceberg type t (Java's TypeToSchema) */
static void
type_of(const char *t, PartField *pf)
{
	int			p,
				s;

	pf->kind = PK_BYTES;
	pf->iceberg_type = psprintf("\"%s\"", t);
	if (strcmp(t, "boolean") == 0)
		pf->avro_type = "\"boolean\"", pf->kind = PK_BOOL;
	else if (strcmp(t, "int") == 0)
		pf->avro_type = "\"int\"", pf->kind = PK_INT;
	else if (strcmp(t, "long") == 0)
		pf->avro_type = "\"long\"", pf->kind = PK_LONG;
	else if (strcmp(t, "float") == 0)
		pf->avro_type = "\"float\"", pf->kind = PK_FLOAT;
	else if (strcmp(t, "double") == 0)
		pf->avro_type = "\"double\"", pf->kind = PK_DOUBLE;
	else if (strcmp(t, "date") == 0)
		pf->avro_type = "{\"type\":\"int\",\"logicalType\":\"date\"}", pf->kind = PK_INT;
	else if (strcmp(t, "time") == 0)
		pf->avro_type = "{\"type\":\"long\",\"logicalType\":\"time-micros\"}", pf->kind = PK_LONG;
	else if (strcmp(t, "timestamp") == 0 || strcmp(t, "timestamptz") == 0)
		pf->avro_type = psprintf("{\"type\":\"long\",\"logicalType\":\"timestamp-micros\",\"adjust-to-utc\":%s}",
								 t[9] ? "true" : "false"), pf->kind = PK_LONG;
	else if (strcmp(t, "timestamp_ns") == 0 || strcmp(t, "timestamptz_ns") == 0)
		pf->avro_type = psprintf("{\"type\":\"long\",\"logicalType\":\"timestamp-nanos\",\"adjust-to-utc\":%s}",
								 t[9] == 'z' ? "true" : "false"), pf->kind = PK_LONG;
	else if (strcmp(t, "string") == 0)
		pf->avro_type = "\"string\"";
	else if (strcmp(t, "binary") == 0)
		pf->avro_type = "\"bytes\"";
	else if (strcmp(t, "uuid") == 0)
		pf->avro_type = "{\"type\":\"fixed\",\"name\":\"uuid_fixed\",\"size\":16,\"logicalType\":\"uuid\"}";
	else if (sscanf(t, "fixed[%d]", &p) == 1 && p > 0)
		pf->avro_type = psprintf("{\"type\":\"fixed\",\"name\":\"fixed_%d\",\"size\":%d}", p, p);
	else if (sscanf(t, "decimal(%d,%d)", &p, &s) == 2 || sscanf(t, "decimal(%d, %d)", &p, &s) == 2)
	{
		int			bytes = 1;

		/* Java's TypeUtil.decimalRequiredBytes: the fewest bytes for precision p */
		while (bytes < 16 && pow(2.0, 8.0 * bytes - 1) < pow(10.0, p))
			bytes++;
		pf->avro_type = psprintf("{\"type\":\"fixed\",\"name\":\"decimal_%d_%d\",\"size\":%d,\"logicalType\":\"decimal\",\"precision\":%d,\"scale\":%d}",
								 p, s, bytes, p, s);
		pf->kind = PK_DECIMAL;
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot rewrite manifests partitioned by a column of type \"%s\"", t)));
}

/*
 * A manifest entry schema: tmpl with the partition tuple's fields in place
 * of its '@' (Avro: nullable, named by Java's sanitising rule, a named type
 * defined once; Iceberg: optional).
 */
static char *
entry_schema(const char *tmpl, const PartField *parts, int nparts, bool avro)
{
	StringInfoData s;
	const char *at = strchr(tmpl, '@');
	int			i,
				j;

	initStringInfo(&s);
	appendBinaryStringInfo(&s, tmpl, at - tmpl);
	for (i = 0; i < nparts; i++)
	{
		const char *name = parts[i].field->name;
		const char *type = parts[i].avro_type;

		if (i > 0)
			appendStringInfoChar(&s, ',');
		if (!avro)
		{
			appendStringInfo(&s, "{\"id\":%d,\"name\":", parts[i].field_id);
			escape_json(&s, name);
			appendStringInfo(&s, ",\"required\":false,\"type\":%s}", parts[i].iceberg_type);
			continue;
		}
		/* a named type already defined is referenced by name */
		for (j = 0; j < i; j++)
			if (strcmp(parts[j].avro_type, type) == 0 && strstr(type, "\"name\":"))
			{
				const char *n = strstr(type, "\"name\":") + 7;

				type = pnstrdup(n, strchr(n + 1, '"') - n + 1);
				break;
			}
		appendStringInfoString(&s, "{\"name\":");
		{
			StringInfoData san;
			bool		valid = true;
			const char *c;

			initStringInfo(&san);
			for (c = name; *c; c++)
			{
				unsigned char ch = (unsigned char) *c;
				bool		ok = ch == '_' || (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
					(c > name && ch >= '0' && ch <= '9');

				if (ok)
					appendStringInfoChar(&san, ch);
				else if (c == name && ch >= '0' && ch <= '9')
					appendStringInfo(&san, "_%c", ch);
				else
					appendStringInfo(&san, "_x%X", ch);
				valid &= ok;
			}
			escape_json(&s, san.data);
			appendStringInfo(&s, ",\"type\":[\"null\",%s],\"default\":null,\"field-id\":%d",
							 type, parts[i].field_id);
			if (!valid)
			{
				appendStringInfoString(&s, ",\"iceberg-field-name\":");
				escape_json(&s, name);
			}
			appendStringInfoChar(&s, '}');
		}
	}
	appendStringInfoString(&s, at + 1);
	return s.data;
}

/*
 * The live entries of one manifest, as EXISTING entries encoded by writer
 * w, appended to *out.  Their count must be what the list says.
 *
 * v3: a data file's first_row_id is written as read with inheritance, as
 * Java's ManifestReader resolves it: a null one is the manifest's
 * first_row_id plus the record counts of the live entries before it that
 * were null too; when the manifest has none (written before the table
 * became v3), every file's is null, and the new manifest's assigns them.
 */
static void
read_manifest(Rewrite *rw, const SkadeListEntry *le, SkadeAvroFile *w, const PartField *parts,
			  int nparts, List **out)
{
	SkadeAvroFile *f = open_manifest(rw, le);
	const SkadeAvroValue *rec;
	int64		live = 0;
	int64		next_row_id = le->first_row_id;	/* v3: the next inherited */
	MemoryContext row = AllocSetContextCreate(CurrentMemoryContext, "skade rewrite row",
											  ALLOCSET_SMALL_SIZES);

	while ((rec = SkadeAvroNext(f)) != NULL)
	{
		MemoryContext old;
		NewEntry   *e;
		SkadeAvroValue *df;
		SkadeAvroValue *part;
		SkadeAvroValue *dst;
		SkadeAvroValue *dst_df;
		StringInfoData enc;
		int64		status,
					snapshot_id,
					seq,
					file_seq,
					v;
		int			i;

		CHECK_FOR_INTERRUPTS();
		if (!SkadeAvroLong(rec, "status", &status) || status < 0 || status > 2 ||
			!SkadeAvroField(rec, "data_file", &df))
			ereport(ERROR,
					(errcode(ERRCODE_SKADE_INVALID_FILE),
					 errmsg("manifest \"%s\" has an entry without a valid status or data_file",
							le->path)));
		if (status == 2)
			continue;			/* DELETED: dropped */
		if (SkadeAvroLong(df, "content", &v) && v != 0)
			ereport(ERROR,
					(errcode(ERRCODE_SKADE_INVALID_FILE),
					 errmsg("data manifest \"%s\" lists a delete file", le->path)));
		live++;
		/* inherited (null) values come from the manifest list entry */
		snapshot_id = SkadeAvroLong(rec, "snapshot_id", &v) ? v : le->added_snapshot_id;
		seq = SkadeAvroLong(rec, "sequence_number", &v) ? v : le->seq;
		file_seq = SkadeAvroLong(rec, "file_sequence_number", &v) ? v : le->seq;

		e = palloc0(sizeof(NewEntry));
		e->ord = list_length(*out);
		e->seq = seq;
		if (!SkadeAvroLong(df, "record_count", &e->record_count) ||
			!SkadeAvroField(df, "partition", &part))
			ereport(ERROR,
					(errcode(ERRCODE_SKADE_INVALID_FILE),
					 errmsg("manifest \"%s\" has a data file without record_count or partition",
							le->path)));
		e->part = palloc0(sizeof(char *) * (nparts + 1));
		e->part_len = palloc0(sizeof(int) * (nparts + 1));
		if (SkadeAvroRecordSize(part) != nparts)
			ereport(ERROR,
					(errcode(ERRCODE_SKADE_INVALID_FILE),
					 errmsg("manifest \"%s\" has a partition tuple of %d fields where spec %d has %d",
							le->path, SkadeAvroRecordSize(part), le->spec_id, nparts)));
		for (i = 0; i < nparts; i++)
			partition_value(part, i, &parts[i], e, le->path);

		old = MemoryContextSwitchTo(row);
		dst = SkadeAvroWriterRecord(w);
		SkadeAvroSetLong(dst, "status", 0);
		SkadeAvroSetLong(dst, "snapshot_id", snapshot_id);
		if (rw->fv >= 2)
		{
			SkadeAvroSetLong(dst, "sequence_number", seq);
			SkadeAvroSetLong(dst, "file_sequence_number", file_seq);
		}
		dst_df = SkadeAvroSetRecord(dst, "data_file");
		SkadeAvroCopy(dst_df, df, "partition");
		if (rw->fv >= 3 && !le->has_first_row_id)
			SkadeAvroSetNull(dst_df, "first_row_id");
		else if (rw->fv >= 3 && !SkadeAvroLong(df, "first_row_id", &v))
		{
			SkadeAvroSetLong(dst_df, "first_row_id", next_row_id);
			next_row_id += e->record_count;
		}
		MemoryContextSwitchTo(old);
		initStringInfo(&enc);
		SkadeAvroWriterEncode(w, &enc);
		e->bytes = enc.data;
		e->len = enc.len;
		*out = lappend(*out, e);
		MemoryContextReset(row);
	}
	SkadeAvroClose(f);
	MemoryContextDelete(row);
	if (le->has_count[0] && le->has_count[1] && live != le->count[0] + le->count[1])
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("manifest \"%s\" has %lld live entries, but its manifest list says %lld",
						le->path, (long long) live, (long long) (le->count[0] + le->count[1])),
				 errhint("The manifest or the manifest list was replaced after the commit; nothing was rewritten.")));
	rw->entries += live;
}

/*
 * Field i of a partition tuple in single-value binary form, as the
 * partition type has it: a narrower int or float widened, a decimal in its
 * fewest bytes (as Java's BigDecimal does).
 */
static void
partition_value(const SkadeAvroValue *part, int i, const PartField *pf, NewEntry *e,
				const char *manifest)
{
	StringInfoData b;

	initStringInfo(&b);
	if (!SkadeAvroBinaryAt(part, i, &b))
		return;
	if (pf->kind == PK_LONG && b.len == 4)
	{
		int64		x = (int32) SkadeLeInt(b.data, 4);
		int			k;

		resetStringInfo(&b);
		for (k = 0; k < 8; k++)
			appendStringInfoChar(&b, (char) ((uint64) x >> (8 * k)));
	}
	else if (pf->kind == PK_DOUBLE && b.len == 4)
	{
		float		fx;
		double		x;

		memcpy(&fx, b.data, 4);
		x = fx;
		resetStringInfo(&b);
		appendBinaryStringInfo(&b, (char *) &x, 8);
	}
	else if (pf->kind == PK_DECIMAL)
	{
		int			k = 0;

		while (k + 1 < b.len &&
			   ((b.data[k] == 0 && !(b.data[k + 1] & 0x80)) ||
				((unsigned char) b.data[k] == 0xff && (b.data[k + 1] & 0x80))))
			k++;
		memmove(b.data, b.data + k, b.len - k);
		b.len -= k;
	}
	if (((pf->kind == PK_INT || pf->kind == PK_FLOAT) && b.len != 4) ||
		((pf->kind == PK_LONG || pf->kind == PK_DOUBLE) && b.len != 8) ||
		(pf->kind == PK_BOOL && b.len != 1))
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("manifest \"%s\" has a partition value of %d bytes for field \"%s\"",
						manifest, b.len, pf->field->name)));
	e->part[i] = b.data;
	e->part_len[i] = b.len;
}

/* by partition tuple (nulls first), then in the order read */
static int
entry_cmp(const void *a, const void *b)
{
	const NewEntry *x = *(const NewEntry *const *) a;
	const NewEntry *y = *(const NewEntry *const *) b;
	int			i;

	for (i = 0; i < sort_nparts; i++)
	{
		int			c;

		if (x->part[i] == NULL || y->part[i] == NULL)
		{
			c = (x->part[i] != NULL) - (y->part[i] != NULL);
			if (c != 0)
				return c;
			continue;
		}
		c = value_cmp(sort_parts[i].kind, x->part[i], x->part_len[i], y->part[i], y->part_len[i]);
		if (c != 0)
			return c;
	}
	return (x->ord > y->ord) - (x->ord < y->ord);
}

/* two single-value serialised values of a kind (NaN after everything) */
static int
value_cmp(PartKind kind, const char *a, int alen, const char *b, int blen)
{
	switch (kind)
	{
		case PK_INT:
		case PK_LONG:
			{
				int64		x = kind == PK_INT ? (int32) SkadeLeInt(a, 4) : SkadeLeInt(a, 8);
				int64		y = kind == PK_INT ? (int32) SkadeLeInt(b, 4) : SkadeLeInt(b, 8);

				return (x > y) - (x < y);
			}
		case PK_FLOAT:
		case PK_DOUBLE:
			{
				double		x = SkadeBoundFloat(a, alen);
				double		y = SkadeBoundFloat(b, blen);

				if (isnan(x) || isnan(y))
					return isnan(x) - isnan(y);
				if (x == y)
					return (signbit(y) != 0) - (signbit(x) != 0);	/* -0 < 0 */
				return x < y ? -1 : 1;
			}
		case PK_BOOL:
			return (a[0] != 0) - (b[0] != 0);
		case PK_DECIMAL:
			{
				/* big-endian two's complement of any length: sign-extend */
				int			n = Max(alen, blen);
				int			k;
				bool		aneg = alen > 0 && (a[0] & 0x80);
				bool		bneg = blen > 0 && (b[0] & 0x80);

				if (aneg != bneg)
					return aneg ? -1 : 1;
				for (k = 0; k < n; k++)
				{
					unsigned char ca = k < n - alen ? (aneg ? 0xff : 0) : (unsigned char) a[k - (n - alen)];
					unsigned char cb = k < n - blen ? (bneg ? 0xff : 0) : (unsigned char) b[k - (n - blen)];

					if (ca != cb)
						return ca < cb ? -1 : 1;
				}
				return 0;
			}
		case PK_BYTES:
			{
				int			c = memcmp(a, b, Min(alen, blen));

				return c != 0 ? c : (alen > blen) - (alen < blen);
			}
	}
	return 0;
}

/*
 * The sorted entries of one spec into manifests of about the target size:
 * a manifest is closed after the block that brings it to the target.
 */
static void
write_manifests(Rewrite *rw, NewEntry **sorted, int n, int32 spec_id, const PartField *parts,
				int nparts, const char *avro_schema, const char *iceberg_schema)
{
	const char *kv[16];
	int			i = 0;

	kv[0] = "schema";
	kv[1] = SkadeMetaStr(rw->meta, rw->meta->current_schema);
	kv[2] = "partition-spec";
	kv[3] = spec_fields_json(parts, nparts);
	kv[4] = "partition-spec-id";
	kv[5] = psprintf("%d", spec_id);
	kv[6] = "format-version";
	kv[7] = psprintf("%d", rw->fv);
	kv[8] = "iceberg.schema";
	kv[9] = iceberg_schema;
	kv[10] = "avro.schema";
	kv[11] = avro_schema;
	kv[12] = "avro.codec";
	kv[13] = "deflate";
	kv[14] = "content";
	kv[15] = "data";
	if (kv[1] == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_SKADE_INVALID_FILE),
				 errmsg("the table's metadata has no current schema")));
	while (i < n)
	{
		SkadeAvroOut o;
		int			start = i;

		SkadeAvroOutBegin(&o, kv, rw->fv >= 2 ? 8 : 7);
		while (i < n)
		{
			appendBinaryStringInfo(o.block, sorted[i]->bytes, sorted[i]->len);
			o.nrecords++;
			i++;
			/* Java's RollingManifestWriter: may roll every 250 entries */
			if ((i - start) % ROLL_ROWS == 0)
			{
				SkadeAvroOutFlush(&o);
				if (o.buf->len >= rw->target)
					break;
			}
			else if (o.block->len >= SKADE_AVRO_BLOCK_BYTES)
				SkadeAvroOutFlush(&o);
		}
		SkadeAvroOutFlush(&o);
		finish_manifest(rw, &o, sorted + start, i - start, spec_id, parts, nparts);
	}
}

/* create a manifest's file; its manifest list entry goes to rw->created */
static void
finish_manifest(Rewrite *rw, SkadeAvroOut *o, NewEntry **es, int n, int32 spec_id,
				const PartField *parts, int nparts)
{
	SkadeListEntry *le = palloc0(sizeof(SkadeListEntry));
	int			i,
				k;

	le->path = psprintf("%s/%s-m%d.avro", rw->dir, rw->uuid, rw->nmanifests++);
	SkadeCreateFile(&rw->route, le->path, o->buf->data, o->buf->len);
	le->length = o->buf->len;
	le->spec_id = spec_id;
	le->seq = rw->seq;
	le->min_seq = PG_INT64_MAX;
	le->added_snapshot_id = rw->snapshot_id;
	for (k = 0; k < SKADE_LIST_NCOUNTS; k++)
		le->has_count[k] = true;
	le->count[1] = n;
	le->nsummaries = nparts;
	le->summaries = palloc0(sizeof(SkadeListSummary) * (nparts + 1));
	for (k = 0; k < nparts; k++)
		le->summaries[k].contains_nan = 0;
	for (i = 0; i < n; i++)
	{
		le->count[4] += es[i]->record_count;
		le->min_seq = Min(le->min_seq, es[i]->seq);
		for (k = 0; k < nparts; k++)
		{
			SkadeListSummary *s = &le->summaries[k];
			const char *v = es[i]->part[k];
			int			len = es[i]->part_len[k];

			if (v == NULL)
			{
				s->contains_null = true;
				continue;
			}
			if ((parts[k].kind == PK_FLOAT || parts[k].kind == PK_DOUBLE) &&
				isnan(SkadeBoundFloat(v, len)))
			{
				s->contains_nan = 1;
				continue;
			}
			if (s->lower == NULL || value_cmp(parts[k].kind, v, len, s->lower, s->lower_len) < 0)
				s->lower = SkadeBytesDup(v, len), s->lower_len = len;
			if (s->upper == NULL || value_cmp(parts[k].kind, v, len, s->upper, s->upper_len) > 0)
				s->upper = SkadeBytesDup(v, len), s->upper_len = len;
		}
	}
	if (rw->fv < 2)
		le->seq = le->min_seq = 0;
	pfree(o->buf->data);
	pfree(o->block->data);
	rw->created = lappend(rw->created, le);
}

/* the new manifest list: the new manifests, then the kept ones in their order */
static char *
write_list(Rewrite *rw, List *kept, int64 parent_id)
{
	char	   *path = psprintf("%s/snap-%lld-1-%s.avro", rw->dir, (long long) rw->snapshot_id,
								rw->uuid);
	SkadeListHeader h;

	h.format_version = rw->fv;
	h.snapshot_id = rw->snapshot_id;
	h.has_parent = true;
	h.parent_id = parent_id;
	h.seq = rw->seq;
	h.first_row_id = rw->first_row_id;
	SkadeManifestListWrite(&rw->route, path, &h, list_concat_copy(rw->created, kept),
						   &rw->next_row_id);
	return path;
}

/* The manifest of list entry le, read by the table's route, open for SkadeAvroNext. */
static SkadeAvroFile *
open_manifest(const Rewrite *rw, const SkadeListEntry *le)
{
	char	   *real_path;
	StringInfo	bytes = SkadeReadLocation(&rw->route, le->path, &real_path);

	return SkadeAvroOpenBytes(le->path, bytes, real_path, SKADE_AVRO_MANIFEST, le->length);
}

/* the "partition-spec" header: the spec's fields (PartitionSpecParser.toJsonFields) */
static char *
spec_fields_json(const PartField *parts, int nparts)
{
	StringInfoData s;
	int			i;

	initStringInfo(&s);
	appendStringInfoChar(&s, '[');
	for (i = 0; i < nparts; i++)
	{
		appendStringInfoString(&s, i ? ",{\"name\":" : "{\"name\":");
		escape_json(&s, parts[i].field->name);
		appendStringInfoString(&s, ",\"transform\":");
		escape_json(&s, parts[i].field->transform);
		appendStringInfo(&s, ",\"source-id\":%d,\"field-id\":%d}", parts[i].field->source_id,
						 parts[i].field_id);
	}
	appendStringInfoChar(&s, ']');
	return s.data;
}
