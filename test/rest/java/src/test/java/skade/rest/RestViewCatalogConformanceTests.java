/*
 * RestViewCatalogConformanceTests: Iceberg's view catalog conformance tests (ViewCatalogTests
 * from the iceberg-core 1.11.0 tests jar) through a stock RESTCatalog against the server
 * named by -Dskade.rest.uri (see RestTarget); the same RESTCatalog is the table catalog.
 * Each test gets an emptied catalog (Cleaner) and its own client.
 */
package skade.rest;

import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.view.ViewCatalogTests;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

@Tag("conformance")
@ExtendWith(SkipList.class)
public class RestViewCatalogConformanceTests extends ViewCatalogTests<RESTCatalog> {
  private RESTCatalog catalog;
  // one directory per test under skade.rest.view-location-root (JUnit: an instance per test)
  private final String viewRoot = UUID.randomUUID().toString();

  @BeforeEach
  void openAndClean() {
    catalog = RestTarget.newCatalog("skade_rest_view_conformance", Map.of());
    Cleaner.clean(catalog);
  }

  @AfterEach
  void close() throws Exception {
    if (catalog != null) {
      catalog.close();
    }
  }

  @Override
  protected RESTCatalog catalog() {
    return catalog;
  }

  @Override
  protected Catalog tableCatalog() {
    return catalog;
  }

  @Override
  protected String viewLocation(String... paths) {
    String root = RestTarget.locationRoot("view-location-root");
    if (root == null) {
      return super.viewLocation(paths);
    }
    StringBuilder location = new StringBuilder(root).append('/').append(viewRoot);
    for (String path : paths) {
      location.append('/').append(path);
    }
    return location.toString();
  }

  @Override
  protected boolean requiresNamespaceCreate() {
    return RestTarget.Flags.requiresNamespaceCreate("views");
  }

  @Override
  protected boolean supportsServerSideRetry() {
    return RestTarget.Flags.supportsServerSideRetry();
  }

  @Override
  protected boolean overridesRequestedLocation() {
    return RestTarget.Flags.overridesRequestedLocation();
  }

  @Override
  protected boolean supportsEmptyNamespace() {
    return RestTarget.Flags.supportsEmptyNamespace();
  }
}
