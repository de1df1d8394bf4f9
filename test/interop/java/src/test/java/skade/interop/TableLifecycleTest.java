package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** Create a partitioned table, append Parquet data, read it back, evolve, rename, drop. */
class TableLifecycleTest extends CatalogTestBase {

  @Test
  void partitionedTableAppendsAndReadsBack() throws Exception {
    TableIdentifier id = TableIdentifier.of(ns, "events");
    Table table =
        catalog
            .buildTable(id, EVENTS)
            .withPartitionSpec(EVENTS_SPEC)
            .withProperty("owner", "java")
            .create();
    log.expectTable(id, table, "create");
    assertNull(table.currentSnapshot());
    assertTrue(sqlListTables().contains("events"), "skade.list_tables() lists the new table");

    // a second create of the same name is refused, and logs nothing
    assertThrows(AlreadyExistsException.class, () -> catalog.createTable(id, EVENTS));
    log.expectNothing(id);

    List<Record> expected = new ArrayList<>();
    List<Long> snapshots = new ArrayList<>();
    int[][] batches = {{1, 6}, {7, 9}, {10, 15}};
    for (int[] b : batches) {
      List<Record> rows = events(b[0], b[1]);
      List<DataFile> files = Rows.append(table, rows);
      assertTrue(files.size() > 1, "rows spread over several partitions");
      expected.addAll(rows);
      log.expectTable(id, table, "commit");
      snapshots.add(table.currentSnapshot().snapshotId());
    }

    // the snapshot chain the client built, seen through a freshly loaded handle
    Table loaded = catalog.loadTable(id);
    assertEquals(CommitLog.location(table), CommitLog.location(loaded));
    List<Long> chain = new ArrayList<>();
    for (Snapshot s = loaded.currentSnapshot(); s != null; ) {
      chain.add(0, s.snapshotId());
      s = s.parentId() == null ? null : loaded.snapshot(s.parentId());
    }
    assertEquals(snapshots, chain);
    assertEquals("java", loaded.properties().get("owner"));
    assertEquals(EVENTS_SPEC, loaded.spec());

    assertEquals(Rows.render(expected), Rows.render(Rows.read(loaded)));
    Object id1 = Rows.read(loaded).get(0).getField("id");
    assertEquals(Long.class, id1.getClass());

    // partition pruning works on what was written: only category 'a' files are planned
    Set<String> planned = new HashSet<>();
    try (CloseableIterable<FileScanTask> tasks =
        loaded.newScan().filter(Expressions.equal("category", "a")).planFiles()) {
      tasks.forEach(t -> planned.add(t.file().partition().get(0, String.class)));
    }
    assertEquals(Set.of("a"), planned);
    List<Record> onlyA = new ArrayList<>();
    for (Record r : expected) {
      if ("a".equals(r.getField("category"))) {
        onlyA.add(r);
      }
    }
    assertEquals(
        Rows.render(onlyA), Rows.render(Rows.read(loaded, Expressions.equal("category", "a"))));

    // time travel to the first snapshot through the generic reader
    List<Record> first = new ArrayList<>(expected.subList(0, 6));
    List<Record> atFirst = new ArrayList<>();
    try (CloseableIterable<Record> it =
        org.apache.iceberg.data.IcebergGenerics.read(loaded).useSnapshot(snapshots.get(0)).build()) {
      it.forEach(r -> atFirst.add(r.copy()));
    }
    assertEquals(Rows.render(first), Rows.render(atFirst));

    // a tag and a branch (with retention settings) on older snapshots, one commit: skade.refs()
    // and load_table(snapshots => 'refs') then see more than main
    table
        .manageSnapshots()
        .createTag("first", snapshots.get(0))
        .setMaxRefAgeMs("first", 86_400_000L)
        .createBranch("audit", snapshots.get(1))
        .setMaxRefAgeMs("audit", 7_200_000L)
        .setMaxSnapshotAgeMs("audit", 3_600_000L)
        .setMinSnapshotsToKeep("audit", 2)
        .commit();
    log.expectTable(id, table, "commit");
    assertEquals(Set.of("main", "first", "audit"), table.refs().keySet());
  }

  @Test
  void schemaEvolution() throws Exception {
    TableIdentifier id = TableIdentifier.of(ns, "evolving");
    Table table = catalog.buildTable(id, EVENTS).withPartitionSpec(EVENTS_SPEC).create();
    log.expectTable(id, table, "create");
    List<Record> old = events(1, 4);
    Rows.append(table, old);
    log.expectTable(id, table, "commit");

    table.updateSchema().addColumn("note", Types.StringType.get()).commit();
    log.expectTable(id, table, "commit");
    assertEquals(5, table.schema().columns().size());

    // a fresh handle sees the new column, and writes rows that carry it
    Table fresh = catalog.loadTable(id);
    assertEquals(table.schema().asStruct(), fresh.schema().asStruct());
    List<Record> newer = new ArrayList<>();
    for (int i = 5; i <= 7; i++) {
      newer.add(
          Rows.rec(fresh.schema(), (long) i, "b", 2.0 * i, T0.plusMinutes(i), "note-" + i));
    }
    Rows.append(fresh, newer);
    log.expectTable(id, fresh, "commit");

    List<String> expected = new ArrayList<>();
    for (Record r : old) {
      expected.add(
          String.join(
              "|",
              String.valueOf(r.getField("id")),
              (String) r.getField("category"),
              String.valueOf(r.getField("amount")),
              String.valueOf(r.getField("ts")),
              "null"));
    }
    expected.addAll(Rows.render(newer));
    assertEquals(Rows.sorted(expected), Rows.render(Rows.read(catalog.loadTable(id))));

    // and the old handle, once refreshed, reads the same
    table.refresh();
    assertEquals(CommitLog.location(fresh), CommitLog.location(table));
    assertEquals(Rows.sorted(expected), Rows.render(Rows.read(table)));
  }

