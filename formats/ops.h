/* ops.h: the one table of DevProc ops (an X-macro list; see formats/ops.md). */

/*
 * X(enum, name, nin, nout, class, devices, attributes)
 *
 * nin/nout: operand and result counts; -1 in nin means "variadic" (the shape
 * rule checks the count).  class: the placement class a target mapping names.
 * devices: which devices can run it (D_CPU, D_CUDA bits).  attributes: a
 * space-separated list "key:kind" (required) or "key:kind=default" (optional,
 * filled in by dp_infer); kinds are i (int), f (float), s (string),
 * is (int list), fs (float list).  Attributes are kept sorted by key.
 *
 * Pipeline ops have plain names; imported ATen ops keep their ATen names.
 */
#define DP_OPS(X) \
	X(Oinput,     "input",        0, 1, Kio,    D_CPU,        "name:s") \
	X(Oconst,     "const",        0, 1, Kconst, D_CPU|D_CUDA, "hash:s nbytes:i offset:i") \
	X(Ocopy,      "copy",         1, 1, Kcopy,  D_CPU|D_CUDA, "to:s") \
	X(Ocast,      "cast",         1, 1, Kelem,  D_CPU|D_CUDA, "dtype:s") \
	X(Onormalize, "normalize",    1, 1, Knorm,  D_CPU|D_CUDA, "axis:i=-1 mean:fs scale:f=1 std:fs") \
	X(Opermute,   "permute",      1, 1, Kshape, D_CPU|D_CUDA, "dims:is") \
	X(Oreshape,   "reshape",      1, 1, Kshape, D_CPU|D_CUDA, "shape:is") \
	X(Oflatten,   "flatten",      1, 1, Kshape, D_CPU|D_CUDA, "end:i=-1 start:i=1") \
	X(Oargmax,    "argmax",       1, 1, Kindex, D_CPU|D_CUDA, "dim:i keepdim:i=0") \
	X(Osoftmax,   "softmax",      1, 1, Kreduce,D_CPU|D_CUDA, "dim:i") \
	X(Aadd,       "aten.add",     2, 1, Kelem,  D_CPU|D_CUDA, "alpha:f=1") \
	X(Amul,       "aten.mul",     2, 1, Kelem,  D_CPU|D_CUDA, "") \
	X(Arelu,      "aten.relu",    1, 1, Kelem,  D_CPU|D_CUDA, "") \
	X(Alinear,    "aten.linear", -1, 1, Kmatmul,D_CPU|D_CUDA, "") \
	X(Aaddmm,     "aten.addmm",   3, 1, Kmatmul,D_CPU|D_CUDA, "alpha:f=1 beta:f=1") \
	X(Amm,        "aten.mm",      2, 1, Kmatmul,D_CPU|D_CUDA, "") \
	X(Amatmul,    "aten.matmul",  2, 1, Kmatmul,D_CPU,        "") \
	X(Aview,      "aten.view",    1, 1, Kshape, D_CPU|D_CUDA, "size:is") \
	X(Areshape,   "aten.reshape", 1, 1, Kshape, D_CPU|D_CUDA, "shape:is") \
	X(Apermute,   "aten.permute", 1, 1, Kshape, D_CPU|D_CUDA, "dims:is") \
	X(At,         "aten.t",       1, 1, Kshape, D_CPU|D_CUDA, "")

/* Placement classes: X(enum, name) */
#define DP_CLASSES(X) \
	X(Kio, "io") X(Kconst, "const") X(Kcopy, "copy") X(Kelem, "elementwise") \
	X(Knorm, "normalize") X(Kmatmul, "matmul") X(Kconv, "conv") \
	X(Kreduce, "reduce") X(Kindex, "index") X(Kshape, "shape")
