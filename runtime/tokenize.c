/* tokenize.c: BPE tokenizers read from a Hugging Face tokenizer.json and
 * run as the `tokenizers` library runs them:
 * - added tokens, leftmost and longest, on the text (or on the normalized
 *   text, for those marked normalized), with lstrip, rstrip, single_word;
 * - normalizers: NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace, Strip,
 *   StripAccents, and a Sequence of them;
 * - pre-tokenizers: Split (a regex, regex.c, or a string; every behavior,
 *   invert), ByteLevel, Metaspace, Digits, Punctuation, Whitespace,
 *   WhitespaceSplit, CharDelimiterSplit, BertPreTokenizer, a Sequence;
 * - the BPE model: merges by rank, over bytes (ByteLevel) or characters,
 *   with byte fallback (<0x41>), <unk> (fused or not), word affixes and
 *   ignore_merges;
 * - post-processors: TemplateProcessing, ByteLevel, RobertaProcessing,
 *   BertProcessing, a Sequence;
 * - decoders: ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip,
 *   BPEDecoder, a Sequence (none: the tokens joined by spaces).
 * The same ids and text as the library (tests/tokenize.t); what else a
 * file holds is refused by name. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "dprtint.h"

/* A byte that starts no UTF-8 character stands for itself as RAW + byte:
 * no letter, number or space, unchanged by normalization. */
#define RAW 0x110000u

typedef struct Tok {
	char *s;	/* the token's string as the file writes it (UTF-8) */
	int n;
	int added, special;
} Tok;

typedef struct Slot {	/* the vocabulary's hash table: string -> id */
	int id;		/* -1: empty */
} Slot;

typedef struct Merge {	/* the merges' hash table: (left, right) -> rank, result */
	int64_t key;	/* left << 32 | right, or -1: empty */
	int rank, id;
} Merge;

/* What a Split, a Replace or an added token finds: a regex, a string (its
 * code points), or each code point of a class alone. */
typedef struct Pat {
	dprt_re *re;
	uint32_t *lit;
	size_t nlit;
	int (*cls)(uint32_t);
} Pat;

typedef struct Added {
	int id;
	uint32_t *cp;	/* the content (normalized, when normalized) */
	size_t n;
	int normalized, lstrip, rstrip, single;
} Added;

enum { NM_NFC, NM_NFD, NM_NFKC, NM_NFKD, NM_LOWER, NM_PREPEND, NM_REPLACE, NM_STRIP,
       NM_STRIPACC, NM_BERTCLEAN, NM_CHINESE, NM_STRIPMN };
typedef struct Norm {
	int kind;
	Pat pat;	/* Replace's pattern */
	uint32_t *s;	/* Prepend's string, Replace's content */
	size_t ns;
	int left, right;	/* Strip's sides */
} Norm;

enum { BH_REMOVED, BH_ISOLATED, BH_PREV, BH_NEXT, BH_CONTIG };
enum { PT_SPLIT, PT_BYTELEVEL, PT_METASPACE };
enum { PS_ALWAYS, PS_FIRST, PS_NEVER };
typedef struct Pre {
	int kind;
	Pat pat;	/* Split's */
	int behavior, invert;
	int prefix, regex;	/* ByteLevel's add_prefix_space, use_regex */
	uint32_t repl;	/* Metaspace's replacement */
	int scheme, split;
} Pre;

enum { DC_BYTELEVEL, DC_METASPACE, DC_REPLACE, DC_BYTEFALLBACK, DC_FUSE, DC_STRIP, DC_BPE,
       DC_WORDPIECE };
typedef struct Dec {
	int kind;
	char *a, *b;	/* Replace's string and content; BPEDecoder's suffix in a */
	uint32_t repl;	/* Metaspace's replacement, Strip's content */
	int scheme;
	int start, stop;	/* Strip's counts */
} Dec;

struct dprt_tokenizer {
	Tok *tok;
	int ntok;
	Slot *vocab;
	size_t vcap;	/* a power of 2 */
	Merge *merge;
	size_t mcap;
	Added *added;	/* longest content first */
	int nadded;
	Norm norm[16];
	int nnorm;
	Pre pre[16];
	int npre;
	Dec dec[16];
	int ndec, hasdec;
	int wordpiece;	/* the model: WordPiece, else BPE */
	int maxchars;	/* WordPiece's max_input_chars_per_word */
	int ignore_merges, byte_fallback, fuse_unk, unk;	/* unk: an id or -1 */
	char *prefix, *suffix;	/* continuing_subword_prefix, end_of_word_suffix, or NULL */
	int byteid[256];	/* <0xHH>'s ids, or -1 */
	int64_t before[8], after[8];	/* the post-processor's ids around $A */
	int nbefore, nafter;
	uint16_t byte2cp[256];	/* the byte-level alphabet */
	int16_t cp2byte[324];
	Pat gpt2;	/* ByteLevel's own regex */
};

static const char gpt2re[] =
	"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

static uint64_t
fnv(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

/* The id of the token whose string is s[0..n-1], or -1. */
static int
lookup(const dprt_tokenizer *t, const char *s, size_t n)
{
	size_t i = fnv(s, n) & (t->vcap - 1);

	for (; t->vocab[i].id >= 0; i = (i + 1) & (t->vcap - 1)) {
		const Tok *k = &t->tok[t->vocab[i].id];
		if ((size_t)k->n == n && memcmp(k->s, s, n) == 0)
			return t->vocab[i].id;
	}
	return -1;
}

static void
insert(dprt_tokenizer *t, int id)
{
	size_t i = fnv(t->tok[id].s, (size_t)t->tok[id].n) & (t->vcap - 1);

	while (t->vocab[i].id >= 0) {
		if (t->tok[t->vocab[i].id].n == t->tok[id].n &&
		    memcmp(t->tok[t->vocab[i].id].s, t->tok[id].s, (size_t)t->tok[id].n) == 0)
			return;   /* the first id keeps the string */
		i = (i + 1) & (t->vcap - 1);
	}
	t->vocab[i].id = id;
}

static Merge *
findmerge(const dprt_tokenizer *t, int a, int b)
{
	int64_t key = (int64_t)a << 32 | (uint32_t)b;
	size_t i = (size_t)(((uint64_t)key * 0x9e3779b97f4a7c15ull) >> 20) & (t->mcap - 1);

	for (; t->merge[i].key != -1; i = (i + 1) & (t->mcap - 1))
		if (t->merge[i].key == key)
			return &t->merge[i];
	return &t->merge[i];
}

/* Decodes one UTF-8 code point at s[0..n-1] into *cp; returns its length.
 * A byte that starts no valid sequence is taken alone, as RAW + byte. */
static int
utf8(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c = s[0];
	int len, k;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? (c <= 0xef ? 3 : 0) : c >= 0xc2 ? 2 : 0;
	if (len == 0 || (size_t)len > n)
		goto bad;
	c &= 0x3f >> (len - 1);
	for (k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			goto bad;
		c = c << 6 | (s[k] & 0x3f);
	}
	if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (len == 4 && (c < 0x10000 || c > 0x10ffff)))
		goto bad;
	*cp = c;
	return len;
bad:
	*cp = RAW + s[0];
	return 1;
}

