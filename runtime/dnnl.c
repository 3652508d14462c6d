/* dnnl.c: convolution and linear layers through oneDNN where it is present
 * and chosen (DPRT_DNNL; see dprt.h), our kernels elsewhere.
 *
 * oneDNN is optional twice over: configure compiles this file against its
 * header when it finds one (DPRT_HAVE_DNNL; else every entry below says
 * "not used"), and a program loads libdnnl.so.2 with dlopen the first time
 * an instance prepares a layer it maps to oneDNN, so that a program built
 * where oneDNN was runs where it is not, on its own kernels.
 *
 * An instance's oneDNN state (a stream, the primitives, their reorders and
 * one scratch area shared by all) hangs off its thread pool (pool.c): made
 * while NAME_create prepares the weights (dprt_pool_prep), freed with the
 * pool.  A layer that oneDNN runs has its prepared-weight area hold a tag
 * (magic, the state, the layer's index) and then oneDNN's packed weights and
 * the folded bias, when they fit (else oneDNN's own allocation).
 *
 * Debian's oneDNN 2.6 threads with OpenMP (libgomp) and fixes a primitive's
 * thread count when it is made: primitives are made under the pool's count
 * and made again when the instance's thread count changes; while oneDNN is
 * loaded, dprt_parallel runs our own tasks on libgomp's team too
 * (dprt_gomp_parallel), so that two sets of spinning threads never compete
 * for the cores.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "gemm.h"

void (*dprt_gomp_parallel)(void (*)(void *), void *, unsigned, unsigned);

/* DPRT_DNNL: which layers oneDNN runs (see dprt.h). */
enum { USE_CONV = 1, USE_DW = 2, USE_LINEAR = 4, USE_GEMM = 8, USE_DW1 = 16, USE_WINO = 32,
       USE_PW = 64,
       USE_AUTO = USE_CONV | USE_DW | USE_LINEAR | USE_GEMM | USE_WINO };

static int policy = -1;
static pthread_once_t policyonce = PTHREAD_ONCE_INIT;

static void
policy_init(void)
{
	const char *e = getenv("DPRT_DNNL"), *s;
	int p = 0;

	if (!e || !*e || strcmp(e, "auto") == 0 || strcmp(e, "1") == 0 || strcmp(e, "all") == 0) {
		policy = USE_AUTO;
		return;
	}
	if (strcmp(e, "0") == 0 || strcmp(e, "none") == 0) {
		policy = 0;
		return;
	}
	for (s = e; *s; s++) {   /* a comma list */
		size_t n = strcspn(s, ",");
		if (n == 4 && strncmp(s, "conv", 4) == 0)
			p |= USE_CONV;
		else if (n == 2 && strncmp(s, "dw", 2) == 0)
			p |= USE_DW;
		else if (n == 3 && strncmp(s, "dw1", 3) == 0)
			p |= USE_DW1;
		else if (n == 4 && strncmp(s, "wino", 4) == 0)
			p |= USE_WINO;
		else if (n == 2 && strncmp(s, "pw", 2) == 0)
			p |= USE_PW;
		else if (n == 6 && strncmp(s, "linear", 6) == 0)
			p |= USE_LINEAR;
		else if (n == 4 && strncmp(s, "gemm", 4) == 0)
			p |= USE_GEMM;
		s += n;
		if (!*s)
			break;
	}
	policy = p;
}

int
dprt_dnnl_policy(void)
{
	pthread_once(&policyonce, policy_init);
	return policy;
}

/* Whether DPRT_DNNL leaves a 1×1 convolution of N images between
 * 16-blocked activations to oneDNN rather than ours (conv.c): "conv" does
 * above one image (not measured against ours there), "pw" at one too. */
int
dprt_dnnl_pw(int64_t N)
{
	int p = dprt_dnnl_policy();

	return (p & USE_CONV) && (N > 1 || (p & USE_PW));
}

/* The block of the blocked activations (dprt.h): oneDNN's for this CPU
 * where it runs the convolutions (the depthwise ones on oneDNN or ours),
 * else 0 (plain).  DPRT_LAYOUT=plain keeps them plain, DPRT_LAYOUT=8 or 16
 * forces that block (for tests: our kernels then run on blocks too). */
static int block = -1;
static pthread_once_t blockonce = PTHREAD_ONCE_INIT;

static void
block_init(void)
{
	const char *e = getenv("DPRT_LAYOUT");

	block = 0;
	if (e && (strcmp(e, "8") == 0 || strcmp(e, "16") == 0)) {
		block = atoi(e);
		return;
	}
	if ((dprt_dnnl_policy() & USE_CONV) &&
	    !(e && strcmp(e, "plain") == 0) && dprt_dnnl_available())
		block = dprt_isa() == DPRT_ISA_AVX512 ? 16 : 8;
}

int
dprt_conv_block(void)
{
	pthread_once(&blockonce, block_init);
	return block;
}

#ifndef DPRT_HAVE_DNNL

int
dprt_dnnl_available(void)
{
	return 0;
}

int
dprt_dnnl_conv_prep(const dprt_conv *cv, float *prep, const float *w, const float *bias,
                    const float *bnw, const float *bnb, const float *bnm, const float *bnv,
                    float eps)
{
	return 0;
}

int
dprt_dnnl_conv_run(const dprt_conv *cv, float *y, const float *x, const float *prep,
                   const float *res)
{
	return 0;
}

