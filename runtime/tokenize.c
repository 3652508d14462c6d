/* tokenize.c: byte-level BPE tokenizers read from a Hugging Face
 * tokenizer.json (GPT-2 and Llama-3 style): added and special tokens, the
 * two pre-tokenizer regexes matched by hand, byte-level BPE with merge
 * ranks, the TemplateProcessing post-processor and the ByteLevel decoder;
 * the same ids and text as the `tokenizers` library. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "dprtint.h"

enum { PRE_GPT2, PRE_LLAMA3 };

/* The pre-tokenizer regexes this file implements (tokenizers' ByteLevel
 * default is GPT-2's). */
static const char gpt2re[] =
	"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
static const char llama3re[] =
	"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}"
	"\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

typedef struct Tok {
	char *s;	/* the bytes the token stands for */
	int n;
	int added, special;
} Tok;

typedef struct Slot {	/* the vocabulary's hash table: bytes -> id */
	int id;		/* -1: empty */
} Slot;

typedef struct Merge {	/* the merges' hash table: (left, right) -> rank, result */
	int64_t key;	/* left << 32 | right, or -1: empty */
	int rank, id;
} Merge;

struct dprt_tokenizer {
	Tok *tok;
	int ntok;
	Slot *vocab;
	size_t vcap;	/* a power of 2 */
	Merge *merge;
	size_t mcap;
	int *added;	/* the ids of the added tokens, longest content first */
	int nadded;
	int pre;	/* PRE_ */
	int prefix;	/* add_prefix_space */
	int ignore_merges;
	int64_t before[8], after[8];	/* the template's ids around $A */
	int nbefore, nafter;
	uint16_t byte2cp[256];	/* the byte-level alphabet */
	int16_t cp2byte[324];
};

static uint64_t
fnv(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

/* The id of the token whose bytes are s[0..n-1], or -1. */
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
			return;   /* the first id keeps the bytes */
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
 * A byte that starts no valid sequence is taken alone, as code point
 * 0x110000 + byte (neither letter, number nor space). */
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
	*cp = 0x110000 + s[0];
	return 1;
}

