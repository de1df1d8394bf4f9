package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.GZIPInputStream;
import org.apache.iceberg.MetadataUpdate;
import org.apache.iceberg.MetadataUpdateParser;
import org.apache.iceberg.RetryableValidationException;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.UpdateRequirement;
import org.apache.iceberg.UpdateRequirementParser;
import org.apache.iceberg.exceptions.CommitFailedException;

import org.junit.jupiter.api.Test;

/**
 * skade.update_table() against Java's own reference: for random sequences of requirements and
 * updates (every action and requirement kind, the -1 forms, stale requirements and bad updates),
 * Java parses them with UpdateRequirementParser / MetadataUpdateParser, validates the
 * requirements against the table's current metadata (read by TableMetadataParser from the
 * location skade holds) and applies the updates to TableMetadata.buildFrom(base), as
 * CatalogHandlers.commit does. skade runs the same JSON through SQL. Both must accept or both
 * refuse (skade: 40001 where Java throws CommitFailedException or RetryableValidationException,
 * 22023 or 0A000 for any other refusal), and what skade wrote must be Java's built metadata
 * (TableMetadataParser JSON of both, last-updated-ms and commit-time snapshot-log timestamps
 * aside); no change at all must leave the location as it was.
 *
 * <p>Where skade deliberately differs from Java (see RandomUpdates' DEVIATION notes), the
 * generator gives Java the equivalent request skade's rule implies, or expects skade's refusal,
 * and counts the case under "deviation:" in the summary.
 *
 * <p>-Dskade.seed=N or SKADE_SEED=N repeats a run (the seed is printed; default 1, SKADE_SEED=random
 * for a new one), -Dskade.sequences=N sets the count
 * (default 1000), -Dskade.verbose=true prints every sequence.
 */
class UpdateTableRandomTest extends CatalogTestBase {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The tables sequences chain on: format version, partitioned, sorted. */
  private static final int[][] TABLES = {
    {1, 0, 0}, {1, 1, 1}, {2, 0, 0}, {2, 1, 1}, {3, 0, 1}, {3, 1, 0}
  };

  /** Outcome of one side: accepted (new metadata, or null for "no change") or the refusal. */
  private static final class Outcome {
    boolean accepted;
    TableMetadata metadata; // Java: the built metadata; skade: the file it wrote
    String location; // skade: the returned location
    String sqlState; // skade refusals
    Throwable error; // Java refusals
    boolean retryable; // Java: CommitFailedException / RetryableValidationException
    boolean parseError; // Java: the request did not parse (before any requirement is checked)
    boolean requirementsFail; // Java: a requirement, or an update before the unparsable one, is stale
    boolean changed;
  }

  /**
   * -Dskade.seed=N, else the environment's SKADE_SEED (N, or "random" for a new seed each run),
   * else 1: the suite's own runs are repeatable, a random seed is asked for.
   */
  private static long seed() {
    Long fromProperty = Long.getLong("skade.seed");
    if (fromProperty != null) {
      return fromProperty;
    }
    String env = System.getenv("SKADE_SEED");
    if (env == null || env.isEmpty()) {
      return 1L;
    }
    return env.equals("random") ? System.nanoTime() & 0xffffffffL : Long.parseLong(env);
  }

