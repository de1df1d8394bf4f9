"""Namespaces with properties through pyiceberg, cross-checked with skade's SQL API."""

import json

import pyarrow as pa
import pytest

from pyiceberg.exceptions import (
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
)

pytestmark = pytest.mark.usefixtures("fresh_skade")

NAMESPACES = ("sales", "sales.eu", "empty_ns", "from_sql")


def skade_props(skade, ns):
    return skade.query("SELECT skade.namespace_properties(%s, %s)", (ns, "py_cat"))[0][0]


def skade_namespaces(skade, parent=None):
    return sorted(r[0] for r in skade.query("SELECT * FROM skade.list_namespaces(%s, %s)", (parent, "py_cat")))


def test_namespace_lifecycle(catalog, skade):
    assert catalog.list_namespaces() == []

    catalog.create_namespace("sales", {"owner": "alice", "comment": "sales data"})
    catalog.create_namespace("sales.eu", {"region": "eu"})
    catalog.create_namespace("empty_ns")  # no properties: pyiceberg writes exists=true

    with pytest.raises(NamespaceAlreadyExistsError):
        catalog.create_namespace("sales")

    assert sorted(catalog.list_namespaces()) == [("empty_ns",), ("sales",)]
    assert catalog.list_namespaces("sales") == [("sales", "eu")]
    assert skade_namespaces(skade) == ["empty_ns", "sales"]
    assert skade_namespaces(skade, "sales") == ["sales.eu"]

    assert catalog.load_namespace_properties("sales") == {"owner": "alice", "comment": "sales data"}
    assert catalog.load_namespace_properties("sales.eu") == {"region": "eu"}
    assert catalog.load_namespace_properties("empty_ns") == {"exists": "true"}
    assert skade_props(skade, "sales") == {"owner": "alice", "comment": "sales data"}
    assert skade_props(skade, "sales.eu") == {"region": "eu"}
    assert skade.query("SELECT skade.namespace_exists('empty_ns', 'py_cat')")[0][0] is True

    # update: set one, overwrite one, remove one
    summary = catalog.update_namespace_properties(
        "sales", removals={"comment"}, updates={"owner": "bob", "tier": "gold"})
    assert sorted(summary.updated) == ["owner", "tier"]
    assert summary.removed == ["comment"]
    assert summary.missing == []
    assert catalog.load_namespace_properties("sales") == {"owner": "bob", "tier": "gold"}
    assert skade_props(skade, "sales") == {"owner": "bob", "tier": "gold"}

    # removing a key that is not there is reported as missing
    summary = catalog.update_namespace_properties("sales", removals={"nope"})
    assert summary.missing == ["nope"]
    assert catalog.load_namespace_properties("sales") == {"owner": "bob", "tier": "gold"}

    # a namespace with a table cannot be dropped
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False)])
    t = catalog.create_table("sales.eu.orders", schema)
    skade.created(t)
    with pytest.raises(NamespaceNotEmptyError):
        catalog.drop_namespace("sales.eu")
    catalog.drop_table("sales.eu.orders")
    skade.dropped("sales.eu.orders")

    catalog.drop_namespace("sales.eu")
    catalog.drop_namespace("empty_ns")
    assert catalog.list_namespaces() == [("sales",)]
    assert skade_namespaces(skade) == ["sales"]
    with pytest.raises(NoSuchNamespaceError):
        catalog.load_namespace_properties("empty_ns")
    assert skade.query("SELECT skade.namespace_exists('empty_ns', 'py_cat')")[0][0] is False

    catalog.drop_namespace("sales")
    assert catalog.list_namespaces() == []
    with pytest.raises(NoSuchNamespaceError):
        catalog.drop_namespace("sales")
    # namespace operations are not pointer changes: nothing else was logged
    skade.expect_no_log()


def test_namespace_created_through_skade_is_seen_by_pyiceberg(catalog, skade):
    skade.query("SELECT skade.create_namespace('from_sql', %s, 'py_cat')", (json.dumps({"k": "v"}),))
    assert ("from_sql",) in catalog.list_namespaces()
    # skade writes the exists marker as Java does; pyiceberg shows it as a property
    assert catalog.load_namespace_properties("from_sql") == {"k": "v", "exists": "true"}
    catalog.update_namespace_properties("from_sql", updates={"k": "w"})
    assert skade_props(skade, "from_sql") == {"k": "w"}
    catalog.drop_namespace("from_sql")
    assert not skade.query("SELECT skade.namespace_exists('from_sql', 'py_cat')")[0][0]
