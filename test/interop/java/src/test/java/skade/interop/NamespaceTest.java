package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.junit.jupiter.api.Test;

/** Namespaces with properties: create, list, load, set, remove, drop; cross-checked in SQL. */
class NamespaceTest extends CatalogTestBase {

  /** skade.namespace_properties(ns, 'java_cat') as a map, without JdbcCatalog's marker. */
  private Map<String, String> sqlProperties(Namespace n) throws Exception {
    Map<String, String> out = new HashMap<>();
    for (List<String> r :
        Skade.query(
            conn,
            "SELECT key, value FROM jsonb_each_text(skade.namespace_properties(?, ?))",
            String.join(".", n.levels()),
            Skade.CATALOG)) {
      out.put(r.get(0), r.get(1));
    }
    out.remove("exists");
    return out;
  }

  private Set<String> sqlNamespaces(String parent) throws Exception {
    Set<String> out = new TreeSet<>();
    for (List<String> r :
        Skade.query(
            conn, "SELECT * FROM skade.list_namespaces(?, ?)", parent, Skade.CATALOG)) {
      out.add(r.get(0));
    }
    return out;
  }

  @Test
  void namespaceLifecycleWithProperties() throws Exception {
    Namespace n = Namespace.of(Skade.unique("ns_props"));
    assertFalse(catalog.namespaceExists(n));
    catalog.createNamespace(n, Map.of("owner", "alice", "comment", "first"));
    assertTrue(catalog.namespaceExists(n));
    assertThrows(AlreadyExistsException.class, () -> catalog.createNamespace(n));

    // list: top level, from the client and from skade
    assertTrue(catalog.listNamespaces().contains(n));
    assertTrue(sqlNamespaces(null).contains(n.level(0)));

    // load: the client hides its 'exists' marker and adds a default location
    Map<String, String> loaded = catalog.loadNamespaceMetadata(n);
    assertEquals("alice", loaded.get("owner"));
    assertEquals("first", loaded.get("comment"));
    assertFalse(loaded.containsKey("exists"));
    assertEquals(Map.of("owner", "alice", "comment", "first"), sqlProperties(n));

    // set: one update, one new key
    assertTrue(catalog.setProperties(n, Map.of("comment", "second", "team", "data")));
    loaded = catalog.loadNamespaceMetadata(n);
    assertEquals("second", loaded.get("comment"));
    assertEquals("data", loaded.get("team"));
    assertEquals(
        Map.of("owner", "alice", "comment", "second", "team", "data"), sqlProperties(n));

    // remove
    assertTrue(catalog.removeProperties(n, Set.of("owner", "team")));
    loaded = catalog.loadNamespaceMetadata(n);
    assertFalse(loaded.containsKey("owner"));
    assertFalse(loaded.containsKey("team"));
    assertEquals(Map.of("comment", "second"), sqlProperties(n));
    assertFalse(catalog.removeProperties(n, Set.of("never-set")));

    // drop
    assertTrue(catalog.dropNamespace(n));
    assertFalse(catalog.namespaceExists(n));
    assertFalse(catalog.listNamespaces().contains(n));
    assertFalse(sqlNamespaces(null).contains(n.level(0)));
    assertThrows(NoSuchNamespaceException.class, () -> catalog.loadNamespaceMetadata(n));
    assertFalse(catalog.dropNamespace(n));
  }

  @Test
  void nestedNamespacesAndNonEmptyDrop() throws Exception {
    String top = Skade.unique("ns_top");
    Namespace parent = Namespace.of(top);
    Namespace child = Namespace.of(top, "child");
    Namespace grandchild = Namespace.of(top, "child", "leaf");
    catalog.createNamespace(parent, Map.of("level", "1"));
    catalog.createNamespace(child, Map.of("level", "2"));
    catalog.createNamespace(grandchild);

    assertEquals(List.of(child), catalog.listNamespaces(parent));
    assertEquals(List.of(grandchild), catalog.listNamespaces(child));
    assertEquals(Set.of(top + ".child"), sqlNamespaces(top));
    assertEquals(Map.of("level", "2"), sqlProperties(child));
    assertEquals("2", catalog.loadNamespaceMetadata(child).get("level"));

    // a namespace with a child namespace, or with a table, is not dropped
    assertThrows(NamespaceNotEmptyException.class, () -> catalog.dropNamespace(child));
    TableIdentifier t = TableIdentifier.of(grandchild, "t");
    catalog.createTable(t, EVENTS);
    assertThrows(NamespaceNotEmptyException.class, () -> catalog.dropNamespace(grandchild));
    assertEquals(List.of(t), catalog.listTables(grandchild));
    assertTrue(catalog.dropTable(t));
    assertTrue(catalog.dropNamespace(grandchild));
    assertTrue(catalog.dropNamespace(child));
    assertEquals(List.of(), catalog.listNamespaces(parent));
    assertTrue(catalog.dropNamespace(parent));
    assertFalse(catalog.namespaceExists(parent));
  }
}
