# Upgrades: a database on the previous version (1.0), with
# catalog data, is updated by ALTER EXTENSION skade UPDATE and then has
# exactly the schema of a fresh install (pg_dump --schema-only
# --binary-upgrade, which spells out every member of the extension, compared
# with OIDs masked), keeps its data and history, and works (through every
# update script in sql/updates, 1.0--1.1 to the version skade.control names).  Every
# later SQL change ships as a new version with its upgrade script.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Basename qw(dirname);

# the version this tree installs
my ($version) = slurp_file(dirname(__FILE__) . '/../../skade.control') =~ /^default_version = '([^']+)'/m
  or die 'no default_version in skade.control';

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
my $root = $node->basedir . '/meta';
mkdir $root or die;
$node->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'skade'
skade.allowed_roots = '$root'
CONF
$node->start;
append_to_file("$root/m.json", qq({"format-version": 2, "table-uuid": "u",
  "location": "file:$root/t", "last-updated-ms": 1, "last-sequence-number": 1,
  "last-column-id": 0, "current-schema-id": 0,
  "schemas": [{"type": "struct", "schema-id": 0, "fields": []}],
  "current-snapshot-id": 7, "snapshots": [{"snapshot-id": 7, "sequence-number": 1,
  "timestamp-ms": 1700000000000, "manifest-list": "file:$root/ml.avro",
  "summary": {"operation": "append"}}]}));
chmod 0755, $root;

$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql('fresh', 'CREATE EXTENSION skade');
is($node->safe_psql('fresh', "SELECT extversion FROM pg_extension WHERE extname = 'skade'"),
	$version, "a fresh install is $version");

# ---- the previous version, in use
$node->safe_psql('old', <<"SQL");
CREATE EXTENSION skade VERSION '1.0';
SELECT skade.create_namespace('n');
SELECT skade.register_table('n', 't', 'file://$root/m.json');
SELECT skade.commit_table('n', 't', 'file://$root/m.json', 'file://$root/m.json?2');
SQL
is($node->safe_psql('old', "SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'skade'"),
	'public', '1.0 sat in public');
# 1.0's argument order: catalog third
is($node->safe_psql('old', "SELECT metadata_location FROM skade.load_table('n', 't', 'skade', 'none')"),
	"file://$root/m.json?2", '1.0 answers with its own argument order');
my $log_before = $node->safe_psql('old', 'SELECT string_agg((l.seq, l.op, l.source, l.catalog_name, l.table_namespace, l.table_name, l.metadata_location, l.previous_metadata_location, l.committed_at, l.committed_by)::text, E\'\n\' ORDER BY seq) FROM skade.commit_log l');

$node->safe_psql('old', 'ALTER EXTENSION skade UPDATE');
is($node->safe_psql('old', "SELECT extversion || ' ' || extnamespace::regnamespace FROM pg_extension WHERE extname = 'skade'"),
	"$version skade", "updated to $version, in schema skade");

