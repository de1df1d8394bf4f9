# Hot standbys answer exactly as their own heap does: a
# primary takes concurrent commits through both paths (skade.commit_table and
# client UPDATEs, from pgbench) plus renames, drops, re-registrations and
# commit_transaction; readers on a streaming standby, at READ COMMITTED and
# REPEATABLE READ, compare every read function with the standby's heap inside
# one transaction.  Then the standby is promoted and takes commits itself.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
my $root = $primary->basedir . '/meta';
mkdir $root or die;
my $conf = <<"CONF";
shared_preload_libraries = 'skade'
skade.allowed_roots = '$root'
skade.database = 'postgres'
skade.index_rebuild_commits = 20
CONF
$primary->append_conf('postgresql.conf', $conf);
$primary->start;

# ten metadata files: m<k>.json holds snapshots k*1000+1 .. k*1000+3
for my $k (0 .. 9)
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

my @tables = map { "t$_" } 1 .. 20;
my @other = map { ("r$_", "r${_}x") } 1 .. 5;
my $names = join(',', map { "'$_'" } @tables, @other);
$primary->safe_psql('postgres', <<"SQL");
CREATE EXTENSION skade;
SELECT skade.create_namespace('s');
SELECT count(skade.register_table('s', n, 'file://$root/m0.json'))
  FROM unnest(ARRAY[$names]) n WHERE n NOT LIKE '%x';
-- mismatches between every read function and the heap, for the caller's snapshot
CREATE FUNCTION public.mismatches() RETURNS text LANGUAGE plpgsql STABLE AS \$f\$
DECLARE
	n text;
	loc text;
	bad text := '';
	k int;
	got text;
	want text;
BEGIN
	FOREACH n IN ARRAY ARRAY[$names] LOOP
		SELECT metadata_location INTO loc FROM public.iceberg_tables
		 WHERE catalog_name = 'skade' AND table_namespace = 's' AND table_name = n;
		IF skade.table_exists('s', n) IS DISTINCT FROM (loc IS NOT NULL) THEN
			bad := bad || n || ':table_exists ';
		END IF;
		CONTINUE WHEN loc IS NULL;
		IF (SELECT metadata_location FROM skade.load_table('s', n, snapshots => 'none'))
		   IS DISTINCT FROM loc THEN
			bad := bad || n || ':load_table(none) ';
		END IF;
		IF (SELECT metadata_location FROM skade.load_table('s', n)) IS DISTINCT FROM loc THEN
			bad := bad || n || ':load_table ';
		END IF;
		k := substring(loc FROM 'm([0-9])\\.json\$')::int;
		IF (SELECT string_agg(snapshot_id::text, ',' ORDER BY snapshot_id)
			  FROM skade.snapshots('s', n)) IS DISTINCT FROM
		   format('%s,%s,%s', k * 1000 + 1, k * 1000 + 2, k * 1000 + 3) THEN
			bad := bad || n || ':snapshots ';
		END IF;
		IF (SELECT (table_metadata->>'current-snapshot-id')::bigint
			  FROM skade.table_metadata('s', n) table_metadata) IS DISTINCT FROM k * 1000 + 3 THEN
			bad := bad || n || ':table_metadata ';
		END IF;
	END LOOP;
	IF (SELECT string_agg(x, ',' ORDER BY x) FROM skade.list_tables('s') x) IS DISTINCT FROM
	   (SELECT string_agg(table_name, ',' ORDER BY table_name) FROM public.iceberg_tables
		 WHERE catalog_name = 'skade' AND table_namespace = 's') THEN
		bad := bad || 'list_tables ';
	END IF;
	-- time travel: the table each snapshot id belongs to, as snapshot_map says
	SELECT string_agg(snapshot_id || ':' || coalesce(name, '-'), ',' ORDER BY snapshot_id)
	  INTO got
	  FROM skade.resolve_many(ARRAY(SELECT kk * 1000 + j FROM generate_series(0, 9) kk,
									generate_series(1, 3) j));
	SELECT string_agg(id || ':' || coalesce(
			(SELECT m.table_name FROM skade.snapshot_map m WHERE m.snapshot_id = id
			 ORDER BY m.made_current DESC, m.seq LIMIT 1), '-'), ',' ORDER BY id)
	  INTO want
	  FROM (SELECT kk * 1000 + j AS id FROM generate_series(0, 9) kk, generate_series(1, 3) j) i;
	IF got IS DISTINCT FROM want THEN
		bad := bad || format('resolve_many (%s, heap %s) ', got, want);
	END IF;
	RETURN bad;
