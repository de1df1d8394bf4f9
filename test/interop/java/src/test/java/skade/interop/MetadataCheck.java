package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.zip.GZIPInputStream;
import org.apache.iceberg.HistoryEntry;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.util.JsonUtil;

/**
 * After a client table write (run by {@link CommitLog#expectTable}): skade's metadata functions
 * give the client's view of the table. skade.snapshots() = table.snapshots(), skade.refs() =
 * table.refs(), skade.history() = table.history() in order, the newest commit-log row's
 * snapshot_id = the client's current snapshot (-1: none), skade.table_metadata() and
 * skade.load_table() return the metadata file byte for byte, and load_table(snapshots => 'refs')
 * keeps exactly the ref'ed snapshots and the whole snapshot log. Tables only, and only
 * when the metadata is a local file or an S3 object (read back through the table's own FileIO);
 * skade reads no other scheme.
 */
final class MetadataCheck {
  private MetadataCheck() {}

  /** The local file a metadata location names, or null for another scheme. */
  static Path localPath(String location) {
    if (location.startsWith("/")) {
      return Path.of(location);
    }
    if (location.startsWith("file:")) {
      URI uri = URI.create(location);
      String host = uri.getHost();
      return host == null || host.isEmpty() || "localhost".equals(host)
          ? Path.of(uri.getPath())
          : null;
    }
    return null;
  }

  static boolean isObjectStore(String location) {
    return location.startsWith("s3://") || location.startsWith("s3a://") || location.startsWith("s3n://");
  }

  static byte[] readMetadataFile(Path path) throws IOException {
    return inflate(Files.readAllBytes(path));
  }

  /** The metadata file's bytes (gzip: inflated), local or through the table's FileIO. */
  static byte[] readMetadata(Table table, String location) throws IOException {
    Path path = localPath(location);
    if (path != null) {
      return readMetadataFile(path);
    }
    try (InputStream in = table.io().newInputFile(location).newStream()) {
      return inflate(in.readAllBytes());
    }
  }

