package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.ExpressionParser;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.OutputFileFactory;
import org.junit.jupiter.api.Test;

/**
 * The delete files skade.plan_files() returns against the ones Java Iceberg's own planner attaches
 * to its FileScanTasks, on a format-version 2 table partitioned by identity(category), day(ts)
 * with merge-on-read deletes: position and equality deletes in some partitions, a spec evolution
 * to an unpartitioned spec with global equality deletes (and unpartitioned position deletes), and
 * appends after deletes, so sequence numbers decide what applies.
 *
 * <p>For ~60 random filters (fixed seed, PlanFilesTest's generator and rows) plus true:
 *
 * <ol>
 *   <li>skade's data files are a superset of Java's;
 *   <li>every delete file Java attaches to a planned task is among skade's delete rows, and so is
 *       every delete file Java's unfiltered scan attaches to any data file skade plans (a reader
 *       of skade's plan must not miss a delete that applies to a file it reads);
 *   <li>per data file: its delete_files column holds every delete file Java's unfiltered scan
 *       attaches to that file (counted: identical or a superset);
 *   <li>skade never returns a delete file that is no live delete file of the snapshot (checked
 *       against skade.files() and Java's own delete manifests), nor one twice, and its content,
 *       sequence number and equality field ids are Java's.
 * </ol>
 *
 * Skade may return more delete files than Java, never fewer. The same checks run with filter true
 * at every snapshot of the table, and the snapshots before the first delete must plan no delete
 * file at all.
 */
class DeleteFilesTest extends CatalogTestBase {
  static final long SEED = 20260302L;
  static final int FILTERS = 60;
  static final Schema SCHEMA = PlanFilesTest.SCHEMA;

  private Table table;
  private String tableName;
  /** snapshot id -> what happened in it (for the messages). */
  private final Map<Long, String> steps = new LinkedHashMap<>();
  /** Snapshots committed before any delete file existed. */
  private final List<Long> beforeDeletes = new ArrayList<>();
  /** Every file ever written, by path: a short description for messages. */
  private final Map<String, String> describe = new LinkedHashMap<>();

  // -------------------------------------------------------------- table

  private static List<Record> records(List<PlanFilesTest.Row> rows) {
    List<Record> out = new ArrayList<>();
    for (PlanFilesTest.Row r : rows) {
      out.add(Rows.rec(SCHEMA, r.id(), r.category(), r.amount(), r.name(), r.ts()));
    }
    return out;
  }

  private static List<Record> extra(long from, long to, String category, LocalDateTime ts) {
    List<PlanFilesTest.Row> rows = new ArrayList<>();
    for (long i = from; i <= to; i++) {
      rows.add(new PlanFilesTest.Row(i, category, i * 1.5, "extra-" + i, ts.plusMinutes(i % 50)));
    }
    return records(rows);
  }

  private List<DataFile> append(String what, List<Record> rows) {
    List<DataFile> files = Rows.append(table, rows);
    for (DataFile f : files) {
      describe.put(f.location(), "data spec " + f.specId() + " " + f.partition() + " (" + what
          + ")");
    }
    steps.put(table.currentSnapshot().snapshotId(), what);
    return files;
  }

  /** The data file among files whose first partition field (category) is category. */
  private static DataFile in(List<DataFile> files, String category) {
    for (DataFile f : files) {
      if (f.partition().size() > 0
          && Objects.equals(category, str(f.partition().get(0, Object.class)))) {
        return f;
      }
    }
    throw new AssertionError("no data file for category " + category + " in " + files);
  }

  private static String str(Object o) {
    return o == null ? null : o.toString();
  }

  private GenericFileWriterFactory writers() {
    return new GenericFileWriterFactory.Builder(table)
        .dataFileFormat(FileFormat.PARQUET)
        .deleteFileFormat(FileFormat.PARQUET)
        .equalityFieldIds(new int[] {SCHEMA.findField("id").fieldId()})
        .equalityDeleteRowSchema(table.schema().select("id"))
        .build();
  }

  private static long task = 1000;

  private OutputFileFactory outputs() {
    return OutputFileFactory.builderFor(table, 7, ++task).format(FileFormat.PARQUET).build();
  }

