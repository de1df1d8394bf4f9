package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
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
import java.util.UUID;
import java.util.regex.Pattern;
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
import org.apache.iceberg.types.Comparators;
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
    boolean canonical;
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
      return compare(v, lit.value(), lit.comparator());
    }

    /**
     * v <=> x as Iceberg's expression spec orders them: a uuid as its unsigned bytes (Java's
     * UUID.compareTo compares signed longs), a decimal by value whatever the scales.
     */
    @SuppressWarnings("unchecked")
    static <T> int compare(T v, T x, java.util.Comparator<T> cmp) {
      if (v instanceof UUID a && x instanceof UUID b) {
        int c = Long.compareUnsigned(a.getMostSignificantBits(), b.getMostSignificantBits());
        return c != 0 ? c : Long.compareUnsigned(a.getLeastSignificantBits(),
            b.getLeastSignificantBits());
      }
      if (v instanceof ByteBuffer a && x instanceof ByteBuffer b) {
        return Comparators.unsignedBytes().compare(a, b);
      }
      return cmp.compare(v, x);
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
      if (v instanceof BigDecimal d) {
        // by value: a set of BigDecimals holds 12.340 and 12.34 apart
        return values.stream().anyMatch(x -> ((BigDecimal) x).compareTo(d) == 0);
      }
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

  // ------------------------------------------------ decimal, uuid, binary and fixed columns

  /** price and rate: decimals of two scales (rate's values take 16 bytes); fx: fixed[4]. */
  static final Schema TYPED =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "price", Types.DecimalType.of(9, 2)),
          Types.NestedField.optional(3, "rate", Types.DecimalType.of(38, 10)),
          Types.NestedField.optional(4, "u", Types.UUIDType.get()),
          Types.NestedField.optional(5, "b", Types.BinaryType.get()),
          Types.NestedField.optional(6, "fx", Types.FixedType.ofLength(4)));

  /** One row of TYPED. */
  record TypedRow(long id, BigDecimal price, BigDecimal rate, UUID u, byte[] b, byte[] fx) {}

  static BigDecimal dec(String s) {
    return s == null ? null : new BigDecimal(s);
  }

  static byte[] bytes(int... v) {
    byte[] b = new byte[v.length];
    for (int i = 0; i < v.length; i++) {
      b[i] = (byte) v[i];
    }
    return b;
  }

  /** A uuid whose every file stays on one side of the high bit of each half (see below). */
  static UUID uuid(long msb, long lsb) {
    return new UUID(msb, lsb | Long.MIN_VALUE);
  }

  /**
   * The rows, as commits. Each commit's uuids share the sign of both halves: Java compares uuids
   * as signed longs (UUID.compareTo), the spec and skade as unsigned bytes, and on a file whose
   * bounds span a sign change the two disagree even for eq.
   */
  static List<List<TypedRow>> typedCommits() {
    List<List<TypedRow>> commits = new ArrayList<>();
    List<TypedRow> c = new ArrayList<>();
    // negative decimals, small uuids, one-byte binaries
    for (int i = 1; i <= 8; i++) {
      c.add(new TypedRow(i, dec("-50.00").add(dec("6.17").multiply(BigDecimal.valueOf(i))),
          dec("-100000000000000000000.0000000001").add(BigDecimal.valueOf(i)),
          uuid(0x0000_0000_0000_4000L + i, i), bytes(i), bytes(0, 0, 0, i)));
    }
    commits.add(c);
    // 0.00 .. 12.34; binaries of 20 bytes starting with 16 "a" (bounds truncated)
    c = new ArrayList<>();
    for (int i = 9; i <= 16; i++) {
      byte[] b = new byte[20];
      java.util.Arrays.fill(b, (byte) 'a');
      b[19] = (byte) i;
      c.add(new TypedRow(i, i == 16 ? dec("12.34") : dec("1.50").multiply(BigDecimal.valueOf(i - 9)),
          dec("0.0000000001").multiply(BigDecimal.valueOf(i)),
          uuid(0x3000_0000_0000_0000L + i, 0x10L * i), b, bytes(0x7f, 0xff, 0xff, 0xf0 + i)));
    }
    commits.add(c);
    // 12.35 .. 45.00; uuids above 8000...; binaries and fixed with high bytes
    c = new ArrayList<>();
    for (int i = 17; i <= 24; i++) {
      c.add(new TypedRow(i, i == 24 ? dec("45.00") : dec("12.35").add(BigDecimal.valueOf(i - 17)),
          dec("9999999999999999999999999999.9999999999").subtract(BigDecimal.valueOf(i)),
          uuid(0x8000_0000_0000_0000L + i, i), bytes(0x80 + i, 0xff, i), bytes(0xff, 0xff, 0xff, i)));
    }
    commits.add(c);
    // every column null
    c = new ArrayList<>();
    for (int i = 25; i <= 28; i++) {
      c.add(new TypedRow(i, null, null, null, null, null));
    }
    commits.add(c);
    // one value in every row (12.34, one uuid); the empty binary and 00
    c = new ArrayList<>();
    for (int i = 29; i <= 33; i++) {
      c.add(new TypedRow(i, dec("12.34"), dec("-1.0000000000"),
          uuid(0xc0ff_ee00_0000_4000L, 0L), i % 2 == 0 ? bytes() : bytes(0), bytes(0x80, 0, 0, 0)));
    }
    commits.add(c);
    // 45.01 .. 99999.99; uuids from f000...; "ab" exactly
    c = new ArrayList<>();
    for (int i = 34; i <= 40; i++) {
      c.add(new TypedRow(i, i == 40 ? dec("99999.99") : dec("45.01").add(BigDecimal.valueOf(i * 100L)),
          dec("12345678901234567890.1234567890").add(BigDecimal.valueOf(i)),
          uuid(0xf000_0000_0000_0000L + i, -1L), bytes('a', 'b'), bytes(0x80, 0, 0, i)));
    }
    commits.add(c);
    // near zero, some nulls, binary prefixes of one another
    c = new ArrayList<>();
    String[] prices = {"-0.99", "-0.01", null, "0.00", "0.01", "0.99", null, "-0.50"};
    int[][] bins = {{'a'}, {'a', 'b'}, {'a', 'b', 'c'}, {'a', 'b', 'd'}, {'a', 'c'}, {}, {'b'}, {}};
    for (int i = 41; i <= 48; i++) {
      int k = i - 41;
      c.add(new TypedRow(i, dec(prices[k]), k % 3 == 0 ? null : dec("0.0000000005").multiply(
          BigDecimal.valueOf(k - 4)), k == 2 ? null : uuid(0x5000_0000_0000_0000L + k, k),
          k == 7 ? null : bytes(bins[k]), bytes(0x00, 0x01, k, k)));
    }
    commits.add(c);
    return commits;
  }

  @Test
  void typedPlansKeepNoMoreThanJava() throws Exception {
    List<Subject> subjects = new ArrayList<>();
    subjects.add(createTyped("typed", PartitionSpec.unpartitioned(), false));
    // (not identity(fx): Java 1.12 writes a fixed partition value as Avro bytes, with a length
    // its manifest's schema does not have, so no Avro reader but its own reads that manifest)
    subjects.add(createTyped("typed_part", PartitionSpec.builderFor(TYPED).bucket("price", 3)
        .bucket("u", 2).truncate("b", 2).bucket("fx", 2).build(), true));
    List<String> failures = new ArrayList<>();
    int uuidRanges = 0;
    for (Subject s : subjects) {
      TypedGen gen = new TypedGen(new Random(SEED + 1), s.canonical);
      for (int n = 0; n < FILTERS; n++) {
        uuidRanges += checkTyped(s, gen.expr(2), failures) ? 1 : 0;
      }
      String summary = String.format("plan_files %s (%s; %d files): %d filters: skade plan"
          + " identical to Java's for %d, tighter for %d, files pruned by skade %d, by Java %d",
          s.name, spec(s.table), s.rowsByFile.size(), FILTERS, s.identical, s.tighter,
          s.prunedBySkade, s.prunedByJava);
      System.out.println(summary);
      System.err.println("PlanFilesTest: " + summary);
    }
    String note = String.format("%d filters order uuids (Java's order is signed): Java's planner"
        + " drops files with rows matching in the spec's unsigned order for %d, prunes a file"
        + " without a matching row that skade keeps for %d", uuidRanges, javaUuidMisses,
        javaUuidPrunesMore);
    System.out.println(note);
    System.err.println("PlanFilesTest: " + note);
    if (!failures.isEmpty()) {
      failures.forEach(System.out::println);
      fail(failures.size() + " typed plan_files failures, the first:\n"
          + String.join("\n", failures.subList(0, Math.min(10, failures.size()))));
    }
  }

  private Subject createTyped(String name, PartitionSpec spec, boolean canonical) {
    TableIdentifier id = TableIdentifier.of(ns, name);
    Table table = catalog.buildTable(id, TYPED).withPartitionSpec(spec).create();
    for (List<TypedRow> commit : typedCommits()) {
      List<Record> recs = new ArrayList<>();
      for (TypedRow r : commit) {
        recs.add(Rows.rec(TYPED, r.id(), r.price(), r.rate(), r.u(),
            r.b() == null ? null : ByteBuffer.wrap(r.b()), r.fx()));
      }
      Rows.append(table, recs);
    }
    table = catalog.loadTable(id);
    Subject s = new Subject(name, table, false);
    s.canonical = canonical;
    InternalRecordWrapper wrap = new InternalRecordWrapper(TYPED.asStruct());
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask t : tasks) {
        String path = t.file().location();
        List<StructLike> rows = new ArrayList<>();
        try (CloseableIterable<Record> it =
            Parquet.read(table.io().newInputFile(path))
                .project(TYPED)
                .createReaderFunc(fs -> GenericParquetReaders.buildReader(TYPED, fs))
                .build()) {
          for (Record r : it) {
            rows.add(wrap.copyFor(r.copy()));
          }
        }
        s.rowsByFile.put(path, rows);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    assertTrue(s.rowsByFile.size() >= 7, name + " has " + s.rowsByFile.size() + " files");
    return s;
  }

  private int javaUuidMisses;
  private int javaUuidPrunesMore;

  static final Pattern UUID_ORDER =
      Pattern.compile("\"type\":\"(lt|lt-eq|gt|gt-eq)\",\"term\":\"u\"");

  /**
   * Java's plan, skade's and the matching files for one filter: skade keeps every file with a
   * matching row and no file Java prunes; a file Java keeps skade may drop only if no row of it
   * matches. The JSON is parsed without the schema, so a decimal literal keeps its scale (Java
   * binds it unchanged and compares by value, as skade does); a filter ordering uuids is checked
   * for matching rows only, as Java orders uuids as signed longs (so, with the rows above, its
   * planner drops files with rows that match in the spec's unsigned order). True for those.
   */
  private boolean checkTyped(Subject s, String json, List<String> failures) throws Exception {
    Expression expr = ExpressionParser.fromJson(json);
    boolean uuidOrder = UUID_ORDER.matcher(json).find();
    Set<String> java = new LinkedHashSet<>();
    try (CloseableIterable<FileScanTask> tasks = s.table.newScan().filter(expr).planFiles()) {
      for (FileScanTask t : tasks) {
        java.add(t.file().location());
      }
    }
    Expression bound = Expressions.rewriteNot(Binder.bind(TYPED.asStruct(), expr, true));
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
      return uuidOrder;
    }
    Set<String> skadeSet = new LinkedHashSet<>(skade);
    String where = s.name + " filter " + json;
    List<String> missingRows = missing(matching, skadeSet);
    if (!missingRows.isEmpty()) {
      failures.add(where + ": skade drops files with matching rows: " + missingRows);
    }
    List<String> extra = missing(skadeSet, java);
    if (!uuidOrder) {
      if (!extra.isEmpty()) {
        failures.add(where + ": skade keeps files Java prunes: " + extra);
      }
      if (!java.containsAll(matching)) {
        failures.add(where + ": Java's planner drops files with matching rows: "
            + missing(matching, java));
      }
    } else {
      javaUuidMisses += java.containsAll(matching) ? 0 : 1;
      // a file skade keeps and Java prunes without a matching row: skade looser than Java
      for (String f : extra) {
        if (matchingRows(s, List.of(f), bound) == 0) {
          javaUuidPrunesMore++;
          failures.add(where + ": skade keeps a file Java prunes, no row of it matching: " + f);
          break;
        }
      }
    }
    List<String> missingJava = missing(java, skadeSet);
    if (!missingJava.isEmpty()) {
      if (matchingRows(s, missingJava, bound) > 0) {
        failures.add(where + ": skade drops files Java plans: " + missingJava);
      } else {
        s.tighter++;
      }
    }
    if (skadeSet.equals(java)) {
      s.identical++;
    }
    s.prunedBySkade += s.rowsByFile.size() - skadeSet.size();
    s.prunedByJava += s.rowsByFile.size() - java.size();
    return uuidOrder;
  }

  /**
   * Random REST expression JSON over TYPED's columns. Decimals are strings (as Iceberg writes
   * them) of any scale or whole JSON numbers, or with canonical, strings at the column's scale
   * only: Java's bucket transform hashes a literal's unscaled value as it is, so it projects
   * 12.340 into another bucket than 12.34 (and drops the file that holds it).
   */
  static final class TypedGen {
    private final Random rnd;
    private final boolean canonical;
    private final List<TypedRow> rows = new ArrayList<>();

    TypedGen(Random rnd, boolean canonical) {
      this.rnd = rnd;
      this.canonical = canonical;
      typedCommits().forEach(rows::addAll);
    }

    String expr(int depth) {
      if (depth == 0 || rnd.nextInt(100) < 40) {
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

    private <T> T pick(T[] a) {
      return a[rnd.nextInt(a.length)];
    }

    private TypedRow row() {
      return rows.get(rnd.nextInt(rows.size()));
    }

    String leaf() {
      String col = pick(new String[] {"price", "rate", "u", "b", "fx"});
      String op = pick(new String[] {"eq", "not-eq", "lt", "lt-eq", "gt", "gt-eq", "in", "not-in",
          "eq", "lt", "gt", "in", "is-null", "not-null"});
      String term = FilterGen.str(col);
      switch (op) {
        case "is-null":
        case "not-null":
          return "{\"type\":" + FilterGen.str(op) + ",\"term\":" + term + "}";
        case "in":
        case "not-in":
          {
            List<String> vals = new ArrayList<>();
            for (int i = 1 + rnd.nextInt(3); i > 0; i--) {
              vals.add(value(col));
            }
            return "{\"type\":" + FilterGen.str(op) + ",\"term\":" + term + ",\"values\":["
                + String.join(",", vals) + "]}";
          }
        default:
          return "{\"type\":" + FilterGen.str(op) + ",\"term\":" + term + ",\"value\":"
              + value(col) + "}";
      }
    }

    private String value(String col) {
      boolean fromData = rnd.nextInt(100) < 65;
      TypedRow r = row();
      switch (col) {
        case "price":
          return decimal(fromData && r.price() != null ? r.price() : dec(pick(new String[] {
              "0.00", "-0.01", "12.34", "12.35", "45.00", "99999.99", "100000.00", "-50.00",
              "-99999.99", "7.50"})), 2, "0.01");
        case "rate":
          return decimal(fromData && r.rate() != null ? r.rate() : dec(pick(new String[] {
              "0.0000000001", "-1.0000000000", "100000000000000000000.0000000000",
              "9999999999999999999999999999.9999999999",
              "-9999999999999999999999999999.9999999999", "0E-10"})), 10, "0.0000000001");
        case "u":
          {
            UUID u = fromData && r.u() != null ? r.u() : pick(new UUID[] {
                new UUID(0, 0), new UUID(-1, -1), new UUID(Long.MIN_VALUE, 0),
                new UUID(Long.MAX_VALUE, -1), uuid(0x3000_0000_0000_0000L, 0),
                uuid(0xc0ff_ee00_0000_4000L, 0L)});
            if (fromData && rnd.nextInt(3) == 0) {
              u = new UUID(u.getMostSignificantBits(),
                  u.getLeastSignificantBits() + (rnd.nextBoolean() ? 1 : -1));
            }
            return FilterGen.str(u.toString());
          }
        case "b":
          {
            byte[] b = fromData && r.b() != null ? r.b() : bytes(pick(new int[][] {
                {}, {0}, {'a'}, {'a', 'b'}, {'a', 'b', 'c'}, {0x80}, {0xff}, {0xff, 0xff},
                {'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a',
                 'a'}}));
            int k = rnd.nextInt(4);
            if (fromData && k == 0 && b.length > 0) {
              b = java.util.Arrays.copyOf(b, b.length - 1);   // a prefix
            } else if (fromData && k == 1) {
              b = java.util.Arrays.copyOf(b, b.length + 1);   // followed by 00
            }
            return FilterGen.str(hex(b));
          }
        default:
          {
            byte[] b = fromData && r.fx() != null ? r.fx().clone() : bytes(pick(new int[][] {
                {0, 0, 0, 0}, {0xff, 0xff, 0xff, 0xff}, {0x7f, 0xff, 0xff, 0xff},
                {0x80, 0, 0, 0}, {0, 1, 2, 3}}));
            if (fromData && rnd.nextInt(3) == 0) {
              b[3] += (byte) (rnd.nextBoolean() ? 1 : -1);
            }
            return FilterGen.str(hex(b));
          }
      }
    }

    /** A decimal literal near v: v, a unit away, or (not canonical) of another scale. */
    private String decimal(BigDecimal v, int scale, String unit) {
      switch (rnd.nextInt(canonical ? 3 : 7)) {
        case 1:
          v = v.add(dec(unit));
          break;
        case 2:
          v = v.subtract(dec(unit));
          break;
        case 3:
          // a digit the scale cannot hold: equals no value, orders between two
          return FilterGen.str(v.toPlainString() + pick(new String[] {"5", "1", "9"}));
        case 4:
          return FilterGen.str(v.setScale(scale + 1).toPlainString());   // 12.340
        case 5:
          if (v.stripTrailingZeros().scale() <= 0
              && v.abs().compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) < 0) {
            return v.toBigInteger().toString();   // a JSON integer
          }
          return FilterGen.str(v.toString());
        case 6:
          return FilterGen.str(v.stripTrailingZeros().toString());   // 1.5E+3, 12.3
        default:
          break;
      }
      return FilterGen.str(v.setScale(scale).toPlainString());
    }

    static String hex(byte[] b) {
      StringBuilder sb = new StringBuilder();
      for (byte x : b) {
        sb.append(String.format("%02x", x & 0xff));
      }
      return sb.toString();
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
