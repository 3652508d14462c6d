/* build.c: dp-link's work: the inputs checked, the outputs made in the
 * temporary folder (main(), the blob's descriptor and the weights compiled,
 * the library archived with the runtime's members, the executable linked)
 * and put in place. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "link.h"

/* The image decoder's libraries (libpng, libjpeg), with the folders
 * configure found them in: linked into programs with image inputs. */
static const char *const imagelibs[] = { DP_IMAGE_LIBS, NULL };

/* The folder part of path ("." when none, "/" for "/x"). */
static char *
dirof(Arena *a, const char *path)
{
	const char *s = strrchr(path, '/');

	if (s == NULL)
		return dp_strdup(a, ".");
	return dp_strndup(a, path, (size_t)(s - path) + (s == path));
}

/* The CUDA library folder of a cuda program: DIR/lib64 (or the toolkit's
 * targets/ARCH/lib) of --cuda DIR, or of the toolkit whose nvcc configure
 * found; and libdprt_cuda.a beside libdprt.a. */
static int
cudadir(Link *l, Err *err)
{
	static const char *const sub[] = {"lib64", "lib", "targets/x86_64-linux/lib",
	                                  "targets/sbsa-linux/lib", NULL};
	const char *root = l->cuda;
	int i;

	if (root == NULL) {
		if (!DP_HAVE_NVCC || *DP_CUDA_HOME == '\0') {
			dp_seterr(err, "the program has cuda partitions but configure found no CUDA "
			          "toolkit; pass --cuda DIR (or build with --target cpu)");
			return -1;
		}
		root = DP_CUDA_HOME;
	}
	for (i = 0; sub[i]; i++) {
		char *d = join(l->a, root, sub[i]);
		if (regfile(join(l->a, d, "libcudart_static.a"), NULL)) {
			l->cudalib = d;
			break;
		}
	}
	if (l->cudalib == NULL) {
		dp_seterr(err, "no libcudart_static.a under the CUDA toolkit %s (check --cuda)", root);
		return -1;
	}
	if (!regfile(join(l->a, l->libdir, "libdprt_cuda.a"), NULL)) {
		dp_seterr(err, "cannot read the runtime library %s (the CUDA side; make builds it "
		          "where configure found nvcc)", join(l->a, l->libdir, "libdprt_cuda.a"));
		return -1;
	}
	return 0;
}

/* Reads the 64-byte header of the weight blob at path (zeros past its end),
 * which the program checks a blob file against at run time. */
static int
readhead(const char *path, unsigned char *head, Err *err)
{
	FILE *f = fopen(path, "rb");

	memset(head, 0, 64);
	if (f == NULL) {
		dp_seterr(err, "cannot read the weight blob %s: %s", path, strerror(errno));
		return -1;
	}
	if (fread(head, 1, 64, f) == 0 && ferror(f)) {
		fclose(f);
		dp_seterr(err, "cannot read the weight blob %s", path);
		return -1;
	}
	fclose(f);
	return 0;
}

