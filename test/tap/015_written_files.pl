# Faults around skade's own writes: a crash between writing a
# metadata file and committing leaves the pointer unchanged and the file an
# orphan that skade.orphan_files() finds after restart and
# skade.sweep_orphan_files() removes; a directory skade may not write into
# fails the commit with 42501 and changes nothing.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('written');
$node->init;
my $wh = $node->basedir . '/wh';
mkdir $wh or die;
$node->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'skade'
skade.allowed_roots = '$wh'
skade.write_roots = '$wh'
# (the WAL writer never flushes the crashed commit's records by itself: only the journal's
# own flush can make its transaction id outlive the crash)
wal_writer_delay = '10s'
CONF
$node->start;
$node->safe_psql('postgres', <<"SQL");
CREATE EXTENSION skade;
SELECT skade.create_namespace('w', '{"location": "$wh/w"}');
SELECT skade.create_table('w', 't', '{"fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}');
SQL
my $before = $node->safe_psql('postgres', q{SELECT metadata_location FROM skade.load_table('w', 't', 'none')});

# a commit that has written its file and waits before COMMIT when the server dies
my ($out, $err) = ('', '');
my $session = IPC::Run::start(
	[ 'psql', '-X', '-h', $node->host, '-p', $node->port, '-d', 'postgres', '-c',
	  q{BEGIN; SELECT skade.update_table('w', 't', '[]', '[{"action": "set-properties", "updates": {"k": "v"}}]'); SELECT pg_sleep(60); COMMIT;} ],
	'>', \$out, '2>', \$err);
my $written = '';
for (1 .. 300)
{
	$written = $node->safe_psql('postgres', q{SELECT location FROM skade.written_files() WHERE state = 'running'});
	last if $written ne '';
	usleep(100_000);
}
isnt($written, '', 'the running commit is in the journal');
ok(-f $written, 'its file exists before the crash');
$node->stop('immediate');
$session->finish;
$node->start;

is($node->safe_psql('postgres', q{SELECT metadata_location FROM skade.load_table('w', 't', 'none')}),
	$before, 'the pointer is unchanged after the crash');
is($node->safe_psql('postgres', q{SELECT state FROM skade.written_files() WHERE location = '} . $written . q{'}),
	'aborted', 'after restart its transaction counts as aborted');
is($node->safe_psql('postgres', 'SELECT location FROM skade.orphan_files()'), $written,
	'orphan_files lists the file the crash left');
# the journal is the cluster's, each database sees and sweeps its own
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', 'CREATE EXTENSION skade');
is($node->safe_psql('other', 'SELECT count(*) FROM skade.written_files()'), '0',
	"another database does not see this database's entries");
is($node->safe_psql('other', 'SELECT count(*) FROM skade.sweep_orphan_files()'), '0',
	"nor sweeps them");
ok(-f $written, 'the file is still there after the other database swept');
is($node->safe_psql('postgres', 'SELECT removed FROM skade.sweep_orphan_files()'), 't', 'the sweep removes it');
ok(!-e $written, 'the file is gone');
is($node->safe_psql('postgres', 'SELECT count(*) FROM skade.orphan_files()'), '0', 'nothing left to sweep');
is($node->safe_psql('postgres', 'SELECT count(*) FROM skade.written_files()'), '0',
	'the sweep compacted the journal (committed and removed entries dropped)');

# an unwritable metadata directory: 42501, nothing changes, nothing is left
my $dir = "$wh/w/t/metadata";
my @files_before = glob("$dir/*");
chmod 0555, $dir or die;
my ($rc, $stdout, $stderr) = $node->psql('postgres',
	q{SELECT skade.update_table('w', 't', '[]', '[{"action": "set-properties", "updates": {"k": "v"}}]')},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
chmod 0755, $dir or die;
like($stderr, qr/ERROR:\s+42501: cannot write .*Permission denied/, 'an unwritable directory fails with 42501');
is($node->safe_psql('postgres', q{SELECT metadata_location FROM skade.load_table('w', 't', 'none')}),
	$before, 'the pointer is unchanged');
is(scalar(my @after = glob("$dir/*")), scalar(@files_before), 'no file was added');

# the journal itself unwritable: the commit fails before anything is written
my $journal = $node->data_dir . '/pg_skade/written_files';
ok(-f $journal, 'the journal exists');
chmod 0400, $journal or die;
($rc, $stdout, $stderr) = $node->psql('postgres',
	q{SELECT skade.update_table('w', 't', '[]', '[{"action": "set-properties", "updates": {"k2": "v"}}]')});
chmod 0600, $journal or die;
like($stderr, qr/could not open .*written_files/, 'an unwritable journal fails the commit');
is(scalar(@after = glob("$dir/*")), scalar(@files_before), 'and no file was added');
is($node->safe_psql('postgres', q{SELECT skade.update_table('w', 't', '[]', '[{"action": "set-properties", "updates": {"k3": "v"}}]') IS NOT NULL}),
	't', 'with the journal writable again commits work');

$node->stop;
done_testing();
