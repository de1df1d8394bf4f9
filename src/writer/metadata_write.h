/*-------------------------------------------------------------------------
 *
 * metadata_write.h
 *	  Writing table metadata files (see metadata_write.c).
 *
 * IDENTIFICATION
 *	  src/writer/metadata_write.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_METADATA_WRITE_H
#define SKADE_METADATA_WRITE_H

extern bool SkadeMetadataFileName(const char *location, bool *gzip);

#endif							/* SKADE_METADATA_WRITE_H */