  @Test
  void renameWithinAndAcrossNamespaces() throws Exception {
    TableIdentifier from = TableIdentifier.of(ns, "before_rename");
    Table table = catalog.buildTable(from, EVENTS).withPartitionSpec(EVENTS_SPEC).create();
    log.expectTable(from, table, "create");
    List<Record> rows = events(1, 5);
    Rows.append(table, rows);
    log.expectTable(from, table, "commit");
    String loc = CommitLog.location(table);

    TableIdentifier to = TableIdentifier.of(ns, "after_rename");
    catalog.renameTable(from, to);
    assertFalse(catalog.tableExists(from));
    assertThrows(NoSuchTableException.class, () -> catalog.loadTable(from));
    assertFalse(log.skadeTableExists(from));
    log.expectNothing(from);

    Table renamed = catalog.loadTable(to);
    assertEquals(loc, CommitLog.location(renamed), "a rename moves the pointer unchanged");
    List<CommitLog.Entry> r = log.expectTable(to, renamed, "rename");
    assertEquals(CommitLog.ns(from), r.get(0).prevNamespace());
    assertEquals("before_rename", r.get(0).prevName());
    assertEquals(Rows.render(rows), Rows.render(Rows.read(renamed)));

    // the renamed table keeps committing under its new name
    Rows.append(renamed, events(6, 8));
    log.expectTable(to, renamed, "commit");

    // across namespaces
    Namespace other = Namespace.of(ns.level(0) + "_other");
    catalog.createNamespace(other);
    TableIdentifier moved = TableIdentifier.of(other, "moved");
    catalog.renameTable(to, moved);
    Table m = catalog.loadTable(moved);
    r = log.expectTable(moved, m, "rename");
    assertEquals(CommitLog.ns(to), r.get(0).prevNamespace());
    assertEquals("after_rename", r.get(0).prevName());
    assertEquals(List.of(moved), catalog.listTables(other));
    assertFalse(catalog.listTables(ns).contains(to));

    // renaming onto an existing table is refused and changes nothing
    TableIdentifier blocker = TableIdentifier.of(other, "blocker");
    Table b = catalog.createTable(blocker, EVENTS);
    log.expectTable(blocker, b, "create");
    assertThrows(AlreadyExistsException.class, () -> catalog.renameTable(moved, blocker));
    log.expectNothing(moved);
    log.expectNothing(blocker);
    assertEquals(CommitLog.location(m), log.skadeLocation(moved));
  }

  @Test
  void dropKeepsOrPurgesFiles() throws Exception {
    TableIdentifier keep = TableIdentifier.of(ns, "drop_keep");
    Table t1 = catalog.createTable(keep, EVENTS, EVENTS_SPEC);
    log.expectTable(keep, t1, "create");
    Rows.append(t1, events(1, 3));
    log.expectTable(keep, t1, "commit");
    String loc1 = CommitLog.location(t1);

    assertTrue(catalog.dropTable(keep, false));
    assertFalse(catalog.tableExists(keep));
    log.expectDropped(keep, "TABLE", loc1);
    assertTrue(t1.io().newInputFile(loc1).exists(), "drop without purge keeps metadata");
    assertFalse(catalog.dropTable(keep, false), "a second drop finds nothing");
    log.expectNothing(keep);

    TableIdentifier purge = TableIdentifier.of(ns, "drop_purge");
    Table t2 = catalog.createTable(purge, EVENTS, EVENTS_SPEC);
    log.expectTable(purge, t2, "create");
    List<DataFile> files = Rows.append(t2, events(1, 3));
    log.expectTable(purge, t2, "commit");
    String loc2 = CommitLog.location(t2);
    assertTrue(catalog.dropTable(purge, true));
    log.expectDropped(purge, "TABLE", loc2);
    assertFalse(t2.io().newInputFile(loc2).exists(), "purge deletes metadata");
    for (DataFile f : files) {
      assertFalse(t2.io().newInputFile(f.location()).exists(), "purge deletes " + f.location());
    }

    // the name can be used again; its log goes on after the drop
    Table again = catalog.createTable(keep, EVENTS);
    assertNotEquals(loc1, CommitLog.location(again));
    log.expectTable(keep, again, "create");
  }

  private List<String> sqlListTables() throws Exception {
    List<String> out = new ArrayList<>();
    for (List<String> r :
        Skade.query(
            conn, "SELECT * FROM skade.list_tables(?, ?) ORDER BY 1", ns.level(0), Skade.CATALOG)) {
      out.add(r.get(0));
    }
    return out;
  }
}
