# pg_upgrade across majors: a PostgreSQL 15 cluster with skade preloaded and
# a catalog in use (namespaces with properties; tables created by a JDBC
# client's INSERT, by skade.register_table and by skade.create_table; commits
# through both paths, skade.update_table/commit_table and the clients' CAS
# UPDATE; a view; a REST token; the commit log and the snapshot map that
# follow) is upgraded to 18 with pg_upgrade, --check first, then in copy
# mode and, from a copy of the same old cluster, in --link mode.  Each new
# cluster, with skade preloaded, must answer every read function exactly as
# the old one did, rebuild the index (its worker), serve the L1 pointer
# mirror, take new commits through both paths that continue the old commit
# log (seq, xact_id, previous location), accept a REST token made before the
# upgrade, replay skade's WAL records (resource manager 166) after a crash,
# and find ALTER EXTENSION skade UPDATE a no-op.
#
# Runs only when told where both installations are, each with skade
# installed (test/pg_upgrade.sh builds, installs and runs this):
#   SKADE_UPGRADE_FROM  the old installation (15): its prefix, the directory
#                       holding bin/ (e.g. /usr/lib/postgresql/15), or its
#                       bin/pg_config
#   SKADE_UPGRADE_TO    the new installation (18), the same way; its
#                       bin/pg_upgrade runs the upgrade
use strict;
use warnings;
use Cwd qw(getcwd);
use File::Basename qw(dirname);
use File::Copy qw(copy);
use File::Path qw(make_path);
use HTTP::Tiny;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Version;
use PostgreSQL::Test::RecursiveCopy;
use PostgreSQL::Test::Utils;
use Test::More;

# an installation's prefix (the parent of its bindir), from a prefix or a pg_config
sub install_prefix
{
	my ($what) = @_;
	return undef unless defined $what && $what ne '';
	my $cfg = -d $what ? "$what/bin/pg_config" : $what;
	return undef unless -x $cfg;
	my $bindir = `'$cfg' --bindir`;
	return undef if $?;
	chomp $bindir;
	return dirname($bindir);
}

my $from = install_prefix($ENV{SKADE_UPGRADE_FROM});
my $to = install_prefix($ENV{SKADE_UPGRADE_TO});
if (!defined $from || !defined $to)
{
	plan skip_all => 'pg_upgrade test: set SKADE_UPGRADE_FROM and SKADE_UPGRADE_TO to the old and '
	  . 'new installations (prefix or pg_config), each with skade installed; test/pg_upgrade.sh does';
}
for my $inst ($from, $to)
{
	my $pkglibdir = `'$inst/bin/pg_config' --pkglibdir`;
	chomp $pkglibdir;
	BAIL_OUT("no skade.so in $pkglibdir") unless -f "$pkglibdir/skade.so";
}
-x "$to/bin/pg_upgrade" or BAIL_OUT("no pg_upgrade in $to/bin");
my $src = getcwd();

my $root = PostgreSQL::Test::Utils::tempdir('meta');
chmod 0755, $root;
my $wh = "$root/wh";
mkdir $wh or die;

# ---- fixtures: real table metadata (Java JdbcCatalog's events and
# events_gz, as JSON: their manifests name the run that wrote them), and a
# table with a manifest list and manifest (test/data/avro/hostile.py's "split")
my %java;
for my $t ('events', 'events_gz')
{
	my $from_dir = "$src/test/data/clients/java/warehouse/fixtures/$t/metadata";
	my $dir = "$root/java/$t/metadata";
	make_path($dir);
	opendir(my $d, $from_dir) or die "$from_dir: $!";
	for my $f (sort grep { /\.metadata\.json$/ } readdir $d)
	{
		copy("$from_dir/$f", "$dir/$f") or die "copy $f: $!";
		push @{ $java{$t} }, "file://$dir/$f";
	}
	closedir $d;
}
is(scalar @{ $java{events} }, 5, 'five metadata files of events');
is(scalar @{ $java{events_gz} }, 2, 'two of events_gz');
system('python3', "$src/test/data/avro/hostile.py", "$root/avro") == 0 or die "hostile.py failed";
my $split_list = "$root/avro/split/metadata/list.avro";
-f $split_list or die "no $split_list";
# copies for the commits after the upgrade (new files, same content)
copy(substr($java{events}[4], 7), "$root/java/events/metadata/00005-after.metadata.json") or die;
copy(substr($java{events_gz}[1], 7), "$root/java/events_gz/metadata/00002-after.gz.metadata.json") or die;
system("chmod -R a+rX '$root'");

