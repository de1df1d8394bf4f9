/*-------------------------------------------------------------------------
 *
 * file_access.c
 *	  Read the file a metadata location (or a manifest path) names,
 *	  confined to the directories of skade.allowed_roots.
 *
 * The server reads files on behalf of SQL users, so every read is checked,
 * and a path outside the roots is never even looked up:
 *   - local files: "file:/p", "file:///p", "file://localhost/p" or an
 *     absolute path; s3:// (s3a://, s3n://) objects are read by
 *     object_store.c, confined to the s3:// entries of the same setting;
 *     any other scheme (gs://, abfs://, hdfs://, http://, ...) is
 *     feature_not_supported, while pointer operations on such tables keep
 *     working;
 *   - no control characters, no relative paths; "." and ".." are resolved
 *     lexically first, and the result must lie inside one of the roots (as
 *     configured or as resolved), else 42501 without touching the file
 *     system, whether or not the file exists;
 *   - the path is then walked from the root's real directory one component
 *     at a time (openat with O_PATH | O_NOFOLLOW): a symbolic link is read
 *     and followed only while its target stays inside a root, and ".." in a
 *     link target may not climb above the root; a path that leaves the
 *     roots is 42501 at the step where it would, before its target is
 *     looked up, so neither existence nor anything else about a file
 *     outside the roots can be learnt, and no message names a resolved
 *     path;
 *   - what is opened for reading is what was checked: the final file is
 *     opened relative to its checked directory with O_NOFOLLOW | O_NONBLOCK
 *     and must be the same inode as the one inspected, and a regular file
 *     (not a directory, FIFO or device);
 *   - it is read whole, at most skade.max_metadata_size bytes, and gzip
 *     (by magic bytes, which also covers "*.gz.metadata.json") is
 *     inflated under the same cap.
 * Who may trigger a read is decided by EXECUTE privilege on the functions
 * that read (skade_reader and up); which files, by the superuser-only
 * roots.  The real path of every file read is returned, so that the caches
 * can check each hit against the roots in force (SkadePathAllowed): a cache
 * hit is no way around a narrower setting.
 *
 * Errors name the location as given and carry proper SQLSTATEs.  Memory:
 * results are palloc'd in CurrentMemoryContext; the resolved roots live in
 * the "skade file access" context until skade.allowed_roots changes (each
 * use compares the setting with the one they were resolved for).  File
 * descriptors are reported to fd.c (ReserveExternalFD) and closed on every
 * path, errors included.
 *
 * IDENTIFICATION
 *	  src/io/file_access.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/pg_compat.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/fd.h"
#include "utils/memutils.h"
#include "utils/varlena.h"

#include "io/file_access.h"
#include "util/guc.h"
#include "util/gzip.h"
#include "io/object_store.h"
#include "util/location.h"

#define SKADE_MAX_SYMLINKS	40

/* one allowed root: as configured (normalised) and as resolved */
typedef struct AllowedRoot
{
	char	   *configured;
	char	   *real;			/* NULL while it does not resolve */
} AllowedRoot;

/* the outcome of a confined open */
typedef struct Opened
{
	SkadeReadStatus status;
	int			err;			/* errno, for SKADE_READ_FAILED */
	bool		escaped;		/* DENIED by a link or "..", not lexically */
	bool		not_regular;	/* FAILED because it is a directory, FIFO, ... */
	int			fd;				/* SKADE_READ_OK: open for reading */
	char	   *real;			/* SKADE_READ_OK: its real path */
} Opened;

/* ---- Local variables ---- */

static MemoryContext roots_cxt = NULL;
static List *roots = NIL;		/* AllowedRoot, for roots_for */
static char *roots_for = NULL;	/* the setting they were parsed from */

static const char *local_path(const char *location, bool report, SkadeReadStatus *status);
static const char *location_path(const char *location, bool report,
								 SkadeReadStatus *status);
