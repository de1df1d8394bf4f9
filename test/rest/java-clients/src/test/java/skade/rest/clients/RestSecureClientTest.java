/*
 * RestSecureClientTest: a stock Java RESTCatalog over https with an OAuth2 client credential:
 * the client fetches its token from the OpenID provider of test/rest (idp.py,
 * started by secure_phase.py) with credential + oauth2-server-uri, refreshes it itself as it
 * nears expiry (the provider issues short-lived tokens), and trusts skade's REST port through
 * javax.net.ssl.trustStore (the test CA's PKCS12 store).  A namespace and a table are made,
 * appended to before and after the token's refresh, and dropped; skade's commit log must name
 * the role the credential maps to for every change.
 *
 * Settings (system properties, secure_phase.py via run.sh): skade.rest.uri (https),
 * skade.rest.credential (client:secret), skade.rest.oauth2.uri, skade.rest.truststore,
 * skade.rest.warehouse, skade.rest.role (the mapped role), skade.rest.token.lifetime
 * (seconds), skade.pg.url and skade.pg.user.  Run alone (-Dtest=RestSecureClientTest): the
 * server speaks TLS only while secure_phase.py holds it so.
 */
package skade.rest.clients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.IcebergBuild;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class RestSecureClientTest {

  static {
    // before anything in this JVM opens a TLS connection: the default SSLContext reads it once
    System.setProperty("javax.net.ssl.trustStore", prop("skade.rest.truststore"));
    System.setProperty("javax.net.ssl.trustStorePassword", "changeit");
    System.setProperty("javax.net.ssl.trustStoreType", "PKCS12");
  }

  private static final Schema SCHEMA = new Schema(
      Types.NestedField.required(1, "id", Types.LongType.get()));

  private final String ns = "jsec" + IcebergBuild.version().replaceAll("[^0-9]", "");

  private static String prop(String name) {
    String v = System.getProperty(name);
    assertNotNull(v, "system property " + name);
    return v;
  }

  private static RESTCatalog catalog(String credential) {
    Map<String, String> props = new HashMap<>();
    props.put(CatalogProperties.URI, prop("skade.rest.uri"));
    props.put("credential", credential);
    props.put("oauth2-server-uri", prop("skade.rest.oauth2.uri"));
    props.put("scope", "catalog");
    props.put(CatalogProperties.WAREHOUSE_LOCATION, prop("skade.rest.warehouse"));
    RESTCatalog c = new RESTCatalog();
    c.setConf(new Configuration());
    c.initialize("skade-secure", props);
    return c;
  }

  private static void append(Table t, String name) {
    t.newFastAppend().appendFile(DataFiles.builder(PartitionSpec.unpartitioned())
        .withPath(t.location() + "/data/" + name + ".parquet").withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(100).withRecordCount(1).build()).commit();
  }

  @Test
  void credentialOverHttpsWithRefresh() throws Exception {
    String role = prop("skade.rest.role");
    long lifetime = Long.parseLong(prop("skade.rest.token.lifetime"));
    try (SkadeSql sql = new SkadeSql(prop("skade.pg.url"), prop("skade.pg.user"),
        prop("skade.rest.warehouse")); RESTCatalog cat = catalog(prop("skade.rest.credential"))) {
      long seq = sql.lastSeq();
      Namespace n = Namespace.of(ns);
      TableIdentifier id = TableIdentifier.of(n, "t");
      if (cat.namespaceExists(n)) {
        cat.dropTable(id, true);
        cat.dropNamespace(n);
        seq = sql.lastSeq();
      }
      cat.createNamespace(n);
      Table t = cat.createTable(id, SCHEMA);
      append(t, "before");
      // past the token's lifetime: the client must have refreshed it to go on
      Thread.sleep((lifetime + 2) * 1000);
      append(cat.loadTable(id), "after");
      assertEquals(2, cat.loadTable(id).currentSnapshot().sequenceNumber());
      List<String> ops = new ArrayList<>();
      for (SkadeSql.LogRow r : sql.logSince(seq)) {
        ops.add(r.op());
        assertEquals(role, r.committedBy(), "committed_by of " + r);
        assertEquals("api", r.source(), "source of " + r);
      }
      assertEquals(List.of("create", "commit", "commit"), ops);
      assertTrue(cat.dropTable(id, false));
      assertTrue(cat.dropNamespace(n));
    }
    // a wrong secret: the provider refuses it, no catalog
    assertThrows(RuntimeException.class, () -> catalog("skade-secure-client:wrong").close());
  }
}
