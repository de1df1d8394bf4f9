/*-------------------------------------------------------------------------
 *
 * guc.c
 *	  Every skade.* configuration parameter, documented where it is defined.
 *
 * Parameters are registered from _PG_init whether or not the library is
 * preloaded, so that SET skade.catalog works in any session; the prefix is
 * reserved so that misspelled skade.* settings are reported.
 *
 * IDENTIFICATION
 *	  src/util/guc.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include <limits.h>

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/varlena.h"

#include "util/guc.h"
#include "util/location.h"
#include "util/names.h"
#include "util/skade_limits.h"

/*
 * skade.catalog: the catalog (the catalog_name column of the JDBC tables)
 * that SQL API calls use when their "catalog" argument is NULL or omitted.
 * A JDBC client's catalog name is its own configuration (Spark's
 * spark.sql.catalog.<name>, pyiceberg's load_catalog(name)); set this to the
 * same name to see that client's tables.
 */
char	   *skade_catalog = NULL;

/*
 * skade.warehouse: the clients' warehouse location (their "warehouse"
 * property); namespace_properties() reports <warehouse>/<levels> as the
 * location of a namespace that has none, as JdbcCatalog and Spark do.
 */
char	   *skade_warehouse = NULL;

/*
 * skade.durability: how skade's pointer changes reach disk.  "immediate"
 * makes every transaction that changes a pointer (SQL API or JDBC DML) wait
 * for its WAL flush, even when the session runs with synchronous_commit =
 * off; "eventual" runs those transactions with synchronous_commit = off
 * (a crash may lose the last few hundred milliseconds of commits, never
 * corrupt them).
 */
int			skade_durability = SKADE_DURABILITY_IMMEDIATE;

/*
 * skade.allowed_roots: comma-separated absolute directories under which
 * skade may read metadata files on behalf of SQL users (superuser only).
 * Checked after resolving symlinks and "..".  Empty: no file access at all;
 * pointer operations keep working.
 */
char	   *skade_allowed_roots = NULL;

/*
 * skade.write_roots: comma-separated absolute directories under which skade
 * may create new metadata files (create_table, update_table); empty: none.
 * Superuser-only, like skade.allowed_roots; see file_create.c.
 */
char	   *skade_write_roots = NULL;

/*
 * Object storage (s3://, object_store.c and s3_client.c), superuser only:
 * skade.s3_endpoint ("" = AWS, https://s3.<region>.amazonaws.com),
 * skade.s3_region, skade.s3_path_style (bucket in the path, not the host
 * name), skade.s3_allowed_endpoints (further endpoints a namespace's
 * s3.endpoint property may name), skade.s3_credentials_file (AWS shared
 * credentials, owned by the server's OS user and not readable by others;
 * empty: the server's AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
 * AWS_SESSION_TOKEN).  No secret is ever a setting.  Timeouts in ms,
 * retries after the first attempt, and the most requests at once.
 */
char	   *skade_s3_endpoint = NULL;
char	   *skade_s3_region = NULL;
bool		skade_s3_path_style = false;
char	   *skade_s3_allowed_endpoints = NULL;
char	   *skade_s3_credentials_file = NULL;
int			skade_s3_connect_timeout = 5000;
int			skade_s3_request_timeout = 60000;
int			skade_s3_max_retries = 3;
int			skade_s3_max_concurrency = 16;

/*
 * Vended credentials (sts.c), superuser only: skade.s3_sts_endpoint (""
 * = the region's AWS STS; a namespace's sts.endpoint property overrides
 * it, and must then be it or one of skade.s3_allowed_endpoints),
 * skade.s3_sts_role_arn ("" = no credentials are vended; a namespace's
 * client.assume-role.arn overrides it), skade.s3_sts_external_id (a
 * namespace's client.assume-role.external-id overrides it), and how long
 * vended credentials last (seconds; the STS server decides what it
 * allows: AWS's minimum is 15 minutes).
 */
char	   *skade_s3_sts_endpoint = NULL;
char	   *skade_s3_sts_role_arn = NULL;
char	   *skade_s3_sts_external_id = NULL;
int			skade_s3_vended_credentials_duration = 3600;

