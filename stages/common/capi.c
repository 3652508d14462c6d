/* capi.c: the typed C API of a generated program (NAME_create, NAME_run,
 * NAME_error, NAME_destroy): parameter names, C types and declarations;
 * shared by lower_cpu (which defines it) and link (which declares it). */
#include <stdio.h>
#include <string.h>

#include "capi.h"

static const char *const keywords[] = {
	"auto", "break", "case", "char", "const", "continue", "default", "do",
	"double", "else", "enum", "extern", "float", "for", "goto", "if",
	"inline", "int", "long", "register", "restrict", "return", "short",
	"signed", "sizeof", "static", "struct", "switch", "typedef", "union",
	"unsigned", "void", "volatile", "while", "bool", "true", "false",
	"m", "in", "out",   /* names inside NAME_run */
	"NULL", "NAN", "INFINITY", "EOF", "errno",   /* macros of the headers */
	NULL
};

static int
iskeyword(const char *s)
{
	int i;

	for (i = 0; keywords[i]; i++)
		if (strcmp(s, keywords[i]) == 0)
			return 1;
	return 0;
}

static int
isidchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

static int
isident(const char *s)
{
	const char *p;

	if (s == NULL || !*s || (*s >= '0' && *s <= '9'))
		return 0;
	for (p = s; *p; p++)
		if (!isidchar(*p))
			return 0;
	return 1;
}

static int
taken(const Fn *fn, const Param *p, int n, const char *s)
{
	int i;

	if (iskeyword(s) || strcmp(s, fn->name) == 0)
		return 1;
	for (i = 0; i < n; i++)
		if (strcmp(p[i].name, s) == 0 || (p[i].hname && strcmp(p[i].hname, s) == 0) ||
		    (p[i].wname && strcmp(p[i].wname, s) == 0))
			return 1;
	return 0;
}

/* A C identifier for io name s, unique among p[0..n-1]: other bytes become
 * '_', a leading digit gets an 'x', clashes get "_2", "_3"... */
static const char *
ident(Fn *fn, const Param *p, int n, const char *s)
{
	size_t len = strlen(s);
	char *b = dp_alloc(fn->arena, len + 24, 1);
	char *q = b;
	int k;

	if (len == 0 || (*s >= '0' && *s <= '9'))
		*q++ = 'x';
	for (; *s; s++)
		*q++ = isidchar(*s) ? *s : '_';
	*q = '\0';
	for (k = 2; taken(fn, p, n, b); k++)
		snprintf(q, 24, "_%d", k);
	return b;
}

/* The C element type of a dtype. */
const char *
capi_ctype(int dtype)
{
	switch (dtype) {
	case DP_U8: return "uint8_t";
	case DP_I8: return "int8_t";
	case DP_I16: return "int16_t";
	case DP_I32: return "int32_t";
	case DP_I64: return "int64_t";
	case DP_F16: return "uint16_t";
	case DP_F32: return "float";
	case DP_F64: return "double";
	case DP_BOOL: return "uint8_t";
	case DP_BF16: return "uint16_t";
	}
	dp_die("bad dtype %d", dtype);
}

/* Collects the parameters of NAME_run (inputs, then outputs) into memory
 * owned by fn's arena. */
int
capi_params(Fn *fn, Param **pp, int *np, Err *err)
{
	Param *p;
	int i, n = 0;

	if (!isident(fn->name) || iskeyword(fn->name)) {
		dp_seterr(err, "the pipeline name \"%s\" is not a C identifier, or is a C keyword "
		          "or a name the generated C code uses", fn->name ? fn->name : "");
		return -1;
	}
	p = dp_alloc(fn->arena, (size_t)fn->nop + (size_t)fn->nout + 1, sizeof *p);
	for (i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		const char *io;

		if (op->kind != Oinput)
			continue;
		io = dp_gets(op, "name");
		if (io == NULL || op->nout != 1)
			dp_die("op %d: input without a name or result", i);
		p[n].io = io;
		p[n].name = ident(fn, p, n, io);
		p[n].val = op->out[0];
		p[n].t = fn->val[op->out[0]].t;
		p[n].ctype = capi_ctype(p[n].t.dtype);
		p[n].isout = 0;
		if (dp_istext(&p[n].t)) {   /* text: its length in bytes */
			size_t len = strlen(p[n].name) + 3;
			char *h = dp_alloc(fn->arena, len, 1);
			snprintf(h, len, "%s_n", p[n].name);
			p[n].hname = ident(fn, p, n, h);
		} else if (dp_isdyn(&p[n].t)) {
			size_t len = strlen(p[n].name) + 3;
			char *h = dp_alloc(fn->arena, len, 1), *w = dp_alloc(fn->arena, len, 1);
			snprintf(h, len, "%s_h", p[n].name);
			snprintf(w, len, "%s_w", p[n].name);
			p[n].hname = ident(fn, p, n, h);
			p[n].wname = ident(fn, p, n, w);
			if (strcmp(p[n].hname, p[n].wname) == 0)
				dp_die("image parameters of %s clash", p[n].name);
		}
		n++;
	}
	for (i = 0; i < fn->nout; i++) {
		p[n].io = fn->out[i].name;
		p[n].name = ident(fn, p, n, fn->out[i].name);
		p[n].val = fn->out[i].val;
		p[n].t = fn->val[p[n].val].t;
		p[n].ctype = capi_ctype(p[n].t.dtype);
		p[n].isout = 1;
		n++;
	}
	*pp = p;
	*np = n;
	return 0;
}

