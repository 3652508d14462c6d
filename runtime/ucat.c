/* ucat.c: the Unicode character data of the tokenizers looked up: general
 * categories, White_Space, simple case folding, lowercase mappings and the
 * normalization forms NFC, NFD, NFKC and NFKD, over the tables of
 * ucattab.h (made by tools/gen_unicode.py from Python's unicodedata). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dprtint.h"

#define NELEM(a) (sizeof (a) / sizeof *(a))

#include "ucattab.h"

static const urange *
findrange(const urange *r, size_t n, uint32_t c)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c < r[mid].lo)
			hi = mid;
		else if (c > r[mid].hi)
			lo = mid + 1;
		else
			return &r[mid];
	}
	return NULL;
}

/* The row of t[0..n-1] (sorted by its first column) for c, or NULL. */
static const uint32_t *
findpair(const uint32_t (*t)[2], size_t n, uint32_t c)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c < t[mid][0])
			hi = mid;
		else if (c > t[mid][0])
			lo = mid + 1;
		else
			return t[mid];
	}
	return NULL;
}

static const udecomp *
finddecomp(const udecomp *t, size_t n, uint32_t c)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c < t[mid].c)
			hi = mid;
		else if (c > t[mid].c)
			lo = mid + 1;
		else
			return &t[mid];
	}
	return NULL;
}

int
dprt_ucat(uint32_t c)
{
	const urange *r = findrange(cat, NELEM(cat), c);

	return r ? r->v : DPRT_UC_Cn;
}

/* Whether code point c is a letter (general category L). */
int
dprt_uletter(uint32_t c)
{
	int k = dprt_ucat(c);

	return k >= DPRT_UC_Lu && k <= DPRT_UC_Lo;
}

/* Whether code point c is a number (general category N). */
int
dprt_unumber(uint32_t c)
{
	int k = dprt_ucat(c);

	return k >= DPRT_UC_Nd && k <= DPRT_UC_No;
}

int
dprt_uspace(uint32_t c)
{
	return findrange(space, NELEM(space), c) != NULL;
}

uint32_t
dprt_ufold(uint32_t c)
{
	const uint32_t *p = findpair(fold, NELEM(fold), c);

	return p ? p[1] : c;
}

int
dprt_ulower(uint32_t c, uint32_t out[3])
{
	const uint32_t *p = findpair(lower1, NELEM(lower1), c);
	size_t i;

	out[0] = p ? p[1] : c;
	if (p || c < lowerx[0][0])
		return 1;
	for (i = 0; i < NELEM(lowerx); i++)
		if (lowerx[i][0] == c) {
			out[0] = lowerx[i][1];
			out[1] = lowerx[i][2];
			out[2] = lowerx[i][3];
			return out[2] ? 3 : 2;
		}
	return 1;
}

static int
combclass(uint32_t c)
{
	const urange *r;

	if (c < 0x300)
		return 0;
	r = findrange(ccc, NELEM(ccc), c);
	return r ? r->v : 0;
}

/* Writes the full decomposition of c (compat: the compatibility one) to
 * out, which has room for DMAX: its length, 1 with c itself when none. */
static size_t
decompose(uint32_t c, int compat, uint32_t *out)
{
	const udecomp *e = NULL;
	uint32_t s = c - SBASE;

	if (s < SCOUNT) {
		out[0] = LBASE + s / NCOUNT;
		out[1] = VBASE + s % NCOUNT / TCOUNT;
		if (s % TCOUNT == 0)
			return 2;
		out[2] = TBASE + s % TCOUNT;
		return 3;
	}
	if (c >= 0xA0 && compat)
		e = finddecomp(kdecomp, NELEM(kdecomp), c);
	if (c >= 0xC0 && !e)
		e = finddecomp(decomp, NELEM(decomp), c);
	if (!e) {
		out[0] = c;
		return 1;
	}
	if (e->n == 1)
		out[0] = e->d;
	else
		memcpy(out, dpool + e->d, e->n * sizeof *out);
	return e->n;
}

