/* regex.c: TAP tests of the runtime's regular expressions (runtime/regex.c):
 * each construct, the Split patterns of GPT-2, Llama-3, Qwen2, DeepSeek and
 * others on texts with contractions, case, whitespace runs, "\r\n", digits,
 * CJK and emoji, code points past U+10FFFF, subjects of a million code
 * points, and the errors of malformed or unsupported patterns.  A case's
 * matches are every find from the previous end (one past an empty match),
 * as start-end in code points; the expected spans are written by hand and
 * were confirmed with Oniguruma 6.9.8, which the tokenizers library uses. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dprtint.h"
#include "tap.h"

#define NELEM(a) (sizeof (a) / sizeof *(a))


/* s with control characters escaped, for a TAP line (one of two buffers). */
static const char *
show(const char *s)
{
	static char buf[2][512];
	static int k;
	char *b = buf[k ^= 1];
	size_t m = 0;

	for (; *s && m + 8 < sizeof buf[0]; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\n')
			m += (size_t)snprintf(b + m, 8, "\\n");
		else if (c == '\r')
			m += (size_t)snprintf(b + m, 8, "\\r");
		else if (c < 0x20 || c == 0x7F)
			m += (size_t)snprintf(b + m, 8, "\\x%02x", c);
		else
			b[m++] = (char)c;
	}
	b[m] = 0;
	return b;
}

/* The code points of UTF-8 s (valid) into cp; their count. */
static size_t
decode(const char *s, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = 0;

	while (*u) {
		uint32_t c = *u++;
		int k = c < 0x80 ? 0 : c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
		c &= 0x7Fu >> k;
		while (k-- > 0)
			c = c << 6 | (*u++ & 0x3F);
		cp[n++] = c;
	}
	return n;
}

/* Every match of re in cp[0..n-1] as "s-e s-e ..." into buf. */
static void
spans(const dprt_re *re, const uint32_t *cp, size_t n, char *buf, size_t bufn)
{
	size_t at = 0, st, m = 0;
	ptrdiff_t e;

	buf[0] = 0;
	while (at <= n && m + 48 < bufn) {
		if ((e = dprt_re_find(re, cp, n, at, &st)) < 0) {
			if (e == -2)
				snprintf(buf + m, bufn - m, "out of memory");
			break;
		}
		m += (size_t)snprintf(buf + m, bufn - m, "%s%zu-%td", m ? " " : "", st, e);
		at = (size_t)e == st ? st + 1 : (size_t)e;
	}
}

