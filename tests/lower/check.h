/* check.h: helpers of the lower.t drivers: compare a program's outputs with
 * values worked out by hand; report mismatches on stderr. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

static int nbad;

static inline void
checkf(const char *what, const float *got, const float *want, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (fabsf(got[i] - want[i]) > 1e-6f * (1 + fabsf(want[i]))) {
			fprintf(stderr, "%s[%d] = %g, want %g\n", what, i, got[i], want[i]);
			nbad++;
		}
	}
}

static inline void
checki(const char *what, const int64_t *got, const int64_t *want, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (got[i] != want[i]) {
			fprintf(stderr, "%s[%d] = %lld, want %lld\n", what, i, (long long)got[i],
			        (long long)want[i]);
			nbad++;
		}
	}
}
