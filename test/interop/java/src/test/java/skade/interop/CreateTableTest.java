package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.apache.iceberg.PartitionSpecParser;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.SortOrderParser;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.Schema;
import org.junit.jupiter.api.Test;

/**
 * A table skade.create_table() writes the first metadata of is what Java's own
 * TableMetadata.newTableMetadata makes of the same request (schema, spec and order as Java's
 * parsers write them, with ids Java would replace), and Java reads, appends to and scans it.
 */
class CreateTableTest extends CatalogTestBase {

  @Test
  void createdBySkadeAsJavaWouldCreateIt() throws Exception {
    // the request: Java's JSON, with deliberately non-fresh ids
    Schema request =
        new Schema(
            Types.NestedField.required(11, "id", Types.LongType.get()),
            Types.NestedField.required(12, "category", Types.StringType.get()),
            Types.NestedField.optional(
                13,
                "attrs",
                Types.MapType.ofOptional(
                    21,
                    22,
                    Types.StringType.get(),
                    Types.StructType.of(
                        Types.NestedField.optional(31, "v", Types.IntegerType.get())))),
            Types.NestedField.optional(14, "amount", Types.DoubleType.get()),
            Types.NestedField.optional(15, "ts", Types.TimestampType.withZone()));
    org.apache.iceberg.PartitionSpec spec =
        org.apache.iceberg.PartitionSpec.builderFor(request).identity("category").day("ts").build();
    SortOrder order = SortOrder.builderFor(request).asc("id").desc("amount").build();
    TableIdentifier id = TableIdentifier.of(ns, "created");
    String location = Skade.warehouse() + "/" + ns + "/created";

    String meta =
        Skade.queryOne(
            conn,
            "SELECT skade.create_table(?, ?, ?::jsonb, ?::jsonb, ?::jsonb, ?::jsonb, ?, 2, ?)",
            ns.toString(),
            "created",
            SchemaParser.toJson(request),
            PartitionSpecParser.toJson(spec),
            SortOrderParser.toJson(order),
            "{\"owner\": \"java\"}",
            location,
            Skade.CATALOG);
    assertTrue(meta.startsWith(location + "/metadata/00000-"), meta);

    // Java's parser reads the file; it equals Java's own new table metadata, ids and all
    Table table = catalog.loadTable(id);
    log.expectTable(id, table, "create");
    assertEquals(meta, CommitLog.location(table));
    TableMetadata skade = TableMetadataParser.read(table.io(), meta);
    TableMetadata java =
        TableMetadata.newTableMetadata(request, spec, order, location, Map.of("owner", "java"));
    assertTrue(java.schema().sameSchema(skade.schema()), skade.schema() + " vs " + java.schema());
    assertEquals(java.lastColumnId(), skade.lastColumnId());
    assertEquals(java.spec(), skade.spec());
    assertEquals(java.lastAssignedPartitionId(), skade.lastAssignedPartitionId());
    assertEquals(java.sortOrder(), skade.sortOrder());
    assertEquals(java.formatVersion(), skade.formatVersion());
    assertEquals(java.properties(), skade.properties());
    assertEquals(java.location(), skade.location());
    assertEquals(java.lastSequenceNumber(), skade.lastSequenceNumber());
    assertEquals(null, skade.currentSnapshot());

    // Java appends and scans
    List<Record> rows = events(1, 4);
    List<Record> typed = new java.util.ArrayList<>();
    for (Record r : rows) {
      Record t = org.apache.iceberg.data.GenericRecord.create(table.schema());
      t.setField("id", r.getField("id"));
      t.setField("category", r.getField("category"));
      t.setField("amount", r.getField("amount"));
      t.setField("ts", r.getField("ts"));
      typed.add(t);
    }
    Rows.append(table, typed);
    log.expectTable(id, table, "commit");
    assertEquals(Rows.render(typed), Rows.render(Rows.read(table)));
  }
}
