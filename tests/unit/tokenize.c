/* tokenize.c: the runtime's tokenizer against the `tokenizers` library
 * (TAP): tests/data/tokenizer/refs.json holds, for every string of a corpus
 * (Unicode, emoji, whitespace runs, CJK, numbers, punctuation, special
 * tokens in the text), the ids and decoded text that tokenizers 0.23 gave
 * with gpt2.json and llama3.json (tools/make_tokenizer_refs.py, run where
 * the library is).  Also the error of files it cannot read. */
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
same_text(const dprt_tokenizer *t, json_t *ids, const char *want, size_t wn)
{
	int64_t v[4096], m;
	char buf[8192];
	size_t i;

	for (i = 0; i < json_array_size(ids) && i < 4096; i++)
		v[i] = json_integer_value(json_array_get(ids, i));
	m = dprt_tok_decode(t, v, (int64_t)i, 0, buf, sizeof buf);
	if (m != (int64_t)wn || memcmp(buf, want, wn) != 0) {
		printf("# decoded %lld bytes '%.*s', want %zu\n", (long long)m,
		       (int)(m < 8192 ? m : 8192), buf, wn);
		return 0;
	}
	return 1;
}

/* test-tokenize --case REFS K KEY LENGTH PAD TEXT IDS [BYTES DECODED]: writes
 * string K of the corpus to the file TEXT, the ids tokenizers gave it
 * (refs' KEY: "gpt2", "llama3", "llama3_bos"), padded with PAD to
 * i64[1,LENGTH], to the .npy IDS, and (llama3) its decoded text,
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

	if (refs == NULL || v == NULL || (r = json_array_get(refs, (size_t)k)) == NULL)
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
	if (argc > 10) {
		int64_t nb = atoll(argv[9]);
		char *b = calloc((size_t)nb + 1, 1);
		t = json_object_get(r, "llama3_text");
		if (b == NULL || (int64_t)json_string_length(t) > nb)
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

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "tests/data/tokenizer";
	static const char *const names[] = {"gpt2", "llama3"};
	dprt_tokenizer *tok[2];
	char path[512], err[512], key[32];
	json_error_t je;
	json_t *refs, *r;
	size_t i;
	int k, all[2] = {1, 1}, alltext[2] = {1, 1}, bos = 1;

	if (argc >= 9 && strcmp(argv[1], "--case") == 0)
		return writecase(argv, argc);
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs("usage: test-tokenize [DIR]\n"
		      "       test-tokenize --case REFS K KEY LENGTH PAD TEXT IDS [BYTES DECODED]\n"
		      "Runs the runtime tokenizer's tests against DIR/refs.json (default\n"
		      "tests/data/tokenizer), printing TAP; --case writes string K of the\n"
		      "corpus and what a pipeline must compute of it (tests/tokenize.t;\n"
		      "exit status 2 when K is past the corpus).\n", stdout);
		return 0;
	}

	for (k = 0; k < 2; k++) {
		snprintf(path, sizeof path, "%s/%s.json", dir, names[k]);
		if (dprt_tok_load(path, &tok[k], err, sizeof err) != 0) {
			printf("1..1\nnot ok 1 - %s\n", err);
			return 1;
		}
	}
	snprintf(path, sizeof path, "%s/refs.json", dir);
	if ((refs = json_load_file(path, 0, &je)) == NULL) {
		printf("1..1\nnot ok 1 - %s: %s\n", path, je.text);
		return 1;
	}
	json_array_foreach(refs, i, r) {
		json_t *text = json_object_get(r, "text");
		const char *s = json_string_value(text);
		size_t len = json_string_length(text);
		for (k = 0; k < 2; k++) {
			json_t *t2;
			int good = same_ids(tok[k], s, len, 0, json_object_get(r, names[k]));
			ok(good, "%s: the ids of string %d equal tokenizers'", names[k], (int)i);
			all[k] &= good;
			snprintf(key, sizeof key, "%s_text", names[k]);
			t2 = json_object_get(r, key);
			alltext[k] &= same_text(tok[k], json_object_get(r, names[k]), json_string_value(t2),
			                        json_string_length(t2));
		}
		bos &= same_ids(tok[1], s, len, 1, json_object_get(r, "llama3_bos"));
	}
	for (k = 0; k < 2; k++) {
		ok(all[k], "%s: every string of the corpus%.0d encodes as tokenizers encodes it",
		   names[k], 0);
		ok(alltext[k], "%s: decoding each string's ids gives tokenizers' text%.0d", names[k], 0);
	}
	ok(bos, "%s: with add_special_tokens, the template's <|begin_of_text|> comes first%.0d",
	   "llama3", 0);
	ok(dprt_tok_id(tok[1], "<|eot_id|>") == 2 && dprt_tok_id(tok[0], "<|endoftext|>") == 0,
	   "%s: special tokens by name%.0d", "dprt_tok_id", 0);
	{
		/* invalid UTF-8 from ids that split a character: U+FFFD, as from_utf8_lossy */
		int64_t ids[2] = {dprt_tok_id(tok[0], "\xe6"), dprt_tok_id(tok[0], "a")};
		char buf[16];
		int64_t m = dprt_tok_decode(tok[0], ids, 2, 0, buf, sizeof buf);
		ok(ids[0] >= 0 && m == 4 && memcmp(buf, "\xef\xbf\xbd" "a", 4) == 0,
		   "%s: a lone lead byte decodes to U+FFFD%.0d", "decode", 0);
	}
	{
		static const char *const bad[][2] = {
			{"{\"model\": {\"type\": \"WordPiece\"}}", "x.json: the model is not BPE with a vocab and merges"},
			{"[1]", "x.json: not a JSON object"},
			{"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [[\"a\", \"b\"]]},"
			 " \"normalizer\": null, \"truncation\": null, \"padding\": null,"
			 " \"pre_tokenizer\": {\"type\": \"ByteLevel\"}, \"post_processor\": null,"
			 " \"decoder\": {\"type\": \"ByteLevel\"}}", "x.json: merge 0 ('a' 'b') names a token the vocab lacks"},
			{"{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []},"
			 " \"normalizer\": null, \"truncation\": null, \"padding\": null,"
			 " \"pre_tokenizer\": {\"type\": \"Metaspace\"}, \"post_processor\": null,"
			 " \"decoder\": {\"type\": \"ByteLevel\"}}",
			 "x.json: pre-tokenizer Metaspace (DevProc reads byte-level BPE tokenizers: ByteLevel)"},
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
		for (k = 0; k < 4; k++) {
			dprt_tokenizer *t;
			int rc = dprt_tok_parse(bad[k][0], strlen(bad[k][0]), "x.json", &t, err, sizeof err);
			if (rc == 0 || strcmp(err, bad[k][1]) != 0)
				printf("# got: %s\n# want: %s\n", rc ? err : "success", bad[k][1]);
			ok(rc != 0 && strcmp(err, bad[k][1]) == 0, "%s %d: refused with its message",
			   "a tokenizer.json DevProc cannot read,", k);
		}
	}
	for (k = 0; k < 2; k++)
		dprt_tok_free(tok[k]);
	json_decref(refs);
	printf("1..%d\n", n);
	return fails != 0;
}
