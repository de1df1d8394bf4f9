# Shared state knows its scope: the L1 pointer mirror never
# answers with another database's pointers, never survives its catalog table
# being dropped and re-adopted or its trigger being disabled, is not flushed
# by VACUUM/ANALYZE, stays within skade.pointer_cache_entries (and within the
# shared memory that setting gives it), and stays exact across two-phase
# commit.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('scope');
$node->init;
$node->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'skade'
skade.pointer_cache_entries = 64
max_prepared_transactions = 2
CONF
$node->start;

for my $db ('db1', 'db2')
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, <<"SQL");
CREATE EXTENSION skade;
SELECT skade.create_namespace('n');
SELECT skade.register_table('n', 't', 'file:///$db/v1');
SELECT skade.register_table('n', 'gone', 'file:///$db/gone');
SQL
}

sub loc
{
	my ($db, $name) = @_;
	return $node->safe_psql($db,
		"SELECT metadata_location FROM skade.load_table('n', '$name', snapshots => 'none')");
}
sub cstat
{
	my ($db, $col) = @_;
	return $node->safe_psql($db, "SELECT $col FROM skade.cache_stats()");
}

# ---- two databases, same names
for my $round (1 .. 3)
{
	is(loc('db1', 't'), 'file:///db1/v1', "db1 sees its own pointer (round $round)");
	is(loc('db2', 't'), 'file:///db2/v1', "db2 sees its own pointer (round $round)");
}
$node->safe_psql('db2', "SELECT skade.commit_table('n', 't', 'file:///db2/v1', 'file:///db2/v2')");
is(loc('db1', 't'), 'file:///db1/v1', 'a commit in db2 does not move db1');
is(loc('db2', 't'), 'file:///db2/v2', 'db2 sees its commit');
ok(cstat('db1', 'pointer_hits') > 0, 'the mirror answers (hits counted)');

# ---- VACUUM and ANALYZE do not flush the mirror
my $before = cstat('db1', 'pointer_entries');
ok($before >= 4, "mirror holds entries of both databases ($before)");
$node->safe_psql('db1', 'VACUUM public.iceberg_tables');
$node->safe_psql('db1', 'ANALYZE public.iceberg_tables');
$node->safe_psql('db1', 'VACUUM FULL public.iceberg_tables');
is(loc('db1', 't'), 'file:///db1/v1', 'answer after VACUUM/ANALYZE');
is(cstat('db1', 'pointer_entries'), $before, 'VACUUM/ANALYZE flushed nothing');

# ---- a disabled trigger: changes it did not see are never served
loc('db1', 't');
$node->safe_psql('db1', <<'SQL');
ALTER TABLE public.iceberg_tables DISABLE TRIGGER skade_log_pointer_change;
UPDATE public.iceberg_tables SET metadata_location = 'file:///db1/unlogged'
 WHERE table_namespace = 'n' AND table_name = 't';
ALTER TABLE public.iceberg_tables ENABLE ALWAYS TRIGGER skade_log_pointer_change;
SQL
is(loc('db1', 't'), 'file:///db1/unlogged', 'a change made while the trigger was off is seen');
is(loc('db1', 't'), 'file:///db1/unlogged', '... also warm');

# ---- DROP TABLE iceberg_tables CASCADE; adopt: a fresh backend is exact
is($node->safe_psql('db1', "SELECT skade.table_exists('n', 'gone')"), 't', 'warm: gone exists');
$node->safe_psql('db1', <<'SQL');
DROP TABLE public.iceberg_tables CASCADE;
SELECT skade.adopt_jdbc_catalog();
INSERT INTO public.iceberg_tables (catalog_name, table_namespace, table_name, metadata_location)
VALUES ('skade', 'n', 't', 'file:///db1/readopted');
SQL
is($node->safe_psql('db1', "SELECT skade.table_exists('n', 'gone')"), 'f',
	'after drop + adopt, a dropped table is gone for a fresh backend');
is(loc('db1', 't'), 'file:///db1/readopted', 'after drop + adopt, the new row is served');
is(loc('db2', 't'), 'file:///db2/v2', 'db2 unaffected');
is($node->safe_psql('db2', "SELECT skade.table_exists('n', 'gone')"), 't', 'db2 keeps its table');

# ---- two-phase commit: the heap answers while prepared, the new pointer after
$node->safe_psql('db1', <<'SQL');
BEGIN;
SELECT skade.commit_table('n', 't', 'file:///db1/readopted', 'file:///db1/2pc');
PREPARE TRANSACTION 'p1';
SQL
is(loc('db1', 't'), 'file:///db1/readopted', 'prepared: the old pointer');
$node->safe_psql('db1', "COMMIT PREPARED 'p1'");
is(loc('db1', 't'), 'file:///db1/2pc', 'committed prepared: the new pointer');
is(loc('db1', 't'), 'file:///db1/2pc', '... also warm');
$node->safe_psql('db1', <<'SQL');
BEGIN;
SELECT skade.commit_table('n', 't', 'file:///db1/2pc', 'file:///db1/rolled-back');
PREPARE TRANSACTION 'p2';
ROLLBACK PREPARED 'p2';
SQL
is(loc('db1', 't'), 'file:///db1/2pc', 'rolled back prepared: unchanged');

# ---- a working set larger than the mirror: bounded, evicting, exact
my $free_before = $node->safe_psql('db1',
	'SELECT sum(allocated_size) FROM pg_shmem_allocations WHERE name IS NULL');
$node->safe_psql('db1', <<'SQL');
SELECT skade.create_namespace('big');
SELECT count(skade.register_table('big', 't' || i, 'file:///db1/big/' || i))
  FROM generate_series(1, 500) i;
SQL
my $checks = $node->safe_psql('db1', <<'SQL');
SELECT count(*) FILTER (WHERE l.metadata_location IS DISTINCT FROM 'file:///db1/big/' || i)
  FROM generate_series(1, 500) i, generate_series(1, 2) r,
       LATERAL skade.load_table('big', 't' || i, snapshots => 'none') l
SQL
is($checks, '0', '1000 lookups over 500 tables through a 64-entry mirror: all exact');
my $entries = cstat('db1', 'pointer_entries');
ok($entries <= 64, "mirror entries within skade.pointer_cache_entries ($entries <= 64)");
ok($entries >= 32, "the mirror still fills when full ($entries)");
my $free_after = $node->safe_psql('db1',
	'SELECT sum(allocated_size) FROM pg_shmem_allocations WHERE name IS NULL');
is($free_after, $free_before, "free shared memory unchanged ($free_before bytes)");
# commits to tables that are not mirrored still land
$node->safe_psql('db1', <<'SQL');
SELECT count(skade.commit_table('big', 't' || i, 'file:///db1/big/' || i, 'file:///db1/big2/' || i))
  FROM generate_series(1, 500) i;
SQL
is($node->safe_psql('db1', <<'SQL'), '0', 'after 500 commits: all exact');
SELECT count(*) FILTER (WHERE l.metadata_location IS DISTINCT FROM 'file:///db1/big2/' || i)
  FROM generate_series(1, 500) i, LATERAL skade.load_table('big', 't' || i, snapshots => 'none') l
SQL

$node->stop;
done_testing();
