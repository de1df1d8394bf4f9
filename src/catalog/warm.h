/*-------------------------------------------------------------------------
 *
 * warm.h
 *	  Reading new metadata at commit time (L0 warming, snapshot ids,
 *	  continuity checks) without ever failing a commit on an unreadable file.
 *
 * IDENTIFICATION
 *	  src/catalog/warm.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_WARM_H
#define SKADE_WARM_H

#include "format/metadata_json.h"
#include "io/route.h"

extern bool SkadeWarmMetadata(const SkadeRoute *route, const char *location,
							  const char *old_location, SkadeMeta **meta, SkadeMeta **old);

#endif							/* SKADE_WARM_H */