  /** An equality delete file on id in the given spec and partition (null: unpartitioned). */
  private DeleteFile eqDelete(PartitionSpec spec, StructLike partition, long... ids) {
    OutputFileFactory out = outputs();
    EqualityDeleteWriter<Record> w =
        writers()
            .newEqualityDeleteWriter(
                spec.isUnpartitioned() ? out.newOutputFile() : out.newOutputFile(spec, partition),
                spec,
                spec.isUnpartitioned() ? null : partition);
    Schema del = table.schema().select("id");
    try (w) {
      for (long id : ids) {
        GenericRecord r = GenericRecord.create(del);
        r.setField("id", id);
        w.write(r);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return w.toDeleteFile();
  }

  /** A position delete file in the given spec and partition, deleting (path, pos) pairs. */
  private DeleteFile posDelete(PartitionSpec spec, StructLike partition, Object... pathPos) {
    OutputFileFactory out = outputs();
    PositionDeleteWriter<Record> w =
        writers()
            .newPositionDeleteWriter(
                spec.isUnpartitioned() ? out.newOutputFile() : out.newOutputFile(spec, partition),
                spec,
                spec.isUnpartitioned() ? null : partition);
    try (w) {
      for (int i = 0; i < pathPos.length; i += 2) {
        PositionDelete<Record> pd = PositionDelete.create();
        pd.set((String) pathPos[i], ((Number) pathPos[i + 1]).longValue());
        w.write(pd);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return w.toDeleteFile();
  }

  private void rowDelta(String what, List<DeleteFile> add, List<DeleteFile> remove) {
    RowDelta rd = table.newRowDelta();
    add.forEach(rd::addDeletes);
    remove.forEach(rd::removeDeletes);
    rd.commit();
    long id = table.currentSnapshot().snapshotId();
    for (DeleteFile d : add) {
      describe.put(d.location(), d.content() + " spec " + d.specId() + " " + d.partition()
          + " (" + what + ")");
    }
    steps.put(id, what);
  }

  private void build() {
    tableName = "deletes";
    TableIdentifier id = TableIdentifier.of(ns, tableName);
    PartitionSpec spec0 = PartitionSpec.builderFor(SCHEMA).identity("category").day("ts").build();
    table =
        catalog
            .buildTable(id, SCHEMA)
            .withPartitionSpec(spec0)
            .withProperty(TableProperties.FORMAT_VERSION, "2")
            .create();
    List<List<PlanFilesTest.Row>> c = PlanFilesTest.commits();

    // seq 1..3: categories a and b, no deletes yet
    List<DataFile> s1 = append("append a/03-01", records(c.get(0)));
    beforeDeletes.add(table.currentSnapshot().snapshotId());
    List<DataFile> s2 = append("append a/03-02 b/03-01", records(c.get(1)));
    beforeDeletes.add(table.currentSnapshot().snapshotId());
    List<DataFile> s3 = append("append b/03-03", records(c.get(2)));
    beforeDeletes.add(table.currentSnapshot().snapshotId());

    // seq 4: position deletes in a/03-01 and b/03-03, equality deletes in b/03-01 and b/03-03
    DataFile a1 = in(s1, "a");
    DataFile b1 = in(s2, "b");
    DataFile b3 = in(s3, "b");
    DeleteFile bEq = eqDelete(spec0, b3.partition(), 100, 101, 21);
    rowDelta("deletes seq 4",
        List.of(
            posDelete(spec0, a1.partition(), a1.location(), 0, a1.location(), 3),
            eqDelete(spec0, b1.partition(), 21, 22),
            bEq,
            posDelete(spec0, b3.partition(), b3.location(), 5)),
        List.of());

    // seq 5: c, ca and null category; seq 6: more rows in a/03-01 and b/03-01 (id 21 again:
    // the equality delete of seq 4 must not apply to it)
    List<Record> r5 = records(c.get(3));
    r5.addAll(records(c.get(4)));
    List<DataFile> s5 = append("append c ca null", r5);
    List<Record> r6 = extra(31, 35, "a", LocalDateTime.of(2024, 3, 1, 9, 0));
    r6.addAll(extra(36, 40, "b", LocalDateTime.of(2024, 3, 1, 22, 0)));
    r6.addAll(extra(21, 21, "b", LocalDateTime.of(2024, 3, 1, 21, 0)));
    List<DataFile> s6 = append("append more a/03-01 b/03-01", r6);

    // seq 7: equality deletes in c and a/03-01 (reaching back to seq 1 and 6), position deletes
    // in the null-category partition and on the new a/03-01 file
    DataFile cFile = in(s5, "c");
    DataFile nullFile = in(s5, null);
    DataFile a6 = in(s6, "a");
    rowDelta("deletes seq 7",
        List.of(
            eqDelete(spec0, cFile.partition(), 1000, 1001),
            eqDelete(spec0, a6.partition(), 31, 2),
            posDelete(spec0, nullFile.partition(), nullFile.location(), 1),
            posDelete(spec0, a6.partition(), a6.location(), 0, a6.location(), 4)),
        List.of());

    // seq 8: d, and e rows with a null ts (a null day partition value)
    List<Record> r8 = records(c.get(5));
    List<PlanFilesTest.Row> e = new ArrayList<>();
    for (long i = 3100; i <= 3103; i++) {
      e.add(new PlanFilesTest.Row(i, "e", 1.0, "echo-null-ts", null));
    }
    r8.addAll(records(e));
    List<DataFile> s8 = append("append d, e with null ts", r8);
    DataFile dFile = in(s8, "d");
    DataFile eFile = in(s8, "e");

    // spec evolution to an unpartitioned spec
    table.updateSpec().removeField("category").removeField("ts_day").commit();
    PartitionSpec spec1 = table.spec();
    assertTrue(spec1.isUnpartitioned(), "spec after evolution: " + spec1);
    assertTrue(spec1.specId() != spec0.specId(), "a new spec id");

    // seq 9: a global equality delete, and old-spec equality and position deletes in d and c
    // (an unpartitioned position delete on a spec-0 file is invalid: Java calls it corrupted)
    rowDelta("deletes seq 9 (global)",
        List.of(
            eqDelete(spec1, null, 5, 2001, 1005, 36, 503),
            eqDelete(spec0, dFile.partition(), 2002, 2003),
            eqDelete(spec0, eFile.partition(), 3101),
            posDelete(spec0, cFile.partition(), cFile.location(), 2)),
        List.of());

    // seq 10, 11: zz, then e, now unpartitioned (one file each)
    List<DataFile> s10 = append("append zz (unpartitioned)", records(c.get(6)));
    List<DataFile> s11 = append("append e (unpartitioned)", records(c.get(7)));
    assertEquals(1, s10.size());
    assertEquals(1, s11.size());
    DataFile u10 = s10.get(0);
    DataFile u11 = s11.get(0);

    // seq 12: a second global equality delete, unpartitioned position deletes on one new file
    // and on both together (no single referenced file)
    rowDelta("deletes seq 12 (global)",
        List.of(
            eqDelete(spec1, null, -45, 3001, 2010),
            posDelete(spec1, null, u10.location(), 0),
            posDelete(spec1, null, u10.location(), 2, u11.location(), 1)),
        List.of());

    // seq 13: more unpartitioned rows (no delete above applies to them)
    append("append more (unpartitioned)", extra(4000, 4005, "a", LocalDateTime.of(2024, 3, 1, 0, 0)));

    // seq 14: an equality delete in spec 0 after the evolution, and one delete file removed
    // (its manifest entry is DELETED: no live delete file any more)
    rowDelta("deletes seq 14 (remove one)",
        List.of(eqDelete(spec0, a1.partition(), 9, 33)),
        List.of(bEq));

    table = catalog.loadTable(id);
  }

  // -------------------------------------------------------------- planning

  /** One delete or data file as planned: path, content, spec, data sequence number. */
  /** A planned or listed file; eqIds: its equality field ids as "[1, 2]", null if none. */
  record PFile(String path, String content, int specId, Long seq, String eqIds) {}

  private static String eqIds(DeleteFile d) {
    return d.equalityFieldIds() == null ? null : d.equalityFieldIds().toString();
  }

  /** skade.plan_files() rows, or null (and a recorded failure) when skade errs. */
  private List<PFile> skadePlan(String json, long snapshotId, List<String> failures) {
    return skadeRows(
        "SELECT content, file_path, partition_spec_id, sequence_number, equality_ids"
            + " FROM skade.plan_files(?, ?, ?::jsonb, ?, ?)",
        json, snapshotId, failures);
  }

  private List<PFile> skadeFiles(long snapshotId, List<String> failures) {
    return skadeRows(
        "SELECT content, file_path, partition_spec_id, sequence_number, equality_ids"
            + " FROM skade.files(?, ?, ?, ?)",
        null, snapshotId, failures);
  }

  private List<PFile> skadeRows(String sql, String json, long snapshotId, List<String> failures) {
    try (PreparedStatement ps = conn.prepareStatement(sql)) {
      int i = 1;
      ps.setString(i++, CommitLog.ns(TableIdentifier.of(ns, tableName)));
      ps.setString(i++, tableName);
      if (json != null) {
        ps.setString(i++, json);
      }
      ps.setLong(i++, snapshotId);
      ps.setString(i, Skade.CATALOG);
      List<PFile> out = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          long seq = rs.getLong(4);
          Long seqOrNull = rs.wasNull() ? null : seq;
          java.sql.Array ids = rs.getArray(5);
          String eq = ids == null ? null
              : java.util.Arrays.asList((Integer[]) ids.getArray()).toString();
          out.add(new PFile(rs.getString(2), rs.getString(1), rs.getInt(3), seqOrNull, eq));
        }
      }
      return out;
    } catch (SQLException e) {
      failures.add("snapshot " + snapshotId + (json == null ? " skade.files" : " filter " + json)
          + ": skade error " + e.getSQLState() + ": " + e.getMessage().replace('\n', ' '));
      return null;
    }
  }

  static String content(FileContent c) {
    switch (c) {
      case DATA:
        return "data";
      case POSITION_DELETES:
        return "position_deletes";
      case EQUALITY_DELETES:
        return "equality_deletes";
      default:
        throw new IllegalArgumentException(c.toString());
    }
  }

  /** Java's plan: data files and, per data file, the delete files attached to its task. */
  static final class JavaPlan {
    final Map<String, Set<String>> deletesByData = new LinkedHashMap<>();
    final Map<String, PFile> deletes = new LinkedHashMap<>();

    Set<String> data() {
      return deletesByData.keySet();
    }
  }

  private JavaPlan javaPlan(long snapshotId, Expression expr) throws IOException {
    JavaPlan p = new JavaPlan();
    TableScan scan = table.newScan().useSnapshot(snapshotId);
    if (expr != null) {
      scan = scan.filter(expr);
    }
    try (CloseableIterable<FileScanTask> tasks = scan.planFiles()) {
      for (FileScanTask t : tasks) {
        Set<String> ds =
            p.deletesByData.computeIfAbsent(t.file().location(), k -> new LinkedHashSet<>());
        for (DeleteFile d : t.deletes()) {
          ds.add(d.location());
          p.deletes.put(d.location(),
              new PFile(d.location(), content(d.content()), d.specId(), d.dataSequenceNumber(),
                  eqIds(d)));
        }
      }
    }
    return p;
  }

  /** The live delete files of a snapshot, read from its delete manifests by Java. */
  private Map<String, PFile> javaLiveDeletes(long snapshotId) throws IOException {
    Map<String, PFile> out = new LinkedHashMap<>();
    Snapshot snap = table.snapshot(snapshotId);
    for (ManifestFile m : snap.deleteManifests(table.io())) {
      try (ManifestReader<DeleteFile> r =
          ManifestFiles.readDeleteManifest(m, table.io(), table.specs())) {
        for (DeleteFile d : r) {
          out.put(d.location(),
              new PFile(d.location(), content(d.content()), d.specId(), d.dataSequenceNumber(),
                  eqIds(d)));
        }
      }
    }
    return out;
  }

  /** What is known about one snapshot, computed once. */
  final class SnapState {
    final long id;
    final Map<String, PFile> live;
    final JavaPlan full;
    final Set<String> skadeLiveDeletes = new TreeSet<>();

    SnapState(long id, List<String> failures) throws IOException {
      this.id = id;
      this.live = javaLiveDeletes(id);
      this.full = javaPlan(id, null);
      List<PFile> files = skadeFiles(id, failures);
      if (files != null) {
        for (PFile f : files) {
          if (!"data".equals(f.content())) {
            skadeLiveDeletes.add(f.path());
          }
        }
      }
      String where = "snapshot " + id + " (" + steps.get(id) + ")";
      if (files != null && !skadeLiveDeletes.equals(new TreeSet<>(live.keySet()))) {
        failures.add(where + ": skade.files delete files " + names(skadeLiveDeletes)
            + " are not Java's live delete files " + names(live.keySet()));
      }
      for (String d : full.deletes.keySet()) {
        if (!live.containsKey(d)) {
          failures.add(where + ": Java's full scan attaches a delete file that is not live: "
              + name(d) + " (test bug)");
        }
      }
    }
  }

  int perFileIdentical;
  int perFileSuperset;
  final List<String> supersetExamples = new ArrayList<>();

  /** skade.plan_files(): each data file's delete_files, or null (and a failure) when skade errs. */
  private Map<String, Set<String>> skadeDeletesByData(String json, long snapshotId,
      List<String> failures) {
    String sql = "SELECT file_path, delete_files FROM skade.plan_files(?, ?, ?::jsonb, ?, ?)"
        + " WHERE content = 'data'";
    try (PreparedStatement ps = conn.prepareStatement(sql)) {
      ps.setString(1, CommitLog.ns(TableIdentifier.of(ns, tableName)));
      ps.setString(2, tableName);
      ps.setString(3, json);
      ps.setLong(4, snapshotId);
      ps.setString(5, Skade.CATALOG);
      Map<String, Set<String>> out = new LinkedHashMap<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          java.sql.Array a = rs.getArray(2);
          if (a == null) {
            failures.add("plan_files gives a data file NULL delete_files: " + rs.getString(1));
            return null;
          }
          out.put(rs.getString(1), new LinkedHashSet<>(List.of((String[]) a.getArray())));
        }
      }
      return out;
    } catch (SQLException e) {
      failures.add("skade error " + e.getSQLState() + ": " + e.getMessage());
      return null;
    }
  }

