package skade.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** Two writers on the same base: the loser gets CommitFailedException, then retries fine. */
class ConcurrencyTest extends CatalogTestBase {
  private static final String NO_RETRY = "commit.retry.num-retries";

  /**
   * Two handles loaded at the same metadata; each starts a schema change on that base. The
   * first commit wins; the second is refused (the pointer moved) and succeeds after refresh.
   */
  @Test
  void twoHandlesSameBase() throws Exception {
    TableIdentifier id = TableIdentifier.of(ns, "contended");
    Table created =
        catalog
            .buildTable(id, EVENTS)
            .withPartitionSpec(EVENTS_SPEC)
            .withProperty(NO_RETRY, "0")
            .create();
    log.expectTable(id, created, "create");

    Table winner = catalog.loadTable(id);
    Table loser = catalog.loadTable(id);
    String base = CommitLog.location(loser);
    assertEquals(base, CommitLog.location(winner));

    UpdateSchema winning = winner.updateSchema().addColumn("w", Types.StringType.get());
    UpdateSchema losing = loser.updateSchema().addColumn("l", Types.StringType.get());
    winning.commit();
    log.expectTable(id, winner, "commit");

    CommitFailedException e = assertThrows(CommitFailedException.class, losing::commit);
    assertTrue(e.getMessage().contains(base), e.getMessage());
    // the failed attempt changed nothing: no log row, pointer still the winner's
    log.expectNothing(id);
    assertEquals(CommitLog.location(winner), log.skadeLocation(id));

    // the loser refreshes and retries: it lands on top of the winner
    loser.refresh();
    assertEquals(CommitLog.location(winner), CommitLog.location(loser));
    loser.updateSchema().addColumn("l", Types.StringType.get()).commit();
    log.expectTable(id, loser, "commit");
    Table reloaded = catalog.loadTable(id);
    assertTrue(reloaded.schema().findField("w") != null && reloaded.schema().findField("l") != null);

    // appends through stale handles rebase by themselves (one log row per commit)
    List<Record> a = events(1, 4);
    Rows.append(winner, Rows.as(winner.schema(), a));
    log.expectTable(id, winner, "commit");
    List<Record> b = events(5, 8);
    Rows.append(created, b);
    log.expectTable(id, created, "commit");
    List<String> expected = new ArrayList<>();
    for (Record r : a) {
      expected.add(Rows.render(List.of(r)).get(0) + "|null|null");
    }
    for (Record r : b) {
      expected.add(Rows.render(List.of(r)).get(0) + "|null|null");
    }
    assertEquals(Rows.sorted(expected), Rows.render(Rows.read(catalog.loadTable(id))));
  }

