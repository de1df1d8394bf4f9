"""Helper process for test_edge_cases: a pyiceberg client that dies mid-commit.

    python crash_client.py <namespace.table> '<json row>'

It appends one row with the stock SqlCatalog, but its database session's
commit() first reports what the open transaction sees (the CAS UPDATE has
run, skade's trigger has logged it) and then kills the process with
os._exit(17): no COMMIT, no ROLLBACK, the connection just drops.
"""

import json
import os
import sys

import pyarrow as pa
from sqlalchemy import text
from sqlalchemy.orm import Session

import pyiceberg.catalog.sql as sql_catalog
from pgenv import make_catalog

ident, row = sys.argv[1], json.loads(sys.argv[2])
ns, name = ident.rsplit(".", 1)
catalog = make_catalog("py_cat")
table = catalog.load_table(ident)


class CrashingSession(Session):
    def commit(self):
        where = {"c": catalog.name, "ns": ns, "n": name}
        location = self.execute(text(
            "SELECT metadata_location FROM iceberg_tables"
            " WHERE catalog_name = :c AND table_namespace = :ns AND table_name = :n"), where).scalar()
        last_log = self.execute(text(
            "SELECT op, metadata_location FROM skade.commit_log"
            " WHERE catalog_name = :c AND table_namespace = :ns AND table_name = :n"
            " ORDER BY seq DESC LIMIT 1"), where).one()
        print(json.dumps({"in_tx_location": location, "in_tx_log": list(last_log)}), flush=True)
        os._exit(17)


sql_catalog.Session = CrashingSession
table.append(pa.Table.from_pylist([row], schema=table.schema().as_arrow()))
print("commit was not intercepted", flush=True)
sys.exit(1)
