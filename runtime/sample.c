/* sample.c: token generation: the next token from a row of logits (greedy,
 * or sampled with temperature, top-k and top-p from a seeded PRNG) and the
 * loop that runs a program token by token (formats/dp.md, "Generation"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dprtint.h"

/* SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", 2014): the state advances by 0x9e3779b97f4a7c15 and is
 * mixed into the result. */
uint64_t
dprt_rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

typedef struct Cand {
	double z;	/* logit / temperature, then its probability */
	int64_t i;
} Cand;

size_t
dprt_sample_work_bytes(int64_t n)
{
	return (size_t)(n > 0 ? n : 1) * sizeof(Cand);
}

/* Descending by value, equal values by lower index. */
static int
cmpcand(const void *a, const void *b)
{
	const Cand *x = a, *y = b;

	if (x->z != y->z)
		return x->z < y->z ? 1 : -1;
	return (x->i > y->i) - (x->i < y->i);
}

int64_t
dprt_sample(const float *logits, int64_t n, const dprt_sampling *s, uint64_t *rng, void *work)
{
	Cand *c = work;
	int64_t i, k, best = 0;
	double sum, acc, u;

	if (s->temperature <= 0) {   /* greedy: the first largest (NaN never) */
		for (i = 1; i < n; i++)
			if (logits[i] > logits[best] || isnan(logits[best]))
				best = i;
		return best;
	}
	for (i = 0; i < n; i++) {
		c[i].z = isnan(logits[i]) ? -INFINITY : (double)logits[i] / s->temperature;
		c[i].i = i;
	}
	qsort(c, (size_t)n, sizeof *c, cmpcand);
	k = s->top_k > 0 && s->top_k < n ? s->top_k : n;
	for (sum = 0, i = 0; i < k; i++) {   /* softmax over the k kept */
		c[i].z = exp(c[i].z - c[0].z);
		sum += c[i].z;
	}
	if (s->top_p > 0 && s->top_p < 1) {   /* the smallest prefix reaching top_p */
		for (acc = 0, i = 0; i < k; i++) {
			acc += c[i].z / sum;
			if (acc >= s->top_p)
				break;
		}
		k = i < k ? i + 1 : k;
		for (sum = 0, i = 0; i < k; i++)
			sum += c[i].z;
	}
	u = (double)(dprt_rng_next(rng) >> 11) * 0x1p-53 * sum;
	for (acc = 0, i = 0; i < k - 1; i++) {
		acc += c[i].z;
		if (u < acc)
			break;
	}
	return c[i].i;
}

/* dprt_generate with a positions input: the prompt len tokens a run (the
 * last run's tail padded with token 0 at the positions that follow, which
 * the decoding overwrites before it reads them), then one token a run. */
static int
cached(const dprt_generation *g, int (*run)(void *ctx), int (*token)(void *ctx, int64_t tok),
       void *ctx, int64_t *ngen, uint64_t *rng, void *work)
{
	int64_t at = 0, m = 0, j, tok;
	const float *row;
	int rc;

	int64_t len = g->prefill_run ? g->plen : g->len;   /* the prompt's run */
	int64_t *ids = g->prefill_run ? g->pids : g->ids, *pos = g->prefill_run ? g->ppos : g->pos;
	int64_t rows = g->prefill_run ? g->plen : g->rows;

	while (at < g->n) {
		m = g->n - at < len ? g->n - at : len;
		for (j = 0; j < len; j++) {
			ids[j] = j < m ? g->prompt[at + j] : 0;
			pos[j] = at + j;
		}
		if ((rc = (g->prefill_run ? g->prefill_run : run)(ctx)) != 0)
			return rc;
		at += m;
	}
	row = (g->prefill_run ? g->plogits : g->logits) + (rows > 1 ? (m - 1) * g->vocab : 0);
	while (*ngen < g->max_tokens) {
		tok = dprt_sample(row, g->vocab, &g->s, rng, work);
		++*ngen;
		if ((rc = token(ctx, tok)) != 0 || tok == g->end || *ngen == g->max_tokens)
			return rc;
		for (j = 0; j < g->len; j++) {
			g->ids[j] = j ? 0 : tok;
			g->pos[j] = at + j;
		}
		if ((rc = run(ctx)) != 0)
			return rc;
		at++;
		row = g->logits;
	}
	return 0;
}