/* The count of inputs of entry e (NULL: of the program). */
static int
entryins(const Fn *fn, const char *e, size_t n)
{
	int i, k = 0;

	for (i = 0; i < fn->nop; i++) {
		const char *f = fn->op[i].kind == Oinput ? dp_gets(&fn->op[i], "entry") : NULL;
		k += fn->op[i].kind == Oinput && (!e || (f && strlen(f) == n && strncmp(f, e, n) == 0));
	}
	return k;
}

int
capi_generate(const Fn *fn)
{
	int i, g = -1, nin;
	const char *e = NULL, *pre;

	for (i = 0; i < fn->nop; i++)
		if (fn->op[i].kind == Oinput && dp_gets(&fn->op[i], "generate")) {
			g = i;
			e = dp_gets(&fn->op[i], "entry");
		}
	nin = entryins(fn, e, e ? strlen(e) : 0);
	if (g >= 0 && e && (pre = strstr(dp_gets(&fn->op[g], "generate"), ",prefill=")) != NULL &&
	    entryins(fn, pre + 9, strcspn(pre + 9, ",")) != 2)
		return -1;   /* a prefill entry of other inputs too */
	return nin == 1 || (nin == 2 && g >= 0 && capi_genpos(fn) >= 0) ? g : -1;
}

/* The prefill entry of the generate statement's prefill=ENTRY (its name, n
 * bytes, into *n), or NULL. */
const char *
capi_genprefill(const Fn *fn, size_t *n)
{
	int g = capi_generate(fn);
	const char *p = g >= 0 ? strstr(dp_gets(&fn->op[g], "generate"), ",prefill=") : NULL;

	if (p == NULL)
		return NULL;
	*n = strcspn(p + 9, ",");
	return p + 9;
}

int
capi_genpos(const Fn *fn)
{
	const char *spec = NULL, *p;
	int i;

	for (i = 0; i < fn->nop && !spec; i++)
		if (fn->op[i].kind == Oinput)
			spec = dp_gets(&fn->op[i], "generate");
	if (!spec || (p = strstr(spec, ",pos=")) == NULL)
		return -1;
	p += 5;
	for (i = 0; i < fn->nop; i++) {
		const char *n = fn->op[i].kind == Oinput ? dp_gets(&fn->op[i], "name") : NULL;
		if (n && strncmp(n, p, strlen(n)) == 0 && (p[strlen(n)] == ',' || !p[strlen(n)]))
			return i;
	}
	return -1;
}

/* The declaration of NAME_FNAME, the run function of entry e (every input
 * and output when ent is NULL). */
