/* xrand.h: the seeded random numbers of the attention checks (attn.c on a
 * GPU, attndec.cpp on the host emulator): xorshift64, uniform in [0, 1)
 * and normal by Box-Muller. */
#ifndef XRAND_H
#define XRAND_H

#include <math.h>

static unsigned long long rs = 88172645463325252ULL;

static double
urand(void)
{
	rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
	return (double)(rs >> 11) / 9007199254740992.0;
}

static double
nrand(void)
{
	double u = urand() + 1e-300, v = urand();

	return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

#endif