int
dprt_generate(const dprt_generation *g, int (*run)(void *ctx), int (*token)(void *ctx, int64_t tok),
              void *ctx, int64_t *ngen, char *err, size_t errn)
{
	uint64_t rng = g->s.seed;
	void *work;
	int64_t n = g->n, tok;
	int rc = 0;

	*ngen = 0;
	if (n < 1 || (n > g->len && !g->pos))
		return dprt_errf(err, errn, "the prompt has %lld tokens; the program takes 1 to %lld",
		                 (long long)n, (long long)g->len);
	work = malloc(dprt_sample_work_bytes(g->vocab));
	if (work == NULL)
		return dprt_errf(err, errn, "out of memory");
	if (g->pos) {
		rc = cached(g, run, token, ctx, ngen, &rng, work);
		free(work);
		return rc;
	}
	while (*ngen < g->max_tokens) {
		const float *row;

		if ((rc = run(ctx)) != 0)
			break;
		row = g->logits + (g->rows > 1 ? (n - 1) * g->vocab : 0);
		tok = dprt_sample(row, g->vocab, &g->s, &rng, work);
		++*ngen;
		if ((rc = token(ctx, tok)) != 0 || tok == g->end || n == g->len)
			break;
		g->ids[n++] = tok;
	}
	free(work);
	return rc;
}

/* The index of the io named name (n bytes) among nio, or -1 (also main.c's). */
int
dprt_findio(const dprt_io *io, int nio, const char *name, size_t n)
{
	int i;

	for (i = 0; i < nio; i++)
		if (strlen(io[i].name) == n && memcmp(io[i].name, name, n) == 0)
			return i;
	return -1;
}

/* dtype[shape] of an io into buf (d: scratch). */
static char *
iotype(char *buf, size_t n, const dprt_io *io, char *d)
{
	snprintf(buf, n, "%s%s", dprt_dtype_name[io->dtype], dprt_shape_str(d, 200, io->rank, io->dim));
	return buf;
}

/* The place of io index v among entry e's inputs (out: outputs), or -1;
 * with want >= 0, the io index at place want instead. */
static int
place(const dprt_entry *e, int v, int out, int want)
{
	int k, n = out ? e->nout : e->nin;
	const int *a = out ? e->out : e->in;

	for (k = 0; k < n; k++)
		if (want >= 0 ? k == want : a[k] == v)
			return want >= 0 ? a[k] : k;
	return -1;
}

/* prefill=ENTRY: its token input, positions input and logits at the places
 * of IN, pos and OUT in the generating entry (formats/dp.md, "Entries"). */
static int
prefillio(const dprt_prog *p, dprt_generation *g, int in, int out, char *err, size_t errn)
{
	const dprt_entry *f = &p->entry[g->prefill], *d = NULL;
	int k;

	for (k = 0; k < p->nentry; k++)
		if (place(&p->entry[k], in, 0, -1) >= 0)
			d = &p->entry[k];
	if (d == NULL || d == f || g->posin < 0)
		return dprt_errf(err, errn, "generate: prefill=%s needs pos= and another entry's "
		                 "token input", f->name);
	g->pin = place(f, 0, 0, place(d, in, 0, -1));
	g->pposin = place(f, 0, 0, place(d, g->posin, 0, -1));
	g->plout = place(f, 0, 1, place(d, out, 1, -1));
	if (g->pin < 0 || g->pposin < 0 || g->plout < 0 || p->in[g->pin].rank != 2 ||
	    p->in[g->pin].dtype != DPRT_I64 || p->out[g->plout].rank != 3 ||
	    p->out[g->plout].dim[1] != p->in[g->pin].dim[1] || p->out[g->plout].dim[2] != g->vocab)
		return dprt_errf(err, errn, "generate: entry %s does not take the prompt as "
		                 "i64 [1,P] tokens, i64 [P] positions, f32 [1,P,%lld] logits at the "
		                 "places of the generating entry's", f->name, (long long)g->vocab);
	g->plen = p->in[g->pin].dim[1];
	return 0;
}