int
dprt_dnnl_linear_prep(float *prep, const float *w, int64_t N, int64_t K)
{
	return 0;
}

int
dprt_dnnl_linear_run(float *y, const float *x, const float *w, const float *prep,
                     const float *bias, const float *res, int64_t M, int64_t N, int64_t K,
                     int act, int wt)
{
	return 0;
}

int
dprt_dnnl_sgemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t rsa, int64_t csa,
                const float *B, int64_t rsb, int64_t csb, const float *bias, float *C,
                int64_t ldc)
{
	return 0;
}

void
dprt_dnnl_free(void *ctx)
{
}

#else
#include <oneapi/dnnl/dnnl.h>

/* The C API functions used, from the library loaded at run time. */
#define FNS(X) \
	X(dnnl_engine_create, (dnnl_engine_t *, dnnl_engine_kind_t, size_t)) \
	X(dnnl_stream_create, (dnnl_stream_t *, dnnl_engine_t, unsigned)) \
	X(dnnl_stream_destroy, (dnnl_stream_t)) \
	X(dnnl_memory_desc_init_by_tag, (dnnl_memory_desc_t *, int, const dnnl_dims_t, \
	                                 dnnl_data_type_t, dnnl_format_tag_t)) \
	X(dnnl_memory_desc_init_by_strides, (dnnl_memory_desc_t *, int, const dnnl_dims_t, \
	                                     dnnl_data_type_t, const dnnl_dims_t)) \
	X(dnnl_memory_desc_get_size, (const dnnl_memory_desc_t *)) \
	X(dnnl_memory_desc_equal, (const dnnl_memory_desc_t *, const dnnl_memory_desc_t *)) \
	X(dnnl_memory_create, (dnnl_memory_t *, const dnnl_memory_desc_t *, dnnl_engine_t, void *)) \
	X(dnnl_memory_set_data_handle, (dnnl_memory_t, void *)) \
	X(dnnl_memory_destroy, (dnnl_memory_t)) \
	X(dnnl_dilated_convolution_forward_desc_init, (dnnl_convolution_desc_t *, \
	  dnnl_prop_kind_t, dnnl_alg_kind_t, const dnnl_memory_desc_t *, \
	  const dnnl_memory_desc_t *, const dnnl_memory_desc_t *, const dnnl_memory_desc_t *, \
	  const dnnl_dims_t, const dnnl_dims_t, const dnnl_dims_t, const dnnl_dims_t)) \
	X(dnnl_matmul_desc_init, (dnnl_matmul_desc_t *, const dnnl_memory_desc_t *, \
	  const dnnl_memory_desc_t *, const dnnl_memory_desc_t *, const dnnl_memory_desc_t *)) \
	X(dnnl_primitive_attr_create, (dnnl_primitive_attr_t *)) \
	X(dnnl_primitive_attr_destroy, (dnnl_primitive_attr_t)) \
	X(dnnl_primitive_attr_set_post_ops, (dnnl_primitive_attr_t, const_dnnl_post_ops_t)) \
	X(dnnl_primitive_attr_set_scratchpad_mode, (dnnl_primitive_attr_t, dnnl_scratchpad_mode_t)) \
	X(dnnl_post_ops_create, (dnnl_post_ops_t *)) \
	X(dnnl_post_ops_destroy, (dnnl_post_ops_t)) \
	X(dnnl_post_ops_append_sum, (dnnl_post_ops_t, float)) \
	X(dnnl_post_ops_append_eltwise, (dnnl_post_ops_t, float, dnnl_alg_kind_t, float, float)) \
	X(dnnl_primitive_desc_create, (dnnl_primitive_desc_t *, const_dnnl_op_desc_t, \
	  const_dnnl_primitive_attr_t, dnnl_engine_t, const_dnnl_primitive_desc_t)) \
	X(dnnl_reorder_primitive_desc_create, (dnnl_primitive_desc_t *, \
	  const dnnl_memory_desc_t *, dnnl_engine_t, const dnnl_memory_desc_t *, dnnl_engine_t, \
	  const_dnnl_primitive_attr_t)) \
	X(dnnl_primitive_desc_destroy, (dnnl_primitive_desc_t)) \
	X(dnnl_primitive_desc_query_md, (const_dnnl_primitive_desc_t, dnnl_query_t, int)) \
	X(dnnl_primitive_desc_query, (const_dnnl_primitive_desc_t, dnnl_query_t, int, void *)) \
	X(dnnl_primitive_create, (dnnl_primitive_t *, const_dnnl_primitive_desc_t)) \
	X(dnnl_primitive_execute, (const_dnnl_primitive_t, dnnl_stream_t, int, \
	                           const dnnl_exec_arg_t *)) \
	X(dnnl_primitive_destroy, (dnnl_primitive_t)) \
	X(dnnl_sgemm, (char, char, dnnl_dim_t, dnnl_dim_t, dnnl_dim_t, float, const float *, \
	               dnnl_dim_t, const float *, dnnl_dim_t, float, float *, dnnl_dim_t))

/* return types: dnnl_status_t except these three */
#define RT_dnnl_memory_desc_get_size size_t
#define RT_dnnl_memory_desc_equal int
#define RT_dnnl_primitive_desc_query_md const dnnl_memory_desc_t *
#define DECL(f, args) static __typeof__(f) *p_##f;
FNS(DECL)

static void *lib;
static dnnl_engine_t eng;
static void (*omp_setn)(int);
static pthread_once_t libonce = PTHREAD_ONCE_INIT;