my $conf = <<"CONF";
shared_preload_libraries = 'skade'
skade.allowed_roots = '$root'
skade.write_roots = '$wh'
skade.index_rebuild_commits = 1
CONF

# ---- the old cluster
my $old = PostgreSQL::Test::Cluster->new('old', install_path => $from);
$old->init;
$old->append_conf('postgresql.conf', $conf);
$old->start;
my $old_major = $old->safe_psql('postgres', "SELECT current_setting('server_version_num')::int / 10000");
my $new_major = PostgreSQL::Version->new(scalar `'$to/bin/pg_config' --version`)->major(separator => '.');
cmp_ok($new_major, '>', $old_major, "upgrading from $old_major to $new_major");

my @ev = @{ $java{events} };
$old->safe_psql('postgres', 'CREATE EXTENSION skade');
$old->safe_psql('postgres', slurp_file('test/functions.sql'));    # skade_test.index_check, upgraded with the rest
my $lsn0 = $old->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
my @gz = @{ $java{events_gz} };
$old->safe_psql('postgres', <<"SQL");
SELECT skade.create_namespace('a', '{"owner": "ann", "comment": "first", "location": "$wh/a"}');
SELECT skade.create_namespace('a.b', '{"k": "v"}');
SELECT skade.create_namespace('empty');
SELECT skade.create_namespace('other', '{}', 'cat2');
-- a table as a JDBC client creates it (INSERT), and its commits (CAS UPDATE)
INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location,
                            previous_metadata_location, iceberg_type)
VALUES ('skade', 'a', 'events', '$ev[0]', NULL, 'TABLE');
UPDATE iceberg_tables SET metadata_location = '$ev[1]', previous_metadata_location = '$ev[0]'
 WHERE catalog_name = 'skade' AND table_namespace = 'a' AND table_name = 'events' AND metadata_location = '$ev[0]';
UPDATE iceberg_tables SET metadata_location = '$ev[2]', previous_metadata_location = '$ev[1]'
 WHERE catalog_name = 'skade' AND table_namespace = 'a' AND table_name = 'events' AND metadata_location = '$ev[1]';
UPDATE iceberg_tables SET metadata_location = '$ev[3]', previous_metadata_location = '$ev[2]'
 WHERE catalog_name = 'skade' AND table_namespace = 'a' AND table_name = 'events' AND metadata_location = '$ev[2]';
UPDATE iceberg_tables SET metadata_location = '$ev[4]', previous_metadata_location = '$ev[3]'
 WHERE catalog_name = 'skade' AND table_namespace = 'a' AND table_name = 'events' AND metadata_location = '$ev[3]';
-- registered, then committed through the SQL API
SELECT skade.register_table('a.b', 'gz', '$gz[0]');
SELECT skade.commit_table('a.b', 'gz', '$gz[0]', '$gz[1]');
-- a hostile.py table with its manifests, registered in another catalog
SELECT skade.register_table('other', 'split', 'file://$root/avro/split/metadata/v1.metadata.json', 'cat2');
-- created by skade (metadata written), then an append and refs through update_table
SELECT skade.create_table('a', 'made', '{"fields": [{"id": 1, "name": "id", "required": false, "type": "long"}]}') IS NOT NULL;
SELECT skade.update_table('a', 'made', '[{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": null}]',
  '[{"action": "add-snapshot", "snapshot": {"snapshot-id": 11, "sequence-number": 1, "timestamp-ms": 1700000000000,
     "manifest-list": "$split_list", "summary": {"operation": "append"}, "schema-id": 0}},
    {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 11, "type": "branch"},
    {"action": "set-snapshot-ref", "ref-name": "v1", "snapshot-id": 11, "type": "tag", "max-ref-age-ms": 86400000}]') IS NOT NULL;
