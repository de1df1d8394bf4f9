package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.view.View;
import org.junit.jupiter.api.Test;

/**
 * JdbcCatalog.initialize on skade's tables: it finds them, creates and alters nothing, and
 * detects JDBC schema V1 (iceberg_type present), so views work without jdbc.schema-version.
 */
class InitializeTest {

  /** Everything initialize could have changed: relations, columns, indexes, triggers. */
  private static List<List<String>> shape(Connection c) throws Exception {
    List<List<String>> out = new ArrayList<>();
    out.addAll(
        Skade.query(
            c,
            "SELECT n.nspname, c.relname, c.relkind::text, c.xmin::text, c.relnatts::text"
                + " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE c.relname LIKE 'iceberg%' OR n.nspname = 'skade' ORDER BY 1, 2"));
    out.addAll(
        Skade.query(
            c,
            "SELECT table_schema, table_name, column_name, ordinal_position::text, data_type,"
                + " character_maximum_length::text, is_nullable, column_default"
                + " FROM information_schema.columns"
                + " WHERE table_name IN ('iceberg_tables', 'iceberg_namespace_properties')"
                + " ORDER BY 1, 2, 4"));
    out.addAll(
        Skade.query(
            c,
            "SELECT tgrelid::regclass::text, tgname FROM pg_trigger"
                + " WHERE tgrelid IN ('public.iceberg_tables'::regclass,"
                + " 'public.iceberg_namespace_properties'::regclass) ORDER BY 1, 2"));
    out.addAll(
        Skade.query(
            c,
            "SELECT indrelid::regclass::text, indexrelid::regclass::text FROM pg_index"
                + " WHERE indrelid IN ('public.iceberg_tables'::regclass,"
                + " 'public.iceberg_namespace_properties'::regclass) ORDER BY 1, 2"));
    return out;
  }

  @Test
  void initializeCreatesAndAltersNothing() throws Exception {
    try (Connection c = Skade.connect()) {
      List<List<String>> before = shape(c);
      // skade's install script made exactly one relation of each name, in public
      assertEquals(
          List.of("public"),
          Skade.query(c, "SELECT n.nspname FROM pg_class c JOIN pg_namespace n"
                  + " ON n.oid = c.relnamespace WHERE c.relname = 'iceberg_tables'")
              .get(0));
      assertTrue(
          before.stream().anyMatch(r -> r.contains("iceberg_type")),
          "skade's iceberg_tables has iceberg_type");

      // stock settings (init-catalog-tables defaults to true, schema-version to V0), and the
      // settings that would make the client create or ALTER if it found no V1 table
      List<Map<String, String>> settings =
          List.of(
              Map.of(),
              Map.of("jdbc.init-catalog-tables", "true"),
              Map.of("jdbc.schema-version", "V1"),
              Map.of("jdbc.init-catalog-tables", "false", "jdbc.schema-version", "V0"));
      for (Map<String, String> s : settings) {
        try (JdbcCatalog cat = Skade.catalog(Skade.CATALOG, s)) {
          cat.listNamespaces();
        }
        assertEquals(before, shape(c), "catalog tables changed by initialize with " + s);
      }
    }
  }

  @Test
  void schemaV1IsDetected() throws Exception {
    // with jdbc.schema-version unset (V0), views only work if the client detected V1 itself
    try (JdbcCatalog cat = Skade.catalog(Skade.CATALOG);
        Connection c = Skade.connect()) {
      CommitLog log = new CommitLog(c, Skade.CATALOG);
      Namespace ns = Namespace.of(Skade.unique("initializetest"));
      cat.createNamespace(ns);
      TableIdentifier id = TableIdentifier.of(ns, "v");
      View view =
          cat.buildView(id)
              .withSchema(new Schema(Types.NestedField.required(1, "x", Types.IntegerType.get())))
              .withDefaultNamespace(ns)
              .withQuery("spark", "SELECT 1 AS x")
              .create();
      log.expectView(id, view, "create");
      assertEquals(List.of(id), cat.listViews(ns));
      assertTrue(cat.dropView(id));
      log.expectDropped(id, "VIEW", CommitLog.location(view));
      assertFalse(cat.viewExists(id));
      assertTrue(cat.dropNamespace(ns));
    }
  }
}
