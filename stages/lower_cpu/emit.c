/* emit.c: assembles the generated C file: the typed API declarations, the
 * io tables, run() (buffer plan, then the schedule one op at a time), the
 * dprt_prog descriptor and the typed API definitions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

/* The host's copy of n bytes (an output, a tensor to the cuda staging):
 * memcpy, or from 2 MiB on dprt_memcpy, on the pool's threads (GPT-2's
 * batch-32 logits, 823 MB, took 63 ms on one core). */
static const char *
copyfn(int64_t n)
{
	return n >= 2 << 20 ? "dprt_memcpy" : "memcpy";
}

/* The copy of value v (made by op i, a device->host copy in pieces:
 * xfer.h) into the outputs naming it: piece by piece, each once its event
 * says it is in the staging, while the device sends the next. */
static void
piececopies(Ctx *c, int i, int v)
{
	const Fn *fn = c->fn;
	const Xfer *x = &c->plan->x[i];
	int j, k;
	int64_t at, n;

	if (c->plan->h[v].bytes != x->bytes)
		dp_die("internal error: lower_cpu: value %d has %lld bytes, its transfer plan %lld",
		       v, (long long)c->plan->h[v].bytes, (long long)x->bytes);
	c->used[v] = 1;
	for (j = 0, k = 0; j < fn->nout; j++)
		k += fn->out[j].val == v;
	str_put(c->body, k > 1 ? "\t/* outputs" : "\t/* output");
	for (j = 0, k = 0; j < fn->nout; j++)
		if (fn->out[j].val == v) {
			str_put(c->body, k++ ? ", \"" : " \"");
			str_comment(c->body, fn->out[j].name);
			str_put(c->body, "\"");
		}
	str_printf(c->body, ": %d pieces, each copied once its event (%d..%d) is reached */\n",
	           x->npiece, x->ev, x->ev + x->npiece - 1);
	for (k = 0; k < x->npiece; k++) {
		n = xfer_piece(x, k, &at);
		str_printf(c->body, "\tif (%s_gpu_wait(state, %d, err, errn) != 0)\n\t\treturn -1;\n",
		           fn->name, x->ev + k);
		for (j = 0; j < fn->nout; j++)
			if (fn->out[j].val == v)
				str_printf(c->body, "\t%s((unsigned char *)out[%d] + %lld, (const unsigned char "
				                    "*)v%d + %lld, %lld);\n", copyfn(n), j, (long long)at, v,
				           (long long)at, (long long)n);
	}
	str_printf(c->body, "\tDPRT_TRACE_OP(%d, \"copy to output\");\n", i);
}

/* Copies outputs that cannot be computed in place (inputs, constants, a
 * value named by two outputs) right after their value is made; a large
 * one from the device in pieces (piececopies). */
static void
portcopies(Ctx *c, int i)
{
	const Fn *fn = c->fn;
	int j, v;

	if (c->plan->x[i].npiece > 0) {
		piececopies(c, i, fn->op[i].out[0]);
		return;
	}
	for (j = 0; j < fn->nout; j++) {
		v = fn->out[j].val;
		if (!c->plan->copy[j] || fn->val[v].def != i)
			continue;
		c->used[v] = 1;
		str_printf(c->body, "\t%s(out[%d], v%d, %lld);   /* output \"",
		           copyfn(c->plan->h[v].bytes), j, v, (long long)c->plan->h[v].bytes);
		str_comment(c->body, fn->out[j].name);
		str_put(c->body, "\" */\n");
		if (c->plan->h[v].bytes >= 2 << 20)   /* its own line in --profile */
			str_printf(c->body, "\tDPRT_TRACE_OP(%d, \"copy to output\");\n", i);
	}
}

/* The staging of program input k: the byte offset of the first host->device
 * copy of the input itself (its page-locked buffer, where the caller may
 * write the input so that no copy into it is needed: NAME_input_buffer),
 * or -1. */
static int64_t
inpin(const Fn *fn, const Plan *pl, int k)
{
	int i;

	for (i = 0; i < fn->nop; i++) {
		int v = fn->op[i].nin ? fn->op[i].in[0] : -1;
		if (pl->x[i].kind == X_H2D && pl->h[fn->op[i].out[0]].bytes > 0 &&
		    pl->h[v].kind == H_IN && pl->h[v].idx == k && !dp_isdyn(&fn->val[v].t))
			return pl->x[i].pin;
	}
	return -1;
}

/* The call of cuda partition k (op i is its first op): the values it
 * takes from the host go to their staging buffers (an input the caller
 * wrote there already: no copy), then 5.gpu.cu runs it (and, when the host
 * reads its results next, waits for it: for all of it but the copies in
 * pieces). */
static void
gpucall(Ctx *c, int i)
{
	const Fn *fn = c->fn;
	int k = fn->op[i].part, j, last = i;

	for (j = i; j < fn->nop && fn->op[j].part == k; j++)
		last = j;
	str_printf(c->body, "\t/* partition %d (cuda): ops %d..%d, in 5.gpu.cu */\n", k, i, last);
	for (j = i; j <= last; j++) {
		const Op *op = &fn->op[j];
		if (c->plan->x[j].kind != X_H2D || c->plan->h[op->out[0]].bytes == 0)
			continue;
		if (c->plan->h[op->in[0]].kind == H_IN)   /* NAME_input_buffer's? */
			str_printf(c->body, "\tif ((const void *)v%d != %s_gpu_host(state, %lld))\n\t",
			           op->in[0], fn->name, (long long)c->plan->x[j].pin);
		str_printf(c->body, "\t%s(%s_gpu_host(state, %lld), v%d, %lld);   /* ",
		           copyfn(c->plan->h[op->out[0]].bytes), fn->name, (long long)c->plan->x[j].pin, op->in[0], (long long)c->plan->h[op->out[0]].bytes);
		c->used[op->in[0]] = 1;
		op_text(c->body, fn, op);
		str_put(c->body, " */\n");
	}
	str_printf(c->body, "\tif (%s_gpu_part%d(state, err, errn) != 0)\n\t\treturn -1;\n",
	           fn->name, k);
	str_printf(c->body, "\tDPRT_TRACE_OP(%d, \"cuda partition %d\");\n", i, k);
}