static List *allowed_roots(void);
static char *normalize(const char *path);
static bool inside(const char *path, const char *dir);
static void open_confined(const char *path, Opened *o);
static bool walk(const AllowedRoot *root, const char *rest, Opened *o);
static const AllowedRoot *root_of(const char *path, const char **rest);
static int	open_at(int dirfd, const char *name, int flags);
static void close_fd(int fd);
static int	file_errcode(int err);
pg_noreturn static void report_open(const char *location, const Opened *o);
static StringInfo read_whole(int fd, const char *location);

/*
 * SkadeReadLocation
 *		The content of the file at location (an object: by route), inflated
 *		if gzip.  Every failure is an ERROR.  *real_path (if not NULL) is
 *		set to the real path of the file read (palloc'd).
 */
StringInfo
SkadeReadLocation(const SkadeRoute *route, const char *location, char **real_path)
{
	SkadeReadStatus status;
	const char *path;
	Opened		o;
	StringInfo	buf = NULL;
	size_t		cap = (size_t) skade_max_metadata_size;

	if (SkadeIsObjectLocation(location))
	{
		buf = SkadeObjectRead(route, location, cap, real_path);
		if (SkadeIsGzip(buf->data, buf->len))
			buf = SkadeGunzip(buf->data, buf->len, cap, location);
		return buf;
	}
	path = location_path(location, true, &status);
	open_confined(path, &o);
	if (o.status != SKADE_READ_OK)
		report_open(location, &o);
	PG_TRY();
	{
		buf = read_whole(o.fd, location);
	}
	PG_FINALLY();
	{
		close_fd(o.fd);
	}
	PG_END_TRY();

	if (SkadeIsGzip(buf->data, buf->len))
		buf = SkadeGunzip(buf->data, buf->len, cap, location);
	if (real_path)
		*real_path = o.real;
	return buf;
}

/*
 * SkadeProbeLocation
 *		Could SkadeReadLocation read this location?  Never raises for the
 *		expected cases (other scheme, outside the roots, missing file), so
 *		callers in a commit path can skip unreadable metadata cheaply.
 */
SkadeReadStatus
SkadeProbeLocation(const char *location)
{
	SkadeReadStatus status;
	const char *path;
	Opened		o;

	/* no request is made for an object: its read may still fail */
	if (SkadeIsObjectLocation(location))
		return SkadeObjectProbe(location);
	path = location_path(location, false, &status);

	if (path == NULL)
		return status;
	open_confined(path, &o);
	if (o.status == SKADE_READ_OK)
		close_fd(o.fd);
	return o.status;
}

/*
 * SkadePathAllowed
 *		Is the real path of a file read earlier inside the roots in force
 *		now?  (For cache hits: cheap, no file system access once the roots
 *		are resolved.)
 */
bool
SkadePathAllowed(const char *real_path)
{
	ListCell   *lc;

	if (SkadeIsObjectLocation(real_path))
		return SkadeObjectAllowed(real_path);
	foreach(lc, allowed_roots())
	{
		const AllowedRoot *r = lfirst(lc);

		if (r->real && inside(real_path, r->real))
			return true;
	}
	return false;
}

/* ---------------------------------------------------------------- locations */

/*
 * The absolute path a location names (file URI or path), checked for
 * control characters and scheme; NULL (report false) with *status set.
 */
static const char *
location_path(const char *location, bool report, SkadeReadStatus *status)
{
	const char *p = local_path(location, report, status);

	if (p == NULL)
		return NULL;
	if (allowed_roots() == NIL)
	{
		*status = SKADE_READ_DENIED;
		if (!report)
			return NULL;
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("cannot read file \"%s\": file access is disabled", location),
				 errhint("A superuser can allow directories with skade.allowed_roots.")));
	}
	return p;
}

/*
 * SkadeRefuseControlChars
 *		Raise 22023 if location has a control character (no file is named
 *		so, and the caches key derived entries with one).
 */