# ---- the same schema as a fresh install
sub schema
{
	my ($db) = @_;
	my ($out, $err);
	IPC::Run::run([ 'pg_dump', '--schema-only', '--binary-upgrade', '-d', $node->connstr($db) ],
		'>', \$out, '2>', \$err) or die "pg_dump $db: $err";
	my @lines;
	for (split /\n/, $out)
	{
		next if /binary_upgrade_set_next_|binary_upgrade_set_record_init_privs|^\\(un)?restrict /;
		next if /^-- Dumped |^--$|^$/;
		next if /pg_catalog\.setval\(/;    # sequence state is data
		s/relfrozenxid = '\d+', relminmxid = '\d+'/relfrozenxid = <xid>/;
		s/\b\d{4,}\b/<oid>/g;    # OIDs in binary_upgrade_create_empty_extension and comments
		push @lines, $_;
	}
	return join("\n", @lines);
}
my $fresh = schema('fresh');
my $old = schema('old');
like($fresh, qr/ALTER EXTENSION skade ADD FUNCTION skade\.load_table\(namespace text, name text, snapshots text, catalog text,/,
	'the dump spells out the members');
is($old, $fresh, 'updated schema identical to a fresh install');
if ($old ne $fresh)
{
	my @a = split /\n/, $fresh;
	my @b = split /\n/, $old;
	for my $i (0 .. ($#a > $#b ? $#a : $#b))
	{
		no warnings 'uninitialized';
		if ($a[$i] ne $b[$i]) { diag("first difference at line $i:\n fresh: $a[$i]\n   old: $b[$i]"); last; }
	}
}

# ---- data, history and both paths after the update
is($node->safe_psql('old', 'SELECT string_agg((l.seq, l.op, l.source, l.catalog_name, l.table_namespace, l.table_name, l.metadata_location, l.previous_metadata_location, l.committed_at, l.committed_by)::text, E\'\n\' ORDER BY seq) FROM skade.commit_log l'),
	$log_before, 'the history is kept');
is($node->safe_psql('old', "SELECT metadata_location FROM skade.load_table('n', 't', 'none')"),
	"file://$root/m.json?2", '1.1: snapshots third, catalog last');
is($node->safe_psql('old', "SELECT metadata_location FROM skade.load_table('n', 't', 'none', 'skade')"),
	"file://$root/m.json?2", '1.1: catalog as the trailing argument');
$node->safe_psql('old', <<"SQL");
SELECT skade.commit_table('n', 't', 'file://$root/m.json?2', 'file://$root/m.json');
UPDATE iceberg_tables SET metadata_location = 'file://$root/m.json?3' WHERE table_name = 't';
SQL
is($node->safe_psql('old', "SELECT string_agg(op || ':' || source, ',' ORDER BY seq) FROM skade.commit_log"),
	'register:api,commit:api,commit:api,commit:sql', 'both paths keep logging after the update');
is($node->safe_psql('old', "SELECT snapshot_id FROM skade.load_table_at('n', 't', 7, 'none')"),
	'7', 'load_table_at, 1.1 order');

# ---- 1.7 -> 1.8: REST tokens get an id and are bound to their role's OID; a token
# whose role is gone is dropped, the others keep working (same secret, same hash)
$node->safe_psql('postgres', 'CREATE DATABASE tok');
$node->safe_psql('postgres', 'CREATE ROLE tok_live LOGIN');
$node->safe_psql('postgres', 'CREATE ROLE tok_gone LOGIN');
$node->safe_psql('tok', "CREATE EXTENSION skade VERSION '1.7'");
my $live = $node->safe_psql('tok', "SELECT skade.rest_create_token('tok_live', '1 day', 'kept')");
$node->safe_psql('tok', "SELECT skade.rest_create_token('tok_gone', '1 day', 'dropped')");
$node->safe_psql('postgres', 'DROP ROLE tok_gone');
$node->safe_psql('tok', 'ALTER EXTENSION skade UPDATE');
is($node->safe_psql('tok', q{SELECT role || ' ' || usable || ' ' || comment FROM skade.rest_list_tokens()}),
	'tok_live true kept', '1.8: the live role\'s token kept, the dropped role\'s gone');
is($node->safe_psql('tok', qq{SELECT t.role_oid = r.oid FROM skade.rest_tokens t JOIN pg_roles r ON r.rolname = 'tok_live'
	WHERE t.token_hash = sha256(convert_to('$live', 'UTF8'))}), 't', '1.8: the old secret, bound to the role\'s OID');
is($node->safe_psql('tok', q{SELECT skade.rest_revoke_token(token_id) FROM skade.rest_tokens}), 't',
	'1.8: revoked by its id');

# ---- 1.8 -> 1.9: privileges per object; an attached catalog gets its row-level
# security on update, and a grant works at once; the library of 1.9 still logs the
# commits of a database not yet updated (commit_log without detail)
$node->safe_psql('postgres', 'CREATE DATABASE priv');
$node->safe_psql('postgres', 'CREATE ROLE priv_user LOGIN');
$node->safe_psql('priv', "CREATE EXTENSION skade VERSION '1.8'");
$node->safe_psql('priv', <<"SQL");
SELECT skade.create_namespace('pa');
SELECT skade.create_namespace('pb');
SELECT skade.register_table('pa', 't', 'file://$root/m.json');
SELECT skade.register_table('pb', 't', 'file://$root/m.json');
SELECT skade.commit_table('pa', 't', 'file://$root/m.json', 'file://$root/m.json?2');
SQL
is($node->safe_psql('priv', "SELECT string_agg(op, ',' ORDER BY seq) FROM skade.commit_log"),
	'register,register,commit', '1.8 objects, 1.9 library: commits logged');
$node->safe_psql('priv', 'ALTER EXTENSION skade UPDATE');
$node->safe_psql('priv', "GRANT skade_user TO priv_user; SELECT skade.grant('read', 'priv_user', 'pa')");
is($node->safe_psql('priv', "SET ROLE priv_user; SELECT string_agg(table_namespace, ',') FROM iceberg_tables"),
	'pa', '1.9: the JDBC table shows a member of skade_user what it may read');
is($node->safe_psql('priv', "SET ROLE priv_user; SELECT skade.table_exists('pb', 't')"),
	'f', '1.9: and so does the SQL API');
is($node->safe_psql('priv', "SELECT op || ' ' || (detail->>'grantee') FROM skade.commit_log WHERE op = 'grant'"),
	'grant priv_user', '1.9: the grant is in the commit log');

# ---- grants are dumped and restored with the catalog
my $dump = $node->basedir . '/priv.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('priv') ], 'pg_dump of a catalog with grants');
$node->safe_psql('postgres', 'CREATE DATABASE priv_restored');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('priv_restored'), $dump ], 'pg_restore');
is($node->safe_psql('priv_restored', "SELECT grantee::text || ' ' || access || ' ' || namespace FROM skade.grants"),
	'priv_user read pa', 'the grant restored');
# (with the JDBC tables' privileges: before 1.9 an update's grants on them counted as the
# extension's initial privileges, which pg_dump leaves out)
is($node->safe_psql('priv_restored', "SET ROLE priv_user; SELECT string_agg(table_namespace, ',') FROM iceberg_tables"),
	'pa', 'and in force');

# ---- 1.9 -> 1.10: the functions only the tests use leave the extension (the suites make
# them in schema skade_test: test/functions.sql)
$node->safe_psql('postgres', 'CREATE DATABASE tf');
$node->safe_psql('tf', "CREATE EXTENSION skade VERSION '1.9'");
my $test_fns = q{SELECT count(*) FROM pg_proc WHERE pronamespace = 'skade'::regnamespace
	AND proname IN ('index_check', 'stree64_selftest', 'stree64_bench', 'sigv4_sign')};
is($node->safe_psql('tf', $test_fns), '4', '1.9 has the four test functions');
$node->safe_psql('tf', "ALTER EXTENSION skade UPDATE TO '1.10'");
is($node->safe_psql('tf', $test_fns), '0', '1.10 has none of them');
$node->safe_psql('tf', slurp_file(dirname(__FILE__) . '/../functions.sql'));
is($node->safe_psql('tf', 'SELECT skade_test.index_check(ARRAY[1, 2])'), '0',
	'test/functions.sql makes them again, outside the extension');

$node->stop;
done_testing();
