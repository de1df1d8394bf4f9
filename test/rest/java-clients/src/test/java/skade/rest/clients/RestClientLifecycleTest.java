/*
 * RestClientLifecycleTest: one stock Java RESTCatalog (the Iceberg release of the Maven
 * profile) through a table's whole life against skade's REST port, token auth, warehouse =
 * the catalog's name; after each step skade's SQL (SkadeSql, JDBC) must agree: the pointer
 * row, skade.snapshots() / refs(), and commit-log rows with source 'api' and committed_by the
 * token's role.  A RecordingProxy sits between client and server: loadTable with
 * snapshot-loading-mode=refs asks for snapshots=refs; Iceberg >= 1.12 sends If-None-Match on a
 * second load of an unchanged table and gets 304, and every change it sends carries an
 * Idempotency-Key whose answer skade stored (skade.rest_idempotency).
 *
 * Settings (system properties, run.sh passes them): skade.rest.uri, skade.rest.token,
 * skade.rest.warehouse (the catalog), skade.rest.role (the token's role), skade.pg.url and
 * skade.pg.user (the superuser, for the cross-checks).  The namespace is jc<version digits>,
 * so the two client versions never meet; it is dropped at the end.
 *
 * Invariant: each step compares the whole commit-log tail since the previous step, so a
 * missing, extra or mis-attributed commit fails the step that made it.
 */