void
SkadeRefuseControlChars(const char *location)
{
	const unsigned char *c;

	for (c = (const unsigned char *) location; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("metadata location contains a control character"),
					 errdetail("Byte %d is 0x%02x.",
							   (int) (c - (const unsigned char *) location) + 1, *c)));
}

/*
 * The absolute local path a location names (no control characters; file:
 * URIs or an absolute path; another scheme is 0A000), not yet normalised.
 */
static const char *
local_path(const char *location, bool report, SkadeReadStatus *status)
{
	const char *p = location;
	const unsigned char *c;

	for (c = (const unsigned char *) location; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
		{
			*status = SKADE_READ_FAILED;
			if (!report)
				return NULL;
			SkadeRefuseControlChars(location);
		}

	if (strncmp(p, "file://localhost/", 17) == 0)
		p += 16;
	else if (strncmp(p, "file:///", 8) == 0)
		p += 7;
	else if (strncmp(p, "file:/", 6) == 0)
		p += 5;
	else if (p[0] != '/')
	{
		*status = strchr(p, ':') ? SKADE_READ_UNSUPPORTED : SKADE_READ_FAILED;
		if (!report)
			return NULL;
		if (strchr(p, ':'))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot read metadata location \"%s\": only local files and s3:// objects are supported", location),
					 errdetail("Reading metadata needs file content; pointer operations on this table keep working."),
					 errhint("Use file:/ locations or s3:// objects under skade.allowed_roots.")));
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("metadata location \"%s\" is neither a file URI nor an absolute path", location)));
	}
	return p;
}

/*
 * SkadeLocalPath
 *		The local path a location names, "." and ".." resolved lexically;
 *		errors as for a read (control characters, relative paths, another
 *		scheme).  palloc'd.
 */
char *
SkadeLocalPath(const char *location)
{
	SkadeReadStatus status;

	return normalize(local_path(location, true, &status));
}

/*
 * The roots of skade.allowed_roots, normalised and resolved; resolved once
 * per setting (a root that does not resolve yet is tried again next time).
 */
static List *
allowed_roots(void)
{
	const char *setting = skade_allowed_roots ? skade_allowed_roots : "";
	ListCell   *lc;
	MemoryContext old;

	if (roots_cxt == NULL)
		roots_cxt = AllocSetContextCreate(TopMemoryContext, "skade file access",
										  ALLOCSET_SMALL_SIZES);
	if (roots_for == NULL || strcmp(roots_for, setting) != 0)
	{
		List	   *dirs;
		List	   *prefixes;

		MemoryContextReset(roots_cxt);
		roots = NIL;
		old = MemoryContextSwitchTo(roots_cxt);
		if (SkadeSplitRoots(setting, &dirs, &prefixes))
			foreach(lc, dirs)
			{
				AllowedRoot *r = palloc0(sizeof(AllowedRoot));

				r->configured = normalize((char *) lfirst(lc));
				roots = lappend(roots, r);
			}
		roots_for = pstrdup(setting);
		MemoryContextSwitchTo(old);
	}
	foreach(lc, roots)
	{
		AllowedRoot *r = lfirst(lc);

		if (r->real == NULL)
		{
			char	   *real = realpath(r->configured, NULL);

			if (real)
			{
				r->real = MemoryContextStrdup(roots_cxt, real);
				free(real);
			}
		}
	}
	return roots;
}

/* An absolute path with "." and ".." resolved lexically, no double slashes. */
static char *
normalize(const char *path)
{
	StringInfoData out;
	char	   *copy = pstrdup(path);
	char	   *save;
	char	   *comp;

	initStringInfo(&out);
	for (comp = strtok_r(copy, "/", &save); comp; comp = strtok_r(NULL, "/", &save))
	{
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0)
		{
			char	   *slash = strrchr(out.data, '/');

			if (slash)
			{
				out.len = slash - out.data;
				out.data[out.len] = '\0';
			}
			continue;
		}
		appendStringInfo(&out, "/%s", comp);
	}
	if (out.len == 0)
		appendStringInfoChar(&out, '/');
	return out.data;
}