static const struct { const char *pat, *text, *want; } cases[] = {
	/* literals, alternation (the first that matches wins), groups */
	{"abc", "xabcabc", "1-4 4-7"},
	{"a|ab", "ab", "0-1"},
	{"ab|a", "ab", "0-2"},
	{"(ab|a)(bc|c)", "abc", "0-3"},
	{"(?:ab)+", "ababa", "0-4"},
	{"(?<name>a)b", "ab", "0-2"},
	{"a(?#comment)b", "ab", "0-2"},
	{"(?x) a b # spaces and comments are not the pattern's\n", "ab", "0-2"},
	{"a{", "a{", "0-2"},
	{"\\x{1F600}", "a\xF0\x9F\x98\x80", "1-2"},
	{"\\u00e9\\xC3\\xA9\\x{e9}", "ééé", "0-3"},	/* \xHH: a byte of UTF-8 */
	{"\\pL", "pL", "0-2"},		/* \p without { is p */
	{"\\n\\r\\t\\f\\v\\a\\e\\0", "\n\r\t\f\v\a\x1b", ""},
	{"\\n\\r\\t\\f\\v\\a\\e", "\n\r\t\f\v\a\x1b", "0-7"},
	{"\\.\\(\\[\\-\\'\\\\\\q", ".([-'\\q", "0-7"},
	{"\\x41\\o{102}\\cC", "AB\x03", "0-3"},
	{"▁", "a▁b", "1-2"},
	/* quantifiers: greedy, lazy, possessive, counted */
	{"a*", "baa", "0-0 1-3 3-3"},
	{"x*", "", "0-0"},
	{"a+?", "aaa", "0-1 1-2 2-3"},
	{"a*?b", "aab", "0-3"},
	{"a??b", "ab", "0-2"},
	{"a{2}", "aaaaa", "0-2 2-4"},
	{"a{2,}", "aaaaa", "0-5"},
	{"a{1,2}", "aaaaa", "0-2 2-4 4-5"},
	{"a{,2}", "aaa", "0-2 2-3 3-3"},
	{"a{1,2}?", "aaa", "0-1 1-2 2-3"},
	{"a{2}?", "aaa", "0-2 2-2 3-3"},	/* Ruby: (?:a{2})? */
	{"a{3,1}", "aaaa", "0-3 3-4"},		/* possessive {1,3} */
	{"a{3,1}a", "aaa", ""},
	{"a{1,2}+", "aaaaa", "0-5"},		/* (?:a{1,2})+ */
	{"a?+a", "aa", "0-2"},
	{"a?+a", "a", ""},
	{"a*+a", "aaa", ""},
	{"a++b", "aab", "0-3"},
	{"(?>a*)a", "aaa", ""},
	{"(?:ab){2,3}", "abababababab", "0-6 6-12"},
	{"(?:ab){2,3}?", "ababab", "0-4"},
	{"(?:a|b)*?c", "abbc", "0-4"},
	{"(?:a|)*b", "aab", "0-3"},
	{"(?:a|aa)+b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", ""},
	/* classes */
	{"[]a]", "]a", "0-1 1-2"},
	{"[^]a]", "]ab", "2-3"},
	{"[a-]", "-a", "0-1 1-2"},
	{"[-a]", "-a", "0-1 1-2"},
	{"[a-c-e]", "-bde", "0-1 1-2 3-4"},
	{"[\\x41-\\x43]+", "ABCD", "0-3"},
	{"[\\u0041-C]+", "ABCD", "0-3"},
	{"[À-ÖØ-öø-ƺ]+", "aÀÖ×Øƺƻ", "1-3 4-6"},
	{"[一-龥\\u3040-ゟ゠-ヿ]+", "漢字とカタカナ、abc", "0-7"},
	{"[a-z&&[^aeiou]]+", "hello", "0-1 2-4"},
	{"[\\w&&\\D]+", "ab12cd", "0-2 4-6"},
	{"[a[0-9]]+", "x1a2", "1-4"},
	{"[[:digit:]x]+", "a1x2b", "1-4"},
	{"[[:^space:]]+", "ab c", "0-2 3-4"},
	{"[\\b]", "a\bb", "1-2"},
	{"[^\\s\\p{L}\\p{N}]+", "a, b!!", "1-2 4-6"},
	/* escapes for sets and properties */
	{"\\p{L}+", "héllo wörld", "0-5 6-11"},
	{"\\p{Lu}\\p{Ll}+", "Hello WORLD World", "0-5 12-17"},
	{"\\P{L}+", "ab12 cd", "2-5"},
	{"\\p{^N}+", "ab12cd", "0-2 4-6"},
	{"\\p{Letter}\\p{Number}\\p{ Decimal_Number }", "a11", "0-3"},
	{"\\p{Lt}", "ǅa", "0-1"},
	{"\\p{M}", "e\xCC\x81", "1-2"},
	{"\\p{P}+", "a,.!?-b", "1-6"},
	{"\\p{S}", "a+$", "1-2 2-3"},
	{"\\p{Zs}", "a b\xC2\xA0" "c", "1-2 3-4"},
	{"\\p{Cn}", "a\xCD\xB8", "1-2"},
	{"\\d+", "a12٣4", "1-5"},
	{"\\D+", "a12b", "0-1 3-4"},
	{"\\w+", "foo_bar é²x!", "0-7 8-11"},	/* bare \w takes ² as Oniguruma does */
	{"[\\w]+", "é²x", "0-1 2-3"},
	{"\\W+", "a, b", "1-3"},
	{"\\w+|[^\\w\\s]+", "don't stop!", "0-3 3-4 4-5 6-10 10-11"},
	{"\\s+", "a \t\n\xE3\x80\x80" "b", "1-5"},
	{"\\S+", "ab cd", "0-2 3-5"},
	{"\\h+", "0xdeadBEEFg", "0-1 2-10"},
	{"\\H", "0g", "1-2"},
	/* . and anchors */
	{".", "a\nb", "0-1 2-3"},
	{"(?m:.)+", "a\nb", "0-3"},
	{"\\N\\O", "a\n", "0-2"},
	{"\\R", "\r\n\n\r", "0-2 2-3 3-4"},
	{"^a", "a\na", "0-1 2-3"},
	{"^", "a\n", "0-0"},
	{"a$", "a\na", "0-1 2-3"},
	{"\\Aa", "aa", "0-1"},
	{"a\\z", "aa\n", ""},
	{"a\\Z", "aa\n", "1-2"},
	{"\\bw", "w aw w", "0-1 5-6"},
	{"\\Bw", "w aw w", "3-4"},
	{"\\B", "", "0-0"},
	{"\\Ga", "aab", "0-1 1-2"},
	/* case */
	{"(?i)abc", "ABC aBc", "0-3 4-7"},
	{"(?i:a)b", "AB Ab ab", "3-5 6-8"},
	{"a(?i)b|c", "c aC ab", "2-4 5-7"},	/* (?i) takes the rest of the group, | too */
	{"(?i)a(?-i:b)", "AB Ab", "3-5"},
	{"(?i)k", "kK\xE2\x84\xAA", "0-1 1-2 2-3"},	/* U+212A KELVIN SIGN */
	{"(?i)s", "sSſ", "0-1 1-2 2-3"},
	{"(?i)[a-z]+", "Hello\xE2\x84\xAA", "0-6"},
	{"(?i)[^a-z]", "aZ1", "2-3"},
	{"(?i)[k]", "\xE2\x84\xAA", "0-1"},
	{"(?i)σ+", "Σσς", "0-3"},
	{"(?i)\\p{Lu}", "aB", "1-2"},		/* a bare property does not fold */
	{"(?i)[\\p{Lu}]", "aB", "0-1 1-2"},	/* a bracket does */
	{"(?i)'s", "'S 'ſ 'ß", "0-2 3-5"},
	/* lookarounds */
	{"a(?=b)", "ab ac", "0-1"},
	{"a(?!b)", "ab ac", "3-4"},
	{"(?<=a)b", "ab cb", "1-2"},
	{"(?<!a)b", "ab cb", "4-5"},
	{"(?<=ab|c)x", "abx cx bx", "2-3 5-6"},
	{"(?<=\\p{L}{2})\\d", "ab1 a2", "2-3"},
	{"(?<!^)x", "xx", "1-2"},
	{"\\s+(?!\\S)", "a   b", "1-3"},
	{"\\s+(?!\\S)|\\s+", "a   b  ", "1-3 3-4 5-7"},
	/* the tokenizers' patterns */
	{"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
	 "I'm  here,   you're 12345 ok!!   ",
	 "0-1 1-3 3-4 4-9 9-10 10-12 12-16 16-19 19-25 25-28 28-30 30-33"},
	{"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
	 "I'VE 中文😀\n\n x", "0-1 1-2 2-4 4-7 7-8 8-10 10-12"},
	{"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
	 "Hello, world!\r\n\r\n12345 I'VE  中文😀 x",
	 "0-5 5-6 6-12 12-17 17-20 20-22 22-24 24-27 27-28 28-31 31-32 32-34"},
	{"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
	 "a  \r\n\r\n  b\n", "0-1 1-7 7-8 8-10 10-11"},
	{"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
	 "x 1234567", "0-1 1-2 2-9"},
	{"\\p{N}{1,3}", "1234567 89", "0-3 3-6 6-7 8-10"},
	{"[\\r\\n]", "a\r\nb", "1-2 2-3"},
	{"\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕ\\u1F5F-\\u1F7DＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
	 "Hello wörld ƻ Ωmega", "0-5 5-11 13-19"},
	{"\\s?[!-/:-~！-／：-～‘-‟　-。]+", "a, b！！ c", "0-2 2-6 6-8"},
	{"[一-龥\\u3040-ゟ゠-ヿ]+", "漢字とカタカナです。", "0-9"},
	{"[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+", " he\xCC\x81llo, x", "0-7 8-10"},
	{"\\p{P}", "a-b", "1-2"},
	{"[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+", "HelloWORLDabc", "0-5 5-13"},
	{"\\d", "x9", "1-2"},
};

