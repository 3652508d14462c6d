/* tokenize.c: the runtime's tokenizer against the `tokenizers` library
 * (TAP): tests/data/tokenizer/refs.json holds, for every string of a corpus
 * (Unicode, emoji, whitespace runs, CJK, numbers, punctuation, special
 * tokens in the text, combining marks) and every tokenizer style it names
 * (STYLE.json beside it), the ids and decoded text that the library gave
 * (tools/make_tokenizer_refs.py, run where the library is).  Then small
 * tokenizers written here, with ids worked out by hand: byte fallback,
 * <unk>, the Split behaviors, NFC, Metaspace; and the errors of files it
 * cannot read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "dprt.h"

static int n, fails;

static void
ok(int c, const char *fmt, const char *a, int i)
{
	printf("%sok %d - ", c ? "" : "not ", ++n);
	printf(fmt, a, i);
	printf("\n");
	fails += !c;
}

/* Whether tokenizer t encodes text as ids (special: with the template). */
static int
same_ids(const dprt_tokenizer *t, const char *text, size_t len, int special, json_t *want)
{
	int64_t ids[4096], m = dprt_tok_encode(t, text, len, special, ids, 4096);
	size_t i;

	if (m != (int64_t)json_array_size(want)) {
		printf("# %lld ids, want %zu:", (long long)m, json_array_size(want));
		for (i = 0; i < (size_t)m && i < 4096; i++)
			printf(" %lld", (long long)ids[i]);
		printf("\n");
		return 0;
	}
	for (i = 0; i < (size_t)m; i++)
		if (ids[i] != json_integer_value(json_array_get(want, i))) {
			printf("# id %zu is %lld, want %lld\n", i, (long long)ids[i],
			       (long long)json_integer_value(json_array_get(want, i)));
			return 0;
		}
	return 1;
}

static int
same_text(const dprt_tokenizer *t, json_t *ids, int skip, const char *want, size_t wn)
{
	int64_t v[4096], m;
	char buf[8192];
	size_t i;

	for (i = 0; i < json_array_size(ids) && i < 4096; i++)
		v[i] = json_integer_value(json_array_get(ids, i));
	m = dprt_tok_decode(t, v, (int64_t)i, skip, buf, sizeof buf);
	if (m != (int64_t)wn || memcmp(buf, want, wn) != 0) {
		printf("# decoded %lld bytes '%.*s', want %zu\n", (long long)m,
		       (int)(m < 8192 ? m : 8192), buf, wn);
		return 0;
	}
	return 1;
}

/* The corpus: refs' "cases" (or, in the first format, refs itself). */
static json_t *
cases(json_t *refs)
{
	return json_is_array(refs) ? refs : json_object_get(refs, "cases");
}

/* test-tokenize --case REFS K KEY LENGTH PAD TEXT IDS [BYTES DECODED TKEY]:
 * writes string K of the corpus to the file TEXT, the ids tokenizers gave
 * it (refs' KEY: "gpt2", "llama3_special", ...), padded with PAD to
 * i64[1,LENGTH], to the .npy IDS, and refs' text TKEY ("llama3_skip"),
 * NUL-padded to u8[BYTES], to the .npy DECODED: what a pipeline must
 * compute (tests/tokenize.t).  Exit status 2 when K is past the corpus. */
static int
writecase(char **argv, int argc)
{
	json_error_t je;
	json_t *refs = json_load_file(argv[2], 0, &je), *r, *ids, *t;
	int64_t k = atoll(argv[3]), len = atoll(argv[5]), pad = atoll(argv[6]), dim[2] = {1, len};
	int64_t *v = calloc((size_t)len + 1, sizeof *v), i;
	char err[256];
	FILE *f;

	if (refs == NULL || v == NULL || (r = json_array_get(cases(refs), (size_t)k)) == NULL)
		return 2;
	t = json_object_get(r, "text");
	ids = json_object_get(r, argv[4]);
	if ((f = fopen(argv[7], "wb")) == NULL ||
	    fwrite(json_string_value(t), 1, json_string_length(t), f) != json_string_length(t) ||
	    fclose(f) != 0 || (int64_t)json_array_size(ids) > len)
		return 1;
	for (i = 0; i < len; i++)
		v[i] = i < (int64_t)json_array_size(ids) ? json_integer_value(json_array_get(ids, i)) : pad;
	if (dprt_npy_write(argv[8], DPRT_I64, 2, dim, v, err, sizeof err) != 0)
		return 1;
	if (argc > 11) {
		int64_t nb = atoll(argv[9]);
		char *b = calloc((size_t)nb + 1, 1);
		t = json_object_get(r, argv[11]);
		if (b == NULL || !json_is_string(t) || (int64_t)json_string_length(t) > nb)
			return 1;
		memcpy(b, json_string_value(t), json_string_length(t));
		if (dprt_npy_write(argv[10], DPRT_U8, 1, &nb, b, err, sizeof err) != 0)
			return 1;
		free(b);
	}
	free(v);
	json_decref(refs);
	return 0;
}


