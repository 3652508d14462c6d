/* run.c: one import run in memory: the pipeline parsed, its models inlined,
 * the weight blob finished and the IR checked (main.c writes the result; the
 * fuzz harnesses call it in-process). */
#include "import.h"

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
	dp_hash_hex(dp_hash(imp->src->text, imp->src->len, DP_HASH_INIT), hash);
	dp_adddep(fn, dep, hash);
	pt2_deps(imp);
	blob_finish(&imp->blob);
	dp_hash_hex(dp_hash(imp->blob.buf, imp->blob.len, DP_HASH_INIT), hash);
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
	blob_free(&imp->blob);
	dp_free(imp->fn);
	imp->fn = NULL;
}