static const struct { const char *pat, *want; } errors[] = {
	{"a)", "regex 'a)': unmatched close parenthesis at offset 1"},
	{"(a", "regex '(a': end pattern with unmatched parenthesis at offset 0"},
	{"(?:a|(b)", "regex '(?:a|(b)': end pattern with unmatched parenthesis at offset 0"},
	{"*a", "regex '*a': target of repeat operator is not specified at offset 0"},
	{"a|+", "regex 'a|+': target of repeat operator is not specified at offset 2"},
	{"{2}", "regex '{2}': target of repeat operator is not specified at offset 0"},
	{"^*", "regex '^*': target of repeat operator is invalid at offset 1"},
	{"(?=a)+", "regex '(?=a)+': target of repeat operator is invalid at offset 5"},
	{"a{2,100001}", "regex 'a{2,100001}': too big number for repeat range at offset 1"},
	{"\\p{Foo}", "regex '\\p{Foo}': invalid or unsupported character property name {Foo} at offset 0"},
	{"x\\p{Han}", "regex 'x\\p{Han}': invalid or unsupported character property name {Han} at offset 1"},
	{"\\xE9", "regex '\\xE9': too short multibyte code string at offset 0"},
	{"\\p{L", "regex '\\p{L': invalid character property name at offset 0"},
	{"a\\", "regex 'a\\': end pattern at escape at offset 1"},
	{"[a", "regex '[a': premature end of char-class at offset 0"},
	{"[]", "regex '[]': empty char-class at offset 0"},
	{"[z-a]", "regex '[z-a]': empty range in char class at offset 1"},
	{"[\\w-z]", "regex '[\\w-z]': unmatched range specifier in char-class at offset 1"},
	{"[a-\\w]", "regex '[a-\\w]': char-class value at end of range at offset 1"},
	{"[[:alpha:]]", "regex '[[:alpha:]]': invalid or unsupported POSIX bracket type at offset 1"},
	{"(?<=a+)b", "regex '(?<=a+)b': look-behind of unbounded length is not supported at offset 0"},
	{"(a)\\1", "regex '(a)\\1': back-references are not supported at offset 3"},
	{"\\K", "regex '\\K': unsupported escape \\K at offset 0"},
	{"(?~a)", "regex '(?~a)': undefined or unsupported group option '~' at offset 0"},
	{"(?iq)", "regex '(?iq)': undefined or unsupported group option 'q' at offset 0"},
	{"(?", "regex '(?': end pattern in group at offset 0"},
	{"\\x{110000}", "regex '\\x{110000}': code point value past U+10FFFF at offset 0"},
	{"\\u12", "regex '\\u12': too short digits in \\u at offset 0"},
	{"a\xff", "regex 'a\xff': invalid UTF-8 at offset 1"},
	{"0123456789012345678901234567890123456789012345678901234567890123456789)",
	 "regex '01234567890123456789012345678901234567890123456789...': "
	 "unmatched close parenthesis at offset 70"},
};

