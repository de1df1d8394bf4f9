# skade.changes() as a consumer uses it: a process that reads the feed a
# page at a time and keeps its position in its own output (the last seq it
# wrote) is killed (SIGKILL) while concurrent writers -- the SQL API and
# plain DML as JDBC clients send it, some holding their transaction open --
# go on, and started again from that position: in the end it has every
# change exactly once and in seq order.  The skade_changes notification
# (skade.notify_changes = on) wakes a listener with the new position.  On a hot standby the feed holds
# back what a writer still in progress on the primary may precede, and
# answers up to what the standby has replayed.  Last, the commit log and its
# feed rows replicate logically (CREATE PUBLICATION) into a cluster without
# skade, row for row.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 'logical');
$primary->append_conf('postgresql.conf',
	"shared_preload_libraries = 'skade'\nmax_prepared_transactions = 4\nskade.notify_changes = on\n");
$primary->start;
$primary->safe_psql('postgres', q{
CREATE EXTENSION skade;
SELECT skade.create_namespace('f');
});
my $start = $primary->safe_psql('postgres', 'SELECT max(seq) FROM skade.commit_log');
$start = 0 if $start eq '';

# the writers: pgbench clients registering, committing, dropping through the
# SQL API, inserting and updating as a JDBC client does, some holding their
# transaction open a little (so seq order and commit order differ)
my $dir = $primary->basedir;
append_to_file("$dir/api.sql", <<'S');
\set n random(1, 1000000000)
BEGIN;
SELECT skade.register_table('f', 'a_' || :client_id || '_' || :n, 'file:///f/a/v1.metadata.json') > 0;
SELECT pg_sleep(random() * 0.02);
SELECT skade.commit_table('f', 'a_' || :client_id || '_' || :n, 'file:///f/a/v1.metadata.json', 'file:///f/a/v2.metadata.json') > 0;
COMMIT;
SELECT skade.drop_table('f', 'a_' || :client_id || '_' || :n) IS NOT NULL;
S
append_to_file("$dir/jdbc.sql", <<'S');
\set n random(1, 1000000000)
BEGIN;
INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, iceberg_type)
  VALUES ('skade', 'f', 'j_' || :client_id || '_' || :n, 'file:///f/j/v1.metadata.json', 'TABLE');
SELECT pg_sleep(random() * 0.03);
UPDATE iceberg_tables SET metadata_location = 'file:///f/j/v2.metadata.json', previous_metadata_location = metadata_location
  WHERE catalog_name = 'skade' AND table_namespace = 'f' AND table_name = 'j_' || :client_id || '_' || :n;
COMMIT;
S

# the consumer: its output is its position (a half-written last line from a kill is dropped)
append_to_file("$dir/consumer.sh", <<'SH');
#!/bin/bash
out=$1 start=$2 host=$3 port=$4
touch "$out"
while :; do
	if [ -s "$out" ] && [ -n "$(tail -c1 "$out")" ]; then sed -i '$d' "$out"; fi
	pos=$(tail -n1 "$out")
	psql -XAtq -h "$host" -p "$port" -d postgres -c "SELECT seq FROM skade.changes(${pos:-$start}, 7)" >>"$out" || exit 1
	sleep 0.02
done
SH
my $out = "$dir/consumed";
sub start_consumer
{
	my ($o, $e) = ('', '');
	my $h = IPC::Run::start([ 'setsid', 'bash', "$dir/consumer.sh", $out, $start, $primary->host, $primary->port ],
		'>', \$o, '2>', \$e);
	return $h;
}

my ($bout, $berr) = ('', '');
my $bench = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '4', '-j', '2', '-T', '6', '-f', "$dir/api.sql", '-f', "$dir/jdbc.sql",
	  '-h', $primary->host, '-p', $primary->port, 'postgres' ],
	'>', \$bout, '2>', \$berr);
