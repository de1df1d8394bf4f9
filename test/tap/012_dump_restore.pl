# A pg_dump of a skade database restores exactly: plain
# pg_dump | psql (ON_ERROR_STOP) and pg_dump -Fc | pg_restore
# --single-transaction into new databases give the same catalog rows,
# namespace properties, commit log (every row, seq included), snapshot_map
# and answers of every read function; the index is rebuilt from the restored
# map; new commits through both paths continue the history.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init;
my $root = $node->basedir . '/meta';
mkdir $root or die;
$node->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'skade'
skade.allowed_roots = '$root'
skade.database = 'plain'
CONF
$node->start;

for my $k (0 .. 5)
{
	my $snaps = join(',', map {
		my $id = $k * 1000 + $_;
		qq({"snapshot-id": $id, "sequence-number": $_, "timestamp-ms": 17000000000$_,
		   "manifest-list": "file:$root/ml-$id.avro", "summary": {"operation": "append"}})
	} 1 .. 3);
	append_to_file("$root/m$k.json", qq({"format-version": 2, "table-uuid": "u",
	  "location": "file:$root/t", "last-updated-ms": 1, "last-sequence-number": 3,
	  "last-column-id": 0, "current-schema-id": 0,
	  "schemas": [{"type": "struct", "schema-id": 0, "fields": []}],
	  "current-snapshot-id": @{[$k * 1000 + 3]}, "snapshots": [$snaps]}));
}
chmod 0755, $root;

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', 'CREATE EXTENSION skade');
$node->safe_psql('src', slurp_file('test/functions.sql'));    # skade_test.index_check, dumped with the rest
$node->safe_psql('src', <<"SQL");
SELECT skade.create_namespace('a', '{"owner": "ann", "comment": "first"}');
SELECT skade.create_namespace('a.b');
SELECT skade.register_table('a', 't1', 'file://$root/m0.json');
SELECT skade.register_table('a', 't2', 'file://$root/m1.json');
SELECT skade.register_table('a.b', 't3', 'file://$root/m2.json');
SELECT skade.commit_table('a', 't1', 'file://$root/m0.json', 'file://$root/m3.json');
UPDATE iceberg_tables SET previous_metadata_location = metadata_location,
       metadata_location = 'file://$root/m4.json'
 WHERE table_namespace = 'a' AND table_name = 't2';
SELECT skade.rename_table('a.b', 't3', 'a', 't3r');
SELECT skade.register_table('a', 'gone', 'file://$root/m5.json');
SELECT skade.drop_table('a', 'gone');
SELECT count(*) FROM skade.commit_transaction('[
  {"namespace": "a", "name": "t1", "expected_location": "file://$root/m3.json",
   "new_location": "file://$root/m5.json"}]');
INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, iceberg_type)
VALUES ('skade', 'a', 'v', 'file://$root/m2.json', 'VIEW');
SELECT skade.update_namespace_properties('a', '{"comment": "second"}');
SQL

# everything a user can observe, as one text
sub observe
{
	my ($db) = @_;
	return $node->safe_psql($db, <<'SQL');
SELECT 'tables', string_agg(format('%s|%s|%s|%s|%s|%s', catalog_name, table_namespace, table_name,
       metadata_location, previous_metadata_location, iceberg_type), E'\n'
       ORDER BY catalog_name, table_namespace, table_name) FROM public.iceberg_tables;
SELECT 'props', string_agg(format('%s|%s|%s|%s', catalog_name, namespace, property_key, property_value), E'\n'
       ORDER BY 1) FROM public.iceberg_namespace_properties;
SELECT 'log', string_agg(l::text, E'\n' ORDER BY seq) FROM skade.commit_log l;
SELECT 'map', string_agg(m::text, E'\n' ORDER BY m::text) FROM skade.snapshot_map m;
SELECT 'ns', string_agg(x, ',' ORDER BY x) FROM skade.list_namespaces() x;
SELECT 'nsb', string_agg(x, ',' ORDER BY x) FROM skade.list_namespaces('a') x;
SELECT 'props a', skade.namespace_properties('a')::text;
SELECT 'list', string_agg(x, ',' ORDER BY x) FROM skade.list_tables('a') x;
SELECT 'load ' || n, metadata_location, previous_metadata_location, metadata->>'current-snapshot-id'
  FROM unnest(ARRAY['t1', 't2', 't3r']) n, LATERAL skade.load_table('a', n) l;
SELECT 'exists', skade.table_exists('a', 'gone'), skade.table_exists('a', 't1'), skade.table_exists('a', 'v');
SELECT 'snaps', string_agg(snapshot_id::text, ',' ORDER BY snapshot_id) FROM skade.snapshots('a', 't1');
SELECT 'history', string_agg(h::text, E'\n') FROM skade.history('a', 't1') h;
SELECT 'resolve', string_agg(snapshot_id || ':' || coalesce(name, '-'), ',' ORDER BY snapshot_id)
  FROM skade.resolve_many(ARRAY[1, 2, 3, 1003, 2003, 3003, 4003, 5003, 9]);
SELECT 'at', metadata_location FROM skade.load_table_at('a', 't1', 3003);
SELECT 'seq', last_value FROM skade.commit_log_seq_seq;
SQL
}

