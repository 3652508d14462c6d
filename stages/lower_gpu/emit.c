/* emit.c: assembles the .cu file: the kernels, one schedule function per
 * cuda partition (its host->device copies, kernel launches and library
 * calls, then the device->host copies the host reads after it, the large
 * ones in pieces), and the entry points the host code calls
 * (NAME_gpu_init, NAME_gpu_partK, NAME_gpu_host, NAME_gpu_wait,
 * NAME_gpu_fini). */
#include <stdio.h>
#include <string.h>

#include "gpu.h"

static int
ismm(int kind)
{
	return kind == Alinear || kind == Aaddmm || kind == Amm;
}

/* Whether the cuda target has a kernel for op kind: the dispatch of
 * emit_part below. */
int
gpu_supports(int kind)
{
	Op o = {.kind = kind, .dev = DEV_CUDA};

	if (dp_op_form[kind] == Fcomposite)
		return 0;   /* dp-legalize rewrites it */
	return kind == Oconst || kind == Ocopy || ismm(kind) || isnn(NULL, &o) || elemkind(kind) ||
	       isreduce(NULL, &o) || isscan(kind) || kind == Oassign || kind == Oindexwrite;
}

/* assign on cuda: the new value copied on the stream into the state's
 * bytes (in the weights block since init, the instance's), once every
 * other reader of the state has run; nothing where the new value is the
 * state's bytes (an index_write in place). */
static int
emit_assign(Gpu *g, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	int st = op->in[0], j, k, *e = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *e);

	if (g->h[st].kind != G_WEIGHT) {
		dp_seterr(g->err, "op %d (assign): its state is not on the device", i);
		return -1;
	}
	if (gbase(g, op->in[1]) == st)
		return 0;   /* written in place (index_write): nothing to copy */
	if (dp_entries(fn, e, NULL, g->err) < 0)
		return -1;
	for (j = 0; j < fn->nop; j++)   /* readers running after the update would see it */
		for (k = 0; k < fn->op[j].nin && e[j] == e[i]; k++)   /* (in its entry) */
			if (j != i && gbase(g, fn->op[j].in[k]) == st && g->exec[j] > g->exec[i]) {
				dp_seterr(g->err, "op %d (assign): op %d reads the state after its update",
				          i, j);
				return -1;
			}
	if (g->h[st].bytes == 0)
		return 0;
	opcomment(g->rec, fn, i, "\t");
	str_printf(g->rec, "\tif (dprt_cuda_ok(cudaMemcpyAsync((void *)v%d, v%d, %lld, "
	                   "cudaMemcpyDeviceToDevice, g->stream),\n"
	                   "\t                 \"cudaMemcpyAsync\", err, errn) != 0)\n\t\treturn -1;\n",
	           gV(g, st), gV(g, gbase(g, op->in[1])), (long long)g->h[st].bytes);
	return 0;
}

/* Declares the device pointers the schedule names: its buffer plan. */
static void
gpu_decls(Gpu *g, Str *s)
{
	const Fn *fn = g->fn;
	int v;

	for (v = 0; v < fn->nval; v++) {
		const GHome *h = &g->h[v];
		const char *ct = dtype_c(fn->val[v].t.dtype);
		char ty[160], d[256];

		if (!g->used[v])
			continue;
		if (ct == NULL)
			ct = "uint16_t";
		if (h->kind == G_WEIGHT)
			snprintf(d, sizeof d, "const %s *v%d = (const %s *)(W + %lld);", ct, v, ct,
			         (long long)h->off);
		else if (h->kind == G_ARENA && h->pin)
			snprintf(d, sizeof d, "%s *v%d = (%s *)(P + %lld);", ct, v, ct,
			         (long long)(h->pin - 1));
		else if (h->kind == G_ARENA)
			snprintf(d, sizeof d, "%s *v%d = (%s *)(A + %lld);", ct, v, ct, (long long)h->off);
		else
			dp_die("value %d: named by the schedule but has no device memory", v);
		if (h->pin)
			str_printf(s, "\t%-44s /* %s, staging [%lld,%lld) */\n", d,
			           dp_type_str(&fn->val[v].t, 0, ty, sizeof ty), (long long)(h->pin - 1),
			           (long long)(h->pin - 1 + h->bytes));
		else
			str_printf(s, "\t%-44s /* %s, %s [%lld,%lld) */\n", d,
			           dp_type_str(&fn->val[v].t, 0, ty, sizeof ty),
			           h->kind == G_WEIGHT ? "weights" : "arena", (long long)h->off,
			           (long long)(h->off + h->bytes));
	}
}

