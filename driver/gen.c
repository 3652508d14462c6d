/* gen.c: writes the ninja file for one or more pipelines (rules in rules.ninja). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "driver.h"

#ifndef DP_GEN_CFLAGS   /* make SAN=1 passes its own: -O1 */
#define DP_GEN_CFLAGS "-O3"
#endif

__attribute__((format(printf, 1, 2))) static int
fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "devproc: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return 1;
}

/* mkdir -p. */
static int
mkdirs(const char *dir)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
		return errno = ENAMETOOLONG, -1;
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			if (mkdir(p, 0777) && errno != EEXIST)
				return -1;
			*s = '/';
		}
	return mkdir(p, 0777) && errno != EEXIST ? -1 : 0;
}

/* Where the ninja file names abs (a real path): relative to the build
 * folder dir (a real path) when inside it, else absolute. */
static const char *
relto(const char *dir, const char *abs)
{
	size_t n = strlen(dir);
	if (!strcmp(dir, "/"))
		return abs + 1;
	if (!strncmp(abs, dir, n) && abs[n] == '/')
		return abs + n + 1;
	return abs;
}

/* A path in a build line: $, space, colon and | escaped for ninja. */
static void
npath(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '$' || *s == ' ' || *s == ':')
			fputc('$', f);
		fputc(*s, f);
	}
}

/* A shell word in a variable's value: quoted for sh when it needs it, and
 * $ doubled for ninja. */