static void decls(Ctx *c, Str *s);

/* Ops a piece of the schedule holds: a schedule of more is written as
 * functions of PIECE ops each, called in turn, with the rest in run()'s
 * own body.  GCC's time on one function grows faster than its length (a
 * recurrent layer unrolled over hundreds of steps is tens of thousands of
 * ops); each op's statements are self-contained, so a piece needs only
 * the pointers it names. */
enum { PIECE = 256 };   /* (DP_CPU_PIECE in the environment sets it, for tests) */

/* Ends the piece of the schedule written so far: its statements become
 * the function NAME_pK (its pointers declared in it), and c->body a call
 * of it. */
static void
cut(Ctx *c)
{
	const char *nm = c->fn->name;
	Str d = {0};

	decls(c, &d);
	str_printf(c->pieces, "/* A piece of the schedule: %d ops. */\nstatic int\n"
	                      "%s_p%d(void *state, const unsigned char *W, void *arena,\n"
	                      "\tconst void *const *in, void *const *out, char *err, size_t errn)\n{\n"
	                      "\tunsigned char *A = arena;\n%s\n"
	                      "\t(void)state, (void)W, (void)A, (void)in, (void)out, (void)err, (void)errn;\n"
	                      "%s\treturn 0;\n}\n\n", c->inpiece, nm, c->npiece, d.p ? d.p : "",
	           c->body->p ? c->body->p : "");
	str_free(&d);
	str_free(c->body);
	str_printf(c->body, "\tif (%s_p%d(state, W, arena, in, out, err, errn) != 0)\n\t\treturn -1;\n",
	           nm, c->npiece);
	c->npiece++;
	c->inpiece = 0;
	memset(c->used, 0, (size_t)c->fn->nval + 1);
}

/* The schedule of entry e (0: the program without entries), in order: host
 * ops one by one; each cuda partition one call of NAME_gpu_partK
 * (5.gpu.cu), whose device->host copies land in page-locked staging that
 * the host reads in place (or, in pieces, copies into the outputs as each
 * piece's event is reached: NAME_gpu_wait).  An entry's schedule has its own ops and the
 * constants on the host (partition keeps each entry's apart). */
static int
schedule(Ctx *c, const int *ent, int e)
{
	const Fn *fn = c->fn;
	const Plan *pl = c->plan;
	Str *body = c->body;
	int i, last = -1;

	for (i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		if (ent[i] != e && (ent[i] != 0 || oncuda(fn, op)))
			continue;
		if (oncuda(fn, op)) {
			if (last != op->part) {
				gpucall(c, i);
				c->inpiece++;
			}
			last = op->part;
			continue;
		}
		last = op->part;
		if (pl->x[i].kind == X_D2H || pl->x[i].kind == X_HOSTCONST) {
			str_put(body, "\t/* ");
			op_text(body, fn, op);
			str_put(body, pl->x[i].kind != X_D2H ? ": the host's own weights */\n" :
			        pl->x[i].npiece ? ": staged in pieces by the partition above */\n" :
			        ": staged by the partition above */\n");
		} else {
			size_t at = body->n;   /* the op's code: timed where it has statements */
			if (emit_op(c, i) != 0)
				return -1;
			if (body->n > at && memchr(body->p + at, ';', body->n - at)) {
				str_printf(body, "\tDPRT_TRACE_OP(%d, \"%s\");\n", i, dp_op_name[op->kind]);
				c->inpiece++;
			}
		}
		portcopies(c, i);
		if (c->inpiece >= c->piece)
			cut(c);
	}
	return 0;
}

/* Declares the pointer of every value the schedule names: the buffer plan
 * at a glance. */
static void
decls(Ctx *c, Str *s)
{
	const Fn *fn = c->fn;
	const Plan *p = c->plan;
	int i, k, v;

	for (i = fn->nop - 1; i >= 0; i--)   /* a named view names its base */
		for (k = 0; k < fn->op[i].nout; k++) {
			v = fn->op[i].out[k];
			if (c->used[v] && p->h[v].kind == H_VIEW)
				c->used[p->h[v].base] = 1;
		}
	for (i = 0; i < fn->nop; i++) {
		for (k = 0; k < fn->op[i].nout; k++) {
			const Home *h;
			const char *ct;
			char ty[160];
			Str d = {0};

			v = fn->op[i].out[k];
			h = &p->h[v];
			if (!c->used[v])
				continue;
			ct = dp_isdyn(&fn->val[v].t) ? "dprt_image" : capi_ctype(fn->val[v].t.dtype);
			str_printf(&d, "%s%s *v%d = ", h->ro ? "const " : "", ct, v);
			switch (h->kind) {
			case H_IN: str_printf(&d, "in[%lld];", (long long)h->idx); break;
			case H_OUT: str_printf(&d, "out[%lld];", (long long)h->idx); break;
			case H_CONST:
				str_printf(&d, "(const %s *)(W + %lld);", ct, (long long)h->idx);
				break;
			case H_ARENA:
				str_printf(&d, "(%s *)(A + %lld);", ct, (long long)h->idx);
				break;
			case H_VIEW: str_printf(&d, "v%d;", h->base); break;
			case H_PIN:
				str_printf(&d, "(const %s *)%s_gpu_host(state, %lld);", ct, fn->name,
				           (long long)h->idx);
				break;
			default: dp_die("value %d has no home", v);
			}
			str_printf(s, "\t%-40s /* %s", d.p, dp_type_str(&fn->val[v].t, 0, ty, sizeof ty));
			switch (h->kind) {
			case H_IN: str_put(s, ", input"); break;
			case H_OUT: str_put(s, ", output"); break;
			case H_CONST: str_put(s, ", weights"); break;
			case H_ARENA:
				str_printf(s, ", arena [%lld,%lld) until op %d", (long long)h->idx,
				           (long long)(h->idx + h->bytes), h->last);
				break;
			case H_VIEW:
				str_printf(s, ", %s of %%%d", h->trans ? "transposed view" : "view", h->base);
				break;
			case H_PIN: str_put(s, ", from the device"); break;
			}
			str_put(s, " */\n");
			str_free(&d);
		}
	}
}