static void
lib_init(void)
{
	void *h;

	if (dprt_dnnl_policy() == 0 || dprt_isa() == DPRT_ISA_GENERIC)
		return;
	h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
#ifdef DPRT_DNNL_DIR
	if (!h) {   /* unpacked under configure's --dep-prefix: OpenCL's loader beside it */
		(void)dlopen(DPRT_DNNL_DIR "/libOpenCL.so.1", RTLD_NOW | RTLD_GLOBAL);
		h = dlopen(DPRT_DNNL_DIR "/libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
	}
#endif
	if (!h)
		return;
#define LOAD(f, args) if (!(p_##f = (__typeof__(f) *)dlsym(h, #f))) goto fail;
	FNS(LOAD)
	omp_setn = (void (*)(int))dlsym(h, "omp_set_num_threads");
	dprt_gomp_parallel = (void (*)(void (*)(void *), void *, unsigned, unsigned))
		dlsym(h, "GOMP_parallel");
	if (!omp_setn || !dprt_gomp_parallel || p_dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success)
		goto fail;
	lib = h;
	return;
fail:
	dprt_gomp_parallel = NULL;
	dlclose(h);
}

int
dprt_dnnl_available(void)
{
	pthread_once(&libonce, lib_init);
	return lib != NULL;
}

/* ---- an instance's state ---- */

enum { KCONV, KLINEAR };

typedef struct Layer {
	int kind, nthr;
	dprt_conv cv;                   /* KCONV */
	int wino;                       /* KCONV: Winograd */
	int64_t M, N, K;                /* KLINEAR (M = 0: not made yet) */
	int nobias;                     /* KLINEAR: made without a bias */
	int wt, sum;                    /* KLINEAR: w stored [K, N]; a residual summed */
	int act;
	float lo, hi;
	dnnl_memory_desc_t umd[3];      /* the plain src, dst, weights */
	dnnl_memory_desc_t md[3];       /* the primitive's src, dst, weights */
	dnnl_primitive_t prim, rsrc, rres, rdst;   /* reorders: NULL when plain */
	dnnl_memory_t msrc, mdst, mwei, mbias, musrc, mudst, mures, mscr;
	void *weimem;                   /* packed weights outside prep, or NULL */
	float *bias;                    /* O (or N) floats */
	size_t sbytes, dbytes, scrbytes;
} Layer;

typedef struct Ctx {
	Layer **l;
	int n, cap;
	int nthr;
	dnnl_stream_t st;
	void *buf[3];                   /* shared: blocked src, blocked dst, scratchpad */
	size_t bufn[3];
} Ctx;

typedef struct Tag {
	uint64_t magic;
	Ctx *ctx;
	int64_t idx;
	int64_t pad[5];                 /* 64 bytes: what follows stays aligned */
} Tag;
#define MAGIC 0x6c6e6e642d707264ull
enum { TAGF = sizeof(Tag) / sizeof(float) };

/* The primitives and the memories of a run (not the weights' or the bias'). */
static void
run_free(Layer *l)
{
	dnnl_primitive_t *pp[] = { &l->prim, &l->rsrc, &l->rres, &l->rdst };
	dnnl_memory_t *mm[] = { &l->msrc, &l->mdst, &l->musrc, &l->mudst, &l->mures, &l->mscr };
	size_t i;

	for (i = 0; i < sizeof pp / sizeof *pp; i++)
		if (*pp[i])
			p_dnnl_primitive_destroy(*pp[i]), *pp[i] = NULL;
	for (i = 0; i < sizeof mm / sizeof *mm; i++)
		if (*mm[i])
			p_dnnl_memory_destroy(*mm[i]), *mm[i] = NULL;
}

static void
layer_free(Layer *l)
{
	run_free(l);
	if (l->mwei)
		p_dnnl_memory_destroy(l->mwei), l->mwei = NULL;
	if (l->mbias)
		p_dnnl_memory_destroy(l->mbias), l->mbias = NULL;
	free(l->weimem);
	l->weimem = NULL;
}

void
dprt_dnnl_free(void *p)
{
	Ctx *c = p;
	int i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++) {
		layer_free(c->l[i]);
		free(c->l[i]);
	}
	if (c->st)
		p_dnnl_stream_destroy(c->st);
	for (i = 0; i < 3; i++)
		free(c->buf[i]);
	free(c->l);
	free(c);
}

/* The instance's state (made on first use), or NULL. */
static Ctx *
ctx_get(int make)
{
	void **slot = dprt_pool_dnnl_slot();
	Ctx *c;

	if (!slot)
		return NULL;
	if (*slot || !make)
		return *slot;
	c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	if (p_dnnl_stream_create(&c->st, eng, dnnl_stream_default_flags) != dnnl_success) {
		free(c);
		return NULL;
	}
	c->nthr = dprt_threads();
	*slot = c;
	return c;
}

/* The layer prep's tag names, or NULL. */
static Layer *
tagged(const float *prep, Ctx **cp)
{
	Tag t;
	Ctx *c;

	if (!lib)
		return NULL;
	memcpy(&t, prep, sizeof t);
	if (t.magic != MAGIC || !(c = ctx_get(0)) || t.ctx != c || t.idx < 0 || t.idx >= c->n)
		return NULL;
	*cp = c;
	return c->l[t.idx];
}

