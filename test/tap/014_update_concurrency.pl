# Server-side commits under concurrency: pgbench clients run
# skade.update_table() against one table at once, some with a requirement
# that races (assert-ref-snapshot-id on main while others move main), beside
# plain JDBC-style UPDATEs that roll the pointer back and forth between files
# update_table wrote.  No update is lost (every applied property is in the
# final metadata), the commit log is one linear chain (each commit's previous
# location is the commit before it), and every failure is a clean 40001.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('updates');
$node->init;
my $wh = $node->basedir . '/wh';
mkdir $wh or die;
$node->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'skade'
skade.allowed_roots = '$wh'
skade.write_roots = '$wh'
CONF
$node->start;
$node->safe_psql('postgres', <<"SQL");
CREATE EXTENSION skade;
SELECT skade.create_namespace('c', '{"location": "$wh/c"}');
SELECT skade.create_table('c', 't', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}');
SQL

# each transaction sets a property only it sets: c<its xid> = "x"
my $props = $node->basedir . '/props.sql';
append_to_file($props, <<'S');
SELECT skade.update_table('c', 't', '[]', jsonb_build_array(jsonb_build_object('action', 'set-properties', 'updates', jsonb_build_object('c' || txid_current(), 'x')))) IS NOT NULL;
S
my ($out, $err) = ('', '');
my $bench = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '4', '-j', '2', '-T', '8', '-f', $props,
	  '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$out, '2>', \$err);
$bench->finish;
like($out, qr/number of failed transactions: 0/, 'no update_table call failed');
my ($done) = $out =~ /number of transactions actually processed: (\d+)/;
ok($done > 20, "update_table commits ran concurrently ($done)");

# no lost update: the final properties hold every key some transaction set
my $keys = $node->safe_psql('postgres',
	q{SELECT count(*) FROM jsonb_object_keys((SELECT (metadata::jsonb)->'properties' FROM skade.load_table('c', 't'))) k WHERE k ~ '^c[0-9]+$'});
is($keys, $done, "every applied property is in the final metadata ($keys keys for $done commits)");

# a linear chain: each commit starts where the one before it ended
is($node->safe_psql('postgres', <<'SQL'), '0', 'the commit log is one linear chain');
SELECT count(*) FROM (
  SELECT previous_metadata_location IS DISTINCT FROM lag(metadata_location) OVER (ORDER BY seq) AS broken
  FROM skade.commit_log WHERE table_name = 't') c
WHERE broken
SQL

# racing requirements: clients move main between two snapshots while
# asserting where it is; each either applies or fails with 40001
$node->safe_psql('postgres', <<"SQL");
SELECT skade.update_table('c', 't', '[]', '[
  {"action": "add-snapshot", "snapshot": {"snapshot-id": 1, "sequence-number": 1, "timestamp-ms": 1700000000000,
   "manifest-list": "$wh/l1.avro", "summary": {"operation": "append"}, "schema-id": 0}},
  {"action": "add-snapshot", "snapshot": {"snapshot-id": 2, "sequence-number": 2, "timestamp-ms": 1700000000001,
   "manifest-list": "$wh/l2.avro", "summary": {"operation": "append"}, "schema-id": 0}},
  {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 1, "type": "branch"}]');
SQL
my $race = $node->basedir . '/race.sql';
append_to_file($race, <<'S');
\set from random(1, 2)
SELECT skade.update_table('c', 't', jsonb_build_array(jsonb_build_object('type', 'assert-ref-snapshot-id', 'ref', 'main', 'snapshot-id', :from)), jsonb_build_array(jsonb_build_object('action', 'set-snapshot-ref', 'ref-name', 'main', 'type', 'branch', 'snapshot-id', 3 - :from))) IS NOT NULL;
S
# ... and a JDBC client rolls the pointer back and forth (plain UPDATE)
my $flip = $node->basedir . '/flip.sql';
append_to_file($flip, <<'S');
UPDATE iceberg_tables SET metadata_location = previous_metadata_location, previous_metadata_location = metadata_location
 WHERE table_namespace = 'c' AND table_name = 't' AND previous_metadata_location IS NOT NULL;
S
($out, $err) = ('', '');
$bench = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '4', '-j', '2', '-T', '6', '--verbose-errors', '-f', "$race\@3", '-f', "$flip\@1",
	  '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$out, '2>', \$err);
$bench->finish;
my ($failed) = $out =~ /number of failed transactions: (\d+)/;
ok(defined $failed && $failed > 0, "the race made requirements fail (" . ($failed // 'none') . ")");
unlike($err, qr/aborted/, 'no client aborted: every failure was a serialization failure (40001)');
my @errors = $err =~ /ERROR:\s+(.*)/g;
my @unclean = grep { !/Requirement failed: (branch main has changed|branch main was created concurrently|branch or tag main is missing)/ } @errors;
ok(@errors > 0, 'the failures were reported (' . scalar(@errors) . ')');
is(scalar(@unclean), 0, 'every failure is the requirement') or diag(join("\n", @unclean[0 .. 4]));
is($node->safe_psql('postgres', <<'SQL'), '0', 'still one linear chain after the race');
SELECT count(*) FROM (
  SELECT previous_metadata_location IS DISTINCT FROM lag(metadata_location) OVER (ORDER BY seq) AS broken
  FROM skade.commit_log WHERE table_name = 't') c
WHERE broken
SQL
# main and the snapshot log agree with the number of applied moves
is($node->safe_psql('postgres', q{SELECT (m->'current-snapshot-id')::text = (m->'snapshot-log'->-1->'snapshot-id')::text
  FROM (SELECT metadata::jsonb AS m FROM skade.load_table('c', 't')) x}), 't', 'main is the last snapshot-log entry');

# every metadata file in the table's directory is one the commit log names:
# no failure left a file behind, and the journal has no orphan
my @files = map { "$_" } glob("$wh/c/t/metadata/*.metadata.json");
my $named = $node->safe_psql('postgres', q{SELECT count(DISTINCT metadata_location) FROM skade.commit_log WHERE table_name = 't'});
is(scalar(@files), $named, "every metadata file written is committed (" . scalar(@files) . " files)");
is($node->safe_psql('postgres', 'SELECT count(*) FROM skade.orphan_files()'), '0', 'no orphan files');

$node->stop;
done_testing();
