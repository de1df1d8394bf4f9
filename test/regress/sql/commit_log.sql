-- The commit log: every pointer change from both paths, append-only.
\pset null '(null)'
SELECT coalesce(max(seq), 0) AS start_seq FROM skade.commit_log \gset
SELECT skade.create_namespace('log');

-- SQL API
SELECT skade.register_table('log', 't', 'file:///l/t/v1.metadata.json') > 0;
SELECT skade.commit_table('log', 't', 'file:///l/t/v1.metadata.json', 'file:///l/t/v2.metadata.json') > 0;
-- plain DML, as JDBC clients send it
INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type)
  VALUES ('skade', 'log', 'j', 'file:///l/j/v1.metadata.json', null, 'TABLE');
UPDATE iceberg_tables SET metadata_location = 'file:///l/j/v2.metadata.json', previous_metadata_location = 'file:///l/j/v1.metadata.json'
  WHERE catalog_name = 'skade' AND table_namespace = 'log' AND table_name = 'j' AND metadata_location = 'file:///l/j/v1.metadata.json';
-- a CAS that matches nothing logs nothing
UPDATE iceberg_tables SET metadata_location = 'file:///l/j/v9.metadata.json', previous_metadata_location = 'file:///l/j/v1.metadata.json'
  WHERE catalog_name = 'skade' AND table_namespace = 'log' AND table_name = 'j' AND metadata_location = 'file:///l/j/v1.metadata.json';
-- an UPDATE that changes no pointer logs nothing
UPDATE iceberg_tables SET previous_metadata_location = NULL WHERE table_namespace = 'log' AND table_name = 'j';
UPDATE iceberg_tables SET table_name = 'j2' WHERE table_namespace = 'log' AND table_name = 'j';
-- a move to another catalog is a drop here and a create there
UPDATE iceberg_tables SET catalog_name = 'elsewhere' WHERE table_namespace = 'log' AND table_name = 'j2';
DELETE FROM iceberg_tables WHERE catalog_name = 'elsewhere';
-- a multi-row statement logs each row
INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location)
  VALUES ('skade', 'log', 'm1', 'file:///m1'), ('skade', 'log', 'm2', 'file:///m2');
-- TRUNCATE logs every table as dropped
BEGIN;
TRUNCATE iceberg_tables;
SELECT op, source, catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location
FROM skade.commit_log WHERE seq > :start_seq AND op = 'drop' AND table_name IN ('t', 'm1', 'm2') ORDER BY seq;
ROLLBACK;
SELECT skade.drop_table('log', 'm1') IS NOT NULL, skade.drop_table('log', 'm2') IS NOT NULL;

SELECT seq - :start_seq AS n, op, source, catalog_name, table_namespace, table_name, iceberg_type,
       metadata_location, previous_metadata_location, prev_namespace, prev_name,
       committed_by = current_user AS by_me, snapshot_id
FROM skade.commit_log WHERE seq > :start_seq ORDER BY seq;

-- seq follows commit order; times never go back
SELECT bool_and(committed_at >= lag_at) AS monotonic_time
FROM (SELECT committed_at, lag(committed_at, 1, '-infinity') OVER (ORDER BY seq) AS lag_at
      FROM skade.commit_log) s;

-- append-only, even for its owner
UPDATE skade.commit_log SET op = 'drop' WHERE seq = :start_seq + 1;
DELETE FROM skade.commit_log WHERE seq = :start_seq + 1;
TRUNCATE skade.commit_log;
SELECT count(*) > 0 AS still_there FROM skade.commit_log WHERE seq > :start_seq;

SELECT skade.drop_table('log', 't') IS NOT NULL;
SELECT skade.drop_namespace('log');
