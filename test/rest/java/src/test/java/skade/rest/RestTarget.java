/*
 * RestTarget: the REST catalog under test, named by system properties, for every test class
 * of this suite.  Nothing here knows which server answers: the Iceberg REST fixture, skade's
 * REST port or any other implementation of the REST spec.
 *
 * Properties (all -D on the mvn / run.sh command line):
 *   skade.rest.uri        the catalog's base URI (required), e.g. http://127.0.0.1:8181/
 *   skade.rest.token      a Bearer token sent with every request (optional)
 *   skade.rest.warehouse  the "warehouse" property sent to GET /v1/config (optional)
 *   skade.rest.catalog.K=V  any further RESTCatalog property K (e.g. header.X-Foo, prefix)
 *   skade.rest.<flag>=true|false  what the server supports, see Flags below
 *   skade.rest.clean      all (default) | none: what Cleaner does before each test
 *   skade.rest.table-location-root  the root of the explicit table locations some CatalogTests
 *                         ask for (default: CatalogTests' own, file:/tmp)
 *   skade.rest.view-location-root   the root of the explicit view locations ViewCatalogTests
 *                         ask for (default: a JUnit @TempDir of mode 0700, which only a
 *                         server running as the same OS user can write to)
 *
 * Invariant: every catalog a test gets is a fresh RESTCatalog over the same properties, so a
 * test's additional properties (initCatalog) never leak into another test.
 */
package skade.rest;

import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.rest.RESTCatalog;

final class RestTarget {
  static final String PREFIX = "skade.rest.";
  static final String CATALOG_PREFIX = PREFIX + "catalog.";

  private RestTarget() {}

  static String uri() {
    String uri = System.getProperty(PREFIX + "uri");
    if (uri == null || uri.isEmpty()) {
      throw new IllegalStateException(
          "set -Dskade.rest.uri=http://HOST:PORT/ to the REST catalog under test");
    }
    return uri;
  }

  /** the client properties: RCK's catalog defaults, then the target's, then the test's */
  static Map<String, String> properties(Map<String, String> additional) {
    Map<String, String> props = new HashMap<>();
    // what Iceberg's REST compatibility kit (RCKUtils.initCatalogClient) sets: the
    // CatalogTests / ViewCatalogTests check these client-side defaults and overrides
    props.put(CatalogProperties.TABLE_DEFAULT_PREFIX + "default-key1", "catalog-default-key1");
    props.put(CatalogProperties.TABLE_DEFAULT_PREFIX + "default-key2", "catalog-default-key2");
    props.put(CatalogProperties.TABLE_DEFAULT_PREFIX + "override-key3", "catalog-default-key3");
    props.put(CatalogProperties.TABLE_OVERRIDE_PREFIX + "override-key3", "catalog-override-key3");
    props.put(CatalogProperties.TABLE_OVERRIDE_PREFIX + "override-key4", "catalog-override-key4");
    props.put(CatalogProperties.VIEW_DEFAULT_PREFIX + "key1", "catalog-default-key1");
    props.put(CatalogProperties.VIEW_DEFAULT_PREFIX + "key2", "catalog-default-key2");
    props.put(CatalogProperties.VIEW_DEFAULT_PREFIX + "key3", "catalog-default-key3");
    props.put(CatalogProperties.VIEW_OVERRIDE_PREFIX + "key3", "catalog-override-key3");
    props.put(CatalogProperties.VIEW_OVERRIDE_PREFIX + "key4", "catalog-override-key4");

    props.put(CatalogProperties.URI, uri());
    String token = System.getProperty(PREFIX + "token");
    if (token != null && !token.isEmpty()) {
      props.put("token", token); // OAuth2Properties.TOKEN: "Authorization: Bearer <token>"
    }
    String warehouse = System.getProperty(PREFIX + "warehouse");
    if (warehouse != null && !warehouse.isEmpty()) {
      props.put(CatalogProperties.WAREHOUSE_LOCATION, warehouse);
    }
    for (String name : System.getProperties().stringPropertyNames()) {
      if (name.startsWith(CATALOG_PREFIX)) {
        props.put(name.substring(CATALOG_PREFIX.length()), System.getProperty(name));
      }
    }
    props.putAll(additional);
    return props;
  }

  static RESTCatalog newCatalog(String name, Map<String, String> additional) {
    RESTCatalog catalog = new RESTCatalog();
    catalog.setConf(new Configuration());
    catalog.initialize(name, properties(additional));
    return catalog;
  }

  /** -Dskade.rest.NAME without its trailing slashes, or null when unset or empty */
  static String locationRoot(String name) {
    String v = System.getProperty(PREFIX + name);
    if (v == null || v.isEmpty()) {
      return null;
    }
    return v.replaceAll("/+$", "");
  }

  /** a capability flag of the server: -Dskade.rest.NAME=true|false, else the default */
  static boolean flag(String name, boolean dflt) {
    String v = System.getProperty(PREFIX + name);
    return v == null || v.isEmpty() ? dflt : Boolean.parseBoolean(v.trim());
  }

  /**
   * The capability flags of CatalogTests / ViewCatalogTests, with the defaults of a server
   * whose backend is a JdbcCatalog (the Iceberg REST fixture, skade): what Iceberg's own
   * TestRESTCatalog and RESTCompatibilityKit*Tests declare for theirs.
   */
  static final class Flags {
    private Flags() {}

    static boolean supportsServerSideRetry() {
      return flag("supports-server-side-retry", true);
    }

    /**
     * kind "tables" (CatalogTests) or "views" (ViewCatalogTests): skade.rest.KIND.requires-
     * namespace-create, else skade.rest.requires-namespace-create, else true.  (Iceberg's REST
     * compatibility kit runs its JdbcCatalog-backed fixture with false for tables -- JdbcCatalog
     * creates a table in a namespace that does not exist -- and true for views.)
     */
    static boolean requiresNamespaceCreate(String kind) {
      return flag(kind + ".requires-namespace-create", flag("requires-namespace-create", true));
    }

    static boolean supportsNestedNamespaces() {
      return flag("supports-nested-namespaces", true);
    }

    static boolean supportsNamespaceProperties() {
      return flag("supports-namespace-properties", true);
    }

    // Jetty 12 rejects %2F in a path ("suspicious"); a server that does not can say true
    static boolean supportsNamesWithSlashes() {
      return flag("supports-names-with-slashes", false);
    }

    // JdbcCatalog stores a namespace as its levels joined by '.'
    static boolean supportsNamesWithDot() {
      return flag("supports-names-with-dot", false);
    }

    static boolean supportsEmptyNamespace() {
      return flag("supports-empty-namespace", false);
    }

    static boolean overridesRequestedLocation() {
      return flag("overrides-requested-location", false);
    }
  }
}
