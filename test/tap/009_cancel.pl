# A long warm files()/plan_files() call over a cached manifest of 300,000
# data files is cancelled by statement_timeout, leaves nothing pinned or
# half-built, and the next call answers in full.  (Its loop checks for
# interrupts now; before, the call ran to its end and the executor cancelled
# the statement afterwards: the same error, later.  How much later is a
# matter of time, which no test here asserts.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('cancel');
$node->init;
my $root = $node->basedir . '/avro';
system('python3', 'test/data/avro/hostile.py', $root, '--big', '300000') == 0
  or die "hostile.py failed";
$node->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'skade'
skade.allowed_roots = '$root'
skade.manifest_cache_size = 512MB
CONF
$node->start;
$node->safe_psql('postgres', <<"SQL");
CREATE EXTENSION skade;
SELECT skade.create_namespace('c');
SELECT skade.register_table('c', 'big', '$root/big/metadata/v1.metadata.json');
SQL

# decode once (no timeout), so that what follows is the warm loop
is($node->safe_psql('postgres', "SELECT count(*) FROM skade.files('c', 'big')"),
	'300000', 'the manifest is decoded and cached');
is($node->safe_psql('postgres', 'SELECT manifest_entries FROM skade.cache_stats()'),
	'1', 'one manifest in the L0.5 cache');

foreach my $call ("SELECT count(*) FROM skade.files('c', 'big')",
	"SELECT count(*) FROM skade.plan_files('c', 'big', '{\"type\": \"not-null\", \"term\": \"id\"}')")
{
	my ($ret, $out, $err) = $node->psql('postgres',
		"SET statement_timeout = '50ms'; $call");
	like($err, qr/canceling statement due to statement timeout/,
		"a warm call is cancelled by statement_timeout: $call");
}
is($node->safe_psql('postgres', "SELECT count(*) FROM skade.files('c', 'big')"),
	'300000', 'and the next call answers in full');

# a call releases the manifests it read when it ends: a session idle in its
# transaction does not keep them from eviction (they stayed pinned to the
# end of the transaction before, and cache_reset() could not drop them)
my $idle = $node->background_psql('postgres');
$idle->query_safe('BEGIN');
$idle->query_safe("SELECT count(*) FROM skade.plan_files('c', 'big', '{\"type\": \"eq\", \"term\": \"id\", \"value\": 7}')");
$node->safe_psql('postgres', 'SELECT skade.cache_reset()');
is($node->safe_psql('postgres', 'SELECT manifest_entries FROM skade.cache_stats()'),
	'0', 'a session idle in its transaction after plan_files() pins no manifest');
$idle->query_safe('COMMIT');
$idle->quit;

$node->stop;
done_testing();