static void
rundecl(Str *s, const Fn *fn, const Param *p, int np, const int *ent, int e, const char *fname)
{
#define MINE(i) (!ent || ent[fn->val[p[i].val].def] == e)
	const char *nm = fn->name;
	char ty[128];
	size_t w = 0;
	int i, n = 0, last = -1;

	for (i = 0; i < np; i++)
		if (MINE(i))
			n++, last = i;
	if (ent)
		str_printf(s, "/* Runs entry %s once: reads its inputs, writes its outputs (dense,\n"
		              " * C order, buffers that do not overlap), reading and updating the\n"
		              " * state all the entries of m share.  0, or -1 with the message in\n"
		              " * %s_error(m). */\n", fname, nm);
	else
		str_printf(s, "/* Runs the program once: reads the inputs, writes the outputs (dense,\n"
		              " * C order, buffers that do not overlap).  0, or -1 with the message\n"
		              " * in %s_error(m). */\n", nm);
	for (i = 0; i < np && !(MINE(i) && p[i].isout && p[i].t.bnd); i++)
		;
	if (i < np)   /* bounded outputs (formats/ops.md, "Bounded sizes") */
		str_printf(s, "/* An output typed T[<=B,...] has a leading size known only at run\n"
		              " * time: pass room for B rows; the output after it (NAME_n) receives\n"
		              " * the row count n, and only rows 0..n-1 are the result. */\n");
	str_printf(s, "int %s_%s(%s *m%s\n", nm, fname, nm, n ? "," : ");");
	for (i = 0; i < np; i++) {
		if (!MINE(i))
			continue;
		size_t len = strlen(p[i].ctype) + strlen(p[i].name) + (p[i].isout ? 2 : 8);
		if (len > w)
			w = len;
		if (p[i].hname && strlen(p[i].hname) + 9 > w)
			w = strlen(p[i].hname) + 9;
		if (p[i].wname && strlen(p[i].wname) + 9 > w)
			w = strlen(p[i].wname) + 9;
	}
	for (i = 0; i < np; i++) {
		Str a = {0};

		if (!MINE(i))
			continue;
		str_printf(&a, "%s%s *%s%s", p[i].isout ? "" : "const ", p[i].ctype,
		           p[i].name, i < last || p[i].hname ? "," : ");");
		str_printf(s, "\t%-*s /* %s", (int)w + 2, a.p, p[i].isout ? "out" : "in");
		if (strcmp(p[i].name, p[i].io) != 0) {
			str_put(s, " \"");
			str_comment(s, p[i].io);
			str_put(s, "\"");
		}
		str_printf(s, ": %s", dp_type_str(&p[i].t, 0, ty, sizeof ty));
		if (p[i].wname)
			str_printf(s, ", an image of %s x %s x %lld pixels (HWC)", p[i].hname,
			           p[i].wname, (long long)p[i].t.dim[2]);
		else if (p[i].hname)
			str_printf(s, ", UTF-8 text of %s bytes", p[i].hname);
		else if (p[i].isout && p[i].t.bnd && i + 1 < np)
			str_printf(s, ", its first *%s rows", p[i + 1].name);
		else if (i > 0 && p[i - 1].isout && p[i - 1].t.bnd)
			str_printf(s, ", the row count of %s", p[i - 1].name);
		str_put(s, " */\n");
		str_free(&a);
		if (p[i].hname && !p[i].wname) {
			str_printf(&a, "int64_t %s%s", p[i].hname, i < last ? "," : ");");
			str_printf(s, "\t%-*s /* its length */\n", (int)w + 2, a.p);
			str_free(&a);
		}
		if (!p[i].wname)
			continue;
		str_printf(&a, "int64_t %s,", p[i].hname);
		str_printf(s, "\t%-*s /* its height */\n", (int)w + 2, a.p);
		str_free(&a);
		str_printf(&a, "int64_t %s%s", p[i].wname, i < last ? "," : ");");
		str_printf(s, "\t%-*s /* its width */\n", (int)w + 2, a.p);
		str_free(&a);
	}
#undef MINE
}

/* Appends the declarations of the typed API, parameters commented with
 * their shapes. */
