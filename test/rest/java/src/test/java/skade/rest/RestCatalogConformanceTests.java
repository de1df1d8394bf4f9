/*
 * RestCatalogConformanceTests: Iceberg's own catalog conformance tests (CatalogTests from the
 * iceberg-core 1.11.0 tests jar) run through a stock RESTCatalog against the server named by
 * -Dskade.rest.uri (see RestTarget).  Each test gets an emptied catalog (Cleaner) and its own
 * RESTCatalog client; the server's capabilities come from -Dskade.rest.<flag>.
 */
package skade.rest;

import java.util.Map;
import org.apache.iceberg.catalog.CatalogTests;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

@Tag("conformance")
@ExtendWith(SkipList.class)
public class RestCatalogConformanceTests extends CatalogTests<RESTCatalog> {
  private RESTCatalog catalog;

  @BeforeEach
  void openAndClean() {
    catalog = RestTarget.newCatalog("skade_rest_conformance", Map.of());
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
  protected RESTCatalog initCatalog(String catalogName, Map<String, String> additionalProperties) {
    return RestTarget.newCatalog(catalogName, additionalProperties);
  }

  @Override
  protected String baseTableLocation(TableIdentifier identifier) {
    String root = RestTarget.locationRoot("table-location-root");
    if (root == null) {
      return super.baseTableLocation(identifier);
    }
    return root + "/" + identifier.namespace() + "/" + identifier.name();
  }

  @Override
  protected boolean supportsNamespaceProperties() {
    return RestTarget.Flags.supportsNamespaceProperties();
  }

  @Override
  protected boolean supportsNestedNamespaces() {
    return RestTarget.Flags.supportsNestedNamespaces();
  }

  @Override
  protected boolean requiresNamespaceCreate() {
    return RestTarget.Flags.requiresNamespaceCreate("tables");
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
  protected boolean supportsNamesWithSlashes() {
    return RestTarget.Flags.supportsNamesWithSlashes();
  }

  @Override
  protected boolean supportsNamesWithDot() {
    return RestTarget.Flags.supportsNamesWithDot();
  }

  @Override
  protected boolean supportsEmptyNamespace() {
    return RestTarget.Flags.supportsEmptyNamespace();
  }
}
