package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.fail;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.view.BaseView;
import org.apache.iceberg.view.View;

/**
 * The cross checks run after every client write: skade.load_table() returns the client's
 * metadata location, and skade.commit_log gained exactly the expected rows, in order, each
 * chained to the one before it.
 */
final class CommitLog {
  /** One row of skade.commit_log. */
  record Entry(
      long seq,
      String op,
      String source,
      String icebergType,
      String location,
      String previous,
      String prevNamespace,
      String prevName) {}

  private final Connection conn;
  private final String catalog;
  private final Map<String, Integer> seen = new HashMap<>();

  CommitLog(Connection conn, String catalog) throws SQLException {
    this.conn = conn;
    this.catalog = catalog;
    Skade.allowFileAccess(conn, Skade.warehouse());
  }

  static String ns(TableIdentifier id) {
    return String.join(".", id.namespace().levels());
  }

  private static String key(TableIdentifier id) {
    return ns(id) + "\u0000" + id.name();
  }

  static String location(Table table) {
    return ((HasTableOperations) table).operations().current().metadataFileLocation();
  }

  static String location(View view) {
    return ((BaseView) view).operations().current().metadataFileLocation();
  }

  List<Entry> entries(TableIdentifier id) throws SQLException {
    List<Entry> out = new ArrayList<>();
    for (List<String> r :
        Skade.query(
            conn,
            "SELECT seq, op, source, iceberg_type, metadata_location, previous_metadata_location,"
                + " prev_namespace, prev_name FROM skade.commit_log"
                + " WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? ORDER BY seq",
            catalog,
            ns(id),
            id.name())) {
      out.add(
          new Entry(
              Long.parseLong(r.get(0)), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5), r.get(6),
              r.get(7)));
    }
    return out;
  }

  /** Takes the rows already logged for id as known (for names an earlier run may have used). */
  void mark(TableIdentifier id) throws SQLException {
    seen.put(key(id), entries(id).size());
  }

  int known(TableIdentifier id) {
    return seen.getOrDefault(key(id), 0);
  }

  /** skade.load_table(ns, name, catalog => catalog).metadata_location */
  String skadeLocation(TableIdentifier id) throws SQLException {
    return Skade.queryOne(
        conn,
        "SELECT metadata_location FROM skade.load_table(?, ?, catalog => ?)",
        ns(id),
        id.name(),
        catalog);
  }

  boolean skadeTableExists(TableIdentifier id) throws SQLException {
    return Boolean.parseBoolean(
        Skade.queryOne(conn, "SELECT skade.table_exists(?, ?, ?)::text", ns(id), id.name(), catalog));
  }

  /** The raw catalog row's (metadata_location, iceberg_type), or null when there is none. */
  List<String> catalogRow(TableIdentifier id) throws SQLException {
    List<List<String>> rows =
        Skade.query(
            conn,
            "SELECT metadata_location, iceberg_type FROM iceberg_tables"
                + " WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?",
            catalog,
            ns(id),
            id.name());
    return rows.isEmpty() ? null : rows.get(0);
  }

  /**
   * After a client table write: skade.load_table() points where the client does and, where
   * this build of skade returns the metadata too, that metadata is the client's current one;
   * then the new commit-log rows; then skade's metadata functions ({@link MetadataCheck}).
   */
  List<Entry> expectTable(TableIdentifier id, Table table, String... ops) throws SQLException {
    TableMetadata client = ((HasTableOperations) table).operations().current();
    String loc = client.metadataFileLocation();
    try (PreparedStatement ps = conn.prepareStatement("SELECT * FROM skade.load_table(?, ?, catalog => ?)")) {
      ps.setString(1, ns(id));
      ps.setString(2, id.name());
      ps.setString(3, catalog);
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next(), "skade.load_table() returned no row for " + id);
        assertEquals(
            loc, rs.getString("metadata_location"), "skade.load_table() vs client location");
        if (hasColumn(rs, "metadata")) {
          String json = rs.getString("metadata");
          assertNotNull(json, "skade.load_table() metadata of " + id);
          TableMetadata skade = TableMetadataParser.fromJson(loc, json);
          assertEquals(client.uuid(), skade.uuid(), "table-uuid");
          assertEquals(client.lastSequenceNumber(), skade.lastSequenceNumber());
          assertEquals(client.currentSchemaId(), skade.currentSchemaId());
          assertEquals(
              client.currentSnapshot() == null ? null : client.currentSnapshot().snapshotId(),
              skade.currentSnapshot() == null ? null : skade.currentSnapshot().snapshotId(),
              "current snapshot per skade.load_table() vs client");
          assertEquals(client.snapshots().size(), skade.snapshots().size());
          assertEquals(client.properties(), skade.properties());
        }
      }
    }
    List<Entry> fresh = expect(id, "TABLE", loc, ops);
    MetadataCheck.check(conn, catalog, id, table);
    return fresh;
  }

  private static boolean hasColumn(ResultSet rs, String name) throws SQLException {
    ResultSetMetaData md = rs.getMetaData();
    for (int i = 1; i <= md.getColumnCount(); i++) {
      if (name.equals(md.getColumnLabel(i))) {
        return true;
      }
    }
    return false;
  }

  /** After a client view write: the catalog row (a view, not a table) and the new log rows. */
  List<Entry> expectView(TableIdentifier id, View view, String... ops) throws SQLException {
    String loc = location(view);
    assertEquals(List.of(loc, "VIEW"), catalogRow(id), "iceberg_tables row of the view");
    return expect(id, "VIEW", loc, ops);
  }

  /** After a drop: no table any more, and the log's last row is the drop. */
  List<Entry> expectDropped(TableIdentifier id, String type, String lastLocation)
      throws SQLException {
    assertNull(catalogRow(id), "iceberg_tables still has a row for " + id);
    if ("TABLE".equals(type)) {
      assertFalse(skadeTableExists(id), "skade.table_exists after drop");
    }
    return expect(id, type, lastLocation, "drop");
  }

  /**
   * Asserts that exactly ops.length rows were appended to the log of id since the last check,
   * with these ops, in order, each chained to its predecessor; the last one points at location
   * (for a drop: was at location).
   */
  List<Entry> expect(TableIdentifier id, String type, String location, String... ops)
      throws SQLException {
    List<Entry> all = entries(id);
    int before = known(id);
    if (all.size() != before + ops.length) {
      fail(
          "commit_log of "
              + id
              + ": expected "
              + ops.length
              + " new row(s) "
              + List.of(ops)
              + " after "
              + before
              + ", log is "
              + all);
    }
    List<Entry> fresh = all.subList(before, all.size());
    for (int i = 0; i < ops.length; i++) {
      Entry e = fresh.get(i);
      int idx = before + i;
      Entry prior = idx > 0 ? all.get(idx - 1) : null;
      assertEquals(ops[i], e.op(), "op of new log row " + i + " of " + id + ": " + all);
      assertEquals(type, e.icebergType(), "iceberg_type in log row " + e);
      switch (e.op()) {
        case "create":
          assertNull(e.previous(), "a create has no previous location: " + e);
          break;
        case "commit":
          if (prior != null && prior.location() != null) {
            assertEquals(prior.location(), e.previous(), "commit chains to prior row: " + all);
          }
          break;
        case "drop":
          assertNull(e.location(), "a drop row has no location: " + e);
          break;
        default:
          break;
      }
    }
    Entry last = fresh.get(fresh.size() - 1);
    if ("drop".equals(last.op())) {
      assertEquals(location, last.previous(), "location the dropped table was at");
    } else {
      assertEquals(location, last.location(), "location in the newest log row");
    }
    seen.put(key(id), all.size());
    return fresh;
  }

  /** Asserts that nothing was logged for id since the last check. */
  void expectNothing(TableIdentifier id) throws SQLException {
    List<Entry> all = entries(id);
    assertEquals(known(id), all.size(), "unexpected commit_log rows for " + id + ": " + all);
  }

  /** For rename: moves the known count to the new name (its log starts with the rename). */
  void forget(TableIdentifier id) {
    seen.remove(key(id));
  }
}