/* Unicode White_Space (the regexes' \s). */
static int
isspace_u(uint32_t c)
{
	return (c >= 9 && c <= 13) || c == 32 || c == 0x85 || c == 0xa0 || c == 0x1680 ||
	       (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f ||
	       c == 0x205f || c == 0x3000;
}

static int
isletter(uint32_t c)
{
	return c < 0x110000 && dprt_uletter(c);
}

static int
isnumber_u(uint32_t c)
{
	return c < 0x110000 && dprt_unumber(c);
}

/* The text being split: code points with their byte offsets. */
typedef struct Text {
	uint32_t *cp;
	size_t *at;	/* byte offset of cp[i]; at[n] is the end */
	size_t n;
} Text;

static int
other(uint32_t c)
{
	return !isspace_u(c) && !isletter(c) && !isnumber_u(c);
}

/* Case-insensitive (Unicode simple folding) match of the ASCII letter l. */
static int
ci(uint32_t c, char l)
{
	return c == (uint32_t)l || c == (uint32_t)(l - 32) || (l == 's' && c == 0x17f);
}

/* 's 't 're 've 'm 'll 'd at i (case-insensitively when fold): the length. */
static size_t
contraction(const Text *x, size_t i, int fold)
{
	static const char *const alt[] = {"s", "t", "re", "ve", "m", "ll", "d"};
	size_t k, j;

	if (x->cp[i] != '\'')
		return 0;
	for (k = 0; k < 7; k++) {
		const char *a = alt[k];
		for (j = 0; a[j] && i + 1 + j < x->n; j++)
			if (fold ? !ci(x->cp[i + 1 + j], a[j]) : x->cp[i + 1 + j] != (uint32_t)a[j])
				break;
		if (!a[j])
			return 1 + j;
	}
	return 0;
}

/* \s+(?!\S) then \s+ at i: the length (0: no space at i). */
static size_t
spaces(const Text *x, size_t i)
{
	size_t e = i;

	while (e < x->n && isspace_u(x->cp[e]))
		e++;
	if (e == i)
		return 0;
	if (e == x->n || e - i == 1)
		return e - i;
	return e - i - 1;   /* leave the last space to the word after it */
}

/* The length of the match of GPT-2's regex at i (> 0: the regex matches
 * every code point). */
static size_t
gpt2(const Text *x, size_t i)
{
	size_t j, n;
	int sp;

	if ((n = contraction(x, i, 0)) > 0)
		return n;
	sp = x->cp[i] == ' ' && i + 1 < x->n;
	j = i + sp;
	if (isletter(x->cp[j]) || isnumber_u(x->cp[j])) {
		int (*cls)(uint32_t) = isletter(x->cp[j]) ? isletter : isnumber_u;
		while (j < x->n && cls(x->cp[j]))
			j++;
		return j - i;
	}
	if (other(x->cp[j])) {
		while (j < x->n && other(x->cp[j]))
			j++;
		return j - i;
	}
	return spaces(x, i);
}

/* The length of the match of Llama-3's regex at i. */
static size_t
llama3(const Text *x, size_t i)
{
	size_t j, n, e, p;
	uint32_t c = x->cp[i];

	if ((n = contraction(x, i, 1)) > 0)
		return n;
	/* [^\r\n\p{L}\p{N}]?\p{L}+ */
	j = i;
	if (c != '\r' && c != '\n' && !isletter(c) && !isnumber_u(c) && i + 1 < x->n &&
	    isletter(x->cp[i + 1]))
		j = i + 1;
	if (isletter(x->cp[j])) {
		while (j < x->n && isletter(x->cp[j]))
			j++;
		return j - i;
	}
	/* \p{N}{1,3} */
	if (isnumber_u(c)) {
		for (j = i; j < x->n && j < i + 3 && isnumber_u(x->cp[j]); j++)
			;
		return j - i;
	}
	/*  ?[^\s\p{L}\p{N}]+[\r\n]* */
	j = i + (c == ' ' && i + 1 < x->n && other(x->cp[i + 1]));
	if (other(x->cp[j])) {
		while (j < x->n && other(x->cp[j]))
			j++;
		while (j < x->n && (x->cp[j] == '\r' || x->cp[j] == '\n'))
			j++;
		return j - i;
	}
	/* \s*[\r\n]+: up to the last line break of the space run */
	for (e = i; e < x->n && isspace_u(x->cp[e]); e++)
		;
	for (p = e; p > i && x->cp[p - 1] != '\r' && x->cp[p - 1] != '\n'; p--)
		;
	if (p > i)
		return p - i;
	return spaces(x, i);
}

/* Appends id to the output (counted past cap). */
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

/* Byte-level BPE of one piece s[0..n-1]; sym has room for n ints. */
static void
bpe(const dprt_tokenizer *t, const char *s, size_t n, int *sym, Out *o)
{
	size_t i, m = 0, best;
	int id, rank;

	if (t->ignore_merges && (id = lookup(t, s, n)) >= 0) {
		emit(o, id);
		return;
	}
	for (i = 0; i < n; i++)   /* bytes the vocabulary lacks are dropped, as tokenizers does */
		if ((id = lookup(t, s + i, 1)) >= 0)
			sym[m++] = id;
	for (;;) {
		const Merge *g;
		rank = -1;
		best = 0;
		for (i = 0; i + 1 < m; i++) {
			g = findmerge(t, sym[i], sym[i + 1]);
			if (g->key != -1 && (rank < 0 || g->rank < rank)) {
				rank = g->rank;
				best = i;
			}
		}
		if (rank < 0)
			break;
		sym[best] = findmerge(t, sym[best], sym[best + 1])->id;
		memmove(sym + best + 1, sym + best + 2, (m - best - 2) * sizeof *sym);
		m--;
	}
	for (i = 0; i < m; i++)
		emit(o, sym[i]);
}

/* Pre-tokenizes and encodes plain text s[0..n-1] (no added tokens in it). */
static int
plain(const dprt_tokenizer *t, const char *s, size_t n, Out *o)
{
	Text x = {0};
	size_t i, k, len, pn;
	int *sym = NULL;
	char *buf = NULL;
	int rc = -1;

	if (n == 0)
		return 0;
	pn = n + (size_t)t->prefix;
	buf = malloc(pn);
	x.cp = malloc((pn + 1) * sizeof *x.cp);
	x.at = malloc((pn + 1) * sizeof *x.at);
	sym = malloc(pn * sizeof *sym);
	if (!buf || !x.cp || !x.at || !sym)
		goto done;
	k = 0;
	if (t->prefix && s[0] != ' ')
		buf[k++] = ' ';
	memcpy(buf + k, s, n);
	pn = k + n;
	for (i = 0; i < pn; i += len) {
		x.at[x.n] = i;
		len = (size_t)utf8((const unsigned char *)buf + i, pn - i, &x.cp[x.n]);
		x.n++;
	}
	x.at[x.n] = pn;
	for (i = 0; i < x.n; i += len) {
		len = t->pre == PRE_GPT2 ? gpt2(&x, i) : llama3(&x, i);
		if (len == 0)
			len = 1;   /* not reached: every code point matches */
		bpe(t, buf + x.at[i], x.at[i + len] - x.at[i], sym, o);
	}
	rc = 0;
done:
	free(buf);
	free(x.cp);
	free(x.at);
	free(sym);
	return rc;
}

int64_t
dprt_tok_encode(const dprt_tokenizer *t, const char *text, size_t n, int special,
                int64_t *ids, int64_t cap)
{
	Out o = {ids, cap, 0};
	size_t i = 0, start = 0;
	int k;

	if (special)
		for (k = 0; k < t->nbefore; k++)
			emit(&o, t->before[k]);
	while (i < n) {   /* added tokens, leftmost then longest */
		int hit = -1;
		for (k = 0; k < t->nadded; k++) {
			const Tok *a = &t->tok[t->added[k]];
			if (a->n > 0 && (size_t)a->n <= n - i && memcmp(text + i, a->s, (size_t)a->n) == 0) {
				hit = t->added[k];
				break;
			}
		}
		if (hit < 0) {
			i++;
			continue;
		}
		if (plain(t, text + start, i - start, &o) != 0)
			return -1;
		emit(&o, hit);
		i += (size_t)t->tok[hit].n;
		start = i;
	}
	if (plain(t, text + start, n - start, &o) != 0)
		return -1;
	if (special)
		for (k = 0; k < t->nafter; k++)
			emit(&o, t->after[k]);
	return o.n;
}

/* Appends bytes, counting past cap. */
static void
put(char *buf, int64_t cap, int64_t *n, const void *s, size_t len)
{
	if (*n < cap)
		memcpy(buf + *n, s, (size_t)(cap - *n) < len ? (size_t)(cap - *n) : len);
	*n += (int64_t)len;
}

int64_t
dprt_tok_decode(const dprt_tokenizer *t, const int64_t *ids, int64_t n, int skip, char *buf,
                int64_t cap)
{
	static const char repl[] = "\xef\xbf\xbd";
	size_t total = 0, i, len;
	int64_t k, out = 0;
	char *raw;

	for (k = 0; k < n; k++)
		if (ids[k] >= 0 && ids[k] < t->ntok && !(skip && t->tok[ids[k]].special))
			total += (size_t)t->tok[ids[k]].n;
	if ((raw = malloc(total + 1)) == NULL)
		return -1;
	for (total = 0, k = 0; k < n; k++)   /* unknown ids are dropped, as tokenizers does */
		if (ids[k] >= 0 && ids[k] < t->ntok && !(skip && t->tok[ids[k]].special)) {
			memcpy(raw + total, t->tok[ids[k]].s, (size_t)t->tok[ids[k]].n);
			total += (size_t)t->tok[ids[k]].n;
		}
	for (i = 0; i < total; i += len) {   /* invalid UTF-8 as U+FFFD, like from_utf8_lossy */
		const unsigned char *s = (const unsigned char *)raw + i;
		uint32_t cp;
		len = (size_t)utf8(s, total - i, &cp);
		if (cp < 0x110000) {
			put(buf, cap, &out, s, len);
			continue;
		}
		/* the maximal prefix of a valid sequence goes as one U+FFFD */
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
		put(buf, cap, &out, repl, 3);
	}
	free(raw);
	return out;
}

int64_t
dprt_tok_id(const dprt_tokenizer *t, const char *token)
{
	int k;

	for (k = 0; k < t->nadded; k++)
		if ((size_t)t->tok[t->added[k]].n == strlen(token) &&
		    memcmp(t->tok[t->added[k]].s, token, strlen(token)) == 0)
			return t->added[k];
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

/* The bytes a token's string stands for: each character through the
 * byte-level alphabet, or the string's own bytes when one is outside it. */
static int
tokbytes(const dprt_tokenizer *t, const char *s, Tok *k)
{
	size_t n = strlen(s), i, len;
	int m = 0;

	k->s = malloc(n + 1);
	if (k->s == NULL)
		return -1;
	for (i = 0; i < n; i += len) {
		uint32_t cp;
		len = (size_t)utf8((const unsigned char *)s + i, n - i, &cp);
		if (cp >= sizeof t->cp2byte / sizeof *t->cp2byte || t->cp2byte[cp] < 0)
			break;
		k->s[m++] = (char)t->cp2byte[cp];
	}
	if (i < n) {
		memcpy(k->s, s, n);
		m = (int)n;
	}
	k->n = m;
	return 0;
}

static size_t
pow2(size_t n)
{
	size_t c = 16;

	while (c < 2 * n)
		c *= 2;
	return c;
}


/* The template's ids around $A: TemplateProcessing's "single". */
static int
template(dprt_tokenizer *t, json_t *pp, const char *what, char *err, size_t errn)
{
	json_t *single = json_object_get(pp, "single"), *sp = json_object_get(pp, "special_tokens");
	json_t *e, *ids, *x;
	size_t i, j;
	int seen = 0;

	if (!json_is_array(single))
		return dprt_errf(err, errn, "%s: TemplateProcessing without a single template", what);
	json_array_foreach(single, i, e) {
		json_t *st = json_object_get(e, "SpecialToken");
		if (json_object_get(e, "Sequence")) {
			seen = 1;
			continue;
		}
		ids = json_object_get(json_object_get(sp, json_string_value(json_object_get(st, "id"))),
		                      "ids");
		if (!json_is_array(ids))
			return dprt_errf(err, errn, "%s: the template's special token has no ids", what);
		json_array_foreach(ids, j, x) {
			int *nn = seen ? &t->nafter : &t->nbefore;
			int64_t *dst = seen ? t->after : t->before;
			if (!json_is_integer(x) || *nn >= 8)
				return dprt_errf(err, errn, "%s: bad template ids", what);
			dst[(*nn)++] = json_integer_value(x);
		}
	}
	return 0;
}

/* Reads the pre-tokenizer: ByteLevel with GPT-2's regex, or a Split on
 * Llama-3's regex then ByteLevel without one. */
static int
pretok(dprt_tokenizer *t, json_t *p, const char *what, char *err, size_t errn)
{
	const char *type = json_string_value(json_object_get(p, "type"));
	json_t *bl = p;

	if (type && strcmp(type, "Sequence") == 0) {
		json_t *l = json_object_get(p, "pretokenizers"), *sp = json_array_get(l, 0);
		const char *re = json_string_value(json_object_get(json_object_get(sp, "pattern"), "Regex"));
		const char *beh = json_string_value(json_object_get(sp, "behavior"));
		bl = json_array_get(l, 1);
		if (json_array_size(l) != 2 || !re || (strcmp(re, llama3re) != 0 &&
		    strcmp(re, gpt2re) != 0) || !beh ||
		    strcmp(beh, "Isolated") != 0 || json_is_true(json_object_get(sp, "invert")) ||
		    json_is_true(json_object_get(bl, "use_regex")))
			return dprt_errf(err, errn, "%s: a pre-tokenizer sequence other than a Split on "
			                 "Llama-3's or GPT-2's regex, then ByteLevel", what);
		t->pre = strcmp(re, llama3re) == 0 ? PRE_LLAMA3 : PRE_GPT2;
	} else {
		t->pre = PRE_GPT2;
		if (json_is_false(json_object_get(p, "use_regex")))
			return dprt_errf(err, errn, "%s: ByteLevel without its regex alone", what);
	}
	type = json_string_value(json_object_get(bl, "type"));
	if (!type || strcmp(type, "ByteLevel") != 0)
		return dprt_errf(err, errn, "%s: pre-tokenizer %s (DevProc reads byte-level BPE "
		                 "tokenizers: ByteLevel)", what, type ? type : "(none)");
	t->prefix = json_is_true(json_object_get(bl, "add_prefix_space"));
	return 0;
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

int
dprt_tok_parse(const char *json, size_t n, const char *what, dprt_tokenizer **tp, char *err,
               size_t errn)
{
	json_error_t je;
	json_t *root = json_loadb(json, n, 0, &je), *model, *vocab, *merges, *added, *v, *pp;
	dprt_tokenizer *t = NULL;
	const char *key, *type;
	size_t i;
	int maxid = -1, rc = -1;

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
	type = json_string_value(json_object_get(model, "type"));
	if (!type || strcmp(type, "BPE") != 0 || !json_is_object(vocab) || !json_is_array(merges)) {
		dprt_errf(err, errn, "%s: the model is not BPE with a vocab and merges", what);
		goto done;
	}
	if (json_is_true(json_object_get(model, "byte_fallback")) ||
	    affix(json_object_get(model, "continuing_subword_prefix")) ||
	    affix(json_object_get(model, "end_of_word_suffix"))) {
		dprt_errf(err, errn, "%s: a BPE model with byte_fallback or word affixes (DevProc "
		          "reads byte-level BPE)", what);
		goto done;
	}
	if (set(json_object_get(root, "normalizer")) || set(json_object_get(root, "truncation")) ||
	    set(json_object_get(root, "padding"))) {
		dprt_errf(err, errn, "%s: a normalizer, truncation or padding (DevProc reads none)",
		          what);
		goto done;
	}
	if ((t = calloc(1, sizeof *t)) == NULL)
		goto oom;
	alphabet(t);
	t->ignore_merges = json_is_true(json_object_get(model, "ignore_merges"));
	if (pretok(t, json_object_get(root, "pre_tokenizer"), what, err, errn) != 0)
		goto done;
	pp = json_object_get(root, "post_processor");
	type = json_string_value(json_object_get(pp, "type"));
	if (type && strcmp(type, "TemplateProcessing") == 0) {
		if (template(t, pp, what, err, errn) != 0)
			goto done;
	} else if (set(pp) && !(type && strcmp(type, "ByteLevel") == 0)) {
		dprt_errf(err, errn, "%s: post-processor %s", what, type ? type : "(unknown)");
		goto done;
	}
	type = json_string_value(json_object_get(json_object_get(root, "decoder"), "type"));
	if (!type || strcmp(type, "ByteLevel") != 0) {
		dprt_errf(err, errn, "%s: decoder %s (DevProc decodes ByteLevel)", what,
		          type ? type : "(none)");
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
		if (json_is_true(json_object_get(v, "lstrip")) ||
		    json_is_true(json_object_get(v, "rstrip")) ||
		    json_is_true(json_object_get(v, "single_word"))) {
			dprt_errf(err, errn, "%s: added token '%s' strips or matches whole words "
			          "(DevProc matches added tokens exactly)", what,
			          json_string_value(json_object_get(v, "content")));
			goto done;
		}
		if (json_integer_value(id) > maxid)
			maxid = (int)json_integer_value(id);
	}
	t->ntok = maxid + 1;
	t->tok = calloc((size_t)t->ntok + 1, sizeof *t->tok);
	t->vcap = pow2((size_t)t->ntok);
	t->vocab = malloc(t->vcap * sizeof *t->vocab);
	t->added = calloc(json_array_size(added) + 1, sizeof *t->added);
	if (!t->tok || !t->vocab || !t->added)
		goto oom;
	memset(t->vocab, -1, t->vcap * sizeof *t->vocab);
	json_object_foreach(vocab, key, v) {
		Tok *k = &t->tok[json_integer_value(v)];
		free(k->s);
		if (tokbytes(t, key, k) != 0)
			goto oom;
	}
	json_array_foreach(added, i, v) {
		Tok *k = &t->tok[json_integer_value(json_object_get(v, "id"))];
		const char *c = json_string_value(json_object_get(v, "content"));
		free(k->s);
		if ((k->s = malloc(strlen(c) + 1)) == NULL)
			goto oom;
		memcpy(k->s, c, strlen(c));
		k->n = (int)strlen(c);
		k->added = 1;
		k->special = json_is_true(json_object_get(v, "special"));
		t->added[t->nadded++] = (int)json_integer_value(json_object_get(v, "id"));
	}
	for (i = 0; i < (size_t)t->ntok; i++)   /* the vocabulary's own ids win */
		if (t->tok[i].s && !t->tok[i].added)
			insert(t, (int)i);
	for (i = 0; i < (size_t)t->nadded; i++) {   /* longest first, then in file order */
		size_t j;
		for (j = i; j > 0 && t->tok[t->added[j]].n > t->tok[t->added[j - 1]].n; j--) {
			int x = t->added[j];
			t->added[j] = t->added[j - 1];
			t->added[j - 1] = x;
		}
	}

	/* merges: (left, right) -> rank, the merged token */
	t->mcap = pow2(json_array_size(merges));
	if ((t->merge = malloc(t->mcap * sizeof *t->merge)) == NULL)
		goto oom;
	for (i = 0; i < t->mcap; i++)
		t->merge[i].key = -1;
	json_array_foreach(merges, i, v) {
		const char *a = NULL, *b = NULL;
		char *sa = NULL, *sp;
		Tok ta = {0}, tb = {0}, tab = {0};
		int ia, ib, iab;
		Merge *g;
		if (json_is_array(v) && json_array_size(v) == 2) {
			a = json_string_value(json_array_get(v, 0));
			b = json_string_value(json_array_get(v, 1));
		} else if (json_is_string(v) && (sa = strdup(json_string_value(v))) != NULL &&
		           (sp = strchr(sa, ' ')) != NULL) {
			*sp = '\0';
			a = sa, b = sp + 1;
		}
		if (!a || !b || tokbytes(t, a, &ta) != 0 || tokbytes(t, b, &tb) != 0 ||
		    (tab.s = malloc((size_t)(ta.n + tb.n) + 1)) == NULL) {
			free(sa), free(ta.s), free(tb.s);
			dprt_errf(err, errn, "%s: merge %zu is not a pair of tokens", what, i);
			goto done;
		}
		memcpy(tab.s, ta.s, (size_t)ta.n);
		memcpy(tab.s + ta.n, tb.s, (size_t)tb.n);
		ia = lookup(t, ta.s, (size_t)ta.n);
		ib = lookup(t, tb.s, (size_t)tb.n);
		iab = lookup(t, tab.s, (size_t)(ta.n + tb.n));
		free(ta.s), free(tb.s), free(tab.s);
		if (ia < 0 || ib < 0 || iab < 0) {
			dprt_errf(err, errn, "%s: merge %zu ('%s' '%s') names a token the vocab lacks",
			          what, i, a, b);
			free(sa);
			goto done;
		}
		free(sa);
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
	free(t->tok);
	free(t->vocab);
	free(t->merge);
	free(t->added);
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
