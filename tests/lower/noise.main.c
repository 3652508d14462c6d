/* noise.main.c: runs noise.ir through its typed C API (noise.h) and checks its
 * numbers against formats/ops.md's "Random numbers", worked out here with
 * SplitMix64 as a stateful generator (the state advances by γ, each output
 * is the mixed state), itself first checked against the published test
 * vector of the reference splitmix64.c (seed 1234567). */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "noise.h"

static uint64_t
next(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* element i of the op (seed, stream): the key is output stream+1 of the
 * generator from seed, the element output i+1 of the generator from key */
static uint64_t
bits(int64_t seed, int64_t stream, int64_t i)
{
	uint64_t s = (uint64_t)seed, key = 0, b = 0;
	int64_t k;

	for (k = 0; k <= stream; k++)
		key = next(&s);
	for (k = 0; k <= i; k++)
		b = next(&key);
	return b;
}

int
main(void)
{
	static const uint64_t vec[5] = { 6457827717110365317ull, 3203168211198807973ull,
	                                 9817491932198370423ull, 4593380528125082431ull,
	                                 16408922859458223821ull };
	const float x[6] = { 0, 1, 2, 3, 4, 5 };
	float u[6], n[6], wu[6], wn[6];
	int64_t k[4], wk[4];
	double d[3];
	uint64_t s = 1234567;
	noise *m = noise_create();
	int i;

	for (i = 0; i < 5; i++)
		if (next(&s) != vec[i]) {
			fprintf(stderr, "the reference SplitMix64 differs from its test vector\n");
			return 1;
		}
	if (m == NULL || noise_run(m, x, u, n, k, d) != 0) {
		fprintf(stderr, "run: %s\n", noise_error(m));
		return 1;
	}
	for (i = 0; i < 6; i++) {
		uint64_t b = bits(-7, 3, i);
		double u1 = (double)((b >> 32) + 1) / 4294967296.0, u2 = (double)(b & 0xffffffffu) / 4294967296.0;
		wu[i] = x[i] + (float)(bits(5, 0, i) >> 40) / 16777216.0f;
		wn[i] = (float)(sqrt(-2 * log(u1)) * cos(2 * 3.14159265358979323846 * u2));
	}
	for (i = 0; i < 4; i++)
		wk[i] = (int64_t)bits(5, 1, i);
	checkf("u", u, wu, 6);
	checkf("n", n, wn, 6);
	checki("k", k, wk, 4);
	for (i = 0; i < 3; i++)
		if (d[i] != (double)(bits(0, 0, i) >> 11) / 9007199254740992.0) {
			fprintf(stderr, "d[%d] = %.17g\n", i, d[i]);
			nbad++;
		}
	noise_destroy(m);
	return nbad != 0;
}
