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
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.expressions.Binder;
import org.apache.iceberg.expressions.Bound;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.ExpressionParser;
import org.apache.iceberg.expressions.ExpressionVisitors;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.Literal;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/**
 * skade.plan_files() against Java Iceberg's own planner, on ~150 random filters (fixed seed)
 * written as Iceberg REST expression JSON: the very string Java parses with ExpressionParser is
 * the jsonb skade gets.
 *
 * <p>For every filter and table: every file Java plans is in skade's plan (skade may keep more,
 * never fewer), and every file holding a row that matches is in skade's plan. A row "matches" the
 * way Iceberg's planner reads a filter: NOT is pushed down onto the predicates (each replaced by
 * its inverse), then a null value fails every comparison except not-eq, not-in,
 * not-starts-with, is-null and not-nan. (Java's row Evaluator alone is not used as the oracle: its
 * comparator sorts null first, so lt(col, x) is true of a null there, while Java's planner drops
 * an all-null file for lt.) The rows are read back from the Parquet files themselves.
 */
class PlanFilesTest extends CatalogTestBase {
  static final long SEED = 20260301L;
  static final int FILTERS = 150;

  /** ts: timestamp without zone (ISO literals "2024-03-01T08:00:00"). */
  static final Schema SCHEMA = schema(Types.TimestampType.withoutZone());

  /** ts: timestamptz (ISO literals "2024-03-01T08:00:00+00:00"). */
  static final Schema SCHEMA_TZ = schema(Types.TimestampType.withZone());

  static Schema schema(Type tsType) {
    return new Schema(
        Types.NestedField.required(1, "id", Types.LongType.get()),
        Types.NestedField.optional(2, "category", Types.StringType.get()),
        Types.NestedField.optional(3, "amount", Types.DoubleType.get()),
        Types.NestedField.optional(4, "name", Types.StringType.get()),
        Types.NestedField.optional(5, "ts", tsType));
  }

  static final DateTimeFormatter SECONDS = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss");
  static final DateTimeFormatter MICROS =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS");

  /** One row, with ts as a local date-time (UTC for the timestamptz table). */
  record Row(long id, String category, Double amount, String name, LocalDateTime ts) {}

