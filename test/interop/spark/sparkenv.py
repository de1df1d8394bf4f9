"""Helpers of the Spark interop suite: the connection settings, skade's SQL
API on a psycopg2 connection, and what Spark shows of a table."""

from __future__ import annotations

import os
from datetime import date, datetime

CAT = "spark_cat"  # Spark's catalog name, hence catalog_name in iceberg_tables


def pg_params() -> dict:
    return {
        "host": os.environ.get("PGHOST", "127.0.0.1"),
        "port": int(os.environ.get("PGPORT", "5432")),
        "user": os.environ.get("PGUSER", "postgres"),
        "dbname": os.environ.get("PGDATABASE", "postgres"),
    }


class Skade:
    """skade's SQL API on an autocommit connection, in catalog spark_cat."""

    def __init__(self, conn):
        self.conn = conn

    def query(self, sql: str, params=()) -> list[tuple]:
        with self.conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall() if cur.description else []

    def one(self, sql: str, params=()):
        (row,) = self.query(sql, params)
        return row[0] if len(row) == 1 else row

    def create_namespace(self, ns: str) -> None:
        self.query("SELECT skade.create_namespace(%s, catalog => %s)", (ns, CAT))

    def register(self, ns: str, name: str, metadata: str) -> None:
        self.query("SELECT skade.register_table(%s, %s, %s, %s)", (ns, name, metadata, CAT))

    def metadata_location(self, ns: str, name: str) -> str:
        return self.one("SELECT metadata_location FROM public.iceberg_tables"
                        " WHERE catalog_name = %s AND table_namespace = %s AND table_name = %s",
                        (CAT, ns, name))

    def expire(self, ns: str, name: str, retain_last: int = 2) -> list[tuple[str, str]]:
        """expire_snapshots older than now, keeping the last retain_last: (file, kind) no longer referenced."""
        return self.query("SELECT file_path, kind FROM skade.expire_snapshots(%s, %s, older_than => now(),"
                          " retain_last => %s, catalog => %s)", (ns, name, retain_last, CAT))

    def rewrite_manifests(self, ns: str, name: str) -> dict:
        with self.conn.cursor() as cur:
            cur.execute("SELECT * FROM skade.rewrite_manifests(%s, %s, catalog => %s)", (ns, name, CAT))
            (row,) = cur.fetchall()
            return dict(zip([d.name for d in cur.description], row))

    def files(self, ns: str, name: str) -> set[str]:
        return {f for (f,) in self.query("SELECT file_path FROM skade.files(%s, %s, catalog => %s)", (ns, name, CAT))}


def plain(v):
    """A value Spark returned, comparable with the JSON the fixtures record."""
    if isinstance(v, (datetime, date)):
        return v.isoformat()
    return v


def rows(spark, sql: str) -> list[tuple]:
    """A query's rows as sorted tuples."""
    return sorted((tuple(plain(v) for v in r) for r in spark.sql(sql).collect()),
                  key=lambda t: tuple((x is None, x) for x in t))


def dict_rows(spark, sql: str, key: str = "id") -> list[dict]:
    return sorted(({k: plain(v) for k, v in r.asDict().items()} for r in spark.sql(sql).collect()),
                  key=lambda d: d[key])


class SparkTable:
    """What Spark shows of one table of spark_cat: rows, snapshots, time travel."""

    def __init__(self, spark, ns: str, name: str):
        self.spark, self.ns, self.name = spark, ns, name
        self.ident = f"{CAT}.{ns}.{name}"

    def rows(self, where: str = "") -> list[tuple]:
        return rows(self.spark, f"SELECT * FROM {self.ident} {where}")

    def rows_at(self, snapshot_id: int) -> list[tuple]:
        return rows(self.spark, f"SELECT * FROM {self.ident} VERSION AS OF {snapshot_id}")

    def snapshots(self) -> list[dict]:
        """Spark's snapshots metadata table, oldest first."""
        return [r.asDict() for r in self.spark.sql(
            f"SELECT snapshot_id, parent_id, operation, manifest_list, committed_at FROM {self.ident}.snapshots"
            " ORDER BY committed_at, snapshot_id").collect()]

    def snapshot_ids(self) -> list[int]:
        return [s["snapshot_id"] for s in self.snapshots()]

    def current_snapshot_id(self) -> int:
        (r,) = self.spark.sql(f"SELECT snapshot_id FROM {self.ident}.refs WHERE name = 'main'").collect()
        return r.snapshot_id

    def history_ids(self) -> list[int]:
        return [r.snapshot_id for r in self.spark.sql(
            f"SELECT snapshot_id FROM {self.ident}.history ORDER BY made_current_at").collect()]

    def data_files(self) -> set[str]:
        return {r.file_path for r in self.spark.sql(f"SELECT file_path FROM {self.ident}.data_files").collect()}

    def manifests(self) -> list[dict]:
        return [r.asDict() for r in self.spark.sql(f"SELECT * FROM {self.ident}.manifests").collect()]

    def partitions(self) -> list[tuple]:
        """Spark's partitions metadata table: partition (when partitioned), records, files."""
        cols = [c for c in ("partition", "record_count", "file_count")
                if c in self.spark.table(f"{self.ident}.partitions").columns]
        return rows(self.spark, f"SELECT {', '.join(cols)} FROM {self.ident}.partitions")

    def history_by_snapshot(self) -> dict[int, list[tuple]]:
        """Every snapshot Spark lists, with the rows time travel to it reads."""
        return {sid: self.rows_at(sid) for sid in self.snapshot_ids()}

    def referenced_files(self) -> set[str]:
        """Every manifest list, manifest and data or delete file some snapshot
        Spark lists still reaches (the all_* metadata tables)."""
        out = {s["manifest_list"] for s in self.snapshots()}
        out |= {r.path for r in self.spark.sql(f"SELECT path FROM {self.ident}.all_manifests").collect()}
        out |= {r.file_path for r in self.spark.sql(f"SELECT file_path FROM {self.ident}.all_files").collect()}
        return out

    def insert_like(self, new_id: int, like_id: int) -> None:
        """INSERT one row: a copy of row like_id with id new_id (whatever the schema)."""
        cols = [c if c != "id" else f"CAST({new_id} AS bigint) AS id" for c in self.spark.table(self.ident).columns]
        self.spark.sql(f"INSERT INTO {self.ident} SELECT {', '.join(cols)} FROM {self.ident} WHERE id = {like_id}")


def check_unreferenced(t: SparkTable, before: set[str], gone: list[tuple[str, str]]) -> None:
    """expire_snapshots returned exactly the files that Spark saw referenced
    before (before: referenced_files()) and sees referenced no more: the files
    a user deletes next."""
    assert len(gone) == len({f for f, _ in gone}), gone
    assert {f for f, _ in gone} == before - t.referenced_files()
