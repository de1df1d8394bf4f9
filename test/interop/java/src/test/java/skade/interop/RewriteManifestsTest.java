package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.TypeUtil;
import org.junit.jupiter.api.Test;

/**
 * skade.rewrite_manifests() on a table Java wrote (partitioned by identity and day): Java reads
 * the same rows from fewer manifests, plans the same files with the same sequence numbers, time
 * travels to the snapshot before the rewrite, and keeps committing on top of it.
 */
class RewriteManifestsTest extends CatalogTestBase {

  private static List<String> rowsAt(Table table, long snapshotId) throws Exception {
    List<Record> out = new ArrayList<>();
    try (CloseableIterable<Record> it = IcebergGenerics.read(table).useSnapshot(snapshotId).build()) {
      it.forEach(r -> out.add(r.copy()));
    }
    return Rows.sorted(Rows.render(out));
  }

  private static Map<String, String> plan(Table table, long snapshotId) throws Exception {
    Map<String, String> out = new HashMap<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().useSnapshot(snapshotId).planFiles()) {
      for (FileScanTask t : tasks) {
        out.put(
            t.file().location(),
            t.file().recordCount() + "/" + t.file().dataSequenceNumber() + "/"
                + t.file().fileSequenceNumber() + "/" + t.file().partition());
      }
    }
    return out;
  }

  /** Row id -> _row_id of every row at a snapshot, as Java's generic reader gives them. */
  private static Map<Long, Long> rowIds(Table table, long snapshotId) throws Exception {
    Schema withRowId = TypeUtil.join(table.schema(), new Schema(MetadataColumns.ROW_ID));
    Map<Long, Long> out = new HashMap<>();
    try (CloseableIterable<Record> it =
        IcebergGenerics.read(table).project(withRowId).useSnapshot(snapshotId).build()) {
      for (Record r : it) {
        assertEquals(null, out.put((Long) r.getField("id"), (Long) r.getField("_row_id")));
      }
    }
    return out;
  }

  /** Data file -> first_row_id (as Java's ManifestReader resolves it) at a snapshot. */
  private static Map<String, Long> firstRowIds(Table table, Snapshot snapshot) throws Exception {
    Map<String, Long> out = new HashMap<>();
    for (ManifestFile m : snapshot.dataManifests(table.io())) {
      try (ManifestReader<DataFile> reader = ManifestFiles.read(m, table.io(), table.specs())) {
        for (DataFile f : reader) {
          out.put(f.location(), f.firstRowId());
        }
      }
    }
    return out;
  }

  private static long nextRowId(Table table) {
    return ((HasTableOperations) table).operations().current().nextRowId();
  }

  /**
   * Format v3 (row lineage): Java appends four times to a v3 table; skade rewrites its manifests
   * and Java's own RewriteManifests rewrites a twin table with the same appends. Both give the
   * replace snapshot first-row-id = the old next-row-id and added-rows = the rows of the new
   * manifest, and move next-row-id alike; every data file keeps its first_row_id, so every row
   * keeps its _row_id (now, and by time travel), and Java's next append continues from the new
   * next-row-id.
   */
  @Test
  void rewriteManifestsOfAV3TableKeepsRowIdsAsJavaDoes() throws Exception {
    TableIdentifier id = TableIdentifier.of(ns, "rewritten_v3");
    TableIdentifier twinId = TableIdentifier.of(ns, "rewritten_v3_by_java");
    Table table = catalog.createTable(id, EVENTS, EVENTS_SPEC, Map.of("format-version", "3"));
    Table twin = catalog.createTable(twinId, EVENTS, EVENTS_SPEC, Map.of("format-version", "3"));
    for (int i = 0; i < 4; i++) {
      Rows.append(table, events(i * 4, i * 4 + 3));
      Rows.append(twin, events(i * 4, i * 4 + 3));
    }
    table.refresh();
    twin.refresh();
    Snapshot before = table.currentSnapshot();
    long nextBefore = nextRowId(table);
    assertEquals(16L, nextBefore);
    assertEquals(4, before.dataManifests(table.io()).size());
    Map<Long, Long> rowIdsBefore = rowIds(table, before.snapshotId());
    assertEquals(16, rowIdsBefore.size());
    assertEquals(16, new java.util.HashSet<>(rowIdsBefore.values()).size());
    assertTrue(rowIdsBefore.values().stream().allMatch(v -> v != null && v >= 0 && v < 16));
    assertEquals(rowIdsBefore, rowIds(twin, twin.currentSnapshot().snapshotId()));
    Map<String, Long> firstRowIdsBefore = firstRowIds(table, before);

    java.nio.file.Files.setPosixFilePermissions(
        java.nio.file.Path.of(table.location().replaceFirst("^file:", ""), "metadata"),
        java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
    List<String> result =
        Skade.query(
                conn,
                "SELECT manifests_replaced, manifests_created, manifests_kept"
                    + " FROM skade.rewrite_manifests(?, ?, catalog => ?)",
                CommitLog.ns(id),
                id.name(),
                Skade.CATALOG)
            .get(0);
    assertEquals(List.of("4", "1", "0"), result);
    // Java's RewriteManifests on the twin: everything into one manifest as well
    twin.rewriteManifests().clusterBy(f -> "all").commit();

    table.refresh();
    twin.refresh();
    Snapshot after = table.currentSnapshot();
    Snapshot javaAfter = twin.currentSnapshot();
    assertEquals(DataOperations.REPLACE, after.operation());
    assertEquals(DataOperations.REPLACE, javaAfter.operation());
    assertEquals(Long.valueOf(nextBefore), after.firstRowId());
    assertEquals(javaAfter.firstRowId(), after.firstRowId());
    assertEquals(Long.valueOf(16L), after.addedRows());
    assertEquals(javaAfter.addedRows(), after.addedRows());
    assertEquals(nextBefore + 16, nextRowId(table));
    assertEquals(nextRowId(twin), nextRowId(table));
    List<ManifestFile> manifests = after.allManifests(table.io());
    List<ManifestFile> javaManifests = javaAfter.allManifests(twin.io());
    assertEquals(1, manifests.size());
    assertEquals(1, javaManifests.size());
    assertEquals(javaManifests.get(0).firstRowId(), manifests.get(0).firstRowId());
    assertEquals(javaManifests.get(0).existingRowsCount(), manifests.get(0).existingRowsCount());

    // every file keeps its first_row_id, every row its _row_id; time travel reads the old ids
    assertEquals(firstRowIdsBefore, firstRowIds(table, after));
    assertEquals(rowIdsBefore, rowIds(table, after.snapshotId()));
    assertEquals(rowIdsBefore, rowIds(twin, javaAfter.snapshotId()));
    assertEquals(rowIdsBefore, rowIds(table, before.snapshotId()));

    // Java appends on top: the old rows keep their ids, the new ones start at next-row-id
    Rows.append(table, events(100, 103));
    table.refresh();
    Map<Long, Long> rowIdsNow = rowIds(table, table.currentSnapshot().snapshotId());
    for (Map.Entry<Long, Long> e : rowIdsBefore.entrySet()) {
      assertEquals(e.getValue(), rowIdsNow.get(e.getKey()));
    }
    for (long i = 100; i <= 103; i++) {
      assertTrue(rowIdsNow.get(i) >= nextBefore + 16, "row " + i + ": " + rowIdsNow.get(i));
    }
    assertEquals(Long.valueOf(nextBefore + 16), table.currentSnapshot().firstRowId());
  }

  @Test
  void rewriteManifestsIsReadByJava() throws Exception {
    TableIdentifier id = TableIdentifier.of(ns, "rewritten");
    Table table = catalog.createTable(id, EVENTS, EVENTS_SPEC);
    List<Record> all = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      List<Record> batch = events(i * 4, i * 4 + 3);
      Rows.append(table, batch);
      all.addAll(batch);
    }
    table.refresh();
    Snapshot before = table.currentSnapshot();
    assertEquals(6, before.allManifests(table.io()).size());
    List<String> expected = Rows.sorted(Rows.render(all));
    assertEquals(expected, Rows.sorted(Rows.render(Rows.read(table))));

    // the server (another OS user here) writes the new manifests next to the client's
    java.nio.file.Files.setPosixFilePermissions(
        java.nio.file.Path.of(table.location().replaceFirst("^file:", ""), "metadata"),
        java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
    List<String> result =
        Skade.query(
                conn,
                "SELECT metadata_location, snapshot_id, manifests_replaced, manifests_created,"
                    + " manifests_kept, entries_rewritten FROM skade.rewrite_manifests(?, ?, catalog => ?)",
                CommitLog.ns(id),
                id.name(),
                Skade.CATALOG)
            .get(0);
    assertEquals("6", result.get(2));
    assertEquals("1", result.get(3));
    assertEquals("0", result.get(4));

    table.refresh();
    assertEquals(result.get(0), CommitLog.location(table));
    Snapshot after = table.currentSnapshot();
    assertEquals(Long.parseLong(result.get(1)), after.snapshotId());
    assertEquals(before.snapshotId(), after.parentId());
    assertEquals(DataOperations.REPLACE, after.operation());
    assertEquals("6", after.summary().get("manifests-replaced"));
    assertEquals(before.summary().get("total-records"), after.summary().get("total-records"));
    List<ManifestFile> manifests = after.allManifests(table.io());
    assertEquals(1, manifests.size());
    assertEquals(0, manifests.get(0).addedFilesCount());
    assertEquals(Integer.parseInt(result.get(5)), manifests.get(0).existingFilesCount());
    assertEquals(after.sequenceNumber(), manifests.get(0).sequenceNumber());
    assertEquals(1L, manifests.get(0).minSequenceNumber());

    // the same rows, files, sequence numbers and partitions; time travel; a pruned scan
    assertEquals(expected, Rows.sorted(Rows.render(Rows.read(table))));
    assertEquals(expected, rowsAt(table, before.snapshotId()));
    assertEquals(plan(table, before.snapshotId()), plan(table, after.snapshotId()));
    List<String> onlyB = new ArrayList<>();
    for (Record r : all) {
      if ("b".equals(r.getField("category"))) {
        onlyB.add(Rows.render(List.of(r)).get(0));
      }
    }
    assertEquals(
        Rows.sorted(onlyB),
        Rows.sorted(Rows.render(Rows.read(table, Expressions.equal("category", "b")))));

    // Java appends on top of the replace snapshot; a second rewrite merges again
    List<Record> more = events(100, 103);
    Rows.append(table, more);
    all.addAll(more);
    Skade.query(
        conn, "SELECT * FROM skade.rewrite_manifests(?, ?, catalog => ?)", CommitLog.ns(id), id.name(), Skade.CATALOG);
    table.refresh();
    assertEquals(1, table.currentSnapshot().allManifests(table.io()).size());
    assertEquals(Rows.sorted(Rows.render(all)), Rows.sorted(Rows.render(Rows.read(table))));
    assertTrue(table.currentSnapshot().sequenceNumber() > after.sequenceNumber());
  }

  /**
   * The pyiceberg-written fixture (test/data/clients/python: identity and day partitions, an overwrite
   * and a copy-on-write delete), copied into the warehouse and registered: after the rewrite Java
   * reads the same rows, now and at the snapshot before.
   */
  @Test
  void rewriteManifestsOfAPyicebergTableIsReadByJava() throws Exception {
    String index = Skade.env("SKADE_PY_FIXTURES", null);
    org.junit.jupiter.api.Assumptions.assumeTrue(index != null, "SKADE_PY_FIXTURES is not set");
    java.nio.file.Path src = java.nio.file.Path.of(index, "warehouse", "fixtures", "events", "metadata");
    java.nio.file.Path dst = java.nio.file.Path.of(Skade.warehouse(), ns.toString(), "py_events");
    java.nio.file.Path meta = dst.resolve("metadata");
    java.nio.file.Files.createDirectories(meta);
    try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.list(src)) {
      for (java.nio.file.Path f : (Iterable<java.nio.file.Path>) files::iterator) {
        java.nio.file.Files.copy(f, meta.resolve(f.getFileName()));
      }
    }
    java.nio.file.Files.setPosixFilePermissions(
        meta, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
    java.nio.file.Path current = meta.resolve("00005-a77c57c8-afa0-4139-a90d-8815af754260.metadata.json");
    String text = java.nio.file.Files.readString(current);
    java.nio.file.Files.writeString(
        current, text.replaceFirst("\"location\" *: *\"[^\"]*\"", "\"location\":\"" + dst + "\""));
    TableIdentifier id = TableIdentifier.of(ns, "py_events");
    catalog.registerTable(id, current.toString());
    Table table = catalog.loadTable(id);
    long before = table.currentSnapshot().snapshotId();
    List<String> rows = Rows.sorted(Rows.render(Rows.read(table)));
    Map<String, String> planned = plan(table, before);
    // (time travel reads with the snapshot's schema, which lacks the later column)
    List<String> rowsAtBefore = rowsAt(table, before);

    List<String> result =
        Skade.query(
                conn,
                "SELECT manifests_replaced, manifests_created FROM skade.rewrite_manifests(?, ?, catalog => ?)",
                CommitLog.ns(id),
                id.name(),
                Skade.CATALOG)
            .get(0);
    assertEquals(List.of("4", "1"), result);
    table.refresh();
    assertEquals(1, table.currentSnapshot().allManifests(table.io()).size());
    assertEquals(rows, Rows.sorted(Rows.render(Rows.read(table))));
    assertEquals(rowsAtBefore, rowsAt(table, before));
    assertEquals(planned, plan(table, table.currentSnapshot().snapshotId()));
  }
}
