package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Privileges per namespace through a stock JdbcCatalog connected as members
 * of skade_user: it sees and changes only what skade.grant() allows, by the row-level security
 * of the JDBC tables -- the same rule as the SQL API, pyiceberg's SqlCatalog and REST.
 */
class PrivilegesTest extends CatalogTestBase {
  private Namespace a;
  private Namespace b;
  private JdbcCatalog reader;
  private JdbcCatalog writer;

  private static final List<String> ROLES = List.of("jv_priv_reader", "jv_priv_writer");

  @BeforeAll
  void world() throws Exception {
    a = Namespace.of(Skade.unique("privj_a"));
    b = Namespace.of(Skade.unique("privj_b"));
    catalog.createNamespace(a);
    catalog.createNamespace(b);
    catalog.createTable(TableIdentifier.of(a, "t1"), EVENTS);
    catalog.createTable(TableIdentifier.of(a, "t2"), EVENTS);
    catalog.createTable(TableIdentifier.of(b, "t3"), EVENTS);
    dropRoles();
    for (String r : ROLES) {
      Skade.update(conn, "CREATE ROLE " + r + " LOGIN IN ROLE skade_user");
    }
    Skade.query(conn, "SELECT skade.grant('read', 'jv_priv_reader', ?, NULL, ?)", a.level(0), Skade.CATALOG);
    Skade.query(conn, "SELECT skade.grant('write', 'jv_priv_writer', ?, NULL, ?)", a.level(0), Skade.CATALOG);
    reader = Skade.catalog(Skade.CATALOG, Map.of("jdbc.user", "jv_priv_reader"));
    writer = Skade.catalog(Skade.CATALOG, Map.of("jdbc.user", "jv_priv_writer"));
  }

  @AfterAll
  void cleanUp() throws Exception {
    if (reader != null) {
      reader.close();
    }
    if (writer != null) {
      writer.close();
    }
    dropRoles();
  }

  private void dropRoles() throws Exception {
    for (String r : ROLES) {
      if (!Skade.query(conn, "SELECT 1 FROM pg_roles WHERE rolname = ?", r).isEmpty()) {
        Skade.update(conn, "DELETE FROM skade.grants WHERE grantee = ?::regrole", r);
        Skade.update(conn, "DROP ROLE " + r);
      }
    }
  }

  private static String causes(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c.getMessage()).append(" | ");
    }
    return sb.toString();
  }

  private static Set<String> names(List<TableIdentifier> ids) {
    return ids.stream().map(TableIdentifier::name).collect(Collectors.toCollection(TreeSet::new));
  }

  @Test
  void readerSeesOnlyItsNamespace() {
    List<Namespace> listed = reader.listNamespaces();
    assertTrue(listed.contains(a), listed.toString());
    assertFalse(listed.contains(b), listed.toString());
    assertEquals(Set.of("t1", "t2"), names(reader.listTables(a)));
    assertTrue(reader.loadTable(TableIdentifier.of(a, "t1")).schema().findField("id") != null);
    assertThrows(NoSuchTableException.class, () -> reader.loadTable(TableIdentifier.of(b, "t3")));
    assertFalse(reader.tableExists(TableIdentifier.of(b, "t3")));
    assertFalse(reader.namespaceExists(b));
    assertThrows(NoSuchNamespaceException.class, () -> reader.listTables(b));
  }

  @Test
  void readerCannotChangeWhatItReads() {
    TableIdentifier t1 = TableIdentifier.of(a, "t1");
    RuntimeException commit =
        assertThrows(RuntimeException.class,
            () -> reader.loadTable(t1).updateProperties().set("k", "v").commit());
    assertTrue(causes(commit).contains("permission denied"), causes(commit));
    RuntimeException drop =
        assertThrows(RuntimeException.class, () -> reader.dropTable(TableIdentifier.of(a, "t2"), false));
    assertTrue(causes(drop).contains("permission denied"), causes(drop));
    assertFalse(catalog.loadTable(t1).properties().containsKey("k"));
    assertTrue(catalog.tableExists(TableIdentifier.of(a, "t2")));
  }

  @Test
  void writerChangesItsNamespaceOnly() throws Exception {
    TableIdentifier t1 = TableIdentifier.of(a, "t1");
    writer.loadTable(t1).updateProperties().set("k", "v").commit();
    assertEquals("v", catalog.loadTable(t1).properties().get("k"));
    TableIdentifier t9 = TableIdentifier.of(a, "t9");
    writer.createTable(t9, EVENTS);
    writer.renameTable(t9, TableIdentifier.of(a, "t9r"));
    assertTrue(writer.dropTable(TableIdentifier.of(a, "t9r"), false));
    // (JdbcCatalog creates a table without looking for its namespace unless jdbc.strict-mode is
    // on; the row it inserts is refused)
    RuntimeException create =
        assertThrows(RuntimeException.class, () -> writer.createTable(TableIdentifier.of(b, "x"), EVENTS));
    assertTrue(causes(create).contains("row-level security"), causes(create));
    assertFalse(catalog.tableExists(TableIdentifier.of(b, "x")));
    assertFalse(writer.dropTable(TableIdentifier.of(b, "t3"), false));
    assertTrue(catalog.tableExists(TableIdentifier.of(b, "t3")));
    List<List<String>> rows =
        Skade.query(conn,
            "SELECT op, committed_by FROM skade.commit_log WHERE catalog_name = ? AND table_namespace = ?"
                + " AND committed_by = 'jv_priv_writer' ORDER BY seq",
            Skade.CATALOG, a.level(0));
    assertEquals(
        List.of(List.of("commit", "jv_priv_writer"), List.of("create", "jv_priv_writer"),
            List.of("rename", "jv_priv_writer"), List.of("drop", "jv_priv_writer")),
        rows);
  }
}
