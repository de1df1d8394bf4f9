# Tests what happens without shared_preload_libraries: every SQL API
# function refuses with OBJECT_NOT_IN_PREREQUISITE_STATE and a hint, while
# the commit-log triggers keep logging JDBC clients' changes; after adding
# skade to shared_preload_libraries and restarting, everything works and
# nothing logged before was lost.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('nopreload');
$node->init;
$node->start;

$node->safe_psql('postgres', 'CREATE EXTENSION skade');

foreach my $call (
	"SELECT skade.create_namespace('a')",
	"SELECT skade.list_namespaces()",
	"SELECT skade.load_table('a', 't', snapshots => 'none')",
	"SELECT skade.commit_table('a', 't', 'x', 'y')",
	"SELECT * FROM skade.commit_transaction('[]')")
{
	my ($rc, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\n$call");
	isnt($rc, 0, "$call fails without preload");
	like($err, qr/ERROR:  55000: skade must be loaded via shared_preload_libraries/,
		"$call: SQLSTATE 55000 and message");
	like($err, qr/HINT:  Add skade to shared_preload_libraries/,
		"$call: hint says how to fix it");
}

# a JDBC client's writes are still logged (the trigger needs no shared memory)
$node->safe_psql('postgres', q{
	INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type)
	VALUES ('jdbc', 'db', 't', 'file:/wh/v1.metadata.json', null, 'TABLE');
	UPDATE iceberg_tables SET metadata_location = 'file:/wh/v2.metadata.json', previous_metadata_location = 'file:/wh/v1.metadata.json'
	WHERE catalog_name = 'jdbc' AND table_namespace = 'db' AND table_name = 't' AND metadata_location = 'file:/wh/v1.metadata.json';
});
is($node->safe_psql('postgres',
	"SELECT string_agg(op || ':' || metadata_location, ',' ORDER BY seq) FROM skade.commit_log"),
	'create:file:/wh/v1.metadata.json,commit:file:/wh/v2.metadata.json',
	'JDBC writes are logged without preload');

# now preload skade and restart
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'skade'");
$node->restart;

is($node->safe_psql('postgres',
	"SELECT metadata_location FROM skade.load_table('db', 't', catalog => 'jdbc', snapshots => 'none')"),
	'file:/wh/v2.metadata.json', 'load_table works once preloaded');
$node->safe_psql('postgres',
	"SELECT skade.commit_table('db', 't', 'file:/wh/v2.metadata.json', 'file:/wh/v3.metadata.json', 'jdbc')");
is($node->safe_psql('postgres',
	"SELECT string_agg(op || '/' || source, ',' ORDER BY seq) FROM skade.commit_log"),
	'create/sql,commit/sql,commit/api', 'log survived the restart and continues');

$node->stop;
done_testing();
