package skade.interop;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.encryption.EncryptedOutputFile;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Types;

/** Writes real Parquet data files with iceberg-data's generic writers and reads them back. */
final class Rows {
  private static final AtomicLong TASK = new AtomicLong();

  private Rows() {}

  static Record rec(Schema schema, Object... values) {
    GenericRecord r = GenericRecord.create(schema);
    for (int i = 0; i < values.length; i++) {
      r.set(i, values[i]);
    }
    return r;
  }

  /** The rows re-built in another schema, column by column name (missing columns null). */
  static List<Record> as(Schema schema, List<Record> rows) {
    List<Record> out = new ArrayList<>();
    for (Record r : rows) {
      GenericRecord c = GenericRecord.create(schema);
      for (Types.NestedField f : schema.columns()) {
        if (r.struct().field(f.name()) != null) {
          c.setField(f.name(), r.getField(f.name()));
        }
      }
      out.add(c);
    }
    return out;
  }

  /** Writes rows as Parquet data files, one per partition, into the table's data location. */
  static List<DataFile> write(Table table, List<Record> rows) {
    GenericFileWriterFactory writers =
        new GenericFileWriterFactory.Builder(table).dataFileFormat(FileFormat.PARQUET).build();
    OutputFileFactory files =
        OutputFileFactory.builderFor(table, 1, TASK.incrementAndGet())
            .format(FileFormat.PARQUET)
            .build();
    Map<StructLike, List<Record>> byPartition = new LinkedHashMap<>();
    if (table.spec().isUnpartitioned()) {
      byPartition.put(null, rows);
    } else {
      PartitionKey key = new PartitionKey(table.spec(), table.schema());
      InternalRecordWrapper wrapper = new InternalRecordWrapper(table.schema().asStruct());
      for (Record r : rows) {
        key.partition(wrapper.wrap(r));
        byPartition.computeIfAbsent(key.copy(), k -> new ArrayList<>()).add(r);
      }
    }
    List<DataFile> out = new ArrayList<>();
    for (Map.Entry<StructLike, List<Record>> e : byPartition.entrySet()) {
      EncryptedOutputFile file =
          e.getKey() == null ? files.newOutputFile() : files.newOutputFile(table.spec(), e.getKey());
      DataWriter<Record> writer = writers.newDataWriter(file, table.spec(), e.getKey());
      try (writer) {
        for (Record r : e.getValue()) {
          writer.write(r);
        }
      } catch (IOException ex) {
        throw new UncheckedIOException(ex);
      }
      out.add(writer.toDataFile());
    }
    return out;
  }

  /** One client commit: an append of the given rows (as one or more Parquet files). */
  static List<DataFile> append(Table table, List<Record> rows) {
    List<DataFile> files = write(table, rows);
    AppendFiles append = table.newAppend();
    files.forEach(append::appendFile);
    append.commit();
    return files;
  }

  static List<Record> read(Table table) {
    return read(table, null);
  }

  static List<Record> read(Table table, Expression filter) {
    IcebergGenerics.ScanBuilder scan = IcebergGenerics.read(table);
    if (filter != null) {
      scan = scan.where(filter);
    }
    List<Record> out = new ArrayList<>();
    try (CloseableIterable<Record> it = scan.build()) {
      for (Record r : it) {
        out.add(r.copy());
      }
    } catch (IOException ex) {
      throw new UncheckedIOException(ex);
    }
    return out;
  }

  /** A row as "v1|v2|...", in schema column order, null as "null"; sorted for comparison. */
  static List<String> render(List<Record> rows) {
    return rows.stream()
        .map(
            r -> {
              List<String> vals = new ArrayList<>();
              for (Types.NestedField f : r.struct().fields()) {
                vals.add(String.valueOf(r.getField(f.name())));
              }
              return String.join("|", vals);
            })
        .sorted()
        .collect(Collectors.toList());
  }

  static List<String> sorted(List<String> rows) {
    return rows.stream().sorted().collect(Collectors.toList());
  }
}