  @Test
  void randomSequencesMatchJava() throws Exception {
    long seed = seed();
    int sequences = Integer.getInteger("skade.sequences", 1000);
    // one line per sequence (its outcome, the refusal's SQLSTATE and words): random_fast.sh
    // compares the files of a run with the C path on and one with it off
    String outcomesFile = System.getProperty("skade.outcomes", "");
    List<String> outcomes = new ArrayList<>();
    boolean verbose = Boolean.getBoolean("skade.verbose");
    // the sequences the C path left to PL/pgSQL, one line each (-Dskade.left; random_fast.sh keeps it)
    String leftFile = System.getProperty("skade.left", "");
    List<String> left = new ArrayList<>();
    System.out.println("UpdateTableRandomTest: seed " + seed + " (-Dskade.seed=" + seed + "), "
        + sequences + " sequences");
    RandomUpdates gen = new RandomUpdates(seed);

    List<String> names = new ArrayList<>();
    Map<String, String> locations = new TreeMap<>();
    for (int t = 0; t < TABLES.length; t++) {
      String name = "t" + t + "_v" + TABLES[t][0] + (TABLES[t][1] == 1 ? "_part" : "")
          + (TABLES[t][2] == 1 ? "_sorted" : "");
      names.add(name);
      locations.put(name, createTable(name, TABLES[t][0], TABLES[t][1] == 1, TABLES[t][2] == 1));
    }

    Map<String, int[]> stats = new TreeMap<>(); // key -> {accepted, refused, C, PL/pgSQL}
    long[] engines0 = engines();
    // the shapes (format version, the distinct update actions) the C path left to PL/pgSQL
    Map<String, Integer> leftShapes = new TreeMap<>();
    int inC = 0;
    int inPlpgsql = 0;
    List<String> mismatches = new ArrayList<>();
    int accepted = 0;
    int refused = 0;
    int noChange = 0;
    for (int i = 0; i < sequences; i++) {
      String name = names.get(i % names.size());
      String baseLocation = locations.get(name);
      TableMetadata base;
      try {
        base = read(baseLocation);
      } catch (RuntimeException e) {
        // skade wrote what Java cannot read (a mismatch already): a fresh table goes on
        int t = i % names.size();
        name = name.replaceAll("_r[0-9]+$", "") + "_r" + i;
        names.set(t, name);
        baseLocation = createTable(name, TABLES[t][0], TABLES[t][1] == 1, TABLES[t][2] == 1);
        locations.put(name, baseLocation);
        base = read(baseLocation);
      }
      RandomUpdates.Sequence seq =
          gen.sequence(base, Skade.warehouse() + "/" + ns + "/" + name);
      Outcome java = runJava(base, seq.requirements, seq.javaUpdates);
      long[] before = engines();
      Outcome skade = runSkade(name, seq.requirements, seq.skadeUpdates, baseLocation);
      long[] after = engines();
      // which engine applied it (neither: refused before the table's row, e.g. malformed)
      int engine = after[1] > before[1] ? 3 : after[0] > before[0] ? 2 : -1;
      inC += engine == 2 ? 1 : 0;
      inPlpgsql += engine == 3 ? 1 : 0;
      if (engine == 3) {
        java.util.TreeSet<String> actions = new java.util.TreeSet<>();
        seq.skadeUpdates.forEach(u -> actions.add(u.path("action").asText("?").toLowerCase()));
        leftShapes.merge("v" + base.formatVersion() + " " + actions
            + (skade.accepted ? "" : " refused " + skade.sqlState), 1, Integer::sum);
        left.add("#" + i + " v" + base.formatVersion() + " requirements " + seq.requirements
            + " updates " + seq.skadeUpdates + " -> " + outcomeLine(skade));
      }
      String problem = compare(seq, base, baseLocation, java, skade);
      if (verbose || problem != null) {
        System.out.println("#" + i + " " + name + " requirements " + seq.requirements
            + " updates " + seq.skadeUpdates
            + (seq.javaUpdates.equals(seq.skadeUpdates) ? "" : " (Java: " + seq.javaUpdates + ")")
            + " -> java " + describe(java) + ", skade " + describe(skade)
            + (problem == null ? "" : " MISMATCH: " + problem));
      }
      if (problem != null) {
        mismatches.add("#" + i + " (" + name + "): " + problem);
      }
      outcomes.add("#" + i + " " + outcomeLine(skade));
      boolean ok = skade.accepted;
      if (ok) {
        accepted++;
        if (!skade.changed) {
          noChange++;
        }
        locations.put(name, skade.location);
      } else {
        refused++;
      }
      for (String key : seq.keys()) {
        int[] s = stats.computeIfAbsent(key, k -> new int[4]);
        s[ok ? 0 : 1]++;
        if (engine > 0) {
          s[engine]++;
        }
      }
      // the catalog pointer is what update_table returned
      String pointer = Skade.queryOne(conn,
          "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? "
              + "AND table_namespace = ? AND table_name = ?",
          Skade.CATALOG, ns.toString(), name);
      if (!pointer.equals(locations.get(name))) {
        mismatches.add("#" + i + " (" + name + "): pointer " + pointer + " is not "
            + locations.get(name));
        locations.put(name, pointer);
      }
    }

    if (!outcomesFile.isEmpty()) {
      Files.write(Path.of(outcomesFile), outcomes, StandardCharsets.UTF_8);
    }
    if (!leftFile.isEmpty()) {
      Files.write(Path.of(leftFile), left, StandardCharsets.UTF_8);
    }
    StringBuilder sb = new StringBuilder();
    sb.append("UpdateTableRandomTest: seed ").append(seed).append(", ").append(sequences)
        .append(" sequences: ").append(accepted).append(" accepted (").append(noChange)
        .append(" without change), ").append(refused).append(" refused, ")
        .append(mismatches.size()).append(" mismatches\n");
    long[] engines1 = engines();
    sb.append(String.format("UpdateTableRandomTest: engines: C %d, PL/pgSQL %d (%.1f%% of the "
        + "sequences reaching an engine left to PL/pgSQL)%n", inC, inPlpgsql,
        100.0 * inPlpgsql / Math.max(1, inC + inPlpgsql)));
    sb.append("UpdateTableRandomTest: the 12 shapes most often left to PL/pgSQL:\n");
    leftShapes.entrySet().stream()
        .sorted((a, b) -> b.getValue() - a.getValue()).limit(12)
        .forEach(e -> sb.append(String.format("    %6d  %s%n", e.getValue(), e.getKey())));
    sb.append(String.format("  %-42s %8s %8s %8s %8s%n", "requirement / action", "accepted", "refused",
        "C", "PL/pgSQL"));
    for (Map.Entry<String, int[]> e : stats.entrySet()) {
      int[] s = e.getValue();
      sb.append(String.format("  %-42s %8d %8d %8d %8d%n", e.getKey(), s[0], s[1], s[2], s[3]));
    }
    System.out.print(sb);
    for (String m : mismatches.subList(0, Math.min(30, mismatches.size()))) {
      System.out.println("  " + m);
    }
    assertTrue(mismatches.isEmpty(), mismatches.size() + " mismatches (seed " + seed + "), first: "
        + (mismatches.isEmpty() ? "" : mismatches.get(0)));
    // the counters saw every commit that reached an engine, and the setting decides which
    assertEquals((long) inC + inPlpgsql, (engines1[0] - engines0[0]) + (engines1[1] - engines0[1]),
        "commits counted by skade.commit_stats() during the run");
    if ("on".equals(Skade.queryOne(conn, "SELECT current_setting('skade.update_fast_path')"))) {
      // (issue 30 part 3: the C path applies every sequence; the PL/pgSQL engine is the oracle)
      assertEquals(0, inPlpgsql, "sequences left to the PL/pgSQL engine with the C path on (the first: "
          + (left.isEmpty() ? "none" : left.get(0)) + ")");
      assertTrue(inC > 0, "the C path applied none of the sequences");
    } else {
      assertEquals(0, inC, "skade.update_fast_path = off, yet the C path applied sequences");
    }
    // every action and requirement kind was exercised both ways
    for (String kind : RandomUpdates.KINDS) {
      int[] s = stats.get(kind);
      assertTrue(s != null && s[0] + s[1] > 0, kind + " never generated");
    }
  }

