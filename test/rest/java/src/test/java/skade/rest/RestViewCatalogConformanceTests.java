/*
 * RestViewCatalogConformanceTests: Iceberg's view catalog conformance tests (ViewCatalogTests
 * from the iceberg-core 1.11.0 tests jar) through a stock RESTCatalog against the server
 * named by -Dskade.rest.uri (see RestTarget); the same RESTCatalog is the table catalog.
 * Each test gets an emptied catalog (Cleaner) and its own client.
 */
package skade.rest;

import java.util.Map;
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
