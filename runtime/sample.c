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

int
dprt_generate(const dprt_generation *g, int (*run)(void *ctx), int (*token)(void *ctx, int64_t tok),
              void *ctx, int64_t *ngen, char *err, size_t errn)
{
	uint64_t rng = g->s.seed;
	void *work;
	int64_t n = g->n, tok;
	int rc = 0;

	*ngen = 0;
	if (n < 1 || n > g->len)
		return dprt_errf(err, errn, "the prompt has %lld tokens; the program takes 1 to %lld",
		                 (long long)n, (long long)g->len);
	work = malloc(dprt_sample_work_bytes(g->vocab));
	if (work == NULL)
		return dprt_errf(err, errn, "out of memory");
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
