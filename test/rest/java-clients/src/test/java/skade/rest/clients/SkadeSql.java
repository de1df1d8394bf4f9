/*
 * SkadeSql: skade's view of the REST catalog, over JDBC as the superuser (PostgreSQL driver
 * from Maven): the pointer rows, skade.snapshots() / refs(), the commit log and the stored
 * Idempotency-Key answers.  Every query is read-only and autocommit; the connection is the
 * test's own (no locking).
 */
package skade.rest.clients;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

final class SkadeSql implements AutoCloseable {

  /** A skade.commit_log row. */
  record LogRow(long seq, String op, String source, String namespace, String name,
                String metadataLocation, String prevName, String committedBy, Long snapshotId) {}

  /** A skade.snapshots() row. */
  record Snap(long id, Long parent, String operation, boolean current) {}

  private final Connection conn;
  private final String catalog;

  SkadeSql(String url, String user, String catalog) throws SQLException {
    this.conn = DriverManager.getConnection(url, user, null);
    this.conn.setAutoCommit(true);
    this.catalog = catalog;
  }

  private PreparedStatement prepare(String sql, Object... args) throws SQLException {
    PreparedStatement st = conn.prepareStatement(sql);
    for (int i = 0; i < args.length; i++) {
      st.setObject(i + 1, args[i]);
    }
    return st;
  }

  /** The table's metadata_location in iceberg_tables, or null when there is no row. */
  String metadataLocation(String ns, String name) throws SQLException {
    try (PreparedStatement st = prepare("SELECT metadata_location FROM public.iceberg_tables"
        + " WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?", catalog, ns, name);
         ResultSet rs = st.executeQuery()) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  Map<String, String> namespaceProperties(String ns) throws SQLException {
    Map<String, String> out = new TreeMap<>();
    try (PreparedStatement st = prepare("SELECT property_key, property_value"
        + " FROM public.iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ?",
        catalog, ns); ResultSet rs = st.executeQuery()) {
      while (rs.next()) {
        out.put(rs.getString(1), rs.getString(2));
      }
    }
    return out;
  }

  List<Snap> snapshots(String ns, String name) throws SQLException {
    List<Snap> out = new ArrayList<>();
    try (PreparedStatement st = prepare("SELECT snapshot_id, parent_id, operation, is_current"
        + " FROM skade.snapshots(?, ?, ?) ORDER BY sequence_number", ns, name, catalog);
         ResultSet rs = st.executeQuery()) {
      while (rs.next()) {
        out.add(new Snap(rs.getLong(1), (Long) rs.getObject(2), rs.getString(3), rs.getBoolean(4)));
      }
    }
    return out;
  }

  /** refs(): name -> "type:snapshot_id". */
  Map<String, String> refs(String ns, String name) throws SQLException {
    Map<String, String> out = new TreeMap<>();
    try (PreparedStatement st = prepare("SELECT name, type, snapshot_id FROM skade.refs(?, ?, ?)",
        ns, name, catalog); ResultSet rs = st.executeQuery()) {
      while (rs.next()) {
        out.put(rs.getString(1), rs.getString(2).toLowerCase() + ":" + rs.getLong(3));
      }
    }
    return out;
  }

  long lastSeq() throws SQLException {
    try (PreparedStatement st = prepare("SELECT coalesce(max(seq), 0) FROM skade.commit_log");
         ResultSet rs = st.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** The commit-log rows of this catalog after seq, in order. */
  List<LogRow> logSince(long seq) throws SQLException {
    List<LogRow> out = new ArrayList<>();
    try (PreparedStatement st = prepare("SELECT seq, op, source, table_namespace, table_name,"
        + " metadata_location, prev_name, committed_by, snapshot_id FROM skade.commit_log"
        + " WHERE catalog_name = ? AND seq > ? ORDER BY seq", catalog, seq);
         ResultSet rs = st.executeQuery()) {
      while (rs.next()) {
        out.add(new LogRow(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4),
            rs.getString(5), rs.getString(6), rs.getString(7), rs.getString(8),
            (Long) rs.getObject(9)));
      }
    }
    return out;
  }

  /** The route skade stored the answer of role's Idempotency-Key under, or null. */
  String idempotencyRoute(String role, String key) throws SQLException {
    try (PreparedStatement st = prepare("SELECT i.method || ' ' || i.route FROM skade.rest_idempotency i"
        + " JOIN pg_roles r ON r.oid = i.role_oid WHERE r.rolname = ? AND i.key = ?",
        role, key); ResultSet rs = st.executeQuery()) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  @Override
  public void close() throws SQLException {
    conn.close();
  }
}