END
\$f\$;
SQL

my $backup = 'b';
$primary->backup($backup);
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, $backup, has_streaming => 1);
$standby->start;
$primary->wait_for_catchup($standby);

is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'standby in recovery');
is($standby->safe_psql('postgres', 'SELECT public.mismatches()'), '', 'standby exact after catch-up');

# rebuild_index() on a standby fails at once, with a clear error
my ($ret, $out, $err) = $standby->psql('postgres',
	"SET statement_timeout = '20s'; SELECT skade.rebuild_index()");
like($err, qr/not built on a hot standby/, 'rebuild_index() on a standby: a clear error');

# ---- concurrent commits on the primary: pgbench, both paths
my $api = $primary->basedir . '/api.sql';
my $client = $primary->basedir . '/client.sql';
append_to_file($api, <<"S");
\\set k random(0, 9)
\\set id :client_id * 10 + random(1, 10)
SELECT skade.commit_table('s', 't' || :id, (SELECT metadata_location FROM iceberg_tables WHERE table_namespace = 's' AND table_name = 't' || :id), 'file://$root/m' || :k || '.json');
S
append_to_file($client, <<"S");
\\set k random(0, 9)
\\set id :client_id * 10 + random(1, 10)
UPDATE iceberg_tables SET previous_metadata_location = metadata_location, metadata_location = 'file://$root/m' || :k || '.json' WHERE catalog_name = 'skade' AND table_namespace = 's' AND table_name = 't' || :id;
S
my ($pb_out, $pb_err) = ('', '');
my $pgbench = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '2', '-T', '20', '-f', "$api\@1", '-f', "$client\@1",
	  '-h', $primary->host, '-p', $primary->port, 'postgres' ],
	'>', \$pb_out, '2>', \$pb_err);

my $checks = 0;
my $bad = 0;
my @bad;
for my $round (1 .. 40)
{
	# renames, drops, re-registrations and commit_transaction on the r tables
	my $i = 1 + $round % 5;
	my $k = $round % 10;
	$primary->safe_psql('postgres', <<"SQL");
SELECT CASE WHEN skade.table_exists('s', 'r$i') THEN skade.rename_table('s', 'r$i', 's', 'r${i}x')
            ELSE skade.rename_table('s', 'r${i}x', 's', 'r$i') END;
SQL
	if ($round % 7 == 0)
	{
		$primary->safe_psql('postgres', <<"SQL");
SELECT skade.drop_table('s', n) FROM unnest(ARRAY['r$i', 'r${i}x']) n WHERE skade.table_exists('s', n);
SELECT skade.register_table('s', 'r$i', 'file://$root/m$k.json');
SQL
	}
	$primary->safe_psql('postgres', <<"SQL");
SELECT count(*) FROM skade.commit_transaction((
  SELECT jsonb_agg(jsonb_build_object('namespace', 's', 'name', table_name,
         'expected_location', metadata_location, 'new_location', 'file://$root/m$k.json'))
    FROM iceberg_tables WHERE table_namespace = 's' AND table_name LIKE 'r%'));
SQL
	for my $level ('READ COMMITTED', 'REPEATABLE READ')
	{
		my $r = $standby->safe_psql('postgres',
			"BEGIN ISOLATION LEVEL $level; SELECT public.mismatches(); SELECT public.mismatches(); COMMIT;");
		$checks++;
		if ($r =~ /\S/)
		{
			$bad++;
			push @bad, "$level: $r" if @bad < 5;
		}
	}
}
$pgbench->finish;
like($pb_out, qr/number of transactions actually processed: [1-9]/, 'pgbench committed');
note("pgbench: $pb_out");
is($bad, 0, "standby: $checks checks (2 passes each) during concurrent commits, no mismatch")
  or diag(join("\n", @bad));
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', 'SELECT public.mismatches()'), '', 'standby exact after catch-up');
is($standby->safe_psql('postgres', 'SELECT public.mismatches()'), '', '... twice');

