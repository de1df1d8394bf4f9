/*
 * RestRebaseTest: stock Java RESTCatalog appenders on a table with skade.rebase-appends=true
 * (issue 30): an append from a stale view of the table is rebased by the server instead of
 * answered 409, with the client's own retries off (commit.retry.num-retries=0), so every
 * success is the server's.  Afterwards, read back by Java itself:
 *  - every metadata file of the table (current and the metadata log) parses with
 *    TableMetadataParser and rebuilds with TableMetadata.buildFrom(..).build() (its
 *    validation);
 *  - history is linear, sequence numbers 1..n, each data file's data sequence number is that
 *    of the snapshot that added it; in format v3 each snapshot's first-row-id follows the
 *    rows before it, added-rows is its rows, next-row-id all of them;
 *  - the client's post-commit clean-up deleted nothing a snapshot uses: every manifest list
 *    and manifest of every snapshot exists;
 *  - each snapshot's scan plans exactly the files appended up to it, each once;
 *  - without the property a stale append fails with CommitFailedException, as Iceberg's
 *    protocol says.
 * Java's SnapshotProducer refreshes the table before each attempt, so only a commit that
 * another lands between that refresh and its own is stale: the writers are concurrent.
 * Settings as RestClientLifecycleTest's; namespace jr<version digits>, dropped at the start.
 */