static int
grow(Ctx *c, int i, size_t n)
{
	void *p;

	if (n <= c->bufn[i])
		return 0;
	free(c->buf[i]);
	c->buf[i] = NULL, c->bufn[i] = 0;
	if (posix_memalign(&p, 64, n) != 0)
		return -1;
	c->buf[i] = p, c->bufn[i] = n;
	return 0;
}

static int
alg(int act, float lo, float hi, dnnl_alg_kind_t *a, float *alpha, float *beta)
{
	*alpha = 0, *beta = 0;
	switch (act) {
	case DPRT_ACT_RELU: *a = dnnl_eltwise_relu; return 1;
	case DPRT_ACT_CLAMP: *a = dnnl_eltwise_clip_v2, *alpha = lo, *beta = hi; return 1;
	case DPRT_ACT_HARDSWISH: *a = dnnl_eltwise_hardswish; return 1;
	case DPRT_ACT_SILU: *a = dnnl_eltwise_swish, *alpha = 1; return 1;
	case DPRT_ACT_GELU: *a = dnnl_eltwise_gelu_erf; return 1;
	case DPRT_ACT_GELU_TANH: *a = dnnl_eltwise_gelu_tanh; return 1;
	}
	return 0;
}

/* A primitive and its memories from op descriptor od, src/dst/weights as
 * the primitive wants them (reorders from and to the plain layouts where
 * they differ).  0, or -1 (nothing left made). */
static int
make(Ctx *c, Layer *l, const_dnnl_op_desc_t od, int sum)
{
	dnnl_primitive_attr_t at = NULL;
	dnnl_post_ops_t po = NULL;
	dnnl_primitive_desc_t pd = NULL, rpd;
	dnnl_alg_kind_t a;
	float alpha, beta;
	const dnnl_memory_desc_t *q;
	int ok = 0, i;

	if (p_dnnl_primitive_attr_create(&at) != dnnl_success)
		return -1;
	if (p_dnnl_post_ops_create(&po) != dnnl_success)
		goto out;
	if (sum && p_dnnl_post_ops_append_sum(po, 1.0f) != dnnl_success)
		goto out;
	if (l->act != DPRT_ACT_NONE && (!alg(l->act, l->lo, l->hi, &a, &alpha, &beta) ||
	    p_dnnl_post_ops_append_eltwise(po, 1.0f, a, alpha, beta) != dnnl_success))
		goto out;
	if (p_dnnl_primitive_attr_set_post_ops(at, po) != dnnl_success ||
	    p_dnnl_primitive_attr_set_scratchpad_mode(at, dnnl_scratchpad_mode_user) != dnnl_success)
		goto out;
	omp_setn(l->nthr);
	if (p_dnnl_primitive_desc_create(&pd, od, at, eng, NULL) != dnnl_success)
		goto out;
	/* oneDNN's reference implementations ("ref:any": a grouped convolution
	 * whose groups split the blocks of 16, say) run a hundred times slower
	 * than ours: ours then */
	{
		const char *impl = NULL;
		if (p_dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) !=
		    dnnl_success || impl == NULL || strncmp(impl, "ref", 3) == 0)
			goto out;
	}
	static const dnnl_query_t qs[3] = { dnnl_query_src_md, dnnl_query_dst_md,
	                                    dnnl_query_weights_md };
	for (i = 0; i < 3; i++)
		l->md[i] = *p_dnnl_primitive_desc_query_md(pd, qs[i], 0);
	q = p_dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
	l->scrbytes = q ? p_dnnl_memory_desc_get_size(q) : 0;
	l->sbytes = p_dnnl_memory_desc_get_size(&l->md[0]);
	l->dbytes = p_dnnl_memory_desc_get_size(&l->md[1]);
	if (p_dnnl_primitive_create(&l->prim, pd) != dnnl_success ||
	    p_dnnl_memory_create(&l->msrc, &l->md[0], eng, DNNL_MEMORY_NONE) != dnnl_success ||
	    p_dnnl_memory_create(&l->mdst, &l->md[1], eng, DNNL_MEMORY_NONE) != dnnl_success ||
	    (q && p_dnnl_memory_create(&l->mscr, q, eng, DNNL_MEMORY_NONE) != dnnl_success) ||
	    p_dnnl_memory_create(&l->musrc, &l->umd[0], eng, DNNL_MEMORY_NONE) != dnnl_success ||
	    p_dnnl_memory_create(&l->mudst, &l->umd[1], eng, DNNL_MEMORY_NONE) != dnnl_success ||
	    p_dnnl_memory_create(&l->mures, &l->umd[1], eng, DNNL_MEMORY_NONE) != dnnl_success)
		goto out;
	if (!p_dnnl_memory_desc_equal(&l->md[0], &l->umd[0])) {
		if (p_dnnl_reorder_primitive_desc_create(&rpd, &l->umd[0], eng, &l->md[0], eng, NULL) !=
		    dnnl_success)
			goto out;
		i = p_dnnl_primitive_create(&l->rsrc, rpd) == dnnl_success;
		p_dnnl_primitive_desc_destroy(rpd);
		if (!i)
			goto out;
	}
	if (!p_dnnl_memory_desc_equal(&l->md[1], &l->umd[1])) {
		if (p_dnnl_reorder_primitive_desc_create(&rpd, &l->md[1], eng, &l->umd[1], eng, NULL) !=
		    dnnl_success)
			goto out;
		i = p_dnnl_primitive_create(&l->rdst, rpd) == dnnl_success;
		p_dnnl_primitive_desc_destroy(rpd);
		if (!i)
			goto out;
		if (sum) {
			if (p_dnnl_reorder_primitive_desc_create(&rpd, &l->umd[1], eng, &l->md[1], eng,
			                                         NULL) != dnnl_success)
				goto out;
			i = p_dnnl_primitive_create(&l->rres, rpd) == dnnl_success;
			p_dnnl_primitive_desc_destroy(rpd);
			if (!i)
				goto out;
		}
	}
	if (grow(c, 0, l->rsrc ? l->sbytes : 0) != 0 || grow(c, 1, l->rdst ? l->dbytes : 0) != 0 ||
	    grow(c, 2, l->scrbytes) != 0)
		goto out;
	ok = 1;
