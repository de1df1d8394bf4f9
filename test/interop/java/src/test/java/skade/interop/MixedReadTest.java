package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.Table;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Mixed-client phase 3 (after Python): Java reads mixed.from_python written by pyiceberg. */
@Tag("mixed-read")
class MixedReadTest {

  @Test
  void javaReadsFromPython() throws Exception {
    try (JdbcCatalog catalog = Skade.catalog(Mixed.CATALOG);
        Connection conn = Skade.connect()) {
      CommitLog log = new CommitLog(conn, Mixed.CATALOG);
      assertTrue(catalog.listTables(Mixed.NS).contains(Mixed.FROM_PYTHON));
      Table table = catalog.loadTable(Mixed.FROM_PYTHON);

      assertEquals(Types.LongType.get(), table.schema().findType("id"));
      assertEquals(Types.StringType.get(), table.schema().findType("name"));
      List<String> expected = new ArrayList<>();
      for (int i = 1; i <= 5; i++) {
        expected.add(i + "|p" + i);
      }
      assertEquals(Rows.sorted(expected), Rows.render(Rows.read(table)));

      // skade and the Java client agree on where the table is; the log ends there
      String loc = CommitLog.location(table);
      assertEquals(loc, log.skadeLocation(Mixed.FROM_PYTHON));
      List<CommitLog.Entry> entries = log.entries(Mixed.FROM_PYTHON);
      CommitLog.Entry last = entries.get(entries.size() - 1);
      assertEquals(loc, last.location());
      // the log of the Python-written table chains from its create
      int create = -1;
      for (int i = 0; i < entries.size(); i++) {
        if ("create".equals(entries.get(i).op())) {
          create = i;
        }
      }
      assertTrue(create >= 0, "no create in " + entries);
      assertNull(entries.get(create).previous());
      for (int i = create + 1; i < entries.size(); i++) {
        assertEquals("commit", entries.get(i).op(), entries.toString());
        assertEquals(entries.get(i - 1).location(), entries.get(i).previous(), entries.toString());
      }

      // Java commits on top of Python's metadata (a property, so the rows stay as Python wrote)
      log.mark(Mixed.FROM_PYTHON);
      String stamp = Skade.unique("java");
      table.updateProperties().set("read-by", stamp).commit();
      log.expectTable(Mixed.FROM_PYTHON, table, "commit");
      Table reloaded = catalog.loadTable(Mixed.FROM_PYTHON);
      assertEquals(stamp, reloaded.properties().get("read-by"));
      assertEquals(Rows.sorted(expected), Rows.render(Rows.read(reloaded)));
    }
  }

  /** Python appended (11, "p11") to Java's mixed.from_java; Java reads that back. */
  @Test
  void javaReadsPythonAppendToFromJava() throws Exception {
    try (JdbcCatalog catalog = Skade.catalog(Mixed.CATALOG);
        Connection conn = Skade.connect()) {
      CommitLog log = new CommitLog(conn, Mixed.CATALOG);
      Table table = catalog.loadTable(Mixed.FROM_JAVA);
      List<String> expected = new ArrayList<>();
      for (int i = 1; i <= 10; i++) {
        expected.add(i + "|j" + i);
      }
      expected.add("11|p11");
      assertEquals(Rows.sorted(expected), Rows.render(Rows.read(table)));
      assertEquals(3, table.history().size(), "two Java appends and one Python append");

      String loc = CommitLog.location(table);
      assertEquals(loc, log.skadeLocation(Mixed.FROM_JAVA));
      List<CommitLog.Entry> entries = log.entries(Mixed.FROM_JAVA);
      CommitLog.Entry last = entries.get(entries.size() - 1);
      assertEquals("commit", last.op());
      assertEquals(loc, last.location());
      assertEquals(entries.get(entries.size() - 2).location(), last.previous());
    }
  }
}