  private String createTable(String name, int version, boolean partitioned, boolean sorted)
      throws SQLException {
    String schema = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        + "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
        + "{\"id\":2,\"name\":\"category\",\"required\":false,\"type\":\"string\"},"
        + "{\"id\":3,\"name\":\"ts\",\"required\":false,\"type\":\"timestamptz\"},"
        + "{\"id\":4,\"name\":\"amount\",\"required\":false,\"type\":\"double\"},"
        + "{\"id\":5,\"name\":\"day\",\"required\":false,\"type\":\"date\"}]}";
    String spec = partitioned
        ? "{\"spec-id\":0,\"fields\":[{\"name\":\"category\",\"transform\":\"identity\","
            + "\"source-id\":2,\"field-id\":1000},{\"name\":\"ts_day\",\"transform\":\"day\","
            + "\"source-id\":3,\"field-id\":1001}]}"
        : null;
    String order = sorted
        ? "{\"order-id\":1,\"fields\":[{\"transform\":\"identity\",\"source-id\":1,"
            + "\"direction\":\"asc\",\"null-order\":\"nulls-first\"}]}"
        : null;
    return Skade.queryOne(conn,
        "SELECT skade.create_table(?, ?, ?::jsonb, ?::jsonb, ?::jsonb, '{}', ?, ?, ?)",
        ns.toString(), name, schema, spec, order,
        Skade.warehouse() + "/" + ns + "/" + name, version, Skade.CATALOG);
  }

