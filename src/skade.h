/*-------------------------------------------------------------------------
 *
 * skade.h
 *	  Cross-cutting constants shared by several skade source files.
 *
 * Limits here mirror the column widths of the JDBC catalog tables
 * (iceberg_tables, iceberg_namespace_properties), which are the source of
 * truth: a value skade accepts must always fit the clients' columns.
 *
 * IDENTIFICATION
 *	  src/skade.h
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

#endif							/* SKADE_H */