SELECT skade.update_table('a', 'made', '[]', '[{"action": "set-properties", "updates": {"owner": "ann"}}]') IS NOT NULL;
-- a dropped and a renamed table, a commit_transaction
SELECT skade.register_table('a', 'gone', '$gz[0]');
SELECT skade.drop_table('a', 'gone');
SELECT skade.register_table('a', 'old_name', '$ev[2]');
SELECT skade.rename_table('a', 'old_name', 'a.b', 'new_name');
SELECT count(*) FROM skade.commit_transaction('[{"namespace": "a.b", "name": "new_name",
  "expected_location": "$ev[2]", "new_location": "$ev[3]"}]');
-- a view
SELECT skade.create_view('a', 'v', '{
  "schema": {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": false}]},
  "view-version": {"version-id": 1, "timestamp-ms": 1700000000000, "schema-id": 0, "summary": {"engine-name": "spark"},
                   "representations": [{"type": "sql", "sql": "SELECT id FROM a.made", "dialect": "spark"}],
                   "default-namespace": ["a"]},
  "properties": {"comment": "a view"}}') IS NOT NULL;
SELECT skade.update_namespace_properties('a', '{"comment": "second"}', '{owner}');
CREATE ROLE rest_reader LOGIN IN ROLE skade_reader;
SQL
my $lsn1 = $old->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
# skade's WAL records (resource manager 166) in the WAL of the old cluster
# (pg_waldump names a custom resource manager it cannot load "custom166")
sub skade_wal_records
{
	my ($node, $inst, $start, $end) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ "$inst/bin/pg_waldump", '-p', $node->data_dir . '/pg_wal', '-s', $start, '-e', $end,
		'-r', 'custom166' ], '>', \$out, '2>', \$err);
	my $n = () = $out =~ /^rmgr: custom166 /mg;
	diag("pg_waldump: $err") if $n == 0;
	return $n;
}
cmp_ok(skade_wal_records($old, $from, $lsn0, $lsn1), '>', 0, 'old: the WAL holds skade records (rmgr 166)');
my $token = $old->safe_psql('postgres', "SELECT skade.rest_create_token('rest_reader', '30 days', 'made on $old_major')");
like($token, qr/^skade_\d+_[0-9a-f]{64}$/, 'a REST token');
# a second database with skade: every database is upgraded
$old->safe_psql('postgres', 'CREATE DATABASE second');
$old->safe_psql('second', <<"SQL");
CREATE EXTENSION skade;
SELECT skade.create_namespace('s', '{"x": "y"}');
SELECT skade.register_table('s', 't', '$gz[1]');
SQL

# every snapshot id the map knows and a few it does not
my $ids = $old->safe_psql('postgres',
	'SELECT string_agg(DISTINCT snapshot_id::text, \',\') FROM skade.snapshot_map') . ',1,2,3';

