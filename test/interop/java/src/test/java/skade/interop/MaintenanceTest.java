package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Table maintenance run by skade on tables other clients wrote, then checked by Java's
 * JdbcCatalog:
 *
 * <ul>
 *   <li>skade.expire_snapshots(older_than => now(), retain_last => 2, delete_files => true) on
 *       an unpartitioned and a partitioned Java table where appends, a position delete, a
 *       compaction, an overwrite and a delete leave data and delete files that only expired
 *       snapshots reach: the files returned are exactly those Java finds reachable before and
 *       unreachable from the retained snapshots (manifest lists, manifests, data and delete
 *       files, each with its kind); they are gone from disk after the commit and still there
 *       inside the transaction and after a rollback (which also expires nothing and leaves no new
 *       metadata file behind); every file a retained snapshot reaches is still there; Java reads
 *       the same rows now and at every retained snapshot (a tag keeps its old snapshot); expired
 *       snapshots are gone; Java appends on top.
 *   <li>The same on the pyiceberg fixture (registered from a copy of its metadata, its data and
 *       manifests staying in the read-only fixture directory): delete_files => true is refused
 *       (42501, files outside skade.write_roots) with nothing expired; without it the same
 *       checks, every file still on disk.
 *   <li>skade.swap_table(): Java reads temp's rows (and schema, snapshots) under live, temp is
 *       gone, live's older log rows and all of temp's are in skade.commit_log_archive, one log row
 *       is left for live, and Java appends to live afterwards.
 * </ul>
 *
 * The server runs as another OS user: the test opens the table directories to it, as
 * test/interop/run.sh's umask 000 does for everything the clients create.
 */
class MaintenanceTest extends CatalogTestBase {

  // ---------------------------------------------------------------- helpers

  /** The local file a location names (a plain path or a file: URI). */
  private static Path local(String location) {
    return location.startsWith("file:") ? Path.of(URI.create(location)) : Path.of(location);
  }

  /** Lets the server (another OS user) write and remove files in every directory of the table. */
  private static void openToServer(Table table) throws IOException {
    try (Stream<Path> all = Files.walk(local(table.location()))) {
      for (Path p : (Iterable<Path>) all::iterator) {
        if (Files.isDirectory(p)) {
          Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxrwxrwx"));
        }
      }
    }
  }

  private static String kind(ContentFile<?> f) {
    switch (f.content()) {
      case DATA:
        return "data";
      case POSITION_DELETES:
        return "position_deletes";
      case EQUALITY_DELETES:
        return "equality_deletes";
      default:
        throw new AssertionError(f.content());
    }
  }

  /**
   * Every file the snapshots reach, as Java sees it, with the kind skade.expire_snapshots()
   * reports: their manifest lists, their manifests, the live data and delete files of those.
   */
  private static Map<String, String> reachable(Table table, Collection<Long> snapshotIds)
      throws IOException {
    Map<String, String> out = new TreeMap<>();
    for (long sid : snapshotIds) {
      Snapshot s = table.snapshot(sid);
      out.put(s.manifestListLocation(), "manifest-list");
      for (ManifestFile m : s.allManifests(table.io())) {
        out.put(m.path(), "manifest");
        if (m.content() == ManifestContent.DATA) {
          try (ManifestReader<DataFile> r = ManifestFiles.read(m, table.io(), table.specs())) {
            r.forEach(f -> out.put(f.location(), kind(f)));
          }
        } else {
          try (ManifestReader<DeleteFile> r =
              ManifestFiles.readDeleteManifest(m, table.io(), table.specs())) {
            r.forEach(f -> out.put(f.location(), kind(f)));
          }
        }
      }
    }
    return out;
  }

  private static List<Long> snapshotIds(Table table) {
    List<Long> out = new ArrayList<>();
    table.snapshots().forEach(s -> out.add(s.snapshotId()));
    return out;
  }

