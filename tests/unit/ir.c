/* ir.c: unit tests of the IR library (TAP). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dpir.h"

static int ntest, nfail;

static void
ok(int cond, const char *name, const char *detail)
{
	ntest++;
	if (!cond)
		nfail++;
	printf("%sok %d - %s\n", cond ? "" : "not ", ntest, name);
	if (!cond && detail)
		printf("# %s\n", detail);
}

static Type
ty(int dt, int rank, const int64_t *dim)
{
	Type t = { .dtype = (uint8_t)dt, .rank = (uint8_t)rank };
	memcpy(t.dim, dim, rank * sizeof *dim);
	return t;
}

/* Builds input x:f32[2,3] -> linear(w:[4,3], b:[4]) -> relu -> add(bias row) ->
 * argmax(dim 1). */
static Fn *
sample(void)
{
	Fn *fn = dp_new("sample", "test");
	Err err;
	int x = dp_addop(fn, Oinput, NULL, 0);
	dp_sets(fn, x, "name", "x");
	int vx = dp_addout(fn, x, ty(DP_F32, 2, (int64_t[]){ 2, 3 }));
	int w = dp_addop(fn, Oconst, NULL, 0);
	dp_seti(fn, w, "offset", 64);
	dp_seti(fn, w, "nbytes", 48);
	dp_sets(fn, w, "hash", "00");
	int vw = dp_addout(fn, w, ty(DP_F32, 2, (int64_t[]){ 4, 3 }));
	int b = dp_addop(fn, Oconst, NULL, 0);
	dp_seti(fn, b, "offset", 128);
	dp_seti(fn, b, "nbytes", 16);
	dp_sets(fn, b, "hash", "01");
	int vb = dp_addout(fn, b, ty(DP_F32, 1, (int64_t[]){ 4 }));
	int l = dp_addop(fn, Alinear, (int[]){ vx, vw, vb }, 3);
	if (dp_infer(fn, l, &err))
		return NULL;
	int r = dp_addop(fn, Arelu, &fn->op[l].out[0], 1);
	if (dp_infer(fn, r, &err))
		return NULL;
	int a = dp_addop(fn, Aadd, (int[]){ fn->op[r].out[0], vb }, 2);
	if (dp_infer(fn, a, &err))
		return NULL;
	int m = dp_addop(fn, Oargmax, &fn->op[a].out[0], 1);
	dp_seti(fn, m, "dim", 1);
	if (dp_infer(fn, m, &err))
		return NULL;
	dp_addport(fn, "label", fn->op[m].out[0]);
	dp_addport(fn, "scores", fn->op[a].out[0]);
	fn->weights = "weights.bin";
	fn->whash = "ff";
	fn->wsize = 192;
	dp_adddep(fn, "sample.dp", "0123");
	return fn;
}

static char *
print(const Fn *fn)
{
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	dp_print(f, fn);
	fclose(f);
	return buf;
}

/* Infers the result type of a one-op function and formats it (or the error). */
static const char *
infer1(int kind, Type a, Type *b, void (*attrs)(Fn *, int))
{
	static char out[800];
	Fn *fn = dp_new("t", "test");
	Err err;
	int in[2];
	int o = dp_addop(fn, Oinput, NULL, 0);
	dp_sets(fn, o, "name", "a");
	in[0] = dp_addout(fn, o, a);
	if (b) {
		o = dp_addop(fn, Oinput, NULL, 0);
		dp_sets(fn, o, "name", "b");
		in[1] = dp_addout(fn, o, *b);
	}
	o = dp_addop(fn, kind, in, b ? 2 : 1);
	if (attrs)
		attrs(fn, o);
	if (dp_infer(fn, o, &err))
		snprintf(out, sizeof out, "error: %s", err.msg);
	else
		dp_type_str(&fn->val[fn->op[o].out[0]].t, 0, out, sizeof out);
	dp_free(fn);
	return out;
}

static void dims0231(Fn *fn, int o) { dp_setints(fn, o, "dims", (int64_t[]){ 0, 2, 3, 1 }, 4); }
static void start1(Fn *fn, int o) { dp_seti(fn, o, "start", 1); }
static void shape_m1(Fn *fn, int o) { dp_setints(fn, o, "shape", (int64_t[]){ 2, -1 }, 2); }
static void shape_bad(Fn *fn, int o) { dp_setints(fn, o, "shape", (int64_t[]){ 5, -1 }, 2); }
static void dim1(Fn *fn, int o) { dp_seti(fn, o, "dim", 1); }

static void
expect_str(const char *got, const char *want, const char *name)
{
	char d[1024];
	snprintf(d, sizeof d, "got '%s', want '%s'", got, want);
	ok(strcmp(got, want) == 0, name, d);
}

