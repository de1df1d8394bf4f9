# Tests the L0 metadata cache under concurrency: concurrent misses on one
# location coalesce into one read and parse; a failed fill (bad file,
# cancel, terminated backend) leaves no half-built or pinned entry behind,
# so the next load neither hangs nor sees garbage.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('cache');
$node->init;
my $root = $node->basedir . '/meta';
mkdir $root or die;
$node->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'skade'
skade.allowed_roots = '$root'
skade.metadata_cache_size = 64MB
CONF
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION skade');

# a big metadata file (6000 snapshots, a few MB): parsing it takes a while
$node->safe_psql('postgres', <<"SQL");
COPY (SELECT jsonb_build_object('format-version', 2, 'table-uuid', 'big', 'location', 'file:/wh/big',
  'last-updated-ms', 1, 'last-sequence-number', 6000, 'current-schema-id', 0,
  'schemas', jsonb_build_array(jsonb_build_object('type', 'struct', 'schema-id', 0, 'fields', '[]'::jsonb)),
  'current-snapshot-id', 6000,
  'snapshots', (SELECT jsonb_agg(jsonb_build_object('snapshot-id', i, 'parent-snapshot-id', i - 1,
      'sequence-number', i, 'timestamp-ms', 1700000000000 + i,
      'manifest-list', 'file:/wh/big/metadata/snap-' || i || '-0123456789abcdef0123456789abcdef.avro',
      'summary', jsonb_build_object('operation', 'append', 'added-records', i::text,
          'added-files-size', (i * 1000)::text, 'total-records', (i * 10)::text))) FROM generate_series(1, 6000) i))::text)
TO '$root/big.metadata.json';
COPY (SELECT '{"format-version": 2, oops') TO '$root/bad.metadata.json';
SELECT skade.create_namespace('c');
SET skade.validate_commits = off;
-- JDBC-style inserts: registered without warming the cache
INSERT INTO iceberg_tables VALUES ('skade', 'c', 'big', 'file://$root/big.metadata.json', NULL, 'TABLE'),
                                  ('skade', 'c', 'bad', 'file://$root/bad.metadata.json', NULL, 'TABLE');
SQL

# N sessions wait on an advisory lock held here, then all miss at once
sub race
{
	my ($table, $n) = @_;
	$node->safe_psql('postgres', 'SELECT skade.cache_reset()');
	my $holder = $node->background_psql('postgres');
	$holder->query_safe('SELECT pg_advisory_lock(7)');
	my @runs;
	foreach my $i (1 .. $n)
	{
		my ($out, $err) = ('', '');
		my $h = IPC::Run::start(
			[ 'psql', '-XAtq', '-h', $node->host, '-p', $node->port, '-d', 'postgres',
			  '-c', "SELECT pg_advisory_lock_shared(7)",
			  '-c', "SELECT json_array_length(metadata->'snapshots') FROM skade.load_table('c', '$table')" ],
			'>', \$out, '2>', \$err);
		push @runs, [ $h, \$out, \$err ];
	}
	$node->poll_query_until('postgres',
		"SELECT count(*) = $n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
	  or die 'sessions did not line up';
	$holder->query_safe('SELECT pg_advisory_unlock(7)');
	$holder->quit;
	my @results;
	foreach my $r (@runs)
	{
		$r->[0]->finish;
		push @results, [ ${ $r->[1] }, ${ $r->[2] } ];
	}
	return @results;
}

my @res = race('big', 6);
is(scalar(grep { $_->[0] =~ /^\s*6000\s*$/m } @res), 6, 'all six sessions got the metadata');
my $stats = $node->safe_psql('postgres',
	'SELECT misses, hits, coalesced_waits, entries FROM skade.cache_stats()');
my ($misses, $hits, $coalesced, $entries) = split /\|/, $stats;
is($misses, 1, 'six concurrent misses read and parsed the file once');
cmp_ok($coalesced, '>=', 1, "the others waited for that fill ($coalesced coalesced waits)");
is($hits, 5, 'and were served from the cache');
is($entries, 1, 'one entry');

# a fill that fails: every waiter gets the error, nothing is left behind
@res = race('bad', 4);
is(scalar(grep { $_->[1] =~ /is not valid JSON/ } @res), 4, 'all four sessions got the parse error');
is($node->safe_psql('postgres', 'SELECT entries FROM skade.cache_stats()'), '0',
	'no entry for the bad file');

# cancel in the middle of fills: afterwards loads work and do not hang
$node->safe_psql('postgres', 'SELECT skade.cache_reset()');
foreach my $t (1, 2, 5, 20)
{
	my ($ret, $out, $err) = $node->psql('postgres',
		"SET statement_timeout = '${t}ms'; SELECT json_array_length(metadata->'snapshots') FROM skade.load_table('c', 'big')");
	ok($ret == 0 || $err =~ /statement timeout/, "load under a ${t}ms timeout: completed or cancelled");
	is($node->safe_psql('postgres',
		"SET statement_timeout = '60s'; SELECT json_array_length(metadata->'snapshots') FROM skade.load_table('c', 'big')"),
		'6000', 'the next load works');
	$node->safe_psql('postgres', 'SELECT skade.cache_reset()');
}

# a backend terminated while it fills (FATAL): its FILLING entry goes with it
my $victim = $node->background_psql('postgres', on_error_stop => 0);
my $pid = $victim->query_safe('SELECT pg_backend_pid()');
$victim->{stdin} .= "SELECT json_array_length(metadata->'snapshots') FROM skade.load_table('c', 'big');\n";
$victim->{run}->pump_nb;
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
eval { $victim->quit; };
is($node->safe_psql('postgres',
	"SET statement_timeout = '60s'; SELECT json_array_length(metadata->'snapshots') FROM skade.load_table('c', 'big')"),
	'6000', 'a load after a terminated filler works');
is($node->safe_psql('postgres', 'SELECT entries FROM skade.cache_stats()'), '1', 'one entry');

$node->stop;
done_testing();