  private static List<String> rowsAt(Table table, long snapshotId) {
    List<Record> out = new ArrayList<>();
    try (CloseableIterable<Record> it = IcebergGenerics.read(table).useSnapshot(snapshotId).build()) {
      it.forEach(r -> out.add(r.copy()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return Rows.sorted(Rows.render(out));
  }

  private static Map<Long, List<String>> rowsPerSnapshot(Table table) {
    Map<Long, List<String>> out = new LinkedHashMap<>();
    for (long sid : snapshotIds(table)) {
      out.put(sid, rowsAt(table, sid));
    }
    return out;
  }

  private static List<String> current(Table table) {
    return Rows.sorted(Rows.render(Rows.read(table)));
  }

  private static Set<String> listing(Path dir) throws IOException {
    Set<String> out = new TreeSet<>();
    try (Stream<Path> files = Files.list(dir)) {
      files.forEach(p -> out.add(p.getFileName().toString()));
    }
    return out;
  }

  /** Does skade.write_roots (as this session sees it) cover the file? */
  private boolean writable(Path file) throws SQLException {
    String roots =
        Skade.queryOne(conn, "SELECT coalesce(current_setting('skade.write_roots', true), '')");
    for (String r : roots.split(",")) {
      if (!r.isBlank() && file.startsWith(Path.of(r.trim()))) {
        return true;
      }
    }
    return false;
  }

  /** skade.expire_snapshots(now, retain 2) as path -> kind (every path once). */
  private static Map<String, String> expire(Connection c, TableIdentifier id, boolean deleteFiles)
      throws SQLException {
    Map<String, String> out = new TreeMap<>();
    for (List<String> r :
        Skade.query(
            c,
            "SELECT file_path, kind FROM skade.expire_snapshots(?, ?, older_than => now(),"
                + " retain_last => 2, delete_files => ?, catalog => ?)",
            CommitLog.ns(id),
            id.name(),
            deleteFiles,
            Skade.CATALOG)) {
      assertNull(out.put(r.get(0), r.get(1)), "expire_snapshots returned " + r.get(0) + " twice");
    }
    return out;
  }

  private static void assertAllExist(Collection<String> locations, String what) {
    for (String f : locations) {
      assertTrue(Files.exists(local(f)), what + ": " + f + " is missing");
    }
  }

  private static void assertNoneExist(Collection<String> locations, String what) {
    for (String f : locations) {
      assertFalse(Files.exists(local(f)), what + ": " + f + " is still there");
    }
  }

  /** What a table looked like before maintenance, and what expiring should do to it. */
  private record Before(
      String location,
      List<Long> snapshots,
      Map<Long, List<String>> rows,
      List<String> currentRows,
      Set<Long> retained,
      Map<String, String> gone) {}

  /**
   * Records the table and derives, with Java's own reading of its manifests, what
   * expire_snapshots(retain_last => 2) must return: the files every snapshot reaches less those
   * the retained ones (main's head and its parent, and every tag's snapshot) reach.
   */
  private static Before before(Table table) throws IOException {
    Snapshot head = table.currentSnapshot();
    Set<Long> retained = new HashSet<>();
    retained.add(head.snapshotId());
    retained.add(head.parentId());
    for (SnapshotRef ref : table.refs().values()) {
      if (ref.isTag()) {
        retained.add(ref.snapshotId());
      }
    }
    List<Long> all = snapshotIds(table);
    Map<String, String> gone = new TreeMap<>(reachable(table, all));
    gone.keySet().removeAll(reachable(table, retained).keySet());
    return new Before(
        CommitLog.location(table), all, rowsPerSnapshot(table), current(table), retained, gone);
  }

  /** After a committed expire: Java's fresh load against what was recorded before. */
  private Table checkExpired(TableIdentifier id, Before b, boolean filesRemoved) throws Exception {
    Table table = catalog.loadTable(id);
    assertNotEquals(b.location(), CommitLog.location(table), "expire committed no new metadata");
    assertEquals(new TreeSet<>(b.retained()), new TreeSet<>(snapshotIds(table)), "snapshots left");
    for (long sid : b.snapshots()) {
      if (!b.retained().contains(sid)) {
        assertNull(table.snapshot(sid), "expired snapshot " + sid + " still in the metadata");
      }
    }
    assertEquals(b.currentRows(), current(table), "current rows after expire");
    for (long sid : b.retained()) {
      assertEquals(b.rows().get(sid), rowsAt(table, sid), "time travel to retained " + sid);
    }
    Map<String, String> kept = reachable(table, b.retained());
    assertAllExist(kept.keySet(), "file a retained snapshot reaches");
    if (filesRemoved) {
      assertNoneExist(b.gone().keySet(), "file expire_snapshots returned");
    } else {
      assertAllExist(b.gone().keySet(), "file expire_snapshots returned (delete_files false)");
    }
    log.expectTable(id, table, "commit");
    return table;
  }

  /** Java appends on top of the expired table and reads old and new rows. */
  private void appendOnTop(TableIdentifier id, Table table, List<Record> more, List<String> rows)
      throws Exception {
    Rows.append(table, Rows.as(table.schema(), more));
    log.expectTable(id, table, "commit");
    Table fresh = catalog.loadTable(id);
    List<String> expected = new ArrayList<>(rows);
    expected.addAll(Rows.render(Rows.as(fresh.schema(), more)));
    assertEquals(Rows.sorted(expected), current(fresh));
  }

  private static void assertKinds(Map<String, String> gone, String... kinds) {
    Set<String> seen = new TreeSet<>(gone.values());
    for (String k : kinds) {
      assertTrue(seen.contains(k), "the setup should make a " + k + " file unreachable: " + gone);
    }
  }

  // ------------------------------------------------------------ expire, Java

  /** A Parquet position delete file of the unpartitioned table deleting (path, pos). */
  private static DeleteFile positionDelete(Table table, String path, long pos) {
    GenericFileWriterFactory writers =
        new GenericFileWriterFactory.Builder(table).deleteFileFormat(FileFormat.PARQUET).build();
    OutputFileFactory out =
        OutputFileFactory.builderFor(table, 3, System.nanoTime()).format(FileFormat.PARQUET).build();
    PositionDeleteWriter<Record> w = writers.newPositionDeleteWriter(out.newOutputFile(), table.spec(), null);
    try (w) {
      PositionDelete<Record> pd = PositionDelete.create();
      pd.set(path, pos);
      w.write(pd);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return w.toDeleteFile();
  }

  /**
   * Unpartitioned, format 2: append A, append B, a position delete on B, a compaction of B and
   * its delete into B', an overwrite of A by A', append C. Retaining two snapshots (A'/B'/C and
   * A'/B') leaves A, B and the delete file unreachable. First in a transaction that rolls back,
   * then for real.
   */
  @Test
  void expireUnpartitionedJavaTable() throws Exception {
    TableIdentifier id = TableIdentifier.of(ns, "plain");
    Table table =
        catalog.buildTable(id, EVENTS).withProperty(TableProperties.FORMAT_VERSION, "2").create();
    DataFile a = Rows.append(table, events(0, 3)).get(0);
    DataFile b = Rows.append(table, events(4, 7)).get(0);
    DeleteFile del = positionDelete(table, b.location(), 0);
    table.newRowDelta().addDeletes(del).commit();
    DataFile b2 = Rows.write(table, events(5, 7)).get(0);
    table
        .newRewrite()
        .validateFromSnapshot(table.currentSnapshot().snapshotId())
        .deleteFile(b)
        .deleteFile(del)
        .addFile(b2)
        .commit();
    List<Record> changedA = events(0, 3);
    changedA.forEach(r -> r.setField("amount", -1.0));
    DataFile a2 = Rows.write(table, changedA).get(0);
    table.newOverwrite().deleteFile(a).addFile(a2).commit();
    Rows.append(table, events(8, 11));
    table.refresh();
    assertEquals(6, snapshotIds(table).size());
    openToServer(table);

    Before b4 = before(table);
    assertEquals(4, b4.snapshots().size() - b4.retained().size());
    assertKinds(b4.gone(), "manifest-list", "manifest", "data", "position_deletes");
    for (DataFile f : List.of(a, b)) {
      assertEquals("data", b4.gone().get(f.location()));
    }
    assertEquals("position_deletes", b4.gone().get(del.location()));
    Path metadataDir = local(table.location()).resolve("metadata");
    Set<String> metadataFiles = listing(metadataDir);
    log.mark(id);

    // rolled back: the same answer, nothing removed, nothing expired, no metadata file left
    try (Connection tx = Skade.connect()) {
      Skade.allowFileAccess(tx, Skade.warehouse());
      tx.setAutoCommit(false);
      assertEquals(b4.gone(), expire(tx, id, true));
      assertAllExist(b4.gone().keySet(), "before the rollback");
      Set<String> written = listing(metadataDir);
      written.removeAll(metadataFiles);
      assertEquals(1, written.size(), "metadata files the expire wrote: " + written);
      assertTrue(written.iterator().next().endsWith(".metadata.json"), written.toString());
      tx.rollback();
    }
    assertAllExist(b4.gone().keySet(), "after the rollback");
    Table after = catalog.loadTable(id);
    assertEquals(b4.location(), CommitLog.location(after));
    assertEquals(b4.snapshots(), snapshotIds(after));
    assertEquals(metadataFiles, listing(metadataDir), "metadata files after the rollback");
    log.expectNothing(id);

    // committed
    assertEquals(b4.gone(), expire(conn, id, true));
    Table expired = checkExpired(id, b4, true);
    appendOnTop(id, expired, events(20, 23), b4.currentRows());
  }

  /**
   * Partitioned by identity(category), day(ts): two appends, a tag on the first, an overwrite of
   * category a, a delete of category b, two appends. The tag keeps the first snapshot (and its
   * files); the second append's a and b files go. Expired in an explicit transaction: the files
   * stay until it commits.
   */
  @Test
  void expirePartitionedJavaTableInATransaction() throws Exception {
    TableIdentifier id = TableIdentifier.of(ns, "events");
    Table table = catalog.createTable(id, EVENTS, EVENTS_SPEC);
    Rows.append(table, events(0, 8));
    long first = table.currentSnapshot().snapshotId();
    Rows.append(table, events(9, 17));
    table.manageSnapshots().createTag("first", first).commit();
    List<Record> newA = new ArrayList<>();
    for (Record r : events(100, 111)) {
      if ("a".equals(r.getField("category"))) {
        newA.add(r);
      }
    }
    List<DataFile> aFiles = Rows.write(table, newA);
    var overwrite = table.newOverwrite().overwriteByRowFilter(Expressions.equal("category", "a"));
    aFiles.forEach(overwrite::addFile);
    overwrite.commit();
    table.newDelete().deleteFromRowFilter(Expressions.equal("category", "b")).commit();
    Rows.append(table, events(20, 25));
    Rows.append(table, events(30, 32));
    table.refresh();
    assertEquals(6, snapshotIds(table).size());
    openToServer(table);

    Before b4 = before(table);
    assertEquals(Set.of(first, table.currentSnapshot().snapshotId(),
        table.currentSnapshot().parentId()), b4.retained());
    assertKinds(b4.gone(), "manifest-list", "manifest", "data");
    log.mark(id);

    try (Connection tx = Skade.connect()) {
      Skade.allowFileAccess(tx, Skade.warehouse());
      tx.setAutoCommit(false);
      assertEquals(b4.gone(), expire(tx, id, true));
      // removed at commit, never before
      assertAllExist(b4.gone().keySet(), "inside the expiring transaction");
      assertEquals(b4.location(), CommitLog.location(catalog.loadTable(id)), "seen before commit");
      tx.commit();
    }
    Table expired = checkExpired(id, b4, true);
    assertEquals(first, expired.refs().get("first").snapshotId());
    appendOnTop(id, expired, events(40, 44), b4.currentRows());
  }

  // -------------------------------------------------------- expire, pyiceberg

  /**
   * The pyiceberg fixture (test/data/clients/python: identity and day partitions; five snapshots: two
   * appends, a delete of a partition, an append and an overwrite; then a new column), its metadata
   * copied into the warehouse and registered, as RewriteManifestsTest does. Its manifests and data
   * stay in the fixture directory, which other tests read: delete_files => true is only tried
   * where skade.write_roots does not cover it (test/interop/run.sh), and must be refused there.
   */
  @Test
  void expirePyicebergTable() throws Exception {
    String index = Skade.env("SKADE_PY_FIXTURES", null);
    Assumptions.assumeTrue(index != null, "SKADE_PY_FIXTURES is not set");
    Path src = Path.of(index, "warehouse", "fixtures", "events", "metadata");
    Path dst = Path.of(Skade.warehouse(), ns.toString(), "py_events");
    Path meta = dst.resolve("metadata");
    Files.createDirectories(meta);
    try (Stream<Path> files = Files.list(src)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        Files.copy(f, meta.resolve(f.getFileName()));
      }
    }
    Path current = meta.resolve("00005-a77c57c8-afa0-4139-a90d-8815af754260.metadata.json");
    String text = Files.readString(current);
    Files.writeString(
        current, text.replaceFirst("\"location\" *: *\"[^\"]*\"", "\"location\":\"" + dst + "\""));
    TableIdentifier id = TableIdentifier.of(ns, "py_events");
    Table table = catalog.registerTable(id, current.toString());
    log.mark(id);
    openToServer(table);
    assertEquals(5, snapshotIds(table).size());

    Before b4 = before(table);
    assertEquals(3, b4.snapshots().size() - b4.retained().size());
    assertKinds(b4.gone(), "manifest-list", "data");

    // the files lie outside skade.write_roots: refused before anything changes
    if (!writable(local(table.snapshot(b4.snapshots().get(0)).manifestListLocation()))) {
      SQLException refused = assertThrows(SQLException.class, () -> expire(conn, id, true));
      assertEquals("42501", refused.getSQLState(), refused.getMessage());
      assertEquals(b4.location(), CommitLog.location(catalog.loadTable(id)));
      assertAllExist(b4.gone().keySet(), "after the refused expire");
      log.expectNothing(id);
    }

    assertEquals(b4.gone(), expire(conn, id, false));
    Table expired = checkExpired(id, b4, false);

    // (the fixture's schema: id, category, ts without zone, amount, note)
    List<Record> pyRows = new ArrayList<>();
    for (int i = 50; i <= 52; i++) {
      pyRows.add(
          Rows.rec(expired.schema(), (long) i, "b", T0.toLocalDateTime().plusDays(i % 2), i * 0.5, "j" + i));
    }
    appendOnTop(id, expired, pyRows, b4.currentRows());
  }

  // ----------------------------------------------------------------- swap

  static final Schema REBUILT =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "label", Types.StringType.get()),
          Types.NestedField.optional(3, "score", Types.IntegerType.get()));

  private static List<Record> rebuilt(int from, int to) {
    List<Record> out = new ArrayList<>();
    for (int i = from; i <= to; i++) {
      out.add(Rows.rec(REBUILT, (long) i, "r" + i, i * 10));
    }
    return out;
  }

  private List<List<String>> logRows(String table) throws SQLException {
    return Skade.query(
        conn,
        "SELECT seq::text, op, metadata_location, previous_metadata_location FROM skade.commit_log"
            + " WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? ORDER BY seq",
        Skade.CATALOG,
        ns.toString(),
        table);
  }

  private List<String> archivedSeqs(String table) throws SQLException {
    List<String> out = new ArrayList<>();
    for (List<String> r :
        Skade.query(
            conn,
            "SELECT seq::text FROM skade.commit_log_archive"
                + " WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? ORDER BY seq",
            Skade.CATALOG,
            ns.toString(),
            table)) {
      out.add(r.get(0));
    }
    return out;
  }

  private static List<String> seqs(List<List<String>> rows) {
    List<String> out = new ArrayList<>();
    rows.forEach(r -> out.add(r.get(0)));
    return out;
  }

  /**
   * Java writes live (EVENTS, partitioned) and temp (another schema, unpartitioned); after
   * skade.swap_table Java reads temp's table under live's name and keeps writing to it.
   */
  @Test
  void swapTableIsReadByJava() throws Exception {
    TableIdentifier liveId = TableIdentifier.of(ns, "live");
    TableIdentifier tempId = TableIdentifier.of(ns, "temp");
    Table live = catalog.createTable(liveId, EVENTS, EVENTS_SPEC);
    Rows.append(live, events(0, 5));
    Rows.append(live, events(6, 9));
    Table temp = catalog.createTable(tempId, REBUILT);
    Rows.append(temp, rebuilt(1, 4));
    long tempFirst = temp.currentSnapshot().snapshotId();
    Rows.append(temp, rebuilt(5, 7));
    temp.refresh();
    live.refresh();
    String liveLoc = CommitLog.location(live);
    String tempLoc = CommitLog.location(temp);
    List<String> tempRows = current(temp);
    List<String> tempFirstRows = rowsAt(temp, tempFirst);
    List<Long> tempSnapshots = snapshotIds(temp);
    List<String> liveSeqs = seqs(logRows("live"));
    List<String> tempSeqs = seqs(logRows("temp"));
    assertEquals(3, liveSeqs.size());
    assertEquals(3, tempSeqs.size());

    assertEquals(
        tempLoc,
        Skade.queryOne(
            conn,
            "SELECT skade.swap_table(?, 'live', 'temp', catalog => ?)",
            ns.toString(),
            Skade.CATALOG));

    assertFalse(catalog.tableExists(tempId), "temp still exists after the swap");
    Table swapped = catalog.loadTable(liveId);
    assertEquals(tempLoc, CommitLog.location(swapped));
    assertEquals(temp.uuid(), swapped.uuid());
    assertEquals(REBUILT.asStruct(), swapped.schema().asStruct());
    assertTrue(swapped.spec().isUnpartitioned());
    assertEquals(tempSnapshots, snapshotIds(swapped));
    assertEquals(tempRows, current(swapped));
    assertEquals(tempFirstRows, rowsAt(swapped, tempFirst));
    assertEquals(tempLoc, log.skadeLocation(liveId));

    // one log row left for live (the swap's commit), none for temp; the rest archived
    List<List<String>> liveLog = logRows("live");
    assertEquals(1, liveLog.size(), "live's commit_log after the swap: " + liveLog);
    assertEquals(List.of("commit", tempLoc, liveLoc), liveLog.get(0).subList(1, 4));
    assertEquals(List.of(), logRows("temp"));
    assertEquals(liveSeqs, archivedSeqs("live"));
    List<String> tempArchived = archivedSeqs("temp");
    assertEquals(tempSeqs, tempArchived.subList(0, tempSeqs.size()));
    assertEquals(tempSeqs.size() + 1, tempArchived.size(), "temp's drop archived: " + tempArchived);

    // Java keeps writing to live: the new data and metadata go to temp's directory
    log.mark(liveId);
    Rows.append(swapped, rebuilt(8, 9));
    log.expectTable(liveId, swapped, "commit");
    List<String> expected = new ArrayList<>(tempRows);
    expected.addAll(Rows.render(rebuilt(8, 9)));
    assertEquals(Rows.sorted(expected), current(catalog.loadTable(liveId)));
    assertEquals(2, logRows("live").size());
    assertFalse(catalog.tableExists(tempId));
  }
}
