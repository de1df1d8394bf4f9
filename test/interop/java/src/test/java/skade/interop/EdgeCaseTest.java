package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.Test;

/** Bad input and edge cases from the issue. */
class EdgeCaseTest extends CatalogTestBase {

  /** A client configured with another catalog name sees none of java_cat's objects. */
  @Test
  void otherCatalogNameSeesNothing() throws Exception {
    TableIdentifier id = TableIdentifier.of(ns, "private_table");
    Table mine = catalog.createTable(id, EVENTS, EVENTS_SPEC);
    log.expectTable(id, mine, "create");
    Rows.append(mine, events(1, 3));
    log.expectTable(id, mine, "commit");
    String myLocation = CommitLog.location(mine);

    CommitLog otherLog = new CommitLog(conn, "other_cat");
    try (JdbcCatalog other = Skade.catalog("other_cat")) {
      assertFalse(other.namespaceExists(ns));
      assertFalse(other.listNamespaces().contains(ns));
      assertThrows(NoSuchNamespaceException.class, () -> other.listTables(ns));
      assertThrows(NoSuchNamespaceException.class, () -> other.loadNamespaceMetadata(ns));
      assertFalse(other.tableExists(id));
      assertThrows(NoSuchTableException.class, () -> other.loadTable(id));
      // dropping "it" from the other catalog finds nothing and removes nothing
      assertFalse(other.dropTable(id, false));
      assertFalse(other.dropNamespace(ns));
      assertTrue(catalog.tableExists(id));
      for (Namespace n : catalog.listNamespaces()) {
        if (n.level(0).startsWith(getClass().getSimpleName().toLowerCase())) {
          assertFalse(other.namespaceExists(n), "other_cat sees " + n);
        }
      }

      // the same names in other_cat are independent objects
      other.createNamespace(ns, Map.of("owner", "other"));
      Table theirs = other.createTable(id, EVENTS);
      otherLog.expectTable(id, theirs, "create");
      assertNotEquals(myLocation, CommitLog.location(theirs));
      assertNull(theirs.currentSnapshot());
      assertEquals(myLocation, log.skadeLocation(id));
      assertNull(catalog.loadNamespaceMetadata(ns).get("owner"));
      assertTrue(other.dropTable(id, true));
      otherLog.expectDropped(id, "TABLE", CommitLog.location(theirs));
      assertTrue(other.dropNamespace(ns));
    }
    log.expectNothing(id);
    assertEquals(myLocation, CommitLog.location(catalog.loadTable(id)));
  }

  /**
   * Java's default (non-strict) mode creates tables in namespaces that do not exist, as on
   * any JDBC catalog; the namespace then exists through the table alone. Strict mode refuses.
   */
  @Test
  void tableInMissingNamespace() throws Exception {
    Namespace ghost = Namespace.of(Skade.unique("ghost"));
    assertFalse(catalog.namespaceExists(ghost));
    TableIdentifier id = TableIdentifier.of(ghost, "t");
    Table t = catalog.createTable(id, EVENTS);
    log.expectTable(id, t, "create");
    assertTrue(catalog.namespaceExists(ghost));
    assertTrue(catalog.listNamespaces().contains(ghost));
    assertEquals(List.of(id), catalog.listTables(ghost));
    assertEquals(
        "0",
        Skade.queryOne(
            conn,
            "SELECT count(*) FROM iceberg_namespace_properties"
                + " WHERE catalog_name = ? AND namespace = ?",
            Skade.CATALOG,
            ghost.level(0)));
    Rows.append(t, events(1, 2));
    log.expectTable(id, t, "commit");
    assertEquals(2, Rows.read(catalog.loadTable(id)).size());
    String last = CommitLog.location(t);
    assertTrue(catalog.dropTable(id));
    log.expectDropped(id, "TABLE", last);
    assertFalse(catalog.namespaceExists(ghost), "the namespace lived through its table only");

    Namespace ghost2 = Namespace.of(Skade.unique("ghost_strict"));
    TableIdentifier id2 = TableIdentifier.of(ghost2, "t");
    try (JdbcCatalog strict = Skade.catalog(Skade.CATALOG, Map.of("jdbc.strict-mode", "true"))) {
      assertThrows(NoSuchNamespaceException.class, () -> strict.createTable(id2, EVENTS));
    }
    log.expectNothing(id2);
    assertFalse(catalog.namespaceExists(ghost2));
  }

