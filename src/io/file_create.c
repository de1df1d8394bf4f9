/*-------------------------------------------------------------------------
 *
 * file_create.c
 *	  Create a new file at a location, confined to the directories of
 *	  skade.write_roots, durably and never over an existing file; remove
 *	  one there.
 *
 * Invariants
 *   - Only local locations (file: URIs or absolute paths) are written; the
 *     path is normalised lexically and must lie inside a write root as
 *     configured, else 42501 without touching the file system.  Empty
 *     skade.write_roots: writing is disabled (42501).
 *   - The path is walked from the root's real directory one component at a
 *     time with openat(O_DIRECTORY | O_NOFOLLOW): a symbolic link anywhere
 *     below the root is refused (42501), a missing directory is created
 *     (mode 0755) -- so nothing outside the root is ever created or named.
 *   - The file is created with O_CREAT | O_EXCL | O_NOFOLLOW (mode 0644):
 *     an existing file (or link) is never replaced (58P02).  It is written
 *     whole and fsync'ed, then its directory (and every directory created
 *     on the way) is fsync'ed: once SkadeCreateFile returns, the file
 *     survives a crash.  On any error after creation the partial file is
 *     removed.
 *   - Once the exclusive create succeeds, and before anything is written
 *     into the file, its location is appended durably to the journal of
 *     written files; once complete it is remembered for the transaction
 *     (written_files.c): if the transaction aborts the file goes, if the
 *     server crashes first the sweep finds it.  (A crash between the
 *     create and the journal's fdatasync can leave an empty file nobody
 *     refers to and the journal does not name.)
 *   - Removal (SkadeRemoveBelow) walks the same way, never follows a link,
 *     and neither raises nor allocates (it runs at commit and abort);
 *     SkadeWritablePath decides beforehand that a location lies inside a
 *     write root (42501 otherwise).
 *   - Errors name the location as given and carry file-system SQLSTATEs
 *     (58P02 the file exists, 58P01 a write root is missing, 53100 disk
 *     full, 42501 permission or a path outside the roots, 58030 other I/O).
 *
 * Who may write is decided by EXECUTE privilege on the functions that call
 * this (they write only Iceberg metadata, see metadata_write.c); where, by
 * the superuser-only roots.  File descriptors are reported to fd.c and
 * closed on every path.
 *
 * IDENTIFICATION
 *	  src/io/file_create.c
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
#include "io/file_create.h"
#include "util/guc.h"
#include "io/object_store.h"
#include "util/location.h"

static const char *write_root_of(const char *path, const char *verb, const char **rest);
static int	walk_dirs(const char *location, const char *root, const char *rest,
					  char **name);
static void create_at(const char *location, int dirfd, const char *name,
					  const char *data, Size len);
pg_noreturn static void fail(const char *location, const char *what, int err);
static int	write_errcode(int err);

/*
 * SkadeCreateFile
 *		Create the file at location (an object: by route) with the len bytes
 *		of data (see above); returns its real path (palloc'd).
 */
char *
SkadeCreateFile(const SkadeRoute *route, const char *location, const char *data, Size len)
{
	char	   *rest;
	char	   *root;
	char	   *name;
	int			dirfd;

	if (SkadeIsObjectLocation(location))
		return SkadeObjectCreate(route, location, data, len);
	SkadeWritablePath(route, location, "write", &root, &rest);
	dirfd = walk_dirs(location, root, rest, &name);
	PG_TRY();
	{
		create_at(location, dirfd, name, data, len);
		SkadeWriteJournalOf()->remember(root, rest);
	}
	PG_FINALLY();
	{
		close(dirfd);
		ReleaseExternalFD();
	}
	PG_END_TRY();
	/* plain directories only below the root's real path: this is the real path */
	return psprintf("%s/%s", root, rest);
}

/*
 * SkadeWritablePath
 *		The real directory of the write root location lies in and the path
 *		below it (palloc'd); verb ("write", "remove") names the act in errors:
 *		0A000 for a location that is not local, 42501 when it lies in no
 *		write root (naming only the location as given).
 */
void
SkadeWritablePath(const SkadeRoute *route, const char *location, const char *verb,
				  char **root, char **rest)
{
	const char *r;
	const char *below;

	if (SkadeIsObjectLocation(location))
	{
		SkadeObjectWritable(route, location, verb, root, rest);
		return;
	}
	if (strncmp(location, "file:", 5) != 0 && location[0] != '/')
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot %s \"%s\": only local files and s3:// objects are supported", verb, location),
				 errhint("Use file:/ locations or s3:// objects under skade.write_roots.")));
	r = write_root_of(SkadeLocalPath(location), verb, &below);
	if (r == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("cannot %s \"%s\": it is outside skade.write_roots", verb, location),
				 (skade_write_roots == NULL || skade_write_roots[0] == '\0') ?
				 errhint("Writing is disabled; a superuser can allow directories with skade.write_roots.") : 0));
	*root = pstrdup(r);
	*rest = pstrdup(below);
}

/*
 * SkadeRemoveBelow
 *		Unlink the file rest names below the directory root, through plain
 *		directories only (no symbolic link is followed; the last component
 *		is removed as the entry it is).  Returns 0 or an errno (ENOENT: it
 *		is not there).  Raises nothing and allocates nothing: it runs at
 *		transaction commit and abort.
 */
