package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Writes the fixture tables of test/data/clients/java (run by test/data/clients/java/regenerate.sh).
 *
 * <p>The warehouse is SKADE_FIXTURE_WAREHOUSE (default /tmp/skade-fixtures/java), which must be
 * empty: the metadata written there holds absolute paths under it. Catalog name java_fixtures.
 * Besides the tables, writes tables.tsv (one line per table) at the warehouse root.
 */
@Tag("fixtures")
class FixturesTest {
  static final String CATALOG = "java_fixtures";
  static final Namespace NS = Namespace.of("fixtures");
  static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.required(2, "category", Types.StringType.get()),
          Types.NestedField.optional(3, "amount", Types.DoubleType.get()),
          Types.NestedField.optional(4, "ts", Types.TimestampType.withZone()));
  static final OffsetDateTime T0 = OffsetDateTime.of(2026, 1, 15, 8, 30, 0, 0, ZoneOffset.UTC);

  private static Record row(Schema s, long id, String cat, double amount, String note) {
    Record r = Rows.rec(s, id, cat, amount, T0.plusHours(id));
    if (note != null) {
      r.setField("note", note);
    }
    return r;
  }

  @Test
  void writeFixtures() throws Exception {
    Path wh = Path.of(Skade.env("SKADE_FIXTURE_WAREHOUSE", "/tmp/skade-fixtures/java"));
    Files.createDirectories(wh);
    try (Stream<Path> s = Files.list(wh)) {
      assertEquals(0, s.count(), wh + " must be empty");
    }
    Map<String, String> props = Skade.catalogProperties(wh.toString());
    JdbcCatalog catalog = new JdbcCatalog();
    catalog.initialize(CATALOG, props);
    try (catalog) {
      for (String name : List.of("events", "events_gz")) {
        TableIdentifier id = TableIdentifier.of(NS, name);
        if (catalog.tableExists(id)) { // pointers of an earlier generation; files are gone
          catalog.dropTable(id, false);
        }
      }
      if (!catalog.namespaceExists(NS)) {
        catalog.createNamespace(NS, Map.of("comment", "skade fixtures written by Java"));
      }
      List<String> tsv = new ArrayList<>();
      tsv.add("table\tmetadata_location\tsnapshots\trows\tcurrent_snapshot_id");

      // events: partitioned by category; append, append, add column, append
      TableIdentifier events = TableIdentifier.of(NS, "events");
      Table t =
          catalog
              .buildTable(events, SCHEMA)
              .withPartitionSpec(PartitionSpec.builderFor(SCHEMA).identity("category").build())
              .withProperty("write.metadata.previous-versions-max", "10")
              .create();
      List<Record> b1 =
          List.of(
              row(SCHEMA, 1, "a", 10.5, null),
              row(SCHEMA, 2, "b", 20.0, null),
              row(SCHEMA, 3, "a", 30.25, null),
              row(SCHEMA, 4, "b", 40.0, null));
      Rows.append(t, b1);
      List<Record> b2 = List.of(row(SCHEMA, 5, "a", 50.0, null), row(SCHEMA, 6, "a", 60.0, null));
      Rows.append(t, b2);
      t.updateSchema().addColumn("note", Types.StringType.get()).commit();
      Schema evolved = t.schema();
      List<Record> b3 =
          List.of(row(evolved, 7, "c", 70.0, "seven"), row(evolved, 8, "c", 80.0, "eight"));
      Rows.append(t, b3);
      int rows = Rows.read(catalog.loadTable(events)).size();
      assertEquals(8, rows);
      tsv.add(line(wh, events, t, rows));

      // events_gz: unpartitioned, gzip-compressed metadata JSON
      TableIdentifier gz = TableIdentifier.of(NS, "events_gz");
      Table g =
          catalog
              .buildTable(gz, SCHEMA)
              .withProperty("write.metadata.compression-codec", "gzip")
              .create();
      Rows.append(g, List.of(row(SCHEMA, 1, "a", 1.0, null), row(SCHEMA, 2, "b", 2.0, null)));
      assertTrue(CommitLog.location(g).endsWith(".gz.metadata.json"), CommitLog.location(g));
      rows = Rows.read(catalog.loadTable(gz)).size();
      assertEquals(2, rows);
      tsv.add(line(wh, gz, g, rows));

      Files.write(wh.resolve("tables.tsv"), tsv);
      // leave no pointers behind: the files are what the fixtures are
      catalog.dropTable(events, false);
      catalog.dropTable(gz, false);
      catalog.dropNamespace(NS);
    }
  }

  private static String line(Path wh, TableIdentifier id, Table t, int rows) {
    int snapshots = 0;
    for (Snapshot s : t.snapshots()) {
      snapshots++;
    }
    String rel = wh.relativize(Path.of(CommitLog.location(t))).toString().replace(File.separatorChar, '/');
    return id + "\t" + rel + "\t" + snapshots + "\t" + rows + "\t" + t.currentSnapshot().snapshotId();
  }
}