my $consumer = start_consumer();
sleep 2;
# killed mid-stream, its whole process group (a psql it was running too)
my $pid = $consumer->{KIDS}[0]{PID};
kill 'KILL', -$pid;
$consumer->finish;
my $at_kill = () = split /\n/, slurp_file($out);
sleep 2;    # the writers go on while it is down
$consumer = start_consumer();
$bench->finish;
like($bout, qr/number of failed transactions: 0/, 'the writers all committed');

# every change, as the log has it, once the writers are done and the consumer caught up
my $want = $primary->safe_psql('postgres',
	"SELECT string_agg(seq::text, E'\\n' ORDER BY seq) FROM skade.commit_log WHERE seq > $start AND op NOT IN ('grant', 'revoke')");
my $got = '';
for (1 .. 300)
{
	$got = slurp_file($out);
	chomp $got;
	last if $got eq $want;
	usleep(100_000);
}
kill 'KILL', -$consumer->{KIDS}[0]{PID};
$consumer->finish;
my @want = split /\n/, $want;
my @got = split /\n/, $got;
ok($at_kill > 0 && $at_kill < @want, "the consumer was killed mid-stream ($at_kill of " . scalar(@want) . ' changes)');
is(scalar(@got), scalar(@want), 'as many changes consumed as logged');
is($got, $want, 'every change exactly once, in seq order, across the kill');
my %seen;
is(scalar(grep { $seen{$_}++ } @got), 0, 'no change twice');

# the wake-up: a listener hears the new position when a change commits
my $listener = $primary->background_psql('postgres');
$listener->query_safe('LISTEN skade_changes');
my $seq = $primary->safe_psql('postgres', q{
SELECT skade.register_table('f', 'woken', 'file:///f/w/v1.metadata.json');
SELECT max(seq) FROM skade.commit_log;
});
$seq = (split /\n/, $seq)[-1];
my $heard = '';
for (1 .. 50)
{
	$heard .= $listener->query_safe('SELECT 1');
	last if $listener->{stderr} =~ /skade_changes/ || $heard =~ /skade_changes/;
	usleep(100_000);
}
like($listener->{stderr} . $heard, qr/"skade_changes" with payload "$seq"/, 'the listener is told the new position');
$listener->quit;

# a prepared writer outlives a restart, and the feed still waits for it
my $pmark = $primary->safe_psql('postgres', 'SELECT max(seq) FROM skade.commit_log');
$primary->safe_psql('postgres', q{
BEGIN;
SELECT skade.register_table('f', 'prepared', 'file:///f/prep/v1.metadata.json');
PREPARE TRANSACTION 'feed_p';
});
$primary->restart;
$primary->safe_psql('postgres', "SELECT skade.register_table('f', 'after_restart', 'file:///f/ar/v1.metadata.json')");
is($primary->safe_psql('postgres', "SELECT count(*) FROM skade.changes($pmark)"), '0',
	'after a restart, a change is held back while a prepared writer of a lower seq is open');
$primary->safe_psql('postgres', "COMMIT PREPARED 'feed_p'");
is($primary->safe_psql('postgres', "SELECT string_agg(name, ',' ORDER BY seq) FROM skade.changes($pmark)"),
	'prepared,after_restart', 'both once it commits');

# a hot standby: a writer on the primary holds the lower seq open; the standby
# has replayed the later change and holds it back until the writer commits
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;
my $mark = $primary->safe_psql('postgres', 'SELECT max(seq) FROM skade.commit_log');
my $slow = $primary->background_psql('postgres');
$slow->query_safe("BEGIN; SELECT skade.register_table('f', 'slow', 'file:///f/slow/v1.metadata.json')");
$primary->safe_psql('postgres', "SELECT skade.register_table('f', 'fast', 'file:///f/fast/v1.metadata.json')");
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', "SELECT count(*) FROM skade.commit_log WHERE seq > $mark"), '1',
	'the standby has replayed the later change');
is($standby->safe_psql('postgres', "SELECT count(*) FROM skade.changes($mark)"), '0',
	'and holds it back while the writer of the lower seq is in progress on the primary');