int
dprt_genspec(const dprt_prog *p, const char *spec, dprt_generation *g, int *pin, int *pout,
             char *err, size_t errn)
{
	const char *s = spec, *eq = strchr(s, '='), *e;
	const dprt_io *in, *out;
	int i, o;
	char t[256], d1[200];

	memset(g, 0, sizeof *g);
	g->posin = -1;
	g->prefill = -1;
	g->max_tokens = 16;
	g->end = -1;
	g->s.top_p = 1;
	e = eq ? eq + strcspn(eq, ",") : NULL;
	if (!eq || (i = dprt_findio(p->in, p->nin, s, (size_t)(eq - s))) < 0)
		return dprt_errf(err, errn, "generate %s: IN=OUT names no input of "
		                 "the program first", s);
	if ((o = dprt_findio(p->out, p->nout, eq + 1, (size_t)(e - eq - 1))) < 0)
		return dprt_errf(err, errn, "generate %s: '%.*s' is no output of the "
		                 "program", s, (int)(e - eq - 1), eq + 1);
	in = &p->in[i];
	out = &p->out[o];
	if (in->dtype != DPRT_I64 || in->rank != 2 || in->dim[0] != 1)
		return dprt_errf(err, errn, "generate: input %s is %s, not i64 [1,L]",
		                 in->name, iotype(t, sizeof t, in, d1));
	if (out->dtype != DPRT_F32 || !((out->rank == 3 && out->dim[0] == 1 &&
	    out->dim[1] == in->dim[1]) || (out->rank == 2 && out->dim[0] == 1)))
		return dprt_errf(err, errn, "generate: output %s is %s, not f32 "
		                 "[1,%lld,V] or [1,V]", out->name, iotype(t, sizeof t, out, d1),
		                 (long long)in->dim[1]);
	*pin = i;
	*pout = o;
	g->len = in->dim[1];
	g->rows = out->rank == 3 ? out->dim[1] : 1;
	g->vocab = out->dim[out->rank - 1];
	for (s = e; *s == ','; s = e) {
		const char *k = s + 1;
		char *end;
		double d;

		eq = strchr(k, '=');
		e = k + strcspn(k, ",");
		if (!eq || eq > e)
			return dprt_errf(err, errn, "generate: '%.*s' is no key=value",
			                 (int)(e - k), k);
		if (eq - k == 3 && memcmp(k, "pos", 3) == 0) {   /* pos=NAME: the positions input */
			const dprt_io *q;
			if ((g->posin = dprt_findio(p->in, p->nin, eq + 1, (size_t)(e - eq - 1))) < 0 ||
			    g->posin == i)
				return dprt_errf(err, errn, "generate: pos=%.*s names no other input of "
				                 "the program", (int)(e - eq - 1), eq + 1);
			q = &p->in[g->posin];
			if (q->dtype != DPRT_I64 || q->rank != 1 || q->dim[0] != g->len)
				return dprt_errf(err, errn, "generate: the positions input %s is %s, "
				                 "not i64 [%lld]", q->name, iotype(t, sizeof t, q, d1),
				                 (long long)g->len);
			continue;
		}
		if (eq - k == 7 && memcmp(k, "prefill", 7) == 0) {   /* prefill=ENTRY */
			for (g->prefill = 0; g->prefill < p->nentry && (strlen(p->entry[g->prefill].name) !=
			     (size_t)(e - eq - 1) || memcmp(p->entry[g->prefill].name, eq + 1,
			     (size_t)(e - eq - 1)) != 0); g->prefill++)
				;
			if (g->prefill == p->nentry)
				return dprt_errf(err, errn, "generate: prefill=%.*s names no entry of "
				                 "the program", (int)(e - eq - 1), eq + 1);
			continue;
		}
		d = strtod(eq + 1, &end);
		if (end != e || eq + 1 == e)
			return dprt_errf(err, errn, "generate: %.*s needs a number",
			                 (int)(e - k), k);
#define KEY(w) ((size_t)(eq - k) == strlen(w) && memcmp(k, w, strlen(w)) == 0)
#define INT(lo) (d == floor(d) && d >= (lo) && d <= 1e15)
		if (KEY("prompt") && INT(1))
			g->n = (int64_t)d;
		else if (KEY("max_tokens") && INT(0))
			g->max_tokens = (int64_t)d;
		else if (KEY("end") && INT(-1))
			g->end = (int64_t)d;
		else if (KEY("temperature") && d >= 0 && d <= 1e6)
			g->s.temperature = d;
		else if (KEY("top_k") && INT(0))
			g->s.top_k = (int64_t)d;
		else if (KEY("top_p") && d > 0 && d <= 1)
			g->s.top_p = d;
		else if (KEY("seed") && INT(0))
			g->s.seed = (uint64_t)d;
		else
			return dprt_errf(err, errn, "generate: %.*s: unknown key or "
			                 "value out of range", (int)(e - k), k);
#undef KEY
#undef INT
	}
	if (*s)
		return dprt_errf(err, errn, "generate: trailing '%s'", s);
	if (g->prefill >= 0 && prefillio(p, g, i, o, err, errn) != 0)
		return -1;
	if (g->posin < 0 && g->n > g->len)
		return dprt_errf(err, errn, "generate: prompt=%lld: the program takes 1 to %lld "
		                 "tokens", (long long)g->n, (long long)g->len);
	return 0;
}

