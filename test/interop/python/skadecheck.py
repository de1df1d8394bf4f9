"""Cross checks of a pyiceberg client's view against skade's SQL API and commit log."""

from __future__ import annotations

from typing import Iterable

import psycopg2

from pyiceberg.table import Table

# one commit-log row as compared by the tests:
# (op, table_namespace, table_name, metadata_location, previous_metadata_location,
#  prev_namespace, prev_name)
LogRow = tuple


def split_ident(ident: str | tuple | Iterable[str]) -> tuple[str, str]:
    parts = ident.split(".") if isinstance(ident, str) else list(ident)
    return ".".join(parts[:-1]), parts[-1]


class Skade:
    """skade's side of one catalog name.

    The commit-log cursor starts at the current end of the log; `expect_log`
    asserts that exactly the given rows were appended (for this catalog) since
    the previous check, in order, and moves the cursor past them.
    """

    def __init__(self, conn, catalog: str):
        self.conn = conn
        self.catalog = catalog
        self.mark = self.max_seq()
        # last metadata location each client-visible table had, by (ns, name)
        self.known: dict[tuple[str, str], str] = {}

    # ---------------------------------------------------------------- queries
    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self.conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall() if cur.description else []

    def max_seq(self) -> int:
        return self.query("SELECT coalesce(max(seq), 0) FROM skade.commit_log")[0][0]

    def load_table(self, ns: str, name: str) -> tuple[str, str | None]:
        rows = self.query(
            "SELECT metadata_location, previous_metadata_location FROM skade.load_table(%s, %s, %s)",
            (ns, name, self.catalog))
        assert len(rows) == 1
        return rows[0]

    def table_exists(self, ns: str, name: str) -> bool:
        return self.query("SELECT skade.table_exists(%s, %s, %s)", (ns, name, self.catalog))[0][0]

    def table_log(self, ns: str, name: str) -> list[tuple[str, str | None, str | None]]:
        """The per-table history query (as a user would write it)."""
        return self.query(
            "SELECT op, metadata_location, previous_metadata_location FROM skade.commit_log"
            " WHERE catalog_name = %s AND table_namespace = %s AND table_name = %s ORDER BY seq",
            (self.catalog, ns, name))

    def new_log_rows(self) -> list[LogRow]:
        return self.query(
            "SELECT op, table_namespace, table_name, metadata_location, previous_metadata_location,"
            "       prev_namespace, prev_name"
            "  FROM skade.commit_log WHERE catalog_name = %s AND seq > %s ORDER BY seq",
            (self.catalog, self.mark))

    def catalog_rows(self) -> list[tuple]:
        """Everything skade's two catalog tables hold (all catalogs), for unchanged-ness checks."""
        tables = self.query(
            "SELECT catalog_name, table_namespace, table_name, metadata_location,"
            " previous_metadata_location, iceberg_type FROM public.iceberg_tables ORDER BY 1, 2, 3")
        props = self.query(
            "SELECT catalog_name, namespace, property_key, property_value"
            " FROM public.iceberg_namespace_properties ORDER BY 1, 2, 3")
        return [tables, props]

    # ---------------------------------------------------------------- checks
    def expect_log(self, *rows: LogRow) -> None:
        got = self.new_log_rows()
        want = [tuple(r) + (None,) * (7 - len(r)) for r in rows]
        assert got == want, f"commit log since seq {self.mark}:\n got  {got}\n want {want}"
        self.mark = self.max_seq()

    def expect_no_log(self) -> None:
        self.expect_log()

    def agrees(self, table: Table) -> None:
        """skade.load_table() returns the client's metadata location."""
        ns, name = split_ident(table.name())
        loc, _prev = self.load_table(ns, name)
        assert loc == table.metadata_location
        self.known[(ns, name)] = table.metadata_location

    def created(self, table: Table) -> None:
        """The client created `table`: one 'create' row, and skade agrees."""
        ns, name = split_ident(table.name())
        self.expect_log(("create", ns, name, table.metadata_location, None))
        loc, prev = self.load_table(ns, name)
        assert (loc, prev) == (table.metadata_location, None)
        assert self.table_log(ns, name)[-1] == ("create", table.metadata_location, None)
        self.known[(ns, name)] = table.metadata_location

    def committed(self, table: Table, previous: str | None = None) -> None:
        """The client made exactly one commit to `table`: one 'commit' row from
        the previously known location to the client's current one."""
        ns, name = split_ident(table.name())
        prev = previous if previous is not None else self.known[(ns, name)]
        assert table.metadata_location != prev
        self.expect_log(("commit", ns, name, table.metadata_location, prev))
        loc, skade_prev = self.load_table(ns, name)
        assert (loc, skade_prev) == (table.metadata_location, prev)
        assert self.table_log(ns, name)[-1] == ("commit", table.metadata_location, prev)
        self.known[(ns, name)] = table.metadata_location

    def renamed(self, old_ident, table: Table) -> None:
        old_ns, old_name = split_ident(old_ident)
        ns, name = split_ident(table.name())
        loc = self.known.pop((old_ns, old_name))
        assert table.metadata_location == loc  # a rename does not write metadata
        self.expect_log(("rename", ns, name, loc, loc, old_ns, old_name))
        assert self.load_table(ns, name)[0] == loc
        assert not self.table_exists(old_ns, old_name)
        self.known[(ns, name)] = loc

    def dropped(self, ident) -> None:
        ns, name = split_ident(ident)
        loc = self.known.pop((ns, name))
        self.expect_log(("drop", ns, name, None, loc))
        assert not self.table_exists(ns, name)
        assert self.table_log(ns, name)[-1] == ("drop", None, loc)

    def load_fails(self, ns: str, name: str) -> None:
        try:
            self.load_table(ns, name)
        except psycopg2.Error as e:
            assert "does not exist" in str(e)
            return
        raise AssertionError(f"skade.load_table({ns!r}, {name!r}) should fail")