int
link_check(Link *l, long long *wsize, Err *err)
{
	const Fn *fn = l->fn;
	const char *slash = strrchr(l->out, '/');
	char *p;
	int i, nconst = 0;

	l->base = dp_strdup(l->a, slash ? slash + 1 : l->out);
	l->dir = dirof(l->a, l->out);
	if (!*l->base || strcmp(l->base, ".") == 0 || strcmp(l->base, "..") == 0) {
		dp_seterr(err, "-o %s does not name a file", l->out);
		return -1;
	}
	for (i = 0; i < l->nobj; i++) {
		if (!regfile(l->obj[i], NULL)) {
			dp_seterr(err, "cannot read object %s: %s", l->obj[i],
			          errno ? strerror(errno) : "not a regular file");
			return -1;
		}
	}
	for (i = 0; i < fn->nop; i++)
		nconst += fn->op[i].kind == Oconst;
	if (!l->weights && fn->weights)   /* beside the IR, where import wrote it */
		l->weights = strchr(l->in, '/') ? join(l->a, dirof(l->a, l->in), fn->weights)
		                                : fn->weights;
	if (nconst && !l->weights) {
		dp_seterr(err, "the program has %d constants but no weight blob: pass "
		          "--weights FILE", nconst);
		return -1;
	}
	if (l->weights) {
		if (strpbrk(l->weights, "\n\r")) {
			dp_seterr(err, "the weights path has a line break in it");
			return -1;
		}
		if (!regfile(l->weights, wsize)) {
			dp_seterr(err, "cannot read the weight blob %s: %s", l->weights,
			          errno ? strerror(errno) : "not a regular file");
			return -1;
		}
		if (fn->weights && *wsize != fn->wsize) {
			dp_seterr(err, "the weight blob %s holds %lld bytes, but the IR's %s holds "
			          "%lld (a stale blob?)", l->weights, *wsize, fn->weights,
			          (long long)fn->wsize);
			return -1;
		}
		if (readhead(l->weights, l->head, err) != 0)
			return -1;
	}
	p = join(l->a, l->libdir, "libdprt.a");
	if (!regfile(p, NULL)) {
		dp_seterr(err, "cannot read the runtime library %s (check --runtime)", p);
		return -1;
	}
	if (l->shared && !regfile(join(l->a, l->libdir, "libdprt.so"), NULL)) {
		dp_seterr(err, "--shared-runtime: cannot read %s/libdprt.so (make lib/libdprt.so)",
		          l->libdir);
		return -1;
	}
	for (i = 0; i < fn->npart; i++)
		l->gpu |= fn->part[i].dev == DEV_CUDA;
	for (i = 0; i < fn->nop; i++)
		l->image |= fn->op[i].kind == Oinput && dp_isdyn(&fn->val[fn->op[i].out[0]].t) &&
		            !dp_istext(&fn->val[fn->op[i].out[0]].t);
	if (l->gpu && cudadir(l, err) != 0)
		return -1;
	if (!l->incdir)
		l->incdir = join(l->a, l->libdir, "../runtime");
	p = join(l->a, l->incdir, "dprt.h");
	if (!regfile(p, NULL)) {
		dp_seterr(err, "cannot read the runtime header %s (check --include)", p);
		return -1;
	}
	return 0;
}

/* A path in the temporary folder: tmp/PREFIX + name + SUFFIX. */
static char *
tmppath(Link *l, const char *pre, const char *name, const char *suf)
{
	size_t n = strlen(pre) + strlen(name) + strlen(suf) + 1;
	char *s = dp_alloc(l->a, n, 1);

	snprintf(s, n, "%s%s%s", pre, name, suf);
	return join(l->a, l->tmp, s);
}

/* Lists the members of runtime library name (in the runtime folder, or an
 * absolute path: jansson's) and extracts them into
 * tmp/sub; their paths go to mem[] in archive order. */
static int
runtime(Link *l, const char *name, const char *sub, const char *log, char ***mem, int *nmem,
        Err *err)
{
	char *lib = *name == '/' ? (char *)name : join(l->a, l->libdir, name);
	char abs[PATH_MAX], line[PATH_MAX];
	char *list = join(l->a, l->tmp, "members"), *rt = join(l->a, l->tmp, sub);
	char *argv[4], **m;
	FILE *f;
	int n = 0;

	if (realpath(lib, abs) == NULL || mkdir(rt, 0777) != 0) {
		dp_seterr(err, "cannot prepare the runtime library %s: %s", lib, strerror(errno));
		return -1;
	}
	argv[0] = (char *)l->ar, argv[1] = "t", argv[2] = abs, argv[3] = NULL;
	if (spawn(argv, NULL, list, log, "listing the runtime library", err) != 0)
		return -1;
	argv[1] = "x";
	if (spawn(argv, rt, NULL, log, "extracting the runtime library", err) != 0)
		return -1;
	if ((f = fopen(list, "r")) == NULL) {
		dp_seterr(err, "cannot read %s: %s", list, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof line, f))
		n++;
	m = dp_alloc(l->a, (size_t)n + 1, sizeof *m);
	rewind(f);
	for (n = 0; fgets(line, sizeof line, f);) {
		line[strcspn(line, "\n")] = '\0';
		if (*line)
			m[n++] = join(l->a, rt, line);
	}
	fclose(f);
	*mem = m;
	*nmem = n;
	return 0;
}

