/* tune.c: the tuning database (formats/target.md, "Tuning database"): the
 * choices measured for an op's shapes on a GPU generation, which lower_gpu
 * takes over its heuristics.  A target mapping names it with
 * `tune cuda.db FILE` (relative to the mapping's folder); lower_gpu reads
 * the mapping with -t and lists both in its depfile, so that an edit of
 * either relowers.  The mapping's `tune cuda.precision fp32|tf32|bf16|f16` (fp32 the
 * default) sets the program's precision at init (dprt_cuda_precision).  Today it holds the split of K of convolutions:
 *
 *   conv sm_90 1x128x7x7 128x3x3 s1x1 p1x1 d1x1 g1 split=4
 *
 * (the op, the GPU generation, the input N x C x H x W, the weights O x KH
 * x KW, stride, padding, dilation, groups, then the choice). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

struct Tunedb {
	char **line;       /* the entries: their keys, and after them the choice */
	int *at;           /* per entry: its line in the file */
	int n;
	const char *path;
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

int
tune_read(Gpu *g, const char *map, const char *arch, Str *dep)
{
	Fn *fn = g->fn;
	Target t;
	const char *db, *prec;
	struct Tunedb *d;
	FILE *f;
	char buf[512];
	int ln = 0;

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
		dp_seterr(g->err, "%s: tune cuda.precision %s: expected fp32, tf32, bf16 or f16", map,
		          prec);
		return -1;
	}
	db = dp_target_tune(&t, "cuda.db", NULL);
	if (db == NULL)
		return 0;
	d = dp_alloc(fn->arena, 1, sizeof *d);
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
		char op[16], ar[16], x[64], w[64], s[32], p[32], dl[32], gr[32], ch[64];
		size_t n = strlen(buf);
		ln++;
		if (n && buf[n - 1] == '\n')
			buf[--n] = '\0';
		if (buf[strspn(buf, " \t")] == '\0' || buf[strspn(buf, " \t")] == '#')
			continue;
		if (sscanf(buf, "%15s %15s %63s %63s %31s %31s %31s %31s %63s", op, ar, x, w, s, p, dl,
		           gr, ch) != 9 || strcmp(op, "conv") != 0 || strncmp(ch, "split=", 6) != 0 ||
		    atoi(ch + 6) < 1 || atoi(ch + 6) > 16) {
			fclose(f);
			dp_seterr(g->err, "%s:%d: expected 'conv ARCH NxCxHxW OxKHxKW sSHxSW pPHxPW "
			          "dDHxDW gG split=1..16'", d->path, ln);
			return -1;
		}
		if (d->n % 64 == 0) {
			char **l = dp_alloc(fn->arena, (size_t)d->n + 64, sizeof *l);
			int *at = dp_alloc(fn->arena, (size_t)d->n + 64, sizeof *at);
			if (d->n) {
				memcpy(l, d->line, (size_t)d->n * sizeof *l);
				memcpy(at, d->at, (size_t)d->n * sizeof *at);
			}
			d->line = l;
			d->at = at;
		}
		snprintf(buf, sizeof buf, "%s %s %s %s %s %s %s %s %s", op, ar, x, w, s, p, dl, gr, ch);
		d->line[d->n] = dp_strdup(fn->arena, buf);
		d->at[d->n++] = ln;
	}
	fclose(f);
	g->db = d;
	return 0;
}

int
tune_conv(const Gpu *g, const char *key, int *line)
{
	const struct Tunedb *d = g->db;
	size_t n = strlen(key);

	for (int i = d ? d->n - 1 : -1; i >= 0; i--)   /* the last entry wins */
		if (strncmp(d->line[i], key, n) == 0 && d->line[i][n] == ' ') {
			*line = d->at[i];
			return atoi(strrchr(d->line[i], '=') + 1);
		}
	return 0;
}
