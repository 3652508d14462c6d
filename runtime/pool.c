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
 * A job is ntask calls fn(arg, t).  One 64-bit counter holds the job's
 * generation (high half) and the next task number (low half; IDLE while a
 * job is being set up): a thread claims a task by a compare-and-swap that
 * also proves the job it read fn, arg and ntask of is still the current
 * one.  Which thread runs a task never changes what it computes.  The
 * caller takes tasks too and returns once every task is done; it never
 * waits for a worker that has not claimed one, so a sleeping or preempted
 * worker costs nothing.  Idle workers spin a few microseconds (the next
 * kernel usually follows at once), then sleep on the condition variable.
 */
#define IDLE 0xffffffffu
enum { SPIN = 2000 };   /* pause steps before sleeping */

struct dprt_pool {
	int n;                          /* threads, the caller included */
	pthread_t *th;                  /* the n - 1 workers */
	int started;                    /* workers created */
	pthread_mutex_t mu;
	pthread_cond_t go;
	atomic_int nsleep;              /* workers waiting on go */
	atomic_int quit;
	atomic_ullong ctr;              /* generation << 32 | next task */
	atomic_llong done;              /* tasks of the current job finished */
	_Atomic(void *) arg;            /* the current job */
	atomic_uintptr_t fn;
	atomic_llong ntask;
	atomic_flag busy;               /* an instance's run in progress */
	void *dnnl;                     /* the instance's oneDNN state (dnnl.c), or NULL */
	int prepping;                   /* inside dprt_pool_prep */
};

static _Thread_local dprt_pool *cur;    /* the pool kernels of this thread use */
static _Thread_local int inworker;      /* a worker or inside a job: no nesting */

static void
cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Claims and runs one task of the job the counter holds (v, as last read;
 * updated on failure).  1 when it ran one, 0 when there is none to take,
 * -1 when the counter moved (try again). */
static int
step(dprt_pool *p, unsigned long long *v)
{
	unsigned idx = (unsigned)(*v & IDLE);
	void (*fn)(void *, int64_t);
	void *arg;
	int64_t n;

	if (idx == IDLE)
		return 0;
	fn = (void (*)(void *, int64_t))atomic_load_explicit(&p->fn, memory_order_relaxed);
	arg = atomic_load_explicit(&p->arg, memory_order_relaxed);
	n = atomic_load_explicit(&p->ntask, memory_order_relaxed);
	if (idx >= n)
		return 0;
	if (!atomic_compare_exchange_weak_explicit(&p->ctr, v, *v + 1, memory_order_acq_rel,
	                                           memory_order_acquire))
		return -1;
	*v += 1;
	fn(arg, idx);
	atomic_fetch_add_explicit(&p->done, 1, memory_order_release);
	return 1;
}

