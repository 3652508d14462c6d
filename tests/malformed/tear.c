/* tear.c: LD_PRELOAD shim for tests/malformed.t: in the program named by
 * TEAR_PROG, the TEAR_AT-th call (default 1) of fwrite or write on a file
 * other than stdout/stderr writes half its bytes and then either kills the
 * process with SIGKILL (TEAR=kill: a stage killed mid-write) or fails with
 * ENOSPC (TEAR=full: a full disk); with TEAR_PATH set, only calls on files
 * whose path contains it count.  Everything else passes through. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char *program_invocation_short_name;

static int calls;

/* 1 when this call is the one to tear. */
static int
tear_now(int fd)
{
	const char *prog = getenv("TEAR_PROG"), *at = getenv("TEAR_AT"), *path = getenv("TEAR_PATH");
	if (fd <= 2 || !prog || strcmp(prog, program_invocation_short_name) != 0)
		return 0;
	if (path && *path) {
		char link[64], name[4096];
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t k = readlink(link, name, sizeof name - 1);
		if (k < 0)
			return 0;
		name[k] = 0;
		if (!strstr(name, path))
			return 0;
	}
	return ++calls == (at ? atoi(at) : 1);
}

/* After half the bytes went out: dies, or reports a full disk. */
static void
tear(void)
{
	const char *how = getenv("TEAR");
	if (how && strcmp(how, "kill") == 0) {
		raise(SIGKILL);
		_exit(99);   /* not reached */
	}
	errno = ENOSPC;
}

size_t
fwrite(const void *p, size_t size, size_t n, FILE *f)
{
	static size_t (*real)(const void *, size_t, size_t, FILE *);
	if (!real)
		real = (size_t (*)(const void *, size_t, size_t, FILE *))dlsym(RTLD_NEXT, "fwrite");
	if (size == 0 || n == 0 || !tear_now(fileno(f)))
		return real(p, size, n, f);
	size_t half = real(p, 1, size * n / 2, f);
	fflush(f);
	tear();
	return half / size;
}

ssize_t
write(int fd, const void *p, size_t n)
{
	static ssize_t (*real)(int, const void *, size_t);
	if (!real)
		real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	if (n == 0 || !tear_now(fd))
		return real(fd, p, n);
	ssize_t w = real(fd, p, n / 2);
	tear();
	return w < 0 ? w : -1;
}