/* The dprt_io table of the inputs or the outputs. */
static void
iotable(Str *s, const Fn *fn, const Param *p, int np, int isout)
{
	int i, n = 0;

	for (i = 0; i < np; i++)
		n += p[i].isout == isout;
	if (n == 0)
		return;
	str_printf(s, "static const dprt_io %s_%s[%d] = {\n", fn->name,
	           isout ? "outputs" : "inputs", n);
	for (i = 0; i < np; i++) {
		if (p[i].isout != isout)
			continue;
		str_put(s, "\t{");
		str_cstring(s, p[i].io);
		str_printf(s, ", %s, %d, ", dprt_enum(p[i].t.dtype), p[i].t.rank);
		str_ints(s, p[i].t.dim, p[i].t.rank);
		str_put(s, "},\n");
	}
	str_put(s, "};\n");
}

/* Whether the schedule names a value living in a home of this kind. */
static int
uses(const Ctx *c, int kind)
{
	int v;

	for (v = 0; v < c->fn->nval; v++)
		if (c->used[v] && c->plan->h[v].kind == kind)
			return 1;
	return 0;
}

/* The run() function: scratch pointer, buffer plan, schedule. */
static void
runfn(Ctx *c, Str *s, const Str *body, const Str *decl, const char *entry)
{
	const Fn *fn = c->fn;
	int j, usesout = uses(c, H_OUT);

	for (j = 0; j < fn->nout; j++)
		usesout |= c->plan->copy[j];
	if (entry)
		str_printf(s, "/* Runs the host schedule of entry %s once (see dprt_entry in dprt.h). */\n"
		              "static int\n%s_schedule_%s(", entry, fn->name, entry);
	else
		str_printf(s, "/* Runs the host schedule once (see dprt_prog in dprt.h). */\n"
		              "static int\n%s_schedule(", fn->name);
	str_put(s, "void *state, const unsigned char *W, void *arena,\n"
	           "\tconst void *const *in, void *const *out, char *err, size_t errn)\n{\n");
	if (uses(c, H_ARENA))
		str_put(s, "\tunsigned char *A = arena;\n");
	str_put(s, decl->p ? decl->p : "");
	str_put(s, c->plan->ncuda ? "\n" : "\n\t(void)state, (void)err, (void)errn;\n");
	if (!uses(c, H_ARENA))
		str_put(s, "\t(void)arena;\n");
	if (!uses(c, H_IN))
		str_put(s, "\t(void)in;\n");
	if (!uses(c, H_CONST))
		str_put(s, "\t(void)W;\n");
	if (!usesout)
		str_put(s, "\t(void)out;\n");
	str_put(s, body->p ? body->p : "");
	str_put(s, "\treturn 0;\n}\n");
}

/* The typed run function NAME_FNAME: the inputs and outputs of entry e
 * (all of them when ent is NULL) to the schedule NAME_schedule[_SCHED]. */
static void
runapi(Str *s, const Fn *fn, const Plan *pl, const Param *p, int np, const int *ent, int e,
       const char *fname, const char *sched)
{
	const char *nm = fn->name;
	int i, nin = 0, nout = 0;

	for (i = 0; i < np; i++) {
		if (p[i].isout)
			nout++;
		else
			nin++;
	}
#define MINE(i) (!ent || ent[fn->val[p[i].val].def] == e)
	str_printf(s, "int\n%s_%s(%s *m", nm, fname, nm);
	for (i = 0; i < np; i++) {
		if (!MINE(i))
			continue;
		str_printf(s, ", %s%s *%s", p[i].isout ? "" : "const ", p[i].ctype, p[i].name);
		if (p[i].wname)
			str_printf(s, ", int64_t %s, int64_t %s", p[i].hname, p[i].wname);
		else if (p[i].hname)
			str_printf(s, ", int64_t %s", p[i].hname);
	}
	str_put(s, ")\n{\n\tconst void *in[] = {");
	for (i = 0; i < np; i++)
		if (!p[i].isout && !MINE(i))
			str_printf(s, "%sNULL", i ? ", " : "");
		else if (!p[i].isout && p[i].wname)
			str_printf(s, "%s&(dprt_image){%s, %s, %s, %lld}", i ? ", " : "", p[i].name,
			           p[i].hname, p[i].wname, (long long)p[i].t.dim[2]);
		else if (!p[i].isout && p[i].hname)   /* text: h bytes */
			str_printf(s, "%s&(dprt_image){%s, %s, 1, 1}", i ? ", " : "", p[i].name,
			           p[i].hname);
		else if (!p[i].isout)
			str_printf(s, "%s%s", i ? ", " : "", p[i].name);
	str_printf(s, "%s};\n\tvoid *out[] = {", nin ? "" : "NULL");
	for (i = 0; i < np; i++)
		if (p[i].isout)
			str_printf(s, "%s%s", i > nin ? ", " : "", MINE(i) ? p[i].name : "NULL");
	str_printf(s, "%s};\n\n", nout ? "" : "NULL");
	str_put(s, "\tdprt_refuse(m, NULL);   /* this call's own error, not an earlier refusal */\n"
	           "\tif (!m->ok)\n\t\treturn -1;   /* it did not start: err says why */\n");
	for (i = 0; i < np; i++)   /* names are C identifiers: no escaping */
		if (MINE(i))
			str_printf(s, "\tif (%s == NULL) {\n\t\tstrcpy(m->err, \"%.200s: a NULL pointer "
			              "was passed for this %s\");\n\t\treturn -1;\n\t}\n", p[i].name,
			           p[i].name, p[i].isout ? "output" : p[i].wname ? "image input's pixels" :
			           p[i].hname ? "text input" : "input");
	str_printf(s, "\tif (m->pool == NULL)\n\t\treturn -1;   /* no threads: err says why */\n"
	              "\tif (dprt_pool_enter(m->pool) != 0) {   /* m->err is the running thread's */\n"
	              "\t\tdprt_refuse(m, \"%s_%s: this instance is running in "
	              "another thread (use one instance per thread)\");\n"
	              "\t\treturn -1;\n\t}\n"
	              "\tm->err[0] = '\\0';\n"
	              "\tint rc = %s_schedule%s%s(%s, dprt_weights_base(m->w), m->arena, in, out, m->err,\n"
	              "\t                     sizeof m->err) == 0 ? 0 : -1;\n"
	              "\tdprt_pool_leave(m->pool);\n"
	              "\treturn rc;\n}\n\n", nm, fname, nm, *sched ? "_" : "", sched,
	           pl->ncuda ? "m->gpu" : "NULL");
#undef MINE
}