# everything a user can observe, label => answer; compared label by label
my @observe = (
	version => q{SELECT extversion || ' ' || extnamespace::regnamespace FROM pg_extension WHERE extname = 'skade'},
	tables => q{SELECT string_agg(format('%s|%s|%s|%s|%s|%s', catalog_name, table_namespace, table_name,
	       metadata_location, previous_metadata_location, iceberg_type), E'\n'
	       ORDER BY catalog_name, table_namespace, table_name) FROM public.iceberg_tables},
	props => q{SELECT string_agg(format('%s|%s|%s|%s', catalog_name, namespace, property_key, property_value), E'\n'
	       ORDER BY 1) FROM public.iceberg_namespace_properties},
	log => q{SELECT string_agg(l::text, E'\n' ORDER BY seq) FROM skade.commit_log l},
	log_seq => q{SELECT last_value FROM skade.commit_log_seq_seq},
	map => q{SELECT string_agg(m::text, E'\n' ORDER BY m::text) FROM skade.snapshot_map m},
	tokens => q{SELECT string_agg(format('%s|%s|%s|%s|%s', encode(token_hash, 'hex'), role_name, expires_at,
	       created_at, comment), E'\n' ORDER BY token_hash) FROM skade.rest_tokens},
	namespaces => q{SELECT string_agg(x, ',' ORDER BY x) FROM skade.list_namespaces() x},
	namespaces_a => q{SELECT string_agg(x, ',' ORDER BY x) FROM skade.list_namespaces('a') x},
	namespaces_cat2 => q{SELECT string_agg(x, ',' ORDER BY x) FROM skade.list_namespaces(NULL, 'cat2') x},
	namespace_exists => q{SELECT format('%s %s %s', skade.namespace_exists('a.b'), skade.namespace_exists('nope'),
	       skade.namespace_exists('other', 'cat2'))},
	namespace_props => q{SELECT string_agg(n || '=' || skade.namespace_properties(n)::text, E'\n' ORDER BY n)
	       FROM unnest(ARRAY['a', 'a.b', 'empty']) n},
	list_tables => q{SELECT string_agg(n || ':' || coalesce((SELECT string_agg(x, ',' ORDER BY x) FROM skade.list_tables(n) x), ''),
	       ' ' ORDER BY n) FROM unnest(ARRAY['a', 'a.b', 'empty']) n},
	list_views => q{SELECT string_agg(x, ',' ORDER BY x) FROM skade.list_views('a') x},
	exists => q{SELECT format('%s %s %s %s %s', skade.table_exists('a', 'events'), skade.table_exists('a', 'gone'),
	       skade.table_exists('a', 'v'), skade.view_exists('a', 'v'), skade.table_exists('other', 'split', 'cat2'))},
	view => q{SELECT skade.view_metadata('a', 'v')},
);
my @tables = ([ 'a', 'events', undef ], [ 'a.b', 'gz', undef ], [ 'a', 'made', undef ],
	[ 'a.b', 'new_name', undef ], [ 'other', 'split', 'cat2' ]);
for my $t (@tables)
{
	my ($ns, $n, $cat) = @$t;
	my $c = defined $cat ? "'$cat'" : 'NULL';
	my $args = "'$ns', '$n'";
	push @observe,
	  "load $n" => "SELECT format('%s|%s|%s', metadata_location, previous_metadata_location, metadata::text) FROM skade.load_table($args, 'all', $c)",
	  "load refs $n" => "SELECT metadata::text FROM skade.load_table($args, 'refs', $c)",
	  "pointers $n" => "SELECT format('%s|%s', metadata_location, previous_metadata_location) FROM skade.load_table_pointers($args, 'none', $c)",
	  "table_metadata $n" => "SELECT skade.table_metadata($args, 'all', $c)::text",
	  "snapshots $n" => "SELECT string_agg(s::text, E'\\n' ORDER BY snapshot_id) FROM skade.snapshots($args, $c) s",
	  "refs $n" => "SELECT string_agg(r::text, E'\\n' ORDER BY name) FROM skade.refs($args, $c) r",
	  "history $n" => "SELECT string_agg(h::text, E'\\n') FROM skade.history($args, $c) h";
}
for my $t ([ 'a', 'made', 'NULL' ], [ 'other', 'split', "'cat2'" ])
{
	my ($ns, $n, $c) = @$t;
	push @observe,
	  "manifests $n" => "SELECT string_agg(m::text, E'\\n' ORDER BY path) FROM skade.manifests('$ns', '$n', NULL, $c) m",
	  "files $n" => "SELECT string_agg(f::text, E'\\n' ORDER BY file_path) FROM skade.files('$ns', '$n', NULL, $c) f",
	  "plan_files $n" => "SELECT string_agg(f::text, E'\\n' ORDER BY file_path) FROM skade.plan_files('$ns', '$n', "
	  . "'{\"type\": \"not-null\", \"term\": \"id\"}', NULL, $c) f",
	  "plan_files none $n" => "SELECT count(*) FROM skade.plan_files('$ns', '$n', "
	  . "'{\"type\": \"is-null\", \"term\": \"id\"}', NULL, $c) f";
}
push @observe,
  resolve => "SELECT string_agg(r::text, E'\\n' ORDER BY snapshot_id) FROM skade.resolve_many(ARRAY[$ids]) r",
  locations => "SELECT skade.resolve_locations(ARRAY[$ids])::text",
  at => "SELECT string_agg(format('%s|%s', snapshot_id, metadata_location), E'\\n') FROM skade.load_table_at('a', 'events', "
  . "(SELECT min(snapshot_id) FROM skade.snapshot_map WHERE table_name = 'events'), 'none')",
  as_of => q{SELECT format('%s|%s|%s', snapshot_id, made_current_at, metadata_location)
	  FROM skade.load_table_as_of('a', 'events', '2100-01-01', 'none')};