static void
table(void)
{
	static uint32_t cp[256];
	char got[1024], err[256];
	size_t i, n;

	for (i = 0; i < NELEM(cases); i++) {
		dprt_re *re = dprt_re_new(cases[i].pat, err, sizeof err);
		if (!ok(re != NULL, "/%s/ compiles", show(cases[i].pat))) {
			printf("#   %s\n", err);
			continue;
		}
		n = decode(cases[i].text, cp);
		spans(re, cp, n, got, sizeof got);
		if (!ok(strcmp(got, cases[i].want) == 0, "/%s/ on \"%s\"", show(cases[i].pat),
		        show(cases[i].text)))
			printf("#   got '%s', want '%s'\n", got, cases[i].want);
		dprt_re_free(re);
	}
	for (i = 0; i < NELEM(errors); i++) {
		dprt_re *re = dprt_re_new(errors[i].pat, err, sizeof err);
		if (!ok(re == NULL && strcmp(err, errors[i].want) == 0, "error of /%s/", show(errors[i].pat)))
			printf("#   got '%s'\n", re ? "(compiled)" : err);
		dprt_re_free(re);
	}
}

/* Code points past U+10FFFF (stand-ins for bytes that are not UTF-8)
 * belong to no category: only inverted sets and . take them. */
static void
pastmax(void)
{
	static const struct { const char *pat, *want; } t[] = {
		{".", "0-1 1-2 2-3"}, {"\\P{L}", "1-2"}, {"[^a]", "1-2 2-3"}, {"\\S", "0-1 1-2 2-3"},
		{"\\W", "1-2"}, {"(?i)[^a]", "1-2 2-3"}, {"\\p{Cn}", ""}, {"\\p{C}", ""},
		{"\\p{Any}", "0-1 2-3"}, {"\\s", ""}, {"\\w", "0-1 2-3"}, {"[\\x{0}-\\x{10FFFF}]", "0-1 2-3"},
		{"(?i)\\x{10FFFF}", ""},
	};
	static const uint32_t cp[] = {'a', 0x110080, 'b'};
	char got[256], err[256];
	size_t i;

	for (i = 0; i < NELEM(t); i++) {
		dprt_re *re = dprt_re_new(t[i].pat, err, sizeof err);
		if (re == NULL) {
			ok(0, "/%s/ compiles: %s", t[i].pat, err);
			continue;
		}
		spans(re, cp, NELEM(cp), got, sizeof got);
		if (!ok(strcmp(got, t[i].want) == 0, "/%s/ on a, U+110080, b", t[i].pat))
			printf("#   got '%s', want '%s'\n", got, t[i].want);
		dprt_re_free(re);
	}
}

