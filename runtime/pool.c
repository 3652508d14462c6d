/* pool.c: the thread pool of a program instance (pthreads) and the CPU
 * feature dispatch: which SIMD kernels this process uses (CPUID, or the
 * DPRT_ISA request). */
#define _GNU_SOURCE     /* sched_getaffinity, CPU_COUNT */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dprtint.h"
#include "gemm.h"

/*
 * A job is ntask calls fn(arg, t); the threads take task numbers from one
 * atomic counter, so which thread runs a task never changes what it
 * computes.  Workers spin on the job generation for a short while after a
 * job (the next kernel usually follows within microseconds), then sleep on
 * the condition variable.
 */
struct dprt_pool {
	int n;                          /* threads, the caller included */
	pthread_t *th;                  /* the n - 1 workers */
	int started;                    /* workers created */
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	atomic_uint gen;                /* bumped for each job */
	atomic_int left;                /* workers still on the current job */
	atomic_int quit;
	void (*fn)(void *, int64_t);
	void *arg;
	int64_t ntask;
	atomic_llong next;              /* the next task number */
	atomic_flag busy;               /* an instance's run in progress */
};

enum { SPIN = 2000 };   /* pause steps (some microseconds) before sleeping */

static _Thread_local dprt_pool *cur;    /* the pool kernels of this thread use */
static _Thread_local int inworker;      /* a worker or inside a job: no nesting */

static void
cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static void
work(dprt_pool *p)
{
	int64_t t;

	while ((t = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed)) < p->ntask)
		p->fn(p->arg, t);
}

static void *
worker(void *arg)
{
	dprt_pool *p = arg;
	unsigned seen = 0;      /* the pool starts at generation 0 */
	int i;

	inworker = 1;
	for (;;) {
		for (i = 0; i < SPIN && atomic_load_explicit(&p->gen, memory_order_acquire) == seen; i++)
			cpu_relax();
		if (atomic_load_explicit(&p->gen, memory_order_acquire) == seen) {
			pthread_mutex_lock(&p->mu);
			while (atomic_load(&p->gen) == seen && !atomic_load(&p->quit))
				pthread_cond_wait(&p->go, &p->mu);
			pthread_mutex_unlock(&p->mu);
		}
		if (atomic_load(&p->quit))
			return NULL;
		seen = atomic_load(&p->gen);
		work(p);
		if (atomic_fetch_sub_explicit(&p->left, 1, memory_order_acq_rel) == 1) {
			pthread_mutex_lock(&p->mu);
			pthread_cond_signal(&p->done);
			pthread_mutex_unlock(&p->mu);
		}
	}
}

/* The cores this process may run on (at least 1). */
int
dprt_ncores(void)
{
#ifdef CPU_COUNT
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
#endif
	return 1;
}

/* Parses a thread count: 1..DPRT_MAXTHREADS. */
int
dprt_parse_threads(const char *s, int *n, const char *what, char *err, size_t errn)
{
	char *end;
	long v;

	errno = 0;
	v = s && *s ? strtol(s, &end, 10) : 0;
	if (!s || !*s || *end || errno || v < 1 || v > DPRT_MAXTHREADS)
		return dprt_errf(err, errn, "%s needs a thread count from 1 to %d, got '%s'", what,
		                 DPRT_MAXTHREADS, s ? s : "");
	*n = (int)v;
	return 0;
}

/* The default thread count: DPRT_THREADS, else the cores we may use. */
int
dprt_default_threads(int *n, char *err, size_t errn)
{
	const char *e = getenv("DPRT_THREADS");

	if (e)
		return dprt_parse_threads(e, n, "DPRT_THREADS", err, errn);
	*n = dprt_ncores();
	if (*n > DPRT_MAXTHREADS)
		*n = DPRT_MAXTHREADS;
	return 0;
}

int
dprt_pool_create(dprt_pool **pp, int n, char *err, size_t errn)
{
	dprt_pool *p;
	int i;

	*pp = NULL;
	if (dprt_cpu_init(err, errn) != 0)
		return -1;
	if (n == 0 && dprt_default_threads(&n, err, errn) != 0)
		return -1;
	if (n < 1 || n > DPRT_MAXTHREADS)
		return dprt_errf(err, errn, "thread count %d is not from 1 to %d", n, DPRT_MAXTHREADS);
	p = calloc(1, sizeof *p);
	if (!p || (n > 1 && !(p->th = calloc((size_t)n - 1, sizeof *p->th)))) {
		free(p);
		return dprt_errf(err, errn, "out of memory (thread pool)");
	}
	p->n = n;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->go, NULL);
	pthread_cond_init(&p->done, NULL);
	atomic_init(&p->gen, 0);
	atomic_init(&p->left, 0);
	atomic_init(&p->next, 0);
	atomic_init(&p->quit, 0);
	atomic_flag_clear(&p->busy);
	for (i = 0; i < n - 1; i++) {
		if (pthread_create(&p->th[i], NULL, worker, p) != 0) {
			p->started = i;
			dprt_pool_destroy(p);
			return dprt_errf(err, errn, "cannot start thread %d of %d", i + 2, n);
		}
	}
	p->started = n - 1;
	*pp = p;
	return 0;
}