  static TableMetadata read(String location) throws IOException {
    byte[] bytes = Files.readAllBytes(Path.of(location));
    if (location.endsWith(".gz.metadata.json") || location.endsWith(".metadata.json.gz")) {
      try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(bytes))) {
        bytes = in.readAllBytes();
      }
    }
    return TableMetadataParser.fromJson(location, new String(bytes, StandardCharsets.UTF_8));
  }

  /** What CatalogHandlers.updateTable/commit does with the request, minus the file write. */
  static Outcome runJava(TableMetadata base, ArrayNode requirements, ArrayNode updates) {
    Outcome o = new Outcome();
    try {
      List<UpdateRequirement> reqs = new ArrayList<>();
      for (JsonNode r : requirements) {
        reqs.add(UpdateRequirementParser.fromJson(r));
      }
      for (UpdateRequirement r : reqs) {
        try {
          r.validate(base);
        } catch (CommitFailedException e) {
          o.requirementsFail = true;
        }
      }
      List<MetadataUpdate> upds = new ArrayList<>();
      try {
        for (JsonNode u : updates) {
          upds.add(MetadataUpdateParser.fromJson(u));
        }
      } catch (RuntimeException e) {
        o.parseError = true;
        // would the updates before it have failed as stale (skade applies them first)?
        if (!o.requirementsFail) {
          try {
            TableMetadata.Builder builder = TableMetadata.buildFrom(base);
            upds.forEach(u -> u.applyTo(builder));
          } catch (RetryableValidationException r) {
            o.requirementsFail = true;
          } catch (RuntimeException r) {
            // not stale
          }
        }
        throw e;
      }
      // CatalogHandlers.isCreate: assert-create takes no other requirement
      if (reqs.stream().anyMatch(UpdateRequirement.AssertTableDoesNotExist.class::isInstance)
          && !reqs.stream().allMatch(UpdateRequirement.AssertTableDoesNotExist.class::isInstance)) {
        throw new IllegalArgumentException("Invalid create requirements: " + reqs);
      }
      for (UpdateRequirement r : reqs) {
        r.validate(base);
      }
      TableMetadata.Builder builder = TableMetadata.buildFrom(base);
      for (MetadataUpdate u : upds) {
        u.applyTo(builder);
      }
      TableMetadata updated = builder.build();
      o.accepted = true;
      o.changed = !updated.changes().isEmpty();
      o.metadata = o.changed ? updated : base;
    } catch (CommitFailedException | RetryableValidationException e) {
      o.error = e;
      o.retryable = true;
    } catch (RuntimeException e) {
      o.error = e;
    }
    return o;
  }

  /**
   * A sequence's outcome as a line: accepted (changed or not), or refused with the SQLSTATE and
   * the message's first line (uuids and this run's namespace masked; no hint or context).
   */
  private String outcomeLine(Outcome o) {
    if (o.accepted && o.error == null) {
      return o.changed ? "accepted" : "accepted, no change";
    }
    String msg = o.error == null ? "" : String.valueOf(o.error.getMessage()).split("\n", 2)[0];
    msg = msg.replaceAll("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<uuid>")
        .replace(ns.toString(), "<ns>");
    return (o.accepted ? "unreadable " : "refused " + o.sqlState + " ") + msg;
  }

  /** skade.commit_stats(): update_table's commits so far, {C path, PL/pgSQL engine}. */
  private long[] engines() throws SQLException {
    List<List<String>> r = Skade.query(conn,
        "SELECT update_c::text, update_plpgsql::text FROM skade.commit_stats()");
    return new long[] {Long.parseLong(r.get(0).get(0)), Long.parseLong(r.get(0).get(1))};
  }

  private Outcome runSkade(String name, ArrayNode requirements, ArrayNode updates,
      String baseLocation) throws IOException {
    Outcome o = new Outcome();
    try {
      o.location = Skade.queryOne(conn,
          "SELECT skade.update_table(?, ?, ?::jsonb, ?::jsonb, ?)",
          ns.toString(), name, requirements.toString(), updates.toString(), Skade.CATALOG);
      o.accepted = true;
      o.changed = !o.location.equals(baseLocation);
      o.metadata = read(o.location);
    } catch (SQLException e) {
      o.sqlState = e.getSQLState();
      o.error = e;
    } catch (RuntimeException e) {
      // skade wrote a file Java cannot read
      o.accepted = true;
      o.changed = true;
      o.error = e;
    }
    return o;
  }

  private static String describe(Outcome o) {
    if (o.accepted) {
      return o.error != null ? "accepted, unreadable: " + o.error : o.changed ? "accepted" : "no change";
    }
    String msg = String.valueOf(o.error.getMessage()).replace('\n', ' ');
    if (msg.length() > 300) {
      msg = msg.substring(0, 300) + "...";
    }
    return (o.sqlState != null ? o.sqlState + " " : o.error.getClass().getSimpleName() + " ") + msg;
  }

  private static String compare(RandomUpdates.Sequence seq, TableMetadata base, String baseLocation,
      Outcome java, Outcome skade) throws IOException {
    if (seq.expectSkadeRefusal != null) {
      if (skade.accepted) {
        return "expected skade to refuse (" + seq.expectSkadeRefusal + ")";
      }
      // (or an earlier refusal Java makes too)
      String javaState = java.accepted ? null : java.retryable ? "40001" : "22023";
      boolean staleAndUnparsable = java.parseError && java.requirementsFail;
      return seq.expectSkadeRefusal.equals(skade.sqlState) || skade.sqlState.equals(javaState)
              || staleAndUnparsable && "40001".equals(skade.sqlState)
          ? null
          : "expected SQLSTATE " + seq.expectSkadeRefusal + ", got " + skade.sqlState;
    }
    if (!seq.compareAcceptance) {
      return skade.accepted && skade.error != null ? "skade's file is unreadable: " + skade.error
          : null;
    }
    if (java.accepted != skade.accepted) {
      return java.accepted ? "Java accepts, skade refuses" : "Java refuses, skade accepts";
    }
    if (!java.accepted) {
      String want = java.retryable ? "40001" : "22023";
      if (java.parseError && java.requirementsFail && "40001".equals(skade.sqlState)) {
        // a stale requirement (or stale update) and an update Java cannot parse: Java parses the
        // whole request first (400), skade checks and applies in order (40001)
        seq.keys.add("tolerated: stale requirement before unparsable update");
        return null;
      }
      if (want.equals(skade.sqlState) || !java.retryable && "0A000".equals(skade.sqlState)) {
        return null;
      }
      return "SQLSTATE " + skade.sqlState + ", expected " + want;
    }
    if (skade.error != null) {
      return "skade's file is unreadable: " + skade.error;
    }
    if (!seq.compareMetadata) {
      return null;
    }
    if (java.changed != skade.changed) {
      return java.changed ? "Java changes the table, skade writes no file"
          : "Java sees no change, skade writes a new file";
    }
    if (!skade.changed) {
      return null;
    }
    // the next file name: version + 1, in the (new) metadata directory
    String expectedDir = java.metadata.properties().getOrDefault("write.metadata.path",
        java.metadata.location() + "/metadata");
    int version = Integer.parseInt(
        baseLocation.substring(baseLocation.lastIndexOf('/') + 1).split("-")[0]);
    String prefix = expectedDir.replaceAll("/+$", "") + "/" + String.format("%05d-", version + 1);
    if (!skade.location.startsWith(prefix)) {
      return "new file " + skade.location + " does not start with " + prefix;
    }
    JsonNode j = normalise(TableMetadataParser.toJson(java.metadata));
    JsonNode s = normalise(TableMetadataParser.toJson(skade.metadata));
    if (!j.equals(s)) {
      return "metadata differs: " + diff(j, s, "");
    }
    return null;
  }

  /** last-updated-ms out, commit-time snapshot-log entries as "now", statistics by snapshot. */
  static JsonNode normalise(String json) throws IOException {
    ObjectNode n = (ObjectNode) JSON.readTree(json);
    long now = n.path("last-updated-ms").asLong();
    n.remove("last-updated-ms");
    for (JsonNode e : n.path("snapshot-log")) {
      if (e.path("timestamp-ms").asLong() == now) {
        ((ObjectNode) e).put("timestamp-ms", "now");
      }
    }
    for (String list : new String[] {"statistics", "partition-statistics"}) {
      if (n.get(list) instanceof ArrayNode) {
        List<JsonNode> items = new ArrayList<>();
        n.get(list).forEach(items::add);
        items.sort((a, b) -> Long.compare(a.path("snapshot-id").asLong(),
            b.path("snapshot-id").asLong()));
        ArrayNode sorted = JSON.createArrayNode();
        items.forEach(sorted::add);
        n.set(list, sorted);
      }
    }
    return n;
  }

  /** The first difference, as a path and both values. */
  static String diff(JsonNode a, JsonNode b, String path) {
    if (a == null || b == null || a.getNodeType() != b.getNodeType()) {
      return path + ": Java " + a + " / skade " + b;
    }
    if (a.isObject()) {
      java.util.Set<String> keys = new java.util.TreeSet<>();
      a.fieldNames().forEachRemaining(keys::add);
      b.fieldNames().forEachRemaining(keys::add);
      for (String k : keys) {
        if (!java.util.Objects.equals(a.get(k), b.get(k))) {
          return diff(a.get(k), b.get(k), path + "/" + k);
        }
      }
    } else if (a.isArray()) {
      if (a.size() != b.size()) {
        return path + ": Java " + a + " / skade " + b;
      }
      for (int i = 0; i < a.size(); i++) {
        if (!a.get(i).equals(b.get(i))) {
          return diff(a.get(i), b.get(i), path + "/" + i);
        }
      }
    }
    return path + ": Java " + a + " / skade " + b;
  }
}