/* The primary composite of a and b, or 0. */
static uint32_t
composite(uint32_t a, uint32_t b)
{
	size_t lo = 0, hi = NELEM(comp);

	if (a - LBASE < LCOUNT && b - VBASE < VCOUNT)
		return SBASE + ((a - LBASE) * VCOUNT + b - VBASE) * TCOUNT;
	if (a - SBASE < SCOUNT && (a - SBASE) % TCOUNT == 0 && b - TBASE - 1 < TCOUNT - 1)
		return a + (b - TBASE);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a < comp[mid][0] || (a == comp[mid][0] && b < comp[mid][1]))
			hi = mid;
		else if (a > comp[mid][0] || b > comp[mid][1])
			lo = mid + 1;
		else
			return comp[mid][2];
	}
	return 0;
}

#define SHORTRUN 32

/* Sorts the run of non-starters r[0..n-1] stably by combining class:
 * insertion sort when short, else a counting sort through tmp[0..n-1]. */
static void
sortrun(uint32_t *r, size_t n, uint32_t *tmp)
{
	size_t i, j, at[256] = {0}, sum = 0;

	if (n <= SHORTRUN) {
		unsigned char cc[SHORTRUN];
		for (i = 0; i < n; i++) {
			uint32_t c = r[i];
			int k = combclass(c);
			for (j = i; j > 0 && cc[j - 1] > k; j--) {
				r[j] = r[j - 1];
				cc[j] = cc[j - 1];
			}
			r[j] = c;
			cc[j] = (unsigned char)k;
		}
		return;
	}
	for (i = 0; i < n; i++)
		at[combclass(r[i])]++;
	for (i = 0; i < 256; i++) {
		size_t k = at[i];
		at[i] = sum;
		sum += k;
	}
	for (i = 0; i < n; i++)
		tmp[at[combclass(r[i])]++] = r[i];
	memcpy(r, tmp, n * sizeof *r);
}

/* Canonical composition of the canonically ordered s[0..n-1] in place:
 * each character joins the last starter when not blocked from it (nothing
 * between, or everything between of a lower nonzero class).  The new
 * length. */
static size_t
compose(uint32_t *s, size_t n)
{
	size_t i, j = 0, st = 0;
	int have = 0, last = 0;	/* a starter at s[st]; the class of s[j-1] */

	for (i = 0; i < n; i++) {
		uint32_t c = s[i], x;
		int k = combclass(c);
		if (have && (j - 1 == st || (last != 0 && last < k)) &&
		    (x = composite(s[st], c)) != 0) {
			s[st] = x;
			continue;
		}
		if (k == 0) {
			st = j;
			have = 1;
		}
		last = k;
		s[j++] = c;
	}
	return j;
}

uint32_t *
dprt_unorm(int form, const uint32_t *cp, size_t n, size_t *m)
{
	int compat = form == DPRT_NFKC || form == DPRT_NFKD;
	uint32_t buf[DMAX], *out, *p;
	size_t i, j, len = 0, run = 0, maxrun = 0;

	for (i = 0; i < n; i++) {
		size_t k = decompose(cp[i], compat, buf);
		if (len > SIZE_MAX / sizeof *out - k)
			return NULL;
		len += k;
	}
	out = malloc((len ? len : 1) * sizeof *out);
	if (!out)
		return NULL;
	for (i = 0, p = out; i < n; i++)
		p += decompose(cp[i], compat, p);

	/* canonical order; a long run of non-starters sorts through room
	 * past the end */
	for (i = 0; i <= len; i++) {
		if (i < len && combclass(out[i]) != 0) {
			run++;
			continue;
		}
		if (run > maxrun)
			maxrun = run;
		run = 0;
	}
	if (maxrun > SHORTRUN) {
		if (maxrun > SIZE_MAX / sizeof *out - len ||
		    !(p = realloc(out, (len + maxrun) * sizeof *out))) {
			free(out);
			return NULL;
		}
		out = p;
	}
	for (i = 0; i < len; i = j + 1) {
		while (i < len && combclass(out[i]) == 0)
			i++;
		for (j = i; j < len && combclass(out[j]) != 0; j++)
			;
		if (j - i > 1)
			sortrun(out + i, j - i, out + len);
	}
	if (form == DPRT_NFC || form == DPRT_NFKC)
		len = compose(out, len);
	*m = len;
	return out;
}
