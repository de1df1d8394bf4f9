"""SqlCatalog initialisation on skade's existing tables: no DDL, V1 detected."""

import pytest

from pyiceberg.exceptions import NoSuchTableError

pytestmark = pytest.mark.usefixtures("fresh_skade")

NAMESPACES = ("init_ns",)

DDL_STATE = """
SELECT 'col', c.relname, a.attnum::text, a.attname, format_type(a.atttypid, a.atttypmod),
       a.attnotnull::text, coalesce(pg_get_expr(d.adbin, d.adrelid), '')
  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
  LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
 WHERE c.oid IN ('public.iceberg_tables'::regclass, 'public.iceberg_namespace_properties'::regclass)
UNION ALL
SELECT 'idx', tablename, indexname, indexdef, '', '', '' FROM pg_indexes
 WHERE schemaname = 'public' AND tablename IN ('iceberg_tables', 'iceberg_namespace_properties')
UNION ALL
SELECT 'trg', tgrelid::regclass::text, tgname, pg_get_triggerdef(oid), '', '', '' FROM pg_trigger
 WHERE tgrelid IN ('public.iceberg_tables'::regclass, 'public.iceberg_namespace_properties'::regclass)
UNION ALL
SELECT 'rel', n.nspname, c.relname, c.relkind::text, c.xmin::text, c.relfilenode::text, c.relnatts::text
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relname IN ('iceberg_tables', 'iceberg_namespace_properties')
ORDER BY 1, 2, 3, 4
"""


@pytest.fixture
def ddl_recorder(pg):
    """An event trigger that records every DDL command run while it exists."""
    with pg.cursor() as cur:
        cur.execute("CREATE TABLE public.py_ddl_seen (tag text, at timestamptz DEFAULT clock_timestamp())")
        cur.execute("""CREATE FUNCTION public.py_ddl_record() RETURNS event_trigger LANGUAGE plpgsql AS
                       $$BEGIN INSERT INTO public.py_ddl_seen(tag) VALUES (tg_tag); END$$""")
        cur.execute("CREATE EVENT TRIGGER py_ddl_watch ON ddl_command_start"
                    " EXECUTE FUNCTION public.py_ddl_record()")
    try:
        yield lambda: [r[0] for r in _rows(pg, "SELECT tag FROM public.py_ddl_seen ORDER BY at")]
    finally:
        with pg.cursor() as cur:
            cur.execute("DROP EVENT TRIGGER py_ddl_watch")
            cur.execute("DROP TABLE public.py_ddl_seen")
            cur.execute("DROP FUNCTION public.py_ddl_record()")


def _rows(pg, sql, params=()):
    with pg.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall()


@pytest.mark.parametrize("props", [{}, {"schema_version": "v1"}, {"init_catalog_tables": "false"}],
                         ids=["default", "schema_version=v1", "init_catalog_tables=false"])
def test_init_creates_and_alters_nothing_and_detects_v1(pg, catalogs, skade, ddl_recorder, props):
    before = _rows(pg, DDL_STATE)
    # the recorder works: this DDL is seen
    with pg.cursor() as cur:
        cur.execute("CREATE TEMP TABLE py_probe (x int)")
        cur.execute("DROP TABLE py_probe")
    assert ddl_recorder() == ["CREATE TABLE", "DROP TABLE"]

    cat = catalogs("py_cat", **props)

    assert ddl_recorder() == ["CREATE TABLE", "DROP TABLE"], "SqlCatalog init ran DDL on skade's catalog"
    assert _rows(pg, DDL_STATE) == before
    # exactly one relation of each name, in public
    rels = [r for r in before if r[0] == "rel"]
    assert [(r[1], r[2]) for r in rels] == [("public", "iceberg_namespace_properties"),
                                            ("public", "iceberg_tables")]
    assert cat._schema_version == "v1"  # pyiceberg's own detection result
    skade.expect_no_log()


def test_v1_mode_is_observable_view_rows_are_hidden(pg, catalog, skade):
    """What V1 means for a user: rows typed VIEW (e.g. written by Java) are not tables."""
    catalog.create_namespace("init_ns")
    with pg.cursor() as cur:
        cur.execute("INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name,"
                    " metadata_location, iceberg_type) VALUES ('py_cat', 'init_ns', 'a_view',"
                    " 'file:///nonexistent/v.metadata.json', 'VIEW')")
    skade.expect_log(("create", "init_ns", "a_view", "file:///nonexistent/v.metadata.json", None))
    assert catalog.list_tables("init_ns") == []
    with pytest.raises(NoSuchTableError):
        catalog.load_table("init_ns.a_view")
    assert not catalog.table_exists("init_ns.a_view")
    # and skade agrees that it is not a table
    assert not skade.table_exists("init_ns", "a_view")