/* A copy between the pinned staging at pin and device value v. */
static int
memcpyasync(Gpu *g, int v, int64_t pin, int todev)
{
	if (g->h[v].bytes == 0)
		return 0;
	if (todev)
		str_printf(g->rec, "\tif (dprt_cuda_ok(cudaMemcpyAsync(v%d, P + %lld, %lld, "
		                   "cudaMemcpyHostToDevice, g->stream),\n", gV(g, v), (long long)pin,
		           (long long)g->h[v].bytes);
	else
		str_printf(g->rec, "\tif (dprt_cuda_ok(cudaMemcpyAsync(P + %lld, v%d, %lld, "
		                   "cudaMemcpyDeviceToHost, g->stream),\n", (long long)pin,
		           gV(g, gbase(g, v)), (long long)g->h[v].bytes);
	str_put(g->rec, "\t                 \"cudaMemcpyAsync\", err, errn) != 0)\n\t\treturn -1;\n");
	return 1;
}

/* A small host->device copy (op i, tune cuda.pdl 1) as a kernel of the
 * chain instead of a copy: the GPU reads the page-locked staging itself
 * (mapped, as all page-locked memory is under unified addressing) before
 * its wait, since only the host writes there, before the run, and stores
 * after it.  A copy in the stream would stop programmatic dependent launch
 * there: the kernel after it could start only once the copy is done (a
 * decode step's position: 11 us between the kernels around it on the
 * H200).  Up to COPYIN bytes, a block's words of the widest size that
 * divides the bytes, 16 a thread at most; larger copies stay copies.
 * __ldcv: a line of system memory the L2 kept from the run before is
 * fetched again. */
enum { COPYIN = 4096 };

static int
copyin(Gpu *g, int i)
{
	int v = g->fn->op[i].out[0], ws = 8, t, u;
	int64_t n = g->h[v].bytes, pin = g->x[i].pin, nw;
	static const char *wty[] = { [1] = "unsigned char", [2] = "unsigned short",
	                             [4] = "unsigned", [8] = "unsigned long long" };
	char name[32];

	if (!g->pdl || n <= 0 || n > COPYIN || g->h[v].kind != G_ARENA)
		return 0;
	while (n % ws || pin % ws || g->h[v].off % ws)
		ws /= 2;
	nw = n / ws;
	t = nw < 256 ? (int)(nw + 31) / 32 * 32 : 256;
	u = (int)((nw + t - 1) / t);
	snprintf(name, sizeof name, "k%d_copyin", v);
	str_printf(&g->kern, "/* %%%d: its %lld bytes read from the page-locked staging, "
	                     "%lld words of %d bytes */\n"
	                     "static __global__ void __launch_bounds__(%d)\n"
	                     "%s(const %s *__restrict__ p, %s *__restrict__ y)\n{\n"
	                     "\tint t = threadIdx.x;\n\t%s r[%d];\n\n"
	                     "#pragma unroll\n\tfor (int u = 0; u < %d; u++)   /* written by the host "
	                     "before the run, by no kernel */\n"
	                     "\t\tif (t + %d * u < %lld)\n\t\t\tr[u] = __ldcv(p + t + %d * u);\n",
	           v, (long long)n, (long long)nw, ws, t, name, wty[ws], wty[ws], wty[ws], u, u, t,
	           (long long)nw, t);
	kwait(g, &g->kern);
	str_printf(&g->kern, "#pragma unroll\n\tfor (int u = 0; u < %d; u++)\n"
	                     "\t\tif (t + %d * u < %lld)\n\t\t\ty[t + %d * u] = r[u];\n}\n",
	           u, t, (long long)nw, t);
	g->nkern++;
	klaunch(g, name, 1, t);
	str_printf(g->rec, "(const %s *)(P + %lld), (%s *)v%d);\n", wty[ws], (long long)pin, wty[ws],
	           gV(g, v));
	launched(g, name);
	gmark(g, i);
	return 1;
}