/* Encodes c into b[0..3] (RAW + byte: the byte); returns the length. */
static int
enc(uint32_t c, char *b)
{
	if (c >= RAW) {
		b[0] = (char)(c - RAW);
		return 1;
	}
	if (c < 0x80) {
		b[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | (c >> 6 & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	b[0] = (char)(0xf0 | c >> 18);
	b[1] = (char)(0x80 | (c >> 12 & 0x3f));
	b[2] = (char)(0x80 | (c >> 6 & 0x3f));
	b[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* The code points of s[0..n-1], malloc'd (one more allocated), their
 * count in *m; NULL when out of memory. */
static uint32_t *
decode(const char *s, size_t n, size_t *m)
{
	uint32_t *cp = malloc((n + 1) * sizeof *cp);
	size_t i, len;

	*m = 0;
	if (cp == NULL)
		return NULL;
	for (i = 0; i < n; i += len)
		len = (size_t)utf8((const unsigned char *)s + i, n - i, &cp[(*m)++]);
	return cp;
}

/* Character classes of the pre-tokenizers (Rust's char methods). */
static int
isnum(uint32_t c)
{
	return c < RAW && dprt_unumber(c);
}

static int
isws(uint32_t c)
{
	return c < RAW && dprt_uspace(c);
}

static int
ispunc(uint32_t c)
{
	int k;

	if (c < 0x80)
		return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
		       (c >= '{' && c <= '~');
	k = c < RAW ? dprt_ucat(c) : DPRT_UC_Cn;
	return k >= DPRT_UC_Pc && k <= DPRT_UC_Po;
}

/* ---- encoding ---- */

/* Code points held while a text is encoded; pieces are ranges of it. */
typedef struct Buf {
	uint32_t *cp;
	size_t n, cap;
} Buf;

typedef struct Piece {
	size_t at, n;
	int at0;	/* it starts the whole text (Metaspace's prepend_scheme first) */
} Piece;

typedef struct Pieces {
	Piece *p;
	size_t n, cap;
} Pieces;

typedef struct Seg {	/* a stretch of a piece: a match of the pattern or not */
	size_t s, e;
	int m;
} Seg;

/* Appends ids, counting past cap. */
typedef struct Out {
	int64_t *ids;
	int64_t cap, n;
} Out;

static void
emit(Out *o, int64_t id)
{
	if (o->n < o->cap)
		o->ids[o->n] = id;
	o->n++;
}

static int
grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if ((q = realloc(*p, c * size)) == NULL)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

/* Appends c[0..n-1] to b (c outside it); their offset, or (size_t)-1 when
 * out of memory. */
static size_t
bufadd(Buf *b, const uint32_t *c, size_t n)
{
	size_t at = b->n;

	if (n > PTRDIFF_MAX / 8 || grow((void **)&b->cp, &b->cap, b->n + n + 1, sizeof *b->cp) != 0)
		return (size_t)-1;
	if (n > 0)
		memcpy(b->cp + at, c, n * sizeof *c);
	b->n += n;
	return at;
}

static int
addpiece(Pieces *ps, size_t at, size_t n, int at0)
{
	if (n == 0)
		return 0;   /* empty pieces are dropped, as tokenizers drops them */
	if (grow((void **)&ps->p, &ps->cap, ps->n + 1, sizeof *ps->p) != 0)
		return -1;
	ps->p[ps->n++] = (Piece){at, n, at0};
	return 0;
}

static int
addseg(Seg **sg, size_t *n, size_t *cap, size_t s, size_t e, int m)
{
	if (grow((void **)sg, cap, *n + 1, sizeof **sg) != 0)
		return -1;
	(*sg)[(*n)++] = (Seg){s, e, m};
	return 0;
}

/* The next match of p in x[0..n-1] at or after i: its start in *s, its
 * end returned; -1 when none, -2 when out of memory. */
static ptrdiff_t
patfind(const Pat *p, const uint32_t *x, size_t n, size_t i, size_t *s)
{
	if (p->re)
		return dprt_re_find(p->re, x, n, i, s);
	if (p->cls) {
		for (; i < n; i++)
			if (p->cls(x[i])) {
				*s = i;
				return (ptrdiff_t)i + 1;
			}
		return -1;
	}
	if (p->nlit == 0)
		return -1;
	for (; i + p->nlit <= n; i++)
		if (memcmp(x + i, p->lit, p->nlit * sizeof *x) == 0) {
			*s = i;
			return (ptrdiff_t)(i + p->nlit);
		}
	return -1;
}

/* x[0..n-1] as matches of p and the stretches between them (tokenizers'
 * find_matches), then merged by a Split behavior: into *out, their count
 * returned; -1 when out of memory, -3 when the regex gives up (past its
 * backtracking limit). */
static ptrdiff_t
segments(const Pat *p, int behavior, int invert, const uint32_t *x, size_t n, Seg **out)
{
	Seg *sg = NULL, *r = NULL;
	size_t ns = 0, cap = 0, nr = 0, rcap = 0, prev = 0, i = 0, s, k;
	ptrdiff_t e, rc = -1;
	int pm = 0;

	*out = NULL;
	while (i <= n && (e = patfind(p, x, n, i, &s)) >= 0) {
		if ((s > prev && addseg(&sg, &ns, &cap, prev, s, 0) != 0) ||
		    addseg(&sg, &ns, &cap, s, (size_t)e, 1) != 0)
			goto oom;
		prev = (size_t)e;
		i = (size_t)e > s ? (size_t)e : s + 1;   /* past an empty match, one code point on */
	}
	if (i <= n && e < -1) {
		rc = e == -3 ? -3 : -1;
		goto oom;
	}
	if ((prev < n || n == 0) && addseg(&sg, &ns, &cap, prev, n, 0) != 0)
		goto oom;
	for (k = 0; k < ns && invert; k++)
		sg[k].m = !sg[k].m;
	if (behavior == BH_NEXT) {   /* from the end: a match joins the stretch after it */
		for (k = ns; k-- > 0;) {
			if (sg[k].m && !pm && nr > 0)
				r[nr - 1].s = sg[k].s;
			else if (addseg(&r, &nr, &rcap, sg[k].s, sg[k].e, sg[k].m) != 0)
				goto oom;
			pm = sg[k].m;
		}
		for (k = 0; k < nr / 2; k++) {
			Seg x1 = r[k];
			r[k] = r[nr - 1 - k];
			r[nr - 1 - k] = x1;
		}
	} else {
		for (k = 0; k < ns; k++) {
			int join = behavior == BH_PREV ? sg[k].m && !pm :
			           behavior == BH_CONTIG ? sg[k].m == pm : 0;
			pm = sg[k].m;
			if (behavior == BH_REMOVED && sg[k].m)
				continue;
			if (join && nr > 0)
				r[nr - 1].e = sg[k].e;
			else if (addseg(&r, &nr, &rcap, sg[k].s, sg[k].e, sg[k].m) != 0)
				goto oom;
		}
	}
	free(sg);
	*out = r;
	return (ptrdiff_t)nr;
oom:
	free(sg);
	free(r);
	return rc;
}

/* Splits piece pc of b by p into out: 0, or as segments fails. */
static int
splitpiece(const Pat *p, int behavior, int invert, const Buf *b, const Piece *pc, Pieces *out)
{
	Seg *sg;
	ptrdiff_t ns = segments(p, behavior, invert, b->cp + pc->at, pc->n, &sg), k;

	if (ns < 0)
		return (int)ns;
	for (k = 0; k < ns; k++)
		if (addpiece(out, pc->at + sg[k].s, sg[k].e - sg[k].s, pc->at0 && sg[k].s == 0) != 0) {
			free(sg);
			return -1;
		}
	free(sg);
	return 0;
}

/* x[0..*n-1] (malloc'd, taken) through the normalizers: the result
 * (malloc'd), its length in *n; NULL when out of memory (*why -1) or when
 * a Replace's regex gives up (*why -3). */
static uint32_t *
normalize(const dprt_tokenizer *t, uint32_t *x, size_t *n, int *why)
{
	int k;

	*why = -1;

	for (k = 0; k < t->nnorm && x; k++) {
		const Norm *nm = &t->norm[k];
		Buf b = {0};
		size_t i, m;
		uint32_t *y;
		switch (nm->kind) {
		case NM_NFC:
		case NM_NFD:
		case NM_NFKC:
		case NM_NFKD:
			y = dprt_unorm(nm->kind == NM_NFC ? DPRT_NFC : nm->kind == NM_NFD ? DPRT_NFD :
			               nm->kind == NM_NFKC ? DPRT_NFKC : DPRT_NFKD, x, *n, &m);
			free(x);
			x = y;
			*n = m;
			continue;
		case NM_LOWER:
			for (i = 0; i < *n; i++) {
				uint32_t l[3];
				int c = 1;
				/* each character alone, as tokenizers' lowercase: no final
				 * sigma (Rust's str::to_lowercase would give one) */
				if (x[i] < RAW)
					c = dprt_ulower(x[i], l);
				else
					l[0] = x[i];
				if (bufadd(&b, l, (size_t)c) == (size_t)-1)
					goto oom;
			}
			break;
		case NM_PREPEND:
			if (*n == 0)
				continue;
			if (bufadd(&b, nm->s, nm->ns) == (size_t)-1 || bufadd(&b, x, *n) == (size_t)-1)
				goto oom;
			break;
		case NM_REPLACE:
			for (i = m = 0; m <= *n;) {   /* i: copied up to; m: searched from */
				size_t at;
				ptrdiff_t e = patfind(&nm->pat, x, *n, m, &at);
				if (e < -1) {
					*why = e == -3 ? -3 : -1;
					goto oom;
				}
				if (e < 0)
					break;
				if ((size_t)e == at) {   /* an empty match replaces nothing */
					m = at + 1;
					continue;
				}
				if (bufadd(&b, x + i, at - i) == (size_t)-1 ||
				    bufadd(&b, nm->s, nm->ns) == (size_t)-1)
					goto oom;
				i = m = (size_t)e;
			}
			if (bufadd(&b, x + i, *n - i) == (size_t)-1)
				goto oom;
			break;
		case NM_STRIP:
			for (i = 0; nm->left && i < *n && isws(x[i]); i++)
				;
			for (m = *n; nm->right && m > i && isws(x[m - 1]); m--)
				;
			if (bufadd(&b, x + i, m - i) == (size_t)-1)
				goto oom;
			break;
		case NM_STRIPACC:   /* marks (M), or BertNormalizer's nonspacing ones (Mn) */
		case NM_STRIPMN:
			for (i = 0; i < *n; i++) {
				int c = x[i] < RAW ? dprt_ucat(x[i]) : DPRT_UC_Cn;
				if (nm->kind == NM_STRIPMN ? c != DPRT_UC_Mn : c < DPRT_UC_Mn || c > DPRT_UC_Me)
					if (bufadd(&b, x + i, 1) == (size_t)-1)
						goto oom;
			}
			break;
		case NM_BERTCLEAN:   /* NUL, U+FFFD and other controls (C) go, spaces become ' ' */
			for (i = 0; i < *n; i++) {
				uint32_t c = x[i];
				int k1 = c < RAW ? dprt_ucat(c) : DPRT_UC_Cn;
				if (c == 0 || c == 0xfffd || (c != '\t' && c != '\n' && c != '\r' &&
				    (k1 == DPRT_UC_Cn || k1 >= DPRT_UC_Cc)))
					continue;
				c = isws(c) ? ' ' : c;
				if (bufadd(&b, &c, 1) == (size_t)-1)
					goto oom;
			}
			break;
		case NM_CHINESE:   /* a space on each side of a CJK ideograph */
			for (i = 0; i < *n; i++) {
				static const uint32_t sp = ' ';
				uint32_t c = x[i];
				int cjk = (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) ||
				          (c >= 0x20000 && c <= 0x2a6df) || (c >= 0x2a700 && c <= 0x2b73f) ||
				          (c >= 0x2b740 && c <= 0x2b81f) || (c >= 0x2b920 && c <= 0x2ceaf) ||
				          (c >= 0xf900 && c <= 0xfaff) || (c >= 0x2f800 && c <= 0x2fa1f);
				if ((cjk && bufadd(&b, &sp, 1) == (size_t)-1) || bufadd(&b, &c, 1) == (size_t)-1 ||
				    (cjk && bufadd(&b, &sp, 1) == (size_t)-1))
					goto oom;
			}
			break;
		}
		if (b.cp == NULL && bufadd(&b, x, 0) == (size_t)-1)
			goto oom;
		free(x);
		x = b.cp;
		*n = b.n;
		continue;
oom:
		free(b.cp);
		free(x);
		return NULL;
	}
	return x;
}

/* The byte-level alphabet's code points of piece pc's UTF-8, appended. */
static int
bytelevel(const dprt_tokenizer *t, Buf *b, const Piece *pc, Pieces *out)
{
	size_t at = b->n, i;
	int k, len;
	char u[4];

	for (i = 0; i < pc->n; i++) {
		len = enc(b->cp[pc->at + i], u);
		for (k = 0; k < len; k++) {
			uint32_t c = t->byte2cp[(unsigned char)u[k]];
			if (bufadd(b, &c, 1) == (size_t)-1)
				return -1;
		}
	}
	return addpiece(out, at, b->n - at, pc->at0);
}

/* The pre-tokenizers, one after the other, over the pieces *ps: 0, -1
 * when out of memory, -3 when a regex gives up. */
static int
pretokenize(const dprt_tokenizer *t, Buf *b, Pieces *ps)
{
	int k, rc = 0;

	for (k = 0; k < t->npre; k++) {
		const Pre *p = &t->pre[k];
		Pieces out = {0};
		size_t i, j;
		for (i = 0; i < ps->n; i++) {
			Piece pc = ps->p[i];
			if (p->kind == PT_SPLIT) {
				if ((rc = splitpiece(&p->pat, p->behavior, p->invert, b, &pc, &out)) != 0)
					goto oom;
			} else if (p->kind == PT_BYTELEVEL) {
				Pieces sub = {0};
				if (p->prefix && b->cp[pc.at] != ' ') {
					uint32_t sp = ' ';
					size_t at = bufadd(b, &sp, 1);
					if (at == (size_t)-1 || grow((void **)&b->cp, &b->cap, b->n + pc.n + 1,
					                             sizeof *b->cp) != 0)
						goto oom;
					memcpy(b->cp + b->n, b->cp + pc.at, pc.n * sizeof *b->cp);
					b->n += pc.n;
					pc.at = at;
					pc.n++;
				}
				if (p->regex ? (rc = splitpiece(&t->gpt2, BH_ISOLATED, 0, b, &pc, &sub)) != 0 :
				    addpiece(&sub, pc.at, pc.n, pc.at0) != 0) {
					free(sub.p);
					goto oom;
				}
				for (j = 0; j < sub.n; j++)
					if (bytelevel(t, b, &sub.p[j], &out) != 0) {
						free(sub.p);
						goto oom;
					}
				free(sub.p);
			} else {   /* Metaspace */
				size_t at = b->n;
				uint32_t c = p->repl;
				int pre = p->scheme == PS_ALWAYS || (p->scheme == PS_FIRST && pc.at0);
				if (b->cp[pc.at] == ' ' || b->cp[pc.at] == p->repl)
					pre = 0;
				if (pre && bufadd(b, &c, 1) == (size_t)-1)
					goto oom;
				for (j = 0; j < pc.n; j++) {
					c = b->cp[pc.at + j] == ' ' ? p->repl : b->cp[pc.at + j];
					if (bufadd(b, &c, 1) == (size_t)-1)
						goto oom;
				}
				pc.at = at;
				pc.n = b->n - at;
				if (p->split) {
					Pat sp = {NULL, &c, 1, NULL};
					c = p->repl;
					if (splitpiece(&sp, BH_NEXT, 0, b, &pc, &out) != 0)
						goto oom;
				} else if (addpiece(&out, pc.at, pc.n, pc.at0) != 0)
					goto oom;
			}
		}
		free(ps->p);
		*ps = out;
		continue;
oom:
		free(out.p);
		return rc == -3 ? -3 : -1;
	}
	return 0;
}

typedef struct Sym {
	int id, prev, next;
} Sym;

typedef struct Cand {	/* a merge to try: the pair at pos */
	int rank, pos, id;
} Cand;

static int
before(const Cand *a, const Cand *b)
{
	return a->rank < b->rank || (a->rank == b->rank && a->pos < b->pos);
}

static int
hpush(Cand **h, size_t *n, size_t *cap, Cand c)
{
	size_t i;

	if (grow((void **)h, cap, *n + 1, sizeof **h) != 0)
		return -1;
	for (i = (*n)++; i > 0 && before(&c, &(*h)[(i - 1) / 2]); i = (i - 1) / 2)
		(*h)[i] = (*h)[(i - 1) / 2];
	(*h)[i] = c;
	return 0;
}

static Cand
hpop(Cand *h, size_t *n)
{
	Cand top = h[0], last = h[--*n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < *n) {
		if (c + 1 < *n && before(&h[c + 1], &h[c]))
			c++;
		if (!before(&h[c], &last))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = last;
	return top;
}

static int
pushpair(const dprt_tokenizer *t, const Sym *s, int pos, Cand **h, size_t *n, size_t *cap)
{
	const Merge *g;

	if (pos < 0 || s[pos].next < 0)
		return 0;
	g = findmerge(t, s[pos].id, s[s[pos].next].id);
	return g->key == -1 ? 0 : hpush(h, n, cap, (Cand){g->rank, pos, g->id});
}

static int
addsym(Sym **s, size_t *n, size_t *cap, int id)
{
	if (grow((void **)s, cap, *n + 1, sizeof **s) != 0)
		return -1;
	(*s)[*n] = (Sym){id, (int)*n - 1, -1};
	if (*n > 0)
		(*s)[*n - 1].next = (int)*n;
	(*n)++;
	return 0;
}

/* The BPE model on one piece x[0..n-1]: the lowest-ranked pair first, the
 * leftmost among equals (tokenizers' merge queue). */
static int
bpe(const dprt_tokenizer *t, const uint32_t *x, size_t n, Out *o)
{
	size_t np = t->prefix ? strlen(t->prefix) : 0, ns = t->suffix ? strlen(t->suffix) : 0;
	size_t i, m = 0, cap = 0, nh = 0, hcap = 0, len = 0, bcap = 0;
	char *s = NULL;
	Sym *sym = NULL;
	Cand *h = NULL;
	int id, unk = 0, rc = -1, k;

	if (t->ignore_merges) {
		if (grow((void **)&s, &bcap, 4 * n + 1, 1) != 0)
			goto done;
		for (i = 0; i < n; i++)
			len += (size_t)enc(x[i], s + len);
		if ((id = lookup(t, s, len)) >= 0) {
			emit(o, id);
			rc = 0;
			goto done;
		}
	}
	for (i = 0; i < n; i++) {
		int pre = np && i > 0, suf = ns && i == n - 1;
		if (grow((void **)&s, &bcap, np + ns + 5, 1) != 0)
			goto done;
		len = 0;
		if (pre)
			memcpy(s, t->prefix, np), len = np;
		len += (size_t)enc(x[i], s + len);
		if (suf)
			memcpy(s + len, t->suffix, ns), len += ns;
		if ((id = lookup(t, s, len)) >= 0) {
			if (unk && addsym(&sym, &m, &cap, t->unk) != 0)
				goto done;
			unk = 0;
			if (addsym(&sym, &m, &cap, id) != 0)
				goto done;
			continue;
		}
		if (t->byte_fallback) {
			for (k = 0; (size_t)k < len && t->byteid[(unsigned char)s[k]] >= 0; k++)
				;
			if ((size_t)k == len) {
				if (unk && addsym(&sym, &m, &cap, t->unk) != 0)
					goto done;
				unk = 0;
				for (k = 0; (size_t)k < len; k++)
					if (addsym(&sym, &m, &cap, t->byteid[(unsigned char)s[k]]) != 0)
						goto done;
				continue;
			}
		}
		if (t->unk >= 0) {   /* dropped without an <unk>, as tokenizers drops it */
			if (unk && !t->fuse_unk && addsym(&sym, &m, &cap, t->unk) != 0)
				goto done;
			unk = 1;
		}
	}
	if (unk && addsym(&sym, &m, &cap, t->unk) != 0)
		goto done;
	for (i = 0; i + 1 < m; i++)
		if (pushpair(t, sym, (int)i, &h, &nh, &hcap) != 0)
			goto done;
	while (nh > 0) {
		Cand c = hpop(h, &nh);
		int nx = sym[c.pos].next;
		const Merge *g;
		if (sym[c.pos].id < 0 || nx < 0)
			continue;
		g = findmerge(t, sym[c.pos].id, sym[nx].id);
		if (g->key == -1 || g->id != c.id)
			continue;   /* out of date */
		sym[c.pos].id = c.id;
		sym[c.pos].next = sym[nx].next;
		if (sym[nx].next >= 0)
			sym[sym[nx].next].prev = c.pos;
		sym[nx].id = -1;
		if (pushpair(t, sym, sym[c.pos].prev, &h, &nh, &hcap) != 0 ||
		    pushpair(t, sym, c.pos, &h, &nh, &hcap) != 0)
			goto done;
	}
	for (k = m ? 0 : -1; k >= 0; k = sym[k].next)
		emit(o, sym[k].id);
	rc = 0;
done:
	free(s);
	free(sym);
	free(h);
	return rc;
}

/* The WordPiece model on one piece x[0..n-1]: the longest vocabulary
 * entry from the start, then the longest (with the ## prefix) from there
 * on; the whole piece as <unk> when one place has none. */
static int
wordpiece(const dprt_tokenizer *t, const uint32_t *x, size_t n, Out *o)
{
	size_t np = t->prefix ? strlen(t->prefix) : 0, start = 0, end, len, k, bcap = 0;
	int64_t first = o->n;
	char *s = NULL;
	int id = -1;

	if (n > (size_t)t->maxchars) {
		emit(o, t->unk);
		return 0;
	}
	if (grow((void **)&s, &bcap, np + 4 * n + 1, 1) != 0)
		return -1;
	for (; start < n; start = end) {
		for (end = n; end > start; end--) {
			len = start > 0 ? np : 0;
			memcpy(s, t->prefix ? t->prefix : "", len);
			for (k = start; k < end; k++)
				len += (size_t)enc(x[k], s + len);
			if ((id = lookup(t, s, len)) >= 0)
				break;
		}
		if (end == start) {   /* none: the piece is one <unk> */
			o->n = first;
			emit(o, t->unk);
			break;
		}
		emit(o, id);
	}
	free(s);
	return 0;
}

/* A word character for single_word: a letter, a number or '_'. */
static int
wordch(uint32_t c)
{
	return c == '_' || (c < RAW && (dprt_uletter(c) || dprt_unumber(c)));
}

/* The added token (of those normalized or not) that matches x[0..n-1]
 * first at or after i, leftmost then longest (then in file order): its
 * index, the match (stripped spaces included) in *s, *e; -1 when none. */
static int
findadded(const dprt_tokenizer *t, int normalized, const uint32_t *x, size_t n, size_t i,
          size_t *s, size_t *e)
{
	int k;

	for (; i < n; i++)
		for (k = 0; k < t->nadded; k++) {
			const Added *a = &t->added[k];
			size_t b = i, f = i + a->n;
			if (a->normalized != normalized || a->n == 0 || a->n > n - i ||
			    memcmp(x + i, a->cp, a->n * sizeof *x) != 0)
				continue;
			if (a->single && ((i > 0 && wordch(x[i - 1])) || (f < n && wordch(x[f]))))
				continue;
			while (a->lstrip && b > 0 && isws(x[b - 1]))
				b--;
			while (a->rstrip && f < n && isws(x[f]))
				f++;
			*s = b;
			*e = f;
			return k;
		}
	return -1;
}

/* Normalizes, pre-tokenizes and encodes x[0..n-1], a stretch between
 * added tokens that are not normalized (at0: it starts the text). */
static int
stretch(const dprt_tokenizer *t, const uint32_t *x0, size_t n0, int at0, Out *o)
{
	uint32_t *x = malloc((n0 + 1) * sizeof *x);
	size_t n = n0, i = 0, s, e, j;
	Buf b = {0};
	Pieces ps = {0};
	int k, rc = -1, why;

	if (x == NULL)
		return -1;
	memcpy(x, x0, n0 * sizeof *x);
	if ((x = normalize(t, x, &n, &why)) == NULL)
		return why;
	if (bufadd(&b, x, n) == (size_t)-1)
		goto done;
	for (;;) {
		k = findadded(t, 1, x, n, i, &s, &e);
		if (k < 0)
			s = e = n;
		/* the removed spaces of lstrip go with the token, as tokenizers' */
		if (addpiece(&ps, i, s - i, at0 && i == 0) != 0 || (rc = pretokenize(t, &b, &ps)) != 0) {
			rc = rc == -3 ? -3 : -1;
			goto done;
		}
		rc = -1;
		for (j = 0; j < ps.n; j++)
			if ((t->wordpiece ? wordpiece : bpe)(t, b.cp + ps.p[j].at, ps.p[j].n, o) != 0)
				goto done;
		ps.n = 0;
		if (k < 0)
			break;
		emit(o, t->added[k].id);
		i = e;
	}
	rc = 0;
done:
	free(x);
	free(b.cp);
	free(ps.p);
	return rc;
}

int64_t
dprt_tok_encode(const dprt_tokenizer *t, const char *text, size_t n, int special,
                int64_t *ids, int64_t cap)
{
	Out o = {ids, cap, 0};
	size_t m, i = 0, s, e;
	uint32_t *x = decode(text, n, &m);
	int k, rc;

	if (x == NULL)
		return -1;
	if (special)
		for (k = 0; k < t->nbefore; k++)
			emit(&o, t->before[k]);
	for (;;) {
		k = findadded(t, 0, x, m, i, &s, &e);
		if (k < 0)
			s = e = m;
		if (s > i && (rc = stretch(t, x + i, s - i, i == 0, &o)) != 0) {
			free(x);
			return rc == -3 ? -2 : -1;
		}
		if (k < 0)
			break;
		emit(&o, t->added[k].id);
		i = e;
	}
	free(x);
	if (special)
		for (k = 0; k < t->nafter; k++)
			emit(&o, t->after[k]);
	return o.n;
}

/* ---- decoding: the decoders work on a list of strings ---- */

typedef struct Str {
	char *s;
	size_t n;
} Str;

typedef struct Strs {
	Str *v;
	size_t n, cap;
} Strs;

static int
stradd(Strs *l, const char *s, size_t n)
{
	char *c = malloc(n + 1);

	if (c == NULL || grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v) != 0) {
		free(c);
		return -1;
	}
	if (n > 0)
		memcpy(c, s, n);
	l->v[l->n++] = (Str){c, n};
	return 0;
}

static void
strsfree(Strs *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].s);
	free(l->v);
	*l = (Strs){0};
}

/* A growing byte string. */
typedef struct Bytes {
	char *s;
	size_t n, cap;
} Bytes;

static int
put(Bytes *b, const void *s, size_t n)
{
	if (grow((void **)&b->s, &b->cap, b->n + n + 1, 1) != 0)
		return -1;
	if (n > 0)
		memcpy(b->s + b->n, s, n);
	b->n += n;
	return 0;
}

/* s[0..n-1] with invalid UTF-8 as U+FFFD, as Rust's from_utf8_lossy: the
 * maximal prefix of a valid sequence as one. */
static int
lossy(Bytes *o, const char *raw, size_t total)
{
	static const char repl[] = "\xef\xbf\xbd";
	size_t i, len;

	for (i = 0; i < total; i += len) {
		const unsigned char *s = (const unsigned char *)raw + i;
		uint32_t cp;
		len = (size_t)utf8(s, total - i, &cp);
		if (cp < RAW) {
			if (put(o, s, len) != 0)
				return -1;
			continue;
		}
		if (s[0] >= 0xc2 && s[0] <= 0xf4 && i + 1 < total) {
			unsigned lo = s[0] == 0xe0 ? 0xa0 : s[0] == 0xf0 ? 0x90 : 0x80;
			unsigned hi = s[0] == 0xed ? 0x9f : s[0] == 0xf4 ? 0x8f : 0xbf;
			size_t need = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
			if (s[1] >= lo && s[1] <= hi) {
				len = 2;
				while (len < need && i + len < total && (s[len] & 0xc0) == 0x80)
					len++;
			}
		}
		if (put(o, repl, 3) != 0)
			return -1;
	}
	return 0;
}

/* <0xHH>: the byte, or -1. */
static int
bytetoken(const Str *s)
{
	static const char hex[] = "0123456789abcdef0123456789ABCDEF";
	const char *a, *b;

	if (s->n != 6 || memcmp(s->s, "<0x", 3) != 0 || s->s[5] != '>' || s->s[3] == '\0' ||
	    s->s[4] == '\0' || !(a = strchr(hex, s->s[3])) || !(b = strchr(hex, s->s[4])))
		return -1;
	return ((int)(a - hex) & 15) << 4 | ((int)(b - hex) & 15);
}

/* Replaces every a in s[0..n-1] with b into o. */
static int
replace(Bytes *o, const char *s, size_t n, const char *a, const char *b)
{
	size_t na = strlen(a), i = 0;

	while (i < n) {
		if (na > 0 && na <= n - i && memcmp(s + i, a, na) == 0) {
			if (put(o, b, strlen(b)) != 0)
				return -1;
			i += na;
		} else if (put(o, s + i++, 1) != 0)
			return -1;
	}
	return put(o, "", 0);
}

/* ByteFallback's bytes so far as one string when they are UTF-8, else as
 * one U+FFFD each. */
static int
flushbytes(Strs *r, Bytes *fb)
{
	size_t k, m = 0;
	uint32_t c;

	for (k = 0; k < fb->n; k += m)
		if ((m = (size_t)utf8((unsigned char *)fb->s + k, fb->n - k, &c)), c >= RAW)
			break;
	if (k == fb->n && fb->n > 0 && stradd(r, fb->s, fb->n) != 0)
		return -1;
	for (m = 0; k < fb->n && m < fb->n; m++)
		if (stradd(r, "\xef\xbf\xbd", 3) != 0)
			return -1;
	fb->n = 0;
	return 0;
}

/* One decoder over the list *l (replaced). */
static int
decodestep(const dprt_tokenizer *t, const Dec *d, Strs *l)
{
	Strs r = {0};
	Bytes b = {0}, fb = {0};
	size_t i, j;
	int rc = -1;

	for (i = 0; i < l->n; i++) {
		const Str *s = &l->v[i];
		b.n = 0;
		switch (d->kind) {
		case DC_BYTELEVEL: {   /* one string of all: each token's bytes by the alphabet */
			size_t at = fb.n, len;
			for (j = 0; j < s->n; j += len) {
				uint32_t c;
				len = (size_t)utf8((const unsigned char *)s->s + j, s->n - j, &c);
				if (c >= sizeof t->cp2byte / sizeof *t->cp2byte || t->cp2byte[c] < 0)
					break;
				if (put(&fb, &(char){(char)t->cp2byte[c]}, 1) != 0)
					goto done;
			}
			if (j < s->n) {   /* a character outside it: the token's own bytes */
				fb.n = at;
				if (put(&fb, s->s, s->n) != 0)
					goto done;
			}
			continue;
		}
		case DC_FUSE:
			if (put(&fb, s->s, s->n) != 0)
				goto done;
			continue;
		case DC_BYTEFALLBACK: {
			int v = bytetoken(s);
			if (v >= 0) {
				if (put(&fb, &(char){(char)v}, 1) != 0)
					goto done;
				continue;
			}
			if (flushbytes(&r, &fb) != 0)
				goto done;
			if (stradd(&r, s->s, s->n) != 0)
				goto done;
			continue;
		}
		case DC_REPLACE:
			if (replace(&b, s->s, s->n, d->a, d->b) != 0)
				goto done;
			break;
		case DC_BPE:
			if (replace(&b, s->s, s->n, d->a, i + 1 == l->n ? "" : " ") != 0)
				goto done;
			break;
		case DC_WORDPIECE: {   /* ## joins, else a space; then the cleanup, in order */
			static const char *const clean[][2] = {
				{" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"},
				{" n't", "n't"}, {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"},
				{" 've", "'ve"}, {" 're", "'re"},
			};
			size_t np = strlen(d->a), c;
			Bytes w = {0};
			if (i > 0 && !(s->n >= np && memcmp(s->s, d->a, np) == 0) && put(&b, " ", 1) != 0)
				goto done;
			j = i > 0 && s->n >= np && memcmp(s->s, d->a, np) == 0 ? np : 0;
			if (put(&b, s->s + j, s->n - j) != 0)
				goto done;
			for (c = 0; d->start && c < sizeof clean / sizeof *clean; c++) {
				w.n = 0;
				if (replace(&w, b.s, b.n, clean[c][0], clean[c][1]) != 0) {
					free(w.s);
					goto done;
				}
				b.n = 0;
				if (put(&b, w.s, w.n) != 0) {
					free(w.s);
					goto done;
				}
			}
			free(w.s);
			break;
		}
		case DC_METASPACE: {
			size_t len;
			for (j = 0; j < s->n; j += len) {
				uint32_t c;
				len = (size_t)utf8((const unsigned char *)s->s + j, s->n - j, &c);
				if (c != d->repl ? put(&b, s->s + j, len) != 0 :
				    !(i == 0 && d->scheme != PS_NEVER) && put(&b, " ", 1) != 0)
					goto done;
			}
			if (put(&b, "", 0) != 0)
				goto done;
			break;
		}
		case DC_STRIP: {
			size_t a = 0, e = s->n, len;
			uint32_t c;
			int k;
			for (k = 0; k < d->start && a < e; k++, a += len)
				if ((len = (size_t)utf8((const unsigned char *)s->s + a, e - a, &c)),
				    c != d->repl)
					break;
			for (k = 0; k < d->stop && e > a; k++) {
				size_t p = e - 1;
				while (p > a && ((unsigned char)s->s[p] & 0xc0) == 0x80)
					p--;
				utf8((const unsigned char *)s->s + p, e - p, &c);
				if (c != d->repl)
					break;
				e = p;
			}
			if (put(&b, s->s + a, e - a) != 0)
				goto done;
			break;
		}
		}
		if (stradd(&r, b.s, b.n) != 0)
			goto done;
	}
	if (d->kind == DC_BYTELEVEL) {
		if (lossy(&b, fb.s ? fb.s : "", fb.n) != 0 || stradd(&r, b.s ? b.s : "", b.n) != 0)
			goto done;
	} else if (d->kind == DC_FUSE) {
		if (stradd(&r, fb.s ? fb.s : "", fb.n) != 0)
			goto done;
	} else if (d->kind == DC_BYTEFALLBACK && flushbytes(&r, &fb) != 0)
		goto done;
	rc = 0;
done:
	free(b.s);
	free(fb.s);
	strsfree(l);
	*l = r;
	if (rc != 0)
		strsfree(l);
	return rc;
}

int64_t
dprt_tok_decode(const dprt_tokenizer *t, const int64_t *ids, int64_t n, int skip, char *buf,
                int64_t cap)
{
	Strs l = {0};
	Bytes o = {0};
	int64_t k, out = -1;
	int d;

	for (k = 0; k < n; k++)   /* unknown ids are dropped, as tokenizers does */
		if (ids[k] >= 0 && ids[k] < t->ntok && t->tok[ids[k]].s &&
		    !(skip && t->tok[ids[k]].special) &&
		    stradd(&l, t->tok[ids[k]].s, (size_t)t->tok[ids[k]].n) != 0)
			goto done;
	for (d = 0; d < t->ndec; d++)
		if (decodestep(t, &t->dec[d], &l) != 0)
			goto done;
	for (k = 0; k < (int64_t)l.n; k++)   /* no decoder: the tokens joined by spaces */
		if ((k > 0 && !t->hasdec && put(&o, " ", 1) != 0) ||
		    put(&o, l.v[k].s, l.v[k].n) != 0)
			goto done;
	out = (int64_t)o.n;
	if (out > 0 && cap > 0)
		memcpy(buf, o.s, (size_t)(out < cap ? out : cap));
done:
	strsfree(&l);
	free(o.s);
	return out;
}

int64_t
dprt_tok_id(const dprt_tokenizer *t, const char *token)
{
	int k;

	for (k = 0; k < t->nadded; k++) {
		const Tok *a = &t->tok[t->added[k].id];
		if ((size_t)a->n == strlen(token) && memcmp(a->s, token, strlen(token)) == 0)
			return t->added[k].id;
	}
	return lookup(t, token, strlen(token));
}

int64_t
dprt_tok_size(const dprt_tokenizer *t)
{
	return t->ntok;
}

/* ---- loading ---- */

/* The byte-level alphabet: printable Latin-1 bytes stand for themselves,
 * the others for U+0100 on, in byte order (GPT-2's bytes_to_unicode). */
static void
alphabet(dprt_tokenizer *t)
{
	int b, k = 0;

	memset(t->cp2byte, -1, sizeof t->cp2byte);
	for (b = 0; b < 256; b++) {
		int keep = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
		t->byte2cp[b] = (uint16_t)(keep ? b : 256 + k++);
		t->cp2byte[t->byte2cp[b]] = (int16_t)b;
	}
}

static size_t
pow2(size_t n)
{
	size_t c = 16;

	while (c < 2 * n)
		c *= 2;
	return c;
}

/* Whether a key is there with a value other than null. */
static int
set(const json_t *v)
{
	return v != NULL && !json_is_null(v);
}

/* Whether a word affix is set: a string other than "" (GPT-2's files say ""). */
static int
affix(const json_t *v)
{
	return set(v) && !(json_is_string(v) && json_string_length(v) == 0);
}

static const char *
str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* A string's one code point (Metaspace's replacement, Strip's content), or
 * -1. */
static int64_t
onechar(const char *s)
{
	uint32_t c;

	if (s == NULL || *s == '\0' || (size_t)utf8((const unsigned char *)s, strlen(s), &c) !=
	    strlen(s) || c >= RAW)
		return -1;
	return c;
}

/* A pattern object, {"String": s} or {"Regex": r}. */
static int
pattern(Pat *p, const json_t *v, const char *where, const char *what, char *err, size_t errn)
{
	const char *s = str(v, "String"), *r = str(v, "Regex");
	char e[256];

	if (r != NULL) {
		if ((p->re = dprt_re_new(r, e, sizeof e)) == NULL)
			return dprt_errf(err, errn, "%s: %s: %s", what, where, e);
		return 0;
	}
	if (s == NULL)
		return dprt_errf(err, errn, "%s: %s: a pattern is {\"String\": ...} or "
		                 "{\"Regex\": ...}", what, where);
	if ((p->lit = decode(s, strlen(s), &p->nlit)) == NULL)
		return dprt_errf(err, errn, "%s: out of memory", what);
	return 0;
}

static void
patfree(Pat *p)
{
	dprt_re_free(p->re);
	free(p->lit);
}

/* The list a Sequence holds (under key), or the one object. */
static size_t
items(json_t *o, const char *key, json_t **v, size_t max)
{
	const char *type = str(o, "type");
	size_t i, n = 0;
	json_t *x;

	if (!(type && strcmp(type, "Sequence") == 0)) {
		v[0] = o;
		return 1;
	}
	json_array_foreach(json_object_get(o, key), i, x) {
		if (n == max)
			return max + 1;
		v[n++] = x;
	}
	return n;
}

static int
normalizers(dprt_tokenizer *t, json_t *o, const char *what, char *err, size_t errn)
{
	json_t *v[16];
	size_t n, i;

	if (!set(o))
		return 0;
	if ((n = items(o, "normalizers", v, 16)) > 16)
		return dprt_errf(err, errn, "%s: more than 16 normalizers", what);
	for (i = 0; i < n; i++) {
		const char *type = str(v[i], "type");
		Norm *nm = &t->norm[t->nnorm];
		static const char *const forms[] = {"NFC", "NFD", "NFKC", "NFKD"};
		int k;
		memset(nm, 0, sizeof *nm);
		for (k = 0; k < 4 && !(type && strcmp(type, forms[k]) == 0); k++)
			;
		if (k < 4)
			nm->kind = NM_NFC + k;
		else if (type && strcmp(type, "Lowercase") == 0)
			nm->kind = NM_LOWER;
		else if (type && strcmp(type, "StripAccents") == 0)
			nm->kind = NM_STRIPACC;
		else if (type && strcmp(type, "BertNormalizer") == 0) {
			/* cleaning, CJK spaced, accents stripped (NFD, Mn), lowercased */
			json_t *sa = json_object_get(v[i], "strip_accents");
			int lower = !json_is_false(json_object_get(v[i], "lowercase"));
			int strip = json_is_boolean(sa) ? json_is_true(sa) : lower;
			int kinds[5], nk = 0, j;
			if (!json_is_false(json_object_get(v[i], "clean_text")))
				kinds[nk++] = NM_BERTCLEAN;
			if (!json_is_false(json_object_get(v[i], "handle_chinese_chars")))
				kinds[nk++] = NM_CHINESE;
			if (strip)
				kinds[nk++] = NM_NFD, kinds[nk++] = NM_STRIPMN;
			if (lower)
				kinds[nk++] = NM_LOWER;
			if (t->nnorm + nk > 16)
				return dprt_errf(err, errn, "%s: more than 16 normalizers", what);
			for (j = 0; j < nk; j++) {
				memset(&t->norm[t->nnorm], 0, sizeof *nm);
				t->norm[t->nnorm++].kind = kinds[j];
			}
			continue;
		}
		else if (type && strcmp(type, "Strip") == 0) {
			nm->kind = NM_STRIP;
			nm->left = json_is_true(json_object_get(v[i], "strip_left"));
			nm->right = json_is_true(json_object_get(v[i], "strip_right"));
		} else if (type && (strcmp(type, "Prepend") == 0 || strcmp(type, "Replace") == 0)) {
			const char *s = str(v[i], type[0] == 'P' ? "prepend" : "content");
			nm->kind = type[0] == 'P' ? NM_PREPEND : NM_REPLACE;
			if (s == NULL)
				return dprt_errf(err, errn, "%s: normalizer %s without its string", what,
				                 type);
			if ((nm->s = decode(s, strlen(s), &nm->ns)) == NULL)
				return dprt_errf(err, errn, "%s: out of memory", what);
			t->nnorm++;
			if (nm->kind == NM_REPLACE && pattern(&nm->pat, json_object_get(v[i], "pattern"),
			                                      "normalizer Replace", what, err, errn) != 0)
				return -1;
			continue;
		} else
			return dprt_errf(err, errn, "%s: normalizer %s (DevProc reads NFC, NFD, NFKC, "
			                 "NFKD, Lowercase, Prepend, Replace, Strip, StripAccents, "
			                 "BertNormalizer and Sequence)", what, type ? type : "(no type)");
		t->nnorm++;
	}
	return 0;
}

static int
behavior(const char *b)
{
	static const char *const names[] = {"Removed", "Isolated", "MergedWithPrevious",
	                                    "MergedWithNext", "Contiguous"};
	int k;

	for (k = 0; b && k < 5; k++)
		if (strcmp(b, names[k]) == 0)
			return k;
	return -1;
}

/* Metaspace's prepend_scheme (or the older add_prefix_space). */
static int
scheme(const json_t *o)
{
	const char *s = str(o, "prepend_scheme");

	if (s == NULL)
		return json_is_false(json_object_get(o, "add_prefix_space")) ? PS_NEVER : PS_ALWAYS;
	return strcmp(s, "first") == 0 ? PS_FIRST : strcmp(s, "never") == 0 ? PS_NEVER :
	       strcmp(s, "always") == 0 ? PS_ALWAYS : -1;
}

static Pre *
newpre(dprt_tokenizer *t, int kind)
{
	Pre *p;

	if (t->npre == 16)
		return NULL;
	p = &t->pre[t->npre++];
	memset(p, 0, sizeof *p);
	p->kind = kind;
	return p;
}

static int
pretoks(dprt_tokenizer *t, json_t *o, const char *what, char *err, size_t errn)
{
	json_t *v[16];
	size_t n, i;
	char e[256];

	if (!set(o))
		return 0;
	if ((n = items(o, "pretokenizers", v, 16)) > 16)
		return dprt_errf(err, errn, "%s: more than 16 pre-tokenizers", what);
	for (i = 0; i < n; i++) {
		const char *type = str(v[i], "type");
		Pre *p = newpre(t, PT_SPLIT), *q;
		if (p == NULL)
			return dprt_errf(err, errn, "%s: more than 16 pre-tokenizers", what);
		if (type && strcmp(type, "Split") == 0) {
			p->behavior = behavior(str(v[i], "behavior"));
			p->invert = json_is_true(json_object_get(v[i], "invert"));
			if (p->behavior < 0)
				return dprt_errf(err, errn, "%s: pre-tokenizer Split: behavior %s", what,
				                 str(v[i], "behavior") ? str(v[i], "behavior") : "(none)");
			if (pattern(&p->pat, json_object_get(v[i], "pattern"), "pre-tokenizer Split",
			            what, err, errn) != 0)
				return -1;
		} else if (type && strcmp(type, "ByteLevel") == 0) {
			p->kind = PT_BYTELEVEL;
			p->prefix = json_is_true(json_object_get(v[i], "add_prefix_space"));
			p->regex = !json_is_false(json_object_get(v[i], "use_regex"));
		} else if (type && strcmp(type, "Metaspace") == 0) {
			int64_t c = onechar(str(v[i], "replacement"));
			p->kind = PT_METASPACE;
			p->scheme = scheme(v[i]);
			p->split = !json_is_false(json_object_get(v[i], "split"));
			if (c < 0 || p->scheme < 0)
				return dprt_errf(err, errn, "%s: pre-tokenizer Metaspace: its replacement "
				                 "is one character, its prepend_scheme always, first or never",
				                 what);
			p->repl = (uint32_t)c;
		} else if (type && strcmp(type, "Digits") == 0) {
			p->pat.cls = isnum;
			p->behavior = json_is_true(json_object_get(v[i], "individual_digits")) ?
			              BH_ISOLATED : BH_CONTIG;
		} else if (type && strcmp(type, "Punctuation") == 0) {
			p->pat.cls = ispunc;
			p->behavior = str(v[i], "behavior") ? behavior(str(v[i], "behavior")) : BH_ISOLATED;
			if (p->behavior < 0)
				return dprt_errf(err, errn, "%s: pre-tokenizer Punctuation: behavior %s",
				                 what, str(v[i], "behavior"));
		} else if (type && (strcmp(type, "WhitespaceSplit") == 0 ||
		                    strcmp(type, "BertPreTokenizer") == 0)) {
			p->pat.cls = isws;
			p->behavior = BH_REMOVED;
			if (type[0] == 'B' && (q = newpre(t, PT_SPLIT)) != NULL) {
				q->pat.cls = ispunc;
				q->behavior = BH_ISOLATED;
			}
		} else if (type && strcmp(type, "Whitespace") == 0) {
			p->behavior = BH_REMOVED;
			p->invert = 1;
			if ((p->pat.re = dprt_re_new("\\w+|[^\\w\\s]+", e, sizeof e)) == NULL)
				return dprt_errf(err, errn, "%s: %s", what, e);
		} else if (type && strcmp(type, "CharDelimiterSplit") == 0) {
			int64_t c = onechar(str(v[i], "delimiter"));
			if (c < 0 || (p->pat.lit = malloc(sizeof *p->pat.lit)) == NULL)
				return dprt_errf(err, errn, "%s: pre-tokenizer CharDelimiterSplit: its "
				                 "delimiter is one character", what);
			p->pat.lit[0] = (uint32_t)c;
			p->pat.nlit = 1;
			p->behavior = BH_REMOVED;
		} else
			return dprt_errf(err, errn, "%s: pre-tokenizer %s (DevProc reads Split, "
			                 "ByteLevel, Metaspace, Digits, Punctuation, Whitespace, "
			                 "WhitespaceSplit, CharDelimiterSplit, BertPreTokenizer and "
			                 "Sequence)", what, type ? type : "(no type)");
	}
	return 0;
}

static int
decoders(dprt_tokenizer *t, json_t *o, const char *what, char *err, size_t errn)
{
	json_t *v[16];
	size_t n, i;

	if (!set(o))
		return 0;
	t->hasdec = 1;
	if ((n = items(o, "decoders", v, 16)) > 16)
		return dprt_errf(err, errn, "%s: more than 16 decoders", what);
	for (i = 0; i < n; i++) {
		const char *type = str(v[i], "type");
		Dec *d = &t->dec[t->ndec];
		memset(d, 0, sizeof *d);
		if (type && strcmp(type, "ByteLevel") == 0)
			d->kind = DC_BYTELEVEL;
		else if (type && strcmp(type, "ByteFallback") == 0)
			d->kind = DC_BYTEFALLBACK;
		else if (type && strcmp(type, "Fuse") == 0)
			d->kind = DC_FUSE;
		else if (type && strcmp(type, "Metaspace") == 0) {
			int64_t c = onechar(str(v[i], "replacement"));
			d->kind = DC_METASPACE;
			d->scheme = scheme(v[i]);
			if (c < 0 || d->scheme < 0)
				return dprt_errf(err, errn, "%s: decoder Metaspace: its replacement is one "
				                 "character, its prepend_scheme always, first or never", what);
			d->repl = (uint32_t)c;
		} else if (type && strcmp(type, "Strip") == 0) {
			int64_t c = onechar(str(v[i], "content"));
			json_t *a = json_object_get(v[i], "start"), *b = json_object_get(v[i], "stop");
			d->kind = DC_STRIP;
			if (c < 0 || !json_is_integer(a) || !json_is_integer(b) ||
			    json_integer_value(a) < 0 || json_integer_value(b) < 0 ||
			    json_integer_value(a) > 1 << 20 || json_integer_value(b) > 1 << 20)
				return dprt_errf(err, errn, "%s: decoder Strip: one character, and counts "
				                 "start and stop", what);
			d->repl = (uint32_t)c;
			d->start = (int)json_integer_value(a);
			d->stop = (int)json_integer_value(b);
		} else if (type && strcmp(type, "Replace") == 0) {
			const char *a = str(json_object_get(v[i], "pattern"), "String"),
			           *b = str(v[i], "content");
			d->kind = DC_REPLACE;
			if (a == NULL || b == NULL)
				return dprt_errf(err, errn, "%s: decoder Replace: DevProc reads a String "
				                 "pattern and its content", what);
			if ((d->a = strdup(a)) == NULL || (d->b = strdup(b)) == NULL)
				return dprt_errf(err, errn, "%s: out of memory", what);
		} else if (type && strcmp(type, "WordPiece") == 0) {
			const char *a = str(v[i], "prefix");
			d->kind = DC_WORDPIECE;
			d->start = !json_is_false(json_object_get(v[i], "cleanup"));
			if ((d->a = strdup(a ? a : "##")) == NULL)
				return dprt_errf(err, errn, "%s: out of memory", what);
		} else if (type && strcmp(type, "BPEDecoder") == 0) {
			const char *a = str(v[i], "suffix");
			d->kind = DC_BPE;
			if ((d->a = strdup(a ? a : "</w>")) == NULL)
				return dprt_errf(err, errn, "%s: out of memory", what);
		} else
			return dprt_errf(err, errn, "%s: decoder %s (DevProc decodes ByteLevel, "
			                 "Metaspace, Replace, ByteFallback, Fuse, Strip, BPEDecoder, "
			                 "WordPiece and Sequence)", what, type ? type : "(no type)");
		t->ndec++;
	}
	return 0;
}

/* The ids of one side of a template or of a processor's pair. */
static int
addids(dprt_tokenizer *t, json_t *ids, int after, const char *what, char *err, size_t errn)
{
	int *nn = after ? &t->nafter : &t->nbefore;
	int64_t *dst = after ? t->after : t->before;
	json_t *x;
	size_t j;

	if (!json_is_array(ids))
		return dprt_errf(err, errn, "%s: the post-processor's special token has no ids", what);
	json_array_foreach(ids, j, x) {
		if (!json_is_integer(x) || *nn >= 8)
			return dprt_errf(err, errn, "%s: bad post-processor ids", what);
		dst[(*nn)++] = json_integer_value(x);
	}
	return 0;
}

/* The post-processor's ids around $A: TemplateProcessing's "single",
 * Roberta's and Bert's cls and sep. */
static int
postproc(dprt_tokenizer *t, json_t *o, const char *what, char *err, size_t errn)
{
	json_t *v[16], *e;
	size_t n, i, j;

	if (!set(o))
		return 0;
	if ((n = items(o, "processors", v, 16)) > 16)
		return dprt_errf(err, errn, "%s: more than 16 post-processors", what);
	for (i = 0; i < n; i++) {
		const char *type = str(v[i], "type");
		if (type && strcmp(type, "ByteLevel") == 0)
			continue;
		if (type && (strcmp(type, "RobertaProcessing") == 0 ||
		             strcmp(type, "BertProcessing") == 0)) {
			json_t *cls = json_array_get(json_object_get(v[i], "cls"), 1),
			       *sep = json_array_get(json_object_get(v[i], "sep"), 1);
			if (!json_is_integer(cls) || !json_is_integer(sep) || t->nbefore >= 8 ||
			    t->nafter >= 8)
				return dprt_errf(err, errn, "%s: %s without cls and sep", what, type);
			t->before[t->nbefore++] = json_integer_value(cls);
			t->after[t->nafter++] = json_integer_value(sep);
			continue;
		}
		if (!(type && strcmp(type, "TemplateProcessing") == 0))
			return dprt_errf(err, errn, "%s: post-processor %s (DevProc reads "
			                 "TemplateProcessing, ByteLevel, RobertaProcessing, "
			                 "BertProcessing and Sequence)", what, type ? type : "(no type)");
		{
			json_t *single = json_object_get(v[i], "single"),
			       *sp = json_object_get(v[i], "special_tokens");
			int seen = 0;
			if (!json_is_array(single))
				return dprt_errf(err, errn, "%s: TemplateProcessing without a single "
				                 "template", what);
			json_array_foreach(single, j, e) {
				json_t *st = json_object_get(e, "SpecialToken");
				if (json_object_get(e, "Sequence")) {
					seen = 1;
					continue;
				}
				if (addids(t, json_object_get(json_object_get(sp, str(st, "id")), "ids"),
				           seen, what, err, errn) != 0)
					return -1;
			}
		}
	}
	return 0;
}

/* The added tokens: each checked, its content as code points (normalized
 * when marked so), longest first, then in file order. */
static int
addeds(dprt_tokenizer *t, json_t *added, const char *what, char *err, size_t errn)
{
	json_t *v;
	size_t i;
	int j, why = -1;

	if ((t->added = calloc(json_array_size(added) + 1, sizeof *t->added)) == NULL)
		return dprt_errf(err, errn, "%s: out of memory", what);
	json_array_foreach(added, i, v) {
		Added *a = &t->added[t->nadded++];
		const char *c = str(v, "content");
		json_t *nz = json_object_get(v, "normalized");
		Tok *k = &t->tok[json_integer_value(json_object_get(v, "id"))];
		a->id = (int)json_integer_value(json_object_get(v, "id"));
		a->lstrip = json_is_true(json_object_get(v, "lstrip"));
		a->rstrip = json_is_true(json_object_get(v, "rstrip"));
		a->single = json_is_true(json_object_get(v, "single_word"));
		k->special = json_is_true(json_object_get(v, "special"));
		a->normalized = json_is_boolean(nz) ? json_is_true(nz) : !k->special;
		if ((a->cp = decode(c, strlen(c), &a->n)) == NULL ||
		    (a->normalized && (a->cp = normalize(t, a->cp, &a->n, &why)) == NULL))
			return a->n && why == -3 ?
			       dprt_errf(err, errn, "%s: added token '%s': a normalizer's regex "
			                 "backtracked past its limit on it", what, c) :
			       dprt_errf(err, errn, "%s: out of memory", what);
		free(k->s);
		if ((k->s = strdup(c)) == NULL)
			return dprt_errf(err, errn, "%s: out of memory", what);
		k->n = (int)strlen(c);
		k->added = 1;
	}
	for (i = 1; i < (size_t)t->nadded; i++)
		for (j = (int)i; j > 0 && t->added[j].n > t->added[j - 1].n; j--) {
			Added x = t->added[j];
			t->added[j] = t->added[j - 1];
			t->added[j - 1] = x;
		}
	return 0;
}

/* A merge's two tokens: an array of two, or "a b". */
static int
mergepair(json_t *v, char **a, char **b)
{
	char *sp;

	*a = *b = NULL;
	if (json_is_array(v) && json_array_size(v) == 2 && json_is_string(json_array_get(v, 0)) &&
	    json_is_string(json_array_get(v, 1))) {
		*a = strdup(json_string_value(json_array_get(v, 0)));
		*b = strdup(json_string_value(json_array_get(v, 1)));
	} else if (json_is_string(v) && (*a = strdup(json_string_value(v))) != NULL &&
	           (sp = strchr(*a, ' ')) != NULL) {
		*sp = '\0';
		*b = strdup(sp + 1);
	}
	return *a && *b ? 0 : -1;
}

int
dprt_tok_parse(const char *json, size_t n, const char *what, dprt_tokenizer **tp, char *err,
               size_t errn)
{
	json_error_t je;
	json_t *root = json_loadb(json, n, 0, &je), *model, *vocab, *merges, *added, *v;
	dprt_tokenizer *t = NULL;
	const char *key, *type;
	size_t i, np;
	int maxid = -1, rc = -1, k;
	char e[256];

	*tp = NULL;
	if (root == NULL || !json_is_object(root)) {
		dprt_errf(err, errn, "%s: not a JSON object%s%s", what, root ? "" : ": ",
		          root ? "" : je.text);
		goto done;
	}
	model = json_object_get(root, "model");
	vocab = json_object_get(model, "vocab");
	merges = json_object_get(model, "merges");
	added = json_object_get(root, "added_tokens");
	type = str(model, "type");
	if (type && strcmp(type, "WordPiece") == 0 && json_is_object(vocab))
		merges = NULL;
	else if ((type && strcmp(type, "BPE") != 0) || !json_is_object(vocab) ||
	         !json_is_array(merges)) {
		dprt_errf(err, errn, "%s: the model is %s, not BPE with a vocab and merges (DevProc "
		          "reads BPE and WordPiece models)", what, type ? type : "not BPE");
		goto done;
	}
	if (set(json_object_get(model, "dropout")) &&
	    !(json_is_number(json_object_get(model, "dropout")) &&
	      json_number_value(json_object_get(model, "dropout")) == 0)) {
		dprt_errf(err, errn, "%s: a BPE model with dropout (random: DevProc encodes as "
		          "inference does, without)", what);
		goto done;
	}
	if (set(json_object_get(root, "truncation")) || set(json_object_get(root, "padding"))) {
		dprt_errf(err, errn, "%s: truncation or padding (the tokenize op pads to its length)",
		          what);
		goto done;
	}
	if ((t = calloc(1, sizeof *t)) == NULL)
		goto oom;
	alphabet(t);
	t->unk = -1;
	t->wordpiece = merges == NULL;
	t->maxchars = 100;
	if (t->wordpiece) {
		json_t *mc = json_object_get(model, "max_input_chars_per_word");
		if (json_is_integer(mc) && json_integer_value(mc) >= 0)
			t->maxchars = json_integer_value(mc) > 1 << 30 ? 1 << 30 : (int)json_integer_value(mc);
		if (!set(json_object_get(model, "continuing_subword_prefix")))
			json_object_set_new(model, "continuing_subword_prefix", json_string("##"));
		if (!set(json_object_get(model, "unk_token")))
			json_object_set_new(model, "unk_token", json_string("[UNK]"));
	}
	t->ignore_merges = json_is_true(json_object_get(model, "ignore_merges"));
	t->byte_fallback = json_is_true(json_object_get(model, "byte_fallback"));
	t->fuse_unk = json_is_true(json_object_get(model, "fuse_unk"));
	if ((affix(json_object_get(model, "continuing_subword_prefix")) &&
	     (t->prefix = strdup(str(model, "continuing_subword_prefix"))) == NULL) ||
	    (affix(json_object_get(model, "end_of_word_suffix")) &&
	     (t->suffix = strdup(str(model, "end_of_word_suffix"))) == NULL))
		goto oom;
	if ((t->gpt2.re = dprt_re_new(gpt2re, e, sizeof e)) == NULL) {
		dprt_errf(err, errn, "%s: %s", what, e);
		goto done;
	}

	/* ids: the vocabulary's, then the added tokens' */
	json_object_foreach(vocab, key, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) >= 1 << 24) {
			dprt_errf(err, errn, "%s: vocab entry '%s' has a bad id", what, key);
			goto done;
		}
		if (json_integer_value(v) > maxid)
			maxid = (int)json_integer_value(v);
	}
	json_array_foreach(added, i, v) {
		json_t *id = json_object_get(v, "id");
		if (!json_is_integer(id) || json_integer_value(id) < 0 ||
		    json_integer_value(id) >= 1 << 24 || !json_is_string(json_object_get(v, "content"))) {
			dprt_errf(err, errn, "%s: added token %zu needs an id and a content", what, i);
			goto done;
		}
		if (json_integer_value(id) > maxid)
			maxid = (int)json_integer_value(id);
	}
	t->ntok = maxid + 1;
	t->tok = calloc((size_t)t->ntok + 1, sizeof *t->tok);
	t->vcap = pow2((size_t)t->ntok);
	t->vocab = malloc(t->vcap * sizeof *t->vocab);
	if (!t->tok || !t->vocab)
		goto oom;
	memset(t->vocab, -1, t->vcap * sizeof *t->vocab);
	json_object_foreach(vocab, key, v) {
		Tok *k1 = &t->tok[json_integer_value(v)];
		free(k1->s);
		if ((k1->s = strdup(key)) == NULL)
			goto oom;
		k1->n = (int)strlen(key);
	}
	/* the normalizers first: normalized added tokens are matched normalized */
	if (normalizers(t, json_object_get(root, "normalizer"), what, err, errn) != 0 ||
	    addeds(t, added, what, err, errn) != 0 ||
	    pretoks(t, json_object_get(root, "pre_tokenizer"), what, err, errn) != 0 ||
	    postproc(t, json_object_get(root, "post_processor"), what, err, errn) != 0 ||
	    decoders(t, json_object_get(root, "decoder"), what, err, errn) != 0)
		goto done;
	for (i = 0; i < (size_t)t->ntok; i++)   /* the vocabulary's own ids win */
		if (t->tok[i].s && !t->tok[i].added)
			insert(t, (int)i);
	for (k = 0; k < 256; k++) {
		char b[8];
		snprintf(b, sizeof b, "<0x%02X>", k);
		t->byteid[k] = lookup(t, b, 6);
	}
	if (set(json_object_get(model, "unk_token"))) {
		const char *u = str(model, "unk_token");
		if (u == NULL || (t->unk = (int)dprt_tok_id(t, u)) < 0) {
			dprt_errf(err, errn, "%s: the unk_token '%s' is not in the vocab", what,
			          u ? u : "(not a string)");
			goto done;
		}
	}

	/* merges: (left, right) -> rank, the merged token */
	np = t->prefix ? strlen(t->prefix) : 0;
	t->mcap = pow2(merges ? json_array_size(merges) : 0);
	if ((t->merge = malloc(t->mcap * sizeof *t->merge)) == NULL)
		goto oom;
	for (i = 0; i < t->mcap; i++)
		t->merge[i].key = -1;
	json_array_foreach(merges, i, v) {
		char *a, *b, *ab = NULL;
		int ia, ib, iab;
		size_t skip;
		Merge *g;
		if (mergepair(v, &a, &b) != 0) {
			free(a), free(b);
			dprt_errf(err, errn, "%s: merge %zu is not a pair of tokens", what, i);
			goto done;
		}
		/* with a continuing_subword_prefix, the right one's prefix goes */
		skip = np && strncmp(b, t->prefix, np) == 0 ? np : 0;
		if ((ab = malloc(strlen(a) + strlen(b) + 1)) == NULL) {
			free(a), free(b);
			goto oom;
		}
		strcpy(ab, a);
		strcat(ab, b + skip);
		ia = lookup(t, a, strlen(a));
		ib = lookup(t, b, strlen(b));
		iab = lookup(t, ab, strlen(ab));
		if (ia < 0 || ib < 0 || iab < 0)
			dprt_errf(err, errn, "%s: merge %zu ('%s' '%s') names a token the vocab lacks",
			          what, i, a, b);
		free(a), free(b), free(ab);
		if (ia < 0 || ib < 0 || iab < 0)
			goto done;
		g = findmerge(t, ia, ib);
		if (g->key == -1)   /* the first (lowest) rank of a pair stays */
			*g = (Merge){(int64_t)ia << 32 | (uint32_t)ib, (int)i, iab};
	}
	*tp = t;
	t = NULL;
	rc = 0;
	goto done;
oom:
	dprt_errf(err, errn, "%s: out of memory", what);
done:
	dprt_tok_free(t);
	json_decref(root);
	return rc;
}

int
dprt_tok_load(const char *path, dprt_tokenizer **t, char *err, size_t errn)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;
	int rc;

	*t = NULL;
	if (f == NULL)
		return dprt_errf(err, errn, "%s: cannot open", path);
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    (buf = malloc((size_t)n + 1)) == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return dprt_errf(err, errn, "%s: cannot read", path);
	}
	fclose(f);
	rc = dprt_tok_parse(buf, (size_t)n, path, t, err, errn);
	free(buf);
	return rc;
}