/* Is path dir itself or below it? ("/" contains everything) */
static bool
inside(const char *path, const char *dir)
{
	size_t		len = strlen(dir);

	if (len == 1 && dir[0] == '/')
		return true;
	return strncmp(path, dir, len) == 0 && (path[len] == '/' || path[len] == '\0');
}

/* ---------------------------------------------------------------- the walk */

/* Open path (absolute) for reading, confined to the roots; see the banner. */
static void
open_confined(const char *path, Opened *o)
{
	char	   *norm = normalize(path);
	const char *rest;
	const AllowedRoot *root = root_of(norm, &rest);

	memset(o, 0, sizeof(Opened));
	o->fd = -1;
	if (root == NULL)
	{
		o->status = SKADE_READ_DENIED;
		return;
	}
	(void) walk(root, rest, o);
}

/* The root whose real or configured directory contains path; *rest below it. */
static const AllowedRoot *
root_of(const char *path, const char **rest)
{
	ListCell   *lc;

	foreach(lc, allowed_roots())
	{
		const AllowedRoot *r = lfirst(lc);

		if (r->real == NULL)
			continue;
		if (inside(path, r->real))
		{
			*rest = path + (strcmp(r->real, "/") == 0 ? 0 : strlen(r->real));
			return r;
		}
		if (inside(path, r->configured))
		{
			*rest = path + (strcmp(r->configured, "/") == 0 ? 0 : strlen(r->configured));
			return r;
		}
	}
	return NULL;
}

/* a walk in progress: where it is, and what is left */
typedef struct Walk
{
	const AllowedRoot *root;	/* the root walked in */
	List	   *queue;			/* components still to walk */
	StringInfoData cur;			/* the real path of dirfd */
	int			dirfd;
	int			hops;			/* symbolic links followed */
} Walk;

static bool walk_enter(Walk *w, const AllowedRoot *root, Opened *o);
static bool walk_up(Walk *w, Opened *o);
static bool walk_link(Walk *w, const char *name, Opened *o);
static void walk_open_file(Walk *w, const char *name, const struct stat *st, Opened *o);
static void walk_fail(Opened *o, SkadeReadStatus status, int err, bool escaped);
static List *components(const char *path, List *tail);

/*
 * Walk rest ("/a/b/c") from root's real directory, one component at a time,
 * following symbolic links only while they stay inside a root.  Fills o;
 * returns whether the file was opened.
 */
static bool
walk(const AllowedRoot *root, const char *rest, Opened *o)
{
	Walk		w = {0};

	w.dirfd = -1;
	initStringInfo(&w.cur);
	w.queue = components(rest, NIL);
	o->status = SKADE_READ_OK;
	if (!walk_enter(&w, root, o))
		return false;
	while (w.queue != NIL && o->status == SKADE_READ_OK && o->fd < 0)
	{
		char	   *name = linitial(w.queue);
		bool		last = list_length(w.queue) == 1;
		int			fd;
		struct stat st;

		w.queue = list_delete_first(w.queue);
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0)
		{
			(void) walk_up(&w, o);
			continue;
		}
		fd = open_at(w.dirfd, name, O_PATH | O_NOFOLLOW);
		if (fd < 0 || fstat(fd, &st) < 0)
		{
			int			err = errno;

			close_fd(fd);
			walk_fail(o, (err == ENOENT || err == ENOTDIR) ? SKADE_READ_MISSING
					  : SKADE_READ_FAILED, err, false);
			break;
		}
		if (S_ISLNK(st.st_mode))
		{
			close_fd(fd);
			(void) walk_link(&w, name, o);
		}
		else if (!last && S_ISDIR(st.st_mode))
		{
			close_fd(w.dirfd);
			w.dirfd = fd;
			if (w.cur.len > 1)
				appendStringInfoChar(&w.cur, '/');
			appendStringInfoString(&w.cur, name);
		}
		else if (!last)
		{
			close_fd(fd);
			walk_fail(o, SKADE_READ_MISSING, ENOTDIR, false);
		}
		else
		{
			close_fd(fd);
			walk_open_file(&w, name, &st, o);
		}
	}
	close_fd(w.dirfd);
	if (o->status == SKADE_READ_OK && o->fd < 0)
	{
		/* the walk ended on a directory (a root itself, or "dir/..") */
		o->status = SKADE_READ_FAILED;
		o->not_regular = true;
	}
	return o->status == SKADE_READ_OK;
}

