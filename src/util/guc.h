/*-------------------------------------------------------------------------
 *
 * guc.h
 *	  skade's configuration parameters (all defined in guc.c).
 *
 * IDENTIFICATION
 *	  src/util/guc.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SKADE_GUC_H
#define SKADE_GUC_H

typedef enum SkadeDurability
{
	SKADE_DURABILITY_IMMEDIATE,	/* commits flush WAL before returning */
	SKADE_DURABILITY_EVENTUAL	/* synchronous_commit = off for skade's commits */
} SkadeDurability;

typedef enum SkadeValidateCommits
{
	SKADE_VALIDATE_OFF,
	SKADE_VALIDATE_WARN,
	SKADE_VALIDATE_ERROR
} SkadeValidateCommits;

extern char *skade_catalog;
extern char *skade_warehouse;
extern char *skade_write_roots;
extern int	skade_durability;
extern char *skade_allowed_roots;
extern int	skade_max_metadata_size;
extern int	skade_max_manifest_size;
extern int	skade_metadata_cache_size;
extern int	skade_manifest_cache_size;
extern int	skade_pointer_cache_entries;
extern int	skade_validate_commits;
extern char *skade_database;
extern bool skade_index_enabled;
extern bool skade_update_fast_path;
extern bool skade_rebase_appends;
extern int	skade_drop_retention;
extern bool skade_notify_changes;
extern bool skade_group_commit;
extern bool skade_decode_helper;
extern int	skade_index_rebuild_commits;
extern int	skade_index_rebuild_misses;
extern int	skade_index_rebuild_interval;
extern char *skade_s3_endpoint;
extern char *skade_s3_region;
extern bool skade_s3_path_style;
extern char *skade_s3_allowed_endpoints;
extern char *skade_s3_credentials_file;
extern int	skade_s3_connect_timeout;
extern int	skade_s3_request_timeout;
extern int	skade_s3_max_retries;
extern int	skade_s3_max_concurrency;
extern char *skade_s3_sts_endpoint;
extern char *skade_s3_sts_role_arn;
extern char *skade_s3_sts_external_id;
extern int	skade_s3_vended_credentials_duration;
extern int	skade_rest_port;
extern char *skade_rest_listen_addresses;
extern int	skade_rest_plaintext_port;
extern char *skade_rest_tls_cert_file;
extern char *skade_rest_tls_key_file;
extern char *skade_rest_tls_ca_file;
extern int	skade_rest_workers;
extern char *skade_rest_database;
extern int	skade_rest_max_body;
extern int	skade_rest_idle_timeout;
extern int	skade_rest_max_connections;
extern int	skade_rest_max_workers;
extern int	skade_rest_lock_timeout;
extern int	skade_rest_statement_timeout;
extern int	skade_rest_body_timeout;
extern int	skade_rest_min_body_rate;
extern int	skade_rest_queue_timeout;
extern int	skade_rest_max_queue;
extern bool skade_rest_metrics_loopback;
extern char *skade_rest_anonymous_role;
extern bool skade_rest_allow_superuser;
extern char *skade_rest_oidc_issuers;
extern char *skade_rest_oidc_audience;
extern char *skade_rest_oidc_jwks_file;
extern char *skade_rest_oidc_role_claim;
extern int	skade_rest_oidc_refetch_interval;

extern void SkadeGucInit(void);
extern const char *SkadeResolveCatalog(const char *catalog_arg);
extern void SkadeApplyDurability(void);

#endif							/* SKADE_GUC_H */