static void
test_rules(void)
{
	Type a = ty(DP_F32, 2, (int64_t[]){ 2, 3 }), b = ty(DP_F32, 1, (int64_t[]){ 3 });
	expect_str(infer1(Aadd, a, &b, NULL), "f32[2,3]", "broadcast add [2,3]+[3]");
	Type c = ty(DP_F32, 2, (int64_t[]){ 4, 1 });
	expect_str(infer1(Amul, a, &c, NULL),
	           "error: aten.mul: shapes do not broadcast: f32[2,3] and f32[4,1]", "broadcast mismatch");
	Type i8 = ty(DP_I8, 1, (int64_t[]){ 3 });
	expect_str(infer1(Aadd, a, &i8, NULL), "error: aten.add: operand dtypes differ: f32 and i8",
	           "add dtype mismatch");
	Type m1 = ty(DP_F32, 3, (int64_t[]){ 5, 2, 3 }), m2 = ty(DP_F32, 2, (int64_t[]){ 3, 7 });
	expect_str(infer1(Amatmul, m1, &m2, NULL), "f32[5,2,7]", "batched matmul");
	Type v = ty(DP_F32, 1, (int64_t[]){ 3 });
	expect_str(infer1(Amatmul, a, &v, NULL), "f32[2]", "matrix-vector matmul");
	expect_str(infer1(Amm, a, &a, NULL), "error: aten.mm: inner dimensions differ: f32[2,3] and f32[2,3]",
	           "mm inner mismatch");
	Type img = ty(DP_U8, 4, (int64_t[]){ 1, 3, 4, 5 });
	expect_str(infer1(Opermute, img, NULL, dims0231), "u8[1,4,5,3]", "permute");
	expect_str(infer1(Oflatten, img, NULL, start1), "u8[1,60]", "flatten start=1");
	expect_str(infer1(Oreshape, a, NULL, shape_m1), "f32[2,3]", "reshape with -1");
	expect_str(infer1(Oreshape, a, NULL, shape_bad),
	           "error: reshape: cannot infer -1: 6 elements into blocks of 5", "reshape bad -1");
	expect_str(infer1(Oargmax, a, NULL, dim1), "i64[2]", "argmax drops dim");
	expect_str(infer1(Oargmax, a, NULL, NULL), "error: argmax: missing attribute 'dim'",
	           "argmax needs dim");
	Type huge = ty(DP_F32, 3, (int64_t[]){ 1LL << 31, 1LL << 31, 4 });
	expect_str(infer1(Arelu, huge, NULL, NULL), "error: aten.relu: result larger than 1 TiB",
	           "2^64-byte tensor rejected");
}

static void conv_attrs(Fn *fn, int o)
{
	dp_setints(fn, o, "stride", (int64_t[]){ 2 }, 1);
	dp_setints(fn, o, "padding", (int64_t[]){ 1, 1 }, 2);
	dp_setints(fn, o, "dilation", (int64_t[]){ 1 }, 1);
	dp_seti(fn, o, "groups", 1);
}
static void pool_attrs(Fn *fn, int o)
{
	dp_setints(fn, o, "kernel_size", (int64_t[]){ 3 }, 1);
	dp_setints(fn, o, "stride", (int64_t[]){ 2 }, 1);
	dp_setints(fn, o, "padding", (int64_t[]){ 0 }, 1);
	dp_setints(fn, o, "dilation", (int64_t[]){ 1 }, 1);
	dp_seti(fn, o, "ceil_mode", 1);
}
static void slice_attrs(Fn *fn, int o)
{
	dp_seti(fn, o, "dim", -1);
	dp_seti(fn, o, "start", 1);
	dp_seti(fn, o, "end", 9223372036854775807LL);
	dp_seti(fn, o, "step", 2);
}
static void cat1(Fn *fn, int o) { dp_seti(fn, o, "dim", 1); }
static void dims1(Fn *fn, int o) { dp_setints(fn, o, "dim", (int64_t[]){ -1 }, 1); }
static void causal(Fn *fn, int o) { dp_seti(fn, o, "is_causal", 1); }

