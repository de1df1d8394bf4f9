package skade.interop;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.jdbc.JdbcCatalog;

/**
 * Connection settings and plain-JDBC helpers shared by every test.
 *
 * <p>The database comes from the libpq environment (PGHOST, PGPORT, PGUSER, PGDATABASE,
 * PGPASSWORD); the warehouse from SKADE_WAREHOUSE (a local directory). A PGHOST that is a
 * socket directory (starts with '/') is replaced by 127.0.0.1, since pgjdbc speaks TCP only.
 */
final class Skade {
  static final String CATALOG = "java_cat";

  private static String warehouse;

  private Skade() {}

  static String env(String key, String dflt) {
    String v = System.getenv(key);
    return v == null || v.isEmpty() ? dflt : v;
  }

  static String host() {
    String h = env("PGHOST", "127.0.0.1");
    return h.startsWith("/") ? "127.0.0.1" : h;
  }

  static String jdbcUrl() {
    return "jdbc:postgresql://" + host() + ":" + env("PGPORT", "5432") + "/"
        + env("PGDATABASE", "postgres");
  }

  static synchronized String warehouse() {
    if (warehouse == null) {
      String w = env("SKADE_WAREHOUSE", null);
      try {
        Path p = w == null ? Files.createTempDirectory("skade-java-wh") : Path.of(w);
        Files.createDirectories(p);
        warehouse = p.toAbsolutePath().toString();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return warehouse;
  }

  /** The properties a user would give JdbcCatalog; nothing skade-specific. */
  static Map<String, String> catalogProperties(String warehouseDir) {
    Map<String, String> props = new HashMap<>();
    props.put("uri", jdbcUrl());
    props.put("warehouse", warehouseDir);
    props.put("jdbc.user", env("PGUSER", "postgres"));
    String pw = env("PGPASSWORD", null);
    if (pw != null) {
      props.put("jdbc.password", pw);
    }
    return props;
  }

  static JdbcCatalog catalog(String name) {
    return catalog(name, Map.of());
  }

  static JdbcCatalog catalog(String name, Map<String, String> extra) {
    Map<String, String> props = catalogProperties(warehouse());
    props.putAll(extra);
    JdbcCatalog cat = new JdbcCatalog();
    cat.initialize(name, props);
    return cat;
  }

  static Connection connect() throws SQLException {
    java.util.Properties p = new java.util.Properties();
    p.setProperty("user", env("PGUSER", "postgres"));
    String pw = env("PGPASSWORD", null);
    if (pw != null) {
      p.setProperty("password", pw);
    }
    return DriverManager.getConnection(jdbcUrl(), p);
  }

  /**
   * Lets skade read metadata files under the given directories in this session, as a superuser
   * would configure skade.allowed_roots for the warehouse. Does nothing when the roots are
   * already allowed, when the build has no such setting, or when the user is no superuser
   * (then the server's configuration must allow them).
   */
  static void allowFileAccess(Connection c, String... roots) throws SQLException {
    String current =
        queryOne(c, "SELECT coalesce(current_setting('skade.allowed_roots', true), '<none>')");
    if ("<none>".equals(current)
        || !"t".equals(queryOne(c, "SELECT rolsuper::text FROM pg_roles WHERE rolname = current_user").substring(0, 1))) {
      return;
    }
    List<String> list = new ArrayList<>();
    for (String r : current.split(",")) {
      if (!r.isBlank()) {
        list.add(r.trim());
      }
    }
    boolean changed = false;
    for (String root : roots) {
      String abs = Path.of(root).toAbsolutePath().normalize().toString();
      boolean covered = list.stream().anyMatch(r -> abs.equals(r) || abs.startsWith(r + "/"));
      if (!covered) {
        list.add(abs);
        changed = true;
      }
    }
    if (changed) {
      queryOne(c, "SELECT set_config('skade.allowed_roots', ?, false)", String.join(",", list));
    }
  }

  /** A name no earlier run on the same database used. */
  static String unique(String prefix) {
    return prefix + "_" + UUID.randomUUID().toString().substring(0, 8);
  }

  /** Runs a query with string parameters and returns every row as a list of strings. */
  static List<List<String>> query(Connection c, String sql, Object... params) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        int n = rs.getMetaData().getColumnCount();
        List<List<String>> rows = new ArrayList<>();
        while (rs.next()) {
          List<String> row = new ArrayList<>(n);
          for (int i = 1; i <= n; i++) {
            row.add(rs.getString(i));
          }
          rows.add(row);
        }
        return rows;
      }
    }
  }

  static String queryOne(Connection c, String sql, Object... params) throws SQLException {
    List<List<String>> rows = query(c, sql, params);
    if (rows.size() != 1 || rows.get(0).size() != 1) {
      throw new AssertionError("expected one value from " + sql + ", got " + rows);
    }
    return rows.get(0).get(0);
  }

  static int update(Connection c, String sql, Object... params) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      return ps.executeUpdate();
    }
  }
}