  /** Rows written by an old client that knows no iceberg_type column load and commit fine. */
  @Test
  void v0StyleRows() throws Exception {
    // a real table to borrow metadata from; dropped without purge, so its files stay
    TableIdentifier src = TableIdentifier.of(ns, "v0_source");
    Table source = catalog.createTable(src, EVENTS, EVENTS_SPEC);
    log.expectTable(src, source, "create");
    List<Record> rows = events(1, 4);
    Rows.append(source, rows);
    log.expectTable(src, source, "commit");
    String loc = CommitLog.location(source);
    assertTrue(catalog.dropTable(src, false));
    log.expectDropped(src, "TABLE", loc);

    // 1. the INSERT a V0 client sends: no iceberg_type column named at all
    TableIdentifier v0 = TableIdentifier.of(ns, "v0_insert");
    Skade.update(
        conn,
        "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name,"
            + " metadata_location, previous_metadata_location) VALUES (?, ?, ?, ?, NULL)",
        Skade.CATALOG,
        CommitLog.ns(v0),
        v0.name(),
        loc);
    // 2. a row whose iceberg_type is NULL (a V0 table later upgraded by ALTER ... ADD COLUMN)
    TableIdentifier nul = TableIdentifier.of(ns, "v0_null_type");
    Skade.update(
        conn,
        "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name,"
            + " metadata_location, previous_metadata_location, iceberg_type)"
            + " VALUES (?, ?, ?, ?, NULL, NULL)",
        Skade.CATALOG,
        CommitLog.ns(nul),
        nul.name(),
        loc);
    assertNull(log.catalogRow(nul).get(1), "iceberg_type stays NULL");

    for (TableIdentifier id : List.of(v0, nul)) {
      List<CommitLog.Entry> created = log.expect(id, "TABLE", loc, "create");
      assertEquals("sql", created.get(0).source());
      assertTrue(catalog.tableExists(id), id.toString());
      assertTrue(catalog.listTables(ns).contains(id), id.toString());
      Table t = catalog.loadTable(id);
      assertEquals(loc, CommitLog.location(t));
      assertEquals(loc, log.skadeLocation(id));
      assertEquals(Rows.render(rows), Rows.render(Rows.read(t)));

      List<Record> more = events(10, 12);
      Rows.append(t, more);
      log.expectTable(id, t, "commit");
      List<Record> all = new ArrayList<>(rows);
      all.addAll(more);
      assertEquals(Rows.render(all), Rows.render(Rows.read(catalog.loadTable(id))));
    }
    // the NULL-typed row is still NULL-typed after the client's compare-and-swap
    assertNull(log.catalogRow(nul).get(1));

    TableIdentifier renamed = TableIdentifier.of(ns, "v0_null_type_renamed");
    catalog.renameTable(nul, renamed);
    Table r = catalog.loadTable(renamed);
    log.expectTable(renamed, r, "rename");
    assertTrue(catalog.dropTable(renamed, false));
    log.expectDropped(renamed, "TABLE", CommitLog.location(r));
  }

  /**
   * A client that dies between writing new metadata and committing leaves the catalog as it
   * was: the orphan file is ignored, skade.load_table and the log are unchanged.
   */
  @Test
  void crashBeforeCommitLeavesCatalogUnchanged() throws Exception {
    TableIdentifier id = TableIdentifier.of(ns, "crashy");
    Table table = catalog.createTable(id, EVENTS, EVENTS_SPEC);
    log.expectTable(id, table, "create");
    List<Record> rows = events(1, 4);
    Rows.append(table, rows);
    log.expectTable(id, table, "commit");
    String before = CommitLog.location(table);
    long snapshot = table.currentSnapshot().snapshotId();

    // 1. new metadata written through the table's own FileIO, never committed
    TableOperations ops = ((HasTableOperations) table).operations();
    TableMetadata base = ops.current();
    TableMetadata next =
        TableMetadata.buildFrom(base).setProperties(Map.of("crash", "before-commit")).build();
    String orphan = ops.metadataFileLocation("00099-" + UUID.randomUUID() + ".metadata.json");
    TableMetadataParser.write(next, ops.io().newOutputFile(orphan));
    assertTrue(ops.io().newInputFile(orphan).exists());
    // also data files and a manifest written by an append that never commits
    Rows.write(table, events(90, 95));

    log.expectNothing(id);
    assertEquals(before, log.skadeLocation(id));
    Table reloaded = catalog.loadTable(id);
    assertEquals(before, CommitLog.location(reloaded));
    assertNull(reloaded.properties().get("crash"));
    assertEquals(snapshot, reloaded.currentSnapshot().snapshotId());
    assertEquals(Rows.render(rows), Rows.render(Rows.read(reloaded)));

    // 2. the client's compare-and-swap sent, then the connection killed before COMMIT
    try (Connection doomed = Skade.connect()) {
      doomed.setAutoCommit(false);
      try (PreparedStatement ps =
          doomed.prepareStatement(
              "UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ?"
                  + " WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?"
                  + " AND metadata_location = ?"
                  + " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)")) {
        ps.setString(1, orphan);
        ps.setString(2, before);
        ps.setString(3, Skade.CATALOG);
        ps.setString(4, CommitLog.ns(id));
        ps.setString(5, id.name());
        ps.setString(6, before);
        assertEquals(1, ps.executeUpdate());
      }
      String pid = Skade.queryOne(doomed, "SELECT pg_backend_pid()::text");
      assertEquals(
          "t", Skade.queryOne(conn, "SELECT pg_terminate_backend(?::int)::text", pid).substring(0, 1));
    }
    // wait for the terminated backend to be gone, so its transaction is surely aborted
    for (int i = 0; i < 200; i++) {
      if (Skade.query(conn, "SELECT 1 FROM pg_stat_activity WHERE state = 'idle in transaction'"
              + " AND datname = current_database() AND query LIKE 'UPDATE iceberg_tables%'")
          .isEmpty()) {
        break;
      }
      Thread.sleep(25);
    }
    log.expectNothing(id);
    assertEquals(before, log.skadeLocation(id));
    table.refresh();
    assertEquals(before, CommitLog.location(table));

    // the table goes on normally
    Rows.append(table, events(5, 6));
    log.expectTable(id, table, "commit");
    assertEquals(before, log.entries(id).get(log.entries(id).size() - 1).previous());
    assertEquals(6, Rows.read(catalog.loadTable(id)).size());
  }
}