out:
	if (!ok)
		run_free(l);
	if (pd)
		p_dnnl_primitive_desc_destroy(pd);
	if (po)
		p_dnnl_post_ops_destroy(po);
	p_dnnl_primitive_attr_destroy(at);
	return ok ? 0 : -1;
}

/* Reorders plain weights (md umd[2], at w) into the primitive's layout, at
 * dst (room bytes) when they fit, else into weimem. */
static int
pack_weights(Layer *l, const float *w, float *dst, size_t room)
{
	dnnl_memory_t from = NULL;
	dnnl_primitive_desc_t rpd;
	dnnl_primitive_t r = NULL;
	size_t n = p_dnnl_memory_desc_get_size(&l->md[2]);
	void *to = dst;
	int ok = 0;

	if (n > room) {
		if (posix_memalign(&l->weimem, 64, n) != 0)
			return -1;
		to = l->weimem;
	}
	if (p_dnnl_memory_create(&l->mwei, &l->md[2], eng, to) != dnnl_success)
		return -1;
	if (p_dnnl_memory_create(&from, &l->umd[2], eng, (void *)w) != dnnl_success)
		return -1;
	if (p_dnnl_reorder_primitive_desc_create(&rpd, &l->umd[2], eng, &l->md[2], eng, NULL) ==
	    dnnl_success) {
		if (p_dnnl_primitive_create(&r, rpd) == dnnl_success) {
			Ctx *c = ctx_get(0);
			dnnl_exec_arg_t args[2] = { { DNNL_ARG_FROM, from }, { DNNL_ARG_TO, l->mwei } };
			ok = p_dnnl_primitive_execute(r, c->st, 2, args) == dnnl_success;
			p_dnnl_primitive_destroy(r);
		}
		p_dnnl_primitive_desc_destroy(rpd);
	}
	p_dnnl_memory_destroy(from);
	return ok ? 0 : -1;
}

static Layer *
add(Ctx *c)
{
	Layer *l;

	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 16;
		Layer **p = realloc(c->l, sizeof *p * (size_t)cap);
		if (!p)
			return NULL;
		c->l = p, c->cap = cap;
	}
	l = calloc(1, sizeof *l);
	if (l)
		c->l[c->n] = l;
	return l;
}

static void
tag(float *prep, Ctx *c)
{
	Tag t = { MAGIC, c, c->n - 1, {0} };

	memcpy(prep, &t, sizeof t);
}

/* ---- convolution ---- */

static int
conv_desc(Layer *l, dnnl_convolution_desc_t *cd)
{
	const dprt_conv *cv = &l->cv;
	dnnl_memory_desc_t any[3], bmd;
	dnnl_dims_t ds = { cv->N, cv->C, cv->H, cv->W }, dd = { cv->N, cv->O, cv->OH, cv->OW };
	dnnl_dims_t dw = { cv->O, cv->C / cv->groups, cv->k[0], cv->k[1] };
	dnnl_dims_t dg = { cv->groups, cv->O / cv->groups, cv->C / cv->groups, cv->k[0], cv->k[1] };
	dnnl_dims_t db = { cv->O }, st = { cv->s[0], cv->s[1] };
	dnnl_dims_t dil = { cv->d[0] - 1, cv->d[1] - 1 }, pl = { cv->p[0], cv->p[1] }, pr;
	int g = cv->groups > 1, i, B = dprt_conv_block();
	dnnl_format_tag_t bt = B == 16 ? dnnl_nChw16c : dnnl_nChw8c;
	int bx = B && (cv->lay & DPRT_LAY_X), by = B && (cv->lay & DPRT_LAY_Y);

	for (i = 0; i < 2; i++) {
		int64_t in = i ? cv->W : cv->H, out = i ? cv->OW : cv->OH;
		pr[i] = (out - 1) * cv->s[i] + (cv->k[i] - 1) * cv->d[i] + 1 - in - cv->p[i];
		if (pr[i] < 0 && pr[i] > -cv->s[i])   /* input rows a stride leaves unread */
			pr[i] = 0;
		if (pr[i] < 0)
			return -1;
	}
	/* a blocked src or dst is the primitive's own: never reordered */
	if (p_dnnl_memory_desc_init_by_tag(&l->umd[0], 4, ds, dnnl_f32, bx ? bt : dnnl_nchw) ||
	    p_dnnl_memory_desc_init_by_tag(&l->umd[1], 4, dd, dnnl_f32, by ? bt : dnnl_nchw) ||
	    p_dnnl_memory_desc_init_by_tag(&l->umd[2], g ? 5 : 4, g ? dg : dw, dnnl_f32,
	                                   g ? dnnl_goihw : dnnl_oihw) ||
	    p_dnnl_memory_desc_init_by_tag(&any[0], 4, ds, dnnl_f32, dnnl_format_tag_any) ||
	    p_dnnl_memory_desc_init_by_tag(&any[1], 4, dd, dnnl_f32, dnnl_format_tag_any) ||
	    p_dnnl_memory_desc_init_by_tag(&any[2], g ? 5 : 4, g ? dg : dw, dnnl_f32,
	                                   dnnl_format_tag_any) ||
	    p_dnnl_memory_desc_init_by_tag(&bmd, 1, db, dnnl_f32, dnnl_a))
		return -1;
	if (bx)
		any[0] = l->umd[0];
	if (by)
		any[1] = l->umd[1];
	return p_dnnl_dilated_convolution_forward_desc_init(cd, dnnl_forward_inference,
		l->wino ? dnnl_convolution_winograd : dnnl_convolution_direct, &any[0], &any[2], &bmd,
		&any[1], st, dil, pl, pr) == dnnl_success ? 0 : -1;
}

