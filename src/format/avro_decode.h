/*-------------------------------------------------------------------------
 *
 * avro_decode.h
 *	  Records of an Avro container decoded directly from its blocks' bytes,
 *	  driven by the compiled writer schema (see avro_decode.c); no libavro-c.
 *
 * IDENTIFICATION
 *	  src/format/avro_decode.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_AVRO_DECODE_H
#define SKADE_AVRO_DECODE_H

#include "lib/stringinfo.h"

#include "format/avro_container.h"
#include "format/avro_schema.h"

/*
 * One decoded value.  A union's value is its branch's (type is never
 * SKADE_AVRO_UNION); a record's fields, an array's elements and a map's
 * key/value pairs are consecutive values from v.first on.
 */
typedef struct SkadeAvroDatum
{
	SkadeAvroType type;
	int32		node;			/* its type in the schema (a union's branch) */
	int32		len;			/* string, bytes, fixed: bytes; record: fields;
								 * array: elements; map: entries */
	union
	{
		int64		l;			/* int, long, enum, boolean (its byte) */
		uint64		bits;		/* float (low 32 bits), double */
		const char *p;			/* string, bytes, fixed: in the block's bytes */
		int32		first;		/* record, array, map: the first child value */
	}			v;
} SkadeAvroDatum;

typedef struct SkadeAvroDecoder SkadeAvroDecoder;

/* a decoder (its fields are avro_decode.c's to change) */
struct SkadeAvroDecoder
{
	const SkadeAvroContainer *c;
	const SkadeAvroSchema *s;
	MemoryContext cxt;			/* where the values live */
	int			block;			/* current block, -1 before the first */
	int64		left;			/* records left in it */
	const char *p;				/* the block's bytes not read yet */
	const char *end;
	SkadeAvroDatum *d;			/* the current record's values; d[0] is the record */
	int32		nd;
	int32		maxd;
	size_t		value_limit;	/* a larger string claims an impossible size */
};

/* the i-th field of a record, element of an array (map: 2i key, 2i + 1 value) */
static inline const SkadeAvroDatum *
SkadeAvroDatumChild(const SkadeAvroDecoder *dec, const SkadeAvroDatum *d, int i)
{
	Assert(i >= 0 && i < (d->type == SKADE_AVRO_MAP ? 2 * d->len : d->len));
	return &dec->d[d->v.first + i];
}

extern SkadeAvroDecoder *SkadeAvroDecoderBegin(const SkadeAvroContainer *c);
extern const SkadeAvroDatum *SkadeAvroDecodeNext(SkadeAvroDecoder *dec);
extern const SkadeAvroSchema *SkadeAvroDecoderSchema(const SkadeAvroDecoder *dec);
extern const char *SkadeAvroDatumText(const SkadeAvroDecoder *dec, const SkadeAvroDatum *d,
									  const char *what);
extern Datum SkadeAvroDatumJsonb(const SkadeAvroDecoder *dec, const SkadeAvroDatum *rec);
extern bool SkadeAvroDatumBinary(const SkadeAvroDecoder *dec, const SkadeAvroDatum *d,
								 StringInfo out);

#endif							/* SKADE_AVRO_DECODE_H */