void
dprt_tok_free(dprt_tokenizer *t)
{
	int i;

	if (t == NULL)
		return;
	for (i = 0; t->tok && i < t->ntok; i++)
		free(t->tok[i].s);
	for (i = 0; i < t->nadded; i++)
		free(t->added[i].cp);
	for (i = 0; i < t->nnorm; i++) {
		patfree(&t->norm[i].pat);
		free(t->norm[i].s);
	}
	for (i = 0; i < t->npre; i++)
		patfree(&t->pre[i].pat);
	for (i = 0; i < t->ndec; i++) {
		free(t->dec[i].a);
		free(t->dec[i].b);
	}
	patfree(&t->gpt2);
	free(t->tok);
	free(t->vocab);
	free(t->merge);
	free(t->added);
	free(t->prefix);
	free(t->suffix);
	free(t);
}

/* ---- the pipeline ops ---- */

/* The tokenizers parsed so far, by the address of their JSON (a program's
 * constant): parsed once per process. */
static struct Cached {
	const uint8_t *json;
	int64_t n;
	dprt_tokenizer *t;
} cache[8];
static int ncache;
static pthread_mutex_t cachelock = PTHREAD_MUTEX_INITIALIZER;

static dprt_tokenizer *
cached(const uint8_t *json, int64_t n, char *err, size_t errn)
{
	dprt_tokenizer *t = NULL;
	int i;

	pthread_mutex_lock(&cachelock);
	for (i = 0; i < ncache; i++)
		if (cache[i].json == json && cache[i].n == n)
			t = cache[i].t;
	if (t == NULL && dprt_tok_parse((const char *)json, (size_t)n, "tokenizer.json", &t, err,
	                                errn) == 0 && ncache < 8)
		cache[ncache++] = (struct Cached){json, n, t};
	pthread_mutex_unlock(&cachelock);
	return t;
}