  /** The rows, as commits: each commit is a list of rows. */
  static List<List<Row>> commits() {
    List<List<Row>> commits = new ArrayList<>();
    LocalDateTime d1 = LocalDateTime.of(2024, 3, 1, 8, 0);

    // 1: category a, 2024-03-01, ids 1..10, small amounts
    List<Row> c = new ArrayList<>();
    for (int i = 1; i <= 10; i++) {
      c.add(new Row(i, "a", i * 0.5, String.format("alpha-%02d", i), d1.plusMinutes(7L * i)));
    }
    commits.add(c);

    // 2: category a on 2024-03-02 and category b late on 2024-03-01
    c = new ArrayList<>();
    for (int i = 11; i <= 20; i++) {
      c.add(
          new Row(
              i, "a", 10 + i * 0.25, String.format("alpha-%02d", i),
              LocalDateTime.of(2024, 3, 2, 10, 0).plusMinutes(i).plusSeconds(i)));
    }
    for (int i = 21; i <= 30; i++) {
      c.add(
          new Row(
              i, "b", 20 + i * 0.125, "bravo-" + i,
              LocalDateTime.of(2024, 3, 1, 23, 0).plusMinutes(5L * (i - 21))));
    }
    commits.add(c);

    // 3: category b on 2024-03-03, names longer than the 16-character metric truncation
    c = new ArrayList<>();
    for (int i = 100; i <= 120; i++) {
      c.add(
          new Row(
              i, "b", 100 + i * 3.7, String.format("beta-long-name-with-prefix-%03d", i),
              LocalDateTime.of(2024, 3, 3, 0, 0).plusMinutes(i - 100).plusNanos(1000L * i)));
    }
    commits.add(c);

    // 4: categories c and ca on 2024-03-05: negative amounts, zeros of both signs
    c = new ArrayList<>();
    for (int i = 1000; i <= 1010; i++) {
      c.add(
          new Row(
              i, "c", -(i - 1000) / 10.0, "charlie-" + i,
              LocalDateTime.of(2024, 3, 5, 12, 0).plusSeconds(i - 1000)));
    }
    for (int i = 1011; i <= 1015; i++) {
      c.add(
          new Row(
              i, "ca", i % 2 == 0 ? 0.0 : -0.0, "charlie-" + i,
              LocalDateTime.of(2024, 3, 5, 13, 0).plusMinutes(i - 1011)));
    }
    commits.add(c);

    // 5: null category and null amount (one null name too)
    c = new ArrayList<>();
    for (int i = 500; i <= 505; i++) {
      c.add(
          new Row(
              i, null, null, i == 503 ? null : "null-cat-" + i,
              LocalDateTime.of(2024, 3, 2, 6, 0).plusMinutes(i - 500)));
    }
    commits.add(c);

    // 6: category d in April: some null amounts, one NaN
    c = new ArrayList<>();
    for (int i = 2000; i <= 2040; i++) {
      Double amount = i % 3 == 0 ? null : (i == 2020 ? Double.NaN : (double) i);
      c.add(
          new Row(
              i, "d", amount, "delta" + i,
              LocalDateTime.of(2024, 4, 10, 0, 30).plusMinutes(2L * (i - 2000))));
    }
    commits.add(c);

    // 7: category zz, negative ids, non-ASCII names, just before midnight of 2024-02-28
    c = new ArrayList<>();
    String[] names = {
      "über-", "ñandú-", "日本-", "😀-", "\uFFFD-", "ünïcödé-lång-nämé-", "Zulu-", "zulu-"
    };
    for (int i = -50; i <= -40; i++) {
      c.add(
          new Row(
              i, "zz", 1e6 + i * 0.5, names[(i + 50) % names.length] + (-i),
              LocalDateTime.of(2024, 2, 28, 23, 59, 59, 999_999_000).minusSeconds(-50 - i)));
    }
    commits.add(c);

    // 8: category e with null timestamps
    c = new ArrayList<>();
    for (int i = 3000; i <= 3003; i++) {
      c.add(new Row(i, "e", 5.5, "echo", null));
    }
    commits.add(c);
    return commits;
  }

  /** A table under test: the Java handle, its schema, every data file and its rows. */
  static final class Subject {
    final String name;
    final Table table;
    final boolean tz;
    final Map<String, List<StructLike>> rowsByFile = new LinkedHashMap<>();
    int identical;
    int fewer;
    int tighter;
    long prunedBySkade;
    long prunedByJava;

    Subject(String name, Table table, boolean tz) {
      this.name = name;
      this.table = table;
      this.tz = tz;
    }
  }

