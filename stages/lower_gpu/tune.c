/* tune.c: the tuning database (formats/tune.md): the choices measured for
 * an op's shapes on a GPU generation, which lower_gpu takes over its
 * heuristics, and the tunable sites a lowering met (--tunables, for
 * devproc tune).  A target mapping names the database with
 * `tune cuda.db FILE` (relative to the mapping's folder) and may declare
 * the candidates tried for a tunable (`tune cuda.conv.split {1,2,4,8}`);
 * lower_gpu reads the mapping with -t and lists both files in its depfile,
 * so that an edit of either relowers.  The mapping's
 * `tune cuda.precision fp32|tf32|bf16|f16` (fp32 the default) sets the
 * program's precision at init (dprt_cuda_precision).  An entry:
 *
 *   conv sm_90 1x128x7x7 128x3x3 s1x1 p1x1 d1x1 g1 f32 fp32 bias+relu split=4
 *
 * (the op, the GPU generation, what the op's lowering puts in its key, then
 * the choice). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

/* The tunables: op, choice, the mapping's key of its candidates, the
 * candidates tried when the mapping declares none, the largest value. */
static const struct {
	const char *op, *name, *var, *def;
	int max;
} tunable[] = {
	[TUNE_CONV] = {"conv", "split", "cuda.conv.split", "{1,2,4,8,16}", 64},
	[TUNE_MM] = {"mm", "algo", "cuda.mm.algo", "{0,1,2,3}", 15},
	[TUNE_ATTN] = {"attn", "split", "cuda.attn.split", "{1,2,4,8,16}", 64},
};
enum { NTUNABLE = sizeof tunable / sizeof *tunable };

struct Tunedb {
	char **line;       /* the entries: their keys, and after them the choice */
	int *at;           /* per entry: its line in the file */
	int n;
	const char *path;  /* the database, or NULL: none named */
	const char *cand[NTUNABLE];   /* per tunable: its candidates, "1,2,4" */
	Str sites;         /* the tunable sites met, as --tunables writes them */
	char *seen;        /* per op: its site recorded */
};

/* path relative to the folder of file (unless absolute) */
static char *
beside(Arena *a, const char *file, const char *path)
{
	const char *s = strrchr(file, '/');
	size_t n = s ? (size_t)(s - file) + 1 : 0;
	char *p;

	if (path[0] == '/' || n == 0)
		n = 0;
	p = dp_alloc(a, n + strlen(path) + 1, 1);
	memcpy(p, file, n);
	strcpy(p + n, path);
	return p;
}

/* The error for a bad value v of the mapping's tune line for key:
 * MAP:LINE:COL (the value's) and what it expected. */
static void
tunebad(Gpu *g, const char *map, const Target *t, const char *key, const char *v,
        const char *expect)
{
	int line, col;

	dp_target_tune_at(t, key, &line, &col);
	dp_seterr(g->err, "%s:%d:%d: tune %s %s: expected %s", map, line, col, key, v, expect);
}

/* Key's value (def where the mapping has none) as its index among words
 * (NULL-terminated), or -1 with the error. */
static int
tunepick(Gpu *g, const char *map, const Target *t, const char *key, const char *def,
         const char *const *words, const char *expect)
{
	const char *v = dp_target_tune(t, key, def);

	for (int k = 0; words[k]; k++)
		if (strcmp(v, words[k]) == 0)
			return k;
	tunebad(g, map, t, key, v, expect);
	return -1;
}

static const char *const bools[] = {"0", "1", NULL};
static const char *const x3s[] = {"auto", "0", "1", NULL};   /* mmx3 + 1 */
static const char *const pdls[] = {"0", "1", "late", NULL};
static const char *const l2s[] = {"0", "1", "2", "4", "8", "16", NULL};   /* MiB: 0, 2^(k-1) */
static const char *const gvws[] = {"32", "64", "128", "256", "512", "1024", "2048", NULL};

/* Whether v is a value of tunable k: a number 1..max (0..max for the
 * algorithm of a product and the chunks of an attention, 0 being the
 * run-time choice), or gemv for a product. */
