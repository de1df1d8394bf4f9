package skade.interop;

import java.util.Locale;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * bench/update_table.sh's Java side: a JdbcCatalog client's commit of one property change (refresh:
 * read and parse the current metadata; write the next metadata file; compare-and-swap in
 * iceberg_tables), SKADE_BENCH_CALLS times on each table of SKADE_BENCH_TABLES ("ns.name,...",
 * catalog skade). Prints "JAVA_COMMIT_MS <table> <average ms>". Not part of the test suites.
 */
@Tag("bench")
class CommitBenchTest {
  @Test
  void commitLatency() throws Exception {
    int calls = Integer.parseInt(Skade.env("SKADE_BENCH_CALLS", "10"));
    JdbcCatalog catalog = Skade.catalog(Skade.env("SKADE_BENCH_CATALOG", "skade"));
    try (catalog) {
      for (String name : Skade.env("SKADE_BENCH_TABLES", "").split(",")) {
        if (name.isEmpty()) {
          continue;
        }
        Table table = catalog.loadTable(TableIdentifier.parse(name));
        table.updateProperties().set("java-warmup", "x").commit();
        long total = 0;
        for (int i = 0; i < calls; i++) {
          long t0 = System.nanoTime();
          table.refresh();
          table.updateProperties().set("java" + i, "x").commit();
          total += System.nanoTime() - t0;
        }
        System.out.printf(Locale.ROOT, "JAVA_COMMIT_MS %s %.1f%n", name, total / 1e6 / calls);
      }
    }
  }
}
