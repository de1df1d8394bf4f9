package skade.interop;

import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;

/**
 * The protocol shared with the Python suite (test/interop/python): catalog name "interop", the
 * same warehouse (SKADE_WAREHOUSE), namespace "mixed". Java writes mixed.from_java (ids 1..10,
 * names "j<id>", two appends); Python writes mixed.from_python (ids 1..5, names "p<id>").
 */
final class Mixed {
  static final String CATALOG = "interop";
  static final Namespace NS = Namespace.of("mixed");
  static final TableIdentifier FROM_JAVA = TableIdentifier.of(NS, "from_java");
  static final TableIdentifier FROM_PYTHON = TableIdentifier.of(NS, "from_python");
  static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "name", Types.StringType.get()));

  private Mixed() {}
}
