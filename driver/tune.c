/* tune.c: devproc tune: writes a tuning database (formats/tune.md) for a
 * pipeline on this machine's GPU.  It builds the pipeline for a cuda
 * mapping, asks dp-lower_gpu for the tunable sites (--tunables: each
 * convolution, product and attention op with its key and candidates), then
 * builds and runs the program once untuned and once per candidate index,
 * every key forced to its candidate through a database, each run timing
 * every op by CUDA events (--profile --trace: 20 runs, the first a
 * warm-up, the median of the others); per key, the candidate whose ops'
 * summed medians are least wins (the earlier on a tie).  A last build with
 * the database written checks it and reports untuned against tuned. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "driver.h"
#include "dprt.h"

static const char tusage[] =
	"usage: devproc tune PIPELINE.dp [--target T] [-o FILE] [-C DIR] [--cuda-arch sm_XX]\n"
	"                    [--in NAME=FILE.npy ...]\n"
	"\n"
	"Measures, on this machine's GPU, the variants the kernel library offers for\n"
	"each convolution (the split of K), matrix product with a bias (cuBLASLt's\n"
	"algorithms by the heuristic's rank, or the generated GEMV kernel for up\n"
	"to 8 rows) and attention (the chunks of keys) of the pipeline, and writes\n"
	"a tuning database (formats/tune.md): one line per key (op, shapes,\n"
	"dtype, precision, epilogue, GPU architecture) with the fastest choice.\n"
	"The candidates are the mapping's (`tune cuda.conv.split {1,2,4,8,16}`,\n"
	"`tune cuda.mm.algo {0,1,2,3}`, `tune cuda.attn.split {1,2,4,8,16}`, those\n"
	"the defaults).  Each candidate round builds the program with every key\n"
	"forced to its candidate and runs it 20 times with each op timed by CUDA\n"
	"events; an op's time is the median of the 19 runs after the first.\n"
	"Name the database in a mapping with `tune cuda.db FILE`.\n"
	"\n"
	"  --target T   the cuda mapping (default: cuda), as for devproc build\n"
	"  -o FILE      the database to write (default: NAME.tune)\n"
	"  -C DIR       the build folder of the rounds (default: build-tune)\n"
	"  --cuda-arch  the GPU generation of the keys (default: the mapping's)\n"
	"  --in N=F     an input of the program (default: zeros of its shape)\n"
	"\n"
	"Needs the cuda target (configure found nvcc) and an NVIDIA GPU.\n";

__attribute__((format(printf, 1, 2))) static int
tfail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "devproc: tune: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return 1;
}

/* Runs argv with stdout and stderr into log (truncated); its exit status,
 * or -1 when it could not run. */
