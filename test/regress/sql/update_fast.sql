-- update_table's fast path (commit_fast.c): every commit below runs three
-- times on the same base -- the PL/pgSQL engine alone (rolled back), the C
-- path called directly (rolled back: "handled" says whether it took the
-- commit), then update_table with the fast path on (kept) -- and the two
-- results must be the same: metadata (but last-updated-ms and the "now"
-- timestamps of the snapshot log), refs variant, snapshots, refs, history,
-- the file's name, or the same error (SQLSTATE and message).  The fast
-- path's L0 summary must also equal a fresh parse of its file.
\pset null '(null)'
SET skade.allowed_roots = '/tmp/skade_regress,/tmp/skade-fixtures,/tmp/skade-fixture-py';
SET skade.write_roots = '/tmp/skade_regress/wh,/tmp/skade-fixtures,/tmp/skade-fixture-py';
CREATE FUNCTION pg_temp.msg(code text, m text) RETURNS text LANGUAGE sql AS $$
	SELECT code || ': ' || regexp_replace(m, '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>', 'g')
$$;
CREATE FUNCTION pg_temp.norm(m jsonb) RETURNS jsonb LANGUAGE sql AS $$
	SELECT (m - 'last-updated-ms') || jsonb_build_object('snapshot-log', (SELECT jsonb_agg(
		CASE WHEN (e->>'timestamp-ms')::bigint > extract(epoch FROM now()) * 1000 - 3600000
			 THEN e || '{"timestamp-ms": "now"}' ELSE e END ORDER BY n)
		FROM jsonb_array_elements(m->'snapshot-log') WITH ORDINALITY x(e, n)))
$$;
CREATE FUNCTION pg_temp.state(ns text, t text) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_build_object(
		'file', regexp_replace(regexp_replace(l.metadata_location, '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>'), '^.*/([^/]*/[^/]*)$', '\1'),
		'meta', pg_temp.norm(l.metadata::jsonb),
		'refs_variant', pg_temp.norm((SELECT r.metadata::jsonb FROM skade.load_table(ns, t, 'refs') r)),
		'snapshots', (SELECT jsonb_agg(to_jsonb(s) ORDER BY s.sequence_number, s.snapshot_id) FROM skade.snapshots(ns, t) s),
		'refs', (SELECT jsonb_agg(to_jsonb(r) ORDER BY r.name) FROM skade.refs(ns, t) r),
		'history', (SELECT jsonb_agg(jsonb_build_array(h.snapshot_id, h.parent_id, h.is_current_ancestor)) FROM skade.history(ns, t) h))
	FROM skade.load_table(ns, t) l
$$;
-- a timestamp-ms 1700000000000 + k below stands for "30 s ago + k": the
-- snapshot log may not go back in time by more than a minute (Java refuses
-- it), and main's move back to an older snapshot stamps its entry now
CREATE FUNCTION pg_temp.stamp(u jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	t text := u::text;
	m text[];
BEGIN
	FOR m IN SELECT regexp_matches(t, '"timestamp-ms": 1700000(\d{6})', 'g') LOOP
		t := replace(t, '"timestamp-ms": 1700000' || m[1], '"timestamp-ms": '
					 || ((extract(epoch FROM now()) * 1000)::bigint - 30000 + m[1]::bigint));
	END LOOP;
	RETURN t::jsonb;
END $$;
CREATE FUNCTION pg_temp.same(ns text, t text, req jsonb, upd_in jsonb, OUT handled boolean, OUT outcome text)
LANGUAGE plpgsql AS $$
DECLARE
	base text := (SELECT metadata_location FROM skade.load_table(ns, t, 'none'));
	upd jsonb := pg_temp.stamp(upd_in);
	slow jsonb;
	fast jsonb;
	reread jsonb;
	e_slow text;
	e_fast text;
	loc text;
BEGIN
	BEGIN
		PERFORM set_config('skade.update_fast_path', 'off', true);
		loc := skade.update_table(ns, t, req, upd);
		slow := pg_temp.state(ns, t) || jsonb_build_object('unchanged', loc = base);
		RAISE EXCEPTION 'undo' USING ERRCODE = 'P0099';
	EXCEPTION WHEN OTHERS THEN
		IF SQLSTATE <> 'P0099' THEN e_slow := pg_temp.msg(SQLSTATE, SQLERRM); END IF;
	END;
	BEGIN
		handled := skade.update_table_fast(ns, t, base, req, upd, current_setting('skade.catalog')) IS NOT NULL;
		RAISE EXCEPTION 'undo' USING ERRCODE = 'P0099';
	EXCEPTION WHEN OTHERS THEN
		IF SQLSTATE <> 'P0099' THEN handled := NULL; END IF;
	END;
	BEGIN
		loc := skade.update_table(ns, t, req, upd);
		fast := pg_temp.state(ns, t) || jsonb_build_object('unchanged', loc = base);
		PERFORM skade.cache_reset();
		reread := pg_temp.state(ns, t) || jsonb_build_object('unchanged', loc = base);
	EXCEPTION WHEN OTHERS THEN
		e_fast := pg_temp.msg(SQLSTATE, SQLERRM);
	END;
	outcome := CASE
		WHEN e_slow IS NOT NULL OR e_fast IS NOT NULL THEN
			CASE WHEN e_slow IS NOT DISTINCT FROM e_fast THEN e_slow
				 ELSE format('ERRORS DIFFER: %s / %s', e_slow, e_fast) END
		WHEN slow = fast AND fast = reread THEN 'same: ' || (fast->>'file') || CASE WHEN (fast->'unchanged')::boolean THEN ' (unchanged)' ELSE '' END
		ELSE format('DIFFER: slow %s fast %s reread %s', slow, fast, reread) END;
END $$;

SELECT skade.create_namespace('uf', '{"location": "/tmp/skade_regress/wh/uf"}');
SELECT skade.create_table('uf', 't', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}') IS NOT NULL AS created;
SELECT (metadata::jsonb)->>'table-uuid' AS uuid FROM skade.load_table('uf', 't') \gset

-- appends as REST clients send them; every requirement kind that can hold
SELECT * FROM pg_temp.same('uf', 't',
  format('[{"type": "assert-table-uuid", "uuid": "%s"}, {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": null}]', upper(:'uuid'))::jsonb,
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 11, "sequence-number": 1, "timestamp-ms": 1700000000000, "parent-snapshot-id": null,
     "manifest-list": "file:/tmp/skade_regress/wh/uf/t/metadata/snap-11.avro", "summary": {"operation": "append", "added-records": "3", "x": null}, "schema-id": 0}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 11, "type": "branch"},
    {"action": "set-properties", "updates": {"owner": "ana", "note": "quote \" backslash \\ tab \t é \u00e9"}}]');
SELECT * FROM pg_temp.same('uf', 't',
  '[{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 11}, {"type": "assert-current-schema-id", "current-schema-id": 0},
    {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 1}, {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 999},
    {"type": "assert-default-spec-id", "default-spec-id": 0}, {"type": "ASSERT-DEFAULT-SORT-ORDER-ID", "default-sort-order-id": 0}]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 12, "parent-snapshot-id": 11, "sequence-number": 2, "timestamp-ms": 1700000001000,
     "manifest-list": "file:/tmp/skade_regress/wh/uf/t/metadata/snap-12.avro", "summary": {"operation": "overwrite"}}},
    {"action": "Set-Snapshot-Ref", "ref-name": "main", "snapshot-id": 12, "type": "BRANCH"}]');
