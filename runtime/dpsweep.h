/* dpsweep.h: removes the temporary files that writers killed between
 * creating and renaming them left beside a path, written once for the IR
 * library (formats/core.c: PATH.tmpPID) and the runtime (runtime/npy.c:
 * PATH.PID.N.tmp), which must not depend on each other: header-only. */
#ifndef DPSWEEP_H
#define DPSWEEP_H

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Removes the files of PATH's folder whose name is PATH's base name and a
 * suffix from which pidof reads the writer's process id (<= 0: not a
 * temporary file's name), when that process is gone (a SIGKILL cannot be
 * caught) and is not this one.  Best effort; errors are ignored. */
static inline void
dp_sweep(const char *path, long (*pidof)(const char *suffix))
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	size_t bl = strlen(base), dl = slash ? (size_t)(slash - path) : 0;
	char *dir = malloc(dl + 2), *full;
	struct dirent *e;
	long pid;
	DIR *d;

	if (!dir)
		return;
	if (!slash)
		strcpy(dir, ".");
	else if (dl == 0)
		strcpy(dir, "/");
	else {
		memcpy(dir, path, dl);
		dir[dl] = 0;
	}
	d = opendir(dir);
	while (d && (e = readdir(d)) != NULL) {
		const char *n = e->d_name;

		if (strncmp(n, base, bl) != 0)
			continue;
		pid = pidof(n + bl);
		if (pid <= 0 || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;	/* running (or not ours to ask): its file */
		full = malloc(strlen(dir) + strlen(n) + 2);
		if (full) {
			sprintf(full, "%s/%s", dir, n);
			unlink(full);
			free(full);
		}
	}
	if (d)
		closedir(d);
	free(dir);
}

#endif