  static byte[] inflate(byte[] raw) throws IOException {
    if (raw.length >= 2 && (raw[0] & 0xff) == 0x1f && (raw[1] & 0xff) == 0x8b) {
      try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(raw))) {
        return in.readAllBytes();
      }
    }
    return raw;
  }

  private static String str(Object o) {
    return o == null ? null : o.toString();
  }

  static void check(Connection conn, String catalog, TableIdentifier id, Table table)
      throws SQLException {
    String location = CommitLog.location(table);
    if (localPath(location) == null && !isObjectStore(location)) {
      return;
    }
    String ns = CommitLog.ns(id);
    String name = id.name();
    String what = "(" + ns + ", " + name + ", " + catalog + ")";
    Snapshot current = table.currentSnapshot();
    Map<Long, Snapshot> byId = new HashMap<>();
    for (Snapshot s : table.snapshots()) {
      byId.put(s.snapshotId(), s);
    }
    Set<Long> ancestors = new HashSet<>();
    for (Snapshot s = current; s != null; s = s.parentId() == null ? null : byId.get(s.parentId())) {
      ancestors.add(s.snapshotId());
    }

    // 1. skade.snapshots() = table.snapshots() (order: the file's), summaries included
    List<List<String>> want = new ArrayList<>();
    for (Snapshot s : table.snapshots()) {
      want.add(
          listOf(
              str(s.snapshotId()),
              str(s.parentId()),
              str(s.sequenceNumber()),
              str(s.timestampMillis()),
              s.operation(),
              s.manifestListLocation(),
              str(s.schemaId()),
              str(current != null && current.snapshotId() == s.snapshotId())));
    }
    List<List<String>> got = new ArrayList<>();
    List<Map<String, String>> gotSummaries = new ArrayList<>();
    for (List<String> r :
        Skade.query(
            conn,
            "SELECT snapshot_id, parent_id, sequence_number,"
                + " (extract(epoch FROM committed_at) * 1000)::bigint, operation, manifest_list,"
                + " schema_id, is_current::text, (summary - 'operation')::text"
                + " FROM skade.snapshots(?, ?, ?) WITH ORDINALITY ORDER BY ordinality",
            ns,
            name,
            catalog)) {
      got.add(r.subList(0, 8));
      gotSummaries.add(r.get(8) == null ? null : parseMap(r.get(8)));
    }
    assertEquals(want, got, "skade.snapshots" + what + " vs table.snapshots()");
    List<Map<String, String>> wantSummaries = new ArrayList<>();
    for (Snapshot s : table.snapshots()) {
      wantSummaries.add(s.summary());
    }
    assertEquals(wantSummaries, gotSummaries, "skade.snapshots" + what + " summaries");

    // 2. skade.refs() = table.refs()
    Set<List<String>> wantRefs = new HashSet<>();
    for (Map.Entry<String, SnapshotRef> e : table.refs().entrySet()) {
      SnapshotRef r = e.getValue();
      wantRefs.add(
          listOf(
              e.getKey(),
              r.type().name().toLowerCase(java.util.Locale.ROOT),
              str(r.snapshotId()),
              str(r.maxRefAgeMs()),
              str(r.maxSnapshotAgeMs()),
              str(r.minSnapshotsToKeep())));
    }
    Set<List<String>> gotRefs =
        new HashSet<>(
            Skade.query(
                conn,
                "SELECT name, type, snapshot_id, max_ref_age_ms, max_snapshot_age_ms,"
                    + " min_snapshots_to_keep FROM skade.refs(?, ?, ?)",
                ns,
                name,
                catalog));
    assertEquals(wantRefs, gotRefs, "skade.refs" + what + " vs table.refs()");

    // 3. skade.history() = table.history(), in order
    List<List<String>> wantLog = new ArrayList<>();
    for (HistoryEntry h : table.history()) {
      Snapshot s = byId.get(h.snapshotId());
      wantLog.add(
          listOf(
              str(h.timestampMillis()),
              str(h.snapshotId()),
              s == null ? null : str(s.parentId()),
              str(ancestors.contains(h.snapshotId()))));
    }
    List<List<String>> gotLog =
        Skade.query(
            conn,
            "SELECT (extract(epoch FROM made_current_at) * 1000)::bigint, snapshot_id, parent_id,"
                + " is_current_ancestor::text"
                + " FROM skade.history(?, ?, ?) WITH ORDINALITY ORDER BY ordinality",
            ns,
            name,
            catalog);
    assertEquals(wantLog, gotLog, "skade.history" + what + " vs table.history()");

    // 4. the newest commit-log row of the table carries the client's current snapshot
    List<List<String>> newest =
        Skade.query(
            conn,
            "SELECT metadata_location, snapshot_id FROM skade.commit_log"
                + " WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?"
                + " ORDER BY seq DESC LIMIT 1",
            catalog,
            ns,
            name);
    List<String> wantNewest =
        new ArrayList<>(List.of(location, str(current == null ? -1L : current.snapshotId())));
    if (isObjectStore(location) && newest.size() == 1 && newest.get(0).get(1) == null) {
      // no request is made in a commit: an S3 row is resolved later (skade.resolve_commit_log())
      wantNewest.set(1, null);
    }
    assertEquals(
        List.of(wantNewest),
        newest,
        "newest commit_log row of " + id + " (metadata_location, snapshot_id)");

    // 5. the metadata text is the file's, byte for byte (gzip: inflated) ...
    byte[] onDisk;
    try {
      onDisk = readMetadata(table, location);
    } catch (IOException e) {
      throw new AssertionError("reading " + location, e);
    }
    List<String> texts =
        Skade.query(
                conn,
                "SELECT skade.table_metadata(?, ?, catalog => ?)::text, l.metadata::text"
                    + " FROM skade.load_table(?, ?, catalog => ?) l",
                ns,
                name,
                catalog,
                ns,
                name,
                catalog)
            .get(0);
    String[] labels = {"skade.table_metadata", "skade.load_table"};
    for (int i = 0; i < 2; i++) {
      assertNotNull(texts.get(i), labels[i] + what);
      byte[] bytes = texts.get(i).getBytes(StandardCharsets.UTF_8);
      if (!java.util.Arrays.equals(bytes, onDisk)) {
        fail(labels[i] + what + " differs from " + location + ": " + firstDifference(bytes, onDisk));
      }
    }

    // ... and snapshots => 'refs' keeps exactly the ref'ed snapshots, and the whole log
    String refsText =
        Skade.queryOne(
            conn,
            "SELECT metadata::text FROM skade.load_table(?, ?, catalog => ?, snapshots => 'refs')",
            ns,
            name,
            catalog);
    ObjectNode trimmed = (ObjectNode) parse(refsText);
    ObjectNode full = (ObjectNode) parse(new String(onDisk, StandardCharsets.UTF_8));
    Set<Long> refd = new TreeSet<>();
    table.refs().values().forEach(r -> refd.add(r.snapshotId()));
    Map<Long, JsonNode> fullSnapshots = new HashMap<>();
    for (JsonNode s : orEmpty(full.remove("snapshots"))) {
      fullSnapshots.put(s.get("snapshot-id").asLong(), s);
    }
    Set<Long> kept = new TreeSet<>();
    for (JsonNode s : orEmpty(trimmed.remove("snapshots"))) {
      long sid = s.get("snapshot-id").asLong();
      kept.add(sid);
      assertEquals(fullSnapshots.get(sid), s, "snapshot " + sid + " as kept by 'refs'" + what);
    }
    assertEquals(refd, kept, "load_table" + what + ", snapshots => 'refs': snapshot ids");
    // the snapshot log stays whole, as Java's suppressHistoricalSnapshots() keeps it
    List<String> wantRefsLog = new ArrayList<>();
    for (HistoryEntry h : table.history()) {
      wantRefsLog.add(h.snapshotId() + "@" + h.timestampMillis());
    }
    List<String> gotRefsLog = new ArrayList<>();
    for (JsonNode e : orEmpty(trimmed.remove("snapshot-log"))) {
      gotRefsLog.add(e.get("snapshot-id").asLong() + "@" + e.get("timestamp-ms").asLong());
    }
    assertEquals(wantRefsLog, gotRefsLog, "load_table" + what + ", snapshots => 'refs': snapshot-log");
    full.remove("snapshot-log");
    assertEquals(full, trimmed, "load_table" + what + ", snapshots => 'refs': other fields");
  }

  private static List<String> listOf(String... values) {
    return java.util.Arrays.asList(values);
  }

  private static Iterable<JsonNode> orEmpty(JsonNode node) {
    return node == null ? List.of() : node;
  }

  private static JsonNode parse(String json) {
    try {
      return JsonUtil.mapper().readTree(json);
    } catch (IOException e) {
      throw new AssertionError("unparsable JSON from skade: " + e.getMessage(), e);
    }
  }

  private static Map<String, String> parseMap(String json) {
    try {
      return JsonUtil.mapper().readValue(json, new TypeReference<Map<String, String>>() {});
    } catch (IOException e) {
      throw new AssertionError("unparsable summary from skade: " + json, e);
    }
  }

  private static String firstDifference(byte[] a, byte[] b) {
    int i = 0;
    while (i < a.length && i < b.length && a[i] == b[i]) {
      i++;
    }
    return "lengths "
        + a.length
        + " vs "
        + b.length
        + ", first difference at byte "
        + i
        + ":\n got  ..."
        + new String(a, Math.max(0, i - 60), Math.min(a.length, i + 60) - Math.max(0, i - 60), StandardCharsets.UTF_8)
        + "\n want ..."
        + new String(b, Math.max(0, i - 60), Math.min(b.length, i + 60) - Math.max(0, i - 60), StandardCharsets.UTF_8);
  }
}