  int identicalDeletes;
  int fewerDeletes;
  int identicalData;
  int withJavaDeletes;
  long javaDeleteCount;
  long skadeDeleteCount;

  /** Compares one plan; returns false when skade errs or returns fewer files than it must. */
  private boolean check(SnapState s, String json, List<String> failures) throws IOException {
    Expression expr = json.equals("true") ? null : ExpressionParser.fromJson(json, table.schema());
    JavaPlan java = javaPlan(s.id, expr);
    List<PFile> rows = skadePlan(json, s.id, failures);
    if (rows == null) {
      return false;
    }
    String where = "snapshot " + s.id + " (" + steps.get(s.id) + ") filter " + json;
    boolean ok = true;
    Set<String> data = new LinkedHashSet<>();
    Map<String, PFile> deletes = new LinkedHashMap<>();
    for (PFile f : rows) {
      boolean dup;
      if ("data".equals(f.content())) {
        dup = !data.add(f.path());
      } else {
        dup = deletes.put(f.path(), f) != null;
      }
      if (dup) {
        failures.add(where + ": skade returns a file twice: " + name(f.path()));
        ok = false;
      }
    }
    // (1) data files: skade plans every file Java plans
    List<String> missingData = missing(java.data(), data);
    if (!missingData.isEmpty()) {
      failures.add(where + ": skade drops data files Java plans: " + missingData);
      ok = false;
    }
    if (!s.full.data().containsAll(data)) {
      failures.add(where + ": skade plans data files that are no live data file: "
          + missing(data, s.full.data()));
      ok = false;
    }
    // (2) delete files: every delete Java attaches to a planned task ...
    List<String> missingJava = missing(java.deletes.keySet(), deletes.keySet());
    if (!missingJava.isEmpty()) {
      failures.add(where + ": skade drops delete files Java attaches: " + missingJava
          + "\n    skade deletes: " + names(deletes.keySet())
          + "\n    Java tasks: " + tasks(java));
      ok = false;
    }
    // (2b) per data file: skade's delete_files holds every delete Java attaches to it
    Map<String, Set<String>> skadeByData = skadeDeletesByData(json, s.id, failures);
    if (skadeByData != null) {
      for (String d : data) {
        Set<String> want = s.full.deletesByData.getOrDefault(d, Set.of());
        Set<String> got = skadeByData.getOrDefault(d, Set.of());
        List<String> lacking = missing(want, got);
        if (!lacking.isEmpty()) {
          failures.add(where + ": delete_files of " + name(d) + " lacks " + lacking);
          ok = false;
        } else if (!want.equals(got)) {
          perFileSuperset++;
          if (supersetExamples.size() < 5) {
            supersetExamples.add(name(d) + " (" + steps.get(s.id) + "): skade " + names(got)
                + " vs Java " + names(want));
          }
        } else {
          perFileIdentical++;
        }
      }
    }
    // ... and every delete Java's full scan attaches to a data file skade plans
    Set<String> needed = new LinkedHashSet<>();
    for (String d : data) {
      needed.addAll(s.full.deletesByData.getOrDefault(d, Set.of()));
    }
    List<String> missingNeeded = missing(needed, deletes.keySet());
    if (!missingNeeded.isEmpty() && missingJava.isEmpty()) {
      failures.add(where + ": skade drops delete files that apply to data files it plans: "
          + missingNeeded + "\n    skade data: " + names(data)
          + "\n    skade deletes: " + names(deletes.keySet()));
      ok = false;
    }
    // (3) no delete file that is not a live delete file of the snapshot; Java's metadata
    for (PFile f : deletes.values()) {
      PFile j = s.live.get(f.path());
      if (j == null || !s.skadeLiveDeletes.contains(f.path())) {
        failures.add(where + ": skade returns a delete file that is not live: " + name(f.path())
            + (j == null ? " (not in Java's delete manifests)" : " (not in skade.files)"));
        ok = false;
      } else if (!j.content().equals(f.content()) || j.specId() != f.specId()
          || !Objects.equals(j.seq(), f.seq()) || !Objects.equals(j.eqIds(), f.eqIds())) {
        failures.add(where + ": skade's delete row " + f + " differs from Java's " + j);
        ok = false;
      }
    }
    if (!java.deletes.isEmpty()) {
      withJavaDeletes++;
    }
    javaDeleteCount += java.deletes.size();
    skadeDeleteCount += deletes.size();
    if (data.equals(java.data())) {
      identicalData++;
    }
    if (ok) {
      if (deletes.keySet().equals(java.deletes.keySet())) {
        identicalDeletes++;
      }
    } else {
      fewerDeletes++;
    }
    return ok;
  }

