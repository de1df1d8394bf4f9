/*
 * Cleaner: empties the catalog under test through the REST API itself, so that each
 * conformance test starts from an empty catalog on any server (CatalogTests and
 * ViewCatalogTests assume a catalog of their own and leave things behind when they fail).
 *
 * Invariant: after clean() returns without an exception the catalog has no namespace, table
 * or view left -- deepest namespaces first, each one's views and tables before the namespace.
 * Tables are dropped with purge (the server deletes their files), or without when that fails.
 * With -Dskade.rest.clean=none it does nothing (a catalog the tests must not empty).
 * DANGER: never point the suite at a catalog whose contents matter.
 */
package skade.rest;

import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.rest.RESTCatalog;

final class Cleaner {
  private Cleaner() {}

  static boolean enabled() {
    String mode = System.getProperty(RestTarget.PREFIX + "clean", "all");
    switch (mode) {
      case "all":
        return true;
      case "none":
        return false;
      default:
        throw new IllegalArgumentException("skade.rest.clean must be all or none, not " + mode);
    }
  }

  static void clean(RESTCatalog catalog) {
    if (!enabled()) {
      return;
    }
    List<Namespace> all = new ArrayList<>();
    collect(catalog, Namespace.empty(), all, 0);
    // children before parents: a namespace is dropped once it is empty
    all.sort((a, b) -> Integer.compare(b.length(), a.length()));
    if (RestTarget.Flags.supportsEmptyNamespace()) {
      all.add(Namespace.empty());
    }
    for (Namespace ns : all) {
      for (TableIdentifier view : listViews(catalog, ns)) {
        try {
          catalog.dropView(view);
        } catch (NoSuchViewException e) {
          // gone meanwhile
        }
      }
      for (TableIdentifier table : listTables(catalog, ns)) {
        dropTable(catalog, table);
      }
      if (!ns.isEmpty()) {
        try {
          catalog.dropNamespace(ns);
        } catch (NoSuchNamespaceException e) {
          // gone meanwhile
        }
      }
    }
    List<Namespace> left = catalog.listNamespaces(Namespace.empty());
    if (!left.isEmpty()) {
      throw new IllegalStateException("the catalog still lists namespaces " + left);
    }
  }

  private static void collect(RESTCatalog catalog, Namespace parent, List<Namespace> out, int depth) {
    if (depth > 16) {
      throw new IllegalStateException("namespaces nested deeper than 16 levels under " + parent);
    }
    List<Namespace> children;
    try {
      children =
          parent.isEmpty() || RestTarget.Flags.supportsNestedNamespaces()
              ? catalog.listNamespaces(parent)
              : List.of();
    } catch (NoSuchNamespaceException e) {
      return;
    }
    for (Namespace child : children) {
      if (out.contains(child) || child.equals(parent)) {
        continue;
      }
      out.add(child);
      collect(catalog, child, out, depth + 1);
    }
  }

  // with purge, so that files a test wrote do not meet the next run's test at the same path;
  // without, when the server refuses to purge (e.g. metadata naming files that do not exist)
  private static void dropTable(RESTCatalog catalog, TableIdentifier table) {
    try {
      catalog.dropTable(table, true);
    } catch (NoSuchTableException e) {
      // gone meanwhile
    } catch (RuntimeException e) {
      try {
        catalog.dropTable(table, false);
      } catch (NoSuchTableException gone) {
        // gone meanwhile
      }
    }
  }

  private static List<TableIdentifier> listTables(RESTCatalog catalog, Namespace ns) {
    try {
      return catalog.listTables(ns);
    } catch (NoSuchNamespaceException e) {
      return List.of();
    }
  }

  private static List<TableIdentifier> listViews(RESTCatalog catalog, Namespace ns) {
    try {
      return catalog.listViews(ns);
    } catch (NoSuchNamespaceException e) {
      return List.of();
    } catch (UnsupportedOperationException e) {
      return List.of(); // the server's /v1/config lists no view endpoint
    }
  }
}
