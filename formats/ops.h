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
	X(Oconst,     "const",        0, 1, Kconst, D_CPU|D_CUDA, "hash:s nbytes:i offset:i param:s?") \
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
	X(Amatmul,    "aten.matmul",  2, 1, Kmatmul,D_CPU|D_CUDA, "") \
	X(Aview,      "aten.view",    1, 1, Kshape, D_CPU|D_CUDA, "size:is") \
	X(Areshape,   "aten.reshape", 1, 1, Kshape, D_CPU|D_CUDA, "shape:is") \
	X(Apermute,   "aten.permute", 1, 1, Kshape, D_CPU|D_CUDA, "dims:is") \
	X(At,         "aten.t",       1, 1, Kshape, D_CPU|D_CUDA, "") \
	IMAGE_OPS(X) \
	NN_OPS(X)

/* The image and selection ops of pipelines (shape rules in formats/image.c). */
#define IMAGE_OPS(X) \
	X(Oresize,    "resize",       1, 1, Kimage, D_CPU,        "crop:is? size:is") \
	X(Ocrop,      "center_crop",  1, 1, Kimage, D_CPU,        "size:is") \
	X(Otopk,      "topk",         1, 2, Kindex, D_CPU,        "dim:i=-1 k:i")

/* The neural-network ops (shape rules in formats/rules.c).  "key:kind?" is
 * an optional attribute with no default: absent means "none". */
#define NN_OPS(X) \
	X(Aconv,      "aten.convolution", -1, 1, Kconv, D_CPU|D_CUDA, "dilation:is groups:i=1 padding:is stride:is") \
	X(Abatchnorm, "aten.batch_norm",   5, 1, Knorm, D_CPU|D_CUDA, "eps:f=1e-05") \
	X(Alayernorm, "aten.layer_norm",  -1, 1, Knorm, D_CPU|D_CUDA, "eps:f=1e-05 normalized_shape:is") \
	X(Armsnorm,   "aten.rms_norm",    -1, 1, Knorm, D_CPU|D_CUDA, "eps:f? normalized_shape:is") \
	X(Amaxpool,   "aten.max_pool2d",   1, 1, Kreduce, D_CPU|D_CUDA, "ceil_mode:i=0 dilation:is kernel_size:is padding:is stride:is") \
	X(Aavgpool,   "aten.avg_pool2d",   1, 1, Kreduce, D_CPU|D_CUDA, "ceil_mode:i=0 count_include_pad:i=1 divisor_override:i? kernel_size:is padding:is stride:is") \
	X(Aadaptavg,  "aten.adaptive_avg_pool2d", 1, 1, Kreduce, D_CPU|D_CUDA, "output_size:is") \
	X(Amean,      "aten.mean",         1, 1, Kreduce, D_CPU|D_CUDA, "dim:is keepdim:i=0") \
	X(Asum,       "aten.sum",          1, 1, Kreduce, D_CPU|D_CUDA, "dim:is keepdim:i=0") \
	X(Atranspose, "aten.transpose",    1, 1, Kshape, D_CPU|D_CUDA, "dim0:i dim1:i") \
	X(Aexpand,    "aten.expand",       1, 1, Kshape, D_CPU|D_CUDA, "size:is") \
	X(Aclone,     "aten.clone",        1, 1, Kshape, D_CPU|D_CUDA, "") \
	X(Acat,       "aten.cat",         -1, 1, Kshape, D_CPU|D_CUDA, "dim:i=0") \
	X(Astack,     "aten.stack",       -1, 1, Kshape, D_CPU|D_CUDA, "dim:i=0") \
	X(Aslice,     "aten.slice",        1, 1, Kshape, D_CPU|D_CUDA, "dim:i=0 end:i start:i step:i=1") \
	X(Aselect,    "aten.select",       1, 1, Kshape, D_CPU|D_CUDA, "dim:i index:i") \
	X(Aindex,     "aten.index",        2, 1, Kindex, D_CPU|D_CUDA, "dim:i=0") \
	X(Aembedding, "aten.embedding",    2, 1, Kindex, D_CPU|D_CUDA, "") \
	X(Abmm,       "aten.bmm",          2, 1, Kmatmul, D_CPU|D_CUDA, "") \
	X(Asub,       "aten.sub",          2, 1, Kelem, D_CPU|D_CUDA, "alpha:f=1") \
	X(Adiv,       "aten.div",          2, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Apow,       "aten.pow",          2, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Awhere,     "aten.where",        3, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Aeq,        "aten.eq",           2, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Ane,        "aten.ne",           2, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Alt,        "aten.lt",           2, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Ale,        "aten.le",           2, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Agt,        "aten.gt",           2, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Age,        "aten.ge",           2, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Aand,       "aten.logical_and",  2, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Aor,        "aten.logical_or",   2, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Axor,       "aten.logical_xor",  2, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Anot,       "aten.logical_not",  1, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Arsqrt,     "aten.rsqrt",        1, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Asqrt,      "aten.sqrt",         1, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Aexp,       "aten.exp",          1, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Alog,       "aten.log",          1, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Acos,       "aten.cos",          1, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Asin,       "aten.sin",          1, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Aneg,       "aten.neg",          1, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Aabs,       "aten.abs",          1, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Arecip,     "aten.reciprocal",   1, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Asigmoid,   "aten.sigmoid",      1, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Atanh,      "aten.tanh",         1, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Asilu,      "aten.silu",         1, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Agelu,      "aten.gelu",         1, 1, Kelem, D_CPU|D_CUDA, "approximate:s?") \
	X(Ahardswish, "aten.hardswish",    1, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Ahardsigm,  "aten.hardsigmoid",  1, 1, Kelem, D_CPU|D_CUDA, "") \
	X(Aclamp,     "aten.clamp",        1, 1, Kelem, D_CPU|D_CUDA, "max:f? min:f?") \
	X(Asdpa,      "aten.scaled_dot_product_attention", -1, 1, Kattn, D_CPU|D_CUDA, "is_causal:i=0 scale:f?") \
	X(Aarange,    "aten.arange",       0, 1, Ksource, D_CPU|D_CUDA, "dtype:s end:f start:f=0 step:f=1") \
	X(Afull,      "aten.full",         0, 1, Ksource, D_CPU|D_CUDA, "dtype:s size:is value:f") \
	X(Afulllike,  "aten.full_like",    1, 1, Ksource, D_CPU|D_CUDA, "dtype:s? value:f") \
	X(Ascalar,    "aten.scalar_tensor", 0, 1, Ksource, D_CPU|D_CUDA, "dtype:s value:f") \
	X(Aany,       "aten.any",          1, 1, Kreduce, D_CPU|D_CUDA, "dim:is keepdim:i=0")

/* Placement classes: X(enum, name) */
#define DP_CLASSES(X) \
	X(Kio, "io") X(Kconst, "const") X(Kcopy, "copy") X(Kelem, "elementwise") \
	X(Knorm, "normalize") X(Kmatmul, "matmul") X(Kconv, "conv") \
	X(Kreduce, "reduce") X(Kindex, "index") X(Kshape, "shape") \
	X(Kattn, "attention") X(Ksource, "source") X(Kimage, "image")