-- a staged snapshot (no ref moves), then a tag and a branch with retention on it
SELECT * FROM pg_temp.same('uf', 't', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 13, "parent-snapshot-id": 12, "sequence-number": 3, "timestamp-ms": 1700000002000,
     "manifest-list": "/m/snap-13.avro", "summary": {"operation": "append"}}}]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-ref-snapshot-id", "ref": "v1", "snapshot-id": null}]',
  '[{"action": "set-snapshot-ref", "ref-name": "v1", "snapshot-id": 13, "type": "tag", "max-ref-age-ms": 86400000},
    {"action": "set-snapshot-ref", "ref-name": "dev", "snapshot-id": 11, "type": "branch", "min-snapshots-to-keep": 2, "max-snapshot-age-ms": 3600000, "max-ref-age-ms": null}]');
-- main back to an older snapshot (its log entry is stamped now), the same ref again (no change, no file)
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-ref-snapshot-id", "ref": "dev", "snapshot-id": 11}]',
  '[{"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 11, "type": "branch"}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 11, "type": "branch"}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "set-properties", "updates": {}}, {"action": "remove-properties", "removals": []}]');
-- properties: reserved keys dropped, the "updated"/"removed" spellings
SELECT * FROM pg_temp.same('uf', 't', '[]',
  '[{"action": "set-properties", "updated": {"uuid": "x", "a": "1", "b": "2", "current-snapshot-id": "5"}}, {"action": "remove-properties", "removed": ["b", "nothing"]},
    {"action": "remove-properties", "removals": ["owner"]}]');
-- previous-versions-max trims the metadata log; gzip; write.metadata.path
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "set-properties", "updates": {"write.metadata.previous-versions-max": "2"}}]');
-- main's last log entry was stamped now: a snapshot from 2020 puts the log
-- back in time (the engine refuses it, so the C path leaves it)
SELECT * FROM pg_temp.same('uf', 't', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 14, "parent-snapshot-id": 11, "sequence-number": 4, "timestamp-ms": 1600000003000,
     "manifest-list": "/m/snap-14.avro", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 14, "type": "branch"}]');
SELECT * FROM pg_temp.same('uf', 't', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 14, "parent-snapshot-id": 11, "sequence-number": 4, "timestamp-ms": 1700000003000,
     "manifest-list": "/m/snap-14.avro", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 14, "type": "branch"}]');
SELECT jsonb_array_length((metadata::jsonb)->'metadata-log') AS kept_versions FROM skade.load_table('uf', 't');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "set-properties", "updates": {"write.metadata.compression-codec": "GZIP"}}]');
SELECT * FROM pg_temp.same('uf', 't', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 15, "parent-snapshot-id": 14, "sequence-number": 5, "timestamp-ms": 1700000004000,
     "manifest-list": "/m/snap-15.avro", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 15, "type": "branch"}]');
SELECT * FROM pg_temp.same('uf', 't', '[]',
  '[{"action": "set-properties", "updates": {"write.metadata.path": "/tmp/skade_regress/wh/uf/t/meta2//", "write.metadata.compression-codec": "none"}}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "set-properties", "updates": {"write.metadata.previous-versions-max": "0"}}]');
SELECT jsonb_array_length((metadata::jsonb)->'metadata-log') AS kept_versions FROM skade.load_table('uf', 't');

-- every error identical on both paths.  A well-formed requirement that fails is
-- raised by the C path itself (handled empty: the loser of a race holds the row
-- lock only that long), and so are a malformed requirement and an update the
-- engine refuses (handled empty), also where the engine reads a value by a
-- cast (an id in a string, one beyond integer)
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 14}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-ref-snapshot-id", "ref": "main"}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-ref-snapshot-id", "ref": "gone", "snapshot-id": 14}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-current-schema-id", "current-schema-id": 1}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-last-assigned-field-id", "last-assigned-field-id": 9}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "Assert-Last-Assigned-Partition-Id", "last-assigned-partition-id": 1000}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-default-spec-id", "default-spec-id": 1}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-default-sort-order-id", "default-sort-order-id": -1}]', '[]');
-- in the engine's order: the first failing one is named; a malformed one anywhere
-- is reported before any fails; values the engine reads as text or casts are its own
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 15},
    {"type": "assert-current-schema-id", "current-schema-id": 3}, {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 1}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 1},
    {"type": "assert-default-spec-id", "default-spec-id": "x"}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": "14"}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-current-schema-id", "current-schema-id": 4294967296}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-table-uuid", "uuid": "ÄÖ"}]', '[]');
-- read as the engine's casts read them, in the C path too (handled t or
-- empty): an id in a string, ten digits beyond integer (the cast's 22003,
-- after a requirement that failed first), a snapshot id beyond bigint;
-- types and actions outside ASCII through lower()
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-current-schema-id", "current-schema-id": "0"},
    {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": "0015"}, {"type": "assert-ref-snapshot-id", "ref": "nope", "snapshot-id": "-0"}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-current-schema-id", "current-schema-id": "00"},
    {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": "15"}]', '[{"action": "set-properties", "updates": {}}]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-default-spec-id", "default-spec-id": "-0000000001"}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-default-spec-id", "default-spec-id": 9999999999}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-default-spec-id", "default-spec-id": 7},
    {"type": "assert-default-sort-order-id", "default-sort-order-id": "-2147483649"}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 99999999999999999999}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": "-9223372036854775808"}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-table-uuid", "uuid": "Ä"}, {"type": "assert-créate"}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "ASSERT-TABLE-UUID", "uuid": "ÄÖ"}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "set-propertiés", "updates": {}}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "Assign-UUID", "uuid": "ÄÖ"}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "set-snapshot-ref", "ref-name": "b3", "snapshot-id": 11, "type": "BRÄNCH"}]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-default-spec-id"}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-create"}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[{"type": "assert-nothing"}]', '[]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 15, "parent-snapshot-id": 15, "sequence-number": 9,
     "timestamp-ms": 1700000005000, "manifest-list": "/m/x.avro", "summary": {"operation": "append"}}}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 16, "parent-snapshot-id": 15, "sequence-number": 5,
     "timestamp-ms": 1700000005000, "manifest-list": "/m/x.avro", "summary": {"operation": "append"}}}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 16, "parent-snapshot-id": 15, "sequence-number": 6,
     "timestamp-ms": 4102444800000, "manifest-list": "/m/x.avro", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 16, "type": "branch"}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 16, "sequence-number": 6,
     "timestamp-ms": 1700000005000, "summary": {"operation": "append"}}}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 16, "timestamp-ms": 1700000005000,
     "manifest-list": "/m/x.avro", "summary": {"operation": "append"}}}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 99, "type": "branch"}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 11, "type": "tag"}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "set-snapshot-ref", "ref-name": "t2", "snapshot-id": 11, "type": "tag", "min-snapshots-to-keep": 1}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "set-snapshot-ref", "ref-name": "b2", "snapshot-id": 11, "type": "branch", "max-ref-age-ms": -5}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "set-snapshot-ref", "ref-name": "b2", "snapshot-id": 11, "type": "leaf"}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "set-properties", "updates": {"n": 1}}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "remove-properties", "removals": "a"}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "set-properties", "updates": {"write.metadata.previous-versions-max": "many"}}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "add-encryption-key"}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "drop-everything"}]');

-- bases the fast path splices as they are: pretty-printed (with escapes
-- in strings), compact from Java, compact from pyiceberg
SELECT lo_from_bytea(0, convert_to(jsonb_pretty((metadata::jsonb) || '{"location": "/tmp/skade_regress/wh/uf/pp"}'
	|| jsonb_build_object('properties', (metadata::jsonb)->'properties' || '{"esc": "a \"quoted\" {[brace]} \\\" \\\\"}')), 'UTF8')) AS lo
