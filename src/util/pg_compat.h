/*-------------------------------------------------------------------------
 *
 * pg_compat.h
 *	  The one place where skade meets the differences between PostgreSQL
 *	  15, 16, 17 and 18.
 *
 * skade's code is written against the newest API (18's); this header gives
 * the older majors those names, as macros or static inline wrappers over
 * what they have, each doing exactly what the code did on 15 before.  No
 * other file tests PG_VERSION_NUM.  Include it right after postgres.h.
 *
 * A macro that takes the name of a PostgreSQL function (a function-like
 * macro is not expanded again inside its own expansion) must come after
 * that function's declaration, so this header includes the headers that
 * declare the functions it redefines.
 *
 * Newer facilities weighed and not taken: 17's DSM registry
 * (GetNamedDSMSegment; 18's GetNamedDSA/GetNamedDSHash) serves a library
 * that is loaded after startup and so cannot reserve main shared memory.
 * skade is always in shared_preload_libraries: its fixed structures (the
 * shared state, the L0 and L0.5 caches, the L1 mirror) are sized at
 * startup in the main segment through shmem_request_hook, mapped at the
 * same address in every process with no attach on first use; a named
 * segment would add a lookup under the registry's lock and an attach per
 * backend, and could not be resized when a setting changes at restart
 * anyway.  What skade puts in DSM is replaced, not named: the STree64
 * index (a new segment per rebuild, its handle published in the shared
 * state), the decode helper's and the REST executors' per-worker queues.
 * Neither gains from a registry, so one code path serves all four majors.
 *
 * IDENTIFICATION
 *	  src/util/pg_compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_PG_COMPAT_H
#define SKADE_PG_COMPAT_H

#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 190000
#error "skade builds on PostgreSQL 15, 16, 17 and 18"
#endif

/*
 * 16: the varlena macros (VARSIZE, SET_VARSIZE, VARTAG_INDIRECT, struct
 * varatt_indirect, ...) moved out of postgres.h into varatt.h, which some
 * server headers (access/detoast.h) use without including.
 */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/*
 * 18: pg_noreturn, a function specifier placed before the declaration
 * (C11's _Noreturn), replaced pg_attribute_noreturn(), an attribute after
 * it.  GCC and Clang take __attribute__((noreturn)) in front as well.
 */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/* 16: Abs() left c.h */
/* (skade uses no Abs(): a bound check says what it means without it) */

/*
 * 16: the per-kind ACL checks (pg_namespace_aclcheck, pg_proc_aclcheck, ...)
 * became object_aclcheck(classid, ...).  Only the kinds skade checks.
 */
#if PG_VERSION_NUM < 160000
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "utils/acl.h"

static inline AclResult
object_aclcheck(Oid classid, Oid objectid, Oid roleid, AclMode mode)
{
	switch (classid)
	{
		case NamespaceRelationId:
			return pg_namespace_aclcheck(objectid, roleid, mode);
		case ProcedureRelationId:
			return pg_proc_aclcheck(objectid, roleid, mode);
		default:
			elog(ERROR, "skade: object_aclcheck for class %u is not provided before PostgreSQL 16",
				 classid);
	}
	return ACLCHECK_NO_PRIV;	/* keep the compiler quiet */
}
#endif

/*
 * 16: an executor's range table comes with its RTEPermissionInfo list
 * (permInfos, built with addRTEPermissionInfo); 18: and with the set of
 * range table indexes left after initial pruning (unpruned_relids).  Before
 * 16 the permission fields are in the RangeTblEntry itself (left zero, as
 * makeNode leaves them) and there is no list.
 */
#include "executor/executor.h"
#if PG_VERSION_NUM >= 160000
#include "parser/parse_relation.h"
#else
static inline void *
addRTEPermissionInfo(List **rteperminfos, RangeTblEntry *rte)
{
	(void) rteperminfos;
	(void) rte;
	return NULL;
}
#endif
#if PG_VERSION_NUM < 160000
#define ExecInitRangeTable(estate, rangeTable, permInfos, unpruned_relids) \
	ExecInitRangeTable((estate), (rangeTable))
#elif PG_VERSION_NUM < 180000
#define ExecInitRangeTable(estate, rangeTable, permInfos, unpruned_relids) \
	ExecInitRangeTable((estate), (rangeTable), (permInfos))
#endif

/*
 * 17: getIdentitySequence takes the Relation (it looks through a partition
 * to its topmost parent) rather than its OID.
 */
#if PG_VERSION_NUM < 170000
#include "catalog/dependency.h"
#include "utils/rel.h"
#define getIdentitySequence(rel, attnum, missing_ok) \
	getIdentitySequence(RelationGetRelid(rel), (attnum), (missing_ok))
#endif

/*
 * 17: IsBackgroundWorker gave way to AmBackgroundWorkerProcess().
 */
#if PG_VERSION_NUM < 170000
#include "miscadmin.h"
#define AmBackgroundWorkerProcess() (IsBackgroundWorker)
#endif