static int
spawn(char *const argv[], const char *log)
{
	pid_t p;
	int st;

	fflush(stdout);
	fflush(stderr);
	if ((p = fork()) < 0)
		return -1;
	if (p == 0) {
		FILE *f = freopen(log, "w", stdout);
		if (f == NULL || dup2(fileno(stdout), 2) < 0)
			_exit(127);
		execv(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Prints the last lines of log to stderr. */
static void
showlog(const char *log)
{
	FILE *f = fopen(log, "r");
	char line[1024], keep[20][1024];
	int n = 0;

	while (f && fgets(line, sizeof line, f))
		snprintf(keep[n++ % 20], sizeof keep[0], "%s", line);
	for (int i = n > 20 ? n - 20 : 0; i < n; i++)
		fputs(keep[i % 20], stderr);
	if (f)
		fclose(f);
}

static int
writefile(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int rc;

	if (f == NULL)
		return -1;
	fputs(text, f);
	rc = ferror(f);
	return fclose(f) != 0 || rc ? -1 : 0;
}

/* A tunable site (dp-lower_gpu --tunables) and its times per round. */
typedef struct Site {
	int op;
	char key[256], name[16], heur[16];
	int key_i;         /* its key among keys */
	double *t;         /* per round: the op's median (us), NAN when absent */
} Site;

typedef struct Key {
	const char *key, *name;
	char cand[16][16];
	int ncand;
} Key;

static int
bykey(const void *a, const void *b)
{
	return strcmp(((const Key *)a)->key, ((const Key *)b)->key);
}

static int
bydouble(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Per op id 0..nop-1: the median of its cuda events' durations in trace
 * file path, the first run's left out; NAN where none.  0, or -1. */
static int
medians(const char *path, int nop, double *med)
{
	FILE *f = fopen(path, "r");
	char line[2048];
	double **d = calloc((size_t)nop, sizeof *d);
	int *n = calloc((size_t)nop, sizeof *n), *cap = calloc((size_t)nop, sizeof *cap), rc = 0;

	if (f == NULL || d == NULL || n == NULL || cap == NULL)
		rc = -1;
	while (rc == 0 && fgets(line, sizeof line, f)) {
		const char *c = strstr(line, "\"cat\": \"cuda\""), *u, *o;
		int op;
		if (c == NULL || (u = strstr(line, "\"dur\": ")) == NULL ||
		    (o = strstr(line, "\"op\": ")) == NULL)
			continue;
		op = atoi(o + 6);
		if (op < 0 || op >= nop)
			continue;
		if (n[op] == cap[op]) {
			double *x = realloc(d[op], (size_t)(cap[op] ? 2 * cap[op] : 32) * sizeof *x);
			if (x == NULL) {
				rc = -1;
				break;
			}
			d[op] = x;
			cap[op] = cap[op] ? 2 * cap[op] : 32;
		}
		d[op][n[op]++] = atof(u + 7);
	}
	for (int i = 0; i < nop; i++) {
		med[i] = NAN;
		if (rc == 0 && n[i] >= 2) {   /* the first run: the warm-up */
			qsort(d[i] + 1, (size_t)n[i] - 1, sizeof *d[i], bydouble);
			med[i] = (n[i] - 1) % 2 ? d[i][1 + (n[i] - 1) / 2] :
			         (d[i][(n[i] - 1) / 2] + d[i][(n[i] - 1) / 2 + 1]) / 2;
		}
		if (d)
			free(d[i]);
	}
	if (f)
		fclose(f);
	free(d);
	free(n);
	free(cap);
	return rc;
}

/* The state of one tuning. */
typedef struct Tuning {
	const char *root, *dir, *name;
	char map[PATH_MAX], db[PATH_MAX], exe[PATH_MAX], log[PATH_MAX], trace[PATH_MAX];
	char **args;       /* the program's --in arguments */
	int nargs;
	int nop;
	double total;      /* the last round's cuda time, us (sum of medians) */
} Tuning;

/* Builds the pipeline (ninja in dir) and runs it traced; med per op. */
static int
round1(Tuning *t, double *med, const char *what)
{
	char *argv[8], *run[80];
	int n = 0, k;

	argv[n++] = (char *)DP_NINJA;
	argv[n++] = "-C";
	argv[n++] = (char *)t->dir;
	argv[n] = NULL;
	if (spawn(argv, t->log) != 0) {
		showlog(t->log);
		return tfail("the build %s failed", what);
	}
	n = 0;
	run[n++] = t->exe;
	for (k = 0; k < t->nargs && n < 74; k++)
		run[n++] = t->args[k];
	run[n++] = "--bench";   /* first a warm-up of the GPU's clocks, untimed */
	run[n++] = "200";
	run[n] = NULL;
	if (spawn(run, t->log) != 0) {
		showlog(t->log);
		return tfail("%s does not run here (%s)", t->exe, what);
	}
	n -= 2;
	run[n++] = "--profile";
	run[n++] = "--trace";
	run[n++] = t->trace;
	run[n] = NULL;
	if (spawn(run, t->log) != 0) {
		showlog(t->log);
		return tfail("%s does not run here (%s)", t->exe, what);
	}
	if (medians(t->trace, t->nop, med) != 0)
		return tfail("%s: cannot read the trace", t->trace);
	t->total = 0;
	for (k = 0; k < t->nop; k++)
		if (!isnan(med[k]))
			t->total += med[k];
	return 0;
}

/* Zeros of each graph input's type as DIR/tune/in.NAME.npy, unless given;
 * t->nop from ir (the partitioned function, as the trace numbers ops). */
static int
inputs(Tuning *t, const char *ir, char **given, int ngiven)
{
	Fn *fn;
	Err err;
	int i, k;

	if (dp_read(ir, &fn, &err) != 0) {
		dp_report(ir, "devproc", &err);
		return 1;
	}
	t->nop = fn->nop;
	t->args = calloc((size_t)(2 * fn->nop + 2 * ngiven + 2), sizeof *t->args);
	if (t->args == NULL)
		return tfail("out of memory");
	for (k = 0; k < ngiven; k++) {
		t->args[t->nargs++] = "--in";
		t->args[t->nargs++] = given[k];
	}
	for (i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		const char *nm = dp_gets(op, "name");
		const Type *ty;
		char path[PATH_MAX], e[256], *arg;
		void *z;
		int had = 0;
		if (op->kind != Oinput || nm == NULL)
			continue;
		for (k = 0; k < ngiven; k++)
			had |= strncmp(given[k], nm, strlen(nm)) == 0 && given[k][strlen(nm)] == '=';
		if (had)
			continue;
		ty = &fn->val[op->out[0]].t;
		snprintf(path, sizeof path, "%s/tune/in.%s.npy", t->dir, nm);
		z = calloc((size_t)(dp_numel(ty) ? dp_numel(ty) : 1), (size_t)dp_dtype_size[ty->dtype]);
		if (z == NULL || dprt_npy_write(path, ty->dtype, ty->rank, ty->dim, z, e, sizeof e)) {
			free(z);
			return tfail("%s: %s", path, z ? e : "out of memory");
		}
		free(z);
		arg = malloc(strlen(nm) + strlen(path) + 2);
		if (arg == NULL)
			return tfail("out of memory");
		sprintf(arg, "%s=%s", nm, path);
		t->args[t->nargs++] = "--in";
		t->args[t->nargs++] = arg;
	}
	dp_free(fn);
	return 0;
}

/* Reads the sites dp-lower_gpu listed; fills keys (sorted, unique). */
static int
readsites(const char *path, Site **sp, int *nsp, Key **kp, int *nkp)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	Site *s = NULL;
	Key *k = NULL;
	int ns = 0, nk = 0;

	if (f == NULL)
		return tfail("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof line, f)) {
		char *f1 = strtok(line, "\t\n"), *f2 = strtok(NULL, "\t\n"), *f3 = strtok(NULL, "\t\n");
		char *f4 = strtok(NULL, "\t\n"), *f5 = strtok(NULL, "\t\n");
		Site *x;
		int j;
		if (!f1 || !f2 || !f3 || !f4 || !f5)
			continue;
		if ((x = realloc(s, (size_t)(ns + 1) * sizeof *s)) == NULL ||
		    (k = realloc(k, (size_t)(nk + 1) * sizeof *k)) == NULL)
			return tfail("out of memory");
		s = x;
		x = &s[ns++];
		memset(x, 0, sizeof *x);
		x->op = atoi(f1);
		snprintf(x->key, sizeof x->key, "%s", f2);
		snprintf(x->name, sizeof x->name, "%s", f3);
		snprintf(x->heur, sizeof x->heur, "%s", f4);
		for (j = 0; j < nk; j++)
			if (strcmp(k[j].key, x->key) == 0)
				break;
		if (j == nk) {
			Key *y = &k[nk++];
			memset(y, 0, sizeof *y);
			y->key = strdup(x->key);
			y->name = strdup(x->name);
			for (char *c = strtok(f5, ","); c && y->ncand < 16; c = strtok(NULL, ","))
				snprintf(y->cand[y->ncand++], sizeof y->cand[0], "%s", c);
		}
	}
	fclose(f);
	qsort(k, (size_t)nk, sizeof *k, bykey);
	for (int i = 0; i < ns; i++)
		for (int j = 0; j < nk; j++)
			if (strcmp(k[j].key, s[i].key) == 0)
				s[i].key_i = j;
	*sp = s, *nsp = ns, *kp = k, *nkp = nk;
	return 0;
}

/* Per key, the entry of the candidate whose sites' summed times are least
 * (candidate j measured in round j + 1, the heuristic's choice, the first
 * site's, in round 0; the earlier on a tie; none with a NAN), after a
 * comment of every candidate's sum, into db; a key with none measured gets
 * a comment alone. */
static void
choose(FILE *db, const Site *s, int ns, const Key *k, int nk)
{
	int i;

	for (i = 0; i < nk; i++) {   /* candidate j in round j + 1, the heuristic's in round 0 */
		int best = -1, nops = 0, j, q;
		double bt = 0;
		char c[1024] = "";
		const char *heur = NULL;
		for (q = 0; q < ns; q++)
			if (s[q].key_i == i) {
				heur = heur ? heur : s[q].heur;
				nops++;
			}
		for (j = 0; j <= k[i].ncand; j++) {
			int r = j < k[i].ncand ? j + 1 : 0, ok = 1;
			double sum = 0;
			for (q = 0; q < ns; q++)
				if (s[q].key_i == i) {
					ok &= !isnan(s[q].t[r]);
					sum += s[q].t[r];
				}
			char v[32] = "n/a";
			if (ok)
				snprintf(v, sizeof v, "%.1f", sum);
			snprintf(c + strlen(c), sizeof c - strlen(c), "%s %s %s",
			         j == k[i].ncand ? "; untuned" : j ? "," : "",
			         j < k[i].ncand ? k[i].cand[j] : heur, v);
			if (ok && (best < 0 || sum < bt))
				best = j, bt = sum;
		}
		if (best < 0) {
			fprintf(db, "# %s: not measured (no event of its ops)\n", k[i].key);
			continue;
		}
		fprintf(db, "# %d op%s:%s\n%s %s=%s\n", nops, nops == 1 ? "" : "s", c, k[i].key,
		        k[i].name, best < k[i].ncand ? k[i].cand[best] : heur);
	}
}

int
cmd_tune(int argc, char **argv, const char *root)
{
	static Gen g;
	static Tuning t;
	const char *dp = NULL, *target = "cuda", *out = NULL, *arch = NULL;
	static char **given;   /* static, as what follows: live until exit */
	static Site *s;
	static Key *k;
	static double *med;
	char path[PATH_MAX], name[128], tpath[PATH_MAX], mapsrc[PATH_MAX], sites[PATH_MAX];
	char outbuf[PATH_MAX];
	int ngiven = 0, i, r, ns = 0, nk = 0, maxc = 0;
	FILE *f;

	given = calloc((size_t)argc + 1, sizeof *given);
	if (given == NULL)
		return tfail("out of memory");

	t.dir = "build-tune";
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(tusage, stdout);
			return 0;
		} else if (strcmp(a, "--target") == 0 && i + 1 < argc)
			target = argv[++i];
		else if (strcmp(a, "-o") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(a, "-C") == 0 && i + 1 < argc)
			t.dir = argv[++i];
		else if (strcmp(a, "--cuda-arch") == 0 && i + 1 < argc)
			arch = argv[++i];
		else if (strcmp(a, "--in") == 0 && i + 1 < argc && strchr(argv[i + 1], '='))
			given[ngiven++] = argv[++i];
		else if (a[0] == '-')
			return tfail("unknown option or missing argument '%s' (see devproc tune --help)", a);
		else if (dp == NULL)
			dp = a;
		else
			return tfail("one pipeline at a time (%s and %s)", dp, a);
	}
	if (dp == NULL)
		return tfail("no pipeline given (devproc tune PIPELINE.dp --target cuda)");
	if (gen_pipename(dp, name, sizeof name) != 0)
		return 1;
	gen_targetpath(root, target, tpath, sizeof tpath);
	if (!realpath(tpath, mapsrc))
		return tfail("unknown target '%s' (%s)", target, strerror(errno));
	{
		Target tg;
		Err err;
		if (dp_target_read(mapsrc, &tg, &err) != 0) {
			dp_report(mapsrc, "devproc", &err);
			return 1;
		}
		if (!(tg.devs & D_CUDA))
			return tfail("target '%s' has no cuda device: tuning is for the cuda target",
			             target);
		if (!DP_HAVE_NVCC)
			return tfail("the cuda target is not built (configure found no nvcc)");
		if (arch == NULL)
			arch = tg.arch[0] ? strdup(tg.arch) : "sm_90";
	}
	if (access("/dev/nvidiactl", F_OK) != 0 && access("/dev/dxg", F_OK) != 0)   /* Linux, WSL */
		return tfail("no NVIDIA GPU here (no /dev/nvidiactl): run devproc tune on a machine "
		             "with the GPU the program is for");
	if (out == NULL) {
		snprintf(outbuf, sizeof outbuf, "%s.tune", name);
		out = outbuf;
	}

	/* the rounds' mapping: the user's, naming our database */
	snprintf(path, sizeof path, "%s/tune", t.dir);
	if ((mkdir(t.dir, 0777) != 0 && errno != EEXIST) || (mkdir(path, 0777) != 0 && errno != EEXIST))
		return tfail("cannot create %s: %s", path, strerror(errno));
	{
		FILE *in = fopen(mapsrc, "r"), *o;
		char line[1024];
		snprintf(t.map, sizeof t.map, "%s/tune/map", t.dir);
		if (in == NULL || (o = fopen(t.map, "w")) == NULL)
			return tfail("cannot copy %s to %s", mapsrc, t.map);
		while (fgets(line, sizeof line, in))
			fputs(line, o);
		fputs("\n# devproc tune: the database of the round\ntune cuda.db forced.db\n", o);
		fclose(in);
		if (fclose(o) != 0)
			return tfail("cannot write %s", t.map);
	}
	snprintf(t.db, sizeof t.db, "%s/tune/forced.db", t.dir);
	snprintf(t.log, sizeof t.log, "%s/tune/log", t.dir);
	snprintf(t.trace, sizeof t.trace, "%s/tune/trace.json", t.dir);
	snprintf(t.exe, sizeof t.exe, "%s/%s/%s", t.dir, name, name);
	snprintf(sites, sizeof sites, "%s/tune/sites", t.dir);
	if (writefile(t.db, "") != 0)
		return tfail("cannot write %s", t.db);
	g = (Gen){.root = root, .dir = t.dir, .target = t.map, .arch = arch, .file = "build.ninja"};
	g.pipe = &dp;
	g.npipe = 1;
	if (gen_ninja(&g) != 0)
		return 1;

	/* the untuned build; its inputs and sites */
	{
		char *argv2[6] = {(char *)DP_NINJA, "-C", (char *)t.dir, NULL};
		char low[PATH_MAX], part[PATH_MAX], cu[PATH_MAX], ir[PATH_MAX];
		if (spawn(argv2, t.log) != 0) {
			showlog(t.log);
			return tfail("%s does not build for %s", dp, target);
		}
		/* the partitioned IR: its op indices are the trace's and the sites' */
		snprintf(ir, sizeof ir, "%s/%s/4.partition.dpir", t.dir, name);
		if (inputs(&t, ir, given, ngiven) != 0)
			return 1;
		snprintf(low, sizeof low, "%s/bin/dp-lower_gpu", root);
		snprintf(part, sizeof part, "%s/%s/4.partition.dpir", t.dir, name);
		snprintf(cu, sizeof cu, "%s/tune/sites.cu", t.dir);
		char *lv[] = {low, part, "-t", t.map, "--arch", (char *)arch, "--tunables", sites,
		              "-o", cu, NULL};
		if (spawn(lv, t.log) != 0) {
			showlog(t.log);
			return tfail("dp-lower_gpu --tunables failed");
		}
	}
	if (readsites(sites, &s, &ns, &k, &nk) != 0)
		return 1;
	if (nk == 0)
		return tfail("%s has no tunable op on the GPU (convolution, product with a bias, "
		             "attention)", dp);
	for (i = 0; i < nk; i++)
		if (k[i].ncand > maxc)
			maxc = k[i].ncand;
	med = calloc((size_t)t.nop, sizeof *med);
	for (i = 0; i < ns; i++)
		s[i].t = calloc((size_t)maxc + 2, sizeof *s[i].t);
	if (med == NULL)
		return tfail("out of memory");
	fprintf(stderr, "devproc tune: %s: %d tunable ops, %d keys, %s; %d rounds\n", name, ns, nk,
	        arch, maxc + 1);

	/* round 0: untuned; round r: every key at its candidate r-1 */
	double untuned = 0, tuned = 0;
	for (r = 0; r <= maxc; r++) {
		char what[64];
		if ((f = fopen(t.db, "w")) == NULL)
			return tfail("cannot write %s", t.db);
		for (i = 0; r > 0 && i < nk; i++)
			if (r - 1 < k[i].ncand)
				fprintf(f, "%s %s=%s\n", k[i].key, k[i].name, k[i].cand[r - 1]);
		if (fclose(f) != 0)
			return tfail("cannot write %s", t.db);
		snprintf(what, sizeof what, r ? "with candidate %d" : "untuned", r);
		if (round1(&t, med, what) != 0)
			return 1;
		for (i = 0; i < ns; i++)
			s[i].t[r] = s[i].op < t.nop ? med[s[i].op] : NAN;
		if (r == 0)
			untuned = t.total;
		fprintf(stderr, "devproc tune: round %d (%s): cuda ops %.1f us\n", r, what, t.total);
	}

	/* per key: the least summed median */
	char *dbtext = NULL;
	size_t dbn = 0;
	FILE *db = open_memstream(&dbtext, &dbn);
	if (db == NULL)
		return tfail("out of memory");
	fprintf(db, "# tuning database (formats/tune.md) written by devproc tune for %s, %s,\n"
	            "# mapping %s: per key, each candidate's summed medians (us) over its ops\n"
	            "# (the median of 19 runs after a warm-up, CUDA events), and the heuristic's\n",
	        name, arch, target);
	choose(db, s, ns, k, nk);
	if (fclose(db) != 0)
		return tfail("out of memory");
	if (writefile(out, dbtext) != 0)
		return tfail("cannot write %s: %s", out, strerror(errno));

	/* the last round: the database as written */
	if (writefile(t.db, dbtext) != 0)
		return tfail("cannot write %s", t.db);
	if (round1(&t, med, "with the database") != 0)
		return 1;
	tuned = t.total;
	double ust = 0, tst = 0;
	for (i = 0; i < ns; i++) {
		ust += s[i].t[0];
		tst += s[i].op < t.nop && !isnan(med[s[i].op]) ? med[s[i].op] : 0;
	}
	printf("devproc tune: wrote %s (%d keys); tunable ops %.1f us untuned, %.1f us tuned; "
	       "all cuda ops %.1f us untuned, %.1f us tuned (medians of 19 runs, CUDA events)\n",
	       out, nk, ust, tst, untuned, tuned);
	free(dbtext);
	return 0;
}
