package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;

/** A commit made in SQL through skade.commit_table() is what the Java client then sees. */
class SqlApiCommitTest extends CatalogTestBase {

  @Test
  void rollbackThroughSqlIsSeenAfterRefresh() throws Exception {
    TableIdentifier id = TableIdentifier.of(ns, "rolled_back");
    Table table = catalog.createTable(id, EVENTS, EVENTS_SPEC);
    log.expectTable(id, table, "create");
    List<Record> first = events(1, 5);
    Rows.append(table, first);
    log.expectTable(id, table, "commit");
    long s1 = table.currentSnapshot().snapshotId();
    String m1 = CommitLog.location(table);
    Rows.append(table, events(6, 9));
    log.expectTable(id, table, "commit");
    long s2 = table.currentSnapshot().snapshotId();
    String m2 = CommitLog.location(table);
    assertNotEquals(s1, s2);

    // a stale expected location is refused, and changes nothing
    assertThrows(
        SQLException.class,
        () ->
            Skade.queryOne(
                conn,
                "SELECT skade.commit_table(?, ?, ?, ?, ?)",
                CommitLog.ns(id),
                id.name(),
                m1,
                m1,
                Skade.CATALOG));
    log.expectNothing(id);

    // point the table back at its previous metadata file: a rollback
    long seq =
        Long.parseLong(
            Skade.queryOne(
                conn,
                "SELECT skade.commit_table(?, ?, ?, ?, ?)",
                CommitLog.ns(id),
                id.name(),
                m2,
                m1,
                Skade.CATALOG));
    List<CommitLog.Entry> rows = log.expect(id, "TABLE", m1, "commit");
    assertEquals(seq, rows.get(0).seq(), "commit_table returns the log seq of its commit");
    assertEquals("api", rows.get(0).source());
    assertEquals(m2, rows.get(0).previous());
    assertEquals(m1, log.skadeLocation(id));

    // the client has not looked yet; after refresh it sees the rollback
    assertEquals(s2, table.currentSnapshot().snapshotId());
    table.refresh();
    assertEquals(m1, CommitLog.location(table));
    assertEquals(s1, table.currentSnapshot().snapshotId());
    assertEquals(Rows.render(first), Rows.render(Rows.read(table)));
    Table fresh = catalog.loadTable(id);
    assertEquals(s1, fresh.currentSnapshot().snapshotId());

    // and the client commits on top of it
    List<Record> more = events(20, 22);
    Rows.append(table, more);
    log.expectTable(id, table, "commit");
    assertEquals(s1, table.currentSnapshot().parentId());
    List<Record> expected = new ArrayList<>(first);
    expected.addAll(more);
    assertEquals(Rows.render(expected), Rows.render(Rows.read(catalog.loadTable(id))));
  }
}
