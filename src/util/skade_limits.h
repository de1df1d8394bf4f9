/*-------------------------------------------------------------------------
 *
 * skade_limits.h
 *	  Cross-cutting constants shared by several skade source files.
 *
 * Limits here mirror the column widths of the JDBC catalog tables
 * (iceberg_tables, iceberg_namespace_properties), which are the source of
 * truth: a value skade accepts must always fit the clients' columns.
 *
 * IDENTIFICATION
 *	  src/util/skade_limits.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_H
#define SKADE_H

/* varchar(255) columns: catalog_name, table_namespace, table_name, property_key */
#define SKADE_MAX_NAME_LEN			255
/* varchar(1000) columns: metadata_location, property_value */
#define SKADE_MAX_LOCATION_LEN		1000

/* the namespace property that keeps an empty namespace alive (JDBC contract) */
#define SKADE_NAMESPACE_EXISTS_KEY	"exists"

/*
 * SQLSTATE 22SK1 (class 22, data exception; "SK" is an implementation-
 * defined subclass): a file someone wrote (metadata JSON, a manifest list, a
 * manifest) is malformed -- corrupt or truncated compression, bad Avro, a
 * missing or mistyped field, a string that is not UTF-8.  Class XX (internal
 * error), which monitoring pages on, is kept for faults of skade itself.
 */
#define ERRCODE_SKADE_INVALID_FILE	MAKE_SQLSTATE('2', '2', 'S', 'K', '1')

#endif							/* SKADE_H */