static int
valid(int k, const char *v)
{
	char *e;
	long x;

	if (k == TUNE_MM &&
	    (strcmp(v, "gemv") == 0 || strcmp(v, "tc") == 0 || strcmp(v, "x3") == 0))
		return 1;
	x = strtol(v, &e, 10);
	return *v >= '0' && *v <= '9' && *e == '\0' && x >= (k == TUNE_CONV ? 1 : 0) &&
	       x <= tunable[k].max;
}

/* The mapping's candidates of tunable k ("{1,2,4}" -> "1,2,4"), checked. */
static int
cands(Gpu *g, const char *map, const Target *t, int k, const char **out)
{
	const char *v = dp_target_tune(t, tunable[k].var, tunable[k].def);
	size_t n = strlen(v);
	char *c, *s;

	if (n < 3 || v[0] != '{' || v[n - 1] != '}')
		goto bad;
	c = dp_strdup(g->fn->arena, v + 1);
	c[n - 2] = '\0';
	for (s = c; *s; s++)   /* each value, in place */
		if (*s == ',')
			*s = '\0';
	for (s = c; s < c + n - 2; s += strlen(s) + 1)
		if (!valid(k, s))
			goto bad;
	c = dp_strdup(g->fn->arena, v + 1);
	c[n - 2] = '\0';
	*out = c;
	return 0;
bad:
	{
		char want[96];
		snprintf(want, sizeof want, "a set of choices such as %s (values %s)", tunable[k].def,
		         k == TUNE_MM ? "0..15, gemv or tc" : k == TUNE_CONV ? "1..64" : "0..64");
		tunebad(g, map, t, tunable[k].var, v, want);
	}
	return -1;
}

/* Parses database line buf (ln) into d; -1 with g->err set when malformed. */
static int
entry(Gpu *g, struct Tunedb *d, char *buf, int ln)
{
	Str key = {0};
	char *tok[32], *s, *eq;
	int n = 0, k;

	for (s = strtok(buf, " \t\r"); s && n < 32; s = strtok(NULL, " \t\r"))
		tok[n++] = s;
	for (k = 0; k < NTUNABLE && n > 0; k++)
		if (strcmp(tok[0], tunable[k].op) == 0)
			break;
	eq = n >= 3 && k < NTUNABLE ? strchr(tok[n - 1], '=') : NULL;
	if (s != NULL || eq == NULL || (size_t)(eq - tok[n - 1]) != strlen(tunable[k].name) ||
	    strncmp(tok[n - 1], tunable[k].name, (size_t)(eq - tok[n - 1])) != 0 ||
	    !valid(k, eq + 1)) {
		dp_seterr(g->err, "%s:%d: expected 'OP ARCH KEY... CHOICE': conv ... split=1..64, "
		          "mm ... algo=0..15|gemv|tc, attn ... split=0..64 (formats/tune.md)", d->path,
		          ln);
		return -1;
	}
	for (int i = 0; i < n; i++)
		str_printf(&key, "%s%s", i ? " " : "", tok[i]);
	if (d->n % 64 == 0) {
		char **l = dp_alloc(g->fn->arena, (size_t)d->n + 64, sizeof *l);
		int *at = dp_alloc(g->fn->arena, (size_t)d->n + 64, sizeof *at);
		if (d->n) {
			memcpy(l, d->line, (size_t)d->n * sizeof *l);
			memcpy(at, d->at, (size_t)d->n * sizeof *at);
		}
		d->line = l;
		d->at = at;
	}
	d->line[d->n] = dp_strdup(g->fn->arena, key.p);
	d->at[d->n++] = ln;
	str_free(&key);
	return 0;
}

