"""Cross checks of a pyiceberg client's view against skade's SQL API and commit log."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Iterable
from urllib.parse import unquote, urlparse

import psycopg2

from pyiceberg.table import Table

from pgenv import warehouse_dir

# one commit-log row as compared by the tests:
# (op, table_namespace, table_name, metadata_location, previous_metadata_location,
#  prev_namespace, prev_name)
LogRow = tuple


def split_ident(ident: str | tuple | Iterable[str]) -> tuple[str, str]:
    parts = ident.split(".") if isinstance(ident, str) else list(ident)
    return ".".join(parts[:-1]), parts[-1]


def local_path(location: str) -> Path | None:
    """The local file a metadata location names, or None (another scheme)."""
    u = urlparse(location)
    if u.scheme == "file" and u.netloc in ("", "localhost"):
        return Path(unquote(u.path))
    if not u.scheme and location.startswith("/"):
        return Path(location)
    return None


def read_metadata_file(path: Path) -> bytes:
    raw = path.read_bytes()
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw


OBJECT_STORE_SCHEMES = ("s3", "s3a", "s3n")


def is_object_location(location: str) -> bool:
    return urlparse(location).scheme in OBJECT_STORE_SCHEMES


def metadata_bytes(table: Table) -> bytes | None:
    """The text of the table's current metadata file (gzip: inflated): a local file,
    or an object in S3 read through the client's own FileIO; None for another scheme."""
    path = local_path(table.metadata_location)
    if path is not None:
        return read_metadata_file(path)
    if not is_object_location(table.metadata_location):
        return None
    with table.io.new_input(table.metadata_location).open() as f:
        raw = f.read()
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw


