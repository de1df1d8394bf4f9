# Property test for the L1 pointer mirror: concurrent writers (SQL API
# commits, JDBC CAS UPDATEs, drops and re-registrations) and concurrent
# readers at READ COMMITTED and REPEATABLE READ; every read compares what
# skade.load_table()/table_exists() answer (mirror when it can) with what
# the heap says for the same snapshot.  Any difference aborts the client
# (a division by zero at run time), so pgbench must finish cleanly.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $ntables = 6;
my $node = PostgreSQL::Test::Cluster->new('mirror');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'skade'\nmax_connections = 40");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION skade');
$node->safe_psql('postgres', qq{
	SELECT skade.create_namespace('p', '{}', 'pc');
	SELECT skade.register_table('p', 't' || i, 'v0-' || i, 'pc') FROM generate_series(1, $ntables) i;
});

my $check = q{
SELECT CASE WHEN
	(SELECT metadata_location FROM skade.load_table('p', 't' || :t, catalog => 'pc', snapshots => 'none'))
	  IS DISTINCT FROM
	(SELECT metadata_location FROM iceberg_tables WHERE catalog_name = 'pc' AND table_namespace = 'p' AND table_name = 't' || :t)
  THEN 1 / (random() * 0)::int END AS location_mismatch
WHERE skade.table_exists('p', 't' || :t, 'pc');
SELECT CASE WHEN skade.table_exists('p', 't' || :t, 'pc') IS DISTINCT FROM
	EXISTS (SELECT 1 FROM iceberg_tables WHERE catalog_name = 'pc' AND table_namespace = 'p' AND table_name = 't' || :t)
  THEN 1 / (random() * 0)::int END AS exists_mismatch;
};

my %scripts = (
	'w_api.sql' => q{
\set t random(1, 5)
SELECT skade.commit_table('p', 't' || :t,
	(SELECT metadata_location FROM skade.load_table('p', 't' || :t, catalog => 'pc', snapshots => 'none')),
	'a-' || md5(random()::text || clock_timestamp()::text), 'pc');
},
	'w_jdbc.sql' => q{
\set t random(1, 5)
BEGIN;
UPDATE iceberg_tables SET metadata_location = 'j-' || md5(random()::text || clock_timestamp()::text),
	previous_metadata_location = metadata_location
WHERE catalog_name = 'pc' AND table_namespace = 'p' AND table_name = 't' || :t
  AND metadata_location = (SELECT metadata_location FROM iceberg_tables
	WHERE catalog_name = 'pc' AND table_namespace = 'p' AND table_name = 't' || :t);
\set r random(0, 3)
SELECT pg_sleep(:r / 1000.0);
COMMIT;
},
	'w_abort.sql' => q{
\set t random(1, 5)
BEGIN;
UPDATE iceberg_tables SET metadata_location = 'never-' || md5(random()::text)
WHERE catalog_name = 'pc' AND table_namespace = 'p' AND table_name = 't' || :t;
SELECT pg_sleep(0.001);
ROLLBACK;
},
	'w_dropcreate.sql' => q{
BEGIN;
DELETE FROM iceberg_tables WHERE catalog_name = 'pc' AND table_namespace = 'p' AND table_name = 't6';
INSERT INTO iceberg_tables VALUES ('pc', 'p', 't6', 'c-' || md5(random()::text), NULL, 'TABLE')
	ON CONFLICT DO NOTHING;
COMMIT;
},
	'r_rc.sql' => "\\set t random(1, $ntables)\n$check",
	'r_rr.sql' => "\\set t random(1, $ntables)\nBEGIN ISOLATION LEVEL REPEATABLE READ;\n$check\nSELECT pg_sleep(0.002);\n$check\n\\set t random(1, $ntables)\n$check\nCOMMIT;\n",
);
my %files;
foreach my $name (keys %scripts)
{
	my $file = $node->basedir . "/$name";
	PostgreSQL::Test::Utils::append_to_file($file, $scripts{$name});
	$files{$name} = $file;
}

my ($hits0) = $node->safe_psql('postgres', 'SELECT pointer_hits FROM skade.cache_stats()');

sub pgbench
{
	my ($clients, $secs, @scripts) = @_;
	my ($out, $err) = ('', '');
	my @cmd = ('pgbench', '-h', $node->host, '-p', $node->port, '--no-vacuum',
		"--client=$clients", '--jobs=2', "--time=$secs", '--max-tries=1000');
	foreach my $s (@scripts)
	{
		my ($name, $weight) = split /\@/, $s;
		push @cmd, '-f', $files{$name} . "\@$weight";
	}
	push @cmd, 'postgres';
	my $h = IPC::Run::start(\@cmd, '>', \$out, '2>', \$err);
	return $h, \$out, \$err;
}

# writers and readers at once, for a few seconds
my ($hw, $ow, $ew) = pgbench(4, 6, 'w_api.sql@3', 'w_jdbc.sql@3', 'w_abort.sql@1', 'w_dropcreate.sql@1');
my ($hr, $or, $er) = pgbench(6, 6, 'r_rc.sql@2', 'r_rr.sql@1');
my $writers_ok = $hw->finish;
my $readers_ok = $hr->finish;
note("writers:\n$$ow\n$$ew");
note("readers:\n$$or\n$$er");

ok($writers_ok, 'writers ran to the end');
like($$ow, qr/number of failed transactions: 0 \(0\.000%\)/, 'writers ran without failures');
ok($readers_ok, 'readers ran to the end');
like($$or, qr/number of failed transactions: 0 \(0\.000%\)/, 'no reader ever saw the mirror differ from the heap');
unlike($$er, qr/division by zero/, 'no mismatch reported');
my ($reads) = $$or =~ /number of transactions actually processed: (\d+)/;
cmp_ok($reads // 0, '>', 500, "readers compared mirror and heap many times ($reads transactions)");
my ($writes) = $$ow =~ /number of transactions actually processed: (\d+)/;
cmp_ok($writes // 0, '>', 100, "while writers committed ($writes transactions)");
my $hits = $node->safe_psql('postgres', 'SELECT pointer_hits FROM skade.cache_stats()') - $hits0;
cmp_ok($hits, '>', 100, "the mirror answered $hits of those lookups");

$node->stop;
done_testing();