/* A device->host copy left out (tune cuda.copyout 1): the kernel computing
 * its value writes the value into the page-locked staging itself (mapped,
 * as all page-locked memory is under unified addressing), its stores
 * crossing the bus while it works, and the host reads it there once the
 * stream is done, as it would the copy's.  A copy in the stream costs its
 * own start and its bytes' time over the bus after the kernel ends.  Up to
 * COPYOUT bytes: past that the kernel's stores would wait on the bus. */
enum { COPYOUT = 1 << 20 };

/* Whether copy op i's value may be so written (by copyout or mirrors): a
 * value of its own in the arena, at most COPYOUT bytes, all of it copied,
 * computed in the partition the copy follows. */
static int
stageable(const Gpu *g, int i)
{
	int v = g->fn->op[i].in[0];
	const GHome *h = &g->h[v];

	return g->copyout && h->kind == G_ARENA && !h->wrby && h->bytes > 0 &&
	       h->bytes <= COPYOUT && h->bytes == g->x[i].bytes &&
	       g->fn->op[g->fn->val[v].def].part == g->x[i].part;
}

/* Copy op i left out where the one generated kernel computing its value
 * writes it and nothing on the device reads it (a decode step's logits):
 * the value's home is the staging (GHome.pin).  1 where it is. */
static int
copyout(Gpu *g, int i)
{
	int v = g->fn->op[i].in[0];

	if (!stageable(g, i) || !g->wonly[v] || g->nuse[v] != 1)
		return 0;
	g->h[v].pin = g->x[i].pin + 1;
	str_printf(g->rec, "\t/* none: %%%d is written into the page-locked staging by its "
	                   "kernel (copyout) */\n", v);
	return 1;
}

/* Before partition pk is emitted: each small result the host reads from
 * it that the device reads too asks the kernel computing it to write it
 * into the staging as well (GHome.mirror), which a GEMV of one product
 * does (mm.c, gvmirror: GHome.mirrored); its copy is then left out. */
static void
mirrors(Gpu *g, int pk)
{
	const Fn *fn = g->fn;

	for (int i = 0; i < fn->nop; i++) {
		int v = fn->op[i].in[0];
		if (g->x[i].kind != X_D2H || g->x[i].part != pk || g->x[i].npiece)
			continue;
		g->h[v].mirror = stageable(g, i) && g->nuse[v] > 1 ? g->x[i].pin + 1 : 0;
	}
}

/* The device->host copy of op i in pieces (xfer.h), each followed by its
 * event: the host copies a piece to the program's outputs once its event
 * is reached, while the next piece comes over. */
static void
pieces(Gpu *g, int i)
{
	const Xfer *x = &g->x[i];
	int v = g->fn->op[i].in[0], k;
	int64_t at, n;

	if (g->h[v].bytes != x->bytes)
		dp_die("internal error: lower_gpu: op %d copies %lld bytes, its transfer plan %lld",
		       i, (long long)g->h[v].bytes, (long long)x->bytes);
	str_printf(g->rec, "\t/* in %d pieces, each followed by its event (%d..%d) */\n",
	           x->npiece, x->ev, x->ev + x->npiece - 1);
	for (k = 0; k < x->npiece; k++) {
		n = xfer_piece(x, k, &at);
		str_printf(g->rec, "\tif (dprt_cuda_ok(cudaMemcpyAsync(P + %lld, (const unsigned char *)v%d "
		                   "+ %lld, %lld,\n"
		                   "\t                                 cudaMemcpyDeviceToHost, g->stream),\n"
		                   "\t                 \"cudaMemcpyAsync\", err, errn) != 0 ||\n"
		                   "\t    dprt_cuda_record(g, %d, err, errn) != 0)\n\t\treturn -1;\n",
		           (long long)(x->pin + at), gV(g, gbase(g, v)), (long long)at, (long long)n,
		           x->ev + k);
	}
}

