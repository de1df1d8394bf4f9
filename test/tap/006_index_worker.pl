# Tests the index worker's life: it builds on its own, survives SIGHUP, comes
# back after being killed and after a server restart, answers correctly each
# time, and never leaks DSM segments across rebuilds, kills and restarts.
# Also: a 10M-id resolve_many runs in bounded memory.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('worker');
$node->init;
my $root = $node->basedir . '/meta';
mkdir $root or die;
$node->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'skade'
skade.allowed_roots = '$root'
skade.database = 'postgres'
skade.index_rebuild_commits = 1
work_mem = '4MB'
# segments in this node's own pg_dynshmem, so that other servers on the
# machine do not change the count
dynamic_shared_memory_type = mmap
CONF
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION skade');
$node->safe_psql('postgres', slurp_file('test/functions.sql'));    # skade_test.index_check
$node->safe_psql('postgres', <<"SQL");
COPY (SELECT jsonb_build_object('format-version', 2, 'table-uuid', 'u', 'location', 'file:/wh/w',
  'last-updated-ms', 1, 'last-sequence-number', 3, 'current-schema-id', 0,
  'schemas', '[{"type": "struct", "schema-id": 0, "fields": []}]'::jsonb, 'current-snapshot-id', 103,
  'snapshots', (SELECT jsonb_agg(jsonb_build_object('snapshot-id', i, 'sequence-number', i - 100,
      'timestamp-ms', 1700000000000 + i, 'manifest-list', 'file:/wh/w/m' || i,
      'summary', jsonb_build_object('operation', 'append'))) FROM generate_series(101, 103) i))::text)
  TO '$root/w.metadata.json';
SELECT skade.create_namespace('w');
SELECT skade.register_table('w', 't', 'file://$root/w.metadata.json');
SQL

sub status
{
	return split /\|/, $node->safe_psql('postgres',
		'SELECT coalesce(worker_pid, 0), generation, entries FROM skade.index_status()');
}
sub answers_ok
{
	my ($what) = @_;
	is($node->safe_psql('postgres',
		q{SELECT string_agg(snapshot_id || ':' || coalesce(name, '-'), ',' ORDER BY snapshot_id)
		  FROM skade.resolve_many(ARRAY[101, 102, 103, 104])}),
		'101:t,102:t,103:t,104:-', "$what: answers are right");
	is($node->safe_psql('postgres', 'SELECT skade_test.index_check(ARRAY[101, 102, 103, 104, 5])'),
		'0', "$what: tree and heap agree");
}
sub segments
{
	opendir(my $d, $node->data_dir . '/pg_dynshmem') or return -1;
	my $n = grep { /^mmap\./ } readdir($d);
	closedir $d;
	return $n;
}

# the count once it is at most $max, or after 10 s (a backend that mapped a
# generation releases it when it exits, a moment after its query returned)
sub segments_settle
{
	my ($max) = @_;
	my $n;
	foreach (1 .. 100)
	{
		$n = segments();
		last if $n <= $max;
		usleep(100_000);
	}
	return $n;
}

# the worker builds by itself (commits since the build >= 1)
ok($node->poll_query_until('postgres',
	'SELECT generation > 0 AND entries = 3 FROM skade.index_status()'),
	'the worker built the index on its own');
my ($pid1, $gen1) = status();
ok($pid1 > 0, "worker running (pid $pid1)");
answers_ok('first build');

# rebuilds never accumulate segments
$node->safe_psql('postgres', 'SELECT skade.rebuild_index()');
my $seg_base = segments();
$node->safe_psql('postgres', 'SELECT skade.rebuild_index()') for 1 .. 10;
cmp_ok(segments_settle($seg_base), '<=', $seg_base, "ten rebuilds leave no segment behind ($seg_base)");

