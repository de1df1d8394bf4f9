# The index worker, when skade.database has no skade extension, looks for it
# with a back-off (1 s, doubling to a minute) instead of every second, and
# by a catalog lookup; once the extension is created there, a rebuild
# request is answered at once.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('absent');
$node->init;
$node->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'skade'
skade.database = 'postgres'
log_min_messages = debug1
CONF
$node->start;

# 12 s without the extension: looks at about 0, 1, 3 and 7 s (11 s without back-off)
usleep(12_000_000);
my $log = slurp_file($node->logfile);
my $looks = () = $log =~ /extension "skade" is not installed in database "postgres"/g;
cmp_ok($looks, '>=', 2, "the worker looked for the extension ($looks times)");
cmp_ok($looks, '<=', 6, "with a back-off, not every second ($looks times in 12 s)");
like($log, qr/Looking again in 4 s/, 'the back-off doubles');

# created now: a rebuild is answered without waiting for the back-off
$node->safe_psql('postgres', 'CREATE EXTENSION skade');
is($node->safe_psql('postgres', 'SELECT skade.rebuild_index() > 0'), 't',
	'rebuild_index() builds once the extension exists');
$node->stop;
done_testing();