def first_difference(a: bytes, b: bytes) -> str:
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return (f"lengths {len(a)} vs {len(b)}, first difference at byte {i}:"
            f"\n got  ...{a[max(0, i - 60):i + 60]!r}\n want ...{b[max(0, i - 60):i + 60]!r}")


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
        self.allow_file_access()

    def allow_file_access(self) -> None:
        """As Skade.allowFileAccess in the Java suite: when skade.allowed_roots does not
        cover the warehouse and the repository's fixtures and we are superuser, add them
        for this session (the server configuration must allow them otherwise)."""
        current = self.query("SELECT current_setting('skade.allowed_roots', true),"
                             " (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)")[0]
        if current[0] is None or not current[1]:
            return
        roots = [r.strip() for r in current[0].split(",") if r.strip()]
        changed = False
        for root in (warehouse_dir(), Path(__file__).resolve().parents[2] / "data"):
            root = str(root.resolve())
            if not any(root == r.rstrip("/") or root.startswith(r.rstrip("/") + "/") for r in roots):
                roots.append(root)
                changed = True
        if changed:
            self.query("SELECT set_config('skade.allowed_roots', %s, false)", (",".join(roots),))

    # ---------------------------------------------------------------- queries
    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self.conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall() if cur.description else []

    def max_seq(self) -> int:
        return self.query("SELECT coalesce(max(seq), 0) FROM skade.commit_log")[0][0]

    def load_table(self, ns: str, name: str) -> tuple[str, str | None]:
        rows = self.query(
            "SELECT metadata_location, previous_metadata_location FROM skade.load_table(%s, %s, catalog => %s)",
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

    def metadata_agrees(self, table: Table) -> None:
        """skade's metadata functions give the client's view of `table` (run by every
        check below). Only for metadata in a local file or on S3 (read back through the
        client's FileIO): skade reads no other scheme."""
        on_disk = metadata_bytes(table)
        if on_disk is None:
            return
        path = table.metadata_location
        ns, name = split_ident(table.name())
        args = (ns, name, self.catalog)
        md = table.metadata
        current = table.current_snapshot()
        current_id = current.snapshot_id if current is not None else None
        by_id = {s.snapshot_id: s for s in md.snapshots}
        ancestors = set()
        s = current
        while s is not None:
            ancestors.add(s.snapshot_id)
            s = by_id.get(s.parent_snapshot_id) if s.parent_snapshot_id is not None else None

        # 1. skade.snapshots() = the client's snapshots (order: the file's)
        got = self.query(
            "SELECT snapshot_id, parent_id, sequence_number,"
            "       (extract(epoch FROM committed_at) * 1000)::bigint, operation, manifest_list,"
            "       summary - 'operation', schema_id, is_current"
            "  FROM skade.snapshots(%s, %s, %s) WITH ORDINALITY ORDER BY ordinality", args)
        want = [(s.snapshot_id, s.parent_snapshot_id, s.sequence_number, s.timestamp_ms,
                 s.summary.operation.value if s.summary is not None else None, s.manifest_list,
                 dict(s.summary.additional_properties) if s.summary is not None else None,
                 s.schema_id, s.snapshot_id == current_id)
                for s in md.snapshots]
        assert got == want, f"skade.snapshots{args}:\n got  {got}\n want {want}"

        # 2. skade.refs() = the client's refs
        got = sorted(self.query(
            "SELECT name, type, snapshot_id, max_ref_age_ms, max_snapshot_age_ms,"
            "       min_snapshots_to_keep FROM skade.refs(%s, %s, %s)", args))
        want = sorted((n, r.snapshot_ref_type.value, r.snapshot_id, r.max_ref_age_ms,
                       r.max_snapshot_age_ms, r.min_snapshots_to_keep) for n, r in md.refs.items())
        assert got == want, f"skade.refs{args}:\n got  {got}\n want {want}"

        # 3. skade.history() = the client's snapshot log, in order
        got = self.query(
            "SELECT (extract(epoch FROM made_current_at) * 1000)::bigint, snapshot_id, parent_id,"
            "       is_current_ancestor"
            "  FROM skade.history(%s, %s, %s) WITH ORDINALITY ORDER BY ordinality", args)
        want = [(e.timestamp_ms, e.snapshot_id,
                 by_id[e.snapshot_id].parent_snapshot_id if e.snapshot_id in by_id else None,
                 e.snapshot_id in ancestors) for e in md.snapshot_log]
        assert got == want, f"skade.history{args}:\n got  {got}\n want {want}"

        # 4. the table's newest commit-log row carries the client's current snapshot
        got = self.query(
            "SELECT metadata_location, snapshot_id FROM skade.commit_log"
            " WHERE catalog_name = %s AND table_namespace = %s AND table_name = %s"
            " ORDER BY seq DESC LIMIT 1", (self.catalog, ns, name))
        want = [(table.metadata_location, current_id if current_id is not None else -1)]
        if is_object_location(table.metadata_location) and got == [(table.metadata_location, None)]:
            # no request is made in a commit: an S3 row is resolved later
            # (skade.resolve_commit_log())
            want = got
        assert got == want, f"newest commit_log row of {ns}.{name}:\n got  {got}\n want {want}"

        # 5. the metadata text is the file's, byte for byte (gzip: inflated) ...
        (via_load, via_fn), = self.query(
            "SELECT l.metadata::text, skade.table_metadata(%s, %s, catalog => %s)::text"
            "  FROM skade.load_table(%s, %s, catalog => %s) l", args + args)
        for label, text in (("skade.table_metadata", via_fn), ("skade.load_table", via_load)):
            assert text is not None, f"{label}{args} returned NULL"
            got_bytes = text.encode("utf-8")
            assert got_bytes == on_disk, \
                f"{label}{args} vs {path}: {first_difference(got_bytes, on_disk)}"
        # ... and snapshots => 'refs' keeps exactly the ref'ed snapshots, and the whole log
        refs_text, = self.query(
            "SELECT metadata::text FROM skade.load_table(%s, %s, catalog => %s, snapshots => 'refs')", args)[0]
        trimmed, full = json.loads(refs_text), json.loads(on_disk)
        refd = {r.snapshot_id for r in md.refs.values()}
        kept = trimmed.pop("snapshots", [])
        assert sorted(s["snapshot-id"] for s in kept) == sorted(refd), \
            f"load_table{args}, snapshots => 'refs': snapshots {[s['snapshot-id'] for s in kept]}, refs {refd}"
        full_by_id = {s["snapshot-id"]: s for s in full.pop("snapshots", [])}
        for s in kept:
            assert s == full_by_id[s["snapshot-id"]], f"snapshot {s['snapshot-id']} changed by 'refs'"
        got_log = [(e["snapshot-id"], e["timestamp-ms"]) for e in trimmed.pop("snapshot-log", [])]
        # the whole log, as Java's suppressHistoricalSnapshots() keeps it
        want_log = [(e.snapshot_id, e.timestamp_ms) for e in md.snapshot_log]
        assert got_log == want_log, f"load_table{args}, snapshots => 'refs': snapshot-log"
        full.pop("snapshot-log", None)
        assert trimmed == full, f"load_table{args}, snapshots => 'refs': other fields differ"

    def agrees(self, table: Table) -> None:
        """skade.load_table() returns the client's metadata location, and skade's
        metadata functions agree with the client (metadata_agrees)."""
        ns, name = split_ident(table.name())
        loc, _prev = self.load_table(ns, name)
        assert loc == table.metadata_location
        self.metadata_agrees(table)
        self.known[(ns, name)] = table.metadata_location

    def created(self, table: Table) -> None:
        """The client created `table`: one 'create' row, and skade agrees."""
        ns, name = split_ident(table.name())
        self.expect_log(("create", ns, name, table.metadata_location, None))
        loc, prev = self.load_table(ns, name)
        assert (loc, prev) == (table.metadata_location, None)
        assert self.table_log(ns, name)[-1] == ("create", table.metadata_location, None)
        self.metadata_agrees(table)
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
        self.metadata_agrees(table)
        self.known[(ns, name)] = table.metadata_location

    def renamed(self, old_ident, table: Table) -> None:
        old_ns, old_name = split_ident(old_ident)
        ns, name = split_ident(table.name())
        loc = self.known.pop((old_ns, old_name))
        assert table.metadata_location == loc  # a rename does not write metadata
        self.expect_log(("rename", ns, name, loc, loc, old_ns, old_name))
        assert self.load_table(ns, name)[0] == loc
        assert not self.table_exists(old_ns, old_name)
        self.metadata_agrees(table)
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