  @Test
  void planFilesAgreesWithJavaPlanner() throws Exception {
    long start = System.nanoTime();
    List<Subject> subjects = new ArrayList<>();
    subjects.add(
        create("events", SCHEMA,
            PartitionSpec.builderFor(SCHEMA).identity("category").day("ts").build(), false));
    subjects.add(
        create("bucketed", SCHEMA_TZ,
            PartitionSpec.builderFor(SCHEMA_TZ).bucket("id", 4).hour("ts").build(), true));
    subjects.add(
        create("monthly", SCHEMA, PartitionSpec.builderFor(SCHEMA).month("ts").build(), false));

    List<String> failures = new ArrayList<>();
    for (Subject s : subjects) {
      // the same structure of filters for each table (same seed); only the ts literals differ
      Random rnd = new Random(SEED);
      FilterGen gen = new FilterGen(rnd, s.tz);
      Set<String> all = s.rowsByFile.keySet();
      List<String> everything = skadePlan(s, "true", failures);
      if (everything == null) {
        fail(failures.get(failures.size() - 1));
      }
      assertEquals(new TreeSet<>(all), new TreeSet<>(everything),
          s.name + ": plan_files with filter true is every data file");
      for (int n = 0; n < FILTERS; n++) {
        String json = gen.expr(2);
        check(s, json, failures);
      }
    }

    long ms = (System.nanoTime() - start) / 1_000_000;
    int n = 0;
    int identical = 0;
    int fewer = 0;
    int tighter = 0;
    long a = 0;
    long b = 0;
    for (Subject s : subjects) {
      System.out.printf(
          "plan_files %s (%s; %d files): %d filters: skade plan identical to Java's for %d,"
              + " superset for %d, tighter (no matching row dropped) for %d,"
              + " files pruned by skade %d, by Java %d%s%n",
          s.name, spec(s.table), s.rowsByFile.size(), FILTERS, s.identical,
          FILTERS - s.identical - s.fewer - s.tighter, s.tighter, s.prunedBySkade,
          s.prunedByJava,
          s.fewer == 0 ? "" : "; skade plans FEWER files or fails for " + s.fewer);
      n += FILTERS;
      fewer += s.fewer;
      tighter += s.tighter;
      identical += s.identical;
      a += s.prunedBySkade;
      b += s.prunedByJava;
    }
    String summary =
        String.format(
            "%d filters: skade plan identical to Java's for %d, superset for %d, tighter for %d,"
                + " files pruned by skade %d, by Java %d",
            n, identical, n - identical - fewer - tighter, tighter, a, b)
            + (fewer == 0 ? "" : "; skade plans FEWER files or fails for " + fewer);
    System.out.println(
        summary + " (" + FILTERS + " per table on " + subjects.size() + " tables, " + ms + " ms)");
    System.err.println("PlanFilesTest: " + summary);
    if (!failures.isEmpty()) {
      failures.forEach(System.out::println);
      fail(failures.size() + " plan_files failures, the first:\n"
          + String.join("\n", failures.subList(0, Math.min(10, failures.size()))));
    }
  }

  private static String spec(Table table) {
    List<String> parts = new ArrayList<>();
    for (PartitionField f : table.spec().fields()) {
      parts.add(f.transform() + "(" + table.schema().findColumnName(f.sourceId()) + ")");
    }
    return String.join(", ", parts);
  }

  private Subject create(String name, Schema schema, PartitionSpec spec, boolean tz) {
    TableIdentifier id = TableIdentifier.of(ns, name);
    Table table = catalog.buildTable(id, schema).withPartitionSpec(spec).create();
    for (List<Row> commit : commits()) {
      List<Record> recs = new ArrayList<>();
      for (Row r : commit) {
        Object ts = r.ts() == null ? null : (tz ? r.ts().atOffset(ZoneOffset.UTC) : r.ts());
        recs.add(Rows.rec(schema, r.id(), r.category(), r.amount(), r.name(), ts));
      }
      Rows.append(table, recs);
    }
    table = catalog.loadTable(id);
    Subject s = new Subject(name, table, tz);
    InternalRecordWrapper wrap = new InternalRecordWrapper(schema.asStruct());
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask t : tasks) {
        String path = t.file().location();
        List<StructLike> rows = new ArrayList<>();
        try (CloseableIterable<Record> it =
            Parquet.read(table.io().newInputFile(path))
                .project(schema)
                .createReaderFunc(fs -> GenericParquetReaders.buildReader(schema, fs))
                .build()) {
          for (Record r : it) {
            rows.add(wrap.copyFor(r.copy()));
          }
        }
        assertEquals(t.file().recordCount(), rows.size(), path);
        s.rowsByFile.put(path, rows);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    assertTrue(s.rowsByFile.size() >= 8, name + " has " + s.rowsByFile.size() + " files");
    return s;
  }