/*
 * The REST catalog (rest_worker.c, rest_http.c, rest_pool.c, rest_routes.c):
 * skade.rest_port (0: no server), skade.rest_listen_addresses,
 * skade.rest_workers (executors always running) and skade.rest_database are
 * fixed at server start; every other skade.rest_* setting is read on reload
 * by the listener and the executors: the body limit, the idle, body, queue,
 * lock and statement timeouts, the slowest transfer rate, the connection,
 * executor and queue limits, and the anonymous role.
 */
int			skade_rest_port = 0;
char	   *skade_rest_listen_addresses = NULL;
int			skade_rest_workers = 2;
char	   *skade_rest_database = NULL;
int			skade_rest_max_body = 16 * 1024 * 1024;
int			skade_rest_idle_timeout = 60;
int			skade_rest_max_connections = 256;
int			skade_rest_max_workers = 4;
int			skade_rest_lock_timeout = 5000;
int			skade_rest_statement_timeout = 30000;
int			skade_rest_body_timeout = 30;
int			skade_rest_min_body_rate = 4096;
int			skade_rest_queue_timeout = 2000;
int			skade_rest_max_queue = 64;
bool		skade_rest_metrics_loopback = true;
char	   *skade_rest_anonymous_role = NULL;

/*
 * skade.rest_allow_superuser: may a REST token, a bearer JWT or the
 * anonymous role stand for a superuser?  Off: a superuser's requests
 * bypass every privilege, which is not what a catalog's clients should
 * hold (rest_auth.c).
 */
bool		skade_rest_allow_superuser = false;

/*
 * Bearer JWTs (rest_oidc.c): the issuers whose tokens count, the audience
 * they must be meant for, a JWKS file of keys beside the issuers' own, and
 * the claim naming the role when skade.rest_oidc_roles has no row for the
 * token.  Superuser only, reloadable.
 */
/*
 * TLS on the REST port (rest_tls.c): a certificate and its key (PEM files),
 * and a CA whose certificates clients must present (mutual TLS; empty:
 * none asked).  Re-read on reload.  skade.rest_plaintext_port: a second
 * port speaking plain HTTP beside a TLS skade.rest_port (0: none).
 */
int			skade_rest_plaintext_port = 0;
char	   *skade_rest_tls_cert_file = NULL;
char	   *skade_rest_tls_key_file = NULL;
char	   *skade_rest_tls_ca_file = NULL;

char	   *skade_rest_oidc_issuers = NULL;
char	   *skade_rest_oidc_audience = NULL;
char	   *skade_rest_oidc_jwks_file = NULL;
char	   *skade_rest_oidc_role_claim = NULL;
/* the least time between two fetches of one issuer's keys by one executor */
int			skade_rest_oidc_refetch_interval = 10000;

/*
 * skade.max_metadata_size: the largest metadata file skade reads, counted
 * in decompressed bytes (so a gzip bomb stops here).  Superuser only.
 */
int			skade_max_metadata_size = 64 * 1024 * 1024;

/*
 * skade.max_manifest_size: the most bytes that the blocks of one Avro file
 * (a manifest list or a manifest) may decode to, counted after inflation
 * while inflating, so a deflate or snappy bomb stops here.  Superuser only.
 */
int			skade_max_manifest_size = 128 * 1024 * 1024;

/*
 * skade.metadata_cache_size: bytes of shared memory for the L0 metadata
 * cache (file text, parsed summary, refs-only variant).  Fixed at start.
 */
int			skade_metadata_cache_size = 64 * 1024;	/* kB */

/*
 * skade.manifest_cache_size: bytes of shared memory for the L0.5 manifest
 * cache (decoded manifests).  Fixed at start.
 */
int			skade_manifest_cache_size = 64 * 1024;	/* kB */

/*
 * skade.pointer_cache_entries: tables the L1 pointer mirror holds in
 * shared memory.  0 disables it.  Fixed at start.
 */
int			skade_pointer_cache_entries = 4096;