$slow->query_safe('COMMIT');
$slow->quit;
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', "SELECT string_agg(name, ',' ORDER BY seq) FROM skade.changes($mark)"),
	'slow,fast', 'both, in seq order, once the writer committed');

# up to what the standby has replayed
$standby->safe_psql('postgres', 'SELECT pg_wal_replay_pause()');
$primary->safe_psql('postgres', "SELECT skade.register_table('f', 'later', 'file:///f/later/v1.metadata.json')");
$primary->wait_for_catchup($standby, 'write');
is($standby->safe_psql('postgres', "SELECT string_agg(name, ',' ORDER BY seq) FROM skade.changes($mark)"),
	'slow,fast', 'replay paused: the standby answers what it has replayed');
$standby->safe_psql('postgres', 'SELECT pg_wal_replay_resume()');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', "SELECT string_agg(name, ',' ORDER BY seq) FROM skade.changes($mark)"),
	'slow,fast,later', 'resumed: the rest');
is($standby->safe_psql('postgres', "SELECT string_agg(name, ',' ORDER BY seq) FROM skade.changes($mark)"),
	$primary->safe_psql('postgres', "SELECT string_agg(name, ',' ORDER BY seq) FROM skade.changes($mark)"),
	'the standby and the primary agree');

$standby->stop;

# logical replication of the log into another cluster (no skade there): the
# subscriber's own identity column numbers the rows in the order they were
# applied, which is the primary's commit order
my $sub = PostgreSQL::Test::Cluster->new('subscriber');
$sub->init;
$sub->start;
$sub->safe_psql('postgres', q{
CREATE SCHEMA skade;
CREATE TABLE skade.commit_log (
	seq bigint PRIMARY KEY, op text NOT NULL, source text NOT NULL, catalog_name text NOT NULL,
	table_namespace text NOT NULL, table_name text NOT NULL, iceberg_type text, metadata_location text,
	previous_metadata_location text, prev_namespace text, prev_name text, committed_at timestamptz NOT NULL,
	committed_by name NOT NULL, xact_id xid8 NOT NULL, snapshot_id bigint, detail jsonb,
	applied bigint GENERATED ALWAYS AS IDENTITY);
CREATE TABLE skade.commit_log_feed (seq bigint PRIMARY KEY, pending_xacts xid8[] NOT NULL,
	snapshot_ids_added bigint[], snapshot_ids_removed bigint[], object_uuid uuid);
});
$primary->safe_psql('postgres', 'CREATE PUBLICATION skade_log FOR TABLE skade.commit_log, skade.commit_log_feed');
my $connstr = $primary->connstr . ' dbname=postgres';
$sub->safe_psql('postgres', "CREATE SUBSCRIPTION skade_log CONNECTION '$connstr' PUBLICATION skade_log WITH (streaming = off)");
$sub->wait_for_subscription_sync($primary, 'skade_log');
$primary->safe_psql('postgres', q{
SELECT skade.register_table('f', 'replicated', 'file:///f/rep/v1.metadata.json');
SELECT skade.drop_table('f', 'replicated');
});
$primary->wait_for_catchup('skade_log');
my $cols = 'seq, op, source, catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, committed_by, xact_id';
is($sub->safe_psql('postgres', "SELECT string_agg(concat_ws('|', $cols), E'\n' ORDER BY seq) FROM skade.commit_log"),
	$primary->safe_psql('postgres', "SELECT string_agg(concat_ws('|', $cols), E'\n' ORDER BY seq) FROM skade.commit_log"),
	'the subscriber has the commit log, row for row');
is($sub->safe_psql('postgres', 'SELECT count(*) FROM skade.commit_log_feed'),
	$primary->safe_psql('postgres', 'SELECT count(*) FROM skade.commit_log_feed'), 'and the feed rows');
is($sub->safe_psql('postgres', "SELECT string_agg(op, ',' ORDER BY applied) FROM skade.commit_log WHERE table_name = 'replicated'"),
	'register,drop', 'applied in commit order');
$sub->stop;
$primary->stop;
done_testing();
