-- Adopting an existing vanilla JDBC catalog (created by Java's default V0
-- DDL, with rows written by clients before skade was installed).
DROP EXTENSION skade CASCADE;
DROP TABLE iceberg_tables, iceberg_namespace_properties;

CREATE TABLE iceberg_tables(catalog_name VARCHAR(255) NOT NULL,table_namespace VARCHAR(255) NOT NULL,table_name VARCHAR(255) NOT NULL,metadata_location VARCHAR(1000),previous_metadata_location VARCHAR(1000),PRIMARY KEY (catalog_name, table_namespace, table_name));
CREATE TABLE iceberg_namespace_properties(catalog_name VARCHAR(255) NOT NULL,namespace VARCHAR(255) NOT NULL,property_key VARCHAR(255),property_value VARCHAR(1000),PRIMARY KEY (catalog_name, namespace, property_key));
INSERT INTO iceberg_namespace_properties VALUES ('spark', 'db', 'exists', 'true'), ('spark', 'db', 'owner', 'ana');
INSERT INTO iceberg_tables VALUES
  ('spark', 'db', 'a', 'file:/wh/db/a/metadata/00003-x.metadata.json', 'file:/wh/db/a/metadata/00002-x.metadata.json'),
  ('spark', 'db', 'b', 'file:/wh/db/b/metadata/00000-x.metadata.json', NULL);

CREATE EXTENSION skade;
-- until adopted, skade refuses to work on a catalog whose changes it would not log
SELECT skade.list_tables('db', 'spark');

SELECT skade.adopt_jdbc_catalog() AS adopted;
-- every row kept; the table became V1 (old rows: NULL type means TABLE)
SELECT * FROM iceberg_tables ORDER BY table_name;
SELECT * FROM iceberg_namespace_properties ORDER BY property_key;
SELECT column_name, column_default FROM information_schema.columns
WHERE table_name = 'iceberg_tables' AND column_name = 'iceberg_type';
SELECT * FROM skade.list_tables('db', 'spark');
SELECT skade.namespace_properties('db', 'spark');
SELECT op, catalog_name, table_namespace, table_name, iceberg_type, metadata_location
FROM skade.commit_log ORDER BY seq;

-- from now on both paths log
UPDATE iceberg_tables SET metadata_location = 'file:/wh/db/a/metadata/00004-x.metadata.json', previous_metadata_location = 'file:/wh/db/a/metadata/00003-x.metadata.json'
WHERE catalog_name = 'spark' AND table_namespace = 'db' AND table_name = 'a' AND metadata_location = 'file:/wh/db/a/metadata/00003-x.metadata.json';
SELECT skade.commit_table('db', 'b', 'file:/wh/db/b/metadata/00000-x.metadata.json', 'file:/wh/db/b/metadata/00001-x.metadata.json', 'spark') > 0;
SELECT op, source, table_name, metadata_location, previous_metadata_location
FROM skade.commit_log WHERE op <> 'adopt' ORDER BY seq;

-- clean up, leaving a fresh skade for the tests after this one
DROP EXTENSION skade CASCADE;
DROP TABLE iceberg_tables, iceberg_namespace_properties;
CREATE EXTENSION skade;
SELECT count(*) AS tables, (SELECT count(*) FROM skade.commit_log) AS log FROM iceberg_tables;
