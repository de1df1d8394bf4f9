package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Mixed-client phase 1 (before Python): Java writes mixed.from_java in catalog interop. */
@Tag("mixed-write")
class MixedWriteTest {

  private static List<Record> rows(int from, int to) {
    List<Record> out = new ArrayList<>();
    for (int i = from; i <= to; i++) {
      out.add(Rows.rec(Mixed.SCHEMA, (long) i, "j" + i));
    }
    return out;
  }

  @Test
  void javaWritesFromJava() throws Exception {
    try (JdbcCatalog catalog = Skade.catalog(Mixed.CATALOG);
        Connection conn = Skade.connect()) {
      CommitLog log = new CommitLog(conn, Mixed.CATALOG);
      if (!catalog.namespaceExists(Mixed.NS)) {
        catalog.createNamespace(Mixed.NS);
      }
      if (catalog.tableExists(Mixed.FROM_JAVA)) { // left over from an earlier run
        catalog.dropTable(Mixed.FROM_JAVA, true);
      }
      log.mark(Mixed.FROM_JAVA);

      Table table = catalog.createTable(Mixed.FROM_JAVA, Mixed.SCHEMA);
      log.expectTable(Mixed.FROM_JAVA, table, "create");
      List<Record> all = rows(1, 5);
      Rows.append(table, all);
      log.expectTable(Mixed.FROM_JAVA, table, "commit");
      List<Record> second = rows(6, 10);
      Rows.append(table, second);
      all.addAll(second);
      log.expectTable(Mixed.FROM_JAVA, table, "commit");

      Table loaded = catalog.loadTable(Mixed.FROM_JAVA);
      assertEquals(Rows.render(all), Rows.render(Rows.read(loaded)));
      assertEquals(2, loaded.history().size());
    }
  }
}