/* The typed API: an instance owns an aligned arena; run passes the typed
 * pointers to the schedule. */
static void
api(Str *s, const Fn *fn, const Plan *pl, const Param *p, int np, int prep, int state,
    int gpustate, const int *ent, const char **ename, int nent, int inbuf)
{
	const char *nm = fn->name;
	int i, nin = 0, nout = 0;

	str_put(s, "/* ---- The typed C API ---- */\n\n");
	str_printf(s, "struct %s {\n"
	              "\tvoid *mem;        /* from malloc */\n"
	              "\tvoid *arena;      /* mem rounded up to 64 bytes */\n"
	              "\tdprt_weights *w;  /* the weights, once loaded */\n"
	              "\tdprt_pool *pool;  /* its threads; NULL if they did not start (err) */\n", nm);
	if (pl->ncuda)
		str_put(s, "\tvoid *gpu;        /* the CUDA side (5.gpu.cu) */\n");
	str_put(s, "\tint ok;           /* whether it started; if not, err says why */\n"
	           "\tchar err[256];    /* the last failure, or \"\" */\n};\n\n");
	str_printf(s, "%s *\n%s_create(void)\n{\n\treturn %s_create_with(NULL);\n}\n\n",
	           nm, nm, nm);
	str_printf(s, "%s *\n%s_create_with(const %s_options *o)\n{\n"
	              "\t%s *m = calloc(1, sizeof *m);\n"
	              "\tint n = 0;\n\n"
	              "\tif (m == NULL)\n\t\treturn NULL;\n"
	              "\tm->mem = malloc(%lld + 64);\n"
	              "\tif (m->mem == NULL) {\n\t\tfree(m);\n\t\treturn NULL;\n\t}\n"
	              "\tm->arena = (void *)(((uintptr_t)m->mem + 63) & ~(uintptr_t)63);\n"
	              "\twhile (o && o->weights && o->weights[n])\n\t\tn++;\n"
	              "\tm->ok = dprt_weights_load(%s_prog.blob, o ? o->weights : NULL, n, "
	              "&m->w, m->err,\n\t                          sizeof m->err) == 0;\n"
	              "\t/* DPRT_THREADS or the cores we may use; without a pool run fails */\n",
	           nm, nm, nm, nm, (long long)pl->arena, nm);
	if (prep)
		str_printf(s, "\tif (m->ok && dprt_pool_create(&m->pool, 0, m->err, sizeof m->err) == 0)\n"
		              "\t\tdprt_pool_prep(m->pool, %s_prep, m->arena, dprt_weights_base(m->w));\n",
		           nm);
	else
		str_put(s, "\tif (m->ok)\n\t\t(void)dprt_pool_create(&m->pool, 0, m->err, sizeof m->err);\n");
	if (state)
		str_printf(s, "\tif (m->ok)\n\t\t%s_state(m->arena, dprt_weights_base(m->w));\n", nm);
	if (pl->ncuda)
		str_printf(s, "\tm->ok = m->ok && %s_gpu_init(&m->gpu, dprt_weights_base(m->w), "
		              "m->err,\n\t                           sizeof m->err) == 0;   "
		              "/* else run fails */\n", nm);
	str_put(s, "\treturn m;\n}\n\n");
	str_printf(s, "int\n%s_set_threads(%s *m, int n)\n{\n", nm, nm);
	if (prep)   /* a first pool: create could not prepare the weights */
		str_printf(s, "\tint had = m->pool != NULL;\n\n"
		              "\tif (dprt_pool_resize(&m->pool, n, m->err, sizeof m->err) != 0)\n"
		              "\t\treturn -1;\n"
		              "\tif (!had && m->ok)\n\t\tdprt_pool_prep(m->pool, %s_prep, m->arena, "
		              "dprt_weights_base(m->w));\n", nm);
	else
		str_put(s, "\tif (dprt_pool_resize(&m->pool, n, m->err, sizeof m->err) != 0)\n"
		           "\t\treturn -1;\n");
	str_put(s, "\treturn 0;\n}\n\n");
	str_printf(s, "void *\n%s_input_buffer(%s *m, int k)\n{\n", nm, nm);
	if (inbuf)
		str_printf(s, "\treturn m && m->ok ? %s_inbuf(m->gpu, k) : NULL;\n}\n\n", nm);
	else
		str_put(s, "\t(void)m;\n\t(void)k;\n\treturn NULL;   /* no input goes to a device as it is */\n}\n\n");
	for (i = 0; i < np; i++) {
		if (p[i].isout)
			nout++;
		else
			nin++;
	}
	if (nent == 0)
		runapi(s, fn, pl, p, np, NULL, 0, "run", "");
	for (i = 1; i <= nent; i++)
		runapi(s, fn, pl, p, np, ent, i, ename[i - 1], ename[i - 1]);
	if (capi_generate(fn) >= 0) {   /* NAME_generate: dprt_generate over NAME_run */
		int gi = capi_generate(fn), pos = capi_genpos(fn);
		int tin = pos >= 0 && pos < gi;   /* the token input's place: after pos */
		int64_t len = fn->val[fn->op[gi].out[0]].t.dim[1];
		const char *ge = dp_gets(&fn->op[gi], "entry"), *pe;
		size_t pn = 0;
		int ge_ = ent ? ent[gi] : 0, pe_ = 0, pi = -1, pp = -1;

		pe = capi_genprefill(fn, &pn);
		for (i = 0; pe && i < fn->nop; i++)   /* the prefill entry's token and positions inputs */
			if (fn->op[i].kind == Oinput && strlen(dp_gets(&fn->op[i], "entry")) == pn &&
			    strncmp(dp_gets(&fn->op[i], "entry"), pe, pn) == 0) {
				pe_ = ent[i];
				if (pi < 0 && (tin ? pp >= 0 : 1))
					pi = i;
				else
					pp = i;
			}
		if (pe && (pi < 0 || pp < 0))
			dp_die("the prefill entry of the generate statement has no 2 inputs");
		if (pe)   /* a prefill entry: its buffers too */
			str_printf(s, "typedef struct %s_gen {\n\t%s *m;\n\tint64_t ids[%lld], pos[%lld];\n"
			              "\tint64_t pids[%lld], ppos[%lld];\n"
			              "\tvoid *out[%d];\n\t%s_token_fn *token;\n\tvoid *u;\n} %s_gen;\n\n",
			           nm, nm, (long long)len, (long long)len,
			           (long long)fn->val[fn->op[pi].out[0]].t.dim[1],
			           (long long)fn->val[fn->op[pi].out[0]].t.dim[1], nout, nm, nm);
		else if (pos >= 0)   /* with a positions input: their buffer too */
			str_printf(s, "typedef struct %s_gen {\n\t%s *m;\n\tint64_t ids[%lld], pos[%lld];\n"
			              "\tvoid *out[%d];\n\t%s_token_fn *token;\n\tvoid *u;\n} %s_gen;\n\n",
			           nm, nm, (long long)len, (long long)len, nout, nm, nm);
		else
		str_printf(s, "typedef struct %s_gen {\n\t%s *m;\n\tint64_t ids[%lld];\n"
		              "\tvoid *out[%d];\n\t%s_token_fn *token;\n\tvoid *u;\n} %s_gen;\n\n",
		           nm, nm, (long long)len, nout, nm, nm);
		(void)gi;
		str_printf(s, "static int\n%s_genrun(void *ctx)\n{\n\t%s_gen *g = ctx;\n\n"
		              "\treturn %s_%s(g->m, %s", nm, nm, nm, ge ? ge : "run",
		           pos < 0 ? "g->ids" : tin ? "g->pos, g->ids" : "g->ids, g->pos");
		for (i = 0; i < nout; i++)
			if (!ent || ent[fn->val[fn->out[i].val].def] == ge_)
				str_printf(s, ", g->out[%d]", i);
		str_put(s, ");\n}\n\n");
		if (pe) {   /* the prompt's runs: the prefill entry */
			str_printf(s, "static int\n%s_genprefill(void *ctx)\n{\n\t%s_gen *g = ctx;\n\n"
			              "\treturn %s_%.*s(g->m, %s", nm, nm, nm, (int)pn, pe,
			           tin ? "g->ppos, g->pids" : "g->pids, g->ppos");
			for (i = 0; i < nout; i++)
				if (ent[fn->val[fn->out[i].val].def] == pe_)
					str_printf(s, ", g->out[%d]", i);
			str_put(s, ");\n}\n\n");
		}
		str_printf(s, "static int\n%s_gentoken(void *ctx, int64_t t)\n{\n\t%s_gen *g = ctx;\n\n"
		              "\treturn g->token(g->u, t) != 0;\n}\n\n", nm, nm);
		str_printf(s, "int64_t\n%s_generate(%s *m, const int64_t *prompt, int64_t n, const char *keys,\n"
		              "\t%*s%s_token_fn *token, void *u)\n{\n"
		              "\t%s_gen *g;\n\tdprt_generation gen;\n\tchar *spec;\n"
		              "\tint64_t ngen = 0;\n\tint in, out, rc;\n\n"
		              "\tif (m == NULL)\n\t\treturn -1;\n"
		              "\tif (prompt == NULL || token == NULL) {\n"
		              "\t\tstrcpy(m->err, \"%s_generate: a NULL prompt or token function\");\n"
		              "\t\treturn -1;\n\t}\n"
		              "\tif (n < 1%s%.0lld) {\n"
		              "\t\tstrcpy(m->err, \"%s_generate: the prompt must have %s%.0lld "
		              "tokens\");\n\t\treturn -1;\n\t}\n"
		              "\tspec = malloc(strlen(%s_prog.generate) + (keys ? strlen(keys) : 0) + 2);\n"
		              "\tg = calloc(1, sizeof *g);\n"
		              "\tif (spec == NULL || g == NULL) {\n\t\tfree(spec);\n\t\tfree(g);\n"
		              "\t\tstrcpy(m->err, \"out of memory\");\n\t\treturn -1;\n\t}\n"
		              "\tstrcpy(spec, %s_prog.generate);\n"
		              "\tif (keys && *keys)\n\t\tstrcat(strcat(spec, \",\"), keys);\n"
		              "\trc = dprt_genspec(&%s_prog, spec, &gen, &in, &out, m->err, sizeof m->err);\n"
		              "\tfree(spec);\n",
		           nm, nm, (int)strlen(nm) + 10, "", nm, nm, nm, pos < 0 ? " || n > " : "",
		           pos < 0 ? (long long)len : 0LL, nm, pos < 0 ? "1 to " : "1 or more",
		           pos < 0 ? (long long)len : 0LL, nm, nm, nm);
		for (i = 0; i < np; i++)
			if (p[i].isout)
				str_printf(s, "\tif (rc == 0 && (g->out[%d] = malloc(%lld)) == NULL)\n"
				              "\t\trc = -1, strcpy(m->err, \"out of memory\");\n",
				           i - nin, (long long)dp_nbytes(&p[i].t));
		if (pe)
			str_printf(s, "\tif (rc == 0 && gen.prefill >= 0) {\n"
			              "\t\tgen.pids = g->pids;\n\t\tgen.ppos = g->ppos;\n"
			              "\t\tgen.plogits = g->out[gen.plout];\n"
			              "\t\tgen.prefill_run = %s_genprefill;\n\t}\n", nm);
		if (pos >= 0)
			str_put(s, "\tif (rc == 0) {\n"
			           "\t\tg->m = m;\n\t\tg->token = token;\n\t\tg->u = u;\n"
			           "\t\tgen.ids = g->ids;\n\t\tgen.pos = g->pos;\n\t\tgen.prompt = prompt;\n"
			           "\t\tgen.n = n;\n\t\tgen.logits = g->out[out];\n");
		else
		str_put(s, "\tif (rc == 0) {\n"
		           "\t\tg->m = m;\n\t\tg->token = token;\n\t\tg->u = u;\n"
		           "\t\tmemcpy(g->ids, prompt, (size_t)n * sizeof *prompt);\n"
		           "\t\tgen.ids = g->ids;\n\t\tgen.n = n;\n\t\tgen.logits = g->out[out];\n");
		str_printf(s, "\t\trc = dprt_generate(&gen, %s_genrun, %s_gentoken, g, &ngen, m->err, "
		              "sizeof m->err);\n\t}\n", nm, nm);
		str_printf(s, "\tfor (in = 0; in < %d; in++)\n\t\tfree(g->out[in]);\n\tfree(g);\n"
		              "\treturn rc < 0 ? -1 : ngen;\n}\n\n", nout);
	}
	str_printf(s, "void\n%s_reset(%s *m)\n{\n", nm, nm);
	if (state)
		str_printf(s, "\tif (m != NULL && m->ok)\n\t\t%s_state(m->arena, "
		              "dprt_weights_base(m->w));\n%s", nm, gpustate ? "" : "}\n\n");
	if (gpustate)   /* the state on the device: uploaded again */
		str_printf(s, "\tif (m != NULL && m->ok)   /* a failing device fails the next run too */\n"
		              "\t\t(void)%s_gpu_reset(m->gpu, dprt_weights_base(m->w), m->err, "
		              "sizeof m->err);\n}\n\n", nm);
	else if (!state)
		str_put(s, "\t(void)m;   /* no state */\n}\n\n");
	str_printf(s, "const char *\n%s_error(const %s *m)\n{\n"
	              "\tconst char *busy = dprt_refused(m);   /* this thread's call refused */\n\n"
	              "\treturn m == NULL ? \"out of memory\" : busy ? busy : m->err;\n}\n\n",
	           nm, nm);
	str_printf(s, "void\n%s_destroy(%s *m)\n{\n"
	              "\tif (m == NULL)\n\t\treturn;\n", nm, nm);
	if (pl->ncuda)
		str_printf(s, "\tif (m->ok)\n\t\t%s_gpu_fini(m->gpu);\n", nm);
	str_put(s, "\tdprt_pool_destroy(m->pool);\n\tdprt_weights_free(m->w);\n\tfree(m->mem);\n"
	           "\tfree(m);\n}\n");
}