static void *
worker(void *arg)
{
	dprt_pool *p = arg;
	unsigned long long v;
	int spins = 0;

	inworker = 1;
	for (;;) {
		if (atomic_load(&p->quit))
			return NULL;
		v = atomic_load_explicit(&p->ctr, memory_order_acquire);
		while (step(p, &v) != 0)
			spins = 0;
		if (++spins < SPIN) {
			cpu_relax();
			continue;
		}
		pthread_mutex_lock(&p->mu);
		atomic_fetch_add(&p->nsleep, 1);
		while (atomic_load(&p->ctr) == v && !atomic_load(&p->quit))
			pthread_cond_wait(&p->go, &p->mu);
		atomic_fetch_sub(&p->nsleep, 1);
		pthread_mutex_unlock(&p->mu);
		spins = 0;
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
	atomic_init(&p->nsleep, 0);
	atomic_init(&p->quit, 0);
	atomic_init(&p->ctr, IDLE);
	atomic_init(&p->done, 0);
	atomic_init(&p->arg, NULL);
	atomic_init(&p->fn, 0);
	atomic_init(&p->ntask, 0);
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
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	for (i = 0; i < p->started; i++)
		pthread_join(p->th[i], NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->go);
	if (cur == p)
		cur = NULL;
	dprt_dnnl_free(p->dnnl);
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
	if (*pp) {   /* the oneDNN state moves (remade for n threads at the next run) */
		p->dnnl = (*pp)->dnnl;
		(*pp)->dnnl = NULL;
	}
	dprt_pool_destroy(*pp);
	*pp = p;
	return 0;
}

int
dprt_pool_threads(const dprt_pool *p)
{
	return p ? p->n : 1;
}

/* This thread's refused call: its instance and message (dprt_refuse). */
static _Thread_local const void *refinst;
static _Thread_local const char *refmsg;

void
dprt_refuse(const void *inst, const char *msg)
{
	if (msg)
		refinst = inst, refmsg = msg;
	else if (inst == refinst)
		refinst = NULL, refmsg = NULL;
}

const char *
dprt_refused(const void *inst)
{
	return inst && inst == refinst ? refmsg : NULL;
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

void
dprt_pool_prep(dprt_pool *p, void (*prep)(void *, const unsigned char *), void *arena,
               const unsigned char *w)
{
	if (dprt_pool_enter(p) != 0) {   /* in use: prepared without the pool */
		prep(arena, w);
		return;
	}
	if (p)
		p->prepping = 1;
	prep(arena, w);
	if (p)
		p->prepping = 0;
	dprt_pool_leave(p);
}

void **
dprt_pool_dnnl_slot(void)
{
	return cur ? &cur->dnnl : NULL;
}

int
dprt_pool_prepping(void)
{
	return cur && cur->prepping;
}

int
dprt_pool_intask(void)
{
	return inworker;
}

int
dprt_threads(void)
{
	return cur && !inworker ? cur->n : 1;
}

/* A job on libgomp's team (dprt_gomp_parallel): each thread of the team
 * claims tasks from one counter. */
typedef struct Team {
	void (*fn)(void *, int64_t);
	void *arg;
	int64_t ntask;
	atomic_llong next;
} Team;

static void
team_run(void *arg)
{
	Team *tm = arg;
	int was = inworker;
	int64_t t;

	inworker = 1;
	while ((t = atomic_fetch_add_explicit(&tm->next, 1, memory_order_relaxed)) < tm->ntask)
		tm->fn(tm->arg, t);
	inworker = was;
}

void
dprt_parallel(int64_t ntask, void (*fn)(void *, int64_t), void *arg)
{
	dprt_pool *p = cur;
	unsigned long long v, gen;
	int64_t t;
	int i;

	if (!p || p->n == 1 || ntask <= 1 || inworker || ntask >= IDLE) {
		for (t = 0; t < ntask; t++)
			fn(arg, t);
		return;
	}
	if (dprt_gomp_parallel) {   /* oneDNN's threads are ours too (dnnl.c) */
		Team tm = { fn, arg, ntask, 0 };
		/* always the pool's count, as oneDNN's primitives: libgomp ends the
		 * threads a smaller team leaves out and starts them again later */
		dprt_gomp_parallel(team_run, &tm, (unsigned)p->n, 0);
		return;
	}
	/* the last job is over: close it, describe the next one, open it */
	gen = (atomic_load(&p->ctr) >> 32) + 1;
	atomic_store(&p->ctr, gen << 32 | IDLE);
	atomic_store_explicit(&p->fn, (uintptr_t)fn, memory_order_relaxed);
	atomic_store_explicit(&p->arg, arg, memory_order_relaxed);
	atomic_store_explicit(&p->ntask, ntask, memory_order_relaxed);
	atomic_store_explicit(&p->done, 0, memory_order_relaxed);
	atomic_store(&p->ctr, gen << 32);
	if (atomic_load(&p->nsleep) > 0) {
		pthread_mutex_lock(&p->mu);
		pthread_cond_broadcast(&p->go);
		pthread_mutex_unlock(&p->mu);
	}
	inworker = 1;
	v = atomic_load_explicit(&p->ctr, memory_order_acquire);
	while (step(p, &v) != 0)
		;
	inworker = 0;
	/* tasks other threads claimed: spin, then let them have the CPU */
	for (i = 0; atomic_load_explicit(&p->done, memory_order_acquire) < ntask; i++) {
		if (i < SPIN)
			cpu_relax();
		else
			sched_yield();
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
