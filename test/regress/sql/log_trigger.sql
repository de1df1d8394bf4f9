-- The commit-log trigger reads the JDBC catalog's columns as text: an
-- owner's ALTER TABLE that changes their types or nullability is refused at
-- the next change (the trigger used to read an int as text and crash).  And
-- a cancel or statement timeout while it reads the new metadata is the
-- user's: it cancels the change, it is not turned into a warning.
SET skade.allowed_roots = '/tmp/skade_regress/root';
SELECT skade.create_namespace('lt');

BEGIN;
ALTER TABLE public.iceberg_tables ALTER COLUMN metadata_location TYPE int USING NULL;
INSERT INTO public.iceberg_tables VALUES ('skade', 'lt', 'a', 1, NULL, 'TABLE');
ROLLBACK;
BEGIN;
-- (the row-level security policies read catalog_name: out of the way for this)
DROP POLICY skade_read ON public.iceberg_tables;
DROP POLICY skade_create ON public.iceberg_tables;
DROP POLICY skade_change ON public.iceberg_tables;
DROP POLICY skade_drop ON public.iceberg_tables;
ALTER TABLE public.iceberg_tables ALTER COLUMN catalog_name TYPE bytea USING catalog_name::bytea;
INSERT INTO public.iceberg_tables VALUES ('skade', 'lt', 'b', '/tmp/skade_regress/root/00003-v2.metadata.json', NULL, 'TABLE');
ROLLBACK;
BEGIN;
ALTER TABLE public.iceberg_tables DROP CONSTRAINT iceberg_tables_pkey;
ALTER TABLE public.iceberg_tables ALTER COLUMN table_name DROP NOT NULL;
INSERT INTO public.iceberg_tables VALUES ('skade', 'lt', NULL, '/tmp/skade_regress/root/00003-v2.metadata.json', NULL, 'TABLE');
ROLLBACK;
-- a domain over text is text
BEGIN;
CREATE DOMAIN pg_temp.loc AS varchar(1000);
ALTER TABLE public.iceberg_tables ALTER COLUMN metadata_location TYPE pg_temp.loc;
SELECT skade.register_table('lt', 'c', '/tmp/skade_regress/root/00003-v2.metadata.json') > 0 AS registered;
ROLLBACK;

-- statement_timeout while the trigger reads a slow (60 MB) metadata file
SET skade.max_metadata_size = '128MB';
COPY (SELECT repeat(' ', 60000000) || pg_read_file('/tmp/skade_regress/root/00003-v2.metadata.json'))
  TO '/tmp/skade_regress/root/slow.metadata.json';
SET statement_timeout = '20ms';
INSERT INTO public.iceberg_tables VALUES ('skade', 'lt', 'slow',
	'/tmp/skade_regress/root/slow.metadata.json', NULL, 'TABLE');
RESET statement_timeout;
SELECT count(*) AS inserted FROM public.iceberg_tables WHERE table_namespace = 'lt';
SELECT count(*) AS logged FROM skade.commit_log WHERE table_namespace = 'lt';
RESET skade.max_metadata_size;

SELECT skade.drop_namespace('lt');
RESET skade.allowed_roots;