  private void check(Subject s, String json, List<String> failures) throws Exception {
    Schema schema = s.table.schema();
    Expression expr = ExpressionParser.fromJson(json, schema);

    Set<String> java = new LinkedHashSet<>();
    try (CloseableIterable<FileScanTask> tasks = s.table.newScan().filter(expr).planFiles()) {
      for (FileScanTask t : tasks) {
        java.add(t.file().location());
      }
    }

    Expression bound = Expressions.rewriteNot(Binder.bind(schema.asStruct(), expr, true));
    Set<String> matching = new LinkedHashSet<>();
    for (Map.Entry<String, List<StructLike>> e : s.rowsByFile.entrySet()) {
      for (StructLike row : e.getValue()) {
        if (ExpressionVisitors.visit(bound, new Matches(row))) {
          matching.add(e.getKey());
          break;
        }
      }
    }

    List<String> skade = skadePlan(s, json, failures);
    if (skade == null) {
      s.fewer++;
      return;
    }
    Set<String> skadeSet = new LinkedHashSet<>(skade);
    String where = s.name + " filter " + json;
    if (skadeSet.size() != skade.size()) {
      failures.add(where + ": skade plans a file twice: " + skade);
    }
    if (!s.rowsByFile.keySet().containsAll(skadeSet)) {
      failures.add(where + ": skade plans a file that is no data file of the snapshot");
    }
    // skade may prune tighter than Java (e.g. eq/in checked against a file's
    // bounds and bucket with the same literal): fine as long as the files it
    // drops hold no matching row, which the check below makes sure of
    List<String> missingJava = missing(java, skadeSet);
    boolean tighter = false;
    if (!missingJava.isEmpty()) {
      long rows = matchingRows(s, missingJava, bound);
      if (rows > 0) {
        failures.add(where + ": skade drops files Java plans: " + missingJava
            + " (rows matching: " + rows + ")");
      } else {
        tighter = true;
        System.out.println(where + ": skade drops " + missingJava.size()
            + " file(s) Java plans, none holding a matching row");
      }
    }
    List<String> missingRows = missing(matching, skadeSet);
    if (!missingRows.isEmpty()) {
      failures.add(where + ": skade drops files with matching rows: " + missingRows);
    }
    if (!java.containsAll(matching)) {
      // the oracle disagrees with Java's planner itself: a test bug, not a skade one
      failures.add(where + ": Java's planner drops files with matching rows: "
          + missing(matching, java));
    }
    if ((!missingJava.isEmpty() && !tighter) || !missingRows.isEmpty()) {
      s.fewer++;
    } else if (tighter) {
      s.tighter++;
    }
    if (skadeSet.equals(java)) {
      s.identical++;
    }
    s.prunedBySkade += s.rowsByFile.size() - skadeSet.size();
    s.prunedByJava += s.rowsByFile.size() - java.size();
  }

  private static List<String> missing(Set<String> want, Set<String> have) {
    List<String> out = new ArrayList<>();
    for (String f : want) {
      if (!have.contains(f)) {
        out.add(f.substring(f.lastIndexOf('/', f.lastIndexOf('/') - 1) + 1));
      }
    }
    return out;
  }

  private static int matchingRows(Subject s, List<String> shortNames, Expression bound) {
    int n = 0;
    for (Map.Entry<String, List<StructLike>> e : s.rowsByFile.entrySet()) {
      for (String sn : shortNames) {
        if (e.getKey().endsWith("/" + sn)) {
          for (StructLike row : e.getValue()) {
            if (ExpressionVisitors.visit(bound, new Matches(row))) {
              n++;
            }
          }
        }
      }
    }
    return n;
  }

