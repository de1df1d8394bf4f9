// The format v3 fixture table of test/data/avro (see README.md): written by the stock Apache
// Iceberg 1.12.0 Java library (HadoopTables on the local file system, Parquet data written by
// iceberg-data's generic writers), with the same schema, partitioning and rows as the pyiceberg
// tables, plus a v3-only column ts_ns (timestamp_ns).
//
//   java -cp <iceberg-core, iceberg-data, iceberg-parquet, hadoop-common ...> V3Fixture.java DIR
//
// run by regenerate.sh (which takes the class path from test/interop/java/pom.xml).
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.encryption.EncryptedOutputFile;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Types;

public class V3Fixture {
  static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "category", Types.StringType.get()),
          Types.NestedField.optional(3, "ts", Types.TimestampType.withoutZone()),
          Types.NestedField.optional(4, "amount", Types.DoubleType.get()),
          Types.NestedField.optional(5, "ts_ns", Types.TimestampNanoType.withoutZone()));

  static int task = 0;

  static Record row(long id, String category, LocalDateTime ts, Double amount) {
    GenericRecord r = GenericRecord.create(SCHEMA);
    r.setField("id", id);
    r.setField("category", category);
    r.setField("ts", ts);
    r.setField("amount", amount);
    r.setField("ts_ns", ts.plusNanos(123));
    return r;
  }

  static LocalDateTime t(int day, int hour, int minute) {
    return LocalDateTime.of(2024, 3, day, hour, minute);
  }

  /** One append: one Parquet file per partition. */
  static void append(Table table, List<Record> rows) throws IOException {
    GenericFileWriterFactory writers =
        new GenericFileWriterFactory.Builder(table).dataFileFormat(FileFormat.PARQUET).build();
    OutputFileFactory files =
        OutputFileFactory.builderFor(table, 1, ++task).format(FileFormat.PARQUET).build();
    PartitionKey key = new PartitionKey(table.spec(), table.schema());
    InternalRecordWrapper wrapper = new InternalRecordWrapper(table.schema().asStruct());
    Map<StructLike, List<Record>> byPartition = new LinkedHashMap<>();
    for (Record r : rows) {
      key.partition(wrapper.wrap(r));
      byPartition.computeIfAbsent(key.copy(), k -> new ArrayList<>()).add(r);
    }
    AppendFiles append = table.newAppend();
    for (Map.Entry<StructLike, List<Record>> e : byPartition.entrySet()) {
      EncryptedOutputFile file = files.newOutputFile(table.spec(), e.getKey());
      DataWriter<Record> writer = writers.newDataWriter(file, table.spec(), e.getKey());
      try (writer) {
        for (Record r : e.getValue()) {
          writer.write(r);
        }
      }
      DataFile df = writer.toDataFile();
      append.appendFile(df);
    }
    append.commit();
  }

  public static void main(String[] args) throws Exception {
    String location = args[0];
    HadoopTables tables = new HadoopTables(new Configuration());
    PartitionSpec spec =
        PartitionSpec.builderFor(SCHEMA).identity("category").day("ts", "ts_day").build();
    Table table = tables.create(SCHEMA, spec, Map.of("format-version", "3"), location);
    append(
        table,
        List.of(
            row(1, "a", t(1, 8, 0), 10.0),
            row(2, "a", t(1, 9, 30), 20.5),
            row(3, "b", t(1, 10, 0), 30.0),
            row(4, "b", t(2, 11, 0), 40.25)));
    append(table, List.of(row(5, "a", t(2, 12, 0), 50.0), row(6, "a", t(2, 13, 0), 60.0)));
    append(
        table,
        List.of(
            row(7, "c", t(3, 14, 0), 70.0),
            row(8, "c", t(3, 15, 0), null),
            row(9, null, t(3, 16, 0), 90.0)));
    table = tables.load(location);
    int n = 0;
    try (CloseableIterable<Record> it = IcebergGenerics.read(table).build()) {
      for (Record r : it) {
        n++;
      }
    }
    if (n != 9) {
      throw new IllegalStateException("read back " + n + " rows, not 9");
    }
    System.out.println(
        "v3: format v"
            + ((org.apache.iceberg.HasTableOperations) table).operations().current().formatVersion()
            + ", 3 snapshots, "
            + n
            + " rows, at "
            + table.location());
  }
}