FROM skade.load_table('uf', 't') \gset
SELECT lo_export(:lo, '/tmp/skade_regress/wh/uf/t/metadata/00099-0f0e0d0c-0b0a-0908-0706-050403020100.metadata.json') AS exported,
	lo_unlink(:lo) AS unlinked;
SELECT skade.register_table('uf', 'pp', '/tmp/skade_regress/wh/uf/t/metadata/00099-0f0e0d0c-0b0a-0908-0706-050403020100.metadata.json') > 0 AS registered;
SELECT * FROM pg_temp.same('uf', 'pp', '[{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 15}]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 19, "parent-snapshot-id": 15, "sequence-number": 6, "timestamp-ms": 1700000009000,
     "manifest-list": "/m/snap-19.avro", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 19, "type": "branch"},
    {"action": "set-properties", "updates": {"more": "x"}}]');
SELECT skade.register_table('uf', 'jv',
	'/tmp/skade-fixtures/java/fixtures/events/metadata/00004-c91ef392-1928-4306-bd9c-e5269c849709.metadata.json') > 0 AS registered;
SELECT * FROM pg_temp.same('uf', 'jv', '[{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 2389535939939507238}]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 31, "parent-snapshot-id": 2389535939939507238, "sequence-number": 4, "timestamp-ms": 1700000000000,
     "manifest-list": "/m/snap-31.avro", "summary": {"operation": "append"}, "schema-id": 1}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 31, "type": "branch"}]');
SELECT * FROM pg_temp.same('uf', 'jv', '[]', '[{"action": "set-snapshot-ref", "ref-name": "old", "snapshot-id": 2389535939939507238, "type": "tag"}]');
SELECT skade.register_table('uf', 'py',
	'file:///tmp/skade-fixture-py/fixtures/events/metadata/00005-a77c57c8-afa0-4139-a90d-8815af754260.metadata.json') > 0 AS registered;
SELECT (metadata::jsonb)->'current-snapshot-id' AS py_current, (metadata::jsonb)->'last-sequence-number' AS py_seq FROM skade.load_table('uf', 'py') \gset
SELECT * FROM pg_temp.same('uf', 'py', format('[{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": %s}]', :'py_current')::jsonb,
  format('[{"action": "add-snapshot", "snapshot": {"snapshot-id": 41, "parent-snapshot-id": %s, "sequence-number": %s, "timestamp-ms": 1700000000000,
     "manifest-list": "/m/snap-41.avro", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 41, "type": "branch"},
    {"action": "remove-properties", "removals": ["nothing"]}]', :'py_current', :'py_seq'::bigint + 1)::jsonb);
-- main moved twice in one commit (the log of the first move trimmed); the
-- format-version property is an upgrade the C path makes
SELECT * FROM pg_temp.same('uf', 't', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 16, "parent-snapshot-id": 15, "sequence-number": 6, "timestamp-ms": 1700000006000,
     "manifest-list": "/m/snap-16.avro", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 16, "type": "branch"},
    {"action": "add-snapshot", "snapshot": {"snapshot-id": 17, "parent-snapshot-id": 16, "sequence-number": 7, "timestamp-ms": 1700000007000,
     "manifest-list": "/m/snap-17.avro", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 17, "type": "branch"}]');
SELECT * FROM pg_temp.same('uf', 't', '[]', '[{"action": "set-properties", "updates": {"format-version": "3"}}]');
SELECT * FROM pg_temp.same('uf', 't', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 18, "parent-snapshot-id": 17, "sequence-number": 8, "timestamp-ms": 1700000008000,
     "manifest-list": "/m/snap-18.avro", "summary": {"operation": "append"}, "first-row-id": 0, "added-rows": 5}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 18, "type": "branch"}]');
-- v3 row lineage on the C path as in the engine: first-row-id behind the
-- table's next-row-id (40001) and a snapshot without added-rows (22023) are the
-- engine's errors; a good one moves next-row-id by added-rows
SELECT * FROM pg_temp.same('uf', 't', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 19, "parent-snapshot-id": 18, "sequence-number": 9, "timestamp-ms": 1700000009000,
     "manifest-list": "/m/snap-19.avro", "summary": {"operation": "append"}, "first-row-id": 2, "added-rows": 1}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 19, "type": "branch"}]');
SELECT * FROM pg_temp.same('uf', 't', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 19, "parent-snapshot-id": 18, "sequence-number": 9, "timestamp-ms": 1700000009000,
     "manifest-list": "/m/snap-19.avro", "summary": {"operation": "append"}, "first-row-id": 5}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 19, "type": "branch"}]');
SELECT * FROM pg_temp.same('uf', 't', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 19, "parent-snapshot-id": 18, "sequence-number": 9, "timestamp-ms": 1700000009000,
     "manifest-list": "/m/snap-19.avro", "summary": {"operation": "append"}, "first-row-id": 7, "added-rows": 3}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 19, "type": "branch"}]');
SELECT (metadata::jsonb)->'next-row-id' AS next_row_id FROM skade.load_table('uf', 't');
SELECT skade.create_table('uf', 'v1', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}', format_version => 1) IS NOT NULL AS created;
SELECT * FROM pg_temp.same('uf', 'v1', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 21, "timestamp-ms": 1700000000000, "manifest-list": "/m/snap-21.avro", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 21, "type": "branch"}]');

-- the pretty-printed base kept its layout where the commit did not change it
SELECT position(E'\n  ' IN metadata::text) > 0 AS still_pretty, (metadata::jsonb)->'properties'->>'esc' AS esc FROM skade.load_table('uf', 'pp');
-- the commits are logged and resolvable as before
SELECT op, source, snapshot_id FROM skade.commit_log WHERE table_namespace = 'uf' AND table_name = 'jv' ORDER BY seq;
SELECT snapshot_id, name FROM skade.resolve_many(ARRAY[31, 41]) ORDER BY 1;

-- the action families the C path took over from the engine: statistics,
-- set-location, remove-snapshot-ref, and the no-change forms of assign-uuid,
-- upgrade-format-version, set-current-schema, set-default-spec and
-- set-default-sort-order; their errors stay the engine's
SELECT skade.create_table('uf', 'st', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}') IS NOT NULL AS created;
SELECT (metadata::jsonb)->>'table-uuid' AS st_uuid FROM skade.load_table('uf', 'st') \gset
SELECT * FROM pg_temp.same('uf', 'st', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 51, "sequence-number": 1, "timestamp-ms": 1700000000000,
     "manifest-list": "/m/snap-51.avro", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 51, "type": "branch"},
    {"action": "set-snapshot-ref", "ref-name": "tg", "snapshot-id": 51, "type": "tag"},
    {"action": "set-statistics", "statistics": {"snapshot-id": 51, "statistics-path": "/m/51.stats", "file-size-in-bytes": 10,
     "file-footer-size-in-bytes": 2, "blob-metadata": [{"type": "apache-datasketches-theta-v1", "snapshot-id": 51, "sequence-number": 1, "fields": [1]}]}},
    {"action": "set-partition-statistics", "partition-statistics": {"snapshot-id": 51, "statistics-path": "/m/51.pstats", "file-size-in-bytes": 7}}]');
SELECT * FROM pg_temp.same('uf', 'st', '[]',
  '[{"action": "set-statistics", "statistics": {"snapshot-id": 52, "statistics-path": "/m/52.stats", "file-size-in-bytes": 11, "x": null}},
    {"action": "set-statistics", "statistics": {"snapshot-id": 51.0, "statistics-path": "/m/51b.stats", "file-size-in-bytes": 12}},
    {"action": "remove-partition-statistics", "snapshot-id": 51}]');
