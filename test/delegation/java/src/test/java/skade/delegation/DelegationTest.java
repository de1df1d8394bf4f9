/*
 * DelegationTest: a stock Java RESTCatalog with S3FileIO and no S3 key of its own reads and
 * writes a table's files through what skade delegates (vended credentials, remote signing),
 * and cannot reach beyond the table: MinIO enforces the credentials' session policy, skade
 * refuses to sign.  Environment: SKADE_DELEG_URI, SKADE_DELEG_CATALOG, SKADE_DELEG_WRITER_TOKEN,
 * SKADE_DELEG_READER_TOKEN (test/delegation/run.sh); the namespace "jns" is this test's.
 */
package skade.delegation;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DelegationTest {
  private static final Schema SCHEMA =
      new Schema(Types.NestedField.optional(1, "id", Types.LongType.get()));
  private static final Namespace NS = Namespace.of("jns");
  private final List<RESTCatalog> catalogs = new ArrayList<>();

  private static String env(String name) {
    String v = System.getenv(name);
    if (v == null) throw new IllegalStateException(name + " is not set");
    return v;
  }

  private RESTCatalog catalog(String token, String delegation) {
    Map<String, String> props = new HashMap<>();
    props.put(CatalogProperties.URI, env("SKADE_DELEG_URI"));
    props.put(CatalogProperties.WAREHOUSE_LOCATION, env("SKADE_DELEG_CATALOG"));
    props.put("token", token);
    props.put(CatalogProperties.FILE_IO_IMPL, "org.apache.iceberg.aws.s3.S3FileIO");
    props.put("header.X-Iceberg-Access-Delegation", delegation);
    RESTCatalog c = new RESTCatalog();
    c.initialize("deleg-" + delegation, props);
    catalogs.add(c);
    return c;
  }

  @BeforeAll
  void namespace() {
    RESTCatalog c = catalog(env("SKADE_DELEG_WRITER_TOKEN"), "vended-credentials");
    c.createNamespace(NS);
    c.createTable(TableIdentifier.of(NS, "other"), SCHEMA, PartitionSpec.unpartitioned());
  }

  @AfterAll
  void close() throws Exception {
    for (RESTCatalog c : catalogs) c.close();
  }

  private static byte[] read(FileIO io, String path) throws Exception {
    try (InputStream in = io.newInputFile(path).newStream()) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      in.transferTo(out);
      return out.toByteArray();
    }
  }

  private static void write(FileIO io, String path, byte[] bytes) throws Exception {
    try (OutputStream out = io.newOutputFile(path).create()) {
      out.write(bytes);
    }
  }

  /** Write a file with the table's FileIO, commit it, read it back as a reader; stay inside. */
  private void roundTrip(String delegation, String name) throws Exception {
    RESTCatalog writer = catalog(env("SKADE_DELEG_WRITER_TOKEN"), delegation);
    Table t = writer.createTable(TableIdentifier.of(NS, name), SCHEMA, PartitionSpec.unpartitioned());
    assertTrue(t.location().startsWith("s3://lake/"), t.location());
    byte[] bytes = ("rows of " + name).getBytes(StandardCharsets.UTF_8);
    String path = t.location() + "/data/f1.bin";
    write(t.io(), path, bytes);
    DataFile f = DataFiles.builder(PartitionSpec.unpartitioned()).withPath(path)
        .withFileSizeInBytes(bytes.length).withRecordCount(1).withFormat(FileFormat.PARQUET).build();
    t.newFastAppend().appendFile(f).commit();  // the manifest and list written through S3FileIO

    RESTCatalog reader = catalog(env("SKADE_DELEG_READER_TOKEN"), delegation);
    Table r = reader.loadTable(TableIdentifier.of(NS, name));
    assertEquals(t.currentSnapshot().snapshotId(), r.currentSnapshot().snapshotId());
    assertArrayEquals(bytes, read(r.io(), path));
    assertEquals(1, r.currentSnapshot().addedDataFiles(r.io()).spliterator().estimateSize() > 0 ? 1 : 0);

    // a reader may not write the table, nobody reaches another table through this one
    assertThrows(Exception.class, () -> write(r.io(), r.location() + "/data/evil.bin", bytes));
    String other = writer.loadTable(TableIdentifier.of(NS, "other")).location();
    assertThrows(Exception.class, () -> write(t.io(), other + "/data/evil.bin", bytes));
    assertThrows(Exception.class, () -> read(t.io(), "s3://other/secret/x"));
  }

  @Test
  void vendedCredentials() throws Exception {
    roundTrip("vended-credentials", "vended");
  }

  @Test
  void remoteSigning() throws Exception {
    roundTrip("remote-signing", "signed");
  }

  /**
   * SKADE_LONG=1 (run.sh then vends for 15 minutes, MinIO's shortest): one Table, loaded once,
   * keeps reading past its first credentials' expiry -- S3FileIO's VendedCredentialsProvider
   * fetches fresh ones from the table's credentials route before then.
   */
  @Test
  void refreshKeepsALongReadGoing() throws Exception {
    Assumptions.assumeTrue("1".equals(System.getenv("SKADE_LONG")), "SKADE_LONG=1 only");
    RESTCatalog writer = catalog(env("SKADE_DELEG_WRITER_TOKEN"), "vended-credentials");
    Table t = writer.createTable(TableIdentifier.of(NS, "long"), SCHEMA, PartitionSpec.unpartitioned());
    byte[] bytes = "a long read".getBytes(StandardCharsets.UTF_8);
    String path = t.location() + "/data/f.bin";
    write(t.io(), path, bytes);
    Table r = catalog(env("SKADE_DELEG_READER_TOKEN"), "vended-credentials")
        .loadTable(TableIdentifier.of(NS, "long"));
    long until = System.currentTimeMillis() + 16 * 60 * 1000L;
    int reads = 0;
    while (System.currentTimeMillis() < until) {
      assertArrayEquals(bytes, read(r.io(), path));
      reads++;
      Thread.sleep(30_000);
    }
    assertTrue(reads >= 30, "reads: " + reads);
  }
}