/* The entry of parameter p: its input's or its output's value's. */
static int
paramentry(const Fn *fn, const Param *p, const int *ent)
{
	return ent[fn->val[p->val].def];
}

/* The dprt_entry table of a program with entries: each entry's name,
 * schedule, and its inputs and outputs among the program's. */
static void
entrytable(Str *s, const Fn *fn, const Param *p, int np, const int *ent, const char **ename,
           int nent)
{
	int e, i, k, isout;

	for (e = 1; e <= nent; e++)
		for (isout = 0; isout < 2; isout++) {
			str_printf(s, "static const int %s_%s_%s[] = {", fn->name, ename[e - 1],
			           isout ? "out" : "in");
			for (i = 0, k = 0; i < np; i++) {
				if (p[i].isout != isout)
					continue;
				if (paramentry(fn, &p[i], ent) == e)
					str_printf(s, "%s%d", k++ ? ", " : "", i - (isout ? np - fn->nout : 0));
			}
			str_put(s, k ? "};\n" : "-1};\n");
		}
	str_printf(s, "static const dprt_entry %s_entries[%d] = {\n", fn->name, nent);
	for (e = 1; e <= nent; e++) {
		int n[2] = {0, 0};
		for (i = 0; i < np; i++)
			n[p[i].isout] += paramentry(fn, &p[i], ent) == e;
		str_put(s, "\t{");
		str_cstring(s, ename[e - 1]);
		str_printf(s, ", %s_schedule_%s, %d, %s_%s_in, %d, %s_%s_out},\n", fn->name,
		           ename[e - 1], n[0], fn->name, ename[e - 1], n[1], fn->name, ename[e - 1]);
	}
	str_put(s, "};\n");
}

