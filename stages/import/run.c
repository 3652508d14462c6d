/* run.c: one import run in memory: the pipeline parsed, its models inlined,
 * the weight blob finished and the IR checked (main.c writes the result; the
 * fuzz harnesses call it in-process). */
#include "import.h"

/* The hash the IR records for the .dp: FNV-1a 64 of its text without
 * comments, blank lines and trailing or repeated blanks, so that an edit
 * of a comment or of spacing leaves the IR's bytes (and with Ninja's
 * restat, every later stage) as they were.  Strings keep every byte. */
static void
srchash(const char *s, size_t n, char hash[17])
{
	uint64_t h = DP_HASH_INIT;
	int str = 0, blank = 0, bol = 1;   /* in a string; blanks pending; at a line's start */
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (str) {
			h = dp_hash(&c, 1, h);
			if (c == '\\' && i + 1 < n)
				h = dp_hash(&s[++i], 1, h);
			else if (c == '"' || c == '\n')
				str = 0;
			continue;
		}
		if (c == '#')
			while (i + 1 < n && s[i + 1] != '\n')
				i++;
		else if (c == ' ' || c == '\t' || c == '\r')
			blank = 1;
		else if (c == '\n') {
			if (!bol)
				h = dp_hash("\n", 1, h);
			bol = 1, blank = 0;
		} else {
			if (blank && !bol)
				h = dp_hash(" ", 1, h);
			h = dp_hash(&c, 1, h);
			bol = 0, blank = 0, str = c == '"';
		}
	}
	dp_hash_hex(h, hash);
}

/* Builds imp->fn and imp->blob from imp->src: name is the pipeline's default
 * name, dep the .dp as the IR records it, wname the weight blob's file name.
 * Reports an error in the input and exits (or longjmps to imp_bail); IR that
 * does not verify is an internal error. */
void
imp_run(Imp *imp, const char *name, const char *dep, const char *wname)
{
	Err err = { 0 };
	char hash[17];
	imp->fn = dp_new(name, "import");
	blob_init(&imp->blob);
	parse(imp);
	Fn *fn = imp->fn;
	srchash(imp->src->text, imp->src->len, hash);
	dp_adddep(fn, dep, hash);
	pt2_deps(imp);
	dp_hash_hex(blob_finish(&imp->blob), hash);
	fn->weights = dp_strdup(fn->arena, wname);
	fn->whash = dp_strdup(fn->arena, hash);
	fn->wsize = (int64_t)imp->blob.len;
	dp_canon(fn);
	if (dp_verify(fn, &err))
		dp_die("the imported IR does not verify: %s", err.msg);
}

/* Frees everything a run owns, finished or stopped by an error. */
void
imp_free(Imp *imp)
{
	pt2_free(imp);
	text_free(imp);
	blob_free(&imp->blob);
	dp_free(imp->fn);
	imp->fn = NULL;
}
