/*-------------------------------------------------------------------------
 *
 * log_prune.h
 *	  Retiring commit-log rows into skade.commit_log_archive (log_prune.c).
 *
 * IDENTIFICATION
 *	  src/catalog/log_prune.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_LOG_PRUNE_H
#define SKADE_LOG_PRUNE_H

extern bool SkadeCommitLogPruning(void);

#endif							/* SKADE_LOG_PRUNE_H */