int
SkadeRemoveBelow(const char *root, const char *rest)
{
	char		comp[NAME_MAX + 1];
	const char *p = rest;
	const char *slash;
	int			dirfd;
	int			err = 0;

	if (SkadeIsObjectLocation(root))
		return SkadeObjectRemove(root, rest);
	dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return errno;
	while (err == 0 && (slash = strchr(p, '/')) != NULL)
	{
		int			next;

		if (slash - p > NAME_MAX)
		{
			err = ENAMETOOLONG;
			break;
		}
		memcpy(comp, p, slash - p);
		comp[slash - p] = '\0';
		next = openat(dirfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			err = errno;
		else
		{
			close(dirfd);
			dirfd = next;
		}
		p = slash + 1;
	}
	if (err == 0 && unlinkat(dirfd, p, 0) != 0)
		err = errno;
	if (err == 0)
		(void) fsync(dirfd);
	close(dirfd);
	return err;
}

/* The write root path lies in (its real directory), and the path below it. */
static const char *
write_root_of(const char *path, const char *verb, const char **rest)
{
	List	   *dirs;
	List	   *prefixes;
	ListCell   *lc;

	if (!SkadeSplitRoots(skade_write_roots, &dirs, &prefixes))
		return NULL;
	foreach(lc, dirs)
	{
		const char *dir = SkadeLocalPath((const char *) lfirst(lc));
		size_t		n = strlen(dir);

		if (strncmp(path, dir, n) == 0 && path[n] == '/' && path[n + 1] != '\0')
		{
			char	   *real = realpath(dir, NULL);
			char	   *copy;

			if (real == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_FILE),
						 errmsg("cannot %s \"%s\": its write root \"%s\" does not exist",
								verb, path, dir),
						 errhint("Create the directories of skade.write_roots; skade creates only what is below them.")));
			copy = pstrdup(real);
			free(real);
			*rest = path + n + 1;
			return copy;
		}
	}
	return NULL;
}

/*
 * Open the directory of rest below root, creating what is missing; no
 * symbolic link is followed.  Returns the directory's descriptor (reported
 * to fd.c) and sets *name to the file's last component.
 */
static int
walk_dirs(const char *location, const char *root, const char *rest, char **name)
{
	char	   *copy = pstrdup(rest);
	char	   *slash;
	char	   *comp = copy;
	int			dirfd;

	ReserveExternalFD();
	dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
	{
		ReleaseExternalFD();
		fail(location, "open its write root", errno);
	}
	while ((slash = strchr(comp, '/')) != NULL)
	{
		int			next;

		*slash = '\0';
		next = openat(dirfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT)
		{
			if (mkdirat(dirfd, comp, 0755) != 0 && errno != EEXIST)
			{
				int			err = errno;

				close(dirfd);
				ReleaseExternalFD();
				fail(location, "create its directory", err);
			}
			/* the new entry must reach the disk with its parent */
			(void) fsync(dirfd);
			next = openat(dirfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (next < 0)
		{
			int			err = errno;

			close(dirfd);
			ReleaseExternalFD();
			if (err == ELOOP || err == ENOTDIR)
				ereport(ERROR,
						(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						 errmsg("cannot write \"%s\": a component of its path is a symbolic link or not a directory",
								location),
						 errdetail("skade writes only through plain directories below skade.write_roots.")));
			fail(location, "open its directory", err);
		}
		close(dirfd);
		dirfd = next;
		comp = slash + 1;
	}
	*name = comp;
	return dirfd;
}

/* Create name in dirfd exclusively, write data, fsync it and the directory. */
static void
create_at(const char *location, int dirfd, const char *name, const char *data, Size len)
{
	int			fd;
	Size		done = 0;
	int			err = 0;

	if (name[0] == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot write \"%s\": it names a directory", location)));
	ReserveExternalFD();
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
	{
		err = errno;
		ReleaseExternalFD();
		if (err == EEXIST)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_FILE),
					 errmsg("cannot write \"%s\": the file exists", location),
					 errdetail("Metadata files are written once and never replaced.")));
		fail(location, "create it", err);
	}
	/*
	 * Recorded once it is ours (O_EXCL), before it holds anything: an abort
	 * or a crash cannot lose track of it, and the journal never names a file
	 * another writer made.
	 */
	PG_TRY();
	{
		SkadeWriteJournalOf()->journal(location, NULL);
	}
	PG_CATCH();
	{
		close(fd);
		ReleaseExternalFD();
		(void) unlinkat(dirfd, name, 0);
		PG_RE_THROW();
	}
	PG_END_TRY();
	while (done < len && err == 0)
	{
		ssize_t		n = write(fd, data + done, len - done);

		if (n < 0 && errno != EINTR)
			err = errno;
		else if (n > 0)
			done += n;
	}
	if (err == 0 && fsync(fd) != 0)
		err = errno;
	if (close(fd) != 0 && err == 0)
		err = errno;
	ReleaseExternalFD();
	if (err == 0 && fsync(dirfd) != 0)
		err = errno;
	if (err != 0)
	{
		(void) unlinkat(dirfd, name, 0);
		fail(location, "write it", err);
	}
}

static void
fail(const char *location, const char *what, int err)
{
	ereport(ERROR,
			(errcode(write_errcode(err)),
			 errmsg("cannot write \"%s\": could not %s: %s", location, what, strerror(err))));
}

static int
write_errcode(int err)
{
	switch (err)
	{
		case ENOSPC:
		case EDQUOT:
			return ERRCODE_DISK_FULL;
		case EACCES:
		case EPERM:
		case EROFS:
			return ERRCODE_INSUFFICIENT_PRIVILEGE;
		default:
			return ERRCODE_IO_ERROR;
	}
}