int
tune_read(Gpu *g, const char *map, const char *arch, Str *dep)
{
	Fn *fn = g->fn;
	Target t;
	const char *db, *prec;
	struct Tunedb *d;
	FILE *f;
	char buf[1024];
	int ln = 0, k;

	if (dp_target_read(map, &t, g->err) != 0)
		return -1;
	str_put(dep, " ");
	str_put(dep, map);
	g->arch = arch && *arch ? arch : t.arch[0] ? dp_strdup(fn->arena, t.arch) : "sm_90";
	prec = dp_target_tune(&t, "cuda.precision", "fp32");
	if (strcmp(prec, "tf32") == 0) {   /* at init, before the weights are packed */
		str_put(&g->init, "\t/* the mapping's precision (tune cuda.precision tf32) */\n"
		                  "\tif (dprt_cuda_precision(g, DPRT_CONV_TF32, err, errn) != 0) {\n"
		                  "\t\tdprt_cuda_close(g);\n\t\treturn -1;\n\t}\n");
	} else if (strcmp(prec, "bf16") == 0 || strcmp(prec, "f16") == 0) {
		/* matrix products in 16 bits (mm.c), the rest as in tf32 */
		g->prec16 = prec[0] == 'b' ? 1 : 2;
		str_printf(&g->init, "\t/* the mapping's precision (tune cuda.precision %s): "
		                     "convolutions and cuBLAS's fp32 products in TF32 */\n"
		                     "\tif (dprt_cuda_precision(g, DPRT_CONV_TF32, err, errn) != 0) {\n"
		                     "\t\tdprt_cuda_close(g);\n\t\treturn -1;\n\t}\n", prec);
	} else if (strcmp(prec, "fp32") != 0) {
		tunebad(g, map, &t, "cuda.precision", prec, "fp32, tf32, bf16 or f16");
		return -1;
	}
	g->prec = dp_strdup(fn->arena, prec);
	/* attention reading q, k, v and writing its result through strides
	 * (plan.c: attnwindows, attnwrites): on unless asked otherwise (0:
	 * copy kernels around attention) */
	if ((k = tunepick(g, map, &t, "cuda.attn.inplace", "1", bools, "0 or 1")) < 0)
		return -1;
	g->attninplace = k;
	/* a one-row RMS norm computed by the GEMV kernel that reads it (mm.c):
	 * on unless asked otherwise (0: its own row kernel) */
	if ((k = tunepick(g, map, &t, "cuda.gemv.norm", "1", bools, "0 or 1")) < 0)
		return -1;
	g->gemvnorm = k;
	/* a 3xTF32 product's A split by the kernel that computes it (kern.c,
	 * x3split): on unless asked otherwise (0: gemm.cu's split kernel) */
	if ((k = tunepick(g, map, &t, "cuda.mm.x3split", "1", bools, "0 or 1")) < 0)
		return -1;
	g->x3fuse = k;
	/* the kernel library's tensor-core product (runtime/cuda/gemm.cu) as
	 * the heuristic's choice for the products it takes: off unless asked
	 * (measured slower than cuBLASLt at batch 1; a tuning database can
	 * still pick it product by product, algo=tc) */
	if ((k = tunepick(g, map, &t, "cuda.mm.tc", "0", bools, "0 or 1")) < 0)
		return -1;
	g->mmtc = k;
	/* fp32 products as 3xTF32 through cuBLASLt (runtime/cuda/blas.c): the
	 * large ones by default (mm.c), every one it can take, or none */
	if ((k = tunepick(g, map, &t, "cuda.mm.x3", "auto", x3s, "auto, 0 or 1")) < 0)
		return -1;
	g->mmx3 = k - 1;   /* auto -1 */
	/* programmatic dependent launch of the elementwise and matrix-vector
	 * kernels (runtime/cuda/pdl.cuh): on unless asked otherwise (an
	 * ordinary launch on a GPU before sm_90 all the same), each letting
	 * the kernel after start at its first line (late: after its wait) */
	if ((k = tunepick(g, map, &t, "cuda.pdl", "1", pdls, "0, 1 or late")) < 0)
		return -1;
	g->pdl = k != 0;
	g->pdlearly = k == 1;
	/* with it, each GEMV kernel of one row asks the next GEMV's weights
	 * into L2 where they are at most this many MiB (mm.c, pfask) */
	if ((k = tunepick(g, map, &t, "cuda.gemv.l2", "0", l2s, "0, 1, 2, 4, 8 or 16")) < 0)
		return -1;
	g->pfmax = k ? (int64_t)1 << (19 + k) : 0;
	/* the warps a GEMV kernel of one row keeps at least where its warps
	 * take several columns each (mm.c, gvcols): fewer warps, fewer blocks
	 * on the SMs as they wait */
	if ((k = tunepick(g, map, &t, "cuda.gemv.warps", "512", gvws,
	                  "32, 64, 128, 256, 512, 1024 or 2048")) < 0)
		return -1;
	g->gvwarps = atoi(gvws[k]);
	/* a result read only by the host, of at most 1 MiB, written into the
	 * page-locked staging by the kernel computing it instead of copied
	 * there after it (emit.c, copyout): on unless asked otherwise */
	if ((k = tunepick(g, map, &t, "cuda.copyout", "1", bools, "0 or 1")) < 0)
		return -1;
	g->copyout = k;
	/* small elementwise kernels after a GEMV kernel of one row computed by
	 * its blocks where each element reads its results at one block's
	 * columns (mm.c, kern.c: Gtail): on unless asked otherwise */
	if ((k = tunepick(g, map, &t, "cuda.gemv.tail", "1", bools, "0 or 1")) < 0)
		return -1;
	g->gvtail = k;
	d = dp_alloc(fn->arena, 1, sizeof *d);
	d->seen = dp_alloc(fn->arena, (size_t)fn->nop + 1, 1);
	for (k = 0; k < NTUNABLE; k++)
		if (cands(g, map, &t, k, &d->cand[k]) != 0)
			return -1;
	g->db = d;
	db = dp_target_tune(&t, "cuda.db", NULL);
	if (db == NULL)
		return 0;
	d->path = beside(fn->arena, map, db);
	f = fopen(d->path, "r");
	if (f == NULL) {
		dp_seterr(g->err, "%s: cannot read the tuning database %s (tune cuda.db)", map,
		          d->path);
		return -1;
	}
	str_put(dep, " ");
	str_put(dep, d->path);
	while (fgets(buf, sizeof buf, f)) {
		size_t n = strlen(buf);
		char *h;
		ln++;
		if (n && buf[n - 1] == '\n')
			buf[--n] = '\0';
		if ((h = strchr(buf, '#')) != NULL)   /* a comment, to the end of the line */
			*h = '\0';
		if (buf[strspn(buf, " \t\r")] == '\0')
			continue;
		if (entry(g, d, buf, ln) != 0) {
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

const char *
tune_get(const Gpu *g, int kind, int op, const char *key, const char *heur, int kernels, int *line)
{
	struct Tunedb *d = g->db;
	Str k = {0};
	const char *v = heur;
	size_t n;

	*line = 0;
	if (d == NULL)
		return heur;
	str_printf(&k, "%s %s %s", tunable[kind].op, g->arch, key);
	n = k.n;
	for (int i = d->n - 1; i >= 0; i--)   /* the last entry wins */
		if (strncmp(d->line[i], k.p, n) == 0 && d->line[i][n] == ' ') {
			const char *c = strchr(d->line[i] + n + 1, '=') + 1;
			if ((!(kernels & TUNE_GEMV) && strcmp(c, "gemv") == 0) ||
			    (!(kernels & TUNE_TC) && strcmp(c, "tc") == 0) ||
			    (!(kernels & TUNE_X3) && strcmp(c, "x3") == 0))
				break;   /* not a choice here: the heuristic's */
			*line = d->at[i];
			v = c;
			break;
		}
	if (op >= 0 && op < g->fn->nop && !d->seen[op]) {   /* the site, once */
		d->seen[op] = 1;
		str_printf(&d->sites, "%d\t%s\t%s\t%s\t%s%s%s%s\n", op, k.p, tunable[kind].name,
		           heur, kernels & TUNE_GEMV ? "gemv," : "", kernels & TUNE_TC ? "tc," : "",
		           kernels & TUNE_X3 ? "x3," : "", d->cand[kind]);
	}
	str_free(&k);
	return v;
}

const char *
tune_sites(const Gpu *g)
{
	return g->db && g->db->sites.p ? g->db->sites.p : "";
}
