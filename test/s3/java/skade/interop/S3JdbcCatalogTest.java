package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.OverwriteFiles;
import org.apache.iceberg.PartitionSpecParser;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.SortOrderParser;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The stock JdbcCatalog with Iceberg's S3FileIO (iceberg-aws, the AWS SDK v2 bundle) on the
 * local S3 server of test/s3/run.sh: endpoint override, path-style access, the key from the
 * environment. Every client write is cross-checked through skade's SQL functions as in the
 * interop suite (CommitLog.expectTable: load_table, the commit log, MetadataCheck with the
 * metadata object read back through the table's FileIO); files() and plan_files() against
 * Java's own planning; a table whose first metadata skade wrote on S3 is loaded, appended to
 * and scanned by Java.
 */
@Tag("s3")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class S3JdbcCatalogTest {
  static final String CATALOG = "java_s3";

  private JdbcCatalog catalog;
  private Connection conn;
  private CommitLog log;
  private Namespace ns;
  private String warehouse;

  /** What a user gives JdbcCatalog for an S3-compatible server. */
  static Map<String, String> s3Properties(String warehouse) {
    Map<String, String> p = new HashMap<>();
    p.put("warehouse", warehouse);
    p.put("io-impl", "org.apache.iceberg.aws.s3.S3FileIO");
    p.put("s3.endpoint", Skade.env("S3_ENDPOINT", null));
    p.put("s3.path-style-access", "true");
    p.put("s3.access-key-id", Skade.env("AWS_ACCESS_KEY_ID", null));
    p.put("s3.secret-access-key", Skade.env("AWS_SECRET_ACCESS_KEY", null));
    p.put("client.region", Skade.env("AWS_REGION", "us-east-1"));
    return p;
  }

  @BeforeAll
  void open() throws Exception {
    if (Skade.env("S3_ENDPOINT", null) == null) {
      throw new IllegalStateException("S3_ENDPOINT is not set: run through test/s3/run.sh");
    }
    warehouse = "s3://" + Skade.env("SKADE_S3_BUCKET", "skade-wh") + "/wh/java";
    catalog = Skade.catalog(CATALOG, s3Properties(warehouse));
    conn = Skade.connect();
    log = new CommitLog(conn, CATALOG);
    ns = Namespace.of(Skade.unique("s3java"));
    catalog.createNamespace(ns);
  }

  @AfterAll
  void close() throws Exception {
    if (catalog != null) {
      catalog.close();
    }
    if (conn != null) {
      conn.close();
    }
  }

  /** skade.files() (or plan_files() with a filter) of the current snapshot: path -> rows. */
  private Map<String, Long> skadeFiles(TableIdentifier id, String filter) throws Exception {
    Map<String, Long> out = new TreeMap<>();
    List<List<String>> rows =
        filter == null
            ? Skade.query(
                conn,
                "SELECT file_path, record_count FROM skade.files(?, ?, catalog => ?)",
                ns.toString(), id.name(), CATALOG)
            : Skade.query(
                conn,
                "SELECT file_path, record_count FROM skade.plan_files(?, ?, ?::jsonb, catalog => ?)"
                    + " WHERE content = 'data'",
                ns.toString(), id.name(), filter, CATALOG);
    for (List<String> r : rows) {
      out.put(r.get(0), Long.parseLong(r.get(1)));
    }
    return out;
  }

  private static Map<String, Long> javaFiles(Table table, org.apache.iceberg.expressions.Expression filter)
      throws Exception {
    Map<String, Long> out = new TreeMap<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().filter(filter).planFiles()) {
      for (FileScanTask t : tasks) {
        out.put(t.file().location(), t.file().recordCount());
      }
    }
    return out;
  }

  @Test
  void createAppendOverwriteDeleteEvolveOnS3() throws Exception {
    TableIdentifier id = TableIdentifier.of(ns, "events");
    Table table =
        catalog
            .buildTable(id, CatalogTestBase.EVENTS)
            .withPartitionSpec(CatalogTestBase.EVENTS_SPEC)
            .create();
    assertTrue(CommitLog.location(table).startsWith(warehouse + "/"), CommitLog.location(table));
    log.expectTable(id, table, "create");

    List<Record> expected = new ArrayList<>();
    for (int[] b : new int[][] {{1, 9}, {10, 15}}) {
      List<Record> rows = CatalogTestBase.events(b[0], b[1]);
      Rows.append(table, rows);
      expected.addAll(rows);
      log.expectTable(id, table, "commit");
    }
    long afterAppends = table.currentSnapshot().snapshotId();

    // overwrite category 'a' with new rows
    List<Record> replacement = new ArrayList<>();
    for (Record r : CatalogTestBase.events(100, 108)) {
      if ("a".equals(r.getField("category"))) {
        replacement.add(r);
      }
    }
    OverwriteFiles overwrite =
        table.newOverwrite().overwriteByRowFilter(Expressions.equal("category", "a"));
    for (DataFile f : Rows.write(table, replacement)) {
      overwrite.addFile(f);
    }
    overwrite.commit();
    expected.removeIf(r -> "a".equals(r.getField("category")));
    expected.addAll(replacement);
    log.expectTable(id, table, "commit");

    // delete category 'b' (whole files: a metadata delete)
    table.newDelete().deleteFromRowFilter(Expressions.equal("category", "b")).commit();
    expected.removeIf(r -> "b".equals(r.getField("category")));
    log.expectTable(id, table, "commit");
    assertEquals(Rows.render(expected), Rows.render(Rows.read(table)));

    // schema and partition evolution, an append with the new column, a tag
    table.updateSchema().addColumn("note", Types.StringType.get()).commit();
    log.expectTable(id, table, "commit");
    table.updateSpec().addField(Expressions.bucket("id", 4)).commit();
    log.expectTable(id, table, "commit");
    List<Record> newer = new ArrayList<>();
    for (int i = 200; i < 206; i++) {
      newer.add(
          Rows.rec(table.schema(), (long) i, "c", 1.0 * i, CatalogTestBase.T0.plusMinutes(i), "n" + i));
    }
    Rows.append(table, newer);
    log.expectTable(id, table, "commit");
    table.manageSnapshots().createTag("after-appends", afterAppends).commit();
    log.expectTable(id, table, "commit");

    Table loaded = catalog.loadTable(id);
    List<Record> all = Rows.as(loaded.schema(), expected);
    all.addAll(newer);
    assertEquals(Rows.render(all), Rows.render(Rows.read(loaded)));

    // skade's file listing and planning against Java's
    assertEquals(javaFiles(loaded, Expressions.alwaysTrue()), skadeFiles(id, null));
    assertEquals(
        javaFiles(loaded, Expressions.equal("category", "c")),
        skadeFiles(id, "{\"type\": \"eq\", \"term\": \"category\", \"value\": \"c\"}"));
    // the files holding ids >= 200 (the last append's) are planned, and fewer than all
    Map<String, Long> planned =
        skadeFiles(id, "{\"type\": \"gt-eq\", \"term\": \"id\", \"value\": 200}");
    for (DataFile f : loaded.snapshot(loaded.refs().get("main").snapshotId()).addedDataFiles(loaded.io())) {
      assertTrue(planned.containsKey(f.location()), "plan_files(id >= 200) misses " + f.location());
    }
    assertTrue(planned.size() < skadeFiles(id, null).size(), "plan_files(id >= 200) pruned nothing");
    for (String p : skadeFiles(id, null).keySet()) {
      assertTrue(p.startsWith(warehouse + "/"), p);
    }
  }

  @Test
  void tableSkadeCreatedOnS3IsUsedByJava() throws Exception {
    org.apache.iceberg.Schema request = CatalogTestBase.EVENTS;
    TableIdentifier id = TableIdentifier.of(ns, "created");
    String location = warehouse + "/" + ns + "/created";
    String meta =
        Skade.queryOne(
            conn,
            "SELECT skade.create_table(?, ?, ?::jsonb, ?::jsonb, ?::jsonb, '{\"owner\": \"skade\"}', ?, 2, ?)",
            ns.toString(),
            "created",
            SchemaParser.toJson(request),
            PartitionSpecParser.toJson(CatalogTestBase.EVENTS_SPEC),
            SortOrderParser.toJson(SortOrder.unsorted()),
            location,
            CATALOG);
    assertTrue(meta.startsWith(location + "/metadata/00000-"), meta);

    Table table = catalog.loadTable(id);
    log.expectTable(id, table, "create");
    assertEquals(meta, CommitLog.location(table));
    assertEquals(location, table.location());
    assertEquals("skade", table.properties().get("owner"));
    assertEquals(CatalogTestBase.EVENTS_SPEC.fields().size(), table.spec().fields().size());

    List<Record> rows = Rows.as(table.schema(), CatalogTestBase.events(1, 8));
    Rows.append(table, rows);
    log.expectTable(id, table, "commit");
    assertEquals(Rows.render(rows), Rows.render(Rows.read(catalog.loadTable(id))));
    assertEquals(javaFiles(table, Expressions.alwaysTrue()), skadeFiles(id, null));
  }
}