/* A million code points: one-code-point repeats keep one stack entry,
 * other loops grow the heap stack, not the C stack. */
static void
large(void)
{
	size_t n = 1000000, i, st;
	uint32_t *cp = malloc((n + 1) * sizeof *cp);
	char err[256];
	dprt_re *re;
	ptrdiff_t e;

	if (!ok(cp != NULL, "room for a million code points"))
		return;
	for (i = 0; i < n; i++)
		cp[i] = 'a' + (i & 1);
	re = dprt_re_new(" ?\\p{L}+", err, sizeof err);
	e = re ? dprt_re_find(re, cp, n, 0, &st) : -3;
	ok(e == (ptrdiff_t)n && st == 0, "\\p{L}+ over a million letters: one match (%td)", e);
	dprt_re_free(re);
	re = dprt_re_new("(?:ab)+$", err, sizeof err);
	e = re ? dprt_re_find(re, cp, n, 0, &st) : -3;
	ok(e == (ptrdiff_t)n && st == 0, "(?:ab)+$ over a million letters (%td)", e);
	dprt_re_free(re);
	for (i = 0; i < n; i++)
		cp[i] = ' ';
	cp[n] = 'x';
	re = dprt_re_new("\\s+(?!\\S)", err, sizeof err);
	e = re ? dprt_re_find(re, cp, n + 1, 0, &st) : -3;
	ok(e == (ptrdiff_t)n - 1 && st == 0, "\\s+(?!\\S) over a million spaces leaves the last (%td)", e);
	e = re ? dprt_re_find(re, cp, n + 1, n - 1, &st) : -3;
	ok(e == -1, "\\s+(?!\\S) from the last space: none (%td)", e);
	dprt_re_free(re);
	re = dprt_re_new("(?:\\s|\\s\\s)+y", err, sizeof err);
	e = re ? dprt_re_find(re, cp, 2000, 0, &st) : -3;
	ok(e == -1, "(?:\\s|\\s\\s)+y over 2000 spaces fails without trying every split (%td)", e);
	dprt_re_free(re);
	for (i = 0; i < 40; i++)
		cp[i] = 'a';
	cp[40] = 'c';
	re = dprt_re_new("(a*)*b", err, sizeof err);   /* exponential, and its loop can turn empty */
	e = re ? dprt_re_find(re, cp, 41, 0, &st) : 0;
	ok(e == -3, "(a*)*b over 40 a's gives up at the backtracking limit, as Oniguruma's (%td)", e);
	dprt_re_free(re);
	free(cp);
}

int
main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs("usage: test-regex\nRuns the tests of the regular-expression engine (runtime/regex.c), printing TAP.\n", stdout);
		return 0;
	}
	table();
	pastmax();
	large();
	printf("1..%d\n", ntest);
	return nfail != 0;
}
