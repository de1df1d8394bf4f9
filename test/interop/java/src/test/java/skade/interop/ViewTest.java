package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.view.BaseView;
import org.apache.iceberg.view.View;
import org.junit.jupiter.api.Test;

/** Views (JDBC schema V1, which skade's iceberg_tables has): create, replace, load, drop. */
class ViewTest extends CatalogTestBase {
  private static final Schema V1_SCHEMA =
      new Schema(Types.NestedField.required(1, "id", Types.LongType.get()));
  private static final Schema V2_SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "category", Types.StringType.get()));

  @Test
  void viewLifecycle() throws Exception {
    TableIdentifier base = TableIdentifier.of(ns, "base_events");
    Table t = catalog.createTable(base, EVENTS, EVENTS_SPEC);
    log.expectTable(base, t, "create");

    TableIdentifier id = TableIdentifier.of(ns, "recent_ids");
    View view =
        catalog
            .buildView(id)
            .withSchema(V1_SCHEMA)
            .withDefaultNamespace(ns)
            .withQuery("spark", "SELECT id FROM base_events")
            .withProperty("comment", "first version")
            .create();
    log.expectView(id, view, "create");

    // load: a fresh handle sees the same view
    View loaded = catalog.loadView(id);
    assertEquals(CommitLog.location(view), CommitLog.location(loaded));
    assertEquals("SELECT id FROM base_events", loaded.sqlFor("spark").sql());
    assertEquals("first version", loaded.properties().get("comment"));
    assertEquals(V1_SCHEMA.asStruct(), loaded.schema().asStruct());
    assertTrue(catalog.viewExists(id));
    assertEquals(List.of(id), catalog.listViews(ns));
    // a view is not a table, and its name cannot be taken by one
    assertFalse(catalog.tableExists(id));
    assertFalse(catalog.listTables(ns).contains(id));
    assertThrows(AlreadyExistsException.class, () -> catalog.createTable(id, EVENTS));
    assertThrows(
        AlreadyExistsException.class,
        () ->
            catalog
                .buildView(base)
                .withSchema(V1_SCHEMA)
                .withDefaultNamespace(ns)
                .withQuery("spark", "SELECT 1")
                .create());
    log.expectNothing(id);
    log.expectNothing(base);

    // replace: a second version, committed by compare-and-swap
    View replaced =
        catalog
            .buildView(id)
            .withSchema(V2_SCHEMA)
            .withDefaultNamespace(ns)
            .withQuery("spark", "SELECT id, category FROM base_events")
            .withQuery("trino", "SELECT id, category FROM base_events")
            .replace();
    log.expectView(id, replaced, "commit");
    View reloaded = catalog.loadView(id);
    assertEquals(CommitLog.location(replaced), CommitLog.location(reloaded));
    assertEquals(2, reloaded.currentVersion().versionId());
    int versions = 0;
    for (var v : reloaded.versions()) {
      versions++;
    }
    assertEquals(2, versions);
    assertEquals("SELECT id, category FROM base_events", reloaded.sqlFor("trino").sql());
    assertEquals(V2_SCHEMA.asStruct(), reloaded.schema().asStruct());

    // the old handle refreshes onto the new version
    ((BaseView) loaded).operations().refresh();
    assertEquals(CommitLog.location(replaced), CommitLog.location(loaded));

    // property update on the view
    reloaded.updateProperties().set("owner", "java").commit();
    log.expectView(id, reloaded, "commit");
    assertEquals("java", catalog.loadView(id).properties().get("owner"));

    // rename
    TableIdentifier renamed = TableIdentifier.of(ns, "recent_ids_v2");
    catalog.renameView(id, renamed);
    assertFalse(catalog.viewExists(id));
    View moved = catalog.loadView(renamed);
    List<CommitLog.Entry> r = log.expectView(renamed, moved, "rename");
    assertEquals("recent_ids", r.get(0).prevName());

    // drop
    String last = CommitLog.location(moved);
    assertTrue(catalog.dropView(renamed));
    assertFalse(catalog.viewExists(renamed));
    assertThrows(NoSuchViewException.class, () -> catalog.loadView(renamed));
    log.expectDropped(renamed, "VIEW", last);
    assertFalse(catalog.dropView(renamed));
    log.expectNothing(renamed);

    // the table next to it was never touched
    assertEquals(CommitLog.location(t), log.skadeLocation(base));
    log.expectNothing(base);
  }
}
