# The manifest decode helper (skade.decode_helper, manifest_helper.c): a cold
# skade.files() or plan_files() of many manifests lets a helper process
# decode them from the end while the backend decodes from the start.  The
# answers are exactly those of the backend alone; the helper does part of
# the work (the backend finds manifests cached on its first, cold pass, which
# it never does alone); none starts with max_parallel_workers = 0; a
# manifest the helper cannot decode is the backend's error, word for word as
# without the helper; no helper outlives its plan.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('helper');
$node->init;
my $root = $node->basedir . '/avro';
# 48 deflate manifests of 500 files each; many_bad: its third from the end is corrupt
system('python3', 'test/data/avro/hostile.py', $root, '--many', '48', '500') == 0
  or die "hostile.py failed";
$node->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'skade'
skade.allowed_roots = '$root'
CONF
$node->start;
$node->safe_psql('postgres', <<"SQL");
CREATE EXTENSION skade;
SELECT skade.create_namespace('m');
SELECT skade.register_table('m', t, format('$root/%s/metadata/v1.metadata.json', t))
FROM unnest(ARRAY['many', 'many_bad']) t;
SQL

# a cold call (caches emptied first) with the helper on or off: its answer,
# and how many manifests the backend found cached during it
sub cold
{
	my ($helper, $query) = @_;
	my $out = $node->safe_psql('postgres', <<"SQL");
SET skade.decode_helper = $helper;
SELECT skade.cache_reset();
CREATE TEMP TABLE before AS SELECT manifest_hits FROM skade.cache_stats();
CREATE TEMP TABLE answer AS $query;
SELECT (SELECT a::text FROM answer a), (SELECT manifest_hits FROM skade.cache_stats()) - manifest_hits
FROM before;
SQL
	return (split /\n/, $out)[-1];		# the last line: the answer
}

my %queries = (
	files => "SELECT count(*) AS n, md5(string_agg(f::text, ',' ORDER BY file_path)) AS rows "
	  . "FROM skade.files('m', 'many') f",
	plan_files => "SELECT count(*) AS n, md5(string_agg(f::text, ',' ORDER BY file_path)) AS rows "
	  . "FROM skade.plan_files('m', 'many', 'true') f");

foreach my $name (sort keys %queries)
{
	my ($alone, $alone_hits) = split /\|/, cold('off', $queries{$name});
	like($alone, qr/^\(24000,[0-9a-f]{32}\)$/, "$name: 24,000 files alone");
	is($alone_hits, '0', "$name: alone, a cold pass finds nothing cached");
	my ($helped, $helped_hits) = split /\|/, cold('on', $queries{$name});
	is($helped, $alone, "$name: the same rows with the helper");
}

# the helper decodes part of the work: within 20 cold passes, the backend
# finds manifests the helper decoded (on a machine this busy, a helper may
# start only after the backend is done in one pass, never in all of them)
my $helped = 0;
for (1 .. 20)
{
	my (undef, $hits) = split /\|/, cold('on', $queries{files});
	if ($hits > 0)
	{
		$helped = $hits;
		last;
	}
}
ok($helped > 0, "the helper decoded manifests the backend then found cached ($helped)");

# helpers are parallelism: with max_parallel_workers = 0 none starts
$node->safe_psql('postgres', 'ALTER SYSTEM SET max_parallel_workers = 0');
$node->reload;
my $none = 0;
for (1 .. 5)
{
	my (undef, $hits) = split /\|/, cold('on', $queries{files});
	$none += $hits;
}
is($none, 0, 'max_parallel_workers = 0: the backend decodes alone');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET max_parallel_workers');
$node->reload;

# a manifest the helper meets first and cannot decode: the backend's own error
my $bad = "SELECT count(*) FROM skade.files('m', 'many_bad')";
my (undef, undef, $err_alone) =
  $node->psql('postgres', "SET skade.decode_helper = off; SELECT skade.cache_reset(); $bad");
my (undef, undef, $err_helped) =
  $node->psql('postgres', "SET skade.decode_helper = on; SELECT skade.cache_reset(); $bad");
like($err_alone, qr/m045\.avro/, 'the corrupt manifest is an error alone');
is($err_helped, $err_alone, 'the same error, word for word, with the helper');

# no helper outlives its plan
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'skade manifest helper'"),
	'no helper process is left');
unlike(slurp_file($node->logfile), qr/dynamic shared memory leak/,
	'the helper task is detached, not leaked');

$node->stop;
done_testing();