SELECT (metadata::jsonb)->'statistics' AS statistics, (metadata::jsonb)->'partition-statistics' AS partition_statistics
  FROM skade.load_table('uf', 'st');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "remove-statistics", "snapshot-id": 99}, {"action": "remove-partition-statistics", "snapshot-id": 51}]');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "remove-statistics", "snapshot-id": 52}]');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "remove-statistics", "snapshot-id": "51"}]');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "set-statistics", "statistics": {"snapshot-id": 51, "file-size-in-bytes": 1}}]');
-- set-location: trailing slashes go, the next file is under the new location
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "set-location", "location": "/tmp/skade_regress/wh/uf/st2//"}]');
SELECT (metadata::jsonb)->>'location' AS location FROM skade.load_table('uf', 'st');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "set-location", "location": "/tmp/skade_regress/wh/uf/st2"}]');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "set-location", "location": 5}]');
-- remove-snapshot-ref: a tag; an absent ref (no change); main (no current snapshot),
-- then main again; main removed and set in one commit
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "remove-snapshot-ref", "ref-name": "tg"}]');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "remove-snapshot-ref", "ref-name": "nope"}]');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "remove-snapshot-ref", "ref-name": "main"}, {"action": "set-properties", "updates": {"k": "v"}}]');
SELECT (metadata::jsonb)->'current-snapshot-id' AS current, (metadata::jsonb)->'refs' AS refs FROM skade.load_table('uf', 'st');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 51, "type": "branch"}]');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "remove-snapshot-ref", "ref-name": "main"},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 51, "type": "branch"}]');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "remove-snapshot-ref", "ref-name": 1}]');
-- the no-change forms (no file), and what the engine refuses
SELECT * FROM pg_temp.same('uf', 'st', '[]', format('[{"action": "assign-uuid", "uuid": "%s"}, {"action": "upgrade-format-version", "format-version": 2},
    {"action": "set-current-schema", "schema-id": 0}, {"action": "set-default-spec", "spec-id": 0},
    {"action": "set-default-sort-order", "sort-order-id": 0}]', upper(:'st_uuid'))::jsonb);
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "assign-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}]');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "upgrade-format-version", "format-version": 1}]');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "set-current-schema", "schema-id": -1}]');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "set-default-spec", "spec-id": 0.0}]');
-- v3: main removed leaves current-snapshot-id null
SELECT skade.create_table('uf', 'st3', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}', format_version => 3) IS NOT NULL AS created;
SELECT * FROM pg_temp.same('uf', 'st3', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 61, "sequence-number": 1, "timestamp-ms": 1700000000000,
     "manifest-list": "/m/snap-61.avro", "summary": {"operation": "append"}, "first-row-id": 0, "added-rows": 2}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 61, "type": "branch"}]');
SELECT * FROM pg_temp.same('uf', 'st3', '[]', '[{"action": "remove-snapshot-ref", "ref-name": "main"}]');
SELECT (metadata::jsonb)->'current-snapshot-id' AS current FROM skade.load_table('uf', 'st3');

-- remove-snapshots: refs and statistics files of removed snapshots go, the
-- snapshot log restarts after a removed entry, the current snapshot may go
SELECT skade.create_table('uf', 'rs', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}') IS NOT NULL AS created;
SELECT * FROM pg_temp.same('uf', 'rs', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 71, "sequence-number": 1, "timestamp-ms": 1700000000000,
     "manifest-list": "/m/snap-71.avro", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 71, "type": "branch"},
    {"action": "set-snapshot-ref", "ref-name": "t71", "snapshot-id": 71, "type": "tag"},
    {"action": "set-statistics", "statistics": {"snapshot-id": 71, "statistics-path": "/m/71.stats", "file-size-in-bytes": 1}}]');
SELECT * FROM pg_temp.same('uf', 'rs', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 72, "parent-snapshot-id": 71, "sequence-number": 2, "timestamp-ms": 1700000001000,
     "manifest-list": "/m/snap-72.avro", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 72, "type": "branch"},
    {"action": "set-snapshot-ref", "ref-name": "b72", "snapshot-id": 72, "type": "branch"},
    {"action": "set-statistics", "statistics": {"snapshot-id": 72, "statistics-path": "/m/72.stats", "file-size-in-bytes": 1}}]');
SELECT * FROM pg_temp.same('uf', 'rs', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 73, "parent-snapshot-id": 72, "sequence-number": 3, "timestamp-ms": 1700000002000,
     "manifest-list": "/m/snap-73.avro", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 73, "type": "branch"},
    {"action": "set-partition-statistics", "partition-statistics": {"snapshot-id": 73, "statistics-path": "/m/73.pstats", "file-size-in-bytes": 1}}]');
SELECT * FROM pg_temp.same('uf', 'rs', '[]', '[{"action": "remove-snapshots", "snapshot-ids": [72, "73", 99]}]');
SELECT jsonb_path_query_array((metadata::jsonb)->'snapshots', '$[*]."snapshot-id"') AS snapshots,
	   jsonb_path_query_array((metadata::jsonb)->'snapshot-log', '$[*]."snapshot-id"') AS log,
	   (SELECT jsonb_agg(k ORDER BY k) FROM jsonb_object_keys((metadata::jsonb)->'refs') k) AS refs,
	   jsonb_path_query_array((metadata::jsonb)->'statistics', '$[*]."snapshot-id"') AS stats
  FROM skade.load_table('uf', 'rs');
SELECT * FROM pg_temp.same('uf', 'rs', '[]', '[{"action": "remove-snapshots", "snapshot-ids": []}, {"action": "remove-snapshots", "snapshot-ids": [5]}]');
SELECT * FROM pg_temp.same('uf', 'rs', '[]', '[{"action": "remove-snapshots", "snapshot-ids": [71.0]}, {"action": "set-snapshot-ref", "ref-name": "t2", "snapshot-id": 73, "type": "tag"}]');
SELECT * FROM pg_temp.same('uf', 'rs', '[]', '[{"action": "remove-snapshots", "snapshot-ids": [73]}, {"action": "set-snapshot-ref", "ref-name": "t3", "snapshot-id": 73, "type": "tag"}]');
SELECT * FROM pg_temp.same('uf', 'rs', '[]', '[{"action": "remove-snapshots", "snapshot-ids": 73}]');
SELECT * FROM pg_temp.same('uf', 'rs', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 74, "parent-snapshot-id": 73, "sequence-number": 4, "timestamp-ms": 1700000003000,
     "manifest-list": "/m/snap-74.avro", "summary": {"operation": "append"}}},
    {"action": "remove-snapshots", "snapshot-ids": [73]}]');
SELECT * FROM pg_temp.same('uf', 'rs', '[]', '[{"action": "remove-snapshots", "snapshot-ids": [73]}]');
SELECT (metadata::jsonb)->'current-snapshot-id' AS current, (metadata::jsonb)->'refs' AS refs,
	   (metadata::jsonb)->'snapshot-log' AS log, (metadata::jsonb)->'partition-statistics' AS pstats
  FROM skade.load_table('uf', 'rs');
SELECT * FROM pg_temp.same('uf', 'st3', '[]', '[{"action": "remove-snapshots", "snapshot-ids": [61]}]');
SELECT (metadata::jsonb)->'current-snapshot-id' AS current, (metadata::jsonb)->'snapshots' AS snapshots FROM skade.load_table('uf', 'st3');