package skade.rest.clients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.IcebergBuild;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RestRebaseTest {

  private static final Schema SCHEMA = new Schema(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "cat", Types.StringType.get()));
  private static final PartitionSpec SPEC = PartitionSpec.builderFor(SCHEMA).identity("cat").build();
  private static final Map<String, String> ON = Map.of(
      "format-version", "2", "skade.rebase-appends", "true", "commit.retry.num-retries", "0");

  private final String version = IcebergBuild.version();
  private final String ns = "jr" + version.replaceAll("[^0-9]", "");
  private final List<RESTCatalog> catalogs = Collections.synchronizedList(new ArrayList<>());

  private static String prop(String name) {
    String v = System.getProperty(name);
    assertNotNull(v, "system property " + name);
    return v;
  }

  @AfterEach
  void tearDown() throws Exception {
    for (RESTCatalog c : catalogs) {
      c.close();
    }
  }

  private RESTCatalog catalog() {
    Map<String, String> props = new HashMap<>();
    props.put(CatalogProperties.URI, prop("skade.rest.uri"));
    props.put("token", prop("skade.rest.token"));
    props.put(CatalogProperties.WAREHOUSE_LOCATION, prop("skade.rest.warehouse"));
    RESTCatalog c = new RESTCatalog();
    c.setConf(new Configuration());
    c.initialize("skade-rebase-" + version, props);
    catalogs.add(c);
    return c;
  }

  private static DataFile file(Table t, String name, String cat, long rows) {
    return DataFiles.builder(t.spec())
        .withPath(t.location() + "/data/cat=" + cat + "/" + name + ".parquet")
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(1000 + rows)
        .withRecordCount(rows)
        .withPartitionPath("cat=" + cat)
        .build();
  }

  private Namespace freshNamespace(RESTCatalog cat) {
    Namespace n = Namespace.of(ns);
    if (cat.namespaceExists(n)) {
      for (TableIdentifier t : cat.listTables(n)) {
        cat.dropTable(t, true);
      }
      cat.dropNamespace(n);
    }
    cat.createNamespace(n, new HashMap<>());
    return n;
  }

  /** The snapshot chain of main, oldest first. */
  private static List<Snapshot> history(Table t) {
    List<Snapshot> chain = new ArrayList<>();
    Snapshot s = t.currentSnapshot();
    while (s != null) {
      chain.add(0, s);
      s = s.parentId() == null ? null : t.snapshot(s.parentId());
    }
    return chain;
  }

  /**
   * Everything Java reads back agrees: metadata files parse and validate, history is linear,
   * files inherit their snapshot's sequence number, nothing used was deleted, each snapshot
   * plans the files appended up to it, and the appended files are exactly the acknowledged
   * ones, each once.
   */
  private static void check(Table t, Set<String> acked) throws Exception {
    FileIO io = t.io();
    TableMetadata current = ((HasTableOperations) t).operations().current();
    List<String> files = new ArrayList<>();
    files.add(current.metadataFileLocation());
    current.previousFiles().forEach(e -> files.add(e.file()));
    for (String f : files) {
      TableMetadata m = TableMetadataParser.read(io, f);
      TableMetadata.buildFrom(m).build();
    }
    List<Snapshot> chain = history(t);
    List<String> upTo = new ArrayList<>();
    long rowsBefore = 0;
    for (int i = 0; i < chain.size(); i++) {
      Snapshot s = chain.get(i);
      assertEquals(i + 1, s.sequenceNumber(), "sequence number of " + s.snapshotId());
      assertTrue(io.newInputFile(s.manifestListLocation()).exists(), s.manifestListLocation());
      for (ManifestFile mf : s.allManifests(io)) {
        assertTrue(io.newInputFile(mf.path()).exists(), "manifest " + mf.path());
        if (mf.snapshotId() == s.snapshotId()) {
          assertEquals(s.sequenceNumber(), mf.sequenceNumber(), "manifest seq " + mf.path());
          try (CloseableIterable<DataFile> r = ManifestFiles.read(mf, io, t.specs())) {
            for (DataFile df : r) {
              assertEquals(s.sequenceNumber(), df.dataSequenceNumber(), "data seq of " + df.path());
            }
          }
        }
      }
      long rows = 0;
      for (DataFile df : s.addedDataFiles(io)) {
        upTo.add(df.path().toString());
        rows += df.recordCount();
      }
      if (current.formatVersion() >= 3) {
        // row lineage: each snapshot's range follows the one before, as many ids as rows
        assertEquals(rowsBefore, (long) s.firstRowId(), "first-row-id of " + s.snapshotId());
        assertEquals(rows, (long) s.addedRows(), "added-rows of " + s.snapshotId());
      }
      rowsBefore += rows;
      List<String> planned = new ArrayList<>();
      try (CloseableIterable<FileScanTask> tasks = t.newScan().useSnapshot(s.snapshotId()).planFiles()) {
        tasks.forEach(task -> planned.add(task.file().path().toString()));
      }
      assertEquals(upTo.size(), planned.size(), "files planned at " + s.snapshotId() + ": " + planned);
      assertEquals(new HashSet<>(upTo), new HashSet<>(planned), "files planned at " + s.snapshotId());
      assertEquals(String.valueOf(upTo.size()), s.summary().get("total-data-files"),
          "total-data-files of " + s.snapshotId());
    }
    if (current.formatVersion() >= 3) {
      assertEquals(rowsBefore, current.nextRowId(), "next-row-id");
    }
    assertEquals(upTo.size(), new HashSet<>(upTo).size(), "a file appended twice");
    assertEquals(acked, new HashSet<>(upTo), "the appended files are the acknowledged ones");
  }

  /** writers threads, each its own catalog, appending per files; the acknowledged paths. */
  private Set<String> appendConcurrently(TableIdentifier id, int writers, int per,
      AtomicInteger failures) throws Exception {
    Set<String> acked = ConcurrentHashMap.newKeySet();
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      final int me = w;
      threads.add(new Thread(() -> {
        Table t = catalog().loadTable(id);
        for (int k = 0; k < per; k++) {
          DataFile f = file(t, "w" + me + "-" + k, "c" + (k % 3), 1 + k);
          try {
            if (k % 2 == 0) {
              t.newAppend().appendFile(f).commit();
            } else {
              t.newFastAppend().appendFile(f).commit();
            }
            acked.add(f.path().toString());
          } catch (CommitFailedException e) {
            failures.incrementAndGet();
            t.refresh();
          }
        }
      }));
    }
    threads.forEach(Thread::start);
    for (Thread th : threads) {
      th.join();
    }
    return acked;
  }

  @Test
  void concurrentAppendersNeverFail() throws Exception {
    concurrentAppenders("2");
  }

  @Test
  void concurrentAppendersNeverFailV3() throws Exception {
    concurrentAppenders("3");
  }

  private void concurrentAppenders(String formatVersion) throws Exception {
    RESTCatalog c0 = catalog();
    Namespace n = freshNamespace(c0);
    TableIdentifier id = TableIdentifier.of(n, "hot");
    Map<String, String> props = new HashMap<>(ON);
    props.put("format-version", formatVersion);
    c0.createTable(id, SCHEMA, SPEC, props);
    AtomicInteger failures = new AtomicInteger();
    Set<String> acked = appendConcurrently(id, 8, 5, failures);
    assertEquals(0, failures.get(), "appends answered 409");
    assertEquals(40, acked.size());
    Table t = c0.loadTable(id);
    check(t, acked);
    boolean rebased = false;
    for (Snapshot s : t.snapshots()) {
      rebased |= s.manifestListLocation().contains("-rebased-");
    }
    // (Java refreshes the table before each attempt: only a commit between that refresh and
    // its own is stale; with 8 writers on one table some are)
    assertTrue(rebased, "the writers collided: some snapshots were rebased");
  }

  @Test
  void strictWithoutTheProperty() throws Exception {
    RESTCatalog c0 = catalog();
    Namespace n = freshNamespace(c0);
    TableIdentifier id = TableIdentifier.of(n, "strict");
    c0.createTable(id, SCHEMA, SPEC, new HashMap<>(Map.of("format-version", "2",
        "commit.retry.num-retries", "0")));
    AtomicInteger failures = new AtomicInteger();
    Set<String> acked = appendConcurrently(id, 8, 5, failures);
    assertTrue(failures.get() > 0, "stale appends fail with CommitFailedException");
    assertEquals(40, acked.size() + failures.get());
    check(c0.loadTable(id), acked);
  }
}
