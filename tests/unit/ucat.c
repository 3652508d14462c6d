/* ucat.c: TAP tests of the runtime's Unicode data (runtime/ucat.c over
 * the tables tools/gen_unicode.py makes): general categories, White_Space,
 * case folding, lowercase and the normalization forms on hand-picked code
 * points and strings, the expected values written from the Unicode 14.0
 * tables and UAX #15's examples. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dprtint.h"
#include "tap.h"

#define NELEM(a) (sizeof (a) / sizeof *(a))


static void
prcp(const char *what, const uint32_t *p, size_t n)
{
	size_t i;

	printf("#   %s:", what);
	for (i = 0; i < n; i++)
		printf(" U+%04X", (unsigned)p[i]);
	printf("\n");
}

/* Checks form of in[0..n-1] against want[0..wn-1]. */
static void
oknorm(int form, const uint32_t *in, size_t n, const uint32_t *want, size_t wn,
       const char *name)
{
	static const char *fname[] = {"NFC", "NFD", "NFKC", "NFKD"};
	size_t m = (size_t)-1;
	uint32_t *got = dprt_unorm(form, in, n, &m);

	if (!ok(got && m == wn && memcmp(got, want, wn * sizeof *want) == 0, "%s %s",
	        fname[form], name) && got) {
		prcp("got ", got, m);
		prcp("want", want, wn);
	}
	free(got);
}

#define NORM(form, name, in, want) \
	oknorm(form, in, NELEM(in), want, NELEM(want), name)

static void
categories(void)
{
	static const struct { uint32_t c; int cat; } t[] = {
		{'A', DPRT_UC_Lu}, {'z', DPRT_UC_Ll}, {0x1C5, DPRT_UC_Lt},
		{0x2B0, DPRT_UC_Lm}, {0x4E00, DPRT_UC_Lo}, {0x300, DPRT_UC_Mn},
		{0x903, DPRT_UC_Mc}, {0x20DD, DPRT_UC_Me}, {'7', DPRT_UC_Nd},
		{0x2160, DPRT_UC_Nl}, {0xBD, DPRT_UC_No}, {'_', DPRT_UC_Pc},
		{'-', DPRT_UC_Pd}, {'(', DPRT_UC_Ps}, {')', DPRT_UC_Pe},
		{0xAB, DPRT_UC_Pi}, {0xBB, DPRT_UC_Pf}, {'!', DPRT_UC_Po},
		{'+', DPRT_UC_Sm}, {'$', DPRT_UC_Sc}, {'^', DPRT_UC_Sk},
		{0xA9, DPRT_UC_So}, {0xA0, DPRT_UC_Zs}, {0x2028, DPRT_UC_Zl},
		{0x2029, DPRT_UC_Zp}, {0, DPRT_UC_Cc}, {0x200B, DPRT_UC_Cf},
		{0xD800, DPRT_UC_Cs}, {0xE000, DPRT_UC_Co}, {0x10FFFD, DPRT_UC_Co},
		{0x378, DPRT_UC_Cn}, {0x10FFFF, DPRT_UC_Cn}, {0x110000, DPRT_UC_Cn},
	};
	size_t i;

	for (i = 0; i < NELEM(t); i++)
		if (!ok(dprt_ucat(t[i].c) == t[i].cat, "category of U+%04X", (unsigned)t[i].c))
			printf("#   got %d, want %d\n", dprt_ucat(t[i].c), t[i].cat);
	ok(dprt_uletter(0x4E00) && !dprt_uletter('1') && !dprt_uletter(0x110041),
	   "letters");
	ok(dprt_unumber(0x660) && dprt_unumber(0x2160) && !dprt_unumber('a'), "numbers");
}

static void
spaces(void)
{
	static const uint32_t yes[] = {' ', '\t', '\r', 0x85, 0xA0, 0x1680, 0x200A, 0x3000};
	static const uint32_t no[] = {0x1C, 0x1F, 0x180E, 0x200B, 0xFEFF, 0x110020};
	size_t i;

	for (i = 0; i < NELEM(yes); i++)
		ok(dprt_uspace(yes[i]), "U+%04X is White_Space", (unsigned)yes[i]);
	for (i = 0; i < NELEM(no); i++)
		ok(!dprt_uspace(no[i]), "U+%04X is not White_Space", (unsigned)no[i]);
}

static void
cases(void)
{
	static const uint32_t fold[][2] = {
		{'A', 'a'}, {'a', 'a'}, {0x17F, 's'}, {0x212A, 'k'}, {0x1E9E, 0xDF},
		{0xDF, 0xDF}, {0x130, 0x130}, {0x3A3, 0x3C3}, {0x3C2, 0x3C3},
		{0xB5, 0x3BC}, {0x13F8, 0x13F0}, {0x1F88, 0x1F80}, {0x110041, 0x110041},
	};
	uint32_t lo[3];
	size_t i;
	int n;

	for (i = 0; i < NELEM(fold); i++)
		if (!ok(dprt_ufold(fold[i][0]) == fold[i][1], "fold U+%04X",
		        (unsigned)fold[i][0]))
			printf("#   got U+%04X\n", (unsigned)dprt_ufold(fold[i][0]));
	n = dprt_ulower(0x130, lo);
	ok(n == 2 && lo[0] == 0x69 && lo[1] == 0x307, "lower U+0130 is U+0069 U+0307");
	n = dprt_ulower('A', lo);
	ok(n == 1 && lo[0] == 'a', "lower A");
	n = dprt_ulower(0x3A3, lo);
	ok(n == 1 && lo[0] == 0x3C3, "lower U+03A3");
	n = dprt_ulower(0x1E9E, lo);
	ok(n == 1 && lo[0] == 0xDF, "lower U+1E9E");
	n = dprt_ulower(0x2C, lo);
	ok(n == 1 && lo[0] == 0x2C, "lower of a comma is itself");
}