-- remove-partition-specs / remove-schemas: what the engine added, removed in C; the
-- default spec and current schema are refused; an id that is not there is still a change
SELECT * FROM pg_temp.same('uf', 'st', '[]',
  '[{"action": "add-schema", "schema": {"type": "struct", "schema-id": 1, "fields": [{"id": 1, "name": "id", "required": true, "type": "long"},
     {"id": 2, "name": "ts", "required": false, "type": "timestamptz"}]}, "last-column-id": 2},
    {"action": "add-spec", "spec": {"spec-id": 1, "fields": [{"source-id": 1, "field-id": 1000, "name": "id_bucket", "transform": "bucket[4]"}]}}]');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "remove-partition-specs", "spec-ids": [1, "0", 7]}, {"action": "remove-schemas", "schema-ids": [1]}]');
SELECT (metadata::jsonb)->'partition-specs' AS specs, jsonb_path_query_array((metadata::jsonb)->'schemas', '$[*]."schema-id"') AS schemas
  FROM skade.load_table('uf', 'st');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "remove-partition-specs", "spec-ids": [9]}]');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "remove-partition-specs", "spec-ids": []}, {"action": "remove-schemas", "schema-ids": []}]');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "remove-partition-specs", "spec-ids": [0.0]}]');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "remove-schemas", "schema-ids": [0]}]');
SELECT * FROM pg_temp.same('uf', 'st', '[]', '[{"action": "remove-schemas", "schema-ids": {"a": 1}}]');

-- upgrade to v3 (upgrade-format-version, or set-properties format-version as Java's
-- client sends it): next-row-id 0, and an append in the same commit needs row lineage
SELECT skade.create_table('uf', 'up', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}') IS NOT NULL AS created;
SELECT * FROM pg_temp.same('uf', 'up', '[]',
  '[{"action": "upgrade-format-version", "format-version": 3},
    {"action": "add-snapshot", "snapshot": {"snapshot-id": 81, "sequence-number": 1, "timestamp-ms": 1700000000000,
     "manifest-list": "/m/snap-81.avro", "summary": {"operation": "append"}}}]');
SELECT * FROM pg_temp.same('uf', 'up', '[]',
  '[{"action": "upgrade-format-version", "format-version": 3},
    {"action": "add-snapshot", "snapshot": {"snapshot-id": 81, "sequence-number": 1, "timestamp-ms": 1700000000000,
     "manifest-list": "/m/snap-81.avro", "summary": {"operation": "append"}, "first-row-id": 0, "added-rows": 4}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 81, "type": "branch"}]');
SELECT (metadata::jsonb)->'format-version' AS fv, (metadata::jsonb)->'next-row-id' AS next_row_id FROM skade.load_table('uf', 'up');
SELECT * FROM pg_temp.same('uf', 'up', '[]', '[{"action": "upgrade-format-version", "format-version": 4}]');
SELECT skade.create_table('uf', 'up2', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}') IS NOT NULL AS created;
SELECT * FROM pg_temp.same('uf', 'up2', '[]', '[{"action": "set-properties", "updates": {"format-version": "02", "a": "b"}}]');
SELECT * FROM pg_temp.same('uf', 'up2', '[]', '[{"action": "set-properties", "updates": {"format-version": "1"}}]');
SELECT * FROM pg_temp.same('uf', 'up2', '[]', '[{"action": "set-properties", "updates": {"format-version": "three"}}]');
SELECT * FROM pg_temp.same('uf', 'up2', '[]', '[{"action": "set-properties", "updates": {"format-version": "3", "c": "d"}}]');
SELECT (metadata::jsonb)->'format-version' AS fv, (metadata::jsonb)->'next-row-id' AS next_row_id,
	   (metadata::jsonb)->'properties' AS props FROM skade.load_table('uf', 'up2');

-- set-current-schema, set-default-spec, set-default-sort-order changing them: the
-- defaults must exist and bind to the current schema (the engine's end checks, in C)
SELECT skade.create_table('uf', 'bd', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"},
  {"id": 2, "name": "ts", "required": false, "type": "timestamptz"}, {"id": 3, "name": "s", "required": false,
   "type": {"type": "struct", "fields": [{"id": 4, "name": "g", "required": false, "type": "string"}]}}]}') IS NOT NULL AS created;
SELECT * FROM pg_temp.same('uf', 'bd', '[]',
  '[{"action": "add-spec", "spec": {"spec-id": 1, "fields": [{"source-id": 2, "field-id": 1000, "name": "ts_day", "transform": "day"},
      {"source-id": 4, "field-id": 1001, "name": "g_b", "transform": "bucket[8]"}]}},
    {"action": "add-sort-order", "sort-order": {"order-id": 1, "fields": [{"source-id": 2, "transform": "hour", "direction": "asc", "null-order": "nulls-first"}]}},
    {"action": "add-schema", "schema": {"type": "struct", "schema-id": 1, "fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "set-default-spec", "spec-id": 1}, {"action": "set-default-sort-order", "sort-order-id": 1}]');
SELECT (metadata::jsonb)->'default-spec-id' AS spec, (metadata::jsonb)->'default-sort-order-id' AS sort_order FROM skade.load_table('uf', 'bd');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "set-current-schema", "schema-id": 1}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "set-default-spec", "spec-id": 9}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "set-default-sort-order", "sort-order-id": 5}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "set-current-schema", "schema-id": 7}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "set-current-schema", "schema-id": 1}, {"action": "set-default-spec", "spec-id": 0},
    {"action": "set-default-sort-order", "sort-order-id": 0}]');
SELECT (metadata::jsonb)->'current-schema-id' AS schema, s.name, s.type FROM skade.load_table('uf', 'bd'),
	LATERAL jsonb_to_recordset((SELECT x->'fields' FROM jsonb_array_elements((metadata::jsonb)->'schemas') x
								WHERE x->'schema-id' = (metadata::jsonb)->'current-schema-id')) s(name text, type text);
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "set-current-schema", "schema-id": 0}, {"action": "set-default-spec", "spec-id": 1},
    {"action": "remove-schemas", "schema-ids": [1]}]');

-- a staged snapshot from the future is accepted (only the snapshot log may not run ahead)
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 91, "sequence-number": 1,
     "timestamp-ms": 4102444800000, "manifest-list": "/m/snap-91.avro", "summary": {"operation": "append"}}}]');

-- add-sort-order: an equal order is reused (no change), a new one is max id + 1, the
-- last added one (-1) as Java's Builder keeps it; the engine's refusals
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-sort-order", "sort-order": {"order-id": 1, "fields": [{"source-id": 2,
     "transform": "hour", "direction": "asc", "null-order": "nulls-first"}]}}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-sort-order", "sort-order": {"order-id": 7, "fields": [{"source-id": 1,
     "transform": "identity", "direction": "desc", "null-order": "nulls-last"}]}}, {"action": "set-default-sort-order", "sort-order-id": -1}]');
SELECT (metadata::jsonb)->'default-sort-order-id' AS sort_order, jsonb_path_query_array((metadata::jsonb)->'sort-orders', '$[*]."order-id"') AS ids
  FROM skade.load_table('uf', 'bd');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-sort-order", "sort-order": {"order-id": 7, "fields": [{"source-id": 1,
     "transform": "identity", "direction": "desc", "null-order": "nulls-last"}]}}, {"action": "set-default-sort-order", "sort-order-id": -1}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-sort-order", "sort-order": {"order-id": 3, "fields": [{"source-id": 4,
     "transform": "truncate[3]", "direction": "asc", "null-order": "nulls-last"}]}},
    {"action": "add-sort-order", "sort-order": {"order-id": 2, "fields": [{"source-id": 1, "transform": "identity", "direction": "desc", "null-order": "nulls-last"}]}},
    {"action": "set-default-sort-order", "sort-order-id": -1}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}}, {"action": "set-default-sort-order", "sort-order-id": -1}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": [{"source-id": 1,
     "transform": "identity", "direction": "asc", "null-order": "nulls-last"}]}}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-sort-order", "sort-order": {"order-id": 5, "fields": [{"source-id": 1,
     "transform": "identity", "direction": "up", "null-order": "nulls-last"}]}}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-sort-order", "sort-order": {"order-id": 5, "fields": [{"source-id": 2,
     "transform": "truncate[2]", "direction": "asc", "null-order": "nulls-last"}]}}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-sort-order", "sort-order": {"order-id": 5, "fields": [{"source-id": 1,
     "transform": "identity", "null-order": "nulls-last"}]}}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-sort-order", "sort-order": {"order-id": "5", "fields": [{"source-id": 1,
     "transform": "bucket[2]", "direction": "asc", "null-order": "nulls-last"}]}}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-sort-order", "sort-order": [1]}]');