# a TRUNCATE sets no xmax: while it runs (and after), the standby stays exact
my ($tr_out, $tr_err) = ('', '');
my $truncate = IPC::Run::start(
	[ 'psql', '-X', '-v', 'ON_ERROR_STOP=1', '-h', $primary->host, '-p', $primary->port,
	  '-d', 'postgres', '-c', <<"SQL" ],
BEGIN;
TRUNCATE public.iceberg_tables;
INSERT INTO public.iceberg_tables (catalog_name, table_namespace, table_name, metadata_location)
SELECT 'skade', 's', n, 'file://$root/m5.json' FROM unnest(ARRAY[$names]) n WHERE n NOT LIKE '%x';
SELECT pg_sleep(4);
COMMIT;
SQL
	'>', \$tr_out, '2>', \$tr_err);
my ($during, $during_bad) = (0, 0);
while ($truncate->pumpable)
{
	my $r = $standby->safe_psql('postgres', 'SELECT public.mismatches()');
	$during++;
	$during_bad++ if $r =~ /\S/;
	$truncate->pump_nb;
	select(undef, undef, undef, 0.05);
}
$truncate->finish;
is($during_bad, 0, "standby exact while a TRUNCATE replays ($during checks)");
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', 'SELECT public.mismatches()'), '', 'standby exact after the TRUNCATE');
is($standby->safe_psql('postgres', "SELECT metadata_location FROM skade.load_table('s', 't4', snapshots => 'none')"),
	"file://$root/m5.json", 'the re-inserted row is served');

# a drop on the primary is seen by the standby's table_exists
$primary->safe_psql('postgres', "SELECT skade.drop_table('s', 't1')");
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', "SELECT skade.table_exists('s', 't1')"), 'f',
	'a drop on the primary is seen on the standby');

# ---- promotion: the promoted node serves and takes commits exactly
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die;
is($standby->safe_psql('postgres', 'SELECT public.mismatches()'), '', 'promoted: exact');
$standby->safe_psql('postgres', <<"SQL");
SELECT skade.commit_table('s', 't2', (SELECT metadata_location FROM iceberg_tables WHERE table_namespace = 's' AND table_name = 't2'), 'file://$root/m9.json');
UPDATE iceberg_tables SET metadata_location = 'file://$root/m8.json' WHERE table_namespace = 's' AND table_name = 't3';
SELECT skade.register_table('s', 't1', 'file://$root/m7.json');
SQL
is($standby->safe_psql('postgres', 'SELECT public.mismatches()'), '', 'promoted, after commits: exact');
is($standby->safe_psql('postgres', 'SELECT public.mismatches()'), '', '... warm');
is($standby->safe_psql('postgres',
	"SELECT metadata_location FROM skade.load_table('s', 't2', snapshots => 'none')"),
	"file://$root/m9.json", 'promoted: the new pointer is served');
ok($standby->safe_psql('postgres', 'SELECT skade.rebuild_index() > 0'), 'promoted: the index builds');
ok($standby->safe_psql('postgres', 'SELECT pointer_hits FROM skade.cache_stats()') > 0,
	'the mirror served reads on the standby');
is($standby->safe_psql('postgres', 'SELECT public.mismatches()'), '', 'promoted, with the index: exact');

$primary->stop;
$standby->stop;
done_testing();