/* The emitter of op i's kernels (a product, a convolution's chain,
 * pooling or attention, a fused elementwise chain, a scan, index_write, a
 * reduction), or NULL where the cuda target has none. */
typedef int Emit(Gpu *g, int i);

static Emit *
emitter(const Gpu *g, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];

	if (ismm(op->kind))
		return emit_mm;
	if (isnn(fn, op) || (g->fold && g->fold[i] == i))
		return gpu_emit_nn;
	if (fusable(fn, op))
		return emit_elem;
	if (isscan(op->kind))
		return emit_scan;
	if (op->kind == Oindexwrite)
		return emit_indexwrite;
	if (isreduce(fn, op))
		return emit_reduce;
	return NULL;
}

/* The schedule of cuda partition pk into *out; *sync says whether the
 * host must wait for it, *head the event it waits for instead of the
 * stream where the partition ends with copies in pieces (else -1). */
static int
partition(Gpu *g, int pk, Str *out, int *sync, int *head)
{
	Fn *fn = g->fn;
	Str rec = {0}, decl = {0};
	int i, v, first = -1, last = -1, nd2h = 0, rc = -1, pin = 0, arena = 0, weights = 0, k0, held;
	Emit *em;

	memset(g->used, 0, (size_t)fn->nval);
	g->rec = &rec;
	mirrors(g, pk);
	for (i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		if (op->part != pk)
			continue;
		if (first < 0)
			first = i;
		last = i;
		if (op->nout == 1 && g->h[op->out[0]].kind == G_INLINE)
			continue;   /* computed in its reader's kernel */
		if (op->kind == Arelu && g->relu[fn->val[op->in[0]].def] == i) {
			/* a matmul's epilogue: the product runs here */
			kflush(g);
			if (emit_mm(g, fn->val[op->in[0]].def) != 0)
				goto done;
			gmark(g, fn->val[op->in[0]].def);
			continue;
		}
		if (g->group[i] >= 0 && g->group[i] != i)
			continue;   /* in the GEMV kernel of its group's first */
		if (g->epimm[i] >= 0) {   /* a GEMV's epilogue: the product runs here */
			kflush(g);
			if (emit_mm(g, g->epimm[i]) != 0)
				goto done;
			gmark(g, g->epimm[i]);
			continue;
		}
		if (g->addnorm[i] >= 0)
			continue;   /* in its layer norm's kernel */
		if (g->rms[i] >= 0) {   /* an RMS norm written out: one row kernel */
			kflush(g);
			int r = emit_rms(g, i);   /* 1: held back for the GEMV reading it */
			if (r < 0)
				goto done;
			if (r == 0)
				gmark(g, i);
			continue;
		}
		switch (g->x[i].kind) {
		case X_H2D:
			kflush(g);
			opcomment(&rec, fn, i, "\t");
			pin |= copyin(g, i) || memcpyasync(g, op->out[0], g->x[i].pin, 1);
			continue;
		case X_UPLOAD:
			continue;   /* in the weights since init */
		}
		if (op->kind == Oconst)
			continue;
		if (op->kind == Oassign) {
			kflush(g);
			if (emit_assign(g, i) != 0)
				goto done;
			continue;
		}
		em = emitter(g, i);
		if (em == NULL) {
			dp_seterr(g->err, "op %d (%s): the cuda target has no kernel for this op", i,
			          dp_op_name[op->kind]);
			goto done;
		}
		/* small elementwise kernels wait to be launched with those after
		 * them (kern.c, kflush); anything else launches them first */
		held = em == emit_elem ||
		       (em == emit_indexwrite && g->h[op->in[2]].kind == G_INLINE);
		if (!held)
			kflush(g);
		k0 = g->nkern;
		if (em(g, i) != 0)
			goto done;
		if (!held && g->nkern > k0)
			gmark(g, i);
	}
	kflush(g);
	rms_flush(g);   /* an RMS norm no GEMV took */
	for (i = 0; i < fn->nop; i++) {   /* the copies the host reads next */
		if (g->x[i].kind != X_D2H || g->x[i].part != pk || g->x[i].npiece)
			continue;
		opcomment(&rec, fn, i, "\t");
		if (g->h[fn->op[i].in[0]].mirrored) {
			str_printf(g->rec, "\t/* none: its kernel wrote %%%d into the page-locked "
			                   "staging too (copyout) */\n", fn->op[i].in[0]);
			pin = 1;
		} else if (copyout(g, i))
			pin = 1;
		else
			pin |= memcpyasync(g, fn->op[i].in[0], g->x[i].pin, 0);
		nd2h++;
	}
	*head = -1;
	for (i = 0; i < fn->nop; i++) {   /* then those the host copies in pieces */
		if (g->x[i].kind != X_D2H || g->x[i].part != pk || g->x[i].npiece == 0)
			continue;
		if (*head < 0) {
			*head = g->x[i].head;
			str_printf(&rec, "\t/* the head: when the host's wait for it returns, all "
			                 "the work before it is done\n"
			                 "\t * (the copies in pieces after it go on) */\n"
			                 "\tif (dprt_cuda_record(g, %d, err, errn) != 0)\n\t\treturn -1;\n",
			           *head);
		}
		opcomment(&rec, fn, i, "\t");
		pieces(g, i);
		pin = 1;
		nd2h++;
	}
	*sync = nd2h > 0 || g->cpart[pk] == g->ncpart - 1;

	gpu_decls(g, &decl);
	if (*head >= 0)
		str_printf(out, "\n/* ---- partition %d (cuda): ops %d..%d; the host then waits for "
		                "event %d, the head ---- */\n\n", pk, first, last, *head);
	else
		str_printf(out, "\n/* ---- partition %d (cuda): ops %d..%d%s ---- */\n\n", pk, first,
		           last, *sync ? "; the host then waits for the stream" : "");
	str_printf(out, "/* Enqueues the work of partition %d on g's stream. */\n", pk);
	str_printf(out, "static int\npart%d(dprt_cuda *g, char *err, size_t errn)\n{\n", pk);
	for (v = 0; v < fn->nval; v++) {
		arena |= g->used[v] && g->h[v].kind == G_ARENA && !g->h[v].pin;
		weights |= g->used[v] && g->h[v].kind == G_WEIGHT;
	}
	if (arena)
		str_put(out, "\tunsigned char *A = g->arena;      /* the buffer plan */\n");
	if (weights)
		str_put(out, "\tconst unsigned char *W = g->weights; /* the constants */\n");
	if (pin)
		str_put(out, "\tunsigned char *P = g->pinned;     /* the transfer staging */\n");
	str_put(out, decl.p ? decl.p : "");
	str_put(out, "\n");
	str_put(out, rec.p ? rec.p : "");
	str_put(out, "\treturn 0;\n}\n");
	rc = 0;
done:
	kdrop(g);
	if (g->rmsp >= 0)
		rms_drop(g);
	g->rec = NULL;
	str_free(&rec);
	str_free(&decl);
	return rc;
}