-- add-spec: field ids as sent or after last-partition-id, an equal spec reused, the
-- last added spec (-1); the engine's refusals
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-spec", "spec": {"spec-id": 1, "fields": [{"source-id": 2, "field-id": 1000,
     "name": "ts_day", "transform": "day"}, {"source-id": 4, "field-id": 1001, "name": "g_b", "transform": "bucket[8]"}]}}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-spec", "spec": {"spec-id": 5, "fields": [{"source-id": 1,
     "name": "id_t", "transform": "truncate[10]"}, {"source-id": 2, "name": "ts_hour", "transform": "hour", "field-id": 1007}]}},
    {"action": "set-default-spec", "spec-id": -1}]');
SELECT (metadata::jsonb)->'default-spec-id' AS spec, (metadata::jsonb)->'last-partition-id' AS last_id,
	   (metadata::jsonb)->'partition-specs'->-1 AS added FROM skade.load_table('uf', 'bd');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-spec", "spec": {"fields": [{"source-id": 3, "name": "s_v", "transform": "void"}]}},
    {"action": "add-spec", "spec": {"spec-id": 1, "fields": [{"source-id": 2, "name": "ts_day", "transform": "day"},
      {"source-id": 4, "name": "g_b", "transform": "bucket[8]"}]}}, {"action": "set-default-spec", "spec-id": -1}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-spec", "spec": {"fields": [{"source-id": 2, "name": "id", "transform": "day"}]}}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-spec", "spec": {"fields": [{"source-id": 1, "name": "id", "transform": "identity"},
    {"source-id": 2, "name": "x", "transform": "day"}, {"source-id": 2, "name": "x", "transform": "month"}]}}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-spec", "spec": {"fields": [{"source-id": 3, "name": "s_d", "transform": "day"}]}}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-spec", "spec": {"fields": [{"source-id": 9, "name": "n", "transform": "identity"}]}}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-spec", "spec": {"fields": [{"source-id": 1, "name": "", "transform": "identity"}]}}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-spec", "spec": {"fields": {"source-id": 1}}}]');
SELECT * FROM pg_temp.same('uf', 'bd', '[]', '[{"action": "add-spec", "spec": {"fields": [{"source-id": 1.5, "name": "v", "transform": "void"}]}}]');

-- add-schema: an identical schema reused, a new one max id + 1 with last-column-id
-- raised, the last added schema (-1), made current; the engine's refusals
SELECT skade.create_table('uf', 'sc', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}') IS NOT NULL AS created;
SELECT * FROM pg_temp.same('uf', 'sc', '[]', '[{"action": "add-schema", "schema": {"type": "struct", "schema-id": 4, "fields": [{"id": 1,
     "name": "id", "required": true, "type": "long"}]}}]');
SELECT * FROM pg_temp.same('uf', 'sc', '[]', '[{"action": "add-schema", "schema": {"type": "struct", "schema-id": 4, "identifier-field-ids": [1],
     "fields": [{"id": 1, "name": "id", "required": true, "type": "long"}, {"id": 2, "name": "tags", "required": false,
     "type": {"type": "list", "element-id": 3, "element": "string", "element-required": false}},
     {"id": 4, "name": "attrs", "required": false, "type": {"type": "map", "key-id": 5, "key": "string", "value-id": 6,
      "value": {"type": "struct", "fields": [{"id": 7, "name": "d", "required": false, "type": "decimal(9, 2)"}]}, "value-required": true}},
     {"id": 8, "name": "f", "required": false, "type": "fixed[16]"}]}},
    {"action": "set-current-schema", "schema-id": -1}]');
SELECT (metadata::jsonb)->'current-schema-id' AS current, (metadata::jsonb)->'last-column-id' AS last_column,
	   jsonb_path_query_array((metadata::jsonb)->'schemas', '$[*]."schema-id"') AS ids FROM skade.load_table('uf', 'sc');
SELECT * FROM pg_temp.same('uf', 'sc', '[]', '[{"action": "add-schema", "schema": {"type": "struct", "fields": [{"id": 1, "name": "id",
     "required": true, "type": "long"}]}}, {"action": "set-current-schema", "schema-id": -1}]');
SELECT * FROM pg_temp.same('uf', 'sc', '[]', '[{"action": "add-schema", "schema": {"type": "struct", "fields": [{"id": 1, "name": "id",
     "required": true, "type": "long"}, {"id": 12, "name": "n", "required": false, "type": "int"}]}},
    {"action": "add-schema", "schema": {"type": "struct", "fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}},
    {"action": "set-current-schema", "schema-id": -1}]');
SELECT * FROM pg_temp.same('uf', 'sc', '[]', '[{"action": "add-schema", "schema": {"fields": [{"id": 1, "name": "id", "required": true, "type": "long"},
     {"id": 20, "name": "t", "required": false, "type": "timestamp_ns"}]}}]');
SELECT * FROM pg_temp.same('uf', 'sc', '[]', '[{"action": "add-schema", "schema": {"fields": [{"id": 1, "name": "id", "required": true, "type": "decimal(9,x)"}]}}]');
SELECT * FROM pg_temp.same('uf', 'sc', '[]', '[{"action": "add-schema", "schema": {"fields": [{"id": 1, "name": "id", "required": "yes", "type": "long"}]}}]');
SELECT * FROM pg_temp.same('uf', 'sc', '[]', '[{"action": "add-schema", "schema": {"fields": [{"id": 1, "name": "l", "required": true,
     "type": {"type": "list", "element": "int"}}]}}]');
SELECT * FROM pg_temp.same('uf', 'sc', '[]', '[{"action": "add-schema", "schema": {"fields": [{"id": 1, "name": "m", "required": true,
     "type": {"type": "map", "key": "int", "value-required": true}}]}}]');
SELECT * FROM pg_temp.same('uf', 'sc', '[]', '[{"action": "add-schema", "schema": {"fields": [{"id": 1, "name": "s", "required": true,
     "type": {"type": "struct", "fields": [{"id": 2, "name": "x", "required": true, "type": {"type": "tuple"}}]}}]}}]');
SELECT * FROM pg_temp.same('uf', 'sc', '[]', '[{"action": "add-schema", "schema": {"fields": [{"id": 1, "name": "s", "required": true, "type": [1]}]}}]');
SELECT * FROM pg_temp.same('uf', 'sc', '[]', '[{"action": "add-schema", "schema": {"fields": {"id": 1}}}]');
SELECT * FROM pg_temp.same('uf', 'sc', '[]', '[{"action": "add-schema", "schema": "struct"}]');
SELECT * FROM pg_temp.same('uf', 'sc', '[]', '[{"action": "add-schema", "schema": {"fields": [{"id": "1", "name": "id", "required": true, "type": "long"}]}}]');
SELECT * FROM pg_temp.same('uf', 'sc', '[]', '[{"action": "add-schema", "schema": {"fields": [{"id": 30, "name": "g", "required": false,
     "type": "geometry(srid:4326)"}]}, "last-column-id": 30}, {"action": "upgrade-format-version", "format-version": 3}]');