my @observe_second = (
	log2 => q{SELECT string_agg(l::text, E'\n' ORDER BY seq) FROM skade.commit_log l},
	load2 => q{SELECT format('%s|%s', metadata_location, metadata::text) FROM skade.load_table('s', 't')},
	props2 => q{SELECT skade.namespace_properties('s')::text},
);

sub observe
{
	my ($node) = @_;
	my @pairs = (map { [ 'postgres', $_ ] } pairs(@observe)), (map { [ 'second', $_ ] } pairs(@observe_second));
	my %got;
	for my $p (@pairs)
	{
		my ($db, $kv) = @$p;
		$got{ $kv->[0] } = $node->safe_psql($db, $kv->[1]);
	}
	return \%got;
}
sub pairs { my @l = @_; my @r; push @r, [ splice(@l, 0, 2) ] while @l; return @r; }

# the index built by the worker, with the mirror warm
ok($old->poll_query_until('postgres', 'SELECT generation > 0 AND commits_since_build = 0 FROM skade.index_status()'),
	'old: the index worker built the index');
my $old_entries = $old->safe_psql('postgres', 'SELECT entries FROM skade.index_status()');
my $want = observe($old);
like($want->{log}, qr/^\(1,create,sql,skade,a,events,/, 'old: the commit log starts with the client\'s INSERT');
like($want->{map}, qr/,events,/, 'old: the snapshot map has the client\'s snapshots');
like($want->{'plan_files made'}, qr/f\.parquet/, 'old: plan_files reads the manifests');
like($want->{'refs made'}, qr/\(v1,tag,11,86400000/, 'old: refs');
# the version this tree installs (skade.control), the same on both sides of the upgrade
my ($skade_version) = slurp_file(dirname(__FILE__) . '/../../skade.control') =~ /^default_version = '([^']+)'/m
  or die 'no default_version in skade.control';
is($want->{version}, "$skade_version skade", "old: skade $skade_version");
is(join(',', sort grep { $want->{$_} eq '' } keys %$want), '', 'old: every observation has an answer');
# the commit log's own order: seq, xact_id and committed_at never go back
my $chain_sql = q{SELECT count(*) FROM (SELECT seq, xact_id, committed_at,
	lag(xact_id) OVER (ORDER BY seq) AS px, lag(committed_at) OVER (ORDER BY seq) AS pt FROM skade.commit_log) x
	WHERE px > xact_id OR pt > committed_at};
is($old->safe_psql('postgres', $chain_sql), '0', 'old: the commit log is in order');
my $old_max_seq = $old->safe_psql('postgres', 'SELECT max(seq) FROM skade.commit_log');
my $old_max_xid = $old->safe_psql('postgres', 'SELECT max(xact_id) FROM skade.commit_log');

# Not skade's: Debian 12's PostgreSQL 15 build (15.20-0+deb12u1) stamps an
# attribute option pg_attver=<number> on every column it creates (tables,
# views, composite types; a skade-free table as well, see "control").
# pg_dump --binary-upgrade carries attoptions over as ALTER TABLE ... ALTER
# COLUMN ... SET (pg_attver=...), which PostgreSQL 18 refuses (unrecognized
# parameter "pg_attver"), so pg_upgrade fails at "Restoring database schemas
# in the new cluster" for any database, skade or not; --check does not see
# it.  Where the old server does this, the option is removed from the
# columns of every user relation before the upgrade (a direct update of
# pg_attribute: the only change made to the old cluster for the upgrade),
# and the test says so.
my $attver_count = q{SELECT count(*) FROM pg_attribute a
	WHERE a.attrelid >= 16384 AND array_to_string(a.attoptions, ',') ~ '(^|,)pg_attver='};