/* NAME_gpu_init: the device, the plan, the constants. */
static void
init(Gpu *g, Str *s)
{
	const Fn *fn = g->fn;
	int i, n = 0;

	str_printf(s, "\n/* Opens the device and makes the state of one instance: the buffer\n"
	              " * plan, staging, the stream, and the constants used on cuda copied from\n"
	              " * the weight blob. */\n"
	              "extern \"C\" int\n%s_gpu_init(void **state, const unsigned char *W, char *err,\n"
	              "\tsize_t errn)\n{\n"
	              "\t/* arena, weights, pinned staging (bytes), cuda partitions, cuBLAS,\n"
	              "\t * events of the copies in pieces */\n"
	              "\tstatic const dprt_cuda_plan plan = {%lld, %lld, %lld, %d, %d, %d};\n"
	              "\tdprt_cuda *g;\n\n"
	              "\tif (dprt_cuda_open(&g, &plan, err, errn) != 0)\n\t\treturn -1;\n"
	              "#ifdef DP_HOST\n"
	              "\tif (dp_load(%s_gpu_fatbin, err, errn) != 0) {   /* the device half */\n"
	              "\t\tdprt_cuda_close(g);\n\t\treturn -1;\n\t}\n"
	              "#endif\n",
	           fn->name, (long long)g->arena, (long long)g->wbytes, (long long)g->pinned,
	           g->ncpart, g->blas, g->nev, fn->name);
	if (g->blas)
		str_put(s, "\tif (dprt_cublas_open(g, err, errn) != 0) {\n"
		           "\t\tdprt_cuda_close(g);\n\t\treturn -1;\n\t}\n");
	for (i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		const GHome *h = op->nout == 1 ? &g->h[op->out[0]] : NULL;
		const Op *c;
		if (h == NULL || h->kind != G_WEIGHT || h->bytes == 0)
			continue;
		c = op->kind == Oconst ? op : &fn->op[g->x[i].src];
		str_put(s, n++ ? " ||\n\t    " : "\t/* the constants used on cuda, from the weight blob */\n\tif (");
		str_printf(s, "dprt_cuda_upload(g, %lld, W + %lld, %lld, err, errn) != 0",
		           (long long)h->off, (long long)dp_geti(c, "offset", 0),
		           (long long)h->bytes);
	}
	if (n)
		str_put(s, ") {\n\t\tdprt_cuda_close(g);\n\t\treturn -1;\n\t}\n");
	else
		str_put(s, "\t(void)W;\n");
	if (g->faults)
		str_put(s, "\t/* where a kernel records an index out of range */\n"
		           "\t{\n\t\tdprt_fault *f;\n\n"
		           "\t\tif (dprt_cuda_faults(g, &f, err, errn) != 0 ||\n"
		           "#ifdef DP_HOST\n"
		           "\t\t    dprt_cuda_ok(cudaMemcpy(dp_symbol(\"dp_fault\"), &f, sizeof f, "
		           "cudaMemcpyHostToDevice), \"cudaMemcpy\", err, errn) != 0) {\n"
		           "#else\n"
		           "\t\t    dprt_cuda_ok(cudaMemcpyToSymbol(dp_fault, &f, sizeof f), "
		           "\"cudaMemcpyToSymbol\", err, errn) != 0) {\n"
		           "#endif\n"
		           "\t\t\tdprt_cuda_close(g);\n\t\t\treturn -1;\n\t\t}\n\t}\n");
	if (g->pdl)
		str_put(s, "\tg->pdl = dp_pdl_ok();   /* tune cuda.pdl 1: the library's decode attention "
		           "too, where the device has it */\n");
	if (g->prec16)
		mm16_init(g, s);
	if (g->w3)
		str_printf(s, "\t/* the constants and operands split for 3xTF32 (without the "
		              "memory: cuBLAS in fp32) */\n"
		              "\tif (dprt_cuda_x3init(g, %lld, %lld, err, errn) != 0) {\n"
		              "\t\tdprt_cuda_close(g);\n\t\treturn -1;\n\t}\n", (long long)g->w3,
		           (long long)g->s3);
	str_put(s, g->init.p ? g->init.p : "");
	str_put(s, "\t*state = g;\n\treturn 0;\n}\n");
	if (!gpu_hasstate(fn))
		return;
	str_printf(s, "\n/* Sets the program's state on the device (consts with state=1) to its\n"
	              " * initial value, from the weight blob: NAME_reset. */\n"
	              "extern \"C\" int\n%s_gpu_reset(void *state, const unsigned char *W, char *err,\n"
	              "\tsize_t errn)\n{\n\tdprt_cuda *g = (dprt_cuda *)state;\n\n"
	              "\tif (dprt_cuda_ok(cudaStreamSynchronize(g->stream), \"cudaStreamSynchronize\", "
	              "err, errn) != 0)\n\t\treturn -1;\n", fn->name);
	for (i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		const GHome *h = op->nout == 1 ? &g->h[op->out[0]] : NULL;
		if (op->kind != Oconst || op->dev != DEV_CUDA || !dp_geti(op, "state", 0) ||
		    h->kind != G_WEIGHT || h->bytes == 0)
			continue;
		str_printf(s, "\tif (dprt_cuda_upload(g, %lld, W + %lld, %lld, err, errn) != 0)\n"
		              "\t\treturn -1;\n", (long long)h->off, (long long)dp_geti(op, "offset", 0),
		           (long long)h->bytes);
	}
	str_put(s, "\treturn 0;\n}\n");
}