-- a commit that replaces every member the C path replaces, as a replace transaction does
SELECT skade.create_table('uf', 'rx', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}') IS NOT NULL AS created;
SELECT * FROM pg_temp.same('uf', 'rx', '[]', '[{"action": "upgrade-format-version", "format-version": 3},
    {"action": "add-schema", "schema": {"type": "struct", "fields": [{"id": 1, "name": "id", "required": true, "type": "long"},
      {"id": 2, "name": "ts", "required": false, "type": "timestamptz"}]}}, {"action": "set-current-schema", "schema-id": -1},
    {"action": "add-spec", "spec": {"fields": [{"source-id": 2, "name": "ts_day", "transform": "day"}]}}, {"action": "set-default-spec", "spec-id": -1},
    {"action": "add-sort-order", "sort-order": {"order-id": 1, "fields": [{"source-id": 1, "transform": "identity", "direction": "asc", "null-order": "nulls-first"}]}},
    {"action": "set-default-sort-order", "sort-order-id": -1}, {"action": "set-location", "location": "/tmp/skade_regress/wh/uf/rx2"},
    {"action": "set-statistics", "statistics": {"snapshot-id": 1, "statistics-path": "/m/1.stats", "file-size-in-bytes": 1}},
    {"action": "set-partition-statistics", "partition-statistics": {"snapshot-id": 1, "statistics-path": "/m/1.pstats", "file-size-in-bytes": 1}},
    {"action": "set-properties", "updates": {"k": "v"}}]');

-- several appends and moves of main in one commit (a Java transaction of two
-- appends): the first move's log entry goes (Java's intermediate snapshots);
-- main moved away from an added snapshot and back; main set then removed
SELECT skade.create_table('uf', 'mm', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}') IS NOT NULL AS created;
SELECT * FROM pg_temp.same('uf', 'mm', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 51, "sequence-number": 1, "timestamp-ms": 1700000001000,
     "manifest-list": "/m/snap-51.avro", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 51, "type": "branch"},
    {"action": "add-snapshot", "snapshot": {"snapshot-id": 52, "parent-snapshot-id": 51, "sequence-number": 2, "timestamp-ms": 1700000002000,
     "manifest-list": "/m/snap-52.avro", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 52, "type": "branch"}]');
SELECT jsonb_path_query_array((metadata::jsonb)->'snapshot-log', '$[*]."snapshot-id"') AS log FROM skade.load_table('uf', 'mm');
SELECT * FROM pg_temp.same('uf', 'mm', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 53, "parent-snapshot-id": 52, "sequence-number": 3, "timestamp-ms": 1700000003000,
     "manifest-list": "/m/snap-53.avro", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 53, "type": "branch"},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 51, "type": "branch"},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 53, "type": "branch"}]');
SELECT * FROM pg_temp.same('uf', 'mm', '[]',
  '[{"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 52, "type": "branch"}, {"action": "remove-snapshot-ref", "ref-name": "main"}]');
-- a snapshot without a sequence number (0) or not past the table's without a
-- parent: the table's number follows it, and the end check refuses a snapshot
-- now past it
SELECT * FROM pg_temp.same('uf', 'mm', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 54, "timestamp-ms": 1700000004000,
     "manifest-list": "/m/snap-54.avro", "summary": {"operation": "append"}}}]');
SELECT * FROM pg_temp.same('uf', 'mm', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 54, "sequence-number": 3, "timestamp-ms": 1700000004000,
     "manifest-list": "/m/snap-54.avro", "summary": {"operation": "append"}}}]');
-- remove-snapshots beside appends: an added snapshot removed again (the table's
-- sequence number stays where it went), the log of this commit's moves pruned
SELECT * FROM pg_temp.same('uf', 'mm', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 55, "parent-snapshot-id": 53, "sequence-number": 4, "timestamp-ms": 1700000005000,
     "manifest-list": "/m/snap-55.avro", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 55, "type": "branch"},
    {"action": "set-snapshot-ref", "ref-name": "b", "snapshot-id": 52, "type": "branch"},
    {"action": "remove-snapshots", "snapshot-ids": [55, 51]},
    {"action": "remove-snapshots", "snapshot-ids": [52]},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 53, "type": "branch"}]');
SELECT (metadata::jsonb)->'last-sequence-number' AS seq, jsonb_path_query_array((metadata::jsonb)->'snapshots', '$[*]."snapshot-id"') AS snaps,
       (metadata::jsonb)->'refs' AS refs FROM skade.load_table('uf', 'mm');
-- a snapshot removed and added again in one commit is the table's again
SELECT * FROM pg_temp.same('uf', 'mm', '[]',
  '[{"action": "remove-snapshots", "snapshot-ids": [54]}, {"action": "add-snapshot", "snapshot": {"snapshot-id": 54, "parent-snapshot-id": 53,
     "sequence-number": 5, "timestamp-ms": 1700000006000, "manifest-list": "/m/snap-54b.avro", "summary": {"operation": "append"}}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 54, "type": "branch"}]');
-- a ref without a type: an unknown snapshot is refused as the engine refuses it
SELECT * FROM pg_temp.same('uf', 'mm', '[]', '[{"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 1}]');
-- malformed requirements and assert-create on an existing table, in C
SELECT * FROM pg_temp.same('uf', 'mm', '[{"type": "assert-create"}, {"type": "assert-create"}]', '[]');
SELECT * FROM pg_temp.same('uf', 'mm', '[1, {"type": "assert-table-uuid", "uuid": 5}]', '[]');
SELECT * FROM pg_temp.same('uf', 'mm', '[{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 1.5}]', '[]');

-- format v1: an append (no sequence number; one is refused), a schema made current
-- (repeated in "schema"), a spec whose field ids are not v1's (refused), then a
-- good one made default ("partition-spec" follows), an upgrade to v2 and an append
SELECT skade.create_table('uf', 'w1', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}', format_version => 1) IS NOT NULL AS created;
SELECT * FROM pg_temp.same('uf', 'w1', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 61, "sequence-number": 3, "timestamp-ms": 1700000001000, "manifest-list": "/m/snap-61.avro",
     "summary": {"operation": "append"}}}]');
SELECT * FROM pg_temp.same('uf', 'w1', '[]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 61, "timestamp-ms": 1700000001000, "manifest-list": "/m/snap-61.avro",
     "summary": {"operation": "append"}}}, {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 61, "type": "branch"}]');
SELECT * FROM pg_temp.same('uf', 'w1', '[]', '[{"action": "add-schema", "schema": {"type": "struct", "fields": [{"id": 1, "name": "id", "required": true, "type": "long"},
      {"id": 2, "name": "d", "required": false, "type": "date"}]}}, {"action": "set-current-schema", "schema-id": -1}]');
SELECT * FROM pg_temp.same('uf', 'w1', '[]', '[{"action": "add-spec", "spec": {"fields": [{"source-id": 2, "name": "d_day", "transform": "day", "field-id": 1005}]}}]');
SELECT * FROM pg_temp.same('uf', 'w1', '[]', '[{"action": "add-spec", "spec": {"fields": [{"source-id": 2, "name": "d_day", "transform": "day"}]}},
    {"action": "set-default-spec", "spec-id": -1}]');