/* A tokenizer.json of vocab V (a JSON object's members), merges M, and
 * the rest R (members after the model's), parsed; NULL (and a diagnostic)
 * when it does not load. */
static dprt_tokenizer *
small(const char *model, const char *rest)
{
	char json[4096], err[512];
	dprt_tokenizer *t;

	snprintf(json, sizeof json, "{\"model\": {\"type\": \"BPE\", %s}, %s}", model, rest);
	if (dprt_tok_parse(json, strlen(json), "x.json", &t, err, sizeof err) != 0) {
		printf("# %s\n", err);
		return NULL;
	}
	return t;
}

/* Whether t encodes s (special: with the template) as the m ids want. */
static int
encodes(const dprt_tokenizer *t, const char *s, int special, const int64_t *want, int m)
{
	int64_t ids[64] = {0}, k = t ? dprt_tok_encode(t, s, strlen(s), special, ids, 64) : -1;
	int i;

	if (k == m && memcmp(ids, want, (size_t)m * sizeof *ids) == 0)
		return 1;
	printf("# '%s':", s);
	for (i = 0; i < k && i < 64; i++)
		printf(" %lld", (long long)ids[i]);
	printf("\n");
	return 0;
}

/* Whether t decodes the m ids (skip: without specials) as want. */
static int
decodes(const dprt_tokenizer *t, const int64_t *ids, int m, int skip, const char *want)
{
	char buf[256];
	int64_t k = t ? dprt_tok_decode(t, ids, m, skip, buf, sizeof buf) : -1;

	if (k == (int64_t)strlen(want) && memcmp(buf, want, (size_t)k) == 0)
		return 1;
	printf("# decoded '%.*s'\n", (int)(k > 0 && k < 256 ? k : 0), buf);
	return 0;
}

#define IDS(...) (const int64_t[]){__VA_ARGS__}, (int)(sizeof (int64_t[]){__VA_ARGS__} / 8)

