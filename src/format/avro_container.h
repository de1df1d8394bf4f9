/*-------------------------------------------------------------------------
 *
 * avro_container.h
 *	  Avro object container files parsed and decoded within bounds (see
 *	  avro_container.c).
 *
 * IDENTIFICATION
 *	  src/format/avro_container.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_AVRO_CONTAINER_H
#define SKADE_AVRO_CONTAINER_H

#include "lib/stringinfo.h"
#include "nodes/pg_list.h"

#include "format/avro_schema.h"

/* one block: count records encoded in decoded->data[off .. off + len) */
typedef struct SkadeAvroBlock
{
	int64		count;
	int64		off;
	int64		len;
} SkadeAvroBlock;

typedef struct SkadeAvroContainer
{
	const char *location;
	List	   *meta;			/* header metadata (AvroMeta, avro_container.c) */
	const char *codec;			/* null, deflate or snappy */
	const char *schema;			/* the writer schema (JSON), validated */
	size_t		schema_len;
	const SkadeAvroSchema *compiled;	/* the writer schema, compiled */
	int64		min_record_size;	/* bytes one record takes at least (>= 1) */
	StringInfo	decoded;		/* every block's bytes, decoded, back to back */
	int			nblocks;
	SkadeAvroBlock *blocks;
	int64		records;		/* in all blocks */
} SkadeAvroContainer;

extern SkadeAvroContainer *SkadeAvroContainerDecode(const char *location, const char *bytes,
													size_t len);
extern const char *SkadeAvroContainerMeta(const SkadeAvroContainer *c, const char *key);

#endif							/* SKADE_AVRO_CONTAINER_H */