int
dprt_tokenize(int64_t *ids, int64_t length, int64_t pad, int special, const dprt_image *text,
              const uint8_t *json, int64_t jsonn, char *err, size_t errn)
{
	dprt_tokenizer *t = cached(json, jsonn, err, errn);
	int64_t n, i;

	if (t == NULL)
		return -1;
	n = dprt_tok_encode(t, (const char *)text->data, (size_t)text->h, special, ids, length);
	if (n == -2)
		return dprt_errf(err, errn, "tokenize: a regex of the tokenizer backtracked more than "
		                 "10^7 times on this text (Oniguruma's limit) and gave up");
	if (n < 0)
		return dprt_errf(err, errn, "tokenize: out of memory");
	if (n > length)
		return dprt_errf(err, errn, "tokenize: the text is %lld tokens, more than length=%lld",
		                 (long long)n, (long long)length);
	for (i = n; i < length; i++)
		ids[i] = pad;
	return 0;
}

int
dprt_detokenize(uint8_t *y, int64_t bytes, int skip, const void *ids, int dtype_ids, int64_t n,
                const uint8_t *json, int64_t jsonn, char *err, size_t errn)
{
	dprt_tokenizer *t = cached(json, jsonn, err, errn);
	int64_t *v, i, m;

	if (t == NULL)
		return -1;
	if ((v = malloc(sizeof *v * (size_t)(n ? n : 1))) == NULL)
		return dprt_errf(err, errn, "detokenize: out of memory");
	for (i = 0; i < n; i++)
		v[i] = dtype_ids == DPRT_I32 ? ((const int32_t *)ids)[i] : ((const int64_t *)ids)[i];
	m = dprt_tok_decode(t, v, n, skip, (char *)y, bytes);
	free(v);
	if (m < 0)
		return dprt_errf(err, errn, "detokenize: out of memory");
	if (m > bytes)
		return dprt_errf(err, errn, "detokenize: the text is %lld bytes, more than bytes=%lld",
		                 (long long)m, (long long)bytes);
	memset(y + m, 0, (size_t)(bytes - m));
	return 0;
}