  /** skade.plan_files(...) data file paths, or null (and a recorded failure) on an error. */
  /** null (and a recorded failure) when skade errs: counted as not a superset. */
  private List<String> skadePlan(Subject s, String json, List<String> failures)
      throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT file_path FROM skade.plan_files(?, ?, ?::jsonb, ?, ?) WHERE content = 'data'")) {
      ps.setString(1, CommitLog.ns(TableIdentifier.of(ns, s.name)));
      ps.setString(2, s.name);
      ps.setString(3, json);
      ps.setLong(4, s.table.currentSnapshot().snapshotId());
      ps.setString(5, Skade.CATALOG);
      List<String> out = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
      return out;
    } catch (SQLException e) {
      failures.add(s.name + " filter " + json + ": skade error " + e.getSQLState() + ": "
          + e.getMessage().replace('\n', ' '));
      return null;
    }
  }

  /**
   * Does a row match a bound, NOT-free expression? Null fails every comparison but the negated
   * ones (not-eq, not-in, not-starts-with), as in Iceberg's planner.
   */
  static final class Matches extends ExpressionVisitors.BoundVisitor<Boolean> {
    private final StructLike row;

    Matches(StructLike row) {
      this.row = row;
    }

    @Override
    public Boolean alwaysTrue() {
      return true;
    }

    @Override
    public Boolean alwaysFalse() {
      return false;
    }

    @Override
    public Boolean not(Boolean result) {
      throw new IllegalStateException("not is rewritten away");
    }

    @Override
    public Boolean and(Boolean l, Boolean r) {
      return l && r;
    }

    @Override
    public Boolean or(Boolean l, Boolean r) {
      return l || r;
    }

    @Override
    public <T> Boolean isNull(Bound<T> t) {
      return t.eval(row) == null;
    }

    @Override
    public <T> Boolean notNull(Bound<T> t) {
      return t.eval(row) != null;
    }

    @Override
    public <T> Boolean isNaN(Bound<T> t) {
      Object v = t.eval(row);
      return v instanceof Double d ? d.isNaN() : (v instanceof Float f && f.isNaN());
    }

    @Override
    public <T> Boolean notNaN(Bound<T> t) {
      return !isNaN(t);
    }

    private <T> Integer cmp(Bound<T> t, Literal<T> lit) {
      T v = t.eval(row);
      if (v == null) {
        return null;
      }
      return lit.comparator().compare(v, lit.value());
    }

    @Override
    public <T> Boolean lt(Bound<T> t, Literal<T> lit) {
      Integer c = cmp(t, lit);
      return c != null && c < 0;
    }

    @Override
    public <T> Boolean ltEq(Bound<T> t, Literal<T> lit) {
      Integer c = cmp(t, lit);
      return c != null && c <= 0;
    }

    @Override
    public <T> Boolean gt(Bound<T> t, Literal<T> lit) {
      Integer c = cmp(t, lit);
      return c != null && c > 0;
    }

    @Override
    public <T> Boolean gtEq(Bound<T> t, Literal<T> lit) {
      Integer c = cmp(t, lit);
      return c != null && c >= 0;
    }

    @Override
    public <T> Boolean eq(Bound<T> t, Literal<T> lit) {
      Integer c = cmp(t, lit);
      return c != null && c == 0;
    }

    @Override
    public <T> Boolean notEq(Bound<T> t, Literal<T> lit) {
      return !eq(t, lit);
    }

    @Override
    public <T> Boolean in(Bound<T> t, Set<T> values) {
      T v = t.eval(row);
      return v != null && values.contains(v);
    }

    @Override
    public <T> Boolean notIn(Bound<T> t, Set<T> values) {
      return !in(t, values);
    }

    @Override
    public <T> Boolean startsWith(Bound<T> t, Literal<T> lit) {
      T v = t.eval(row);
      return v != null && v.toString().startsWith(lit.value().toString());
    }

    @Override
    public <T> Boolean notStartsWith(Bound<T> t, Literal<T> lit) {
      return !startsWith(t, lit);
    }
  }

  /** Random REST expression JSON over the columns, with values inside and outside the data. */
  static final class FilterGen {
    private final Random rnd;
    private final boolean tz;
    private final List<Row> rows = new ArrayList<>();

    FilterGen(Random rnd, boolean tz) {
      this.rnd = rnd;
      this.tz = tz;
      commits().forEach(rows::addAll);
    }

    String expr(int depth) {
      if (depth == 0 || rnd.nextInt(100) < 35) {
        return leaf();
      }
      switch (rnd.nextInt(5)) {
        case 0:
          return "{\"type\":\"not\",\"child\":" + expr(depth - 1) + "}";
        case 1:
        case 2:
          return "{\"type\":\"and\",\"left\":" + expr(depth - 1) + ",\"right\":" + expr(depth - 1)
              + "}";
        default:
          return "{\"type\":\"or\",\"left\":" + expr(depth - 1) + ",\"right\":" + expr(depth - 1)
              + "}";
      }
    }

    private Row row() {
      return rows.get(rnd.nextInt(rows.size()));
    }

    private <T> T pick(T[] a) {
      return a[rnd.nextInt(a.length)];
    }

    String leaf() {
      int r = rnd.nextInt(100);
      if (r < 2) {
        return rnd.nextBoolean() ? "true" : "false";
      }
      String col = pick(new String[] {"id", "category", "amount", "name", "ts"});
      String term =
          rnd.nextInt(8) == 0
              ? "{\"type\":\"reference\",\"term\":" + str(col) + "}"
              : str(col);
      List<String> ops =
          new ArrayList<>(
              List.of("eq", "not-eq", "lt", "lt-eq", "gt", "gt-eq", "in", "not-in", "is-null",
                  "not-null"));
      if (col.equals("category") || col.equals("name")) {
        ops.addAll(List.of("starts-with", "not-starts-with", "starts-with", "not-starts-with"));
      }
      if (col.equals("amount")) {
        ops.addAll(List.of("is-nan", "not-nan"));
      }
      String op = ops.get(rnd.nextInt(ops.size()));
      switch (op) {
        case "is-null":
        case "not-null":
        case "is-nan":
        case "not-nan":
          return "{\"type\":" + str(op) + ",\"term\":" + term + "}";
        case "in":
        case "not-in":
          {
            int k = rnd.nextInt(10) == 0 ? 0 : 1 + rnd.nextInt(4);
            List<String> vals = new ArrayList<>();
            for (int i = 0; i < k; i++) {
              vals.add(value(col));
            }
            return "{\"type\":" + str(op) + ",\"term\":" + term + ",\"values\":["
                + String.join(",", vals) + "]}";
          }
        case "starts-with":
        case "not-starts-with":
          return "{\"type\":" + str(op) + ",\"term\":" + term + ",\"value\":" + prefix(col)
              + "}";
        default:
          return "{\"type\":" + str(op) + ",\"term\":" + term + ",\"value\":" + value(col) + "}";
      }
    }

    private String value(String col) {
      boolean fromData = rnd.nextInt(100) < 65;
      switch (col) {
        case "id":
          {
            long v = fromData ? row().id() + rnd.nextInt(3) - 1 : rnd.nextInt(3300) - 150;
            if (rnd.nextInt(25) == 0) {
              v = pick(new Long[] {Long.MIN_VALUE, Long.MAX_VALUE, 0L, -1L});
            }
            return Long.toString(v);
          }
        case "category":
          if (fromData) {
            String c = row().category();
            return c == null ? str("a") : str(c);
          }
          return str(pick(new String[] {"", "A", "aa", "b ", "bz", "c", "caa", "x", "zzz", "ü",
              "😀", "\uFFFD", "e"}));
        case "amount":
          {
            double v;
            Double d = row().amount();
            if (fromData && d != null && !d.isNaN()) {
              v = d + pick(new Double[] {0.0, 0.0, 0.125, -0.125, 1e-9});
            } else {
              v = pick(new Double[] {-1e9, -100.0, -1.0, -0.5, -0.0, 0.0, 0.25, 5.0, 5.5, 12.75,
                  100.0, 544.0, 2000.0, 1e6, 1e6 - 25.0, 1e12, rnd.nextDouble() * 3000 - 100});
            }
            return Double.toString(v);
          }
        case "name":
          if (fromData) {
            String n = row().name();
            if (n == null) {
              n = "null-cat-503";
            }
            return str(rnd.nextBoolean() ? n : n + pick(new String[] {"0", "~", " ", "é"}));
          }
          return str(pick(new String[] {"", "alpha", "alpha-05x", "beta", "beta-long-name-with",
              "beta-long-name-with-prefix-110", "beta-long-name-with-prefix-1", "beta-long-name-"
              + "with-prefix-999", "charlie", "delta", "echo", "zulu", "Zulu-", "zzzz", "ü", "日本",
              "😀", "\uFFFD", "\uFFFF"}));
        case "ts":
          {
            LocalDateTime t;
            Row row = row();
            if (fromData && row.ts() != null) {
              t = row.ts();
              switch (rnd.nextInt(6)) {
                case 0:
                  t = t.plusNanos(1000);
                  break;
                case 1:
                  t = t.minusNanos(1000);
                  break;
                case 2:
                  t = t.plusSeconds(rnd.nextInt(7200) - 3600);
                  break;
                case 3:
                  t = t.toLocalDate().atStartOfDay().plusDays(rnd.nextInt(2));
                  break;
                default:
                  break;
              }
            } else {
              t = pick(new LocalDateTime[] {
                  LocalDateTime.of(2020, 1, 1, 0, 0),
                  LocalDateTime.of(2030, 1, 1, 0, 0),
                  LocalDateTime.of(1969, 12, 31, 23, 59, 59),
                  LocalDateTime.of(2024, 3, 1, 0, 0),
                  LocalDateTime.of(2024, 3, 2, 0, 0),
                  LocalDateTime.of(2024, 3, 4, 0, 0),
                  LocalDateTime.of(2024, 2, 29, 0, 0),
                  LocalDateTime.of(2024, 4, 1, 0, 0),
                  LocalDateTime.of(2024, 3, 1, 8, 0),
                  LocalDateTime.of(2024, 3, 1, 8, 0).plusMinutes(rnd.nextInt(60 * 24 * 45))});
            }
            return str(timestamp(t));
          }
        default:
          throw new IllegalArgumentException(col);
      }
    }

    private String prefix(String col) {
      Supplier<String> data =
          () -> {
            String s = col.equals("category") ? row().category() : row().name();
            if (s == null) {
              s = "null-cat-";
            }
            int cps = s.codePointCount(0, s.length());
            int k = rnd.nextInt(cps + 2);
            String p = k > cps ? s + "x" : s.substring(0, s.offsetByCodePoints(0, k));
            return p;
          };
      if (rnd.nextInt(100) < 70) {
        return str(data.get());
      }
      return str(pick(new String[] {"", "a", "b", "c", "ca", "z", "zz", "zzz", "x", "A",
          "beta-long-name-with-prefix-1", "beta-long-name-with-prefix-12", "beta-long-name-x",
          "beta-long-name-w", "alpha-0", "alpha-1", "ü", "ünïcödé-lång-nämé-4", "😀", "\uFFFD"}));
    }

    private String timestamp(LocalDateTime t) {
      String s = (t.getNano() == 0 ? SECONDS : MICROS).format(t);
      return tz ? s + "+00:00" : s;
    }

    /** A JSON string literal. */
    static String str(String s) {
      StringBuilder b = new StringBuilder("\"");
      for (char ch : s.toCharArray()) {
        if (ch == '"' || ch == '\\') {
          b.append('\\').append(ch);
        } else if (ch < 0x20) {
          b.append(String.format("\\u%04x", (int) ch));
        } else {
          b.append(ch);
        }
      }
      return b.append('"').toString();
    }
  }

  /** A check on the oracle itself, on a few hand-written filters. */
  @Test
  void oracleFollowsIcebergNullSemantics() {
    Schema schema = SCHEMA;
    Record r = Rows.rec(schema, 1L, null, null, "x", null);
    StructLike row = new InternalRecordWrapper(schema.asStruct()).wrap(r);
    Map<String, Boolean> cases = new LinkedHashMap<>();
    cases.put("{\"type\":\"lt\",\"term\":\"category\",\"value\":\"a\"}", false);
    cases.put("{\"type\":\"not-eq\",\"term\":\"category\",\"value\":\"a\"}", true);
    cases.put("{\"type\":\"not\",\"child\":{\"type\":\"lt\",\"term\":\"category\",\"value\":\"a\"}}",
        false);
    cases.put("{\"type\":\"not\",\"child\":{\"type\":\"eq\",\"term\":\"amount\",\"value\":1.0}}",
        true);
    cases.put("{\"type\":\"not-nan\",\"term\":\"amount\"}", true);
    cases.put("{\"type\":\"is-nan\",\"term\":\"amount\"}", false);
    cases.put("{\"type\":\"not-starts-with\",\"term\":\"category\",\"value\":\"a\"}", true);
    cases.put("{\"type\":\"gt-eq\",\"term\":\"ts\",\"value\":\"2024-03-01T08:00:00\"}", false);
    for (Map.Entry<String, Boolean> e : cases.entrySet()) {
      Expression bound =
          Expressions.rewriteNot(
              Binder.bind(schema.asStruct(), ExpressionParser.fromJson(e.getKey(), schema), true));
      assertEquals(e.getValue(), ExpressionVisitors.visit(bound, new Matches(row)), e.getKey());
    }
  }
}
