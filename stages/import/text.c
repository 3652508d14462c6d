/* text.c: the tokenizer files of the text ops (tokenize, detokenize): read
 * once each, checked by the runtime's own reader, stored in the weight blob
 * as a u8 constant that becomes the op's second operand, and recorded as
 * dependencies of the IR and of Ninja's depfile. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "dprt.h"

int
text_file(Imp *imp, const char *path, Pos at)
{
	for (int i = 0; i < imp->ntext; i++)
		if (strcmp(imp->text[i].path, path) == 0)
			return imp->text[i].val;
	char *file = path[0] == '/' ? xstrdup(path) : strfmt("%s%s", imp->src->dir, path);
	FILE *f = fopen(file, "rb");
	char *buf = NULL, err[512];
	long n = -1;
	if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = xrealloc(NULL, (size_t)n + 1, 1);
		if (fread(buf, 1, (size_t)n, f) != (size_t)n)
			n = -1;
	}
	int e = errno;
	if (f)
		fclose(f);
	if (n < 0) {
		free(buf);
		free(file);
		errat(imp->src, at, "cannot read '%s': %s", path, f ? "read error" : strerror(e));
	}
	dprt_tokenizer *t;
	if (dprt_tok_parse(buf, (size_t)n, path, &t, err, sizeof err) != 0) {
		free(buf);
		free(file);
		errat(imp->src, at, "%s", err);
	}
	dprt_tok_free(t);
	imp->text = xrealloc(imp->text, (size_t)imp->ntext + 1, sizeof *imp->text);
	Textfile *x = &imp->text[imp->ntext++];
	memset(x, 0, sizeof *x);
	x->path = xstrdup(path);
	x->file = file;
	dp_hash_hex(dp_hash(buf, (size_t)n, DP_HASH_INIT), x->hash);
	Type ty = { .dtype = DP_U8, .dev = DEV_CPU, .rank = 1, .dim = { n } };
	x->val = imp_const(imp, buf, &ty);
	free(buf);
	return x->val;
}

void
text_free(Imp *imp)
{
	for (int i = 0; i < imp->ntext; i++) {
		free(imp->text[i].path);
		free(imp->text[i].file);
	}
	free(imp->text);
	imp->text = NULL;
	imp->ntext = 0;
}
