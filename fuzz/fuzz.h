/* fuzz.h: what the libFuzzer harnesses share: --help, which libFuzzer alone
 * would fuzz on (its flags start with one dash; its own help is -help=1),
 * for those that define _GNU_SOURCE a file in memory that a reader opens by
 * its path, and for those of the IR (dpir.h included first) its text form. */
#ifndef FUZZ_H
#define FUZZ_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* When the command line holds --help or -h: prints the usage of the harness
 * of what and exits 0. */
static void
fuzz_help(int argc, char **argv, const char *what)
{
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf("usage: %s [-FLAG=VALUE...] [CORPUS_DIR... | INPUT...]\n"
			       "libFuzzer harness of %s: fuzzes into the first CORPUS_DIR\n"
			       "(seeded from the others: fuzz/seeds/), or runs each INPUT once.\n"
			       "Run it from the repository root; `make fuzz` runs every harness\n"
			       "(fuzz/README.md); -help=1 lists libFuzzer's flags.\n", name, what);
			exit(0);
		}
}

#ifdef _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/* A new file in memory called name; its path, /proc/self/fd/N, into
 * path[n] (when path is not NULL).  Returns its descriptor; aborts when
 * none can be made. */
static inline int
fuzz_memfile(const char *name, char *path, size_t n)
{
	int fd = memfd_create(name, 0);

	if (fd < 0) {
		perror("memfd_create");
		abort();
	}
	if (path)
		snprintf(path, n, "/proc/self/fd/%d", fd);
	return fd;
}

/* Makes the file in memory fd hold exactly data[size]. */
static inline void
fuzz_fill(int fd, const uint8_t *data, size_t size)
{
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
}
#endif

#ifdef DPIR_H
/* The text form of fn, malloc'd. */
static inline char *
fuzz_text(const Fn *fn, size_t *len)
{
	char *t;
	FILE *f = open_memstream(&t, len);
	if (!f || dp_print(f, fn) || fclose(f))
		dp_die("printing failed");
	return t;
}
#endif

#endif
