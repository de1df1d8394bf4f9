/*-------------------------------------------------------------------------
 *
 * avro_schema.h
 *	  Validate an Avro writer schema before libavro-c sees it.
 *
 * IDENTIFICATION
 *	  src/avro_schema.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_AVRO_SCHEMA_H
#define SKADE_AVRO_SCHEMA_H

extern int64 SkadeAvroCheckSchema(const char *json, size_t len, const char *location);

#endif							/* SKADE_AVRO_SCHEMA_H */