  private String tasks(JavaPlan p) {
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, Set<String>> e : p.deletesByData.entrySet()) {
      out.add(name(e.getKey()) + " <- " + names(e.getValue()));
    }
    return String.join("; ", out);
  }

  private String name(String path) {
    String shortName = path.substring(path.lastIndexOf('/') + 1);
    String d = describe.get(path);
    return d == null ? shortName : shortName + " [" + d + "]";
  }

  private List<String> names(Set<String> paths) {
    List<String> out = new ArrayList<>();
    for (String p : paths) {
      out.add(name(p));
    }
    return out;
  }

  private List<String> missing(Set<String> want, Set<String> have) {
    List<String> out = new ArrayList<>();
    for (String f : want) {
      if (!have.contains(f)) {
        out.add(name(f));
      }
    }
    return out;
  }

  // -------------------------------------------------------------- the test

  @Test
  void planFilesDeletesAgreeWithJavaPlanner() throws Exception {
    long start = System.nanoTime();
    build();
    List<String> failures = new ArrayList<>();
    long current = table.currentSnapshot().snapshotId();

    // the setup itself: what Java sees
    SnapState now = new SnapState(current, failures);
    Map<String, Long> kinds = new TreeMap<>();
    for (PFile d : now.live.values()) {
      kinds.merge(d.content() + "/spec" + d.specId(), 1L, Long::sum);
    }
    System.out.println("table " + tableName + ": " + now.full.data().size() + " data files, "
        + now.live.size() + " live delete files " + kinds + ", "
        + now.full.deletes.size() + " attached by Java's full scan, "
        + table.specs().size() + " specs, " + steps.size() + " snapshots");
    assertTrue(now.live.size() >= 12, "live delete files: " + now.live.size());
    assertTrue(kinds.keySet().stream().anyMatch(k -> k.startsWith("equality_deletes/spec1")),
        "a global equality delete: " + kinds);

    // filter true and ~60 random filters at the current snapshot
    Random rnd = new Random(SEED);
    PlanFilesTest.FilterGen gen = new PlanFilesTest.FilterGen(rnd, false);
    List<String> filters = new ArrayList<>();
    filters.add("true");
    for (int i = 0; i < FILTERS; i++) {
      filters.add(gen.expr(2));
    }
    // a few hand-written ones aimed at the delete partitions
    filters.add("{\"type\":\"eq\",\"term\":\"category\",\"value\":\"b\"}");
    filters.add("{\"type\":\"eq\",\"term\":\"category\",\"value\":\"a\"}");
    filters.add("{\"type\":\"is-null\",\"term\":\"category\"}");
    filters.add("{\"type\":\"in\",\"term\":\"id\",\"values\":[4001, 3001]}");
    filters.add("{\"type\":\"gt-eq\",\"term\":\"ts\",\"value\":\"2024-04-01T00:00:00\"}");
    filters.add("{\"type\":\"lt\",\"term\":\"id\",\"value\":0}");
    int n = 0;
    for (String json : filters) {
      check(now, json, failures);
      n++;
    }
    String summary =
        String.format(
            "%d filters: delete files identical to Java's for %d, superset for %d;"
                + " data files identical for %d",
            n, identicalDeletes, n - identicalDeletes - fewerDeletes, identicalData)
            + (fewerDeletes == 0 ? "" : "; FEWER delete files or errors for " + fewerDeletes);
    String counts =
        String.format(
            "Java attaches delete files for %d of the %d filters; delete rows in all: Java %d,"
                + " skade %d; per data file, delete_files identical to Java's task deletes for %d,"
                + " superset for %d",
            withJavaDeletes, n, javaDeleteCount, skadeDeleteCount, perFileIdentical,
            perFileSuperset);
    for (String ex : supersetExamples) {
      System.out.println("  superset: " + ex);
    }

    // filter true at every snapshot (time travel); none before the first delete has deletes
    int histOk = 0;
    for (long id : steps.keySet()) {
      SnapState s = id == current ? now : new SnapState(id, failures);
      if (check(s, "true", failures)) {
        histOk++;
      }
      if (beforeDeletes.contains(id)) {
        List<PFile> rows = skadePlan("true", id, failures);
        if (rows != null) {
          for (PFile f : rows) {
            if (!"data".equals(f.content())) {
              failures.add("snapshot " + id + " (" + steps.get(id) + ", before any delete):"
                  + " plan_files returns a delete row " + name(f.path()));
            }
          }
          assertTrue(s.live.isEmpty());
        }
        // and a filtered one
        check(s, "{\"type\":\"eq\",\"term\":\"category\",\"value\":\"a\"}", failures);
      }
    }

    long ms = (System.nanoTime() - start) / 1_000_000;
    System.out.println(summary + " (" + ms + " ms)");
    System.out.println(counts);
    System.out.println("time travel: filter true agrees at " + histOk + " of " + steps.size()
        + " snapshots; " + beforeDeletes.size() + " snapshots before the first delete");
    System.err.println("DeleteFilesTest: " + summary);
    if (!failures.isEmpty()) {
      failures.forEach(System.out::println);
      fail(failures.size() + " delete-file planning failures, the first:\n"
          + String.join("\n", failures.subList(0, Math.min(10, failures.size()))));
    }
  }
}