void
capi_decls(Str *s, const Fn *fn, const Param *p, int np)
{
	const char *nm = fn->name;
	int *ent = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *ent);
	const char **ename = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *ename);
	Err err;
	int i, nent = dp_entries(fn, ent, ename, &err);
	const char *run = nent > 0 ? ename[0] : "run";   /* named in the comments */

	str_printf(s, "typedef struct %s %s;\n\n", nm, nm);
	str_printf(s, "/* How %s_create_with makes an instance; zero for the defaults. */\n"
	              "typedef struct %s_options {\n"
	              "\t/* NULL-terminated file names the weights come from instead of the\n"
	              "\t * embedded blob: the program's weight blob (mapped, read as used),\n"
	              "\t * and/or .safetensors checkpoints giving the model's tensors by name */\n"
	              "\tconst char *const *weights;\n"
	              "} %s_options;\n\n", nm, nm, nm);
	str_printf(s, "/* Makes an instance with its own scratch memory, prepared weights and\n"
	              " * threads (DPRT_THREADS, else as many as the cores the process may run\n"
	              " * on); NULL when out of memory.  Instances are independent: several may\n"
	              " * run at once, each from its own thread.  One instance used from two\n"
	              " * threads at once is refused: the second %s_%s returns -1 and\n"
	              " * %s_error says so.  Outputs do not depend on the thread count (they\n"
	              " * are bitwise equal).  When its weights or device cannot be had,\n"
	              " * %s_%s fails and %s_error says why. */\n", nm, run, nm, nm, run, nm);
	str_printf(s, "%s *%s_create(void);\n", nm, nm);
	str_printf(s, "%s *%s_create_with(const %s_options *o);\n", nm, nm, nm);
	str_printf(s, "/* Runs m on n threads from now on (the caller's thread counts as one).\n"
	              " * 0, or -1 with the message in %s_error(m) (n not from 1 to 1024). */\n",
	           nm);
	str_printf(s, "int %s_set_threads(%s *m, int n);\n", nm, nm);
	str_printf(s, "/* A buffer for input k (from 0, in the order of %s_%s's inputs)\n"
	              " * that %s_%s reads in place when it is passed as that input, whole\n"
	              " * and in the same layout: on a GPU, the page-locked buffer the input\n"
	              " * goes to the device from, so that the run copies nothing on the host\n"
	              " * (19 MB for a batch of 32 images).  Any other buffer works too, with\n"
	              " * that copy; passed as another input, this one may be overwritten\n"
	              " * before it is read.  NULL where k has none (an input the host reads\n"
	              " * or converts first, no GPU, an instance that did not start); the\n"
	              " * buffer is m's until %s_destroy(m). */\n", nm, run, nm, run, nm);
	str_printf(s, "void *%s_input_buffer(%s *m, int k);\n", nm, nm);
	if (nent <= 0)
		rundecl(s, fn, p, np, NULL, 0, "run");
	for (i = 1; i <= nent; i++)
		rundecl(s, fn, p, np, ent, i, ename[i - 1]);
	if ((i = capi_generate(fn)) >= 0) {
		str_printf(s, "/* Generates tokens as the pipeline's generate statement declares (");
		str_comment(s, dp_gets(&fn->op[i], "generate"));
		size_t pn;
		const char *pe = capi_genprefill(fn, &pn);
		if (pe)
			str_printf(s, "):\n * prompt[0..n-1] is the prompt (1 token or more, run through entry %.*s,\n"
			              " * its token count a run, then each new token through entry %s, on the\n"
			              " * KV cache the entries share as state, at positions 0 on; the caller\n"
			              " * keeps the prompt rounded up to a run plus the new tokens within the\n"
			              " * cache); token(u, id) gets each new", (int)pn, pe,
			           dp_gets(&fn->op[i], "entry"));
		else if (capi_genpos(fn) >= 0)
			str_printf(s, "):\n * prompt[0..n-1] is the prompt (1 token or more, run %lld at a time\n"
			              " * through the KV cache the program keeps as state, at positions 0 on;\n"
			              " * the caller keeps n plus the new tokens within the cache); token(u, id)\n"
			              " * gets each new",
			           (long long)fn->val[fn->op[i].out[0]].t.dim[1]);
		else
			str_printf(s, "):\n * prompt[0..n-1] is the prompt (1 to %lld tokens); token(u, id) gets "
			              "each new", (long long)fn->val[fn->op[i].out[0]].t.dim[1]);
		str_printf(s, "\n * token as it comes (nonzero stops the loop); keys: NULL, or\n"
		              " * \"key=value,...\" replacing the declared ones (max_tokens, end,\n"
		              " * temperature, top_k, top_p, seed; formats/dp.md, \"Generation\").\n"
		              " * The count of tokens given out, or -1 with the message in %s_error(m). */\n",
		           nm);
		str_printf(s, "typedef int %s_token_fn(void *u, int64_t token);\n", nm);
		str_printf(s, "int64_t %s_generate(%s *m, const int64_t *prompt, int64_t n, const char *keys,\n"
		              "\t%*s%s_token_fn *token, void *u);\n", nm, nm, (int)strlen(nm) + 8, "", nm);
	}
	if (nent > 0)
		str_put(s, "/* Restores the state the entries of m share (the buffers their models\n"
		           " * update, such as a KV cache) to its initial value; nothing to do for a\n"
		           " * program without state. */\n");
	else
		str_put(s, "/* Restores the state m keeps from run to run (the buffers the model\n"
		           " * updates, such as a KV cache) to its initial value; nothing to do for a\n"
		           " * program without state. */\n");
	str_printf(s, "void %s_reset(%s *m);\n", nm, nm);
	str_printf(s, "/* The message of the last failure of m (\"\" when none); in a thread whose\n"
	              " * call was refused because another thread runs m, that refusal's. */\n");
	str_printf(s, "const char *%s_error(const %s *m);\n", nm, nm);
	str_printf(s, "/* Frees m and its memory; NULL is allowed. */\n");
	str_printf(s, "void %s_destroy(%s *m);\n", nm, nm);
}
