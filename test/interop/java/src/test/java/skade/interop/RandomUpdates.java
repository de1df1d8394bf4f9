package skade.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Random CommitTableRequest bodies for UpdateTableRandomTest: requirements and updates made from
 * a table's current metadata, mostly valid, some stale or wrong. A light model of the table
 * (schemas, specs, orders, snapshots, refs, ...) is updated as each update is generated so that
 * later updates in the same sequence can refer to what earlier ones added (-1 forms, a snapshot
 * added and then made main, an add-schema repeated).
 *
 * <p>DEVIATION cases (skade deliberately differs from Java; the sequence either gives Java the
 * request skade's rule stands for, or expects skade to refuse):
 *
 * <ul>
 *   <li>assign-uuid with another uuid: skade refuses (22023); Java replaces the table's uuid.
 *   <li>assign-uuid with the table's uuid in other case: skade sees no change (uuids compare
 *       case-insensitively, as assert-table-uuid does); Java stores the new spelling.
 *   <li>upgrade-format-version 4: skade refuses (22023, it writes v1-v3 only); Java upgrades.
 *   <li>set-properties with reserved keys: skade turns format-version into an upgrade and drops
 *       the others (what Java's client-side UpdateProperties does); Java's builder stores them.
 *   <li>add-spec fields without field-id: skade numbers them from last-partition-id + 1; Java
 *       from 1000, which can reuse an id another spec gave another field.
 *   <li>add-encryption-key / remove-encryption-key: skade refuses (0A000).
 * </ul>
 */
final class RandomUpdates {
  private static final ObjectMapper JSON = new ObjectMapper();

  static final String[] REQUIREMENTS = {
    "assert-create", "assert-table-uuid", "assert-ref-snapshot-id",
    "assert-last-assigned-field-id", "assert-current-schema-id",
    "assert-last-assigned-partition-id", "assert-default-spec-id", "assert-default-sort-order-id"
  };
  static final String[] ACTIONS = {
    "assign-uuid", "upgrade-format-version", "add-schema", "set-current-schema", "add-spec",
    "set-default-spec", "add-sort-order", "set-default-sort-order", "add-snapshot",
    "set-snapshot-ref", "remove-snapshots", "remove-snapshot-ref", "set-location",
    "set-properties", "remove-properties", "set-statistics", "remove-statistics",
    "set-partition-statistics", "remove-partition-statistics", "remove-partition-specs",
    "remove-schemas"
  };
  /** Every key the test requires to have been generated. */
  static final List<String> KINDS = new ArrayList<>();

  static {
    for (String r : REQUIREMENTS) {
      KINDS.add("req " + r);
    }
    for (String a : ACTIONS) {
      KINDS.add(a);
    }
    for (String a : new String[] {"set-current-schema", "set-default-spec",
        "set-default-sort-order"}) {
      KINDS.add(a + " -1");
    }
  }

  static final class Sequence {
    final ArrayNode requirements = JSON.createArrayNode();
    final ArrayNode skadeUpdates = JSON.createArrayNode();
    final ArrayNode javaUpdates = JSON.createArrayNode();
    /** A deviation in which skade must refuse, with this SQLSTATE. */
    String expectSkadeRefusal;

    /** skade applies updates in order: the first update it refuses decides the SQLSTATE */
    void expectFirstRefusal(String sqlState) {
      if (expectSkadeRefusal == null) {
        expectSkadeRefusal = sqlState;
      }
    }
    /** Compare the metadata written (else acceptance only). */
    boolean compareMetadata = true;
    boolean compareAcceptance = true;
    TableMetadata base;
    final Set<String> keys = new LinkedHashSet<>();

    List<String> keys() {
      return new ArrayList<>(keys);
    }

    void both(ObjectNode u, String key) {
      skadeUpdates.add(u);
      javaUpdates.add(u);
      keys.add(key);
    }
  }

  private final Random rnd;
  // the model, reset from the base for each sequence
  private int formatVersion;
  private String uuid;
  private String location;
  private final Map<Integer, Schema> schemas = new HashMap<>();
  private int currentSchemaId;
  private int lastColumnId;
  private final Map<Integer, List<PartitionField>> specs = new HashMap<>();
  private int defaultSpecId;
  private int lastPartitionId;
  private final Map<Integer, SortOrder> orders = new HashMap<>();
  private int defaultOrderId;
  private final Map<Long, Long> snapshotSeq = new HashMap<>();
  private long lastSeq;
  private long nextRowId;
  private long currentSnapshot;
  private final Map<String, Long> refs = new HashMap<>();
  private final Set<String> propertyKeys = new HashSet<>();
  private final Set<Long> statistics = new HashSet<>();
  private final Set<Long> partitionStatistics = new HashSet<>();
  private final List<Long> added = new ArrayList<>();
  private final List<ObjectNode> addedSchemas = new ArrayList<>();
  private final List<ObjectNode> addedSpecs = new ArrayList<>();
  private final List<ObjectNode> addedOrders = new ArrayList<>();
  private String tableLocation;
  private Schema baseSchema;

  RandomUpdates(long seed) {
    this.rnd = new Random(seed);
  }

  private boolean chance(double p) {
    return rnd.nextDouble() < p;
  }

  private <T> T pick(List<T> list) {
    return list.get(rnd.nextInt(list.size()));
  }

  private void reset(TableMetadata base, String home) {
    formatVersion = base.formatVersion();
    uuid = base.uuid();
    location = base.location();
    tableLocation = home;
    schemas.clear();
    schemas.putAll(base.schemasById());
    baseSchema = base.schema();
    currentSchemaId = base.currentSchemaId();
    lastColumnId = base.lastColumnId();
    specs.clear();
    base.specsById().forEach((id, s) -> specs.put(id, new ArrayList<>(s.fields())));
    defaultSpecId = base.defaultSpecId();
    lastPartitionId = base.lastAssignedPartitionId();
    orders.clear();
    orders.putAll(base.sortOrdersById());
    defaultOrderId = base.defaultSortOrderId();
    snapshotSeq.clear();
    for (Snapshot s : base.snapshots()) {
      snapshotSeq.put(s.snapshotId(), s.sequenceNumber());
    }
    lastSeq = base.lastSequenceNumber();
    nextRowId = base.nextRowId();
    currentSnapshot = base.currentSnapshot() == null ? -1 : base.currentSnapshot().snapshotId();
    refs.clear();
    base.refs().forEach((k, v) -> refs.put(k, v.snapshotId()));
    propertyKeys.clear();
    propertyKeys.addAll(base.properties().keySet());
    statistics.clear();
    base.statisticsFiles().forEach(f -> statistics.add(f.snapshotId()));
    partitionStatistics.clear();
    base.partitionStatisticsFiles().forEach(f -> partitionStatistics.add(f.snapshotId()));
    added.clear();
    addedSchemas.clear();
    addedSpecs.clear();
    addedOrders.clear();
  }

  Sequence sequence(TableMetadata base, String home) {
    reset(base, home);
    Sequence seq = new Sequence();
    seq.base = base;
    int nreq = rnd.nextInt(4);
    for (int i = 0; i < nreq; i++) {
      requirement(base, seq);
    }
    int nupd = chance(0.03) ? 0 : 1 + rnd.nextInt(4);
    for (int i = 0; i < nupd; i++) {
      update(seq);
    }
    // DEVIATION: Java's Builder keeps removed schemas and specs in its id index, so one added
    // after remove-schemas / remove-partition-specs in the same commit can take a removed id
    // and be dropped as "already there" (last-column-id / last-partition-id still grow). skade
    // adds it; and set-current-schema / set-default-spec can pick a removed one in Java, which
    // skade refuses. For these only skade's own consistency (Java reads what it wrote) is checked.
    boolean removed = false;
    for (JsonNode u : seq.skadeUpdates) {
      String a = u.path("action").asText();
      if (a.equals("remove-schemas") || a.equals("remove-partition-specs")) {
        removed = true;
      } else if (removed && (a.equals("add-schema") || a.equals("add-spec")
          || a.equals("set-current-schema") || a.equals("set-default-spec"))) {
        seq.compareMetadata = false;
        seq.compareAcceptance = false;
        seq.keys.add("deviation: schema/spec use after remove-schemas/specs (Java's stale index)");
      }
    }
    return seq;
  }

  // ---------------------------------------------------------------- requirements

  private void requirement(TableMetadata base, Sequence seq) {
    boolean stale = chance(0.12);
    ObjectNode r = JSON.createObjectNode();
    String type = REQUIREMENTS[rnd.nextInt(REQUIREMENTS.length)];
    if (type.equals("assert-create") && !chance(0.25)) {
      type = "assert-table-uuid";
    }
    r.put("type", type);
    seq.keys.add("req " + type);
    switch (type) {
      case "assert-create":
        break;
      case "assert-table-uuid":
        r.put("uuid", stale ? UUID.randomUUID().toString()
            : chance(0.2) ? base.uuid().toUpperCase(Locale.ROOT) : base.uuid());
        break;
      case "assert-ref-snapshot-id": {
        List<String> names = new ArrayList<>(base.refs().keySet());
        names.add("nosuchref");
        String ref = pick(names);
        r.put("ref", ref);
        Long actual = base.refs().containsKey(ref) ? base.refs().get(ref).snapshotId() : null;
        Long value = actual;
        if (stale) {
          value = actual == null || chance(0.5) ? Long.valueOf(rnd.nextInt(1000) + 1) : null;
        }
        if (value == null) {
          if (chance(0.5)) {
            r.putNull("snapshot-id");
          }
        } else {
          r.put("snapshot-id", value);
        }
        break;
      }
      case "assert-last-assigned-field-id":
        r.put("last-assigned-field-id", base.lastColumnId() + (stale ? 1 : 0));
        break;
      case "assert-current-schema-id":
        r.put("current-schema-id", base.currentSchemaId() + (stale ? 1 : 0));
        break;
      case "assert-last-assigned-partition-id":
        r.put("last-assigned-partition-id", base.lastAssignedPartitionId() - (stale ? 1 : 0));
        break;
      case "assert-default-spec-id":
        r.put("default-spec-id", base.defaultSpecId() + (stale ? 1 : 0));
        break;
      default:
        r.put("default-sort-order-id", base.defaultSortOrderId() + (stale ? 1 : 0));
        break;
    }
    if (chance(0.02)) {
      // malformed: the value field missing
      ObjectNode bad = JSON.createObjectNode();
      bad.put("type", type.equals("assert-create") ? "assert-nothing" : type);
      r = bad;
      seq.keys.add("malformed requirement");
    }
    seq.requirements.add(r);
  }

  // ---------------------------------------------------------------- updates

  private void update(Sequence seq) {
    double p = rnd.nextDouble();
    if (p < 0.04) {
      malformed(seq);
      return;
    }
    String action = ACTIONS[rnd.nextInt(ACTIONS.length)];
    // the snapshot actions are the common case
    if (chance(0.25)) {
      action = chance(0.55) ? "add-snapshot" : "set-snapshot-ref";
    }
    ObjectNode u = JSON.createObjectNode();
    u.put("action", action);
    switch (action) {
      case "assign-uuid":
        assignUuid(seq, u);
        return;
      case "upgrade-format-version": {
        int v = formatVersion + (chance(0.6) ? 1 : chance(0.5) ? 0 : -1);
        if (chance(0.1)) {
          v = 5;
        }
        u.put("format-version", v);
        if (v == 4) {
          seq.skadeUpdates.add(u);
          seq.javaUpdates.add(u);
          seq.keys.add(action);
          seq.keys.add("deviation: upgrade to v4");
          seq.expectFirstRefusal("22023");
          return;
        }
        if (v > formatVersion && v <= 3) {
          if (formatVersion == 1) {
            lastSeq = 0;
          }
          formatVersion = v;
        }
        seq.both(u, action);
        return;
      }
      case "add-schema":
        u.set("schema", schema());
        if (chance(0.5)) {
          u.put("last-column-id", lastColumnId);
        }
        seq.both(u, action);
        return;
      case "set-current-schema": {
        if (chance(0.6)) {
          // the -1 form's usual companion
          ObjectNode a = JSON.createObjectNode();
          a.put("action", "add-schema");
          a.set("schema", schema());
          seq.both(a, "add-schema");
        }
        int id = schemaRef(seq, action);
        u.put("schema-id", id);
        seq.both(u, action);
        if (id >= 0 && schemas.containsKey(id)) {
          currentSchemaId = id;
        }
        return;
      }
      case "add-spec":
        addSpec(seq, u);
        return;
      case "set-default-spec": {
        if (chance(0.6)) {
          ObjectNode a = JSON.createObjectNode();
          a.put("action", "add-spec");
          addSpec(seq, a);
        }
        int id;
        if (chance(0.35)) {
          id = -1;
          seq.keys.add(action + " -1");
        } else {
          id = chance(0.9) && !specs.isEmpty() ? pick(new ArrayList<>(specs.keySet())) : 77;
        }
        u.put("spec-id", id);
        seq.both(u, action);
        if (specs.containsKey(id)) {
          defaultSpecId = id;
        }
        return;
      }
      case "add-sort-order":
        u.set("sort-order", sortOrder());
        seq.both(u, action);
        return;
      case "set-default-sort-order": {
        if (chance(0.6)) {
          ObjectNode a = JSON.createObjectNode();
          a.put("action", "add-sort-order");
          a.set("sort-order", sortOrder());
          seq.both(a, "add-sort-order");
        }
        int id;
        if (chance(0.35)) {
          id = -1;
          seq.keys.add(action + " -1");
        } else {
          id = chance(0.9) && !orders.isEmpty() ? pick(new ArrayList<>(orders.keySet())) : 55;
        }
        u.put("sort-order-id", id);
        seq.both(u, action);
        if (orders.containsKey(id)) {
          defaultOrderId = id;
        }
        return;
      }
      case "add-snapshot":
        addSnapshot(seq, u);
        return;
      case "set-snapshot-ref":
        setSnapshotRef(seq, u);
        return;
      case "remove-snapshots": {
        ArrayNode ids = u.putArray("snapshot-ids");
        List<Long> existing = new ArrayList<>(snapshotSeq.keySet());
        int before = existing.size();
        int n = existing.isEmpty() ? 0 : rnd.nextInt(Math.min(3, existing.size()) + 1);
        for (int i = 0; i < n; i++) {
          long id = existing.remove(rnd.nextInt(existing.size()));
          ids.add(id);
          snapshotSeq.remove(id);
          refs.values().removeIf(v -> v == id);
          if (currentSnapshot == id) {
            currentSnapshot = -1;
          }
        }
        if (n == 0 || chance(0.2)) {
          ids.add(424242L);
        }
        if (ids.size() > before) {
          // DEVIATION: Java refuses more ids than the table has snapshots (it sizes a list by
          // the difference); the ids it does not have are ignored otherwise, and so by skade
          ObjectNode j = u.deepCopy();
          ArrayNode known = j.putArray("snapshot-ids");
          ids.forEach(x -> {
            if (x.asLong() != 424242L) {
              known.add(x);
            }
          });
          seq.skadeUpdates.add(u);
          seq.javaUpdates.add(j);
          seq.keys.add(action);
          seq.keys.add("deviation: remove-snapshots more ids than snapshots");
          return;
        }
        seq.both(u, action);
        return;
      }
      case "remove-snapshot-ref": {
        List<String> names = new ArrayList<>(refs.keySet());
        names.add("nosuchref");
        names.add("main");
        String name = pick(names);
        u.put("ref-name", name);
        refs.remove(name);
        if (name.equals("main")) {
          currentSnapshot = -1;
        }
        seq.both(u, action);
        return;
      }
      case "set-location": {
        double q = rnd.nextDouble();
        String loc = q < 0.3 ? location : q < 0.45 ? location + "/"
            : tableLocation + "_moved" + rnd.nextInt(3);
        u.put("location", loc);
        location = loc.replaceAll("/+$", "");
        seq.both(u, action);
        return;
      }
      case "set-properties":
        setProperties(seq, u);
        return;
      case "remove-properties": {
        ArrayNode keys = u.putArray("removals");
        List<String> existing = new ArrayList<>(propertyKeys);
        int n = rnd.nextInt(3);
        for (int i = 0; i < n && !existing.isEmpty(); i++) {
          String k = pick(existing);
          keys.add(k);
          propertyKeys.remove(k);
        }
        if (chance(0.3)) {
          keys.add("no.such.key");
        }
        seq.both(u, action);
        return;
      }
      case "set-statistics":
      case "set-partition-statistics": {
        boolean table = action.equals("set-statistics");
        long sid = statisticsTarget();
        ObjectNode f = JSON.createObjectNode();
        f.put("snapshot-id", sid);
        f.put("statistics-path", tableLocation + "/metadata/stats-" + sid + "-" + rnd.nextInt(100)
            + (table ? ".stats" : ".parquet"));
        f.put("file-size-in-bytes", 100 + rnd.nextInt(1000));
        if (table) {
          f.put("file-footer-size-in-bytes", 10 + rnd.nextInt(50));
          ArrayNode blobs = f.putArray("blob-metadata");
          int n = rnd.nextInt(3);
          for (int i = 0; i < n; i++) {
            ObjectNode b = blobs.addObject();
            b.put("type", "apache-datasketches-theta-v1");
            b.put("snapshot-id", sid);
            b.put("sequence-number", Math.max(0, lastSeq));
            b.putArray("fields").add(1 + rnd.nextInt(3));
            if (chance(0.5)) {
              b.putObject("properties").put("ndv", String.valueOf(rnd.nextInt(1000)));
            }
          }
          u.set("statistics", f);
          if (chance(0.3)) {
            u.put("snapshot-id", sid); // deprecated, ignored
          }
          statistics.add(sid);
        } else {
          u.set("partition-statistics", f);
          partitionStatistics.add(sid);
        }
        seq.both(u, action);
        return;
      }
      case "remove-statistics":
      case "remove-partition-statistics": {
        Set<Long> set = action.equals("remove-statistics") ? statistics : partitionStatistics;
        long sid = !set.isEmpty() && chance(0.7) ? pick(new ArrayList<>(set)) : 31337L;
        u.put("snapshot-id", sid);
        set.remove(sid);
        seq.both(u, action);
        return;
      }
      case "remove-partition-specs": {
        ArrayNode ids = u.putArray("spec-ids");
        for (int id : specs.keySet()) {
          if (id != defaultSpecId ? chance(0.5) : chance(0.1)) {
            ids.add(id);
          }
        }
        if (chance(0.2)) {
          ids.add(99);
        }
        ids.forEach(n -> specs.remove(n.asInt()));
        seq.both(u, action);
        return;
      }
      default: { // remove-schemas
        ArrayNode ids = u.putArray("schema-ids");
        for (int id : schemas.keySet()) {
          if (id != currentSchemaId ? chance(0.4) : chance(0.1)) {
            ids.add(id);
          }
        }
        if (chance(0.2)) {
          ids.add(98);
        }
        ids.forEach(n -> schemas.remove(n.asInt()));
        seq.both(u, action);
      }
    }
  }

  private void assignUuid(Sequence seq, ObjectNode u) {
    double q = rnd.nextDouble();
    if (q < 0.6) {
      u.put("uuid", uuid);
      seq.both(u, "assign-uuid");
    } else if (q < 0.8) {
      // DEVIATION: the same uuid, spelt in upper case, is no change for skade
      u.put("uuid", uuid.toUpperCase(Locale.ROOT));
      seq.skadeUpdates.add(u);
      ObjectNode j = u.deepCopy();
      j.put("uuid", uuid);
      seq.javaUpdates.add(j);
      seq.keys.add("assign-uuid");
      seq.keys.add("deviation: assign-uuid in upper case");
    } else {
      // DEVIATION: skade does not replace a table's uuid
      u.put("uuid", UUID.randomUUID().toString());
      seq.both(u, "assign-uuid");
      seq.keys.add("deviation: assign-uuid another uuid");
      seq.expectFirstRefusal("22023");
    }
  }

  private int schemaRef(Sequence seq, String action) {
    if (chance(0.4)) {
      seq.keys.add(action + " -1");
      return -1;
    }
    if (chance(0.08)) {
      return 66;
    }
    return schemas.isEmpty() ? currentSchemaId : pick(new ArrayList<>(schemas.keySet()));
  }

  // ---------------------------------------------------------------- schemas

  private static final Type[] PRIMITIVES = {
    Types.IntegerType.get(), Types.LongType.get(), Types.StringType.get(),
    Types.DateType.get(), Types.TimestampType.withoutZone(), Types.TimestampType.withZone(),
    Types.DecimalType.of(10, 2), Types.BooleanType.get(), Types.DoubleType.get(),
    Types.FloatType.get(), Types.UUIDType.get(), Types.BinaryType.get()
  };

  private ObjectNode schema() {
    // repeat one added earlier in this sequence, or an existing one
    if (!addedSchemas.isEmpty() && chance(0.2)) {
      return pick(addedSchemas).deepCopy();
    }
    Schema current = currentSchema();
    if (chance(0.12) && !schemas.isEmpty()) {
      Schema s = pick(new ArrayList<>(schemas.values()));
      return toJson(s);
    }
    List<Types.NestedField> fields = new ArrayList<>(current.columns());
    int next = lastColumnId + 1;
    double q = rnd.nextDouble();
    Set<Integer> identifiers = new HashSet<>(current.identifierFieldIds());
    if (q < 0.5 || fields.size() < 3) {
      Type type;
      double t = rnd.nextDouble();
      int id = next++;
      if (t < 0.65) {
        type = PRIMITIVES[rnd.nextInt(PRIMITIVES.length)];
      } else if (t < 0.75) {
        type = Types.StructType.of(Types.NestedField.optional(next++, "x", Types.IntegerType.get()),
            Types.NestedField.optional(next++, "y", Types.StringType.get()));
      } else if (t < 0.82) {
        type = Types.ListType.ofOptional(next++, Types.LongType.get());
      } else if (t < 0.88) {
        type = Types.MapType.ofOptional(next, next + 1, Types.StringType.get(),
            Types.IntegerType.get());
        next += 2;
      } else if (t < 0.96) {
        // v3 only
        type = chance(0.5) ? Types.TimestampNanoType.withZone() : Types.VariantType.get();
      } else {
        id += 5; // ids may jump
        type = Types.IntegerType.get();
      }
      fields.add(Types.NestedField.optional(id, "c" + id, type));
    } else if (q < 0.75) {
      // drop a column (maybe one a spec or order uses)
      int i = 1 + rnd.nextInt(fields.size() - 1);
      identifiers.remove(fields.get(i).fieldId());
      fields.remove(i);
    } else if (q < 0.88) {
      // rename and document
      int i = rnd.nextInt(fields.size());
      Types.NestedField f = fields.get(i);
      fields.set(i, Types.NestedField.from(f).withName(f.name() + "_r").withDoc("renamed").build());
      identifiers.removeIf(id -> id == f.fieldId() && !f.isRequired());
    } else {
      // identifier fields: id (required long) is the one that can be
      if (identifiers.isEmpty() && fields.get(0).isRequired()) {
        identifiers.add(fields.get(0).fieldId());
      } else {
        identifiers.clear();
      }
    }
    Schema s = new Schema(fields, identifiers);
    ObjectNode json = toJson(s);
    json.put("schema-id", rnd.nextInt(5)); // ignored
    addedSchemas.add(json);
    // the model: approximate (reuse decided by Java's rules is not modelled)
    int newId = schemas.keySet().stream().mapToInt(Integer::intValue).max().orElse(-1) + 1;
    schemas.put(newId, s);
    lastColumnId = Math.max(lastColumnId, s.highestFieldId());
    return json;
  }

  private static ObjectNode toJson(Schema s) {
    try {
      return (ObjectNode) JSON.readTree(SchemaParser.toJson(s));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  // ---------------------------------------------------------------- specs and orders

  private Schema currentSchema() {
    return schemas.containsKey(currentSchemaId) ? schemas.get(currentSchemaId)
        : schemas.isEmpty() ? baseSchema : schemas.values().iterator().next();
  }

  private List<String> transformsFor(Type type) {
    switch (type.typeId()) {
      case INTEGER:
      case LONG:
        return List.of("identity", "bucket[8]", "truncate[10]", "void");
      case STRING:
        return List.of("identity", "bucket[4]", "truncate[3]");
      case DATE:
        return List.of("identity", "year", "month", "day");
      case TIMESTAMP:
      case TIMESTAMP_NANO:
        return List.of("year", "month", "day", "hour", "identity");
      case DECIMAL:
        return List.of("identity", "bucket[2]", "truncate[4]");
      default:
        return List.of("identity");
    }
  }

  private void addSpec(Sequence seq, ObjectNode u) {
    if (!addedSpecs.isEmpty() && chance(0.2)) {
      u.set("spec", pick(addedSpecs).deepCopy());
      seq.both(u, "add-spec");
      return;
    }
    Schema schema = currentSchema();
    List<Types.NestedField> cols = new ArrayList<>();
    for (Types.NestedField f : schema.columns()) {
      if (f.type().isPrimitiveType()) {
        cols.add(f);
      }
    }
    ObjectNode spec = JSON.createObjectNode();
    spec.put("spec-id", rnd.nextInt(4)); // ignored
    ArrayNode fields = spec.putArray("fields");
    int n = rnd.nextInt(3);
    boolean omitIds = formatVersion > 1 && chance(0.1);
    int nextId = lastPartitionId;
    int highest = lastPartitionId;
    List<String> triples = new ArrayList<>();
    for (int i = 0; i < n && !cols.isEmpty(); i++) {
      Types.NestedField col = pick(cols);
      String transform = pick(transformsFor(col.type()));
      if (chance(0.04)) {
        transform = "day"; // on any type: mostly wrong
      }
      String name = transform.equals("identity") ? col.name()
          : col.name() + "_" + transform.replaceAll("[\\[\\]]", "");
      if (chance(0.03)) {
        name = pick(schema.columns()).name(); // may clash with another column
      }
      ObjectNode f = fields.addObject();
      f.put("name", name);
      f.put("transform", transform);
      f.put("source-id", col.fieldId());
      int fid = -1;
      for (List<PartitionField> fs : specs.values()) {
        for (PartitionField pf : fs) {
          if (pf.sourceId() == col.fieldId() && pf.transform().toString().equals(transform)) {
            fid = pf.fieldId();
          }
        }
      }
      if (formatVersion == 1) {
        fid = chance(0.9) ? 1000 + i : 1005 + i;
      } else if (fid < 0 || omitIds || chance(0.3)) {
        fid = ++nextId;
      }
      if (!omitIds) {
        f.put("field-id", fid);
      } else {
        nextId = Math.max(nextId, fid);
      }
      highest = Math.max(highest, fid);
      triples.add(col.fieldId() + "/" + transform + "/" + name);
    }
    u.set("spec", spec);
    if (omitIds && n > 0) {
      // DEVIATION: skade numbers fields without an id from last-partition-id + 1
      seq.skadeUpdates.add(u);
      ObjectNode j = u.deepCopy();
      int k = lastPartitionId;
      for (JsonNode f : j.get("spec").get("fields")) {
        ((ObjectNode) f).put("field-id", ++k);
      }
      seq.javaUpdates.add(j);
      seq.keys.add("add-spec");
      seq.keys.add("deviation: add-spec without field ids");
      for (JsonNode f : u.get("spec").get("fields")) {
        ((ObjectNode) f).remove("field-id");
      }
    } else {
      seq.both(u, "add-spec");
    }
    addedSpecs.add(spec);
    // the model: a spec equal by (source, transform, name) is reused
    boolean reused = false;
    for (List<PartitionField> fs : specs.values()) {
      List<String> t = new ArrayList<>();
      for (PartitionField pf : fs) {
        t.add(pf.sourceId() + "/" + pf.transform() + "/" + pf.name());
      }
      reused |= t.equals(triples);
    }
    if (!reused) {
      int newId = specs.keySet().stream().mapToInt(Integer::intValue).max().orElse(-1) + 1;
      specs.put(newId, new ArrayList<>());
      lastPartitionId = Math.max(lastPartitionId, highest);
    }
  }

  private ObjectNode sortOrder() {
    if (!addedOrders.isEmpty() && chance(0.2)) {
      return pick(addedOrders).deepCopy();
    }
    Schema schema = currentSchema();
    List<Types.NestedField> cols = new ArrayList<>();
    for (Types.NestedField f : schema.columns()) {
      if (f.type().isPrimitiveType()) {
        cols.add(f);
      }
    }
    ObjectNode order = JSON.createObjectNode();
    order.put("order-id", rnd.nextInt(4)); // ignored
    ArrayNode fields = order.putArray("fields");
    int n = chance(0.2) ? 0 : 1 + rnd.nextInt(2);
    for (int i = 0; i < n && !cols.isEmpty(); i++) {
      Types.NestedField col = pick(cols);
      ObjectNode f = fields.addObject();
      List<String> ts = new ArrayList<>(transformsFor(col.type()));
      ts.remove("void");
      f.put("transform", chance(0.03) ? "month" : pick(ts));
      f.put("source-id", col.fieldId());
      f.put("direction", chance(0.5) ? "asc" : "desc");
      f.put("null-order", chance(0.5) ? "nulls-first" : "nulls-last");
    }
    addedOrders.add(order);
    int newId = n == 0 ? 0
        : orders.keySet().stream().mapToInt(Integer::intValue).max().orElse(0) + 1;
    orders.put(newId, SortOrder.unsorted());
    return order;
  }

  // ---------------------------------------------------------------- snapshots and refs

  private void addSnapshot(Sequence seq, ObjectNode u) {
    ObjectNode s = u.putObject("snapshot");
    long id = !snapshotSeq.isEmpty() && chance(0.03) ? pick(new ArrayList<>(snapshotSeq.keySet()))
        : 1 + (rnd.nextLong() & 0x3fffffffffffffffL);
    Long parent;
    double q = rnd.nextDouble();
    if (q < 0.8 && currentSnapshot >= 0) {
      parent = currentSnapshot;
    } else if (q < 0.9 && !snapshotSeq.isEmpty()) {
      parent = pick(new ArrayList<>(snapshotSeq.keySet()));
    } else {
      parent = null;
    }
    long seqNo = lastSeq + 1;
    if (formatVersion >= 2) {
      double w = rnd.nextDouble();
      if (w < 0.06) {
        seqNo = lastSeq; // stale
      } else if (w < 0.09) {
        seqNo = Math.max(0, lastSeq - 2); // behind, with or without a parent
        if (chance(0.5)) {
          parent = null;
        }
      }
      if (chance(0.02)) {
        seqNo = -1; // none sent
      }
    }
    long now = System.currentTimeMillis();
    long ts = now - rnd.nextInt(5000);
    double w = rnd.nextDouble();
    if (w < 0.04) {
      ts = now - 3 * 3600_000L; // older than the log's last entry
    } else if (w < 0.07) {
      ts = now + 3 * 3600_000L; // ahead of the clock
    }
    if (formatVersion >= 2 && seqNo >= 0 || formatVersion == 1 && chance(0.03)) {
      s.put("sequence-number", formatVersion == 1 ? 1 : seqNo);
    }
    s.put("snapshot-id", id);
    if (parent != null) {
      s.put("parent-snapshot-id", parent);
    }
    s.put("timestamp-ms", ts);
    ObjectNode summary = s.putObject("summary");
    summary.put("operation", pick(List.of("append", "overwrite", "delete", "replace")));
    summary.put("added-data-files", String.valueOf(rnd.nextInt(5)));
    s.put("manifest-list", tableLocation + "/metadata/snap-" + id + "-1-"
        + UUID.randomUUID() + ".avro");
    s.put("schema-id", currentSchemaId);
    if (formatVersion >= 3) {
      long added = rnd.nextInt(100);
      double r = rnd.nextDouble();
      if (r < 0.05) {
        // none: refused in v3
      } else {
        s.put("first-row-id", r < 0.1 && nextRowId > 0 ? nextRowId - 1 : nextRowId);
        s.put("added-rows", added);
      }
      nextRowId += added;
    } else if (chance(0.1)) {
      s.put("first-row-id", 0);
      s.put("added-rows", rnd.nextInt(10));
    }
    seq.both(u, "add-snapshot");
    snapshotSeq.put(id, seqNo);
    added.add(id);
    if (formatVersion >= 2 && seqNo >= 0) {
      lastSeq = seqNo;
    }
  }

  private void setSnapshotRef(Sequence seq, ObjectNode u) {
    String name = pick(List.of("main", "main", "main", "b1", "b2", "t1"));
    u.put("ref-name", name);
    long id;
    double q = rnd.nextDouble();
    if (q < 0.55 && !added.isEmpty()) {
      id = added.get(added.size() - 1);
    } else if (q < 0.95 && !snapshotSeq.isEmpty()) {
      id = pick(new ArrayList<>(snapshotSeq.keySet()));
    } else if (q < 0.97 && currentSnapshot >= 0) {
      id = currentSnapshot;
    } else {
      id = 1234567L;
    }
    u.put("snapshot-id", id);
    String type = name.equals("t1") ? "tag" : "branch";
    if (chance(0.06)) {
      type = type.equals("tag") ? "branch" : "tag";
    }
    u.put("type", chance(0.05) ? type.toUpperCase(Locale.ROOT) : type);
    if (chance(0.2)) {
      u.put("min-snapshots-to-keep", chance(0.1) ? 0 : 1 + rnd.nextInt(3));
    }
    if (chance(0.2)) {
      u.put("max-snapshot-age-ms", 3_600_000L * (1 + rnd.nextInt(24)));
    }
    if (chance(0.2)) {
      u.put("max-ref-age-ms", chance(0.1) ? -5 : 86_400_000L * (1 + rnd.nextInt(7)));
    }
    seq.both(u, "set-snapshot-ref");
    if (snapshotSeq.containsKey(id)) {
      refs.put(name, id);
      if (name.equals("main")) {
        currentSnapshot = id;
      }
    }
  }

  private long statisticsTarget() {
    if (!snapshotSeq.isEmpty() && chance(0.8)) {
      return pick(new ArrayList<>(snapshotSeq.keySet()));
    }
    return 1 + rnd.nextInt(1000);
  }

  // ---------------------------------------------------------------- properties

  private void setProperties(Sequence seq, ObjectNode u) {
    ObjectNode props = JSON.createObjectNode();
    int n = rnd.nextInt(3);
    for (int i = 0; i < n; i++) {
      double q = rnd.nextDouble();
      if (q < 0.6) {
        props.put("k" + rnd.nextInt(4), "v" + rnd.nextInt(3));
      } else if (q < 0.8) {
        props.put("write.metadata.previous-versions-max", String.valueOf(1 + rnd.nextInt(4)));
      } else if (q < 0.9) {
        props.put("write.metadata.compression-codec", chance(0.5) ? "gzip" : "none");
      } else {
        props.put("commit.retry.num-retries", String.valueOf(rnd.nextInt(5)));
      }
    }
    u.set(chance(0.1) ? "updated" : "updates", props);
    if (chance(0.08)) {
      // DEVIATION: reserved keys; format-version is an upgrade for skade
      ObjectNode reserved = props.deepCopy();
      reserved.put("k9", "x");
      int v = formatVersion + rnd.nextInt(2);
      if (chance(0.5) && v <= 3) {
        reserved.put("format-version", String.valueOf(v));
      }
      reserved.put(pick(List.of("uuid", "snapshot-count", "current-snapshot-id",
          "default-partition-spec", "current-schema")), "x");
      ObjectNode s = JSON.createObjectNode();
      s.put("action", "set-properties");
      s.set("updates", reserved);
      seq.skadeUpdates.add(s);
      if (reserved.has("format-version") && v > formatVersion) {
        ObjectNode up = JSON.createObjectNode();
        up.put("action", "upgrade-format-version");
        up.put("format-version", v);
        seq.javaUpdates.add(up);
        if (formatVersion == 1) {
          lastSeq = 0;
        }
        formatVersion = v;
      }
      ObjectNode j = JSON.createObjectNode();
      j.put("action", "set-properties");
      ObjectNode kept = props.deepCopy();
      kept.put("k9", "x");
      j.set("updates", kept);
      seq.javaUpdates.add(j);
      seq.keys.add("set-properties");
      seq.keys.add("deviation: set-properties reserved keys");
      propertyKeys.add("k9");
    } else {
      seq.both(u, "set-properties");
    }
    props.fieldNames().forEachRemaining(propertyKeys::add);
  }

  // ---------------------------------------------------------------- malformed

  private void malformed(Sequence seq) {
    String[] bodies = {
      "{\"action\":\"frobnicate\"}",
      "{\"action\":\"set-current-schema\",\"schema-id\":\"x\"}",
      "{\"action\":\"set-current-schema\"}",
      "{\"action\":\"add-snapshot\"}",
      "{\"action\":\"add-snapshot\",\"snapshot\":{\"timestamp-ms\":1,\"manifest-list\":\"x\"}}",
      "{\"action\":\"set-snapshot-ref\",\"ref-name\":\"main\",\"snapshot-id\":1}",
      "{\"action\":\"set-snapshot-ref\",\"snapshot-id\":1,\"type\":\"branch\"}",
      "{\"action\":\"remove-snapshots\"}",
      "{\"action\":\"set-properties\",\"updates\":{\"a\":1}}",
      "{\"action\":\"set-properties\"}",
      "{\"action\":\"remove-properties\"}",
      "{\"action\":\"set-location\"}",
      "{\"action\":\"add-spec\",\"spec\":{\"fields\":[{\"name\":\"x\",\"transform\":\"identity\"}]}}",
      "{\"action\":\"add-spec\",\"spec\":{\"fields\":[{\"name\":\"x\",\"transform\":\"identity\",\"source-id\":999,\"field-id\":1500}]}}",
      "{\"action\":\"add-sort-order\",\"sort-order\":{\"order-id\":1,\"fields\":[{\"transform\":\"identity\",\"source-id\":1,\"direction\":\"up\",\"null-order\":\"nulls-first\"}]}}",
      "{\"action\":\"add-schema\",\"schema\":{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"id\",\"required\":true}]}}",
      "{\"action\":\"upgrade-format-version\"}",
      "{\"action\":\"set-statistics\",\"statistics\":{\"snapshot-id\":1}}",
      "{\"action\":\"remove-statistics\"}",
      "{\"action\":\"remove-partition-statistics\"}",
      "{\"action\":\"remove-snapshot-ref\"}",
      "{\"action\":\"set-default-spec\"}",
      "{\"action\":\"set-default-sort-order\",\"sort-order-id\":1.5}",
      "{\"action\":\"remove-schemas\",\"schema-ids\":\"x\"}",
      "{\"action\":\"remove-partition-specs\"}",
      "{\"action\":\"assign-uuid\"}",
      "{\"action\":\"add-encryption-key\",\"encryption-key\":{\"key-id\":\"k\",\"encrypted-key-metadata\":\"AAAA\"}}",
      "{\"action\":\"remove-encryption-key\",\"key-id\":\"k\"}",
      "{\"type\":\"assert-create\"}",
    };
    int i = rnd.nextInt(bodies.length);
    ObjectNode u;
    try {
      u = (ObjectNode) JSON.readTree(bodies[i]);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String action = u.path("action").asText("none");
    if (action.endsWith("encryption-key")) {
      seq.both(u, "deviation: " + action);
      seq.expectFirstRefusal("0A000");
      return;
    }
    seq.both(u, "malformed " + action);
  }
}