SELECT (metadata::jsonb)->'schema'->'schema-id' AS v1_schema, (metadata::jsonb)->'partition-spec' AS v1_spec FROM skade.load_table('uf', 'w1');
SELECT * FROM pg_temp.same('uf', 'w1', '[]', '[{"action": "upgrade-format-version", "format-version": 2},
    {"action": "add-snapshot", "snapshot": {"snapshot-id": 62, "parent-snapshot-id": 61, "sequence-number": 1, "timestamp-ms": 1700000002000,
     "manifest-list": "/m/snap-62.avro", "summary": {"operation": "append"}}}, {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 62, "type": "branch"}]');

-- staged creates (assert-create on a table that does not exist, as a REST
-- create transaction commits them): the updates applied onto update_table's
-- empty table by the engine (rolled back) and by the C path (kept), the same
-- table (or the same error); "handled": the C path made it (commit_stats)
CREATE FUNCTION pg_temp.same_create(ns text, t text, upd_in jsonb, OUT handled boolean, OUT outcome text)
LANGUAGE plpgsql AS $$
DECLARE
	upd jsonb := pg_temp.stamp(upd_in);
	req jsonb := '[{"type": "assert-create"}]';
	slow jsonb;
	fast jsonb;
	e_slow text;
	e_fast text;
	c0 bigint;
BEGIN
	BEGIN
		PERFORM set_config('skade.update_fast_path', 'off', true);
		PERFORM skade.update_table(ns, t, req, upd);
		slow := pg_temp.state(ns, t);
		RAISE EXCEPTION 'undo' USING ERRCODE = 'P0099';
	EXCEPTION WHEN OTHERS THEN
		IF SQLSTATE <> 'P0099' THEN e_slow := pg_temp.msg(SQLSTATE, SQLERRM); END IF;
	END;
	c0 := (SELECT update_c FROM skade.commit_stats());
	BEGIN
		PERFORM skade.update_table(ns, t, req, upd);
		fast := pg_temp.state(ns, t);
		PERFORM skade.cache_reset();
		IF pg_temp.state(ns, t) IS DISTINCT FROM fast THEN
			e_fast := 'REREAD DIFFERS';
		END IF;
	EXCEPTION WHEN OTHERS THEN
		e_fast := pg_temp.msg(SQLSTATE, SQLERRM);
	END;
	handled := (SELECT update_c FROM skade.commit_stats()) > c0;
	outcome := CASE
		WHEN e_slow IS NOT NULL OR e_fast IS NOT NULL THEN
			CASE WHEN e_slow IS NOT DISTINCT FROM e_fast THEN e_slow
				 ELSE format('ERRORS DIFFER: %s / %s', e_slow, e_fast) END
		WHEN slow = fast THEN 'same: ' || (fast->>'file')
		ELSE format('DIFFER: slow %s fast %s', slow, fast) END;
END $$;
-- as Java's create transaction sends it: the empty table's uuid, format, schema,
-- spec, order, location and properties, made current with -1
SELECT * FROM pg_temp.same_create('uf', 'cr', '[{"action": "assign-uuid", "uuid": "0e2d6f7c-4a5b-4c3d-8e9f-a0b1c2d3e4f5"},
    {"action": "upgrade-format-version", "format-version": 2},
    {"action": "add-schema", "schema": {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": true, "type": "long"},
      {"id": 2, "name": "ts", "required": false, "type": "timestamptz"}]}, "last-column-id": 2},
    {"action": "set-current-schema", "schema-id": -1},
    {"action": "add-spec", "spec": {"spec-id": 0, "fields": [{"source-id": 2, "field-id": 1000, "name": "ts_day", "transform": "day"}]}},
    {"action": "set-default-spec", "spec-id": -1},
    {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
    {"action": "set-default-sort-order", "sort-order-id": -1},
    {"action": "set-location", "location": "/tmp/skade_regress/wh/uf/cr"},
    {"action": "set-properties", "updates": {"owner": "ana", "write.metadata.compression-codec": "gzip"}}]');
SELECT op, metadata_location ~ '/uf/cr/metadata/00000-[-0-9a-f]{36}[.]gz[.]metadata[.]json$' AS first_file
  FROM skade.commit_log WHERE table_namespace = 'uf' AND table_name = 'cr' ORDER BY seq;
SELECT * FROM pg_temp.same('uf', 'cr', '[]', '[{"action": "set-properties", "updates": {"next": "commit"}}]');
-- v3 with an append in the same commit; v1; a create the engine refuses, and one
-- without a current schema (the engine's)
SELECT * FROM pg_temp.same_create('uf', 'cr3', '[{"action": "assign-uuid", "uuid": "1e2d6f7c-4a5b-4c3d-8e9f-a0b1c2d3e4f5"},
    {"action": "upgrade-format-version", "format-version": 3},
    {"action": "add-schema", "schema": {"type": "struct", "fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}},
    {"action": "set-current-schema", "schema-id": -1}, {"action": "add-spec", "spec": {"fields": []}}, {"action": "set-default-spec", "spec-id": -1},
    {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}}, {"action": "set-default-sort-order", "sort-order-id": -1},
    {"action": "add-snapshot", "snapshot": {"snapshot-id": 71, "sequence-number": 1, "timestamp-ms": 1700000001000, "manifest-list": "/m/snap-71.avro",
     "summary": {"operation": "append"}, "first-row-id": 0, "added-rows": 10}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 71, "type": "branch"}]');
SELECT * FROM pg_temp.same_create('uf', 'cr1', '[{"action": "assign-uuid", "uuid": "2e2d6f7c-4a5b-4c3d-8e9f-a0b1c2d3e4f5"},
    {"action": "upgrade-format-version", "format-version": 1},
    {"action": "add-schema", "schema": {"type": "struct", "fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}},
    {"action": "set-current-schema", "schema-id": -1}, {"action": "add-spec", "spec": {"fields": [{"source-id": 1, "name": "id_b", "transform": "bucket[4]"}]}},
    {"action": "set-default-spec", "spec-id": -1}, {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
    {"action": "set-default-sort-order", "sort-order-id": -1}]');
SELECT * FROM pg_temp.same_create('uf', 'crx', '[{"action": "assign-uuid", "uuid": "3e2d6f7c-4a5b-4c3d-8e9f-a0b1c2d3e4f5"},
    {"action": "add-schema", "schema": {"type": "struct", "fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}},
    {"action": "set-current-schema", "schema-id": -1}, {"action": "add-spec", "spec": {"fields": [{"source-id": 9, "name": "x", "transform": "identity"}]}}]');
SELECT * FROM pg_temp.same_create('uf', 'crx', '[{"action": "assign-uuid", "uuid": "3e2d6f7c-4a5b-4c3d-8e9f-a0b1c2d3e4f5"},
    {"action": "add-schema", "schema": {"type": "struct", "fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}},
    {"action": "set-current-schema", "schema-id": -1}]');
SELECT * FROM pg_temp.same_create('uf', 'crx', '[{"action": "assign-uuid", "uuid": "3e2d6f7c-4a5b-4c3d-8e9f-a0b1c2d3e4f5"},
    {"action": "add-spec", "spec": {"fields": []}}, {"action": "set-default-spec", "spec-id": -1}]');

-- skade.commit_stats() counts update_table's commits by the engine that applied them
SELECT update_c AS c0, update_plpgsql AS p0 FROM skade.commit_stats() \gset
SELECT skade.update_table('uf', 'st', '[]', '[{"action": "set-properties", "updates": {"k": "v2"}}]') IS NOT NULL AS committed;
SET skade.update_fast_path = off;
SELECT skade.update_table('uf', 'st', '[]', '[{"action": "set-properties", "updates": {"k": "v3"}}]') IS NOT NULL AS committed;
RESET skade.update_fast_path;
SELECT update_c - :c0 AS by_c, update_plpgsql - :p0 AS by_plpgsql FROM skade.commit_stats();
