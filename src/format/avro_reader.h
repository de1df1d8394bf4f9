/*-------------------------------------------------------------------------
 *
 * avro_reader.h
 *	  Read Avro object container files (manifest lists, manifests) record by
 *	  record, and build and encode records to write (wrapper for libavro-c;
 *	  nothing else includes avro.h).
 *
 * IDENTIFICATION
 *	  src/format/avro_reader.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_AVRO_READER_H
#define SKADE_AVRO_READER_H

#include "lib/stringinfo.h"

typedef struct SkadeAvroFile SkadeAvroFile;

/* what a file must be (its writer schema is checked for the fields) */
typedef enum SkadeAvroKind
{
	SKADE_AVRO_MANIFEST_LIST,
	SKADE_AVRO_MANIFEST
} SkadeAvroKind;

/* a record (or any value) inside the current record of a file; opaque */
typedef struct SkadeAvroValue SkadeAvroValue;

extern void SkadeAvroInit(void);
extern void SkadeAvroCheckLength(const char *path, uint64 actual, int64 expected);
extern SkadeAvroFile *SkadeAvroOpenBytes(const char *location, StringInfo bytes, char *real_path,
										 SkadeAvroKind kind, int64 expected_length);
extern const SkadeAvroValue *SkadeAvroNext(SkadeAvroFile *f);
extern void SkadeAvroClose(SkadeAvroFile *f);
extern const char *SkadeAvroMeta(const SkadeAvroFile *f, const char *key);

/* field accessors: false when the field is absent or null */
extern bool SkadeAvroField(const SkadeAvroValue *rec, const char *name, SkadeAvroValue **out);
extern bool SkadeAvroLong(const SkadeAvroValue *rec, const char *name, int64 *out);
extern bool SkadeAvroBool(const SkadeAvroValue *rec, const char *name, bool *out);
extern bool SkadeAvroText(const SkadeAvroValue *rec, const char *name, char **out);
extern bool SkadeAvroBytes(const SkadeAvroValue *rec, const char *name,
						   const char **out, size_t *len);
extern int	SkadeAvroArrayLength(const SkadeAvroValue *array);
extern SkadeAvroValue *SkadeAvroArrayElement(const SkadeAvroValue *array, int i);
extern int	SkadeAvroRecordSize(const SkadeAvroValue *rec);
extern bool SkadeAvroBinaryAt(const SkadeAvroValue *rec, int i, StringInfo out);

/* writing records (the file handle of a writer has no bytes) */
extern SkadeAvroFile *SkadeAvroWriterCreate(const char *schema_json, const char *what);
extern SkadeAvroValue *SkadeAvroWriterRecord(SkadeAvroFile *w);
extern void SkadeAvroWriterEncode(SkadeAvroFile *w, StringInfo out);
extern void SkadeAvroWriterFree(SkadeAvroFile *w);
extern void SkadeAvroSetNull(SkadeAvroValue *rec, const char *name);
extern void SkadeAvroSetLong(SkadeAvroValue *rec, const char *name, int64 x);
extern void SkadeAvroSetBool(SkadeAvroValue *rec, const char *name, bool b);
extern void SkadeAvroSetBytes(SkadeAvroValue *rec, const char *name, const char *p, size_t len);
extern SkadeAvroValue *SkadeAvroSetRecord(SkadeAvroValue *rec, const char *name);
extern SkadeAvroValue *SkadeAvroAppend(SkadeAvroValue *array);
extern void SkadeAvroCopy(SkadeAvroValue *dst, const SkadeAvroValue *src, const char *positional);

#endif							/* SKADE_AVRO_READER_H */