package skade.rest.clients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.IcebergBuild;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class RestClientLifecycleTest {

  private static final Schema SCHEMA = new Schema(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "data", Types.StringType.get()),
      Types.NestedField.optional(3, "cat", Types.StringType.get()));
  private static final PartitionSpec SPEC = PartitionSpec.builderFor(SCHEMA).identity("cat").build();

  private final String version = IcebergBuild.version();
  private final String role = prop("skade.rest.role");
  private final String catalogName = prop("skade.rest.warehouse");
  private final String ns = "jc" + version.replaceAll("[^0-9]", "");

  private RecordingProxy proxy;
  private SkadeSql sql;
  private final List<RESTCatalog> catalogs = new ArrayList<>();
  private long seq;

  private static String prop(String name) {
    String v = System.getProperty(name);
    assertNotNull(v, "system property " + name);
    return v;
  }

  @BeforeEach
  void setUp() throws Exception {
    proxy = new RecordingProxy(prop("skade.rest.uri"));
    sql = new SkadeSql(prop("skade.pg.url"), prop("skade.pg.user"), catalogName);
    seq = sql.lastSeq();
    System.out.println("Iceberg " + version + " RESTCatalog, namespace " + ns);
  }

  @AfterEach
  void tearDown() throws Exception {
    for (RESTCatalog c : catalogs) {
      c.close();
    }
    proxy.close();
    sql.close();
  }

  private RESTCatalog catalog(Map<String, String> extra) {
    Map<String, String> props = new HashMap<>();
    props.put(CatalogProperties.URI, proxy.uri());
    props.put("token", prop("skade.rest.token"));
    props.put(CatalogProperties.WAREHOUSE_LOCATION, catalogName);
    props.putAll(extra);
    RESTCatalog c = new RESTCatalog();
    c.setConf(new Configuration());
    c.initialize("skade-" + version, props);
    catalogs.add(c);
    return c;
  }

  private static String location(Table t) {
    return ((HasTableOperations) t).operations().current().metadataFileLocation();
  }

  private static DataFile file(Table t, String name, String cat, long rows) {
    return DataFiles.builder(t.spec())
        .withPath(t.location() + "/data/cat=" + cat + "/" + name + ".parquet")
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(1000 + rows)
        .withRecordCount(rows)
        .withPartitionPath(t.spec().isUnpartitioned() ? "" : partitionPath(t.spec(), cat))
        .build();
  }

  private static String partitionPath(PartitionSpec spec, String cat) {
    StringBuilder b = new StringBuilder();
    spec.fields().forEach(f -> {
      if (b.length() > 0) {
        b.append('/');
      }
      b.append(f.name()).append('=').append(f.name().equals("cat") ? cat : "0");
    });
    return b.toString();
  }

  /**
   * The commit-log rows since the last step: ops in order, for tables named, each by the REST
   * path (source api) as the token's role; the last one's metadata location is expected.
   */
  private List<SkadeSql.LogRow> expectLog(String expectedLocation, String... opsAndNames)
      throws Exception {
    List<SkadeSql.LogRow> rows = sql.logSince(seq);
    List<String> got = new ArrayList<>();
    for (SkadeSql.LogRow r : rows) {
      got.add(r.op() + " " + r.namespace() + "." + r.name());
      assertEquals("api", r.source(), "source of " + r);
      assertEquals(role, r.committedBy(), "committed_by of " + r);
    }
    assertEquals(List.of(opsAndNames), got, "commit log since seq " + seq);
    if (expectedLocation != null) {
      assertEquals(expectedLocation, rows.get(rows.size() - 1).metadataLocation());
    }
    if (!rows.isEmpty()) {
      seq = rows.get(rows.size() - 1).seq();
    }
    return rows;
  }

  /** skade's snapshots() and refs() agree with the table the client holds. */
  private void expectSnapshots(String name, Table t) throws Exception {
    List<SkadeSql.Snap> snaps = sql.snapshots(ns, name);
    List<Long> ids = new ArrayList<>();
    for (SkadeSql.Snap s : snaps) {
      ids.add(s.id());
    }
    List<Long> clientIds = new ArrayList<>();
    for (Snapshot s : t.snapshots()) {
      clientIds.add(s.snapshotId());
    }
    assertEquals(clientIds, ids, "snapshots() of " + name);
    for (SkadeSql.Snap s : snaps) {
      Snapshot c = t.snapshot(s.id());
      assertEquals(c.parentId(), s.parent(), "parent of " + s.id());
      assertEquals(c.operation(), s.operation(), "operation of " + s.id());
      assertEquals(t.currentSnapshot() != null && t.currentSnapshot().snapshotId() == s.id(),
          s.current(), "is_current of " + s.id());
    }
    Map<String, String> refs = new HashMap<>();
    t.refs().forEach((k, v) -> refs.put(k, (v.isBranch() ? "branch" : "tag") + ":" + v.snapshotId()));
    assertEquals(refs, sql.refs(ns, name), "refs() of " + name);
    assertEquals(location(t), sql.metadataLocation(ns, name), "iceberg_tables row of " + name);
  }

  private void step(String what) {
    System.out.println("step: " + what);
  }

  @Test
  void lifecycle() throws Exception {
    RESTCatalog cat = catalog(Map.of());
    Namespace n = Namespace.of(ns);
    TableIdentifier ident = TableIdentifier.of(n, "events");
    boolean modern = !version.startsWith("1.10.") && !version.startsWith("1.11.");

    step("namespace create / list / properties");
    if (cat.namespaceExists(n)) {
      // a previous run of this version against the same server: start clean
      for (TableIdentifier t : cat.listTables(n)) {
        cat.dropTable(t, true);
      }
      cat.dropNamespace(n);
      seq = sql.lastSeq();
    }
    // (a mutable map: 1.10's CreateNamespaceRequest asks an immutable one for a null key)
    cat.createNamespace(n, new HashMap<>(Map.of("owner", "java-" + version, "comment", "made by RESTCatalog")));
    assertTrue(cat.listNamespaces().contains(n), "listNamespaces");
    assertEquals("java-" + version, cat.loadNamespaceMetadata(n).get("owner"));
    cat.setProperties(n, new HashMap<>(Map.of("stage", "one")));
    cat.removeProperties(n, new java.util.HashSet<>(java.util.Set.of("comment")));
    Map<String, String> nsProps = sql.namespaceProperties(ns);
    assertEquals("java-" + version, nsProps.get("owner"), "namespace properties " + nsProps);
    assertEquals("one", nsProps.get("stage"), "namespace properties " + nsProps);
    assertFalse(nsProps.containsKey("comment"), "namespace properties " + nsProps);
    assertEquals(cat.loadNamespaceMetadata(n).get("stage"), "one");
    expectLog(null); // namespaces are not in the commit log

    step("create table");
    Table t = cat.createTable(ident, SCHEMA, SPEC, new HashMap<>(Map.of("format-version", "2", "owner", "java")));
    assertTrue(cat.tableExists(ident));
    assertTrue(cat.listTables(n).contains(ident));
    expectLog(location(t), "create " + ns + ".events");
    expectSnapshots("events", t);
    assertTrue(sql.snapshots(ns, "events").isEmpty());

    step("append 1");
    int mark = proxy.mark();
    t.newAppend().appendFile(file(t, "a1", "a", 3)).appendFile(file(t, "b1", "b", 2)).commit();
    long s1 = t.currentSnapshot().snapshotId();
    List<SkadeSql.LogRow> log = expectLog(location(t), "commit " + ns + ".events");
    assertEquals(s1, log.get(0).snapshotId(), "commit_log.snapshot_id");
    expectSnapshots("events", t);
    checkIdempotency(proxy.since(mark), modern);

    step("append 2");
    mark = proxy.mark();
    t.newAppend().appendFile(file(t, "a2", "a", 4)).commit();
    long s2 = t.currentSnapshot().snapshotId();
    assertEquals(s1, (long) t.currentSnapshot().parentId());
    log = expectLog(location(t), "commit " + ns + ".events");
    assertEquals(s2, log.get(0).snapshotId());
    expectSnapshots("events", t);
    assertEquals("9", t.currentSnapshot().summary().get("total-records"));
    checkIdempotency(proxy.since(mark), modern);

    step("schema evolution");
    t.updateSchema().addColumn("extra", Types.IntegerType.get()).renameColumn("data", "payload").commit();
    expectLog(location(t), "commit " + ns + ".events");
    Table reloaded = cat.loadTable(ident);
    assertNotNull(reloaded.schema().findField("extra"));
    assertNotNull(reloaded.schema().findField("payload"));
    assertEquals(t.schema().schemaId(), reloaded.schema().schemaId());
    expectSnapshots("events", t);

    step("partition spec change");
    t.updateSpec().addField(Expressions.bucket("id", 4)).commit();
    expectLog(location(t), "commit " + ns + ".events");
    assertEquals(2, cat.loadTable(ident).spec().fields().size());
    t.newAppend().appendFile(file(t, "a3", "a", 1)).commit();
    expectLog(location(t), "commit " + ns + ".events");
    assertEquals(t.spec().specId(), t.currentSnapshot().addedDataFiles(t.io()).iterator().next().specId());
    expectSnapshots("events", t);

    step("tag");
    t.manageSnapshots().createTag("first", s1).commit();
    expectLog(location(t), "commit " + ns + ".events");
    assertEquals("tag:" + s1, sql.refs(ns, "events").get("first"));
    expectSnapshots("events", t);

    step("loadTable with snapshot-loading-mode=refs, then a refresh");
    RESTCatalog refsCat = catalog(Map.of("snapshot-loading-mode", "refs"));
    mark = proxy.mark();
    Table lazy = refsCat.loadTable(ident);
    List<RecordingProxy.Exchange> ex = proxy.since(mark);
    assertTrue(ex.stream().anyMatch(e -> e.method().equals("GET") && e.path().contains("/events")
        && e.path().contains("snapshots=refs") && e.status() == 200), "refs load: " + ex);
    assertEquals(t.currentSnapshot().snapshotId(), lazy.currentSnapshot().snapshotId());
    assertEquals(s1, lazy.snapshot(lazy.refs().get("first").snapshotId()).snapshotId());
    t.newAppend().appendFile(file(t, "b4", "b", 5)).commit();
    expectLog(location(t), "commit " + ns + ".events");
    lazy.refresh();
    assertEquals(t.currentSnapshot().snapshotId(), lazy.currentSnapshot().snapshotId());
    assertEquals(location(t), location(lazy));
    List<Long> lazyIds = new ArrayList<>();
    lazy.snapshots().forEach(s -> lazyIds.add(s.snapshotId())); // loads all snapshots
    assertEquals(sql.snapshots(ns, "events").size(), lazyIds.size());
    expectSnapshots("events", t);

    step("a second loadTable of an unchanged table");
    RESTCatalog fresh = catalog(Map.of());
    fresh.loadTable(ident);
    mark = proxy.mark();
    Table again = fresh.loadTable(ident);
    ex = proxy.since(mark);
    System.out.println("  second load: " + ex);
    assertEquals(t.currentSnapshot().snapshotId(), again.currentSnapshot().snapshotId());
    if (modern) {
      assertTrue(ex.stream().anyMatch(e -> e.method().equals("GET") && e.path().split("\\?")[0].endsWith("/events")
          && e.ifNoneMatch() != null && e.status() == 304), "If-None-Match -> 304: " + ex);
    }

    step("create transaction");
    TableIdentifier staged = TableIdentifier.of(n, "staged");
    mark = proxy.mark();
    Transaction txn = cat.newCreateTableTransaction(staged, SCHEMA, SPEC, new HashMap<>(Map.of("format-version", "2")));
    txn.updateProperties().set("made-by", "create-transaction").commit();
    txn.newAppend().appendFile(file(txn.table(), "s1", "x", 7)).commit();
    assertFalse(cat.tableExists(staged), "staged table visible before the transaction commits");
    txn.commitTransaction();
    Table st = cat.loadTable(staged);
    assertEquals("create-transaction", st.properties().get("made-by"));
    assertEquals("7", st.currentSnapshot().summary().get("total-records"));
    log = expectLog(location(st), "create " + ns + ".staged");
    assertEquals(st.currentSnapshot().snapshotId(), log.get(0).snapshotId());
    expectSnapshots("staged", st);
    checkIdempotency(proxy.since(mark), modern);

    step("rename");
    TableIdentifier renamed = TableIdentifier.of(n, "events_renamed");
    String before = location(t);
    cat.renameTable(ident, renamed);
    assertFalse(cat.tableExists(ident));
    Table r = cat.loadTable(renamed);
    assertEquals(before, location(r));
    log = expectLog(before, "rename " + ns + ".events_renamed");
    assertEquals("events", log.get(0).prevName());
    assertNull(sql.metadataLocation(ns, "events"));
    expectSnapshots("events_renamed", r);

    step("drop with purge");
    assertTrue(cat.dropTable(renamed, true));
    assertTrue(cat.dropTable(staged, true));
    expectLog(null, "drop " + ns + ".events_renamed", "drop " + ns + ".staged");
    assertNull(sql.metadataLocation(ns, "events_renamed"));
    assertNull(sql.metadataLocation(ns, "staged"));
    assertFalse(cat.tableExists(renamed));
    assertTrue(cat.dropNamespace(n));
    assertFalse(cat.namespaceExists(n));
    assertTrue(sql.namespaceProperties(ns).isEmpty());

    System.out.println("all requests:");
    for (RecordingProxy.Exchange e : proxy.exchanges()) {
      System.out.println("  " + e);
    }
  }

  /**
   * The changes among exchanges: Iceberg >= 1.12 sends an Idempotency-Key with each (and
   * skade stored the answer under the role and the request's route); older clients may not.
   */
  private void checkIdempotency(List<RecordingProxy.Exchange> exchanges, boolean required)
      throws Exception {
    int changes = 0;
    for (RecordingProxy.Exchange e : exchanges) {
      if (!e.method().equals("POST") || e.status() >= 300 || e.path().endsWith("/metrics")) {
        continue; // (a metrics report changes nothing: no key)
      }
      changes++;
      if (e.idempotencyKey() == null) {
        assertFalse(required, "no Idempotency-Key: " + e);
        continue;
      }
      String path = e.path().contains("?") ? e.path().substring(0, e.path().indexOf('?')) : e.path();
      String route = sql.idempotencyRoute(role, e.idempotencyKey());
      assertNotNull(route, "answer stored for " + e);
      assertTrue(route.equals("POST " + path) || route.equals("POST " + e.path()),
          "stored route " + route + " for " + e);
    }
    assertTrue(changes > 0, "no change among " + exchanges);
  }
}