/* Whether fn keeps state on the device (a const with state=1 on cuda). */
int
gpu_hasstate(const Fn *fn)
{
	int i;

	for (i = 0; i < fn->nop; i++)
		if (fn->op[i].kind == Oconst && fn->op[i].dev == DEV_CUDA &&
		    dp_geti(&fn->op[i], "state", 0))
			return 1;
	return 0;
}

/* The kernels of text (the device half) into *dev, each static __global__
 * definition made DP_KERNEL (extern "C" where the device half is compiled
 * alone, for the host half to launch it by its name; else static), and
 * each one's declaration into *decl (the host half's view of it).  Every
 * kernel header the emitters write has the form
 * "static __global__ void [__launch_bounds__(N)]\nNAME(PARAMS)\n{". */
static void
kernels(const char *text, Str *dev, Str *decl)
{
	static const char key[] = "static __global__ void ";
	const char *p = text, *q, *h, *e;
	int depth;

	while ((q = strstr(p, key)) != NULL) {
		if (q != text && q[-1] != '\n') {   /* not a definition's first line */
			str_putn(dev, p, (size_t)(q + 1 - p));
			p = q + 1;
			continue;
		}
		str_putn(dev, p, (size_t)(q - p));
		str_put(dev, "DP_KERNEL void ");
		p = h = q + sizeof key - 1;
		if (strncmp(h, "__launch_bounds__(", 18) == 0)
			h = strchr(h, ')') + 1;
		while (*h == ' ' || *h == '\n')
			h++;
		for (e = h, depth = 0; *e; e++) {   /* NAME(PARAMS): to the matching ')' */
			if (*e == '(')
				depth++;
			else if (*e == ')' && --depth == 0)
				break;
		}
		if (*e == 0)
			dp_die("a kernel's header without its parameters: %.40s", h);
		str_put(decl, "extern \"C\" void ");
		str_putn(decl, h, (size_t)(e + 1 - h));
		str_put(decl, ";\n");
	}
	str_put(dev, p);
}