/*
 * skade.validate_commits: when a pointer changes and both the old and the
 * new metadata are readable, check that the new one continues the old
 * (same table-uuid, last-sequence-number not going back): off, warn
 * (WARNING, the commit goes through) or error (the commit fails).
 */
int			skade_validate_commits = SKADE_VALIDATE_WARN;

/*
 * skade.database: the database whose snapshot_map the index worker indexes
 * (one per cluster).  Lookups in other databases use the heap.  Restart.
 */
char	   *skade_database = NULL;

/*
 * skade.index_enabled: use the STree64 index for snapshot lookups where it
 * answers as the heap would.  Off: everything from the heap, same answers.
 */
bool		skade_index_enabled = true;

/*
 * skade.update_fast_path: let skade.update_table() commit the common shapes
 * (appends, ref moves, property changes on v2 and v3 tables) in C by splicing the
 * base metadata text (commit_fast.c); off, every commit runs the PL/pgSQL
 * engine.  The results are the same; off is for verification.
 */
bool		skade_update_fast_path = true;

/*
 * skade.rebase_appends: the default of the table property
 * skade.rebase-appends -- a stale commit that only appends data files to a
 * branch is rebased onto the branch's head instead of failing with 409
 * (commit_rebase.c).  Off: Iceberg's strict optimistic concurrency.
 */
bool		skade_rebase_appends = false;

/*
 * skade.drop_retention: how long a dropped table or view stays listed by
 * skade.dropped_tables() and can be restored by skade.undrop_table() /
 * undrop_view() (seconds; 0: no undrop).  Read by that SQL; superuser's.
 */
int			skade_drop_retention = 7 * 86400;

/*
 * skade.notify_changes: notify channel skade_changes when a transaction that
 * changed the catalog commits (change_feed.c).  PostgreSQL queues every
 * notification under one lock held to the end of the committing
 * transaction, so catalog commits that notify commit one at a time
 * (bench/commit_throughput.sh, distinct tables: 0.35x the plain CAS with it,
 * 0.74x without): off by default, on where consumers LISTEN.
 */
bool		skade_notify_changes = false;

/*
 * skade.group_commit: concurrent REST appends to one table that rebases
 * them are applied by one committer into one metadata file, one pointer
 * move (commit_group.c); off, each takes the row lock in turn.
 */
bool		skade_group_commit = true;

/*
 * skade.decode_helper: let a helper process decode a plan's uncached local
 * manifests from the end of its list while the backend decodes from the
 * start (manifest_helper.c); off, the backend decodes them all.  The
 * answers are the same.
 */
bool		skade_decode_helper = true;

/* rebuild triggers of the index worker (0 disables a trigger) */
int			skade_index_rebuild_commits = 1000; /* commits since the build */
int			skade_index_rebuild_misses = 10000; /* lookups the tree could not answer */
int			skade_index_rebuild_interval = 60;	/* seconds, if anything changed */

static const struct config_enum_entry validate_options[] = {
	{"off", SKADE_VALIDATE_OFF, false},
	{"warn", SKADE_VALIDATE_WARN, false},
	{"error", SKADE_VALIDATE_ERROR, false},
	{NULL, 0, false}
};

static const struct config_enum_entry durability_options[] = {
	{"immediate", SKADE_DURABILITY_IMMEDIATE, false},
	{"eventual", SKADE_DURABILITY_EVENTUAL, false},
	{NULL, 0, false}
};

static bool check_catalog(char **newval, void **extra, GucSource source);
static bool check_allowed_roots(char **newval, void **extra, GucSource source);
static bool check_endpoint(char **newval, void **extra, GucSource source);

static void define_catalog_settings(void);
static void define_s3_settings(void);
static void define_rest_settings(void);
static void define_rest_identity_settings(void);
static void define_limit_settings(void);
static void define_preload_settings(void);
static void define_behaviour_settings(void);

/*
 * SkadeGucInit
 *		Define all skade.* parameters.  Called once from _PG_init.
 */