void
dprt_pool_destroy(dprt_pool *p)
{
	int i;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	atomic_store(&p->quit, 1);
	atomic_fetch_add(&p->gen, 1);
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	for (i = 0; i < p->started; i++)
		pthread_join(p->th[i], NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->go);
	pthread_cond_destroy(&p->done);
	if (cur == p)
		cur = NULL;
	free(p->th);
	free(p);
}

int
dprt_pool_resize(dprt_pool **pp, int n, char *err, size_t errn)
{
	dprt_pool *p;

	if (n < 1 || n > DPRT_MAXTHREADS)
		return dprt_errf(err, errn, "%d threads: the count must be from 1 to %d", n,
		                 DPRT_MAXTHREADS);
	if (dprt_pool_create(&p, n, err, errn) != 0)
		return -1;
	dprt_pool_destroy(*pp);
	*pp = p;
	return 0;
}

int
dprt_pool_threads(const dprt_pool *p)
{
	return p ? p->n : 1;
}

int
dprt_pool_enter(dprt_pool *p)
{
	if (p && atomic_flag_test_and_set(&p->busy))
		return -1;
	cur = p;
	return 0;
}

void
dprt_pool_leave(dprt_pool *p)
{
	cur = NULL;
	if (p)
		atomic_flag_clear(&p->busy);
}

int
dprt_threads(void)
{
	return cur && !inworker ? cur->n : 1;
}

void
dprt_parallel(int64_t ntask, void (*fn)(void *, int64_t), void *arg)
{
	dprt_pool *p = cur;
	int64_t t;
	int i;

	if (!p || p->n == 1 || ntask <= 1 || inworker) {
		for (t = 0; t < ntask; t++)
			fn(arg, t);
		return;
	}
	p->fn = fn;
	p->arg = arg;
	p->ntask = ntask;
	atomic_store_explicit(&p->next, 0, memory_order_relaxed);
	atomic_store_explicit(&p->left, p->n - 1, memory_order_relaxed);
	pthread_mutex_lock(&p->mu);
	atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	inworker = 1;
	work(p);
	inworker = 0;
	for (i = 0; i < SPIN && atomic_load_explicit(&p->left, memory_order_acquire) > 0; i++)
		cpu_relax();
	if (atomic_load_explicit(&p->left, memory_order_acquire) > 0) {
		pthread_mutex_lock(&p->mu);
		while (atomic_load(&p->left) > 0)
			pthread_cond_wait(&p->done, &p->mu);
		pthread_mutex_unlock(&p->mu);
	}
}

/* ---- CPU features ---- */

static int isa = -1;
static char isaerr[160];
static pthread_once_t isaonce = PTHREAD_ONCE_INIT;

static const char *const isaname[] = { "generic", "avx2", "avx512" };

/* What this CPU can run. */
static int
cpu_best(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") &&
	    __builtin_cpu_supports("fma"))
		return DPRT_ISA_AVX512;
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return DPRT_ISA_AVX2;
#endif
	return DPRT_ISA_GENERIC;
}

static void
isa_init(void)
{
	const char *e = getenv("DPRT_ISA");
	int best = cpu_best(), want, i;

	isa = best;
	if (!e || !*e)
		return;
	for (want = -1, i = 0; i < DPRT_NISA; i++)
		if (strcmp(e, isaname[i]) == 0)
			want = i;
	if (want < 0) {
		snprintf(isaerr, sizeof isaerr, "DPRT_ISA=%s: unknown (generic, avx2 or avx512)", e);
		return;
	}
	if (want > best) {
		snprintf(isaerr, sizeof isaerr, "DPRT_ISA=%s: this CPU does not support %s (best: %s)",
		         e, e, isaname[best]);
		return;
	}
	isa = want;
}

int
dprt_cpu_init(char *err, size_t errn)
{
	pthread_once(&isaonce, isa_init);
	if (isaerr[0])
		return dprt_errf(err, errn, "%s", isaerr);
	return 0;
}

int
dprt_isa(void)
{
	pthread_once(&isaonce, isa_init);
	return isa;
}

const char *
dprt_isa_name(void)
{
	return isaname[dprt_isa()];
}