int
dprt_dnnl_conv_prep(const dprt_conv *cv, float *prep, const float *w, const float *bias,
                    const float *bnw, const float *bnb, const float *bnm, const float *bnv,
                    float eps)
{
	int dw = cv->groups == cv->C && cv->groups > 1;
	int64_t O = cv->O, K = cv->C / cv->groups * cv->k[0] * cv->k[1], o, k;
	size_t room = (size_t)dprt_conv_prep_floats(cv) * sizeof(float);
	dnnl_convolution_desc_t cd;
	dnnl_memory_desc_t bmd;
	dnnl_dims_t db = { O };
	float *wf = NULL, *bf;
	Layer *l;
	Ctx *c;
	int ok = 0;

	if (!dprt_pool_prepping() || !(dprt_dnnl_policy() & (dw ? USE_DW : USE_CONV)) ||
	    (dw && cv->N == 1 && dprt_conv_block() && cv->lay == (DPRT_LAY_X | DPRT_LAY_Y) &&
	     !(dprt_dnnl_policy() & USE_DW1)) ||   /* ours won there (bench/RESULTS.md) */
	    cv->act > DPRT_ACT_GELU_TANH || !dprt_dnnl_available())
		return 0;
	if (room < sizeof(Tag) + (size_t)O * sizeof(float) + 64 || !(c = ctx_get(1)))
		return 0;
	if (!(l = add(c)))
		return 0;
	l->kind = KCONV, l->cv = *cv, l->nthr = c->nthr;
	l->act = cv->act, l->lo = cv->lo, l->hi = cv->hi;
	/* the bias first (O floats after the tag), then the packed weights */
	bf = prep + TAGF;
	wf = malloc(sizeof *wf * (size_t)(O * K));
	if (!wf)
		goto out;
	/* 3×3 stride 1 through Winograd where oneDNN has it, else direct */
	l->wino = (dprt_dnnl_policy() & USE_WINO) && cv->k[0] == 3 && cv->k[1] == 3 &&
	          cv->s[0] == 1 && cv->s[1] == 1 && cv->d[0] == 1 && cv->d[1] == 1 && cv->groups == 1;
	if (l->wino && (conv_desc(l, &cd) != 0 || make(c, l, &cd, cv->res) != 0))
		l->wino = 0;
	if (!l->wino && (conv_desc(l, &cd) != 0 || make(c, l, &cd, cv->res) != 0))
		goto out;
	for (o = 0; o < O; o++) {
		float a = 1.0f, b = bias ? bias[o] : 0.0f;
		if (bnw) {
			a = 1.0f / sqrtf(bnv[o] + eps) * bnw[o];
			b = (b - bnm[o]) * a + bnb[o];
		}
		bf[o] = b;
		for (k = 0; k < K; k++)
			wf[o * K + k] = bnw ? w[o * K + k] * a : w[o * K + k];
	}
	l->bias = bf;
	{
		size_t boff = ((size_t)O * sizeof(float) + 63) / 64 * 64;
		float *wdst = (float *)((char *)prep + sizeof(Tag) + boff);
		if (pack_weights(l, wf, wdst, room - sizeof(Tag) - boff) != 0)
			goto out;
	}
	if (p_dnnl_memory_desc_init_by_tag(&bmd, 1, db, dnnl_f32, dnnl_a) != dnnl_success ||
	    p_dnnl_memory_create(&l->mbias, &bmd, eng, bf) != dnnl_success)
		goto out;
	c->n++;
	tag(prep, c);
	ok = 1;
out:
	free(wf);
	if (!ok) {   /* ours after all */
		layer_free(l);
		free(l);
	}
	return ok;
}

/* Made again for the instance's thread count, the weights kept (reordered
 * when the new primitive wants another layout); where that fails the old
 * primitive stays (right, on its old thread count). */