/* Start (again) at root's real directory. */
static bool
walk_enter(Walk *w, const AllowedRoot *root, Opened *o)
{
	close_fd(w->dirfd);
	w->root = root;
	w->dirfd = open_at(AT_FDCWD, root->real, O_PATH | O_DIRECTORY);
	if (w->dirfd < 0)
	{
		walk_fail(o, SKADE_READ_FAILED, errno, false);
		return false;
	}
	resetStringInfo(&w->cur);
	appendStringInfoString(&w->cur, root->real);
	return true;
}

/* "..", from a link target: to the parent, never above the root */
static bool
walk_up(Walk *w, Opened *o)
{
	int			fd;

	if (strcmp(w->cur.data, w->root->real) == 0)
	{
		walk_fail(o, SKADE_READ_DENIED, 0, true);
		return false;
	}
	fd = open_at(w->dirfd, "..", O_PATH | O_DIRECTORY);
	if (fd < 0)
	{
		walk_fail(o, SKADE_READ_FAILED, errno, false);
		return false;
	}
	close_fd(w->dirfd);
	w->dirfd = fd;
	w->cur.len = strrchr(w->cur.data, '/') - w->cur.data;
	if (w->cur.len == 0)
		w->cur.len = 1;
	w->cur.data[w->cur.len] = '\0';
	return true;
}

/*
 * A symbolic link in the current directory: its target's components go
 * first in the queue; an absolute target must lead (lexically) into a
 * root, where the walk goes on.
 */
static bool
walk_link(Walk *w, const char *name, Opened *o)
{
	char		target[MAXPGPATH];
	ssize_t		n = readlinkat(w->dirfd, name, target, sizeof(target) - 1);

	if (n < 0 || ++w->hops > SKADE_MAX_SYMLINKS)
	{
		walk_fail(o, SKADE_READ_FAILED, n < 0 ? errno : ELOOP, false);
		return false;
	}
	target[n] = '\0';
	if (target[0] == '/')
	{
		const char *trest;
		const AllowedRoot *troot = root_of(normalize(target), &trest);

		if (troot == NULL)
		{
			walk_fail(o, SKADE_READ_DENIED, 0, true);
			return false;
		}
		if (!walk_enter(w, troot, o))
			return false;
		w->queue = components(trest, w->queue);
	}
	else
		w->queue = components(target, w->queue);
	return true;
}

/* The file itself: a regular file, opened as the very inode inspected. */
static void
walk_open_file(Walk *w, const char *name, const struct stat *st, Opened *o)
{
	struct stat st2;

	if (!S_ISREG(st->st_mode))
	{
		o->status = SKADE_READ_FAILED;
		o->not_regular = true;
		return;
	}
	o->fd = open_at(w->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | PG_BINARY);
	if (o->fd >= 0 &&
		(fstat(o->fd, &st2) < 0 || st2.st_dev != st->st_dev || st2.st_ino != st->st_ino))
	{
		close_fd(o->fd);
		o->fd = -1;
		errno = ESTALE;			/* swapped while we looked */
	}
	if (o->fd < 0)
	{
		walk_fail(o, SKADE_READ_FAILED, errno, false);
		return;
	}
	if (w->cur.len > 1)
		appendStringInfoChar(&w->cur, '/');
	appendStringInfoString(&w->cur, name);
	o->real = w->cur.data;
}