# an idle session does not keep a superseded generation mapped: it lets it
# go when its next transaction ends (it kept it for its whole life before)
sub mapped
{
	my ($pid) = @_;
	open(my $f, '<', "/proc/$pid/maps") or return -1;
	my %seen;
	while (<$f>) { $seen{$1} = 1 if m{pg_dynshmem/(mmap\.\d+)}; }
	close $f;
	return scalar keys %seen;
}
my $idle = $node->background_psql('postgres');
my $ipid = $idle->query_safe('SELECT pg_backend_pid()');
$idle->query_safe('SELECT count(*) FROM skade.resolve_many(ARRAY[101, 102])');
my $m1 = mapped($ipid);
$node->safe_psql('postgres', 'SELECT skade.rebuild_index()') for 1 .. 3;
$idle->query_safe('SELECT 1');
my $m2 = mapped($ipid);
cmp_ok($m2, '<', $m1, "an idle session released the old generation ($m1 -> $m2 mapped segments)");
$idle->quit;

# SIGHUP: reloads, keeps running
$node->reload;
$node->safe_psql('postgres', 'SELECT pg_sleep(0.5)');
my ($pid2) = status();
is($pid2, $pid1, 'the worker survives SIGHUP');

# killed: it comes back, and frees what it held
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid1)");
ok($node->poll_query_until('postgres',
	"SELECT coalesce(worker_pid, 0) NOT IN (0, $pid1) FROM skade.index_status()"),
	'a killed worker is restarted');
my $gen_before = (status())[1];
cmp_ok($node->safe_psql('postgres', 'SELECT skade.rebuild_index()'), '>', $gen_before,
	'the restarted worker publishes a new generation');
answers_ok('after a kill');
cmp_ok(segments_settle($seg_base), '<=', $seg_base, 'no segment leaked by the kill');

# killed in the middle of a build (a larger index keeps it busy)
$node->safe_psql('postgres', <<'SQL');
INSERT INTO skade.snapshot_map
SELECT 'skade', 'w', 'big', g, true, 1, 'file:/x', now() FROM generate_series(1000, 400999) g;
SQL
my ($pid3) = status();
$node->safe_psql('postgres', "SELECT pg_sleep(0.1)");
my $bg = $node->background_psql('postgres', on_error_stop => 0);
$bg->{stdin} .= "SELECT skade.rebuild_index();\n";
$bg->{run}->pump_nb;
$node->safe_psql('postgres', "SELECT pg_sleep(0.05); SELECT pg_terminate_backend($pid3)");
eval { $bg->quit; };
ok($node->poll_query_until('postgres',
	"SELECT coalesce(worker_pid, 0) NOT IN (0, $pid3) FROM skade.index_status()"),
	'a worker killed mid-build is restarted');
$node->safe_psql('postgres', 'SELECT skade.rebuild_index()');
is((status())[2], '400003', 'and builds the whole index');
$node->safe_psql('postgres', q{DELETE FROM skade.snapshot_map WHERE table_name = 'big'});
$node->safe_psql('postgres', 'SELECT skade.rebuild_index()');
cmp_ok(segments_settle($seg_base), '<=', $seg_base, 'no segment leaked by a kill mid-build');

# server restart: a fresh worker rebuilds by itself
$node->restart;
ok($node->poll_query_until('postgres',
	'SELECT generation > 0 AND entries = 3 FROM skade.index_status()'),
	'after a restart the index comes back');
answers_ok('after a restart');

# 10M ids in one call: bounded memory (chunks + a tuplestore that spills)
is($node->safe_psql('postgres',
	'SELECT count(*) || \'/\' || count(name) FROM skade.resolve_many(array(SELECT g FROM generate_series(1, 10000000) g))'),
	'10000000/3', 'a 10M-id array resolves (3 known)');

# a dropped and re-created extension does not inherit the old tree: ids the
# published generation holds are unknown to the new (empty) snapshot_map
is($node->safe_psql('postgres', q{SELECT name FROM skade.resolve_many(ARRAY[101])}), 't',
	'before: 101 resolves');
$node->safe_psql('postgres', <<'SQL');
DROP EXTENSION skade CASCADE;
DROP TABLE public.iceberg_tables, public.iceberg_namespace_properties;
CREATE EXTENSION skade;
SQL
is($node->safe_psql('postgres', q{SELECT coalesce(name, '-') FROM skade.resolve_many(ARRAY[101, 102])}),
	"-\n-", 'after DROP/CREATE EXTENSION the old generation answers nothing');

$node->stop;
done_testing();