static void
remake(Ctx *c, Layer *l, const_dnnl_op_desc_t od, int sum)
{
	Layer nl = *l;
	dnnl_primitive_desc_t rpd;
	dnnl_primitive_t r;
	void *to = NULL;
	int ok = 0;

	l->nthr = c->nthr;   /* tried once per count */
	nl.prim = nl.rsrc = nl.rres = nl.rdst = NULL;
	nl.msrc = nl.mdst = nl.musrc = nl.mudst = nl.mures = nl.mscr = NULL;
	nl.nthr = c->nthr;
	if (make(c, &nl, od, sum) != 0)
		return;
	if (p_dnnl_memory_desc_equal(&l->md[2], &nl.md[2])) {
		run_free(l);
		*l = nl;
		return;
	}
	/* another layout: the packed weights reordered into memory of their own */
	nl.mwei = NULL;
	if (posix_memalign(&to, 64, p_dnnl_memory_desc_get_size(&nl.md[2])) == 0 &&
	    p_dnnl_memory_create(&nl.mwei, &nl.md[2], eng, to) == dnnl_success &&
	    p_dnnl_reorder_primitive_desc_create(&rpd, &l->md[2], eng, &nl.md[2], eng, NULL) ==
	    dnnl_success) {
		if (p_dnnl_primitive_create(&r, rpd) == dnnl_success) {
			dnnl_exec_arg_t args[2] = { { DNNL_ARG_FROM, l->mwei }, { DNNL_ARG_TO, nl.mwei } };
			ok = p_dnnl_primitive_execute(r, c->st, 2, args) == dnnl_success;
			p_dnnl_primitive_destroy(r);
		}
		p_dnnl_primitive_desc_destroy(rpd);
	}
	if (!ok) {
		run_free(&nl);
		if (nl.mwei)
			p_dnnl_memory_destroy(nl.mwei);
		free(to);
		return;
	}
	run_free(l);
	p_dnnl_memory_destroy(l->mwei);
	free(l->weimem);
	nl.weimem = to;
	*l = nl;
}

static int
exec(dnnl_primitive_t p, Ctx *c, int n, const dnnl_exec_arg_t *a)
{
	return p_dnnl_primitive_execute(p, c->st, n, a) == dnnl_success ? 0 : -1;
}

/* Runs layer l: x (plain) to y (plain), + res (plain) when sum. */
static int
run(Ctx *c, Layer *l, float *y, const float *x, const float *res)
{
	dnnl_memory_t src = l->musrc, dst = l->mudst;

	omp_setn(l->nthr);
	p_dnnl_memory_set_data_handle(l->musrc, (void *)x);
	p_dnnl_memory_set_data_handle(l->mudst, y);
	if (l->rsrc) {
		p_dnnl_memory_set_data_handle(l->msrc, c->buf[0]);
		if (exec(l->rsrc, c, 2, (dnnl_exec_arg_t[]){ { DNNL_ARG_FROM, l->musrc },
		                                             { DNNL_ARG_TO, l->msrc } }) != 0)
			return -1;
		src = l->msrc;
	}
	if (l->rdst) {
		p_dnnl_memory_set_data_handle(l->mdst, c->buf[1]);
		dst = l->mdst;
	}
	if (res && l->rres) {
		p_dnnl_memory_set_data_handle(l->mures, (void *)res);
		if (exec(l->rres, c, 2, (dnnl_exec_arg_t[]){ { DNNL_ARG_FROM, l->mures },
		                                             { DNNL_ARG_TO, l->mdst } }) != 0)
			return -1;
	} else if (res && res != y) {
		dprt_memcpy(y, res, (int64_t)p_dnnl_memory_desc_get_size(&l->umd[1]));
	}
	if (l->mscr)
		p_dnnl_memory_set_data_handle(l->mscr, c->buf[2]);
	dnnl_exec_arg_t a[5] = { { DNNL_ARG_SRC, src }, { DNNL_ARG_WEIGHTS, l->mwei },
	                         { DNNL_ARG_DST, dst } };
	int na = 3;

	if (l->mbias)
		a[na++] = (dnnl_exec_arg_t){ DNNL_ARG_BIAS, l->mbias };
	if (l->mscr)
		a[na++] = (dnnl_exec_arg_t){ DNNL_ARG_SCRATCHPAD, l->mscr };
	if (exec(l->prim, c, na, a) != 0)
		return -1;
	if (l->rdst && exec(l->rdst, c, 2, (dnnl_exec_arg_t[]){ { DNNL_ARG_FROM, l->mdst },
	                                                        { DNNL_ARG_TO, l->mudst } }) != 0)
		return -1;
	return 0;
}

int
dprt_dnnl_conv_run(const dprt_conv *cv, float *y, const float *x, const float *prep,
                   const float *res)
{
	Layer *l;
	Ctx *c;

	if (!(l = tagged(prep, &c)) || l->kind != KCONV)
		return 0;
	c->nthr = dprt_threads();
	if (l->nthr != c->nthr) {
		dnnl_convolution_desc_t cd;
		if (conv_desc(l, &cd) == 0)
			remake(c, l, &cd, l->cv.res);
	}
	return run(c, l, y, x, res) == 0 ? 1 : -1;
}

/* ---- linear layers: a matmul x [M, K] · wᵀ, w [N, K] read as [K, N]
 * (or w [K, N] itself: wt), a residual as the sum post-op ---- */

