/*-------------------------------------------------------------------------
 *
 * manifest_helper.h
 *	  A helper process decoding a plan's uncached manifests alongside the
 *	  backend (manifest_helper.c).
 *
 * IDENTIFICATION
 *	  src/cache/manifest_helper.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_MANIFEST_HELPER_H
#define SKADE_MANIFEST_HELPER_H

typedef struct ManifestHelper ManifestHelper;	/* a started helper's task */

extern ManifestHelper *ManifestHelperStart(const char *const *paths, const int64 *lengths,
										   int n);
extern void ManifestHelperEnd(ManifestHelper *helper);

#endif							/* SKADE_MANIFEST_HELPER_H */
