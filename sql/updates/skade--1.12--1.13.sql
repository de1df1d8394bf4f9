/* skade--1.12--1.13.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION skade UPDATE TO '1.13'" to load this file. \quit

-- update_table's C path takes staged creates too: the updates applied in C onto
-- update_table's empty table (base, empty_table_metadata), the first file
-- written and the table inserted as create_table_commit inserts it; NULL: the
-- engine's
CREATE FUNCTION skade.create_table_fast(namespace text, name text, base jsonb, updates jsonb,
										catalog text)
	RETURNS text AS 'MODULE_PATHNAME', 'skade_create_table_fast' LANGUAGE C STRICT;
REVOKE ALL ON FUNCTION skade.create_table_fast(text, text, jsonb, jsonb, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION skade.create_table_fast(text, text, jsonb, jsonb, text) TO skade_writer, skade_user;

CREATE OR REPLACE FUNCTION skade.update_table(namespace text, name text, requirements jsonb DEFAULT '[]',
								   updates jsonb DEFAULT '[]', catalog text DEFAULT NULL)
	RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $update$
DECLARE
	cat text := coalesce(catalog, current_setting('skade.catalog'));
	base_location text;
	base jsonb;
	m jsonb;
	r jsonb;
	u jsonb;
	i integer := 0;
	changes integer := 0;
	now_ms bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
	added_snapshots jsonb := '{}';
	main_added jsonb := '[]';
	last_added_schema integer;
	last_added_spec integer;
	last_added_order integer;
	reused integer;
	added jsonb := '{"schemas": [], "specs": [], "orders": []}';	-- ids this commit added
	list text;
	v integer;
	s jsonb;
	ref jsonb;
	props jsonb;
	maxlog integer;
	file text;
	creating boolean := false;
BEGIN
	IF namespace IS NULL OR name IS NULL OR requirements IS NULL OR updates IS NULL THEN
		RAISE EXCEPTION 'namespace, name, requirements and updates must not be NULL'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF jsonb_typeof(requirements) <> 'array' OR jsonb_typeof(updates) <> 'array' THEN
		RAISE EXCEPTION 'requirements and updates must be JSON arrays' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- the row lock first: commits to this table (API or JDBC) queue here
	SELECT t.metadata_location INTO base_location FROM public.iceberg_tables t
	 WHERE t.catalog_name = cat AND t.table_namespace = namespace AND t.table_name = name
	   AND coalesce(t.iceberg_type, 'TABLE') = 'TABLE'
	   FOR UPDATE;
	IF NOT FOUND THEN
		IF requirements = '[{"type": "assert-create"}]'::jsonb
		   OR (jsonb_array_length(requirements) = 1 AND lower(requirements->0->>'type') = 'assert-create') THEN
			-- a staged create committed (a REST create transaction): the
			-- updates build the table from an empty one, as Java's
			-- TableMetadata.buildFromEmpty
			creating := true;
			base := skade.empty_table_metadata(namespace, name, updates, cat);
			requirements := '[]';
			file := skade.create_table_fast(namespace, name, base, updates, cat);
			IF file IS NOT NULL THEN
				RETURN file;
			END IF;
		ELSE
			RAISE EXCEPTION 'table "%.%" does not exist in catalog "%"', namespace, name, cat USING ERRCODE = 'undefined_table';
		END IF;
	ELSE
		-- the common shapes in C (commit_fast.c); NULL: this engine commits
		file := skade.update_table_fast(namespace, name, base_location, requirements, updates, cat);
		IF file IS NOT NULL THEN
			RETURN file;
		END IF;
		base := skade.table_metadata(namespace, name, catalog => cat)::jsonb;
		IF (SELECT l.metadata_location FROM skade.load_table(namespace, name, 'none', cat) l) IS DISTINCT FROM base_location THEN
			RAISE EXCEPTION 'table "%.%" changed while it was read', namespace, name USING ERRCODE = 'serialization_failure';
		END IF;
	END IF;
	m := base;

	-- every requirement is read before any is checked (Java parses the request
	-- first): a malformed one, or assert-create among others, is 22023
	SELECT x.n - 1, x.q INTO v, r FROM jsonb_array_elements(requirements) WITH ORDINALITY x(q, n)
	 WHERE NOT coalesce(CASE lower(x.q->>'type')
		WHEN 'assert-create' THEN NOT EXISTS (SELECT 1 FROM jsonb_array_elements(requirements) y
											  WHERE lower(y->>'type') IS DISTINCT FROM 'assert-create')
		WHEN 'assert-table-uuid' THEN jsonb_typeof(x.q->'uuid') = 'string'
		WHEN 'assert-ref-snapshot-id' THEN jsonb_typeof(x.q->'ref') = 'string'
			AND (coalesce(jsonb_typeof(x.q->'snapshot-id'), 'null') = 'null' OR x.q->>'snapshot-id' ~ '^-?[0-9]+$')
		ELSE x.q->>CASE lower(x.q->>'type') WHEN 'assert-last-assigned-field-id' THEN 'last-assigned-field-id'
			WHEN 'assert-current-schema-id' THEN 'current-schema-id'
			WHEN 'assert-last-assigned-partition-id' THEN 'last-assigned-partition-id'
			WHEN 'assert-default-spec-id' THEN 'default-spec-id'
			WHEN 'assert-default-sort-order-id' THEN 'default-sort-order-id' END ~ '^-?[0-9]{1,10}$' END, false)
	 ORDER BY x.n LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'requirements[%] is malformed: %', v, r
			USING ERRCODE = 'invalid_parameter_value',
			HINT = 'assert-create takes no other requirement; the others need their value field.';
	END IF;

	-- requirements, all against the same base
	FOR r IN SELECT q FROM jsonb_array_elements(requirements) q LOOP
		i := i + 1;
		CASE lower(r->>'type')
		WHEN 'assert-create' THEN
			RAISE EXCEPTION 'Requirement failed: table already exists'
				USING ERRCODE = 'serialization_failure';
		WHEN 'assert-table-uuid' THEN
			IF lower(r->>'uuid') IS DISTINCT FROM lower(base->>'table-uuid') THEN
				RAISE EXCEPTION 'Requirement failed: UUID does not match: expected % != %', r->>'uuid', base->>'table-uuid'
					USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-ref-snapshot-id' THEN
			ref := base->'refs'->(r->>'ref');
			IF ref IS NOT NULL AND r->'snapshot-id' IS NULL OR ref IS NOT NULL AND jsonb_typeof(r->'snapshot-id') = 'null' THEN
				RAISE EXCEPTION 'Requirement failed: % % was created concurrently', ref->>'type', r->>'ref'
					USING ERRCODE = 'serialization_failure';
			ELSIF ref IS NOT NULL AND (ref->>'snapshot-id')::bigint IS DISTINCT FROM (r->>'snapshot-id')::bigint THEN
				RAISE EXCEPTION 'Requirement failed: % % has changed: expected id % != %',
					ref->>'type', r->>'ref', r->>'snapshot-id', ref->>'snapshot-id' USING ERRCODE = 'serialization_failure';
			ELSIF ref IS NULL AND r->>'snapshot-id' IS NOT NULL THEN
				RAISE EXCEPTION 'Requirement failed: branch or tag % is missing, expected %',
					r->>'ref', r->>'snapshot-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-last-assigned-field-id' THEN
			IF (base->>'last-column-id')::integer IS DISTINCT FROM (r->>'last-assigned-field-id')::integer THEN
				RAISE EXCEPTION 'Requirement failed: last assigned field id changed: expected id % != %',
					r->>'last-assigned-field-id', base->>'last-column-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-current-schema-id' THEN
			IF (base->>'current-schema-id')::integer IS DISTINCT FROM (r->>'current-schema-id')::integer THEN
				RAISE EXCEPTION 'Requirement failed: current schema changed: expected id % != %',
					r->>'current-schema-id', base->>'current-schema-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-last-assigned-partition-id' THEN
			IF (base->>'last-partition-id')::integer IS DISTINCT FROM (r->>'last-assigned-partition-id')::integer THEN
				RAISE EXCEPTION 'Requirement failed: last assigned partition id changed: expected id % != %',
					r->>'last-assigned-partition-id', base->>'last-partition-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-default-spec-id' THEN
			IF (base->>'default-spec-id')::integer IS DISTINCT FROM (r->>'default-spec-id')::integer THEN
				RAISE EXCEPTION 'Requirement failed: default partition spec changed: expected id % != %',
					r->>'default-spec-id', base->>'default-spec-id' USING ERRCODE = 'serialization_failure';
			END IF;
		WHEN 'assert-default-sort-order-id' THEN
			IF (base->>'default-sort-order-id')::integer IS DISTINCT FROM (r->>'default-sort-order-id')::integer THEN
				RAISE EXCEPTION 'Requirement failed: default sort order changed: expected id % != %',
					r->>'default-sort-order-id', base->>'default-sort-order-id' USING ERRCODE = 'serialization_failure';
			END IF;
		ELSE
			RAISE EXCEPTION 'requirements[%]: unknown requirement %', i - 1, coalesce(r->'type', 'null'::jsonb)
				USING ERRCODE = 'invalid_parameter_value';
		END CASE;
	END LOOP;

	-- updates, in order
	i := 0;
	FOR u IN SELECT q FROM jsonb_array_elements(updates) q LOOP
		i := i + 1;
		CASE lower(u->>'action')
		WHEN 'assign-uuid' THEN
			IF jsonb_typeof(u->'uuid') IS DISTINCT FROM 'string' THEN
				RAISE EXCEPTION 'updates[%].uuid must be a string', i - 1 USING ERRCODE = 'invalid_parameter_value';
			ELSIF lower(u->>'uuid') <> lower(m->>'table-uuid') THEN
				RAISE EXCEPTION 'updates[%]: cannot change the uuid of an existing table', i - 1
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
		WHEN 'upgrade-format-version' THEN
			v := skade.json_int(u->'format-version', format('updates[%s].format-version', i - 1));
			IF v IS NULL OR v > 3 THEN
				RAISE EXCEPTION 'updates[%]: cannot upgrade to format version %', i - 1, coalesce(u->>'format-version', 'null')
					USING ERRCODE = 'invalid_parameter_value';
			ELSIF v < (m->>'format-version')::integer THEN
				RAISE EXCEPTION 'updates[%]: cannot downgrade v% table to v%', i - 1, m->>'format-version', v
					USING ERRCODE = 'invalid_parameter_value';
			ELSIF v > (m->>'format-version')::integer THEN
				m := skade.upgraded(m, v);
				changes := changes + 1;
			END IF;
		WHEN 'set-properties' THEN
			props := coalesce(u->'updates', u->'updated');
			IF jsonb_typeof(props) IS DISTINCT FROM 'object' OR EXISTS (
				SELECT 1 FROM jsonb_each(props) p WHERE jsonb_typeof(p.value) <> 'string') THEN
				RAISE EXCEPTION 'updates[%].updates must be an object of strings', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF props <> '{}' THEN
				-- as Java's client does: format-version is an upgrade, reserved keys are not kept
				IF props ? 'format-version' THEN
					v := CASE WHEN props->>'format-version' ~ '^[0-9]{1,2}$' THEN (props->>'format-version')::integer END;
					IF v IS NULL OR v > 3 OR v < (m->>'format-version')::integer THEN
						RAISE EXCEPTION 'updates[%]: format-version % cannot be set', i - 1, props->>'format-version'
							USING ERRCODE = 'invalid_parameter_value';
					ELSIF v > (m->>'format-version')::integer THEN
						m := skade.upgraded(m, v);
					END IF;
				END IF;
				m := jsonb_set(m, '{properties}', coalesce(m->'properties', '{}') || (props - ARRAY['format-version', 'uuid',
					'snapshot-count', 'current-snapshot-id', 'current-snapshot-summary', 'current-snapshot-timestamp-ms',
					'current-schema', 'default-partition-spec', 'default-sort-order']));
				changes := changes + 1;
			END IF;
		WHEN 'remove-properties' THEN
			IF jsonb_typeof(coalesce(u->'removals', u->'removed')) IS DISTINCT FROM 'array' THEN
				RAISE EXCEPTION 'updates[%].removals must be an array of strings', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF jsonb_array_length(coalesce(u->'removals', u->'removed')) > 0 THEN
				m := jsonb_set(m, '{properties}', coalesce(m->'properties', '{}') -
					ARRAY(SELECT jsonb_array_elements_text(coalesce(u->'removals', u->'removed'))));
				changes := changes + 1;
			END IF;
		WHEN 'set-location' THEN
			IF jsonb_typeof(u->'location') IS DISTINCT FROM 'string' THEN
				RAISE EXCEPTION 'updates[%].location must be a string', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF u->>'location' <> m->>'location' THEN
				m := m || jsonb_build_object('location', rtrim(u->>'location', '/'));
				changes := changes + 1;
			END IF;
		WHEN 'add-schema' THEN
			-- reusing a schema with no change, the last added one is that schema only if
			-- this commit added it (Java's Builder.addSchemaInternal)
			v := changes;
			SELECT a.meta, a.nchanges, a.last_added INTO m, changes, reused
			  FROM skade.add_schema(m, u->'schema', i - 1, changes) a;
			last_added_schema := CASE WHEN changes > v THEN reused
				WHEN last_added_schema IS NOT NULL AND added->'schemas' @> to_jsonb(reused) THEN reused END;
			IF changes > v THEN
				added := jsonb_set(added, '{schemas}', (added->'schemas') || to_jsonb(reused));
			END IF;
		WHEN 'set-current-schema' THEN
			v := skade.json_int(u->'schema-id', format('updates[%s].schema-id', i - 1));
			IF v = -1 THEN
				IF last_added_schema IS NULL THEN
					RAISE EXCEPTION 'updates[%]: cannot set last added schema: no schema has been added', i - 1
						USING ERRCODE = 'invalid_parameter_value';
				END IF;
				v := last_added_schema;
			END IF;
			IF v IS DISTINCT FROM (m->>'current-schema-id')::integer THEN
				IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(m->'schemas') x WHERE (x->>'schema-id')::integer = v) THEN
					RAISE EXCEPTION 'updates[%]: cannot set current schema to unknown schema %', i - 1, v
						USING ERRCODE = 'invalid_parameter_value';
				END IF;
				m := m || jsonb_build_object('current-schema-id', v);
				IF (m->>'format-version')::integer = 1 THEN
					m := m || jsonb_build_object('schema', (SELECT x FROM jsonb_array_elements(m->'schemas') x
														   WHERE (x->>'schema-id')::integer = v));
				END IF;
				changes := changes + 1;
			END IF;
		WHEN 'add-snapshot' THEN
			m := skade.add_snapshot(m, u->'snapshot', i - 1);
			added_snapshots := added_snapshots || jsonb_build_object(u->'snapshot'->>'snapshot-id', u->'snapshot'->'timestamp-ms');
			changes := changes + 1;
		WHEN 'set-snapshot-ref' THEN
			SELECT a.meta, a.nchanges INTO m, changes
			  FROM skade.set_snapshot_ref(m, u, i - 1, added_snapshots, now_ms, changes) a;
			IF u->>'ref-name' = 'main' AND added_snapshots ? (u->>'snapshot-id') THEN
				main_added := main_added || jsonb_build_array(u->'snapshot-id');
			END IF;
		WHEN 'remove-snapshot-ref' THEN
			IF jsonb_typeof(u->'ref-name') IS DISTINCT FROM 'string' THEN
				RAISE EXCEPTION 'updates[%].ref-name must be a string', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF m->'refs' ? (u->>'ref-name') THEN
				m := jsonb_set(m, '{refs}', (m->'refs') - (u->>'ref-name'));
				changes := changes + 1;
			END IF;
			IF u->>'ref-name' = 'main' THEN
				m := m || jsonb_build_object('current-snapshot-id',
					CASE WHEN (m->>'format-version')::integer >= 3 THEN NULL ELSE -1 END);
			END IF;
		WHEN 'remove-snapshots' THEN
			SELECT a.meta, a.nchanges INTO m, changes
			  FROM skade.remove_snapshots(m, u->'snapshot-ids', i - 1, changes) a;
		WHEN 'add-spec' THEN
			-- reusing a spec, the last added one becomes it if the previous last added
			-- one was added by this commit (Java's Builder.addPartitionSpecInternal)
			v := changes;
			SELECT a.meta, a.nchanges, a.last_added INTO m, changes, reused
			  FROM skade.add_spec(m, u->'spec', i - 1, changes) a;
			last_added_spec := CASE WHEN changes > v THEN reused
				WHEN last_added_spec IS NOT NULL AND added->'specs' @> to_jsonb(last_added_spec) THEN reused END;
			IF changes > v THEN
				added := jsonb_set(added, '{specs}', (added->'specs') || to_jsonb(reused));
			END IF;
		WHEN 'set-default-spec' THEN
			v := skade.json_int(u->'spec-id', format('updates[%s].spec-id', i - 1));
			IF v = -1 THEN
				IF last_added_spec IS NULL THEN
					RAISE EXCEPTION 'updates[%]: cannot set last added spec: no spec has been added', i - 1
						USING ERRCODE = 'invalid_parameter_value';
				END IF;
				v := last_added_spec;
			END IF;
			-- (an unknown id is refused at the end, as Java's build() does)
			IF v IS DISTINCT FROM (m->>'default-spec-id')::integer THEN
				m := m || jsonb_build_object('default-spec-id', v);
				changes := changes + 1;
			END IF;
		WHEN 'add-sort-order' THEN
			-- (the same rule as add-spec: Java's Builder.addSortOrderInternal)
			v := changes;
			SELECT a.meta, a.nchanges, a.last_added INTO m, changes, reused
			  FROM skade.add_sort_order(m, u->'sort-order', i - 1, changes) a;
			last_added_order := CASE WHEN changes > v THEN reused
				WHEN last_added_order IS NOT NULL AND added->'orders' @> to_jsonb(last_added_order) THEN reused END;
			IF changes > v THEN
				added := jsonb_set(added, '{orders}', (added->'orders') || to_jsonb(reused));
			END IF;
		WHEN 'set-default-sort-order' THEN
			v := skade.json_int(u->'sort-order-id', format('updates[%s].sort-order-id', i - 1));
			IF v = -1 THEN
				IF last_added_order IS NULL THEN
					RAISE EXCEPTION 'updates[%]: cannot set last added sort order: no sort order has been added', i - 1
						USING ERRCODE = 'invalid_parameter_value';
				END IF;
				v := last_added_order;
			END IF;
			-- (an unknown id is refused at the end, as Java's build() does)
			IF v IS DISTINCT FROM (m->>'default-sort-order-id')::integer THEN
				m := m || jsonb_build_object('default-sort-order-id', v);
				changes := changes + 1;
			END IF;
		WHEN 'set-statistics', 'set-partition-statistics' THEN
			s := CASE lower(u->>'action') WHEN 'set-statistics' THEN u->'statistics' ELSE u->'partition-statistics' END;
			IF jsonb_typeof(s) IS DISTINCT FROM 'object' OR jsonb_typeof(s->'snapshot-id') IS DISTINCT FROM 'number'
			   OR jsonb_typeof(s->'statistics-path') IS DISTINCT FROM 'string'
			   OR jsonb_typeof(s->'file-size-in-bytes') IS DISTINCT FROM 'number' THEN
				RAISE EXCEPTION 'updates[%] needs a statistics file with snapshot-id, statistics-path and file-size-in-bytes', i - 1
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
			list := CASE lower(u->>'action') WHEN 'set-statistics' THEN 'statistics' ELSE 'partition-statistics' END;
			m := jsonb_set(m, ARRAY[list],
				(SELECT coalesce(jsonb_agg(x), '[]') FROM jsonb_array_elements(coalesce(m->list, '[]')) x
				  WHERE x->'snapshot-id' <> s->'snapshot-id') || jsonb_build_array(s));
			changes := changes + 1;
		WHEN 'remove-statistics', 'remove-partition-statistics' THEN
			list := CASE lower(u->>'action') WHEN 'remove-statistics' THEN 'statistics' ELSE 'partition-statistics' END;
			IF NOT coalesce(u->>'snapshot-id' ~ '^-?[0-9]+$' AND jsonb_typeof(u->'snapshot-id') = 'number', false) THEN
				RAISE EXCEPTION 'updates[%].snapshot-id must be a number', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(m->list, '[]')) x
					   WHERE x->'snapshot-id' = u->'snapshot-id') THEN
				m := jsonb_set(m, ARRAY[list],
					(SELECT coalesce(jsonb_agg(x), '[]') FROM jsonb_array_elements(m->list) x
					  WHERE x->'snapshot-id' <> u->'snapshot-id'));
				changes := changes + 1;
			END IF;
		WHEN 'remove-partition-specs' THEN
			IF jsonb_typeof(u->'spec-ids') IS DISTINCT FROM 'array' THEN
				RAISE EXCEPTION 'updates[%].spec-ids must be an array', i - 1 USING ERRCODE = 'invalid_parameter_value';
			ELSIF m->'default-spec-id' IN (SELECT jsonb_array_elements(u->'spec-ids')) THEN
				RAISE EXCEPTION 'updates[%]: cannot remove the default partition spec', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF jsonb_array_length(u->'spec-ids') > 0 THEN
				m := jsonb_set(m, '{partition-specs}', (SELECT coalesce(jsonb_agg(x), '[]') FROM jsonb_array_elements(m->'partition-specs') x
					WHERE NOT x->'spec-id' IN (SELECT jsonb_array_elements(u->'spec-ids'))));
				changes := changes + 1;
			END IF;
		WHEN 'remove-schemas' THEN
			IF jsonb_typeof(u->'schema-ids') IS DISTINCT FROM 'array' THEN
				RAISE EXCEPTION 'updates[%].schema-ids must be an array', i - 1 USING ERRCODE = 'invalid_parameter_value';
			ELSIF m->'current-schema-id' IN (SELECT jsonb_array_elements(u->'schema-ids')) THEN
				RAISE EXCEPTION 'updates[%]: cannot remove the current schema', i - 1 USING ERRCODE = 'invalid_parameter_value';
			END IF;
			IF jsonb_array_length(u->'schema-ids') > 0 THEN
				m := jsonb_set(m, '{schemas}', (SELECT coalesce(jsonb_agg(x), '[]') FROM jsonb_array_elements(m->'schemas') x
					WHERE NOT x->'schema-id' IN (SELECT jsonb_array_elements(u->'schema-ids'))));
				changes := changes + 1;
			END IF;
		ELSE
			IF lower(u->>'action') IN ('add-encryption-key', 'remove-encryption-key') THEN
				RAISE EXCEPTION 'updates[%]: action % is not supported', i - 1, u->>'action'
					USING ERRCODE = 'feature_not_supported', DETAIL = 'skade does not manage table encryption keys.';
			END IF;
			RAISE EXCEPTION 'updates[%]: unknown action %', i - 1, coalesce(u->'action', 'null'::jsonb)
				USING ERRCODE = 'invalid_parameter_value';
		END CASE;
	END LOOP;

	IF changes = 0 AND NOT creating THEN
		RETURN base_location;
	END IF;
	-- snapshots this commit added and made main, then replaced as main in the
	-- same commit, leave no snapshot-log entry (Java's intermediate snapshots)
	IF EXISTS (SELECT 1 FROM jsonb_array_elements(main_added) x WHERE x <> m->'current-snapshot-id') THEN
		m := jsonb_set(m, '{snapshot-log}', (SELECT coalesce(jsonb_agg(e ORDER BY n), '[]')
			FROM jsonb_array_elements(m->'snapshot-log') WITH ORDINALITY l(e, n)
			WHERE e->'snapshot-id' = m->'current-snapshot-id'
			   OR NOT e->'snapshot-id' IN (SELECT jsonb_array_elements(main_added))));
	END IF;

	-- what Java's build() and TableMetadata constructor refuse (22023): a
	-- default spec or sort order the current schema cannot bind, a snapshot
	-- newer than last-sequence-number, a snapshot log out of order (by more
	-- than Java's minute of clock skew) or ahead of this commit
	IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(m->'partition-specs') x WHERE x->'spec-id' = m->'default-spec-id') THEN
		RAISE EXCEPTION 'cannot set default spec to unknown spec %', m->>'default-spec-id'
			USING ERRCODE = 'invalid_parameter_value';
	ELSIF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(m->'sort-orders') x WHERE x->'order-id' = m->'default-sort-order-id') THEN
		RAISE EXCEPTION 'cannot set default sort order to unknown order %', m->>'default-sort-order-id'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF (m->>'format-version')::integer = 1 THEN
		m := m || jsonb_build_object('partition-spec', (SELECT x->'fields' FROM jsonb_array_elements(m->'partition-specs') x
														 WHERE x->'spec-id' = m->'default-spec-id'));
	END IF;
	s := (SELECT x FROM jsonb_array_elements(m->'schemas') x WHERE x->'schema-id' = m->'current-schema-id');
	SELECT e INTO list FROM (
		SELECT skade.bind_error(s, f, true) e FROM jsonb_array_elements(m->'partition-specs') p,
			   jsonb_array_elements(p->'fields') f WHERE p->'spec-id' = m->'default-spec-id'
		UNION ALL
		SELECT skade.bind_error(s, f, false) FROM jsonb_array_elements(m->'sort-orders') o,
			   jsonb_array_elements(o->'fields') f WHERE o->'order-id' = m->'default-sort-order-id') b
	 WHERE e IS NOT NULL LIMIT 1;
	IF list IS NOT NULL THEN
		RAISE EXCEPTION 'the default partition spec or sort order does not fit the current schema: %', list
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF (SELECT max((x->>'sequence-number')::bigint) FROM jsonb_array_elements(coalesce(m->'snapshots', '[]')) x)
	   > coalesce((m->>'last-sequence-number')::bigint, 0) THEN
		RAISE EXCEPTION 'a snapshot has a sequence number greater than last sequence number %', m->>'last-sequence-number'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF EXISTS (SELECT 1 FROM (SELECT (e->>'timestamp-ms')::bigint t,
									 lag((e->>'timestamp-ms')::bigint) OVER (ORDER BY n) prev
								FROM jsonb_array_elements(coalesce(m->'snapshot-log', '[]')) WITH ORDINALITY l(e, n)) x
			   WHERE t < prev - 60000)
	   OR (m->'snapshot-log'->-1->>'timestamp-ms')::bigint > now_ms + 60000 THEN
		RAISE EXCEPTION 'the snapshot log would go back in time or run ahead of this commit (by more than a minute)'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;

	-- the new file: next version, metadata-log, timestamps
	props := coalesce(m->'properties', '{}');
	maxlog := greatest(1, coalesce(nullif(props->>'write.metadata.previous-versions-max', '')::integer, 100));
	m := m || jsonb_build_object('last-updated-ms', now_ms,
		'metadata-log', CASE WHEN creating THEN '[]'::jsonb ELSE (SELECT coalesce(jsonb_agg(e ORDER BY n), '[]')
						 FROM (SELECT e, n FROM jsonb_array_elements(
								   coalesce(base->'metadata-log', '[]') || jsonb_build_array(jsonb_build_object(
									   'timestamp-ms', base->'last-updated-ms', 'metadata-file', base_location)))
								   WITH ORDINALITY x(e, n)
							   ORDER BY n DESC LIMIT maxlog) l) END);
	file := skade.next_metadata_location(CASE WHEN creating THEN NULL ELSE base_location END,
										 m->>'location', props->>'write.metadata.path',
										 props->>'write.metadata.compression-codec');
	PERFORM skade.write_table_metadata(file, m, namespace, cat);
	IF creating THEN
		PERFORM skade.create_table_commit(namespace, name, file, cat);
	ELSE
		PERFORM skade.commit_table(namespace, name, base_location, file, cat);
	END IF;
	RETURN file;
END
$update$;
