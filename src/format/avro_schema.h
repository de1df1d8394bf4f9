/*-------------------------------------------------------------------------
 *
 * avro_schema.h
 *	  Validate an Avro writer schema before libavro-c sees it, and compile
 *	  it into a flat table of types for skade's own record decoder
 *	  (avro_decode.c).
 *
 * IDENTIFICATION
 *	  src/format/avro_schema.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_AVRO_SCHEMA_H
#define SKADE_AVRO_SCHEMA_H

/* numbered as libavro-c's avro_type_t, whose numbers messages show */
typedef enum SkadeAvroType
{
	SKADE_AVRO_STRING,
	SKADE_AVRO_BYTES,
	SKADE_AVRO_INT,
	SKADE_AVRO_LONG,
	SKADE_AVRO_FLOAT,
	SKADE_AVRO_DOUBLE,
	SKADE_AVRO_BOOLEAN,
	SKADE_AVRO_NULL,
	SKADE_AVRO_RECORD,
	SKADE_AVRO_ENUM,
	SKADE_AVRO_FIXED,
	SKADE_AVRO_MAP,
	SKADE_AVRO_ARRAY,
	SKADE_AVRO_UNION
} SkadeAvroType;

/* one type of a compiled schema (named types referred to are shared) */
typedef struct SkadeAvroNode
{
	SkadeAvroType type;
	int32		nchild;			/* record: fields; union: branches; array, map: 1 */
	int32		child;			/* its first child in SkadeAvroSchema.child */
	int32		size;			/* fixed: its bytes */
	int32		height;			/* levels of types below it (at most the depth limit) */
} SkadeAvroNode;

/* a validated writer schema, compiled; immutable once made */
typedef struct SkadeAvroSchema
{
	int64		min_record_size;	/* bytes one record takes at least (>= 1) */
	int32		root;			/* the top-level record */
	int32		nnodes;
	SkadeAvroNode *nodes;
	int32		nchild;
	int32	   *child;			/* node of each child, by child index */
	const char **field;			/* record fields' names, by child index (else NULL) */
} SkadeAvroSchema;

extern const SkadeAvroSchema *SkadeAvroSchemaGet(const char *json, size_t len,
												 const char *location);
extern int	SkadeAvroFieldIndex(const SkadeAvroSchema *s, int32 record, const char *name);

#endif							/* SKADE_AVRO_SCHEMA_H */
