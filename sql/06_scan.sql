-- The manifest list of a snapshot (default: the current one), read from its Avro file
CREATE FUNCTION skade.manifests(namespace text, name text, snapshot_id bigint DEFAULT NULL,
								catalog text DEFAULT NULL)
	RETURNS TABLE (path text, length bigint, partition_spec_id integer, content text,
				   sequence_number bigint, min_sequence_number bigint,
				   added_snapshot_id bigint, added_files_count integer,
				   existing_files_count integer, deleted_files_count integer,
				   added_rows_count bigint, existing_rows_count bigint,
				   deleted_rows_count bigint, partitions jsonb)
	AS 'MODULE_PATHNAME', 'skade_manifests' LANGUAGE C STABLE
	COST 10000 ROWS 100 PARALLEL RESTRICTED;
-- One data or delete file of a manifest, as skade.files() and
-- skade.plan_files() return it: per-column statistics in columns
-- ({"name": {"id", "size", "value_count", "null_count", "nan_count", "lower",
-- "upper"}}, bounds decoded by the column's type); delete_files, in
-- plan_files() only, the delete files that apply to a data file
CREATE TYPE skade.content_file AS (content text, file_path text, file_format text,
	partition_spec_id integer, partition jsonb, record_count bigint,
	file_size_in_bytes bigint, columns jsonb, status text, snapshot_id bigint,
	sequence_number bigint, file_sequence_number bigint, manifest text,
	equality_ids integer[], referenced_data_file text, content_offset bigint,
	content_size_in_bytes bigint, delete_files text[]);
-- The live data and delete files of a snapshot
CREATE FUNCTION skade.files(namespace text, name text, snapshot_id bigint DEFAULT NULL,
							catalog text DEFAULT NULL)
	RETURNS SETOF skade.content_file
	AS 'MODULE_PATHNAME', 'skade_files' LANGUAGE C STABLE
	COST 10000 ROWS 1000 PARALLEL RESTRICTED;
-- The files of a snapshot that may hold rows matching filter (Iceberg REST
-- expression JSON), pruned by partition and column statistics, each with the
-- delete files that apply to it (delete_files), then those delete files
CREATE FUNCTION skade.plan_files(namespace text, name text, filter jsonb DEFAULT 'true',
								 snapshot_id bigint DEFAULT NULL, catalog text DEFAULT NULL)
	RETURNS SETOF skade.content_file
	AS 'MODULE_PATHNAME', 'skade_plan_files' LANGUAGE C STABLE
	COST 10000 ROWS 1000 PARALLEL RESTRICTED;

/* ------------------------------------------------------- writing metadata */