my $want = observe('src');
like($want, qr/log\|\(1,/, 'the source has a history');

# ---- plain dump, restored by psql with ON_ERROR_STOP
my $dump = $node->basedir . '/src.sql';
$node->command_ok([ 'pg_dump', '-d', $node->connstr('src'), '-f', $dump ], 'pg_dump (plain)');
$node->safe_psql('postgres', 'CREATE DATABASE plain');
my ($ret, $out, $err) = $node->psql('plain', undef,
	extra_params => [ '-v', 'ON_ERROR_STOP=1', '-f', $dump ]);
is($ret, 0, 'psql restores the plain dump without an error') or diag($err);
unlike($err, qr/ERROR/, 'no ERROR during the restore');
is(observe('plain'), $want, 'plain restore: rows, log, map and answers identical');

# ---- custom format, pg_restore --single-transaction
my $archive = $node->basedir . '/src.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-d', $node->connstr('src'), '-f', $archive ],
	'pg_dump -Fc');
$node->safe_psql('postgres', 'CREATE DATABASE custom');
$node->command_ok([ 'pg_restore', '--single-transaction', '-d', $node->connstr('custom'), $archive ],
	'pg_restore --single-transaction');
is(observe('custom'), $want, 'pg_restore: rows, log, map and answers identical');

# ---- the restored database lives on: the index, new commits through both paths
is($node->safe_psql('plain', 'SELECT skade.rebuild_index() > 0'), 't', 'the index rebuilds from the restored map');
is($node->safe_psql('plain', 'SELECT skade_test.index_check(ARRAY[1, 1003, 2003, 3003, 4003, 5003])'), '0',
	'restored index agrees with the heap');
my $last = $node->safe_psql('plain', 'SELECT max(seq) FROM skade.commit_log');
$node->safe_psql('plain', <<"SQL");
SELECT skade.commit_table('a', 't2', 'file://$root/m4.json', 'file://$root/m0.json');
UPDATE iceberg_tables SET metadata_location = 'file://$root/m1.json'
 WHERE table_namespace = 'a' AND table_name = 't3r';
SQL
is($node->safe_psql('plain', "SELECT string_agg(seq || ':' || op || ':' || table_name, ',' ORDER BY seq) FROM skade.commit_log WHERE seq > $last"),
	($last + 1) . ':commit:t2,' . ($last + 2) . ':commit:t3r', 'new commits continue the history (API and client)');
is($node->safe_psql('plain', "SELECT metadata_location FROM skade.load_table('a', 't3r')"),
	"file://$root/m1.json", 'a client commit after the restore is served');
is($node->safe_psql('custom', "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'public.iceberg_tables'::regclass AND tgname LIKE 'skade%' AND tgenabled = 'A'"),
	'2', 'the restored catalog table is attached (two triggers, ENABLE ALWAYS)');
is($node->safe_psql('custom', "SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'skade'"),
	'skade', 'the extension lives in schema skade');

# ---- a CREATE TABLE over a catalog that holds something still fails as before
($ret, $out, $err) = $node->psql('src',
	'CREATE TABLE public.iceberg_tables (catalog_name text)');
like($err, qr/already exists/, 'CREATE TABLE over a used catalog table: refused');
is($node->safe_psql('src', 'SELECT count(*) > 0 FROM public.iceberg_tables'), 't', 'nothing lost');

$node->stop;
done_testing();