$old->safe_psql('second', 'CREATE TABLE public.control (a int)');
my $control = $old->safe_psql('second',
	q{SELECT coalesce(array_to_string(attoptions, ','), '') FROM pg_attribute WHERE attrelid = 'public.control'::regclass AND attname = 'a'});
if ($control =~ /pg_attver=/)
{
	diag("the old server stamps pg_attver on every column (a skade-free table: {$control}); "
		  . 'PostgreSQL 18 refuses that option: it is removed before pg_upgrade');
	for my $db ('postgres', 'second')
	{
		my $n = $old->safe_psql($db, $attver_count);
		# (ALTER TABLE ... RESET (pg_attver) leaves it: that server stamps it again)
		$old->safe_psql($db, <<'SQL');
UPDATE pg_catalog.pg_attribute a
   SET attoptions = (SELECT array_agg(o) FROM unnest(a.attoptions) o WHERE o !~ '^pg_attver=')
 WHERE a.attrelid >= 16384 AND array_to_string(a.attoptions, ',') ~ '(^|,)pg_attver='
SQL
		is($old->safe_psql($db, $attver_count), '0', "old, $db: pg_attver removed from $n columns");
	}
}
else
{
	pass('the old server stamps no pg_attver');
}
$old->stop;

# a copy of the old cluster, stopped cleanly, for the --link run
my $old_link = PostgreSQL::Test::Cluster->new('old_link', install_path => $from);
PostgreSQL::Test::RecursiveCopy::copypath($old->data_dir, $old_link->data_dir);
chmod 0700, $old_link->data_dir;

# ---- pg_upgrade: --check, then the real run
sub upgrade
{
	my ($old_node, $new_node, $mode) = @_;
	my $dir = PostgreSQL::Test::Utils::tempdir_short();    # pg_upgrade's cwd and sockets
	my @cmd = ("$to/bin/pg_upgrade", '--no-sync',
		'-d', $old_node->data_dir, '-D', $new_node->data_dir,
		'-b', "$from/bin", '-B', "$to/bin",
		'-p', $old_node->port, '-P', $new_node->port, '-s', $dir, $mode);
	my $here = getcwd();
	for my $check (1, 0)
	{
		my @c = $check ? (@cmd, '--check') : @cmd;
		chdir $dir or die;
		my ($out, $err) = ('', '');
		my $ok = IPC::Run::run(\@c, '>', \$out, '2>', \$err);
		chdir $here or die;
		my $what = $check ? "pg_upgrade $mode --check" : "pg_upgrade $mode";
		ok($ok, $what) or do
		{
			diag("$what:\n$out\n$err");
			for my $log (glob($new_node->data_dir . '/pg_upgrade_output.d/*/log/*.log'),
				glob($new_node->data_dir . '/pg_upgrade_output.d/*/*.txt'))
			{
				diag("---- $log\n" . slurp_file($log));
			}
			return 0;
		};
		note($out);
		if ($check)
		{
			like($out, qr/Clusters are compatible/, "$what: clusters are compatible");
		}
		else
		{
			like($out, qr/Upgrade Complete/, "$what: complete");
		}
	}
	return 1;
}

sub new_cluster
{
	my ($name) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name, install_path => $to);
	# 18's initdb enables data checksums by default; the old cluster has none
	my @extra = $node->pg_version >= 18 ? ('--no-data-checksums') : ();
	$node->init(extra => \@extra);
	$node->append_conf('postgresql.conf', $conf);
	return $node;
}

