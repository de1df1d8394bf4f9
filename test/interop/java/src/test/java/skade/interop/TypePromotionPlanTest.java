package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.expressions.ExpressionParser;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/**
 * A column promoted from int to long while older files (and an equality delete on it) keep their
 * 4-byte bounds, and Java merges an old file's entry into a manifest whose schema says long:
 * skade.files() and skade.plan_files() read those bounds widened (as Java does), prune by them,
 * and attach the delete to the data file it applies to (sequence numbers), as Java's planner.
 */
class TypePromotionPlanTest extends CatalogTestBase {
  static final Schema S =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "v", Types.IntegerType.get()));

  @Test
  void promotedColumnPlansLikeJava() throws Exception {
    Skade.allowFileAccess(conn, Skade.warehouse());
    TableIdentifier tid = TableIdentifier.of(ns, "promo");
    Table t =
        catalog
            .buildTable(tid, S)
            .withPartitionSpec(PartitionSpec.unpartitioned())
            .withProperty(TableProperties.FORMAT_VERSION, "2")
            .withProperty("commit.manifest.min-count-to-merge", "2")
            .create();
    List<Record> rows = new ArrayList<>();
    for (int i = 1; i <= 5; i++) {
      rows.add(Rows.rec(S, (long) i, i * 10));
    }
    DataFile before = Rows.append(t, rows).get(0);

    // an equality delete on v = 20, written while v is an int
    GenericFileWriterFactory wf =
        new GenericFileWriterFactory.Builder(t)
            .dataFileFormat(FileFormat.PARQUET)
            .deleteFileFormat(FileFormat.PARQUET)
            .equalityFieldIds(new int[] {2})
            .equalityDeleteRowSchema(t.schema().select("v"))
            .build();
    OutputFileFactory out =
        OutputFileFactory.builderFor(t, 7, 99).format(FileFormat.PARQUET).build();
    EqualityDeleteWriter<Record> w =
        wf.newEqualityDeleteWriter(out.newOutputFile(), t.spec(), null);
    try (w) {
      GenericRecord r = GenericRecord.create(t.schema().select("v"));
      r.setField("v", 20);
      w.write(r);
    }
    DeleteFile delete = w.toDeleteFile();
    t.newRowDelta().addDeletes(delete).commit();

    t.updateSchema().updateColumn("v", Types.LongType.get()).commit();
    t.refresh();
    List<Record> rows2 = new ArrayList<>();
    for (int i = 6; i <= 8; i++) {
      rows2.add(Rows.rec(t.schema(), (long) i, (long) i * 10));
    }
    DataFile after = Rows.append(t, rows2).get(0);
    t.refresh();

    // files(): the old file's 4-byte bounds read as longs
    Map<String, String> lower = new LinkedHashMap<>();
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT file_path, columns->'v'->>'lower' FROM skade.files(?, 'promo', NULL, ?)"
                + " WHERE content = 'data'")) {
      ps.setString(1, ns.toString());
      ps.setString(2, Skade.CATALOG);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          lower.put(rs.getString(1), rs.getString(2));
        }
      }
    }
    assertEquals("10", lower.get(before.location()), "old file's lower bound of v, widened");
    assertEquals("60", lower.get(after.location()), "new file's lower bound of v");

    for (String json :
        List.of(
            "true",
            "{\"type\":\"eq\",\"term\":\"v\",\"value\":20}",
            "{\"type\":\"gt\",\"term\":\"v\",\"value\":55}",
            "{\"type\":\"lt\",\"term\":\"v\",\"value\":0}")) {
      Map<String, Set<String>> java = new LinkedHashMap<>();
      try (CloseableIterable<FileScanTask> tasks =
          t.newScan()
              .filter(
                  json.equals("true")
                      ? org.apache.iceberg.expressions.Expressions.alwaysTrue()
                      : ExpressionParser.fromJson(json, t.schema()))
              .planFiles()) {
        for (FileScanTask task : tasks) {
          Set<String> ds = new LinkedHashSet<>();
          task.deletes().forEach(d -> ds.add(d.location()));
          java.put(task.file().location(), ds);
        }
      }
      Map<String, Set<String>> skade = new LinkedHashMap<>();
      try (PreparedStatement ps =
          conn.prepareStatement(
              "SELECT file_path, delete_files FROM skade.plan_files(?, 'promo', ?::jsonb, NULL, ?)"
                  + " WHERE content = 'data'")) {
        ps.setString(1, ns.toString());
        ps.setString(2, json);
        ps.setString(3, Skade.CATALOG);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            skade.put(
                rs.getString(1),
                new LinkedHashSet<>(List.of((String[]) rs.getArray(2).getArray())));
          }
        }
      }
      assertEquals(java, skade, "plan_files " + json + " = Java's tasks and their deletes");
    }
    // and the delete applies to the old file only (sequence numbers)
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT count(*) FROM skade.plan_files(?, 'promo', 'true', NULL, ?)"
                + " WHERE content <> 'data'")) {
      ps.setString(1, ns.toString());
      ps.setString(2, Skade.CATALOG);
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        assertEquals(1, rs.getInt(1), "the equality delete, once");
      }
    }
  }

  /**
   * A decimal(9,2) widened to decimal(18,2): the old files' bounds (the shortest two's
   * complement of 9 digits) and the new ones compare by value at scale 2, as Java's; a literal
   * of another scale is compared exactly (one scale 2 cannot hold equals nothing: skade prunes
   * every file, Java keeps those whose bounds surround it).
   */
  @Test
  void promotedDecimalPlansLikeJava() throws Exception {
    Schema d9 =
        new Schema(
            Types.NestedField.required(1, "id", Types.LongType.get()),
            Types.NestedField.optional(2, "d", Types.DecimalType.of(9, 2)));
    TableIdentifier tid = TableIdentifier.of(ns, "promo_dec");
    Table t =
        catalog
            .buildTable(tid, d9)
            .withPartitionSpec(PartitionSpec.unpartitioned())
            .withProperty(TableProperties.FORMAT_VERSION, "2")
            .create();
    String[][] commits = {{"-12.50", "-0.01"}, {"0.00", "12.34"}, {"12.35", "9999999.99"}};
    long id = 0;
    for (String[] c : commits) {
      List<Record> rows = new ArrayList<>();
      for (String v : c) {
        rows.add(Rows.rec(d9, ++id, new BigDecimal(v)));
      }
      Rows.append(t, rows);
    }
    t.updateSchema().updateColumn("d", Types.DecimalType.of(18, 2)).commit();
    t.refresh();
    List<Record> rows = new ArrayList<>();
    for (String v : new String[] {"-99999999999.99", "123456789012.34"}) {
      rows.add(Rows.rec(t.schema(), ++id, new BigDecimal(v)));
    }
    Rows.append(t, rows);
    t.refresh();

    for (String lit :
        List.of("\"12.34\"", "\"-0.01\"", "\"10000000.00\"", "\"-99999999999.99\"", "0")) {
      for (String op : List.of("eq", "lt", "gt-eq")) {
        String json = "{\"type\":\"" + op + "\",\"term\":\"d\",\"value\":" + lit + "}";
        assertEquals(javaPlan(t, json), skadePlan("promo_dec", json),
            "plan_files " + json + " = Java's");
      }
    }
    // 12.345 at scale 2: no value equals it; lt and gt-eq compare exactly
    Set<String> skadeEq = skadePlan("promo_dec", "{\"type\":\"eq\",\"term\":\"d\",\"value\":\"12.345\"}");
    assertTrue(skadeEq.isEmpty(), "eq 12.345 at scale 2 plans nothing: " + skadeEq);
    for (String op : List.of("lt", "gt-eq")) {
      String json = "{\"type\":\"" + op + "\",\"term\":\"d\",\"value\":\"12.345\"}";
      assertEquals(javaPlan(t, json), skadePlan("promo_dec", json), "plan_files " + json);
    }
  }

  /** The data files Java plans for a REST filter (parsed without the schema: any scale). */
  private static Set<String> javaPlan(Table t, String json) throws Exception {
    Set<String> out = new LinkedHashSet<>();
    try (CloseableIterable<FileScanTask> tasks =
        t.newScan().filter(ExpressionParser.fromJson(json)).planFiles()) {
      for (FileScanTask task : tasks) {
        out.add(task.file().location());
      }
    }
    return out;
  }

  private Set<String> skadePlan(String table, String json) throws Exception {
    Set<String> out = new LinkedHashSet<>();
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT file_path FROM skade.plan_files(?, ?, ?::jsonb, NULL, ?) WHERE content = 'data'")) {
      ps.setString(1, ns.toString());
      ps.setString(2, table);
      ps.setString(3, json);
      ps.setString(4, Skade.CATALOG);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
    }
    return out;
  }
}