static void
walk_fail(Opened *o, SkadeReadStatus status, int err, bool escaped)
{
	o->status = status;
	o->err = err;
	o->escaped = escaped;
}

/* path's components (palloc'd), then tail */
static List *
components(const char *path, List *tail)
{
	char	   *copy = pstrdup(path);
	char	   *save;
	char	   *comp;
	List	   *out = NIL;

	for (comp = strtok_r(copy, "/", &save); comp; comp = strtok_r(NULL, "/", &save))
		out = lappend(out, comp);
	return list_concat(out, tail);
}

/* openat, with the descriptor reported to fd.c */
static int
open_at(int dirfd, const char *name, int flags)
{
	int			fd;

	ReserveExternalFD();
	fd = openat(dirfd, name, flags | O_CLOEXEC);
	if (fd < 0)
	{
		int			save = errno;

		ReleaseExternalFD();
		errno = save;
	}
	return fd;
}

static void
close_fd(int fd)
{
	if (fd >= 0)
	{
		close(fd);
		ReleaseExternalFD();
	}
}

/* The SQLSTATE of a file access error (never XX000: it is not skade's fault). */
static int
file_errcode(int err)
{
	switch (err)
	{
		case ENOENT:
		case ENOTDIR:
			return ERRCODE_UNDEFINED_FILE;
		case EACCES:
		case EPERM:
			return ERRCODE_INSUFFICIENT_PRIVILEGE;
		case ENAMETOOLONG:
			return ERRCODE_NAME_TOO_LONG;
		default:
			return ERRCODE_IO_ERROR;	/* ELOOP, ESTALE (swapped), EIO, ... */
	}
}

/* The ERROR for a failed confined open. */
static void
report_open(const char *location, const Opened *o)
{
	if (o->status == SKADE_READ_DENIED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("file \"%s\" is outside skade.allowed_roots", location),
				 o->escaped ?
				 errdetail("Its path leads out of the allowed directories through a symbolic link or \"..\".") : 0));
	if (o->not_regular)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a regular file", location)));
	errno = o->status == SKADE_READ_MISSING && o->err == 0 ? ENOENT : o->err;
	ereport(ERROR,
			(errcode(file_errcode(o->status == SKADE_READ_MISSING && o->err == 0 ? ENOENT : o->err)),
			 errmsg("could not open file \"%s\": %m", location)));
}

/* The whole file (at most skade.max_metadata_size bytes). */
static StringInfo
read_whole(int fd, const char *location)
{
	struct stat st;
	StringInfo	buf;
	size_t		cap = (size_t) skade_max_metadata_size;
	ssize_t		n;

	if (fstat(fd, &st) < 0)
		ereport(ERROR,
				(errcode(ERRCODE_IO_ERROR),
				 errmsg("could not stat file \"%s\": %m", location)));
	if ((size_t) st.st_size > cap)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("file \"%s\" is too large", location),
				 errdetail("It has %lld bytes; skade.max_metadata_size is %zu.",
						   (long long) st.st_size, cap),
				 errhint("Raise skade.max_metadata_size if the file is legitimate.")));
	buf = makeStringInfo();
	enlargeStringInfo(buf, st.st_size + 1);
	/* read until EOF: the file may have changed since fstat */
	for (;;)
	{
		if (buf->maxlen - buf->len < 2)
			enlargeStringInfo(buf, 65536);
		n = read(fd, buf->data + buf->len, buf->maxlen - buf->len - 1);
		if (n < 0)
			ereport(ERROR,
					(errcode(ERRCODE_IO_ERROR),
					 errmsg("could not read file \"%s\": %m", location)));
		if (n == 0)
			break;
		buf->len += n;
		if ((size_t) buf->len > cap)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("file \"%s\" is too large", location),
					 errdetail("It grew past skade.max_metadata_size (%zu bytes) while being read.", cap)));
	}
	buf->data[buf->len] = '\0';
	return buf;
}