/* Tokenizers written here, their ids worked out by hand. */
static void
handmade(void)
{
	static const char sp[] =   /* SentencePiece converted: U+2581 for spaces, byte fallback */
		"\"vocab\": {\"<unk>\": 0, \"<s>\": 1, \"</s>\": 2, \"<0xC3>\": 3, \"<0xA9>\": 4,"
		" \"\xe2\x96\x81\": 5, \"a\": 6, \"b\": 7, \"\xe2\x96\x81" "a\": 8, \"ab\": 9,"
		" \"\xe2\x96\x81" "ab\": 10}, \"merges\": [\"\xe2\x96\x81 a\", \"a b\", \"\xe2\x96\x81" "a b\"],"
		" \"byte_fallback\": true, \"unk_token\": \"<unk>\", \"fuse_unk\": %s";
	static const char sprest[] =
		"\"added_tokens\": [{\"id\": 0, \"content\": \"<unk>\", \"special\": true, \"normalized\": false},"
		" {\"id\": 1, \"content\": \"<s>\", \"special\": true, \"normalized\": false},"
		" {\"id\": 2, \"content\": \"</s>\", \"special\": true, \"normalized\": false}],"
		" \"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\","
		" \"prepend\": \"\xe2\x96\x81\"}, {\"type\": \"Replace\", \"pattern\": {\"String\": \" \"},"
		" \"content\": \"\xe2\x96\x81\"}]}, \"pre_tokenizer\": null,"
		" \"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\":"
		" {\"id\": \"<s>\", \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}],"
		" \"special_tokens\": {\"<s>\": {\"id\": \"<s>\", \"ids\": [1], \"tokens\": [\"<s>\"]}}},"
		" \"decoder\": {\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Replace\", \"pattern\":"
		" {\"String\": \"\xe2\x96\x81\"}, \"content\": \" \"}, {\"type\": \"ByteFallback\"},"
		" {\"type\": \"Fuse\"}, {\"type\": \"Strip\", \"content\": \" \", \"start\": 1, \"stop\": 0}]}";
	static const char *const behaviors[] = {"Isolated", "Removed", "MergedWithPrevious",
	                                        "MergedWithNext", "Contiguous"};
	static const int64_t split[][8] = {   /* "a-a--a": count, ids */
		{6, 0, 1, 0, 1, 1, 0}, {3, 0, 0, 0}, {4, 2, 2, 1, 0}, {4, 0, 3, 1, 3}, {5, 0, 1, 0, 4, 0},
	};
	char model[1024], rest[1024];
	dprt_tokenizer *t;
	int k, good;

	snprintf(model, sizeof model, sp, "true");
	t = small(model, sprest);
	ok(encodes(t, "ab ab", 0, IDS(10, 10)) && encodes(t, "ab ab", 1, IDS(1, 10, 10)),
	   "%s: U+2581 prepended and for spaces, merges by rank%.0d", "SentencePiece BPE", 0);
	ok(encodes(t, "\xc3\xa9", 0, IDS(5, 3, 4)) && decodes(t, IDS(5, 3, 4), 0, "\xc3\xa9"),
	   "%s: a character the vocab lacks as its UTF-8 bytes (<0xC3><0xA9>), decoded back%.0d",
	   "byte fallback", 0);
	ok(encodes(t, "axx", 0, IDS(8, 0)) && encodes(t, "ab</s>ab", 0, IDS(10, 2, 10)),
	   "%s: characters without a token or bytes as one fused <unk>; each stretch between "
	   "added tokens normalized alone%.0d", "<unk>", 0);
	ok(decodes(t, IDS(1, 10, 10), 1, "ab ab") && decodes(t, IDS(1, 10, 10), 0, "<s> ab ab") &&
	   decodes(t, IDS(7, 3), 0, "b\xef\xbf\xbd"),
	   "%s: Replace, ByteFallback (a lone byte as U+FFFD), Fuse, Strip; specials skipped or not%.0d",
	   "decoders", 0);
	dprt_tok_free(t);
	snprintf(model, sizeof model, sp, "false");
	t = small(model, sprest);
	ok(encodes(t, "axx", 0, IDS(8, 0, 0)), "%s: one <unk> a character%.0d", "fuse_unk false", 0);
	dprt_tok_free(t);

	for (k = 0; k < 5; k++) {
		snprintf(rest, sizeof rest, "\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"String\":"
		         " \"-\"}, \"behavior\": \"%s\", \"invert\": false}, \"decoder\": {\"type\": \"Fuse\"}",
		         behaviors[k]);
		t = small("\"vocab\": {\"a\": 0, \"-\": 1, \"a-\": 2, \"-a\": 3, \"--\": 4},"
		          " \"merges\": [\"a -\", \"- a\", \"- -\"]", rest);
		good = encodes(t, "a-a--a", 0, &split[k][1], (int)split[k][0]);
		ok(good, "Split behavior %s: the pieces of 'a-a--a' as tokenizers makes them%.0d",
		   behaviors[k], 0);
		dprt_tok_free(t);
	}
	t = small("\"vocab\": {\"a\": 0, \"-\": 1}, \"merges\": []", "\"pre_tokenizer\": {\"type\":"
	          " \"Split\", \"pattern\": {\"Regex\": \"a+\"}, \"behavior\": \"Removed\", \"invert\": true}");
	ok(encodes(t, "a-aa--a", 0, IDS(0, 0, 0, 0)) && decodes(t, IDS(0, 1), 0, "a -"),
	   "%s: a regex's matches kept, the rest removed; no decoder: tokens joined by spaces%.0d",
	   "Split inverted", 0);
	dprt_tok_free(t);

	t = small("\"vocab\": {\"\xc3\xa9\": 0, \"e\": 1, \"\xcc\x81\": 2}, \"merges\": []",
	          "\"normalizer\": {\"type\": \"NFC\"}");
	ok(encodes(t, "e\xcc\x81", 0, IDS(0)), "%s: e and U+0301 composed%.0d", "NFC", 0);
	dprt_tok_free(t);
	t = small("\"vocab\": {\"\xc3\xa9\": 0, \"e\": 1, \"\xcc\x81\": 2}, \"merges\": []",
	          "\"normalizer\": {\"type\": \"NFD\"}");
	ok(encodes(t, "\xc3\xa9", 0, IDS(1, 2)), "%s: U+00E9 decomposed%.0d", "NFD", 0);
	dprt_tok_free(t);

	for (k = 0; k < 2; k++) {
		snprintf(rest, sizeof rest, "\"added_tokens\": [{\"id\": 3, \"content\": \"<s>\", \"special\":"
		         " true, \"normalized\": false}], \"pre_tokenizer\": {\"type\": \"Metaspace\","
		         " \"replacement\": \"\xe2\x96\x81\", \"prepend_scheme\": \"%s\", \"split\": true},"
		         " \"decoder\": {\"type\": \"Metaspace\", \"replacement\": \"\xe2\x96\x81\","
		         " \"prepend_scheme\": \"%s\", \"split\": true}", k ? "always" : "first",
		         k ? "always" : "first");
		t = small("\"vocab\": {\"\xe2\x96\x81" "a\": 0, \"a\": 1, \"\xe2\x96\x81\": 2},"
		          " \"merges\": [\"\xe2\x96\x81 a\"]", rest);
		good = encodes(t, "a a", 0, IDS(0, 0)) && decodes(t, IDS(0, 0), 0, "a a") &&
		       (k ? encodes(t, "<s>a", 0, IDS(3, 0)) : encodes(t, "<s>a", 0, IDS(3, 1)));
		ok(good, "Metaspace, prepend_scheme %s: spaces as U+2581, split before each, prepended "
		   "where the scheme says%.0d", k ? "always" : "first", 0);
		dprt_tok_free(t);
	}

	for (k = 0; k < 2; k++) {
		snprintf(rest, sizeof rest, "\"added_tokens\": [{\"id\": 2, \"content\": \"<m>\", \"special\":"
		         " true, \"normalized\": false, \"lstrip\": %s}]", k ? "true" : "false");
		t = small("\"vocab\": {\"a\": 0, \" \": 1}, \"merges\": []", rest);
		good = k ? encodes(t, "a <m>a", 0, IDS(0, 2, 0)) : encodes(t, "a <m>a", 0, IDS(0, 1, 2, 0));
		ok(good, "an added token with lstrip %s%.0d", k ? "takes the spaces before it" :
		   "false leaves them", 0);
		dprt_tok_free(t);
	}

	t = small("\"vocab\": {\"a\": 0}, \"merges\": []", "\"pre_tokenizer\": {\"type\": \"Split\","
	          " \"pattern\": {\"Regex\": \"(a*)*b\"}, \"behavior\": \"Isolated\"}");
	ok(t && dprt_tok_encode(t, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac", 41, 0, NULL, 0) == -2,
	   "%s: a pre-tokenizer regex exponential on the text gives up (-2)%.0d", "encode", 0);
	dprt_tok_free(t);

	/* BERT: cleaned, CJK spaced, accents stripped, lowercased; split on spaces and
	 * punctuation; the longest entry, then ## ones; [CLS] and [SEP] around */
	t = small("\"type\": \"WordPiece\", \"vocab\": {\"[UNK]\": 0, \"[CLS]\": 1, \"[SEP]\": 2,"
	          " \"un\": 3, \"##aff\": 4, \"##able\": 5, \"!\": 6, \"\xe4\xb8\xad\": 7, \"cafe\": 8,"
	          " \"unaff\": 9, \"##x\": 10}, \"unk_token\": \"[UNK]\", \"max_input_chars_per_word\": 12",
	          "\"added_tokens\": [{\"id\": 1, \"content\": \"[CLS]\", \"special\": true},"
	          " {\"id\": 2, \"content\": \"[SEP]\", \"special\": true}],"
	          " \"normalizer\": {\"type\": \"BertNormalizer\", \"clean_text\": true,"
	          " \"handle_chinese_chars\": true, \"strip_accents\": null, \"lowercase\": true},"
	          " \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"},"
	          " \"post_processor\": {\"type\": \"BertProcessing\", \"sep\": [\"[SEP]\", 2],"
	          " \"cls\": [\"[CLS]\", 1]}, \"decoder\": {\"type\": \"WordPiece\", \"prefix\": \"##\","
	          " \"cleanup\": true}");
	ok(encodes(t, "UnAffable!\xe4\xb8\xad Caf\xc3\xa9\x01 unaffy", 1, IDS(1, 9, 5, 6, 7, 8, 0, 2)) &&
	   encodes(t, "unaffablexxxxx", 0, IDS(0)),
	   "%s: BertNormalizer, BertPreTokenizer, the longest pieces, [UNK] for a word without "
	   "or past max_input_chars_per_word%.0d", "WordPiece", 0);
	ok(decodes(t, IDS(1, 3, 4, 5, 6, 8, 2), 1, "unaffable! cafe"),
	   "%s: ## pieces joined, the others after a space, ' !' cleaned up%.0d", "WordPiece decoder", 0);
	dprt_tok_free(t);
}

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "tests/data/tokenizer";
	static const char *const first[] = {"gpt2", "llama3"};
	dprt_tokenizer *tok[16] = {0};
	char path[512], err[512], key[64];
	const char *names[16];
	json_error_t je;
	json_t *refs, *r, *st;
	size_t i;
	int k, ns = 0, all[16], alltext[16], allspec[16];

	if (argc >= 9 && strcmp(argv[1], "--case") == 0)
		return writecase(argv, argc);
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs("usage: test-tokenize [DIR]\n"
		      "       test-tokenize --case REFS K KEY LENGTH PAD TEXT IDS [BYTES DECODED TKEY]\n"
		      "Runs the runtime tokenizer's tests against DIR/refs.json (default\n"
		      "tests/data/tokenizer) and the tokenizers of its styles, printing TAP;\n"
		      "--case writes string K of the corpus and what a pipeline must compute\n"
		      "of it (tests/tokenize.t; exit status 2 when K is past the corpus).\n", stdout);
		return 0;
	}

	snprintf(path, sizeof path, "%s/refs.json", dir);
	if ((refs = json_load_file(path, 0, &je)) == NULL) {
		printf("1..1\nnot ok 1 - %s: %s\n", path, je.text);
		return 1;
	}
	st = json_object_get(refs, "styles");
	for (k = 0; k < 16 && k < (st ? (int)json_array_size(st) : 2); k++)
		names[ns++] = st ? json_string_value(json_array_get(st, (size_t)k)) : first[k];
	for (k = 0; k < ns; k++) {
		snprintf(path, sizeof path, "%s/%s.json", dir, names[k]);
		if (names[k] == NULL || dprt_tok_load(path, &tok[k], err, sizeof err) != 0) {
			printf("1..1\nnot ok 1 - %s\n", names[k] ? err : "refs.json: bad styles");
			return 1;
		}
		all[k] = alltext[k] = allspec[k] = 1;
	}
	json_array_foreach(cases(refs), i, r) {
		json_t *text = json_object_get(r, "text");
		const char *s = json_string_value(text);
		size_t len = json_string_length(text);
		for (k = 0; k < ns; k++) {
			json_t *t2, *sp;
			int good = same_ids(tok[k], s, len, 0, json_object_get(r, names[k]));
			ok(good, "%s: the ids of string %d equal tokenizers'", names[k], (int)i);
			all[k] &= good;
			snprintf(key, sizeof key, "%s_text", names[k]);
			t2 = json_object_get(r, key);
			alltext[k] &= same_text(tok[k], json_object_get(r, names[k]), 0, json_string_value(t2),
			                        json_string_length(t2));
			snprintf(key, sizeof key, "%s_special", names[k]);
			if ((sp = json_object_get(r, key)) == NULL && strcmp(names[k], "llama3") == 0)
				sp = json_object_get(r, "llama3_bos");   /* the first format */
			if (sp != NULL)
				allspec[k] &= same_ids(tok[k], s, len, 1, sp);
			snprintf(key, sizeof key, "%s_skip", names[k]);
			if (sp != NULL && (t2 = json_object_get(r, key)) != NULL)
				alltext[k] &= same_text(tok[k], sp, 1, json_string_value(t2),
				                        json_string_length(t2));
		}
	}
	for (k = 0; k < ns; k++) {
		ok(all[k], "%s: every string of the corpus%.0d encodes as tokenizers encodes it",
		   names[k], 0);
		ok(alltext[k], "%s: decoding each string's ids gives tokenizers' text%.0d", names[k], 0);
		ok(allspec[k], "%s: with add_special_tokens, the post-processor's ids as tokenizers'%.0d",
		   names[k], 0);
	}
	ok(dprt_tok_id(tok[1], "<|eot_id|>") == 2 && dprt_tok_id(tok[0], "<|endoftext|>") == 0,
	   "%s: special tokens by name%.0d", "dprt_tok_id", 0);
	{
		/* invalid UTF-8 from ids that split a character: U+FFFD, as from_utf8_lossy
		 * (U+00E6 is byte 0xE6 in the byte-level alphabet) */
		int64_t ids[2] = {dprt_tok_id(tok[0], "\xc3\xa6"), dprt_tok_id(tok[0], "a")};
		char buf[16];
		int64_t m = dprt_tok_decode(tok[0], ids, 2, 0, buf, sizeof buf);
		ok(ids[0] >= 0 && m == 4 && memcmp(buf, "\xef\xbf\xbd" "a", 4) == 0,
		   "%s: a lone lead byte decodes to U+FFFD%.0d", "decode", 0);
	}
	handmade();
	{
		static const char *const bad[][2] = {
			{"{\"model\": {\"type\": \"Unigram\"}}", "x.json: the model is Unigram, not BPE "
			 "with a vocab and merges (DevProc reads BPE and WordPiece models)"},
			{"[1]", "x.json: not a JSON object"},
			{"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [[\"a\", \"b\"]]},"
			 " \"normalizer\": null, \"truncation\": null, \"padding\": null,"
			 " \"pre_tokenizer\": {\"type\": \"ByteLevel\"}, \"post_processor\": null,"
			 " \"decoder\": {\"type\": \"ByteLevel\"}}", "x.json: merge 0 ('a' 'b') names a token the vocab lacks"},
			{"{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []},"
			 " \"pre_tokenizer\": {\"type\": \"UnicodeScripts\"}}",
			 "x.json: pre-tokenizer UnicodeScripts (DevProc reads Split, ByteLevel, Metaspace, "
			 "Digits, Punctuation, Whitespace, WhitespaceSplit, CharDelimiterSplit, "
			 "BertPreTokenizer and Sequence)"},
			{"{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []},"
			 " \"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"(a\"},"
			 " \"behavior\": \"Isolated\"}}", NULL},
			{"{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []},"
			 " \"normalizer\": {\"type\": \"Precompiled\"}}", "x.json: normalizer Precompiled "
			 "(DevProc reads NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace, Strip, "
			 "StripAccents, BertNormalizer and Sequence)"},
			{"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [],"
			 " \"unk_token\": \"<unk>\"}}", "x.json: the unk_token '<unk>' is not in the vocab"},
		};
		/* GPT-2's own files give the word affixes as "" */
		static const char gpt2like[] =
			"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2},"
			" \"merges\": [\"a b\"], \"continuing_subword_prefix\": \"\", \"end_of_word_suffix\": \"\"},"
			" \"normalizer\": null, \"pre_tokenizer\": {\"type\": \"ByteLevel\"},"
			" \"post_processor\": {\"type\": \"ByteLevel\"}, \"decoder\": {\"type\": \"ByteLevel\"}}";
		dprt_tokenizer *g;
		int64_t ab[4];
		int rc = dprt_tok_parse(gpt2like, strlen(gpt2like), "x.json", &g, err, sizeof err);
		if (rc != 0)
			printf("# %s\n", err);
		ok(rc == 0 && dprt_tok_encode(g, "ab", 2, 0, ab, 4) == 1 && ab[0] == 2,
		   "%s: empty word affixes and merges as \"a b\" strings read%.0d", "GPT-2's own format", 0);
		dprt_tok_free(rc == 0 ? g : NULL);
		for (k = 0; k < (int)(sizeof bad / sizeof *bad); k++) {
			dprt_tokenizer *t;
			int rc = dprt_tok_parse(bad[k][0], strlen(bad[k][0]), "x.json", &t, err, sizeof err);
			int good = rc != 0 && (bad[k][1] ? strcmp(err, bad[k][1]) == 0 :
			                       strncmp(err, "x.json: pre-tokenizer Split: regex", 34) == 0);
			if (!good)
				printf("# got: %s\n# want: %s\n", rc ? err : "success",
				       bad[k][1] ? bad[k][1] : "x.json: pre-tokenizer Split: regex ...");
			ok(good, "%s %d: refused with its message", "a tokenizer.json DevProc cannot read,", k);
		}
	}
	for (k = 0; k < ns; k++)
		dprt_tok_free(tok[k]);
	json_decref(refs);
	printf("1..%d\n", n);
	return fails != 0;
}
