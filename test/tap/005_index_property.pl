# Property test for the STree64 snapshot index: random commits (SQL API and
# JDBC UPDATEs), drops and re-creations, renames and index rebuilds run
# concurrently with readers at READ COMMITTED and REPEATABLE READ; every
# reader resolves random snapshot ids both through the routing (tree where
# allowed) and from the heap alone on the same snapshot (skade_test.index_check)
# and aborts on any difference.  At least 100k lookups, zero mismatches.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('index');
$node->init;
my $root = $node->basedir . '/meta';
mkdir $root or die;
$node->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'skade'
max_connections = 40
skade.allowed_roots = '$root'
skade.validate_commits = off
skade.database = 'postgres'
skade.index_rebuild_commits = 40
skade.index_rebuild_interval = 1
CONF
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION skade');
$node->safe_psql('postgres', slurp_file('test/functions.sql'));    # skade_test.index_check

# 60 metadata files; file k holds snapshots 10k+1 .. 10k+5, the last current
$node->safe_psql('postgres', <<"SQL");
SELECT format(\$\$COPY (SELECT jsonb_build_object('format-version', 2, 'table-uuid', 'u',
  'location', 'file:/wh/p', 'last-updated-ms', %s, 'last-sequence-number', 5,
  'current-schema-id', 0, 'schemas', '[{"type": "struct", "schema-id": 0, "fields": []}]'::jsonb,
  'current-snapshot-id', %s,
  'snapshots', (SELECT jsonb_agg(jsonb_build_object('snapshot-id', i, 'sequence-number', i - %s,
      'timestamp-ms', 1700000000000 + i, 'manifest-list', 'file:/wh/p/m' || i,
      'summary', jsonb_build_object('operation', 'append'))) FROM generate_series(%s, %s) i))::text)
  TO '$root/%s.metadata.json'\$\$, 1700000000000 + k * 10, k * 10 + 5, k * 10, k * 10 + 1, k * 10 + 5, k)
FROM generate_series(1, 60) k \\gexec
SELECT skade.create_namespace('p');
SELECT skade.register_table('p', 't' || i, 'file://$root/' || i || '.metadata.json') FROM generate_series(1, 5) i;
SELECT skade.register_table('p', 'r', 'file://$root/6.metadata.json');
SELECT skade.register_table('p', 'd', 'file://$root/7.metadata.json');
SQL
$node->safe_psql('postgres', 'SELECT skade.rebuild_index()');
my ($gen0, $tree0) = split /\|/,
  $node->safe_psql('postgres', 'SELECT generation, tree_answers FROM skade.index_status()');

my $check = q{SELECT CASE WHEN skade_test.index_check(array(SELECT (random() * 700)::bigint FROM generate_series(1, 200))) > 0
  THEN 1 / (random() * 0)::int END AS mismatch;};
my %scripts = (
	'w_api.sql' => qq{
\\set t random(1, 5)
\\set k random(1, 60)
SELECT skade.commit_table('p', 't' || :t,
	(SELECT metadata_location FROM skade.load_table('p', 't' || :t, snapshots => 'none')),
	'file://$root/' || :k || '.metadata.json');
},
	'w_jdbc.sql' => qq{
\\set t random(1, 5)
\\set k random(1, 60)
UPDATE iceberg_tables SET metadata_location = 'file://$root/' || :k || '.metadata.json',
	previous_metadata_location = metadata_location
WHERE catalog_name = 'skade' AND table_namespace = 'p' AND table_name = 't' || :t
  AND metadata_location = (SELECT metadata_location FROM iceberg_tables
	WHERE catalog_name = 'skade' AND table_namespace = 'p' AND table_name = 't' || :t);
},
	'w_rename.sql' => q{
UPDATE iceberg_tables SET table_name = CASE table_name WHEN 'r' THEN 'r2' ELSE 'r' END
WHERE catalog_name = 'skade' AND table_namespace = 'p' AND table_name IN ('r', 'r2');
},
	'w_dropcreate.sql' => qq{
\\set k random(1, 60)
BEGIN;
SELECT pg_advisory_xact_lock(7);
DELETE FROM iceberg_tables WHERE catalog_name = 'skade' AND table_namespace = 'p' AND table_name = 'd';
INSERT INTO iceberg_tables VALUES ('skade', 'p', 'd', 'file://$root/' || :k || '.metadata.json', NULL, 'TABLE');
COMMIT;
},
	'w_rebuild.sql' => q{
SELECT skade.rebuild_index();
SELECT pg_sleep(0.3);
},
	'r_rc.sql' => $check,
	'r_rr.sql' => "BEGIN ISOLATION LEVEL REPEATABLE READ;\n$check\nSELECT pg_sleep(0.005);\n$check\nCOMMIT;\n",
);
my %files;
foreach my $name (keys %scripts)
{
	my $file = $node->basedir . "/$name";
	PostgreSQL::Test::Utils::append_to_file($file, $scripts{$name});
	$files{$name} = $file;
}
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
	return ($h, \$out, \$err);
}

my ($hw, $ow, $ew) = pgbench(4, 8, 'w_api.sql@4', 'w_jdbc.sql@4', 'w_rename.sql@1', 'w_dropcreate.sql@1');
my ($hb, $ob, $eb) = pgbench(1, 8, 'w_rebuild.sql@1');
my ($hr, $or, $er) = pgbench(4, 8, 'r_rc.sql@2', 'r_rr.sql@1');
my $writers_ok = $hw->finish;
my $rebuild_ok = $hb->finish;
my $readers_ok = $hr->finish;
note("writers:\n$$ow\n$$ew\nrebuilds:\n$$ob\n$$eb\nreaders:\n$$or\n$$er");

ok($writers_ok, 'writers ran to the end') or diag($$ew);
ok($rebuild_ok, 'rebuilds ran to the end') or diag($$eb);
ok($readers_ok, 'readers ran to the end');
like($$or, qr/number of failed transactions: 0 \(0\.000%\)/,
	'no lookup ever answered differently from the heap');
unlike($$er, qr/division by zero/, 'no mismatch reported');
my ($reads) = $$or =~ /number of transactions actually processed: (\d+)/;
# r_rc checks 200 ids, r_rr 400; weights 2:1
my $lookups = int(($reads // 0) * (2 * 200 + 400) / 3);
cmp_ok($lookups, '>=', 100000, "at least 100k random lookups compared (about $lookups)");
my ($gen1, $tree1) = split /\|/,
  $node->safe_psql('postgres', 'SELECT generation, tree_answers FROM skade.index_status()');
cmp_ok($gen1 - $gen0, '>', 5, 'the index was rebuilt many times meanwhile (' . ($gen1 - $gen0) . ')');
cmp_ok($tree1 - $tree0, '>', 10000, 'and the tree answered ' . ($tree1 - $tree0) . ' of the lookups');

# a final, quiet check of every id against the heap
is($node->safe_psql('postgres',
	'SELECT skade_test.index_check(array(SELECT g FROM generate_series(0, 700) g))'), '0',
	'after the storm: tree and heap agree on every id');
$node->safe_psql('postgres', 'SELECT skade.rebuild_index()');
is($node->safe_psql('postgres',
	'SELECT skade_test.index_check(array(SELECT g FROM generate_series(0, 700) g))'), '0',
	'and after a rebuild');

$node->stop;
done_testing();