sub check_new
{
	my ($new, $mode) = @_;
	my $major = $new->safe_psql('postgres', "SELECT current_setting('server_version_num')::int / 10000");
	ok($major > $old_major, "$mode: the new cluster is $major");
	my $got = observe($new);
	for my $k (map { $_->[0] } pairs(@observe), pairs(@observe_second))
	{
		is($got->{$k}, $want->{$k}, "$mode: $k as before");
	}
	is($new->safe_psql('postgres', $chain_sql), '0', "$mode: the commit log is in order");

	# the index: rebuilt by its worker from the upgraded map, agreeing with the heap
	ok($new->poll_query_until('postgres',
		'SELECT worker_pid IS NOT NULL AND generation > 0 AND commits_since_build = 0 FROM skade.index_status()'),
		"$mode: the index worker built the index");
	is($new->safe_psql('postgres', 'SELECT entries FROM skade.index_status()'), $old_entries,
		"$mode: the index has the old entries ($old_entries)");
	is($new->safe_psql('postgres', "SELECT skade_test.index_check(ARRAY[$ids])"), '0',
		"$mode: the index agrees with the heap");
	my $tree0 = $new->safe_psql('postgres', 'SELECT tree_answers FROM skade.index_status()');
	is($new->safe_psql('postgres', "SELECT string_agg(r::text, E'\\n' ORDER BY snapshot_id) FROM skade.resolve_many(ARRAY[$ids]) r"),
		$want->{resolve}, "$mode: resolve_many answers as before");
	cmp_ok($new->safe_psql('postgres', 'SELECT tree_answers FROM skade.index_status()'), '>', $tree0,
		"$mode: ... answered through the index");

	# the L1 pointer mirror: answers from shared memory, a client's commit seen at once
	my $hits = $new->safe_psql('postgres', <<'SQL');
SELECT metadata_location FROM skade.load_table('a', 'events', 'none');
SELECT pointer_hits FROM skade.cache_stats();
SQL
	my $h0 = (split /\n/, $hits)[1];
	$new->safe_psql('postgres', q{SELECT metadata_location FROM skade.load_table('a', 'events', 'none')}) for 1 .. 3;
	cmp_ok($new->safe_psql('postgres', 'SELECT pointer_hits FROM skade.cache_stats()'), '>=', $h0 + 3,
		"$mode: the pointer mirror answers");

	# new commits through both paths continue the history
	my $ev5 = "file://$root/java/events/metadata/00005-after.metadata.json";
	my $gz2 = "file://$root/java/events_gz/metadata/00002-after.gz.metadata.json";
	$new->safe_psql('postgres', <<"SQL");
UPDATE iceberg_tables SET metadata_location = '$ev5', previous_metadata_location = '$ev[4]'
 WHERE catalog_name = 'skade' AND table_namespace = 'a' AND table_name = 'events' AND metadata_location = '$ev[4]';
SELECT skade.commit_table('a.b', 'gz', '$gz[1]', '$gz2');
SELECT skade.update_table('a', 'made', '[]', '[{"action": "set-properties", "updates": {"upgraded": "$mode"}}]') IS NOT NULL;
INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type)
VALUES ('skade', 'empty', 'born', '$ev[1]', NULL, 'TABLE');
SQL
	is($new->safe_psql('postgres', q{SELECT metadata_location FROM skade.load_table('a', 'events', 'none')}), $ev5,
		"$mode: the client's commit is served");
	is($new->safe_psql('postgres', "SELECT string_agg(format('%s:%s:%s:%s', seq, op, source, table_name), ',' ORDER BY seq)"
		. " FROM skade.commit_log WHERE seq > $old_max_seq"),
		join(',', ($old_max_seq + 1) . ':commit:sql:events', ($old_max_seq + 2) . ':commit:api:gz',
			($old_max_seq + 3) . ':commit:api:made', ($old_max_seq + 4) . ':create:sql:born'),
		"$mode: new commits continue the commit log's seq");
	is($new->safe_psql('postgres', "SELECT bool_and(xact_id > '$old_max_xid') FROM skade.commit_log WHERE seq > $old_max_seq"),
		't', "$mode: ... with later transaction ids than the old rows ($old_max_xid)");
	# each new row's previous location is the table's last logged location
	is($new->safe_psql('postgres', <<"SQL"),
SELECT count(*) FROM skade.commit_log n
 WHERE n.seq > $old_max_seq AND n.op = 'commit'
   AND n.previous_metadata_location IS DISTINCT FROM
       (SELECT o.metadata_location FROM skade.commit_log o
         WHERE o.seq < n.seq AND o.catalog_name = n.catalog_name
           AND o.table_namespace = n.table_namespace AND o.table_name = n.table_name
         ORDER BY o.seq DESC LIMIT 1)
SQL
		'0', "$mode: each new commit follows the table's last logged location");
	is($new->safe_psql('postgres', $chain_sql), '0', "$mode: the commit log is still in order");
	is($new->safe_psql('postgres', "SELECT string_agg(name, ',') FROM skade.resolve_many(ARRAY[11])"), 'made',
		"$mode: time travel after the new commits");
	like($new->safe_psql('postgres', q{SELECT metadata::text FROM skade.load_table('a', 'made')}),
		qr/"upgraded":\s*"$mode"/, "$mode: update_table's new metadata is served");
	my ($ret, $out, $err) = $new->psql('postgres', q{UPDATE skade.commit_log SET op = 'x'});
	like($err, qr/append-only|not allowed|cannot/i, "$mode: the commit log is still append-only");

	# ALTER EXTENSION UPDATE: nothing to do
	($ret, $out, $err) = $new->psql('postgres', 'ALTER EXTENSION skade UPDATE');
	is($ret, 0, "$mode: ALTER EXTENSION skade UPDATE succeeds");
	like($err, qr/version "\Q$skade_version\E" of extension "skade" is already installed/, "$mode: ... a no-op");
	is($new->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'skade'}), $skade_version,
		"$mode: still $skade_version");

	# skade's WAL records (resource manager 166) replay on the new cluster:
	# a client commit, then a crash; recovery must redo them
	my $ev_again = $ev[4];
	my $l0 = $new->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
	$new->safe_psql('postgres', <<"SQL");
