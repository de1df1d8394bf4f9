# Concurrent commits through both paths at once (skade.commit_table with
# retries on 40001, and the JDBC clients' CAS UPDATE) on a few hot tables:
# no lost update, every successful commit logged exactly once, and each
# table's commit log is one linear chain ending at its current location.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $ntables = 3;
my $node = PostgreSQL::Test::Cluster->new('concurrent');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'skade'\nmax_connections = 40");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION skade');
$node->safe_psql('postgres', qq{
	SELECT skade.create_namespace('c', '{}', 'cc');
	SELECT skade.register_table('c', 't' || i, 'v0-' || i, 'cc') FROM generate_series(1, $ntables) i;
});
# a client of the SQL API that retries lost races (40001) itself and records
# each success in the same transaction as the commit; lost races are counted
# with a sequence, which no rollback undoes, and so are the calls (pgbench's
# per-script transaction counts are not exact: with two threads they have
# been seen to add up to one less than its total)
$node->safe_psql('postgres', q{
	CREATE TABLE api_ok (location text PRIMARY KEY);
	CREATE SEQUENCE api_lost;
	CREATE SEQUENCE api_calls;
	CREATE FUNCTION api_commit(t int) RETURNS void LANGUAGE plpgsql AS $$
	DECLARE
		loc text;
	BEGIN
		PERFORM nextval('api_calls');
		LOOP
			loc := 'api-' || md5(random()::text || clock_timestamp()::text);
			BEGIN
				PERFORM skade.commit_table('c', 't' || t,
					(SELECT metadata_location FROM skade.load_table('c', 't' || t, catalog => 'cc', snapshots => 'none')),
					loc, 'cc');
				INSERT INTO api_ok VALUES (loc);
				RETURN;
			EXCEPTION WHEN serialization_failure THEN
				PERFORM nextval('api_lost');
			END;
		END LOOP;
	END $$;
});

my %scripts = (
	'api.sql' => q{
\set t random(1, :ntables)
SELECT api_commit(:t);
},
	'jdbc.sql' => q{
\set t random(1, :ntables)
UPDATE iceberg_tables SET metadata_location = 'sql-' || md5(random()::text || clock_timestamp()::text),
	previous_metadata_location = metadata_location
WHERE catalog_name = 'cc' AND table_namespace = 'c' AND table_name = 't' || :t
  AND metadata_location = (SELECT metadata_location FROM iceberg_tables
	WHERE catalog_name = 'cc' AND table_namespace = 'c' AND table_name = 't' || :t)
  AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL);
});
my @files;
foreach my $name (sort keys %scripts)
{
	my $file = $node->basedir . "/$name";
	PostgreSQL::Test::Utils::append_to_file($file, $scripts{$name});
	push @files, '-f', $file;
}
my ($out, $err) = ('', '');
my $ok = IPC::Run::run(
	[ 'pgbench', '-h', $node->host, '-p', $node->port, '--no-vacuum',
	  '--client=8', '--jobs=2', '--transactions=150', '--max-tries=1000',
	  '-D', "ntables=$ntables", @files, 'postgres' ],
	'>', \$out, '2>', \$err);
ok($ok, 'pgbench ran concurrent commits through both paths') or diag($err);
note($out);
like($out, qr{actually processed: 1200/1200}, 'pgbench ran every transaction');
my $api_txns = $node->safe_psql('postgres', 'SELECT last_value FROM api_calls WHERE is_called');
cmp_ok($api_txns || 0, '>', 0, "the API client was called ($api_txns)");
my $lost = $node->safe_psql('postgres', 'SELECT last_value FROM api_lost WHERE is_called');
cmp_ok($lost || 0, '>', 0, 'API commits lost races (40001) and were retried (' . ($lost || 0) . ')');
is($node->safe_psql('postgres', 'SELECT count(*) FROM api_ok'), $api_txns,
	'each API call committed once');

my $api_commits = $node->safe_psql('postgres',
	"SELECT count(*) FROM skade.commit_log WHERE catalog_name = 'cc' AND op = 'commit' AND source = 'api'");
my $sql_commits = $node->safe_psql('postgres',
	"SELECT count(*) FROM skade.commit_log WHERE catalog_name = 'cc' AND op = 'commit' AND source = 'sql'");
# a JDBC CAS may update 0 rows, as for a client that lost the race
is($api_commits, $node->safe_psql('postgres', 'SELECT count(*) FROM api_ok'),
	"every successful API commit is logged exactly once ($api_commits)");
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM api_ok o
	WHERE (SELECT count(*) FROM skade.commit_log l WHERE l.metadata_location = o.location AND l.source = 'api') <> 1}),
	'0', 'and under its own location');
cmp_ok($sql_commits, '>', 0, "JDBC commits happened ($sql_commits)");

# linear chains: each commit's previous location is the location logged just
# before it for that table; no two commits share a base
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (
		SELECT op, previous_metadata_location,
			   lag(metadata_location) OVER (PARTITION BY table_name ORDER BY seq) AS logged_before
		FROM skade.commit_log WHERE catalog_name = 'cc') s
	WHERE op = 'commit' AND previous_metadata_location IS DISTINCT FROM logged_before}),
	'0', 'every commit continues the previous one: no lost update');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (
		SELECT table_name, previous_metadata_location FROM skade.commit_log
		WHERE catalog_name = 'cc' AND op = 'commit'
		GROUP BY 1, 2 HAVING count(*) > 1) s}),
	'0', 'no two commits from the same base');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM iceberg_tables t
	WHERE catalog_name = 'cc' AND metadata_location IS DISTINCT FROM (
		SELECT metadata_location FROM skade.commit_log l
		WHERE l.catalog_name = 'cc' AND l.table_name = t.table_name ORDER BY seq DESC LIMIT 1)}),
	'0', 'each chain ends at the current location');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM skade.commit_log
	WHERE catalog_name = 'cc' AND op = 'commit' AND metadata_location NOT LIKE 'api-%' AND metadata_location NOT LIKE 'sql-%'}),
	'0', 'only real commits are logged');

$node->stop;
done_testing();