static void
forms(void)
{
	static const uint32_t e_acute[] = {0x65, 0x301}, e9[] = {0xE9};
	static const uint32_t s_dots[] = {0x1E69}, s_dots_d[] = {0x73, 0x323, 0x307};
	static const uint32_t s_dots_rev[] = {0x73, 0x307, 0x323};
	static const uint32_t lvt[] = {0x1100, 0x1161, 0x11A8}, gag[] = {0xAC01};
	static const uint32_t ga_t[] = {0xAC00, 0x11A8};
	static const uint32_t l_mark_v[] = {0x1100, 0x301, 0x1161};
	static const uint32_t fi[] = {0xFB01}, f_i[] = {0x66, 0x69};
	static const uint32_t qa[] = {0x958}, ka_nukta[] = {0x915, 0x93C};
	static const uint32_t angstrom[] = {0x212B}, a_ring[] = {0xC5};
	static const uint32_t ohm[] = {0x2126}, omega[] = {0x3A9};
	static const uint32_t blocked[] = {0x61, 0x308, 0x301, 0x323};
	static const uint32_t blocked_c[] = {0x1EA1, 0x308, 0x301};
	static const uint32_t long_s[] = {0x1E9B, 0x323};
	static const uint32_t long_s_d[] = {0x17F, 0x323, 0x307};
	static const uint32_t a_marks[] = {0x41, 0x328, 0x301, 0x323};
	static const uint32_t a_marks_c[] = {0x104, 0x323, 0x301};
	static const uint32_t a_ring_acute[] = {0x41, 0x30A, 0x301}, a_ring_acute_c[] = {0x1FA};
	static const uint32_t oo[] = {0xB47, 0xB3E}, oo_c[] = {0xB4B};
	static const uint32_t dialytika[] = {0x344}, dialytika_d[] = {0x308, 0x301};
	static const uint32_t sallallahou[] = {0xFDFA};
	static const uint32_t sallallahou_kd[] = {
		0x635, 0x644, 0x649, 0x20, 0x627, 0x644, 0x644, 0x647, 0x20,
		0x639, 0x644, 0x64A, 0x647, 0x20, 0x648, 0x633, 0x644, 0x645,
	};
	static const uint32_t past[] = {0x301, 0x110000, 0x300};
	static const uint32_t none[] = {0};
	size_t m = (size_t)-1;
	uint32_t *p;

	NORM(DPRT_NFC, "e U+0301 is U+00E9", e_acute, e9);
	NORM(DPRT_NFD, "U+00E9", e9, e_acute);
	NORM(DPRT_NFD, "U+1E69", s_dots, s_dots_d);
	NORM(DPRT_NFC, "s U+0307 U+0323 is U+1E69", s_dots_rev, s_dots);
	NORM(DPRT_NFC, "Hangul L V T", lvt, gag);
	NORM(DPRT_NFD, "Hangul U+AC01", gag, lvt);
	NORM(DPRT_NFC, "Hangul LV T", ga_t, gag);
	NORM(DPRT_NFC, "Hangul L mark V is blocked", l_mark_v, l_mark_v);
	NORM(DPRT_NFKC, "U+FB01", fi, f_i);
	NORM(DPRT_NFC, "U+FB01 stays", fi, fi);
	NORM(DPRT_NFC, "U+0958 is excluded", qa, ka_nukta);
	NORM(DPRT_NFC, "U+0915 U+093C stays", ka_nukta, ka_nukta);
	NORM(DPRT_NFC, "singleton U+212B", angstrom, a_ring);
	NORM(DPRT_NFC, "singleton U+2126", ohm, omega);
	NORM(DPRT_NFC, "a U+0308 U+0301 U+0323: blocked", blocked, blocked_c);
	NORM(DPRT_NFC, "U+1E9B U+0323", long_s, long_s);
	NORM(DPRT_NFD, "U+1E9B U+0323", long_s, long_s_d);
	NORM(DPRT_NFKC, "U+1E9B U+0323", long_s, s_dots);
	NORM(DPRT_NFC, "A U+0328 U+0301 U+0323", a_marks, a_marks_c);
	NORM(DPRT_NFC, "A U+030A U+0301", a_ring_acute, a_ring_acute_c);
	NORM(DPRT_NFC, "two starters U+0B47 U+0B3E", oo, oo_c);
	NORM(DPRT_NFC, "non-starter decomposition U+0344", dialytika, dialytika_d);
	NORM(DPRT_NFKD, "U+FDFA is 18 code points", sallallahou, sallallahou_kd);
	NORM(DPRT_NFC, "past U+10FFFF as it is", past, past);
	NORM(DPRT_NFKD, "past U+10FFFF as it is", past, past);
	p = dprt_unorm(DPRT_NFC, none, 0, &m);
	ok(p && m == 0, "NFC of nothing");
	free(p);
}

int
main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs("usage: test-ucat\nRuns the tests of the Unicode data (runtime/ucat.c), printing TAP.\n", stdout);
		return 0;
	}
	categories();
	spaces();
	cases();
	forms();
	printf("1..%d\n", ntest);
	return nfail != 0;
}
