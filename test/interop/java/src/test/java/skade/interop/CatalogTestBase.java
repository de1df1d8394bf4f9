package skade.interop;

import java.sql.Connection;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * One JdbcCatalog named java_cat (stock properties only), one plain JDBC connection for the
 * cross checks, and a namespace of this class's own, unique to the run.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class CatalogTestBase {
  static final Schema EVENTS =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.required(2, "category", Types.StringType.get()),
          Types.NestedField.optional(3, "amount", Types.DoubleType.get()),
          Types.NestedField.optional(4, "ts", Types.TimestampType.withZone()));

  static final PartitionSpec EVENTS_SPEC =
      PartitionSpec.builderFor(EVENTS).identity("category").day("ts").build();

  static final OffsetDateTime T0 = OffsetDateTime.of(2026, 3, 1, 12, 0, 0, 0, ZoneOffset.UTC);

  protected JdbcCatalog catalog;
  protected Connection conn;
  protected CommitLog log;
  protected Namespace ns;

  @BeforeAll
  void openCatalog() throws Exception {
    catalog = Skade.catalog(Skade.CATALOG);
    conn = Skade.connect();
    log = new CommitLog(conn, Skade.CATALOG);
    ns = Namespace.of(Skade.unique(getClass().getSimpleName().toLowerCase()));
    catalog.createNamespace(ns);
  }

  @AfterAll
  void closeCatalog() throws Exception {
    if (catalog != null) {
      catalog.close();
    }
    if (conn != null) {
      conn.close();
    }
  }

  /** Rows id from..to of EVENTS: categories a/b/c, days spread over three days. */
  static List<Record> events(int from, int to) {
    List<Record> out = new ArrayList<>();
    for (int i = from; i <= to; i++) {
      out.add(
          Rows.rec(
              EVENTS,
              (long) i,
              String.valueOf((char) ('a' + i % 3)),
              i * 1.5,
              T0.plusDays(i % 2).plusMinutes(i)));
    }
    return out;
  }
}