/* The file name of path (after its last '/'). */
static char *
base(char *path)
{
	char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* A child that runs beside others, with a log of its own. */
typedef struct Job {
	pid_t pid;             /* 0 once waited for (or never started) */
	const char *tool, *log, *what;
} Job;

/* Starts argv as job j, its messages into the temporary folder's file
 * logname. */
static int
job(Link *l, Job *j, char **argv, const char *cwd, const char *logname, const char *what,
    Err *err)
{
	j->tool = argv[0], j->what = what, j->log = join(l->a, l->tmp, logname);
	return spawn_start(argv, cwd, NULL, j->log, what, &j->pid, err);
}

/* Waits for every job started; rc is nonzero when the caller has already
 * failed (err says why): then it only waits.  Else the first job that
 * failed gives the error and the log shown after it. */
static int
finish(Link *l, Job *j, int n, int rc, Err *err)
{
	Err later;
	int i;

	for (i = 0; i < n; i++) {
		if (j[i].pid <= 0)
			continue;
		if (spawn_wait(j[i].pid, j[i].tool, j[i].log, j[i].what, rc ? &later : err) != 0 &&
		    rc == 0) {
			rc = -1;
			l->toollog = j[i].log;
		}
		j[i].pid = 0;
	}
	return rc ? -1 : 0;
}

/* The program's own objects into o[] (room for l->nobj + 3), in the order
 * both the executable and libNAME.a take them: the compiled partitions,
 * the kernels, the blob's descriptor, the blob; their number. */
static int
progobjs(const Link *l, char **o, char *fobj, char *bobj, char *wobj)
{
	int i, n = 0;

	for (i = 0; i < l->nobj; i++)
		o[n++] = (char *)l->obj[i];
	if (l->fatbin)
		o[n++] = fobj;
	if (l->weights)
		o[n++] = bobj;
	if (l->weights && !l->apart)
		o[n++] = wobj;
	return n;
}

int
link_build(Link *l, long long wsize, const Str *hdr, const char *hname, const char *libname,
           Err *err)
{
	const char *nm = l->fn->name;
	char *log = join(l->a, l->tmp, "log");
	char *msrc = tmppath(l, "", nm, "_main.c"), *mobj = tmppath(l, "", nm, "_main.o");
	char *wsrc = tmppath(l, "", nm, "_weights.s"), *wobj = tmppath(l, "", nm, "_weights.o");
	char *bsrc = tmppath(l, "", nm, "_blob.c"), *bobj = tmppath(l, "", nm, "_blob.o");
	char *fsrc = tmppath(l, "", nm, "_gpu_fatbin.s"), *fobj = tmppath(l, "", nm, "_gpu_fatbin.o");
	char *lib = tmppath(l, "", libname, ""), *exe = tmppath(l, "", l->base, "");
	char **mem, **cmem = NULL, **jmem, **cmd, **xcmd, inc[PATH_MAX];
	Job jobs[4] = {{0}};
	Str text = {0};
	int nmem, ncmem = 0, njmem, n, i, rc;

	/* the sources first, then main(), the blob's descriptor and the blob
	 * compiled side by side */
	gen_main(l->fn, l->image, &text);
	rc = dp_write_file(msrc, text.p, text.n, err);
	str_free(&text);
	if (rc != 0)
		return -1;
	if (l->weights) {
		gen_blob(l->fn, l->head, wsize, !l->apart, &text);
		rc = dp_write_file(bsrc, text.p, text.n, err);
		str_free(&text);
		if (rc != 0)
			return -1;
	}
	if (l->weights && !l->apart) {
		gen_weights(l->fn, l->weights, wsize, &text);
		rc = dp_write_file(wsrc, text.p, text.n, err);
		str_free(&text);
		if (rc != 0)
			return -1;
	}
	if (l->fatbin) {
		char abs[PATH_MAX];
		if (realpath(l->fatbin, abs) == NULL) {
			dp_seterr(err, "cannot find the kernels %s: %s", l->fatbin, strerror(errno));
			return -1;
		}
		gen_fatbin(l->fn, abs, &text);
		rc = dp_write_file(fsrc, text.p, text.n, err);
		str_free(&text);
		if (rc != 0)
			return -1;
	}
	/* compiled in the temporary folder by file name: the sanitizers name a
	 * module by its source path, which must not carry the folder's random
	 * name into the objects; main() has no debug information, so that no
	 * path leaks into it */
	if (realpath(l->incdir, inc) == NULL) {
		dp_seterr(err, "cannot find the runtime headers %s: %s", l->incdir, strerror(errno));
		return -1;
	}
	cmd = (char *[]){(char *)l->cc, "-std=c11", "-O2", "-g0", "-I", inc,
	                 "-c", base(msrc), "-o", base(mobj), NULL};
	rc = job(l, &jobs[0], cmd, l->tmp, "log.main", "compiling main()", err);
	if (rc == 0 && l->weights) {
		cmd = (char *[]){(char *)l->cc, "-std=c11", "-O2", "-g0", "-I", inc,
		                 "-c", base(bsrc), "-o", base(bobj), NULL};
		rc = job(l, &jobs[1], cmd, l->tmp, "log.blob", "compiling the blob's descriptor", err);
	}
	if (rc == 0 && l->weights && !l->apart) {
		cmd = (char *[]){(char *)l->cc, "-c", wsrc, "-o", wobj, NULL};
		rc = job(l, &jobs[2], cmd, NULL, "log.weights", "assembling the weight blob", err);
	}
	if (rc == 0 && l->fatbin) {
		cmd = (char *[]){(char *)l->cc, "-c", base(fsrc), "-o", base(fobj), NULL};
		rc = job(l, &jobs[3], cmd, l->tmp, "log.fatbin", "assembling the kernels", err);
	}
	if (finish(l, jobs, 4, rc, err) != 0)
		return -1;

	/* The executable links the objects and the runtime's archives as they
	 * are, started first; libNAME.a (the objects, the weights, the
	 * runtime's members; deterministic, D) is archived beside it from the
	 * members extracted meanwhile.  Both take the same members: the
	 * extracted ones are the archives' own bytes */
	xcmd = dp_alloc(l->a, (size_t)l->nobj + (size_t)l->nldflag + 40 +
	                sizeof imagelibs / sizeof *imagelibs, sizeof *xcmd);
	n = 0;
	xcmd[n++] = (char *)l->cc, xcmd[n++] = "-o", xcmd[n++] = exe, xcmd[n++] = mobj;
	n += progobjs(l, xcmd + n, fobj, bobj, wobj);
	if (l->shared) {   /* the runtime's objects from libdprt.so, found by the rpath */
		char abs[PATH_MAX];
		size_t rn;
		if (realpath(l->libdir, abs) == NULL) {
			dp_seterr(err, "cannot find the runtime folder %s: %s", l->libdir,
			          strerror(errno));
			return -1;
		}
		rn = strlen(abs) + 16;
		if (l->gpu)
			xcmd[n++] = join(l->a, l->libdir, "libdprt_cuda.a");
		xcmd[n++] = join(l->a, abs, "libdprt.so");
		xcmd[n] = dp_alloc(l->a, rn, 1);
		snprintf(xcmd[n++], rn, "-Wl,-rpath,%s", abs);
	} else {
		xcmd[n++] = "-Wl,--start-group";
		if (l->gpu)
			xcmd[n++] = join(l->a, l->libdir, "libdprt_cuda.a");
		xcmd[n++] = join(l->a, l->libdir, "libdprt.a");
		xcmd[n++] = DP_JANSSON_A;
		xcmd[n++] = "-Wl,--end-group";
	}
	for (i = 0; i < l->nldflag; i++)
		xcmd[n++] = (char *)l->ldflag[i];
	for (i = 0; l->image && imagelibs[i]; i++)
		xcmd[n++] = (char *)imagelibs[i];
	if (l->gpu) {   /* the CUDA libraries, found at run time where linked */
		const char *const *c;
		size_t rn = strlen(l->cudalib) + 16;
		char *rpath = dp_alloc(l->a, rn, 1);
		snprintf(rpath, rn, "-Wl,-rpath,%s", l->cudalib);
		xcmd[n++] = "-L", xcmd[n++] = (char *)l->cudalib, xcmd[n++] = rpath;
		for (c = cudalibs; *c; c++)
			xcmd[n++] = (char *)*c;
	}
	xcmd[n++] = "-lm", xcmd[n++] = "-lpthread", xcmd[n] = NULL;
	rc = job(l, &jobs[0], xcmd, NULL, "log.exe", "linking the executable", err);

	/* libNAME.a written here (ar.c); by ar from the extracted members
	 * where --ar names one or ar.c does not know an input */
	if (rc == 0 && !l->arset) {
		char **o = dp_alloc(l->a, (size_t)l->nobj + 3, sizeof *o);
		const char *rl[3];
		int no = progobjs(l, o, fobj, bobj, wobj), nrl = 0;
		rl[nrl++] = join(l->a, l->libdir, "libdprt.a");
		if (l->gpu)
			rl[nrl++] = join(l->a, l->libdir, "libdprt_cuda.a");
		rl[nrl++] = DP_JANSSON_A;
		rc = ar_write(l->a, lib, (const char *const *)o, no, rl, nrl, err);
		if (rc == 0) {
			if (finish(l, jobs, 2, rc, err) != 0)
				return -1;
			goto done;
		}
		if (rc < 0) {
			finish(l, jobs, 2, rc, err);
			return -1;
		}
		rc = 0;
		unlink(lib);
	}
	if (rc == 0 &&
	    (runtime(l, "libdprt.a", "rt", log, &mem, &nmem, err) != 0 ||
	     runtime(l, DP_JANSSON_A, "rtjson", log, &jmem, &njmem, err) != 0 ||
	     (l->gpu && runtime(l, "libdprt_cuda.a", "rtcuda", log, &cmem, &ncmem, err) != 0))) {
		rc = -1;
		l->toollog = log;
	}
	if (rc == 0) {
		cmd = dp_alloc(l->a, (size_t)(l->nobj + nmem + ncmem + njmem) + 9, sizeof *cmd);
		n = 0;
		cmd[n++] = (char *)l->ar, cmd[n++] = "qcsD", cmd[n++] = lib;
		n += progobjs(l, cmd + n, fobj, bobj, wobj);
		for (i = 0; i < nmem; i++)
			cmd[n++] = mem[i];
		for (i = 0; i < ncmem; i++)
			cmd[n++] = cmem[i];
		for (i = 0; i < njmem; i++)
			cmd[n++] = jmem[i];
		cmd[n] = NULL;
		rc = job(l, &jobs[1], cmd, NULL, "log.ar", "archiving the library", err);
	}
	if (finish(l, jobs, 2, rc, err) != 0)
		return -1;
done:
	/* each output renamed into place only when its bytes changed */
	if (install(lib, join(l->a, l->dir, libname), err) != 0 ||
	    dp_write_file(join(l->a, l->dir, hname), hdr->p, hdr->n, err) != 0 ||
	    install(exe, l->out, err) != 0)
		return -1;
	return 0;
}