/* Writes the C file of fn into *out. */
int
emit_file(Fn *fn, const char *src, const char *dst, Str *out, Err *err)
{
	Str top = {0}, body = {0}, decl = {0}, prep = {0}, state = {0}, eruns = {0}, edecl = {0};
	Str pieces = {0};
	Str *esched = NULL;
	int *ent, nent = 0, e;
	const char **ename;
	Param *par;
	Plan pl;
	Ctx c;
	int np, i, k, rc = -1, nin = 0, nout = 0, hasblob, gpustate = 0;
	Fuse *fu = nn_fuse(fn);
	char *blk = nn_layout(fn, fu);
	int64_t *prepoff, nb, prep0, prep1;

	if (capi_params(fn, &par, &np, err) != 0 || plan(fn, blk, &pl, err) != 0)
		return -1;
	/* prepared weights (nn_prep) after the plan's arena, never reused */
	prepoff = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *prepoff);
	prep0 = pl.arena;
	for (i = 0; i < fn->nop; i++)
		if (fn->op[i].dev == DEV_CPU && (nb = nn_prep(fn, &fn->op[i])) > 0) {
			prepoff[i] = pl.arena;
			pl.arena += (nb + 63) / 64 * 64;
		}
	prep1 = pl.arena;
	/* the state (consts with state=1) after them, never reused either: the
	 * arena is the instance's, kept from run to run */
	for (i = 0; i < fn->nop; i++) {
		Home *h = &pl.h[fn->op[i].out[0]];
		if (fn->op[i].kind != Oconst || !dp_geti(&fn->op[i], "state", 0))
			continue;
		if (fn->op[i].dev == DEV_CUDA) {   /* kept on the device (5.gpu.cu) */
			gpustate = 1;
			continue;
		}
		if (fn->op[i].dev != DEV_CPU || h->kind != H_CONST) {
			dp_seterr(err, "op %d (const, state): a program's state lives on the cpu", i);
			return -1;
		}
		str_printf(&state, "\tmemcpy(A + %lld, W + %lld, %lld);   /* ", (long long)pl.arena,
		           (long long)h->idx, (long long)h->bytes);
		op_text(&state, fn, &fn->op[i]);
		str_put(&state, " */\n");
		h->kind = H_ARENA;
		h->idx = pl.arena;
		h->last = fn->nop;   /* alive for ever */
		pl.arena += (h->bytes + 63) / 64 * 64;
	}
	for (i = 0; i < np; i++) {
		nin += !par[i].isout;
		nout += par[i].isout;
	}
	c = (Ctx){.fn = fn, .plan = &pl, .top = &top, .body = &body, .err = err, .fuse = fu,
	          .prep = &prep, .prepoff = prepoff, .blk = blk, .pieces = &pieces, .piece = PIECE};
	if (getenv("DP_CPU_PIECE") && atoi(getenv("DP_CPU_PIECE")) > 0)
		c.piece = atoi(getenv("DP_CPU_PIECE"));
	ent = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *ent);
	ename = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *ename);
	if ((nent = dp_entries(fn, ent, ename, err)) < 0)
		goto done;
	esched = dp_alloc(fn->arena, (size_t)nent + 1, sizeof *esched);
	for (e = nent ? 1 : 0; e <= nent; e++) {   /* one schedule per entry */
		c.used = dp_alloc(fn->arena, (size_t)fn->nval + 1, 1);
		c.body = nent ? &esched[e - 1] : &body;
		c.inpiece = 0;
		if (schedule(&c, ent, e) != 0)
			goto done;
		decls(&c, nent ? &edecl : &decl);
		if (nent) {
			runfn(&c, &eruns, c.body, &edecl, ename[e - 1]);
			str_put(&eruns, "\n");
			str_free(&edecl);
		}
	}

	str_printf(out, "/* %s: the host code of the DevProc program \"%s\", generated by\n"
	                " * dp-lower_cpu from ", dst, fn->name);
	str_comment(out, src);
	str_printf(out, "; do not edit.  Buffer plan: %lld bytes of arena,\n"
	                " * offsets 64-byte aligned and reused once a value is dead; inputs are\n"
	                " * read and outputs written in the caller's buffers. */\n", (long long)pl.arena);
	str_put(out, "#include <math.h>\n#include <stdint.h>\n#include <stdlib.h>\n"
	             "#include <string.h>\n\n#include \"dprt.h\"\n");
	str_put(out, c.scalar ? "#include \"dpscalar.h\"\n\n" : "\n");
	str_printf(out, "/* The typed C API, as declared in %s.h (written by dp-link). */\n", fn->name);
	capi_decls(out, fn, par, np);
	str_printf(out, "\nextern const dprt_prog %s_prog;\n", fn->name);
	if (pl.ncuda) {
		str_printf(out, "\n/* The CUDA side, in 5.gpu.cu (dp-lower_gpu). */\n"
		                "int %s_gpu_init(void **state, const unsigned char *weights,\n"
		                "\tchar *err, size_t errn);\n"
		                "void %s_gpu_fini(void *state);\n"
		                "void *%s_gpu_host(void *state, size_t off);\n", fn->name, fn->name,
		           fn->name);
		if (gpustate)
			str_printf(out, "int %s_gpu_reset(void *state, const unsigned char *weights,\n"
			                "\tchar *err, size_t errn);\n", fn->name);
		if (pl.nev)   /* the events of the copies in pieces */
			str_printf(out, "int %s_gpu_wait(void *state, int ev, char *err, size_t errn);\n",
			           fn->name);
		for (i = 0; i < fn->npart; i++)
			if (fn->part[i].dev == DEV_CUDA)
				str_printf(out, "int %s_gpu_part%d(void *state, char *err, size_t errn);\n",
				           fn->name, i);
	}
	for (i = 0; i < fn->nop && fn->op[i].kind != Oconst; i++)
		;
	hasblob = i < fn->nop;
	if (hasblob)
		str_printf(out, "extern const dprt_blob %s_blob;   /* the weight blob (dp-link) */\n",
		           fn->name);
	str_put(out, "\n");
	if (top.n)
		str_printf(out, "%s\n", top.p);
	iotable(out, fn, par, np, 0);
	iotable(out, fn, par, np, 1);
	str_put(out, "\n");
	if (prep.n)
		str_printf(out, "/* Prepares the weights in the arena's last %lld bytes, once per "
		                "instance. */\nstatic void\n%s_prep(void *arena, const unsigned char *W)\n{\n%s}\n\n",
		           (long long)(prep1 - prep0),
		           fn->name, prep.p);
	if (state.n)
		str_printf(out, "/* Sets the state the program keeps from run to run (in the arena,\n"
		                " * after the prepared weights) to its initial value, from the weights. */\n"
		                "static void\n%s_state(void *arena, const unsigned char *W)\n{\n"
		                "\tunsigned char *A = arena;\n\n%s}\n\n", fn->name, state.p);
	if (pieces.n)
		str_put(out, pieces.p);
	if (nent)
		str_put(out, eruns.p);
	else
		runfn(&c, out, &body, &decl, NULL);
	if (nent)
		entrytable(out, fn, par, np, ent, ename, nent);
	for (i = 0, k = 0; pl.ncuda && i < nin; i++)
		if (inpin(fn, &pl, i) >= 0)
			k++;
	if (k) {   /* the staged inputs (NAME_input_buffer) */
		str_printf(out, "\n/* Where input k can be written so that a run reads it without a copy:\n"
		                " * the page-locked buffer it goes to the device from; NULL for an\n"
		                " * input the host reads or converts first. */\n"
		                "static void *\n%s_inbuf(void *state, int k)\n{\n\tswitch (k) {\n",
		           fn->name);
		for (i = 0; i < nin; i++)
			if (inpin(fn, &pl, i) >= 0)
				str_printf(out, "\tcase %d: return %s_gpu_host(state, %lld);\n", i, fn->name,
				           (long long)inpin(fn, &pl, i));
		str_put(out, "\t}\n\treturn NULL;\n}\n");
	}
	str_printf(out, "\n/* The program descriptor that dprt_main and the typed API run. */\n"
	                "const dprt_prog %s_prog = {\n\t.name = ", fn->name);
	str_cstring(out, fn->name);
	str_printf(out, ",\n\t.nin = %d,\n\t.nout = %d,\n", nin, nout);
	if (nin)
		str_printf(out, "\t.in = %s_inputs,\n", fn->name);
	if (nout)
		str_printf(out, "\t.out = %s_outputs,\n", fn->name);
	str_printf(out, "\t.arena_bytes = %lld,\n", (long long)pl.arena);
	if (pl.ncuda)
		str_printf(out, "\t.init = %s_gpu_init,\n\t.fini = %s_gpu_fini,\n", fn->name, fn->name);
	else
		str_put(out, "\t.init = NULL,\n\t.fini = NULL,\n");
	if (nent)
		str_printf(out, "\t.run = %s_schedule_%s,   /* the first entry's */\n", fn->name, ename[0]);
	else
		str_printf(out, "\t.run = %s_schedule,\n", fn->name);
	if (hasblob)
		str_printf(out, "\t.blob = &%s_blob,\n", fn->name);
	for (i = 0; i < fn->nout && fn->op[fn->val[fn->out[i].val].def].kind != Odetokenize; i++)
		;
	if (i < fn->nout) {   /* which outputs are text */
		str_put(out, "\t.textout = (const unsigned char[]){");
		for (i = 0; i < fn->nout; i++)
			str_printf(out, "%s%d", i ? ", " : "",
			           fn->op[fn->val[fn->out[i].val].def].kind == Odetokenize);
		str_put(out, "},\n");
	}
	for (i = 0; i < fn->nout && !fn->val[fn->out[i].val].t.bnd; i++)
		;
	if (i < fn->nout) {   /* bounded outputs: the next output is the row count */
		str_put(out, "\t.outlen = (const int[]){");
		for (i = 0; i < fn->nout; i++)
			str_printf(out, "%s%d", i ? ", " : "", fn->val[fn->out[i].val].t.bnd ? i + 2 : 0);
		str_put(out, "},\n");
	}
	if (prep.n)
		str_printf(out, "\t.prep = %s_prep,\n", fn->name);
	if (state.n)
		str_printf(out, "\t.reset = %s_state,\n", fn->name);
	for (i = 0; i < fn->nop; i++)   /* the generate statement, on its token input */
		if (fn->op[i].kind == Oinput && dp_gets(&fn->op[i], "generate")) {
			Str g = {0};

			str_printf(&g, "%s=%s", dp_gets(&fn->op[i], "name"), dp_gets(&fn->op[i], "generate"));
			str_put(out, "\t.generate = ");
			str_cstring(out, g.p);
			str_put(out, ",\n");
			str_free(&g);
		}
	if (nent)
		str_printf(out, "\t.nentry = %d,\n\t.entry = %s_entries,\n", nent, fn->name);
	if (k)
		str_printf(out, "\t.inbuf = %s_inbuf,\n", fn->name);
	str_put(out, "};\n\n");
	api(out, fn, &pl, par, np, prep.n > 0, state.n > 0, gpustate, ent, ename, nent, k > 0);
	rc = 0;
done:
	str_free(&top);
	str_free(&pieces);
	str_free(&body);
	str_free(&decl);
	str_free(&prep);
	str_free(&state);
	for (e = 0; esched && e < nent; e++)
		str_free(&esched[e]);
	str_free(&eruns);
	return rc;
}