static void
test_nn_rules(void)
{
	Type x = ty(DP_F32, 4, (int64_t[]){ 1, 3, 32, 32 }), w = ty(DP_F32, 4, (int64_t[]){ 16, 3, 3, 3 });
	expect_str(infer1(Aconv, x, &w, conv_attrs), "f32[1,16,16,16]", "convolution stride 2 pad 1");
	Type wg = ty(DP_F32, 4, (int64_t[]){ 16, 2, 3, 3 });
	expect_str(infer1(Aconv, x, &wg, conv_attrs),
	           "error: aten.convolution: channels do not match the weight and groups: f32[1,3,32,32] and f32[16,2,3,3]",
	           "convolution channel mismatch");
	Type p = ty(DP_F32, 4, (int64_t[]){ 1, 8, 112, 112 });
	expect_str(infer1(Amaxpool, p, NULL, pool_attrs), "f32[1,8,56,56]", "max_pool2d ceil_mode");
	Type s = ty(DP_F32, 2, (int64_t[]){ 4, 10 });
	expect_str(infer1(Aslice, s, NULL, slice_attrs), "f32[4,5]", "slice with step and open end");
	Type a = ty(DP_F32, 2, (int64_t[]){ 2, 3 }), b = ty(DP_F32, 2, (int64_t[]){ 2, 5 });
	expect_str(infer1(Acat, a, &b, cat1), "f32[2,8]", "cat along dim 1");
	expect_str(infer1(Astack, a, &a, cat1), "f32[2,2,3]", "stack along dim 1");
	Type q = ty(DP_F32, 4, (int64_t[]){ 1, 4, 32, 16 });
	Type bad = ty(DP_F32, 4, (int64_t[]){ 1, 4, 32, 8 });
	expect_str(infer1(Aeq, a, &a, NULL), "bool[2,3]", "comparison gives bool");
	expect_str(infer1(Aany, a, NULL, dims1), "bool[2]", "any over the last dim gives bool");
	(void)q; (void)bad; (void)causal;
}

static void
test_roundtrip(void)
{
	Fn *fn = sample();
	ok(fn != NULL, "build a function with dp_infer", NULL);
	if (!fn)
		return;
	Err err;
	ok(dp_verify(fn, &err) == 0, "sample verifies", err.msg);
	char *b1, *b2;
	size_t n1, n2;
	dp_encode(fn, &b1, &n1, &err);
	Fn *g;
	int rc = dp_decode(b1, n1, &g, &err);
	ok(rc == 0, "decode what was encoded", err.msg);
	if (rc)
		return;
	dp_encode(g, &b2, &n2, &err);
	ok(n1 == n2 && memcmp(b1, b2, n1) == 0, "encode(decode(x)) == x", NULL);
	char *t1 = print(fn), *t2 = print(g);
	ok(strcmp(t1, t2) == 0, "decoded IR prints the same", NULL);
	Fn *h;
	rc = dp_parse(t1, strlen(t1), &h, &err);
	ok(rc == 0, "parse printed text", err.msg);
	if (!rc) {
		char *t3 = print(h), *b3;
		size_t n3;
		ok(strcmp(t1, t3) == 0, "print(parse(text)) == text", t3);
		dp_encode(h, &b3, &n3, &err);
		ok(n3 == n1 && memcmp(b3, b1, n1) == 0, "parse(text) encodes to the same bytes", NULL);
		free(t3);
		free(b3);
		dp_free(h);
	}

	/* decoding errors */
	Fn *x;
	b1[1] = 'X';
	rc = dp_decode(b1, n1, &x, &err);
	expect_str(rc ? err.msg : "accepted", "not a DPIR file (bad magic)", "bad magic rejected");
	b1[1] = (char)0xa4;
	rc = dp_decode(b1, n1 / 2, &x, &err);
	char want[100];
	snprintf(want, sizeof want, "truncated DPIR (file ends after %zu bytes)", n1 / 2);
	expect_str(rc ? err.msg : "accepted", want, "truncated DPIR rejected");
	b1[6] = 9; /* major version: positive fixint */
	rc = dp_decode(b1, n1, &x, &err);
	expect_str(rc ? err.msg : "accepted", "DPIR version 9.0 is not readable by this tool (reads 1.x)",
	           "future major version rejected");
	b1[6] = 1;
	b1[7] = (char)0xa1; /* minor version becomes a string: swallows a byte */
	rc = dp_decode(b1, n1, &x, &err);
	ok(rc != 0 && strstr(err.msg, "malformed DPIR") == err.msg, "wrong msgpack type rejected", err.msg);
	free(b1);
	free(b2);
	free(t1);
	free(t2);
	dp_free(g);
	dp_free(fn);
}

