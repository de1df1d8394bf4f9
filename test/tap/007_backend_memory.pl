# A backend's memory stays flat over many calls of the functions that read
# Avro files (manifests, files, plan_files): libavro-c's allocations are
# all released per call.  (It used to keep every manifest list's writer
# schema: about 12.7 kB per call, 63 MB over the 5,000 calls here.)  The
# bound checked is generous: 4 MB over 5,000 calls after a warm-up; bench/
# soak.sh prints the growth per call over 200,000 calls.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('memory');
$node->init;
my $root = $node->basedir . '/avro';
# a good table from the hostile-input generator: list and manifest, null codec
system('python3', 'test/data/avro/hostile.py', $root) == 0 or die "hostile.py failed";
$node->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'skade'
skade.allowed_roots = '$root'
CONF
$node->start;
$node->safe_psql('postgres', <<"SQL");
CREATE EXTENSION skade;
SELECT skade.create_namespace('m');
SELECT skade.register_table('m', 'split', '$root/split/metadata/v1.metadata.json');
CREATE FUNCTION rss_kb() RETURNS bigint LANGUAGE sql AS \$\$
	SELECT (regexp_match(pg_read_file('/proc/self/status'), 'RssAnon:\\s+(\\d+)'))[1]::bigint
\$\$;
CREATE PROCEDURE soak(query text, n int) LANGUAGE plpgsql AS \$\$
DECLARE
	r bigint;
BEGIN
	FOR i IN 1 .. n LOOP
		EXECUTE query INTO r;
		IF i % 500 = 0 THEN
			COMMIT;
		END IF;
	END LOOP;
END \$\$;
SQL

my %calls = (
	manifests => "SELECT count(*) FROM skade.manifests('m', 'split')",
	files => "SELECT count(*) FROM skade.files('m', 'split')",
	plan_files => "SELECT count(*) FROM skade.plan_files('m', 'split', '{\"type\": \"not-null\", \"term\": \"id\"}')",
);
foreach my $f (sort keys %calls)
{
	my $q = $calls{$f};
	my $session = $node->background_psql('postgres');
	$session->query_safe("CALL soak(\$q\$$q\$q\$, 1000)");
	my $before = $session->query_safe('SELECT rss_kb()');
	$session->query_safe("CALL soak(\$q\$$q\$q\$, 5000)");
	my $after = $session->query_safe('SELECT rss_kb()');
	$session->quit;
	my $growth = $after - $before;
	cmp_ok($growth, '<', 4096, "$f: backend memory flat over 5,000 calls (grew $growth kB)");
}

$node->stop;
done_testing();
