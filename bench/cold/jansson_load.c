/*
 * bench/cold/jansson_load.c
 *	  The baseline of metadata_load.sh's cold comparison (issue 15): jansson's
 *	  bare read + parse + free of one file, as a C client would do it.
 *
 * jansson_load FILE REPS loads FILE twice untimed (so that the timed loads
 * find the process's heap warm, as a long-lived client's would: malloc
 * serves a second buffer of a size it has just unmapped from a heap it
 * grows then, and reuses it from the third load on), then REPS
 * times, printing the milliseconds of each, one a line: open, fstat, read
 * the whole file into a fresh malloc'd buffer, json_loadb (flags 0, as skade
 * parses metadata), json_decref, free.  Nothing else is timed (process
 * start, the output).  Built by the script:
 * cc -O2 -o jansson_load jansson_load.c -ljansson; run by the server
 * (COPY ... FROM PROGRAM) between skade's loads.
 */
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* one repetition: read + parse + free; 0 on success */
static int
load_once(const char *path)
{
	int			fd = open(path, O_RDONLY);
	struct stat st;
	char	   *buf;
	size_t		got = 0;
	json_error_t err;
	json_t	   *root;

	if (fd < 0 || fstat(fd, &st) != 0)
	{
		perror(path);
		return 1;
	}
	buf = malloc((size_t) st.st_size + 1);
	if (buf == NULL)
		return 1;
	while (got < (size_t) st.st_size)
	{
		ssize_t		n = read(fd, buf + got, (size_t) st.st_size - got);

		if (n <= 0)
		{
			perror(path);
			return 1;
		}
		got += (size_t) n;
	}
	close(fd);
	root = json_loadb(buf, got, 0, &err);
	if (root == NULL)
	{
		fprintf(stderr, "%s: %s at line %d\n", path, err.text, err.line);
		return 1;
	}
	json_decref(root);
	free(buf);
	return 0;
}

int
main(int argc, char **argv)
{
	int			reps;
	int			r;

	if (argc != 3 || (reps = atoi(argv[2])) <= 0)
	{
		fprintf(stderr, "usage: jansson_load FILE REPS\n");
		return 2;
	}
	if (load_once(argv[1]) != 0 || load_once(argv[1]) != 0)
		return 1;
	for (r = 0; r < reps; r++)
	{
		double		t0 = now_ms();

		if (load_once(argv[1]) != 0)
			return 1;
		printf("%.4f\n", now_ms() - t0);
	}
	return 0;
}