UPDATE iceberg_tables SET metadata_location = '$ev_again', previous_metadata_location = '$ev5'
 WHERE catalog_name = 'skade' AND table_namespace = 'a' AND table_name = 'events';
SQL
	my $l1 = $new->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
	cmp_ok(skade_wal_records($new, $to, $l0, $l1), '>', 0, "$mode: the new cluster writes skade records (rmgr 166)");
	$new->stop('immediate');
	$new->start;
	is($new->safe_psql('postgres', q{SELECT metadata_location FROM skade.load_table('a', 'events', 'none')}), $ev_again,
		"$mode: after crash recovery the last commit is served");
	like(slurp_file($new->logfile), qr/redo done at/, "$mode: crash recovery ran");

	# the REST catalog accepts the token made before the upgrade
	my $rest_port = PostgreSQL::Test::Cluster::get_free_port();
	$new->append_conf('postgresql.conf', "skade.rest_port = $rest_port\nskade.rest_listen_addresses = '127.0.0.1'\n");
	$new->restart;
	my $http = HTTP::Tiny->new(timeout => 10);
	my $r;
	for (1 .. 100)
	{
		$r = $http->get("http://127.0.0.1:$rest_port/v1/skade/namespaces",
			{ headers => { Authorization => "Bearer $token" } });
		last if $r->{status} != 599;
		select(undef, undef, undef, 0.1);
	}
	is($r->{status}, 200, "$mode: REST: the old token is accepted") or diag($r->{content});
	like($r->{content}, qr/"a"/, "$mode: REST: namespaces listed");
	$r = $http->get("http://127.0.0.1:$rest_port/v1/skade/namespaces",
		{ headers => { Authorization => 'Bearer skade_' . ('0' x 64) } });
	is($r->{status}, 401, "$mode: REST: an unknown token is refused");

	unlike(slurp_file($new->logfile), qr/PANIC|TRAP|server process .* was terminated by signal/,
		"$mode: no crash in the server log");
	$new->stop;
}

my $new_copy = new_cluster('new_copy');
if (upgrade($old, $new_copy, '--copy'))
{
	$new_copy->start;
	check_new($new_copy, 'copy');
}
my $new_link = new_cluster('new_link');
if (upgrade($old_link, $new_link, '--link'))
{
	ok(-f $old_link->data_dir . '/global/pg_control.old', 'link: the old cluster is retired (pg_control.old)');
	$new_link->start;
	check_new($new_link, 'link');
}

done_testing();
