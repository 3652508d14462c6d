/* files.c: child processes (fork + exec, never a shell), the temporary
 * folder and installing outputs only when their bytes change. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "link.h"

/* Joins two path parts with a slash. */
char *
join(Arena *m, const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *s = dp_alloc(m, na + nb + 2, 1);

	memcpy(s, a, na);
	s[na] = '/';
	memcpy(s + na + 1, b, nb + 1);
	return s;
}

static void
redirect(const char *path, int fd, int flags)
{
	int f = open(path, flags, 0666);

	if (f < 0) {
		dprintf(2, "cannot open %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	if (f != fd) {
		dup2(f, fd);
		close(f);
	}
}

/* When the child could not even start, its one line in the log ("cannot
 * run cc: No such file or directory") becomes the error, and the log is
 * emptied so that it is not shown twice. */
static int
startfail(const char *log, Err *err, const char *what)
{
	char line[512];
	FILE *f = fopen(log, "r");
	int ok = 0;

	if (f == NULL)
		return 0;
	if (fgets(line, sizeof line, f) && strncmp(line, "cannot ", 7) == 0) {
		line[strcspn(line, "\n")] = '\0';
		dp_seterr(err, "%s (%s)", line, what);
		ok = 1;
	}
	fclose(f);
	if (ok && (f = fopen(log, "w")) != NULL)
		fclose(f);
	return ok;
}

/* Starts a child process; its pid into *pid. */
int
spawn_start(char *const *argv, const char *cwd, const char *outpath, const char *log,
            const char *what, pid_t *pid, Err *err)
{
	pid_t p;

	fflush(NULL);
	p = fork();
	if (p < 0) {
		dp_seterr(err, "cannot start %s (%s): %s", argv[0], what, strerror(errno));
		return -1;
	}
	if (p == 0) {
		redirect(log, 2, O_WRONLY | O_CREAT | O_TRUNC);
		redirect("/dev/null", 0, O_RDONLY);
		if (outpath)
			redirect(outpath, 1, O_WRONLY | O_CREAT | O_TRUNC);
		else
			dup2(2, 1);
		if (cwd && chdir(cwd) != 0) {
			dprintf(2, "cannot enter %s: %s\n", cwd, strerror(errno));
			_exit(127);
		}
		execvp(argv[0], argv);
		dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	*pid = p;
	return 0;
}

/* Waits for a child spawn_start started (tool: its argv[0]). */
int
spawn_wait(pid_t pid, const char *tool, const char *log, const char *what, Err *err)
{
	int st;

	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			dp_seterr(err, "waiting for %s (%s): %s", tool, what, strerror(errno));
			return -1;
		}
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127 && startfail(log, err, what))
		return -1;
	if (WIFEXITED(st))
		dp_seterr(err, "%s failed %s (exit status %d)", tool, what, WEXITSTATUS(st));
	else
		dp_seterr(err, "%s was killed by signal %d %s", tool, WTERMSIG(st), what);
	return -1;
}

/* Runs a child process and waits for it. */
int
spawn(char *const *argv, const char *cwd, const char *outpath, const char *log,
      const char *what, Err *err)
{
	pid_t pid;

	if (spawn_start(argv, cwd, outpath, log, what, &pid, err) != 0)
		return -1;
	return spawn_wait(pid, argv[0], log, what, err);
}

/* Shows at most 40 lines of a child's messages. */
void
showlog(const char *log)
{
	char line[1024];
	FILE *f = fopen(log, "r");
	int n = 0;

	if (f == NULL)
		return;
	while (fgets(line, sizeof line, f)) {
		if (++n > 40) {
			fputs("  ...\n", stderr);
			break;
		}
		fprintf(stderr, "  %s%s", line, strchr(line, '\n') ? "" : "\n");
	}
	fclose(f);
}

/* Removes path and, for a folder, what it holds. */
void
rmtree(const char *path)
{
	struct stat st;
	struct dirent *e;
	DIR *d;

	if (lstat(path, &st) != 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	if ((d = opendir(path)) != NULL) {
		while ((e = readdir(d)) != NULL) {
			size_t n = strlen(path) + strlen(e->d_name) + 2;
			char *p;

			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			if ((p = malloc(n)) == NULL)
				break;
			snprintf(p, n, "%s/%s", path, e->d_name);
			rmtree(p);
			free(p);
		}
		closedir(d);
	}
	rmdir(path);
}

/* Whether path is a readable regular file; *size gets its size. */
int
regfile(const char *path, long long *size)
{
	struct stat st;

	errno = 0;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || access(path, R_OK) != 0)
		return 0;
	if (size)
		*size = (long long)st.st_size;
	return 1;
}

/* Whether two files hold the same bytes. */
static int
samebytes(const char *a, const char *b)
{
	char ba[65536], bb[65536];
	long long sa, sb;
	FILE *fa, *fb;
	int same = 0;
	size_t na, nb;

	if (!regfile(a, &sa) || !regfile(b, &sb) || sa != sb)
		return 0;
	if ((fa = fopen(a, "rb")) == NULL)
		return 0;
	if ((fb = fopen(b, "rb")) == NULL) {
		fclose(fa);
		return 0;
	}
	for (;;) {
		na = fread(ba, 1, sizeof ba, fa);
		nb = fread(bb, 1, sizeof bb, fb);
		if (na != nb || memcmp(ba, bb, na) != 0)
			break;
		if (na == 0) {
			same = !ferror(fa) && !ferror(fb);
			break;
		}
	}
	fclose(fa);
	fclose(fb);
	return same;
}

/* Puts a built file in place with one rename (same file system: the
 * temporary folder is inside the output folder). */
int
install(const char *tmp, const char *dst, Err *err)
{
	if (samebytes(tmp, dst))
		return 0;
	if (rename(tmp, dst) != 0) {
		dp_seterr(err, "cannot write %s: %s", dst, strerror(errno));
		return -1;
	}
	return 0;
}
