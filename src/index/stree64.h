/*-------------------------------------------------------------------------
 *
 * stree64.h
 *	  STree64: a static B+ search tree over sorted signed 64-bit keys,
 *	  8 keys per 64-byte node, in one position-independent block.
 *
 * IDENTIFICATION
 *	  src/index/stree64.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_STREE64_H
#define SKADE_STREE64_H

#define STREE64_B			8		/* keys per node */
#define STREE64_MAX_HEIGHT	24

/*
 * The tree header; the node array follows at offset "nodes_off" (64-byte
 * aligned relative to the header, which itself must be 64-byte aligned).
 * Layer 0 is the sorted key array padded with INT64_MAX, so a lower bound is
 * a global rank into the caller's parallel payload array.  No pointers: the
 * block works at any mapping address (DSM segments).
 */
typedef struct STree64
{
	uint64		n;				/* keys */
	uint32		height;			/* layers */
	uint32		pad;
	uint64		nodes_off;		/* bytes from the header to layer 0 */
	uint64		layer_off[STREE64_MAX_HEIGHT + 1];	/* key index where layer h starts */
} STree64;

extern Size STree64Size(uint64 n);
extern void STree64Build(STree64 *tree, const int64 *sorted_keys, uint64 n);
extern uint64 STree64LowerBound(const STree64 *tree, int64 key);
extern void STree64LowerBoundBatch(const STree64 *tree, const int64 *keys,
								   uint64 *out, uint64 m);
extern void STree64SelectImpl(void);
extern const char *STree64ImplName(void);

/* forced implementations, for the self-test and benchmarks */
extern uint64 STree64LowerBoundScalar(const STree64 *tree, int64 key);
extern uint64 STree64LowerBoundAvx2(const STree64 *tree, int64 key);
extern bool STree64HaveAvx2(void);

#define STree64Keys(t)	((const int64 *) (((const char *) (t)) + (t)->nodes_off))

#endif							/* SKADE_STREE64_H */