static void
test_verify(void)
{
	Err err;
	Fn *fn = sample();
	fn->op[3].in[0] = fn->op[4].out[0];       /* linear reads relu's result */
	int rc = dp_verify(fn, &err);
	expect_str(rc ? err.msg : "accepted", "op 3 (aten.linear): operand %4 is used before it is defined",
	           "use before definition");
	dp_free(fn);
	fn = sample();
	fn->op[4].out[0] = fn->op[3].out[0];
	rc = dp_verify(fn, &err);
	expect_str(rc ? err.msg : "accepted", "op 4 (aten.relu): %3 is defined twice (first by op 3)",
	           "value defined twice");
	dp_free(fn);
	fn = sample();
	fn->val[fn->op[4].out[0]].t.dim[1] = 5;
	rc = dp_verify(fn, &err);
	expect_str(rc ? err.msg : "accepted",
	           "op 4 (aten.relu): result is declared f32[2,5] @cpu but the op gives f32[2,4] @cpu",
	           "wrong result shape");
	dp_free(fn);
	fn = sample();
	fn->op[1].attr[1].i = 40;  /* nbytes */
	rc = dp_verify(fn, &err);
	expect_str(rc ? err.msg : "accepted", "op 1 (const): const: nbytes=40 but the type needs 48",
	           "const size mismatch");
	dp_free(fn);
	fn = sample();
	fn->op[0].dev = DEV_CUDA;
	rc = dp_verify(fn, &err);
	expect_str(rc ? err.msg : "accepted", "op 0 (input): cannot run on cuda", "device legality");
	dp_free(fn);
}

static void
test_floats(void)
{
	double vals[] = { 0.1, 1.0 / 255, 0.485, 1e-30, 3.0, -2.5e10, INFINITY };
	Fn *fn = dp_new("f", "test");
	Err err;
	int o = dp_addop(fn, Oinput, NULL, 0);
	dp_sets(fn, o, "name", "x");
	int v = dp_addout(fn, o, ty(DP_U8, 1, (int64_t[]){ 7 }));
	int n = dp_addop(fn, Onormalize, &v, 1);
	dp_setfloats(fn, n, "mean", vals, 7);
	dp_setfloats(fn, n, "std", (double[]){ 1, 2, 3, 4, 5, 6, 7 }, 7);
	dp_setf(fn, n, "scale", 1.0 / 255);
	dp_infer(fn, n, &err);
	dp_addport(fn, "y", fn->op[n].out[0]);
	char *t = print(fn);
	ok(strstr(t, "mean=[0.1, 0.00392156862745098, 0.485, 1e-30, 3.0, -2.5e+10, inf]") != NULL,
	   "floats print shortest and read back as floats", t);
	Fn *g;
	int rc = dp_parse(t, strlen(t), &g, &err);
	ok(rc == 0 && memcmp(dp_attr(&g->op[1], "mean")->floats, vals, sizeof vals) == 0,
	   "floats read back exactly", rc ? err.msg : NULL);
	free(t);
	dp_free(fn);
	if (!rc)
		dp_free(g);
}

static void
test_target(void)
{
	const char *map = "target gpu\ndevice cpu\ndevice cuda sm_80\ndefault cpu\n"
	                  "class matmul cuda   # GEMMs\nop aten.relu cuda\nop argmax cpu\ntune block 256\n";
	Target t;
	Err err;
	int rc = dp_target_parse(map, strlen(map), &t, &err);
	ok(rc == 0 && !strcmp(t.arch, "sm_80"), "mapping parses, arch read", err.msg);
	char why[256];
	int d = dp_target_place(&t, "gpu", Alinear, why, sizeof why);
	expect_str(why, "gpu:5: class matmul -> cuda", "class rule");
	ok(d == DEV_CUDA, "linear on cuda", NULL);
	d = dp_target_place(&t, "gpu", Oargmax, why, sizeof why);
	expect_str(why, "gpu:7: op argmax -> cpu", "op rule");
	d = dp_target_place(&t, "gpu", Aview, why, sizeof why);
	expect_str(why, "gpu:4: default -> cpu", "default rule");
	expect_str(dp_target_tune(&t, "block", "0"), "256", "tunable");
	const char *bad = "target x\ndevice cpu\nclass matmal cuda\n";
	rc = dp_target_parse(bad, strlen(bad), &t, &err);
	char got[900];
	snprintf(got, sizeof got, "%d:%d: %s", err.line, err.col, err.msg);
	expect_str(rc ? got : "accepted",
	           "3:7: unknown op class 'matmal' (classes: io, const, copy, elementwise, normalize, matmul, conv, reduce, index, shape, attention, source, image)",
	           "unknown class rejected with position");
	const char *undeclared = "target x\ndevice cpu\ndefault cuda\n";
	rc = dp_target_parse(undeclared, strlen(undeclared), &t, &err);
	snprintf(got, sizeof got, "%d:%d: %s", err.line, err.col, err.msg);
	expect_str(rc ? got : "accepted", "3:9: device 'cuda' is not declared (add 'device cuda')",
	           "undeclared device rejected");
}

int
main(int argc, char **argv)
{
	if (argc > 1) {
		int help = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0;
		fputs("usage: test-ir\nRuns the IR library's unit tests (tests/ir.t), "
		      "printing TAP.\n", help ? stdout : stderr);
		return !help;
	}
	test_rules();
	test_nn_rules();
	test_roundtrip();
	test_verify();
	test_floats();
	test_target();
	printf("1..%d\n", ntest);
	return nfail != 0;
}
