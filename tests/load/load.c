/* load.c: the driver of tests/load.t.  8 instances of the cnn program run
 * from 8 threads at once (with 1 to 3 threads each), RUNS runs apiece; every
 * output must equal, bit for bit, the output of a lone instance on one
 * thread, which must match PyTorch's.  Then one instance is run from two
 * threads at once: each run either succeeds with that output or is refused
 * with the documented error.  Prints TAP. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnn.h"
#include "dprt.h"

enum { NT = 8, NOUT = 10 };

static float x[1 * 3 * 32 * 32], ref[NOUT];
static long runs;
static int n;

static void
ok(int cond, const char *what)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++n, what);
}

typedef struct Arg {
	cnn *m;                 /* shared, or NULL: make one with threads */
	int threads;
	long bad, failed, refused;
	char err[256];
} Arg;

static void *
loop(void *p)
{
	Arg *a = p;
	cnn *m = a->m ? a->m : cnn_create();
	float y[NOUT];
	long i;

	if (!m || (!a->m && cnn_set_threads(m, a->threads) != 0)) {
		a->failed = runs;
		snprintf(a->err, sizeof a->err, "%s", cnn_error(m));
		cnn_destroy(m);
		return NULL;
	}
	for (i = 0; i < runs; i++) {
		memset(y, 0xff, sizeof y);
		if (cnn_run(m, x, y) != 0) {
			if (a->m && strstr(cnn_error(m), "running in another thread")) {
				a->refused++;
				continue;
			}
			a->failed++;
			snprintf(a->err, sizeof a->err, "%s", cnn_error(m));
		} else if (memcmp(y, ref, sizeof y) != 0) {
			a->bad++;
		}
	}
	if (!a->m)
		cnn_destroy(m);
	return NULL;
}

int
main(int argc, char **argv)
{
	int64_t dx[4] = {1, 3, 32, 32}, dy[2] = {1, NOUT};
	float want[NOUT], err = 0, mx = 0;
	char msg[256], what[200];
	pthread_t th[NT];
	Arg a[NT];
	cnn *m;
	int i;

	if (argc != 4) {
		fprintf(stderr, "usage: load IN.npy OUT.npy RUNS\n");
		return 2;
	}
	runs = atol(argv[3]);
	if (dprt_npy_read(argv[1], DPRT_F32, 4, dx, x, msg, sizeof msg) != 0 ||
	    dprt_npy_read(argv[2], DPRT_F32, 2, dy, want, msg, sizeof msg) != 0) {
		fprintf(stderr, "load: %s\n", msg);
		return 2;
	}

	m = cnn_create();
	ok(m && cnn_set_threads(m, 1) == 0 && cnn_run(m, x, ref) == 0, "a lone instance runs");
	for (i = 0; i < NOUT; i++) {
		float e = ref[i] > want[i] ? ref[i] - want[i] : want[i] - ref[i];
		err = e > err ? e : err;
		mx = (want[i] > 0 ? want[i] : -want[i]) > mx ? (want[i] > 0 ? want[i] : -want[i]) : mx;
	}
	snprintf(what, sizeof what, "its output is within 1e-5 of PyTorch's (max|err| %g, "
	         "max|ref| %g)", err, mx);
	ok(err <= 1e-5f * mx, what);
	ok(cnn_set_threads(m, 0) == -1 && strstr(cnn_error(m), "0 threads") != NULL,
	   "set_threads(0) is refused with a message");
	printf("# %s\n", cnn_error(m));

	memset(a, 0, sizeof a);
	for (i = 0; i < NT; i++) {
		a[i].threads = 1 + i % 3;
		pthread_create(&th[i], NULL, loop, &a[i]);
	}
	long bad = 0, failed = 0;
	for (i = 0; i < NT; i++) {
		pthread_join(th[i], NULL);
		bad += a[i].bad;
		failed += a[i].failed;
		if (a[i].failed)
			printf("# %s\n", a[i].err);
	}
	snprintf(what, sizeof what, "%d instances from %d threads, %ld runs each: every run "
	         "succeeds (%ld failed)", NT, NT, runs, failed);
	ok(failed == 0, what);
	snprintf(what, sizeof what, "every output equals the lone instance's bit for bit "
	         "(%ld differ)", bad);
	ok(bad == 0, what);

	/* one instance, two threads */
	memset(a, 0, sizeof a);
	cnn_set_threads(m, 2);
	for (i = 0; i < 2; i++) {
		a[i].m = m;
		pthread_create(&th[i], NULL, loop, &a[i]);
	}
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	snprintf(what, sizeof what, "one instance from two threads: each run succeeds with the "
	         "same output or is refused (%ld refused, %ld failed, %ld differ)",
	         a[0].refused + a[1].refused, a[0].failed + a[1].failed, a[0].bad + a[1].bad);
	ok(a[0].failed + a[1].failed + a[0].bad + a[1].bad == 0, what);
	ok(cnn_run(m, x, want) == 0 && memcmp(want, ref, sizeof ref) == 0,
	   "the instance runs alone again afterwards");
	cnn_destroy(m);
	printf("1..%d\n", n);
	return 0;
}