static int
linear_desc(Layer *l, dnnl_matmul_desc_t *md)
{
	dnnl_dims_t dx = { l->M, l->K }, dy = { l->M, l->N }, dw = { l->K, l->N }, db = { 1, l->N };
	dnnl_dims_t sw = { l->wt ? l->N : 1, l->wt ? 1 : l->K };
	dnnl_memory_desc_t anyw, bmd;

	if (p_dnnl_memory_desc_init_by_tag(&l->umd[0], 2, dx, dnnl_f32, dnnl_ab) ||
	    p_dnnl_memory_desc_init_by_tag(&l->umd[1], 2, dy, dnnl_f32, dnnl_ab) ||
	    p_dnnl_memory_desc_init_by_strides(&l->umd[2], 2, dw, dnnl_f32, sw) ||
	    p_dnnl_memory_desc_init_by_tag(&anyw, 2, dw, dnnl_f32, dnnl_format_tag_any) ||
	    p_dnnl_memory_desc_init_by_tag(&bmd, 2, db, dnnl_f32, dnnl_ab))
		return -1;
	return p_dnnl_matmul_desc_init(md, &l->umd[0], &anyw, l->nobias ? NULL : &bmd,
	                               &l->umd[1]) == dnnl_success ? 0 : -1;
}

int
dprt_dnnl_linear_prep(float *prep, const float *w, int64_t N, int64_t K)
{
	Layer *l;
	Ctx *c;

	if (!dprt_pool_prepping() || !(dprt_dnnl_policy() & USE_LINEAR) || !dprt_dnnl_available())
		return 0;
	if ((size_t)dprt_linear_prep_floats(N, K) * sizeof(float) < sizeof(Tag) + 64 ||
	    !(c = ctx_get(1)) || !(l = add(c)))
		return 0;
	c->n++;
	l->kind = KLINEAR, l->N = N, l->K = K;
	tag(prep, c);
	return 1;
}

/* The layer's matmul for M rows and act, its weights packed from w into
 * prep (after the tag) or weimem. */
static int
linear_make(Ctx *c, Layer *l, const float *w, float *prep, const float *bias)
{
	dnnl_matmul_desc_t md;
	dnnl_memory_desc_t bmd;
	dnnl_dims_t db = { 1, l->N };

	l->nthr = c->nthr;
	if (linear_desc(l, &md) != 0 || make(c, l, &md, l->sum) != 0)
		return -1;
	if (l->rsrc || l->rdst)   /* plain src and dst asked for: never reordered */
		return -1;
	if (pack_weights(l, w, prep + TAGF,
	                 (size_t)dprt_linear_prep_floats(l->N, l->K) * sizeof(float) - sizeof(Tag)) != 0)
		return -1;
	if (!l->nobias &&
	    (p_dnnl_memory_desc_init_by_tag(&bmd, 2, db, dnnl_f32, dnnl_ab) != dnnl_success ||
	     p_dnnl_memory_create(&l->mbias, &bmd, eng, (void *)bias) != dnnl_success))
		return -1;
	return 0;
}

int
dprt_dnnl_linear_run(float *y, const float *x, const float *w, const float *prep,
                     const float *bias, const float *res, int64_t M, int64_t N, int64_t K,
                     int act, int wt)
{
	Layer *l;
	Ctx *c;

	if (!(l = tagged(prep, &c)) || l->kind != KLINEAR)
		return 0;
	if (l->M < 0)   /* no primitive to be had: the unpacked path */
		return -1;
	c->nthr = dprt_threads();
	if (l->M != M || l->act != act || l->nobias != !bias || l->nthr != c->nthr || !l->prim ||
	    l->wt != wt || l->sum != !!res) {
		layer_free(l);
		l->M = M, l->act = act, l->nobias = !bias, l->wt = wt, l->sum = !!res;
		if (linear_make(c, l, w, (float *)prep, bias) != 0) {
			layer_free(l);
			l->M = -1;
			return -1;
		}
	}
	if (bias)
		p_dnnl_memory_set_data_handle(l->mbias, (void *)bias);
	return run(c, l, y, x, res) == 0 ? 1 : -1;
}

/* ---- other large products: oneDNN's sgemm (packs per call) ---- */

int
dprt_dnnl_sgemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t rsa, int64_t csa,
                const float *B, int64_t rsb, int64_t csb, const float *bias, float *C,
                int64_t ldc)
{
	char ta, tb;
	int64_t lda, ldb, i;

	if (!(dprt_dnnl_policy() & USE_GEMM) || M * N * K < ((int64_t)1 << 24) ||
	    dprt_pool_intask() || !dprt_pool_dnnl_slot() || !dprt_dnnl_available())
		return 0;
	if (csa == 1 && rsa >= K)
		ta = 'N', lda = rsa;
	else if (rsa == 1 && csa >= M)
		ta = 'T', lda = csa;
	else
		return 0;
	if (csb == 1 && rsb >= N)
		tb = 'N', ldb = rsb;
	else if (rsb == 1 && csb >= K)
		tb = 'T', ldb = csb;
	else
		return 0;
	{   /* C is written first: it must not overlap A or B */
		const char *c0 = (const char *)C, *c1 = (const char *)(C + (M - 1) * ldc + N);
		const char *a0 = (const char *)A, *a1 = (const char *)(A + (M - 1) * rsa + (K - 1) * csa + 1);
		const char *b0 = (const char *)B, *b1 = (const char *)(B + (K - 1) * rsb + (N - 1) * csb + 1);
		if ((c0 < a1 && a0 < c1) || (c0 < b1 && b0 < c1))
			return 0;
	}
	for (i = 0; i < M; i++)   /* C = bias rows (or 0), then C += A·B */
		if (bias)
			memcpy(C + i * ldc, bias, sizeof *C * (size_t)N);
		else
			memset(C + i * ldc, 0, sizeof *C * (size_t)N);
	omp_setn(dprt_threads());
	return p_dnnl_sgemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, 1.0f, C, ldc) == dnnl_success ?
		1 : -1;
}

#endif
