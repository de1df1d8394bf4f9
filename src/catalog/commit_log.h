/*-------------------------------------------------------------------------
 *
 * commit_log.h
 *	  The commit log written by the trigger on iceberg_tables, and the
 *	  operation context through which the SQL API labels its changes.
 *
 * IDENTIFICATION
 *	  src/catalog/commit_log.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_COMMIT_LOG_H
#define SKADE_COMMIT_LOG_H

/* Operation names as stored in skade.commit_log.op */
#define SKADE_OP_CREATE		"create"
#define SKADE_OP_REGISTER	"register"
#define SKADE_OP_COMMIT		"commit"
#define SKADE_OP_RENAME		"rename"
#define SKADE_OP_DROP		"drop"

extern void SkadeOpBegin(const char *op);
extern void SkadeOpEnd(void);
extern int64 SkadeOpLastSeq(void);
extern int64 SkadeCommitLogReserve(Datum *pending);

/* the append-only exceptions (api/log_api.c's resolve and prune) */
#define SKADE_LOG_ALLOW_UPDATE	0x01
#define SKADE_LOG_ALLOW_DELETE	0x02
extern int	SkadeCommitLogAllow(int what);

#endif							/* SKADE_COMMIT_LOG_H */