void
SkadeGucInit(void)
{
	define_catalog_settings();
	define_s3_settings();
	define_rest_settings();
	define_rest_identity_settings();
	define_limit_settings();
	define_preload_settings();
	define_behaviour_settings();

	MarkGUCPrefixReserved("skade");
}

/* The catalog, the warehouse, durability and the roots. */
static void
define_catalog_settings(void)
{
	DefineCustomStringVariable("skade.catalog",
							   "Default catalog name (catalog_name) for skade's SQL API.",
							   "Must equal the catalog name the JDBC clients are configured with.",
							   &skade_catalog,
							   "skade",
							   PGC_USERSET,
							   0,
							   check_catalog, NULL, NULL);

	DefineCustomStringVariable("skade.warehouse",
							   "The clients' warehouse location, for namespaces without a location property.",
							   "namespace_properties() reports <warehouse>/<namespace levels> as their location, as JdbcCatalog does; empty: no location.",
							   &skade_warehouse,
							   "",
							   PGC_USERSET,
							   0,
							   NULL, NULL, NULL);

	DefineCustomEnumVariable("skade.durability",
							 "Durability of skade's pointer changes: immediate or eventual.",
							 "eventual runs pointer-changing transactions with synchronous_commit = off.",
							 &skade_durability,
							 SKADE_DURABILITY_IMMEDIATE,
							 durability_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomStringVariable("skade.allowed_roots",
							   "Directories under which skade may read metadata files.",
							   "Comma-separated absolute paths; empty disables file access.",
							   &skade_allowed_roots,
							   "",
							   PGC_SUSET,
							   GUC_LIST_INPUT,
							   check_allowed_roots, NULL, NULL);

	DefineCustomStringVariable("skade.write_roots",
							   "Directories under which skade may create metadata files.",
							   "Comma-separated absolute paths; empty disables writing.",
							   &skade_write_roots,
							   "",
							   PGC_SUSET,
							   GUC_LIST_INPUT,
							   check_allowed_roots, NULL, NULL);
}

/* Object storage: endpoints, keys, STS, timeouts. */
static void
define_s3_settings(void)
{
	DefineCustomStringVariable("skade.s3_endpoint",
							   "Endpoint of the S3 service for s3:// locations (empty: AWS).",
							   "scheme://host[:port], e.g. http://127.0.0.1:9000; a namespace's s3.endpoint property overrides it.",
							   &skade_s3_endpoint,
							   "",
							   PGC_SUSET,
							   0,
							   check_endpoint, NULL, NULL);

	DefineCustomStringVariable("skade.s3_region",
							   "Region that S3 requests are signed for.",
							   "A namespace's s3.region property overrides it.",
							   &skade_s3_region,
							   "us-east-1",
							   PGC_SUSET,
							   0,
							   NULL, NULL, NULL);

	DefineCustomBoolVariable("skade.s3_path_style",
							 "Address buckets in the path (http://endpoint/bucket/key), not the host name.",
							 "A namespace's s3.path-style-access property overrides it.",
							 &skade_s3_path_style,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomStringVariable("skade.s3_allowed_endpoints",
							   "Further S3 endpoints a namespace's s3.endpoint property may name.",
							   "Comma-separated scheme://host[:port]; skade.s3_endpoint is always allowed.",
							   &skade_s3_allowed_endpoints,
							   "",
							   PGC_SUSET,
							   GUC_LIST_INPUT,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("skade.s3_sts_endpoint",
							   "STS endpoint that vended credentials are asked from (empty: the region's AWS STS).",
							   "A namespace's sts.endpoint property overrides it (it must then be allowed like an S3 endpoint).",
							   &skade_s3_sts_endpoint,
							   "",
							   PGC_SUSET,
							   0,
							   check_endpoint, NULL, NULL);

	DefineCustomStringVariable("skade.s3_sts_role_arn",
							   "Role that vended credentials assume, scoped to the table by a session policy (empty: none are vended).",
							   "A namespace's client.assume-role.arn property overrides it.",
							   &skade_s3_sts_role_arn,
							   "",
							   PGC_SUSET,
							   0,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("skade.s3_sts_external_id",
							   "External id sent with AssumeRole for vended credentials (empty: none).",
							   "A namespace's client.assume-role.external-id property overrides it.",
							   &skade_s3_sts_external_id,
							   "",
							   PGC_SUSET,
							   0,
							   NULL, NULL, NULL);

	DefineCustomIntVariable("skade.s3_vended_credentials_duration",
							"How long vended credentials last.",
							"The STS server decides what it allows (AWS: at least 15 minutes).",
							&skade_s3_vended_credentials_duration,
							3600, 60, 12 * 3600,
							PGC_SUSET,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomStringVariable("skade.s3_credentials_file",
							   "AWS shared-credentials file with the key for S3 requests (empty: the server's environment).",
							   "Must be owned by the server's OS user and not readable by group or others.",
							   &skade_s3_credentials_file,
							   "",
							   PGC_SUSET,
							   0,
							   NULL, NULL, NULL);

	DefineCustomIntVariable("skade.s3_connect_timeout",
							"Longest wait for a connection to the S3 endpoint.",
							NULL,
							&skade_s3_connect_timeout,
							5000, 1, 3600 * 1000,
							PGC_SUSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("skade.s3_request_timeout",
							"Longest time one S3 request may take, transfer included.",
							NULL,
							&skade_s3_request_timeout,
							60000, 1, 24 * 3600 * 1000,
							PGC_SUSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("skade.s3_max_retries",
							"Retries of an S3 request after a transport error, 408, 429 or 5xx.",
							NULL,
							&skade_s3_max_retries,
							3, 0, 20,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("skade.s3_max_concurrency",
							"Most S3 requests a backend runs at once (manifests of a plan).",
							NULL,
							&skade_s3_max_concurrency,
							16, 1, 128,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);
}

/* The REST server's limits (its port and workers: define_preload_settings). */
static void
define_rest_settings(void)
{
	DefineCustomIntVariable("skade.rest_max_body",
							"Largest request body the REST catalog accepts.",
							NULL,
							&skade_rest_max_body,
							16 * 1024 * 1024, 1024, 1024 * 1024 * 1024,
							PGC_SIGHUP,
							GUC_UNIT_BYTE,
							NULL, NULL, NULL);

	DefineCustomIntVariable("skade.rest_idle_timeout",
							"Seconds a REST connection may stay idle (or send a request this slowly).",
							NULL,
							&skade_rest_idle_timeout,
							60, 1, 3600,
							PGC_SIGHUP,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomIntVariable("skade.rest_max_connections",
							"Connections the REST server holds at most (the slowest are cut for new ones).",
							NULL,
							&skade_rest_max_connections,
							256, 1, 10000,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("skade.rest_max_workers",
							"Most REST workers (executors) running at once; more start on demand.",
							"Each is a dynamic background worker: max_worker_processes must leave room.",
							&skade_rest_max_workers,
							4, 1, 256,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("skade.rest_lock_timeout",
							"Longest wait of a REST request for a lock (a commit then answers 409).",
							NULL,
							&skade_rest_lock_timeout,
							5000, 1, INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("skade.rest_statement_timeout",
							"Longest time a REST request may run in its worker (then 503).",
							NULL,
							&skade_rest_statement_timeout,
							30000, 1, INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("skade.rest_body_timeout",
							"Longest time a REST request's body, or an answer, may take to transfer.",
							NULL,
							&skade_rest_body_timeout,
							30, 1, 3600,
							PGC_SIGHUP,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomIntVariable("skade.rest_min_body_rate",
							"Slowest transfer of a REST body or answer, in bytes per second, after its first second.",
							NULL,
							&skade_rest_min_body_rate,
							4096, 0, INT_MAX,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("skade.rest_queue_timeout",
							"Longest wait of a REST request for a free worker (then 503, or 409 for a commit).",
							NULL,
							&skade_rest_queue_timeout,
							2000, 0, INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("skade.rest_max_queue",
							"Most REST requests waiting for a worker (beyond it: 503 at once).",
							NULL,
							&skade_rest_max_queue,
							64, 0, 100000,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("skade.rest_metrics_loopback",
							 "Answer GET /metrics to loopback clients without credentials.",
							 "Turn off when a proxy on this host forwards other clients to the REST port: "
							 "then only roles with pg_monitor's privileges get the metrics.",
							 &skade_rest_metrics_loopback,
							 true,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("skade.rest_allow_superuser",
							 "Lets REST credentials stand for a superuser.",
							 NULL,
							 &skade_rest_allow_superuser,
							 false,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);
}

/* Who a REST request is: superusers, TLS, OpenID, the anonymous role. */
static void
define_rest_identity_settings(void)
{
	DefineCustomStringVariable("skade.rest_tls_cert_file",
							   "PEM certificate (chain) of the REST port; with skade.rest_tls_key_file it speaks TLS only.",
							   NULL,
							   &skade_rest_tls_cert_file,
							   "",
							   PGC_SIGHUP,
							   GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("skade.rest_tls_key_file",
							   "PEM private key of skade.rest_tls_cert_file (no group or world access).",
							   NULL,
							   &skade_rest_tls_key_file,
							   "",
							   PGC_SIGHUP,
							   GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("skade.rest_tls_ca_file",
							   "PEM CA certificates that must have signed a REST client's certificate (mutual TLS; empty: none asked).",
							   NULL,
							   &skade_rest_tls_ca_file,
							   "",
							   PGC_SIGHUP,
							   GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("skade.rest_oidc_issuers",
							   "OpenID issuers whose bearer JWTs the REST catalog accepts (comma-separated URLs).",
							   NULL,
							   &skade_rest_oidc_issuers,
							   "",
							   PGC_SIGHUP,
							   GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("skade.rest_oidc_audience",
							   "The audience (\"aud\") a bearer JWT must name (empty: JWTs are refused).",
							   NULL,
							   &skade_rest_oidc_audience,
							   "",
							   PGC_SIGHUP,
							   GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("skade.rest_oidc_jwks_file",
							   "A JWKS file of keys that may sign bearer JWTs, beside the issuers' own.",
							   NULL,
							   &skade_rest_oidc_jwks_file,
							   "",
							   PGC_SIGHUP,
							   GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("skade.rest_oidc_role_claim",
							   "The JWT claim naming the role when skade.rest_oidc_roles has none (empty: the table only).",
							   NULL,
							   &skade_rest_oidc_role_claim,
							   "sub",
							   PGC_SIGHUP,
							   GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);

	DefineCustomIntVariable("skade.rest_oidc_refetch_interval",
							"Least time between two fetches of an OpenID issuer's keys (per REST worker).",
							"A token naming a key the issuer's set lacks makes skade fetch the set again, at most this often.",
							&skade_rest_oidc_refetch_interval,
							10000, 1000, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS | GUC_SUPERUSER_ONLY,
							NULL, NULL, NULL);

	DefineCustomStringVariable("skade.rest_anonymous_role",
							   "Role of REST requests without credentials (empty: they are refused).",
							   NULL,
							   &skade_rest_anonymous_role,
							   "",
							   PGC_SIGHUP,
							   0,
							   NULL, NULL, NULL);
}

/* What one file may decode to. */
static void
define_limit_settings(void)
{
	DefineCustomIntVariable("skade.max_metadata_size",
							"Largest metadata file skade reads, in decompressed bytes.",
							NULL,
							&skade_max_metadata_size,
							64 * 1024 * 1024, 1024, 1024 * 1024 * 1024,
							PGC_SUSET,
							GUC_UNIT_BYTE,
							NULL, NULL, NULL);

	DefineCustomIntVariable("skade.max_manifest_size",
							"Most bytes the blocks of one manifest or manifest list may decode to.",
							"Counted after decompression; larger files are refused.",
							&skade_max_manifest_size,
							128 * 1024 * 1024, 1024, 1024 * 1024 * 1024 - 1024 * 1024,
							PGC_SUSET,
							GUC_UNIT_BYTE,
							NULL, NULL, NULL);
}

/* Sizes of shared memory, the index's database and the REST port and workers: only while preloading. */
static void
define_preload_settings(void)
{
	/*
	 * Sizes of shared memory can only be defined while preloading: a
	 * PGC_POSTMASTER parameter cannot be created after startup.
	 */
	if (process_shared_preload_libraries_in_progress)
	{
		DefineCustomIntVariable("skade.metadata_cache_size",
								"Shared memory for the L0 metadata cache.",
								NULL,
								&skade_metadata_cache_size,
								64 * 1024, 1024, INT_MAX / 1024,
								PGC_POSTMASTER,
								GUC_UNIT_KB,
								NULL, NULL, NULL);

		DefineCustomIntVariable("skade.manifest_cache_size",
								"Shared memory for the L0.5 manifest cache.",
								"Decoded manifests, keyed by path; the least recently used are evicted.",
								&skade_manifest_cache_size,
								64 * 1024, 1024, INT_MAX / 1024,
								PGC_POSTMASTER,
								GUC_UNIT_KB,
								NULL, NULL, NULL);

		DefineCustomStringVariable("skade.database",
								   "Database whose snapshots the index worker indexes.",
								   NULL,
								   &skade_database,
								   "postgres",
								   PGC_POSTMASTER,
								   0,
								   NULL, NULL, NULL);

		DefineCustomIntVariable("skade.rest_port",
								"TCP port of skade's Iceberg REST catalog (0: no REST server).",
								NULL,
								&skade_rest_port,
								0, 0, 65535,
								PGC_POSTMASTER,
								0,
								NULL, NULL, NULL);

		DefineCustomStringVariable("skade.rest_listen_addresses",
								   "Addresses the REST catalog listens on (comma-separated; * for all).",
								   NULL,
								   &skade_rest_listen_addresses,
								   "localhost",
								   PGC_POSTMASTER,
								   GUC_LIST_INPUT,
								   NULL, NULL, NULL);

		DefineCustomIntVariable("skade.rest_plaintext_port",
								"A second REST port speaking plain HTTP beside a TLS skade.rest_port (0: none).",
								NULL,
								&skade_rest_plaintext_port,
								0, 0, 65535,
								PGC_POSTMASTER,
								0,
								NULL, NULL, NULL);

		DefineCustomIntVariable("skade.rest_workers",
								"REST workers (executors) always running; more start on demand up to skade.rest_max_workers.",
								NULL,
								&skade_rest_workers,
								2, 1, 64,
								PGC_POSTMASTER,
								0,
								NULL, NULL, NULL);

		DefineCustomStringVariable("skade.rest_database",
								   "Database whose catalog the REST server serves.",
								   NULL,
								   &skade_rest_database,
								   "postgres",
								   PGC_POSTMASTER,
								   0,
								   NULL, NULL, NULL);

		DefineCustomIntVariable("skade.pointer_cache_entries",
								"Tables held by the L1 pointer mirror in shared memory (0 disables it).",
								NULL,
								&skade_pointer_cache_entries,
								4096, 0, 1024 * 1024,
								PGC_POSTMASTER,
								0,
								NULL, NULL, NULL);
	}
}

/* Commit validation, the snapshot index, the decode helper, the fast path. */
static void
define_behaviour_settings(void)
{
	DefineCustomEnumVariable("skade.validate_commits",
							 "Check that new metadata continues the old at commit: off, warn or error.",
							 NULL,
							 &skade_validate_commits,
							 SKADE_VALIDATE_WARN,
							 validate_options,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("skade.index_enabled",
							 "Use the STree64 snapshot index where it answers as the heap would.",
							 NULL,
							 &skade_index_enabled,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("skade.decode_helper",
							 "Let a helper process decode a plan's uncached manifests alongside the backend.",
							 NULL,
							 &skade_decode_helper,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("skade.update_fast_path",
							 "Commit the common update_table() shapes in C, splicing the base metadata text.",
							 NULL,
							 &skade_update_fast_path,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("skade.drop_retention",
							"How long a dropped table or view can be restored (skade.undrop_table()); 0: never.",
							NULL,
							&skade_drop_retention,
							7 * 86400, 0, INT_MAX,
							PGC_SUSET,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("skade.notify_changes",
							 "Notify channel skade_changes, with the new position, when a catalog change commits.",
							 NULL,
							 &skade_notify_changes,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("skade.rebase_appends",
							 "Rebase stale fast appends onto the branch's head (the default of the table property skade.rebase-appends).",
							 NULL,
							 &skade_rebase_appends,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("skade.group_commit",
							 "Commit concurrent REST appends to a table that rebases them as one group: one metadata file, one pointer move.",
							 NULL,
							 &skade_group_commit,
							 true,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("skade.index_rebuild_commits",
							"Rebuild the snapshot index after this many snapshot-changing commits (0: never).",
							NULL,
							&skade_index_rebuild_commits,
							1000, 0, INT_MAX,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("skade.index_rebuild_misses",
							"Rebuild the snapshot index after this many lookups it could not answer (0: never).",
							NULL,
							&skade_index_rebuild_misses,
							10000, 0, INT_MAX,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("skade.index_rebuild_interval",
							"Rebuild the snapshot index at least this often when something changed (0: never).",
							NULL,
							&skade_index_rebuild_interval,
							60, 0, INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_S,
							NULL, NULL, NULL);
}

/* A catalog name must fit the catalog_name column; "" is rejected at use. */
static bool
check_catalog(char **newval, void **extra, GucSource source)
{
	if (*newval && strlen(*newval) > SKADE_MAX_NAME_LEN)
	{
		GUC_check_errdetail("Catalog names are at most %d bytes long.",
							SKADE_MAX_NAME_LEN);
		return false;
	}
	return true;
}

/* Every allowed root must be an absolute path. */
static bool
check_allowed_roots(char **newval, void **extra, GucSource source)
{
	List	   *elems;
	List	   *prefixes;
	ListCell   *lc;

	if (*newval == NULL || (*newval)[0] == '\0')
		return true;
	if (!SkadeSplitRoots(*newval, &elems, &prefixes))
	{
		GUC_check_errdetail("List syntax is invalid, or an s3:// entry is not bucket[/prefix].");
		return false;
	}
	foreach(lc, elems)
	{
		const char *dir = lfirst(lc);

		if (!is_absolute_path(dir))
		{
			GUC_check_errdetail("\"%s\" is not an absolute path.", dir);
			return false;
		}
	}
	return true;
}

/* An S3 endpoint: empty, or http(s)://host[:port] with nothing after. */
static bool
check_endpoint(char **newval, void **extra, GucSource source)
{
	if (*newval == NULL || (*newval)[0] == '\0' || SkadeEndpointValid(*newval))
		return true;
	GUC_check_errdetail("An endpoint is http://host[:port] or https://host[:port].");
	return false;
}

/*
 * SkadeResolveCatalog
 *		The catalog an API call works on: its argument, else skade.catalog.
 */
const char *
SkadeResolveCatalog(const char *catalog_arg)
{
	const char *catalog = catalog_arg ? catalog_arg : skade_catalog;

	if (catalog == NULL || catalog[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("no catalog name given"),
				 errhint("Pass the catalog argument or SET skade.catalog.")));
	SkadeCheckName(catalog, "catalog");
	return catalog;
}

/*
 * SkadeApplyDurability
 *		Map skade.durability onto synchronous_commit for the current
 *		transaction.  Called whenever a pointer changes; the setting is
 *		transaction-local (like SET LOCAL), so it never leaks into the
 *		session.
 */
void
SkadeApplyDurability(void)
{
	const char *want = NULL;

	if (skade_durability == SKADE_DURABILITY_EVENTUAL)
	{
		if (synchronous_commit != SYNCHRONOUS_COMMIT_OFF)
			want = "off";
	}
	else if (synchronous_commit < SYNCHRONOUS_COMMIT_LOCAL_FLUSH)
		want = "on";

	if (want)
		(void) set_config_option("synchronous_commit", want,
								 PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_LOCAL, true, 0, false);
}
