package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.util.List;
import java.util.stream.Stream;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.Test;

/**
 * The committed fixtures of test/data/clients/java are usable as their README says: copied to the
 * warehouse path they were written under (or, with SKADE_JAVA_FIXTURE_WAREHOUSE, a copy whose
 * recorded paths were rewritten to where it is), registered (through skade.register_table and through
 * JdbcCatalog.registerTable), and read by the client.
 */
class FixturesReadTest {
  private static final Path FIXTURES = Path.of("../../data/clients/java");

  @Test
  void registerAndReadCommittedFixtures() throws Exception {
    List<String> lines = Files.readAllLines(FIXTURES.resolve("tables.tsv"));
    assertEquals("table\tmetadata_location\tsnapshots\trows\tcurrent_snapshot_id", lines.get(0));
    // the warehouse they were written under, from the first table's own metadata
    String[] first = lines.get(1).split("\t");
    String json = Files.readString(FIXTURES.resolve("warehouse").resolve(first[1]));
    String tableLocation = TableMetadataParser.fromJson(json).location();
    String tableDir = first[0].replace('.', '/');
    assertTrue(tableLocation.endsWith("/" + tableDir), tableLocation);
    Path wh;
    String rehomed = System.getenv("SKADE_JAVA_FIXTURE_WAREHOUSE");
    if (rehomed != null && !rehomed.isEmpty()) {
      // test/interop/run.sh: a copy with every recorded path rewritten (test/fixtures.py)
      wh = Path.of(rehomed);
    } else {
      wh = Path.of(tableLocation.substring(0, tableLocation.length() - tableDir.length() - 1));
      copyTree(FIXTURES.resolve("warehouse"), wh);
    }

    String cat = Skade.unique("java_fixture_check");
    Namespace ns = Namespace.of("fixtures");
    try (JdbcCatalog catalog = Skade.catalog(cat);
        Connection conn = Skade.connect()) {
      Skade.allowFileAccess(conn, wh.toString());
      CommitLog log = new CommitLog(conn, cat);
      catalog.createNamespace(ns);
      for (int i = 1; i < lines.size(); i++) {
        String[] f = lines.get(i).split("\t");
        TableIdentifier id = TableIdentifier.parse(f[0]);
        String location = wh.resolve(f[1]).toString();
        Table table;
        if (i % 2 == 1) {
          Skade.queryOne(
              conn,
              "SELECT skade.register_table(?, ?, ?, ?)",
              CommitLog.ns(id),
              id.name(),
              location,
              cat);
          table = catalog.loadTable(id);
          log.expectTable(id, table, "register");
        } else {
          table = catalog.registerTable(id, location);
          log.expectTable(id, table, "create");
        }
        int snapshots = 0;
        for (var s : table.snapshots()) {
          snapshots++;
        }
        assertEquals(Integer.parseInt(f[2]), snapshots, f[0]);
        assertEquals(Integer.parseInt(f[3]), Rows.read(table).size(), f[0]);
        assertEquals(Long.parseLong(f[4]), table.currentSnapshot().snapshotId(), f[0]);
        assertTrue(catalog.dropTable(id, false));
      }
      catalog.dropNamespace(ns);
    }
  }

  private static void copyTree(Path from, Path to) throws Exception {
    try (Stream<Path> files = Files.walk(from)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }
}