/* Writes the .cu file of g->fn into *out. */
int
gpu_emit_file(Gpu *g, const char *src, const char *dst, Str *out)
{
	Fn *fn = g->fn;
	Str parts = {0}, entry = {0}, decl = {0};
	int pk, sync, head, rc = -1;

	if (guses(g) != 0 || nnplan(g) != 0 || gplan(g) != 0)
		return -1;
	for (int i = 0; i < fn->nop; i++)   /* attention splits its keys into chunks in */
		if (fn->op[i].kind == Asdpa && fn->op[i].dev == DEV_CUDA)   /* the cuBLAS workspace */
			g->blas = 1;   /* when its rows are too few to fill the GPU (a decoder's step) */
	str_printf(out, "/* %s: the CUDA code of the DevProc program \"%s\", generated by\n"
	                " * dp-lower_gpu from ", dst, fn->name);
	str_comment(out, src);
	str_put(out, "; do not edit.\n");
	if (g->ncpart == 0) {
		str_put(out, " * The program has no cuda partitions: nothing to compile here. */\n");
		return 0;
	}
	for (pk = 0; pk < fn->npart; pk++) {
		if (g->cpart[pk] < 0)
			continue;
		if (partition(g, pk, &parts, &sync, &head) != 0)
			goto done;
		str_printf(&entry, "\n/* Runs partition %d: called by the host code (5.cpu.c). */\n"
		                   "extern \"C\" int\n%s_gpu_part%d(void *state, char *err, size_t errn)\n"
		                   "{\n", pk, fn->name, pk);
		if (head >= 0)
			str_printf(&entry, "\treturn dprt_cuda_run_until((dprt_cuda *)state, %d, part%d, "
			                   "%d, err, errn);\n}\n", g->cpart[pk], pk, head);
		else
			str_printf(&entry, "\treturn dprt_cuda_run((dprt_cuda *)state, %d, part%d, %d, "
			                   "err, errn);\n}\n", g->cpart[pk], pk, sync);
	}
	str_printf(out, " * %d cuda partition%s, %d kernel%s; device plan: %lld bytes of arena, "
	                "%lld of\n * weights, %lld of pinned host staging. */\n", g->ncpart,
	           g->ncpart == 1 ? "" : "s", g->nkern, g->nkern == 1 ? "" : "s",
	           (long long)g->arena, (long long)g->wbytes, (long long)g->pinned);
	str_put(out, "#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n\n"
	             "#include \"dprt_cuda.h\"\n");
	/* nvcc -c compiles the file whole; devproc build compiles its halves
	 * side by side, nvcc -fatbin -DDP_DEVICE the kernels and the C++
	 * compiler -DDP_HOST the host code (runtime/cuda/launch.cuh) */
	str_put(out, "\n#ifndef DP_HOST   /* the device half: the kernels */\n"
	             "#ifdef DP_DEVICE   /* alone: the host half finds them by name */\n"
	             "#define DP_KERNEL extern \"C\" __global__\n#else\n"
	             "#define DP_KERNEL static __global__\n#endif\n");
	if (g->scalar)
		str_put(out, "#include \"dpscalar.h\"\n");
	if (g->faults)
		str_put(out, "#include \"cuda/fault.cuh\"   /* dp_fault: indices out of range */\n");
	if (g->pdlearly)
		str_put(out, "#define DP_PDL_EARLY 1   /* tune cuda.pdl 1: the kernel after starts at once */\n");
	if (g->pdl)
		str_put(out, "#include \"cuda/pdl.cuh\"   /* tune cuda.pdl 1 */\n");
	if (g->x3put)
		str_put(out, "#include \"cuda/tf32.cuh\"   /* dp_x3put: 3xTF32's split of A */\n");
	if (g->halfcast)
		str_put(out, "#include \"cuda/halfcast.cuh\"   /* casts to and from f16, bf16 */\n");
	kernels(g->kern.p ? g->kern.p : "", out, &decl);
	str_put(out, "\n#else   /* the host half alone: the kernels' declarations */\n\n");
	if (g->prec16)
		str_put(out, "typedef uint16_t dp_h16;   /* 16-bit numbers, moved, not computed here */\n");
	str_put(out, decl.p ? decl.p : "");
	str_put(out, "\n#endif\n");
	if (g->ops)   /* (both halves: its kernels' definitions or declarations) */
		str_put(out, "#include \"dpops.cuh\"\n");
	str_put(out, "\n#ifndef DP_DEVICE   /* the host half */\n"
	             "#include \"cuda/launch.cuh\"\n");
	str_printf(out, "\n#ifdef DP_HOST\n/* the device half, embedded by dp-link */\n"
	                "extern \"C\" const unsigned char %s_gpu_fatbin[];\n#endif\n", fn->name);
	mm_pfend(g);
	str_put(out, g->pfdefs.p ? g->pfdefs.p : "");
	str_put(out, g->host.p ? g->host.p : "");
	str_put(out, parts.p);
	str_put(out, entry.p);
	init(g, out);
	str_printf(out, "\n/* Frees the state of NAME_gpu_init. */\n"
	                "extern \"C\" void\n%s_gpu_fini(void *state)\n{\n"
	                "\tdprt_cuda_close((dprt_cuda *)state);\n}\n", fn->name);
	str_printf(out, "\n/* The page-locked staging buffer at byte offset off, where the host\n"
	                " * writes what goes to the device and reads what came back. */\n"
	                "extern \"C\" void *\n%s_gpu_host(void *state, size_t off)\n{\n"
	                "\treturn ((dprt_cuda *)state)->pinned + off;\n}\n", fn->name);
	if (g->nev)
		str_printf(out, "\n/* Waits until event ev of the copies in pieces is reached: the\n"
		                " * piece before it is in the staging for the host to copy.  0, or -1\n"
		                " * with \"cuda: cudaEventSynchronize: <error string>\". */\n"
		                "extern \"C\" int\n%s_gpu_wait(void *state, int ev, char *err, size_t errn)\n"
		                "{\n\treturn dprt_cuda_wait((dprt_cuda *)state, ev, err, errn);\n}\n",
		           fn->name);
	str_put(out, "\n#endif   /* DP_DEVICE */\n");
	rc = 0;
done:
	str_free(&parts);
	str_free(&entry);
	str_free(&decl);
	return rc;
}