  /**
   * Holds skade.commit_table(expected -> target) open in a transaction while the client appends
   * files, waits until the client's compare-and-swap UPDATE is blocked on that row lock, then
   * commits the SQL side. Returns what the client's commit threw (null if it succeeded).
   */
  private Throwable race(TableIdentifier id, Table table, String expected, String target,
      List<DataFile> files) throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (Connection winner = Skade.connect()) {
      winner.setAutoCommit(false);
      Skade.queryOne(
          winner,
          "SELECT skade.commit_table(?, ?, ?, ?, ?)",
          CommitLog.ns(id),
          id.name(),
          expected,
          target,
          Skade.CATALOG);

      Future<?> clientCommit =
          pool.submit(
              () -> {
                var append = table.newAppend();
                files.forEach(append::appendFile);
                append.commit();
                return null;
              });

      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      boolean waiting = false;
      while (!waiting && System.nanoTime() < deadline && !clientCommit.isDone()) {
        waiting =
            !Skade.query(
                    conn,
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                        + " AND wait_event_type = 'Lock' AND query LIKE 'UPDATE iceberg_tables%'")
                .isEmpty();
        if (!waiting) {
          Thread.sleep(20);
        }
      }
      if (!waiting) {
        winner.rollback();
        fail("the client's commit did not wait on the row lock; done=" + clientCommit.isDone());
      }
      assertFalse(clientCommit.isDone());
      winner.commit();
      try {
        clientCommit.get(60, TimeUnit.SECONDS);
        return null;
      } catch (ExecutionException ex) {
        return ex.getCause();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * The race decided inside PostgreSQL: the client's pre-check still sees the old pointer (the
   * winner has not committed yet); its compare-and-swap UPDATE waits on the winner's row lock
   * and then matches no row, because the pointer moved. The winner is a rollback to the
   * previous metadata file through skade.commit_table().
   */
  @Test
  void compareAndSwapDecidedByDatabase() throws Exception {
    TableIdentifier id = TableIdentifier.of(ns, "cas_race");
    Table table =
        catalog
            .buildTable(id, EVENTS)
            .withPartitionSpec(EVENTS_SPEC)
            .withProperty(NO_RETRY, "0")
            .create();
    log.expectTable(id, table, "create");
    List<Record> first = events(1, 3);
    Rows.append(table, first);
    log.expectTable(id, table, "commit");
    String m1 = CommitLog.location(table);
    long s1 = table.currentSnapshot().snapshotId();
    Rows.append(table, events(4, 6));
    log.expectTable(id, table, "commit");
    String m2 = CommitLog.location(table);

    List<Record> late = events(50, 52);
    List<DataFile> files = Rows.write(table, late);
    Throwable outcome = race(id, table, m2, m1, files);
    assertTrue(outcome instanceof CommitFailedException, String.valueOf(outcome));
    // decided by the UPDATE's row count, not by the client's pre-check
    assertFalse(outcome.getMessage().contains("has changed"), outcome.getMessage());

    List<CommitLog.Entry> rows = log.expect(id, "TABLE", m1, "commit");
    assertEquals("api", rows.get(0).source());
    assertEquals(m2, rows.get(0).previous());
    assertEquals(m1, log.skadeLocation(id));

    // the loser refreshes onto the rolled-back table and retries
    table.refresh();
    assertEquals(m1, CommitLog.location(table));
    assertEquals(s1, table.currentSnapshot().snapshotId());
    var retry = table.newAppend();
    files.forEach(retry::appendFile);
    retry.commit();
    log.expectTable(id, table, "commit");

    List<Record> expected = new ArrayList<>(first);
    expected.addAll(late);
    assertEquals(Rows.render(expected), Rows.render(Rows.read(catalog.loadTable(id))));
  }

  /** The same race with the client's default retries: it retries by itself and lands. */
  @Test
  void clientRetriesAfterLosingTheRace() throws Exception {
    TableIdentifier id = TableIdentifier.of(ns, "cas_race_retry");
    Table table = catalog.buildTable(id, EVENTS).withPartitionSpec(EVENTS_SPEC).create();
    log.expectTable(id, table, "create");
    List<Record> first = events(1, 3);
    Rows.append(table, first);
    log.expectTable(id, table, "commit");
    String m1 = CommitLog.location(table);
    Rows.append(table, events(4, 6));
    log.expectTable(id, table, "commit");
    String m2 = CommitLog.location(table);

    List<Record> late = events(50, 52);
    Throwable outcome = race(id, table, m2, m1, Rows.write(table, late));
    assertEquals(null, outcome, "with retries the client's commit succeeds");

    // one row for the SQL rollback, one for the client's (retried) commit: none for the
    // attempt that lost
    List<CommitLog.Entry> rows = log.expectTable(id, table, "commit", "commit");
    assertEquals("api", rows.get(0).source());
    assertEquals(m1, rows.get(0).location());
    assertEquals("sql", rows.get(1).source());
    assertEquals(m1, rows.get(1).previous());

    List<Record> expected = new ArrayList<>(first);
    expected.addAll(late);
    assertEquals(Rows.render(expected), Rows.render(Rows.read(catalog.loadTable(id))));
  }
}