/*
 * 17: PGPROC's lxid moved into its vxid (with the proc number).  There is
 * no accessor in core: PGPROC_LXID(proc) reads it on every major.
 */
#include "storage/proc.h"
#if PG_VERSION_NUM >= 170000
#define PGPROC_LXID(proc) ((proc)->vxid.lxid)
#else
#define PGPROC_LXID(proc) ((proc)->lxid)
#endif

/*
 * 17: ShmemVariableCache was renamed TransamVariables.
 */
#if PG_VERSION_NUM < 170000
#include "access/transam.h"
#define TransamVariables ShmemVariableCache
#endif

/*
 * 17: LogLogicalMessage takes "flush" (XLogFlush the record it wrote, for a
 * non-transactional message only: a transactional one is flushed by its
 * commit, or by the caller).
 */
#include "replication/message.h"
#if PG_VERSION_NUM < 170000
#include "access/xlog.h"
static inline XLogRecPtr
LogLogicalMessage_compat(const char *prefix, const char *message, size_t size,
						 bool transactional, bool flush)
{
	XLogRecPtr	lsn = LogLogicalMessage(prefix, message, size, transactional);

	if (!transactional && flush)
		XLogFlush(lsn);
	return lsn;
}
#define LogLogicalMessage(prefix, message, size, transactional, flush) \
	LogLogicalMessage_compat((prefix), (message), (size), (transactional), (flush))
#endif

/*
 * 17: makeJsonLexContextCstringLen takes the JsonLexContext to fill (NULL:
 * it pallocs one, as it always did before 17) and a size_t length.  skade
 * passes NULL.
 */
#include "common/jsonapi.h"
#if PG_VERSION_NUM < 170000
#define makeJsonLexContextCstringLen(lex, json, len, encoding, need_escapes) \
	(AssertMacro((lex) == NULL), \
	 makeJsonLexContextCstringLen((json), (int) (len), (encoding), (need_escapes)))
#endif

/*
 * 17: estimate_array_length takes the PlannerInfo (to use statistics on
 * the array expression) and answers a double.
 */
#include "utils/selfuncs.h"
#if PG_VERSION_NUM < 170000
#define estimate_array_length(root, arrayexpr) \
	((void) (root), (double) estimate_array_length(arrayexpr))
#endif

/*
 * 17: CreateWaitEventSet takes the ResourceOwner that releases the set on
 * abort (NULL: only the caller's FreeWaitEventSet does) and allocates it in
 * TopMemoryContext; before, it took the memory context to allocate in.  A
 * set the caller frees itself (NULL) goes, before 17, into TopMemoryContext
 * too; one tied to a resource owner, into the current memory context, which
 * (like the resource owner) goes away with the (sub)transaction.
 */
#include "storage/latch.h"
#if PG_VERSION_NUM < 170000
#include "utils/memutils.h"
#define CreateWaitEventSet(resowner, nevents) \
	CreateWaitEventSet((resowner) == NULL ? TopMemoryContext : CurrentMemoryContext, (nevents))
#endif

/*
 * 17: PushOverrideSearchPath/PopOverrideSearchPath and OverrideSearchPath
 * are gone.  SkadePushCatalogSearchPath(&nestlevel) makes the SQL that
 * follows resolve names through pg_catalog alone (and the temporary schema
 * for relations and types, last, on 17 and later), until
 * SkadePopCatalogSearchPath(nestlevel), or the (sub)transaction's abort:
 *   - 15, 16: an override search path of pg_catalog (no temporary schema),
 *     without the GUC machinery (nestlevel is unused);
 *   - 17, 18: search_path = pg_catalog, pg_temp through a new GUC nest level
 *     (as core's ri_triggers.c does; pg_temp is named so that it is not
 *     searched first).
 */
#include "catalog/namespace.h"
#include "utils/guc.h"
#if PG_VERSION_NUM < 170000
static inline void
SkadePushCatalogSearchPath(int *nestlevel)
{
	OverrideSearchPath path = {NIL, true, false, 0};	/* pg_catalog only */

	*nestlevel = 0;
	PushOverrideSearchPath(&path);
}

static inline void
SkadePopCatalogSearchPath(int nestlevel)
{
	(void) nestlevel;
	PopOverrideSearchPath();
}
#else
static inline void
SkadePushCatalogSearchPath(int *nestlevel)
{
	*nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
}

static inline void
SkadePopCatalogSearchPath(int nestlevel)
{
	AtEOXact_GUC(true, nestlevel);
}
#endif

/*
 * 18: pg_b64_encode reads, and pg_b64_decode writes, bytes (uint8) rather
 * than chars.
 */
#include "common/base64.h"
#if PG_VERSION_NUM < 180000
#define pg_b64_encode(src, len, dst, dstlen) \
	pg_b64_encode((const char *) (src), (len), (dst), (dstlen))
#define pg_b64_decode(src, len, dst, dstlen) \
	pg_b64_decode((src), (len), (char *) (dst), (dstlen))
#endif

#endif							/* SKADE_PG_COMPAT_H */
