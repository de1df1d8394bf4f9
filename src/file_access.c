/*-------------------------------------------------------------------------
 *
 * file_access.c
 *	  Read the metadata file a metadata location names, confined to the
 *	  directories of skade.allowed_roots.
 *
 * The server reads files on behalf of SQL users, so every read is checked:
 *   - only local files: "file:/p", "file:///p", "file://localhost/p" or an
 *     absolute path; any other scheme (s3://, gs://, abfs://, hdfs://,
 *     http://, ...) is feature_not_supported, while pointer operations on
 *     such tables keep working;
 *   - no control characters, no relative paths;
 *   - the path is resolved (symlinks, "..", ".") with realpath(3) and must
 *     then lie inside one of the resolved allowed roots; an empty
 *     skade.allowed_roots allows nothing;
 *   - the resolved file is opened with O_NOFOLLOW | O_NONBLOCK (a FIFO
 *     cannot block us, a symlink swapped in after resolution is refused)
 *     and must be a regular file (not a directory, FIFO or device);
 *   - it is read whole, at most skade.max_metadata_size bytes, and gzip
 *     (by magic bytes, which also covers "*.gz.metadata.json") is
 *     inflated under the same cap.
 * Who may trigger a read is decided by EXECUTE privilege on the functions
 * that read (skade_reader and up); which files, by the superuser-only roots.
 *
 * Errors name the location and carry proper SQLSTATEs.  Memory: the result
 * is palloc'd in CurrentMemoryContext; file descriptors come from
 * OpenTransientFile, so an ERROR closes them at transaction abort.
 *
 * IDENTIFICATION
 *	  src/file_access.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/fd.h"
#include "utils/varlena.h"

#include "file_access.h"
#include "guc.h"
#include "gzip.h"

static SkadeReadStatus resolve_location(const char *location, char **path,
										bool report);
static bool inside_allowed_roots(const char *resolved);

/*
 * SkadeReadLocation
 *		The content of the metadata file at location, inflated if gzip.
 *		Every failure is an ERROR.
 */
StringInfo
SkadeReadLocation(const char *location)
{
	char	   *path;
	int			fd;
	struct stat st;
	StringInfo	buf;
	size_t		cap = (size_t) skade_max_metadata_size;
	ssize_t		n;

	(void) resolve_location(location, &path, true);

	fd = OpenTransientFile(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", location)));
	if (fstat(fd, &st) < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat file \"%s\": %m", location)));
	if (!S_ISREG(st.st_mode))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("metadata location \"%s\" is not a regular file", location)));
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
					(errcode_for_file_access(),
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
	CloseTransientFile(fd);

	if (SkadeIsGzip(buf->data, buf->len))
		buf = SkadeGunzip(buf->data, buf->len, cap, location);
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
	char	   *path;
	SkadeReadStatus status = resolve_location(location, &path, false);
	struct stat st;

	if (status != SKADE_READ_OK)
		return status;
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return SKADE_READ_MISSING;
	return SKADE_READ_OK;
}

/*
 * resolve_location
 *		Turn a location into a resolved path inside the allowed roots.
 *		With report, failures are ERRORs; else a status is returned.
 */
static SkadeReadStatus
resolve_location(const char *location, char **path, bool report)
{
	const char *p = location;
	const unsigned char *c;
	char	   *resolved;

	for (c = (const unsigned char *) location; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
		{
			if (!report)
				return SKADE_READ_FAILED;
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("metadata location contains a control character"),
					 errdetail("Byte %d is 0x%02x.",
							   (int) (c - (const unsigned char *) location) + 1, *c)));
		}

	if (strncmp(p, "file://localhost/", 17) == 0)
		p += 16;
	else if (strncmp(p, "file:///", 8) == 0)
		p += 7;
	else if (strncmp(p, "file:/", 6) == 0)
		p += 5;
	else if (p[0] != '/')
	{
		if (!report)
			return strchr(p, ':') ? SKADE_READ_UNSUPPORTED : SKADE_READ_FAILED;
		if (strchr(p, ':'))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot read metadata location \"%s\": only local files are supported", location),
					 errdetail("Reading metadata needs file content; pointer operations on this table keep working."),
					 errhint("Use file:/ locations under skade.allowed_roots.")));
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("metadata location \"%s\" is neither a file URI nor an absolute path", location)));
	}

	if (skade_allowed_roots == NULL || skade_allowed_roots[0] == '\0')
	{
		if (!report)
			return SKADE_READ_DENIED;
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("cannot read file \"%s\": file access is disabled", location),
				 errhint("A superuser can allow directories with skade.allowed_roots.")));
	}

	resolved = realpath(p, NULL);
	if (resolved == NULL)
	{
		int			save_errno = errno;

		if (!report)
			return save_errno == ENOENT || save_errno == ENOTDIR ? SKADE_READ_MISSING : SKADE_READ_FAILED;
		errno = save_errno;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", location)));
	}
	*path = pstrdup(resolved);
	free(resolved);

	if (!inside_allowed_roots(*path))
	{
		if (!report)
			return SKADE_READ_DENIED;
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("file \"%s\" is outside skade.allowed_roots", location),
				 errdetail("It resolves to \"%s\".", *path)));
	}
	return SKADE_READ_OK;
}

/* Is the resolved path inside one of the (resolved) allowed roots? */
static bool
inside_allowed_roots(const char *resolved)
{
	char	   *raw = pstrdup(skade_allowed_roots);
	List	   *roots;
	ListCell   *lc;

	if (!SplitDirectoriesString(raw, ',', &roots))
		return false;
	foreach(lc, roots)
	{
		char	   *root = realpath((char *) lfirst(lc), NULL);
		size_t		len;
		bool		inside;

		if (root == NULL)
			continue;
		len = strlen(root);
		/* "/" as a root allows everything; else match on a component boundary */
		inside = (len == 1 && root[0] == '/') ||
			(strncmp(resolved, root, len) == 0 && resolved[len] == '/');
		free(root);
		if (inside)
			return true;
	}
	return false;
}