static void
nshell(FILE *f, const char *s)
{
	int safe = *s != 0;
	for (const char *c = s; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_./+-=@%,", *c))
			safe = 0;
	if (safe) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else if (*s == '$')
			fputs("$$", f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

/* The NAME of a "pipeline NAME" line of the .dp file, into name; 0 if
 * found, else -1. */
static int
dpstatement(const char *file, char *name, size_t n)
{
	FILE *f = fopen(file, "r");
	char line[1024];
	int found = -1;
	while (f && found < 0 && fgets(line, sizeof line, f)) {
		char *s = line + strspn(line, " \t"), *e;
		if (strncmp(s, "pipeline", 8) || (s[8] != ' ' && s[8] != '\t'))
			continue;
		s += 8 + strspn(s + 8, " \t");
		for (e = s; isalnum((unsigned char)*e) || *e == '_'; e++)
			;
		size_t len = (size_t)(e - s);
		e += strspn(e, " \t\r");
		if (len && len < n && !isdigit((unsigned char)*s) && (*e == '\n' || *e == '#' || !*e)) {
			memcpy(name, s, len);
			name[len] = 0;
			found = 0;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* Pipeline name from its file: basename without ".dp", or where that is no
 * C identifier, the .dp's own "pipeline NAME" line. */
int
gen_pipename(const char *file, char *name, size_t n)
{
	const char *b = strrchr(file, '/');
	b = b ? b + 1 : file;
	size_t len = strlen(b);
	if (len < 4 || strcmp(b + len - 3, ".dp") != 0)
		return fail("%s: a pipeline file's name must end in .dp", file);
	len -= 3;
	if (len >= n)
		return fail("%s: name too long", file);
	memcpy(name, b, len);
	name[len] = 0;
	int ok = isalpha((unsigned char)name[0]) || name[0] == '_';
	for (size_t i = 0; i < len; i++)
		ok &= isalnum((unsigned char)name[i]) || name[i] == '_';
	if (!ok && dpstatement(file, name, n) < 0)
		return fail("%s: the pipeline name must be a C identifier (letters, digits, _): "
		            "rename the file, or name the pipeline in it with a 'pipeline NAME' line",
		            file);
	return 0;
}

/* One pipeline's edges: import, verify (a validation edge of place), legalize, place,
 * partition, the lowerings and their compiles, link. */
static void
edges(FILE *f, const char *n, const char *dp, const char *map, int cuda, int alias, int shared)
{
	int halves = *DP_CXX != 0;   /* configure found a C++ compiler for the host half */

	fprintf(f, "\n# pipeline %s\n", n);
	fprintf(f, "build %s/1.import.dpir %s/weights.bin: dp_import ", n, n);
	npath(f, dp);
	fprintf(f, " | $dp_bin/dp-import\n  dir = %s\n", n);
	fprintf(f, "build %s/2.verify.stamp: dp_verify %s/1.import.dpir | $dp_bin/dp-verify\n", n, n);
	fprintf(f, "build %s/2.legalize.dpir: dp_legalize %s/1.import.dpir | $dp_bin/dp-legalize\n", n, n);
	fprintf(f, "build %s/3.place.dpir: dp_place %s/2.legalize.dpir | ", n, n);
	npath(f, map);
	fprintf(f, " $dp_bin/dp-place |@ %s/2.verify.stamp\n", n);
	fprintf(f, "build %s/4.partition.dpir: dp_partition %s/3.place.dpir | $dp_bin/dp-partition\n", n, n);
	fprintf(f, "build %s/5.cpu.c: dp_lower_cpu %s/4.partition.dpir | $dp_bin/dp-lower_cpu\n", n, n);
	fprintf(f, "build %s/5.cpu.o: dp_cc %s/5.cpu.c\n", n, n);
	if (cuda) {
		fprintf(f, "build %s/5.gpu.cu: dp_lower_gpu %s/4.partition.dpir | $dp_bin/dp-lower_gpu\n", n, n);
		if (halves) {   /* the kernels and the host code side by side (cuda/launch.cuh) */
			fprintf(f, "build %s/5.gpu.fatbin: dp_nvcc_device %s/5.gpu.cu\n", n, n);
			fprintf(f, "build %s/5.gpu.o: dp_cxx_host %s/5.gpu.cu\n", n, n);
		} else {
			fprintf(f, "build %s/5.gpu.o: dp_nvcc %s/5.gpu.cu\n", n, n);
		}
	}
	fprintf(f, "build %s/%s %s/lib%s.a %s/%s.h: dp_link %s/4.partition.dpir %s/5.cpu.o", n, n,
	        n, n, n, n, n, n);
	if (cuda)
		fprintf(f, " %s/5.gpu.o%s%s%s", n, halves ? " " : "", halves ? n : "",
		        halves ? "/5.gpu.fatbin" : "");
	fprintf(f, " | %s/weights.bin $dp_bin/dp-link $dp_root/lib/libdprt.a $dp_root/runtime/dprt.h%s%s\n",
	        n, cuda ? " $dp_root/lib/libdprt_cuda.a" : "", shared ? " $dp_root/lib/libdprt.so" : "");
	fprintf(f, "  name = %s\n  dir = %s\n", n, n);
	if (alias)
		fprintf(f, "build %s: phony %s/%s\n", n, n, n);
}

static int
bystr(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The mappings in ROOT/targets/, as "cpu, cuda" (sorted). */
static const char *
shipped(const char *root)
{
	static char list[1024];
	char dir[PATH_MAX], names[32][64];
	int n = 0;
	snprintf(dir, sizeof dir, "%s/targets", root);
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && n < 32 && (e = readdir(d)))
		if (e->d_name[0] != '.' && strlen(e->d_name) < 64)
			snprintf(names[n++], 64, "%s", e->d_name);
	if (d)
		closedir(d);
	qsort(names, (size_t)n, sizeof *names, bystr);
	list[0] = 0;
	for (int i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
	return n ? list : "none";
}

/* The pipelines an earlier devproc build/gen put in DIR/build.ninja (dir a
 * real path): each "# pipeline NAME" and the .dp its import edge reads,
 * as a path from the current folder, and its dp_target line's value into
 * map.  Returns how many (at most max). */
static int
earlier(const char *dir, char (*name)[128], char (*dp)[PATH_MAX], int max, char *map, size_t nmap)
{
	char path[PATH_MAX + 16], line[PATH_MAX * 2], want[200];
	int n = 0;
	snprintf(path, sizeof path, "%s/build.ninja", dir);
	FILE *f = fopen(path, "r");
	while (f && n < max && fgets(line, sizeof line, f)) {
		if (!strncmp(line, "dp_target = ", 12))   /* the mapping, as it was written */
			snprintf(map, nmap, "%.*s", (int)strcspn(line + 12, "\n"), line + 12);
		if (strncmp(line, "# pipeline ", 11))
			continue;
		snprintf(name[n], sizeof name[n], "%.*s", (int)strcspn(line + 11, "\n"), line + 11);
		snprintf(want, sizeof want, "build %s/1.import.dpir %s/weights.bin: dp_import ",
		         name[n], name[n]);
		if (!fgets(line, sizeof line, f) || strncmp(line, want, strlen(want)))
			continue;
		char *src = line + strlen(want), *o = src;
		for (char *c = src; *c && *c != '\n' && !(*c == ' ' && c[1] == '|'); c++) {
			if (*c == '$' && c[1])   /* npath's escapes */
				c++;
			*o++ = *c;
		}
		*o = 0;
		if (src[0] == '/')
			snprintf(dp[n], sizeof dp[n], "%s", src);
		else if (snprintf(dp[n], sizeof dp[n], "%s/%s", dir, src) >= (int)sizeof dp[n])
			continue;
		n++;
	}
	if (f)
		fclose(f);
	return n;
}

void
gen_targetpath(const char *root, const char *target, char *path, size_t n)
{
	if (strchr(target, '/')) {
		snprintf(path, n, "%s", target);
		return;
	}
	snprintf(path, n, "%s/targets/%s", root, target);
	if (access(path, F_OK) != 0 && access(target, R_OK) == 0)
		snprintf(path, n, "%s", target);
}

/* Writes the ninja file for g's pipelines: every path in it is relative to
 * g->dir (where ninja runs, also for a subninja) or absolute. */
int
gen_ninja(Gen *g)
{
	char target[PATH_MAX], tpath[PATH_MAX], dir[PATH_MAX];
	gen_targetpath(g->root, g->target, tpath, sizeof tpath);
	if (!realpath(tpath, target))
		return fail("unknown target '%s' (%s); the targets shipped: %s (in %s/targets/), "
		            "or give a mapping file's path", g->target, strerror(errno),
		            shipped(g->root), g->root);
	Target t;
	Err err;
	if (g->arch && (strncmp(g->arch, "sm_", 3) || strspn(g->arch + 3, "0123456789") < 2 ||
	                strlen(g->arch) > 10 || strspn(g->arch + 3, "0123456789abf") != strlen(g->arch + 3)))
		return fail("--cuda-arch %s: expected an architecture such as sm_80, sm_90 or sm_100",
		            g->arch);
	if (dp_target_read(target, &t, &err)) {
		dp_report(target, "devproc", &err);
		return 1;
	}
	int cuda = (t.devs & D_CUDA) != 0;
	if (cuda && !DP_HAVE_NVCC)
		return fail("target '%s' needs CUDA but configure found no nvcc; build with --target cpu",
		            g->target);

	if (mkdirs(g->dir) || !realpath(g->dir, dir))
		return fail("cannot create %s: %s", g->dir, strerror(errno));
	static char (*names)[128], (*dps)[PATH_MAX];  /* static: live until exit */
	static char (*oname)[128], (*odp)[PATH_MAX];
	enum { MAXOLD = 256 };
	names = calloc(g->npipe + MAXOLD + 1, sizeof *names);
	dps = calloc(g->npipe + MAXOLD + 1, sizeof *dps);
	oname = calloc(MAXOLD, sizeof *oname);
	odp = calloc(MAXOLD, sizeof *odp);
	if (!names || !dps || !oname || !odp)
		return fail("out of memory");
	for (int i = 0; i < g->npipe; i++) {
		if (gen_pipename(g->pipe[i], names[i], sizeof names[i]))
			return 1;
		if (!realpath(g->pipe[i], dps[i]))
			return fail("%s: %s", g->pipe[i], strerror(errno));
		for (int j = 0; j < i; j++)
			if (!strcmp(names[i], names[j]))
				return fail("two pipelines are named '%s'", names[i]);
	}
	/* the pipelines built here before stay in build.ninja (and so in the
	 * build and in devproc stages), unless their .dp is gone; the graph
	 * keeps their order, the new ones after them */
	char oldmap[PATH_MAX] = "";
	int nold = g->sub ? 0 : earlier(dir, oname, odp, MAXOLD, oldmap, sizeof oldmap);
	int ngiven = g->npipe, nnew = 0;
	const char *om = oldmap[0] == '.' && oldmap[1] == '/' ? oldmap + 2 : oldmap;   /* as map is written */
	int retarget = *oldmap && strcmp(om, relto(dir, target)) != 0;
	static char (*fname)[128], (*fdp)[PATH_MAX];
	fname = calloc(g->npipe + MAXOLD + 1, sizeof *fname);
	fdp = calloc(g->npipe + MAXOLD + 1, sizeof *fdp);
	int *placed = calloc(ngiven + 1, sizeof *placed), nf = 0;
	char kept[1024] = "", gone[1024] = "";
	if (!fname || !fdp || !placed)
		return fail("out of memory");
	for (int k = 0; k < nold; k++) {
		int again = -1;
		for (int i = 0; i < ngiven; i++)
			if (!strcmp(names[i], oname[k]))
				again = i;
		if (again >= 0 && !placed[again]) {
			placed[again] = 1;
			memcpy(fname[nf], names[again], sizeof *fname);
			memcpy(fdp[nf++], dps[again], sizeof *fdp);
			continue;
		}
		char *list = realpath(odp[k], fdp[nf]) ? kept : gone;
		snprintf(list + strlen(list), 1024 - strlen(list), "%s%s", *list ? ", " : "", oname[k]);
		if (list == kept)
			snprintf(fname[nf++], 128, "%s", oname[k]);
	}
	for (int i = 0; i < ngiven; i++)
		if (!placed[i]) {
			nnew++;
			memcpy(fname[nf], names[i], sizeof *fname);
			memcpy(fdp[nf++], dps[i], sizeof *fdp);
		}
	free(placed);
	names = fname, dps = fdp, g->npipe = nf;
	if (*kept && (nnew || retarget))
		fprintf(stderr, "devproc: %s/build.ninja keeps the pipelines built there before: %s%s%s "
		        "(a build folder holds one graph; use another -C for a separate one)\n",
		        g->dir, kept, retarget ? ", now for target " : "", retarget ? g->target : "");
	if (*gone)
		fprintf(stderr, "devproc: %s/build.ninja drops %s: its .dp file is gone (its folder "
		        "stays; devproc stages marks it)\n", g->dir, gone);
	for (int i = -2; i < g->npipe; i++) {   /* ninja paths cannot hold one */
		const char *p = i == -2 ? dir : i == -1 ? target : dps[i];
		if (strchr(p, '\n') || strchr(g->root, '\n'))
			return fail("a line break in a path: %s", strchr(p, '\n') ? p : g->root);
	}
	/* a path with a slash, so that devproc gen reads it as a file again */
	char map[PATH_MAX + 2];
	snprintf(map, sizeof map, "%s%s", strchr(relto(dir, target), '/') ? "" : "./",
	         relto(dir, target));

	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return fail("out of memory");
	fprintf(f, "# %s: written by devproc gen; edit the pipelines, not this file.\n",
	        g->sub ? "DevProc pipelines for subninja" : "build.ninja");
	fprintf(f, "# Paths are relative to the folder ninja runs in, or absolute.\n");
	fprintf(f, "ninja_required_version = 1.11\n");
	fprintf(f, "dp_root = ");
	npath(f, g->root);
	fprintf(f, "\ndp_rootq = ");
	nshell(f, g->root);
	fprintf(f, "\ndp_bin = $dp_root/bin\ndp_binq = $dp_rootq/bin\n");
	fprintf(f, "cc = %s\ncflags = %s\n", DP_CC, DP_GEN_CFLAGS);
	fprintf(f, "nvcc = %s\ncuda_arch = %s\ncxx = %s\ncuda_inc = ", *DP_NVCC ? DP_NVCC : "nvcc",
	        g->arch ? g->arch : t.arch[0] ? t.arch : "sm_90", *DP_CXX ? DP_CXX : "c++");
	nshell(f, *DP_CUDA_INC ? DP_CUDA_INC : ".");
	fputc('\n', f);
	/* dp-link finds the CUDA libraries itself; the flags are kept by regeneration */
	fprintf(f, "ldflags =%s%s", g->apart ? " --apart" : "", g->shared ? " --shared-runtime" : "");
	fprintf(f, "\ndp_genflags =%s%s", g->apart ? " --apart" : "",
	        g->shared ? " --shared-runtime" : "");
	fprintf(f, "\ndp_target = ");
	nshell(f, map);
	fprintf(f, "\ninclude $dp_root/rules.ninja\n");
	for (int i = 0; i < g->npipe; i++)
		edges(f, names[i], relto(dir, dps[i]), map, cuda, !g->sub, g->shared);

	if (!g->sub) {
		/* ninja reruns devproc gen when the mapping (its devices decide
		 * the edges) or devproc changes; unchanged output is not rewritten */
		fprintf(f, "\n# regeneration\nbuild build.ninja: dp_regen | ");
		npath(f, map);
		fprintf(f, " $dp_bin/devproc\n  dp_pipelines =");
		for (int i = 0; i < g->npipe; i++) {
			fputc(' ', f);
			nshell(f, relto(dir, dps[i]));
		}
		fprintf(f, "\n\ndefault");
		for (int i = 0; i < g->npipe; i++)
			fprintf(f, " %s/%s", names[i], names[i]);
		fprintf(f, "\n");
	}
	if (fclose(f))
		return fail("out of memory");

	char out[PATH_MAX], parent[PATH_MAX];
	if (g->file[0] == '/')
		snprintf(out, sizeof out, "%s", g->file);
	else
		snprintf(out, sizeof out, "%s/%s", g->dir, g->file);
	snprintf(parent, sizeof parent, "%s", out);
	*strrchr(parent, '/') = 0;
	if (*parent && mkdirs(parent)) {
		free(buf);
		return fail("cannot create %s: %s", parent, strerror(errno));
	}
	int rc = dp_write_file(out, buf, len, &err);
	free(buf);
	if (rc) {
		dp_report(out, "devproc", &err);
		return 1;
	}
	return 0;
}
