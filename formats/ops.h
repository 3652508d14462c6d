/* ops.h: the one table of DevProc ops (an X-macro list; see formats/ops.md). */

/*
 * X(enum, name, nin, nout, class, form, formula, devices, attributes)
 *
 * nin/nout: operand and result counts; -1 in nin means "variadic" (the shape
 * rule checks the count).  class: the placement class a target mapping names.
 * form: what kind of computation it is (DP_FORMS below); the lowerings
 * dispatch on it and the cuda one fuses by it.  formula: for the
 * elementwise forms, the name of the scalar function in runtime/dpscalar.h
 * (dps_NAME; it also has dps_NAME_i64 when the form is Funaryn or
 * Fbinaryn), then the float attributes it takes as its parameters a and b,
 * each with its value when absent ("clamp min=-inf max=inf"); "" for the
 * other forms.  devices: which devices can run it (D_CPU, D_CUDA bits);
 * a Fcomposite op never reaches a device (dp-legalize rewrites it into
 * primitives), its devices are those of its decomposition.  attributes: a
 * space-separated list "key:kind" (required) or "key:kind=default"
 * (optional, filled in by dp_infer); kinds are i (int), f (float), s
 * (string), is (int list), fs (float list).  Attributes are kept sorted by
 * key.
 *
 * Pipeline ops have plain names; imported ATen ops keep their ATen names.
 * A new elementwise unary op is one row here (form Funary, its formula's
 * name), its formula in runtime/dpscalar.h, its row in stages/import/atab.c
 * and a conformance case (tools/make_conformance.py).
 */
#define DP_OPS(X) \
	X(Oinput,     "input",        0, 1, Kio, Fio,     "",        D_CPU,        "entry:s? generate:s? name:s") \
	X(Oconst,     "const",        0, 1, Kconst, Fconst,  "",        D_CPU|D_CUDA, "hash:s nbytes:i offset:i param:s? state:i?") \
	X(Ocopy,      "copy",         1, 1, Kcopy, Fcopy,   "",        D_CPU|D_CUDA, "to:s") \
	X(Ocast,      "cast",         1, 1, Kelem, Fcast,   "",        D_CPU|D_CUDA, "dtype:s") \
	X(Onormalize, "normalize",    1, 1, Knorm, Fnorm,   "",        D_CPU|D_CUDA, "axis:i=-1 mean:fs scale:f=1 std:fs") \
	X(Opermute,   "permute",      1, 1, Kshape, Fcomposite, "",   D_CPU|D_CUDA, "dims:is") \
	X(Oreshape,   "reshape",      1, 1, Kshape, Fcomposite, "",   D_CPU|D_CUDA, "shape:is") \
	X(Oflatten,   "flatten",      1, 1, Kshape, Fcomposite, "",   D_CPU|D_CUDA, "end:i=-1 start:i=1") \
	X(Obound,     "bound",        2, 1, Kshape, Fview,   "",        D_CPU|D_CUDA, "") \
	X(Oargmax,    "argmax",       1, 1, Kindex, Freduce, "",        D_CPU|D_CUDA, "dim:i keepdim:i=0") \
	X(Osoftmax,   "softmax",      1, 1, Kreduce, Freduce, "",        D_CPU|D_CUDA, "dim:i") \
	X(Aadd,       "aten.add",     2, 1, Kelem, Fbinary, "add",     D_CPU|D_CUDA, "alpha:f=1") \
	X(Amul,       "aten.mul",     2, 1, Kelem, Fbinary, "mul",     D_CPU|D_CUDA, "") \
	X(Arelu,      "aten.relu",    1, 1, Kelem, Funaryn, "relu",    D_CPU|D_CUDA, "") \
	X(Alinear,    "aten.linear", -1, 1, Kmatmul, Fmatmul, "",        D_CPU|D_CUDA, "") \
	X(Aaddmm,     "aten.addmm",   3, 1, Kmatmul, Fmatmul, "",        D_CPU|D_CUDA, "alpha:f=1 beta:f=1") \
	X(Amm,        "aten.mm",      2, 1, Kmatmul, Fmatmul, "",        D_CPU|D_CUDA, "") \
	X(Amatmul,    "aten.matmul",  2, 1, Kmatmul, Fcomposite, "",    D_CPU|D_CUDA, "") \
	X(Aview,      "aten.view",    1, 1, Kshape, Fview,   "",        D_CPU|D_CUDA, "size:is") \
	X(Areshape,   "aten.reshape", 1, 1, Kshape, Fcomposite, "",   D_CPU|D_CUDA, "shape:is") \
	X(Apermute,   "aten.permute", 1, 1, Kshape, Fmove,   "",        D_CPU|D_CUDA, "dims:is") \
	X(At,         "aten.t",       1, 1, Kshape, Fcomposite, "",   D_CPU|D_CUDA, "") \
	IMAGE_OPS(X) \
	TEXT_OPS(X) \
	STATE_OPS(X) \
	NN_OPS(X)

/* The image and selection ops of pipelines (shape rules in formats/image.c). */
#define IMAGE_OPS(X) \
	X(Oresize,    "resize",       1, 1, Kimage, Fimage,  "",        D_CPU,        "crop:is? size:is") \
	X(Ocrop,      "center_crop",  1, 1, Kimage, Fimage,  "",        D_CPU,        "size:is") \
	X(Otopk,      "topk",         1, 2, Kindex, Fsort,   "",        D_CPU,        "dim:i=-1 k:i")

/* The text ops of pipelines (shape rules in formats/image.c): byte-level
 * BPE through a tokenizer.json, whose bytes import makes the second
 * operand (a u8 const); text is u8[?] (UTF-8 of any length). */
#define TEXT_OPS(X) \
	X(Otokenize,  "tokenize",     2, 1, Kimage, Fimage,  "",        D_CPU,        "file:s length:i pad:i=0 special:i=1") \
	X(Odetokenize, "detokenize",  2, 1, Kimage, Fimage,  "",        D_CPU,        "bytes:i file:s skip:i=1")

/* The state of a program instance (shape rule in formats/image.c): a const
 * with state=1 is a buffer the program keeps from run to run, starting
 * from its bytes in the blob; assign writes operand 1 into that state
 * (operand 0) once every other reader of it has run; its result is
 * operand 1. */
#define STATE_OPS(X) \
	X(Oassign,    "assign",       2, 1, Kimage, Fcopy,   "",        D_CPU|D_CUDA, "")

/* The neural-network ops (shape rules in formats/rules.c).  "key:kind?" is
 * an optional attribute with no default: absent means "none". */
#define NN_OPS(X) \
	X(Aconv,      "aten.convolution", -1, 1, Kconv, Fconv,   "",        D_CPU|D_CUDA, "dilation:is groups:i=1 output_padding:is? padding:is stride:is transposed:i?") \
	X(Abatchnorm, "aten.batch_norm",   5, 1, Knorm, Fnorm,   "",        D_CPU|D_CUDA, "eps:f=1e-05") \
	X(Alayernorm, "aten.layer_norm",  -1, 1, Knorm, Fnorm,   "",        D_CPU|D_CUDA, "eps:f=1e-05 normalized_shape:is") \
	X(Armsnorm,   "aten.rms_norm",    -1, 1, Knorm, Fnorm,   "",        D_CPU|D_CUDA, "eps:f? normalized_shape:is") \
	X(Amaxpool,   "aten.max_pool2d",   1, 1, Kreduce, Fpool,   "",        D_CPU|D_CUDA, "ceil_mode:i=0 dilation:is kernel_size:is padding:is stride:is") \
	X(Aavgpool,   "aten.avg_pool2d",   1, 1, Kreduce, Fpool,   "",        D_CPU|D_CUDA, "ceil_mode:i=0 count_include_pad:i=1 divisor_override:i? kernel_size:is padding:is stride:is") \
	X(Aadaptavg,  "aten.adaptive_avg_pool2d", 1, 1, Kreduce, Fpool,   "",        D_CPU|D_CUDA, "output_size:is") \
	X(Amean,      "aten.mean",         1, 1, Kreduce, Freduce, "",        D_CPU|D_CUDA, "dim:is keepdim:i=0") \
	X(Asum,       "aten.sum",          1, 1, Kreduce, Freduce, "",        D_CPU|D_CUDA, "dim:is keepdim:i=0") \
	X(Atranspose, "aten.transpose",    1, 1, Kshape, Fcomposite, "",   D_CPU|D_CUDA, "dim0:i dim1:i") \
	X(Aexpand,    "aten.expand",       1, 1, Kshape, Fmove,   "",        D_CPU|D_CUDA, "size:is") \
	X(Aclone,     "aten.clone",        1, 1, Kshape, Fmove,   "",        D_CPU|D_CUDA, "") \
	X(Acat,       "aten.cat",         -1, 1, Kshape, Fmove,   "",        D_CPU|D_CUDA, "dim:i=0") \
	X(Astack,     "aten.stack",       -1, 1, Kshape, Fmove,   "",        D_CPU|D_CUDA, "dim:i=0") \
	X(Aslice,     "aten.slice",        1, 1, Kshape, Fmove,   "",        D_CPU|D_CUDA, "dim:i=0 end:i start:i step:i=1") \
	X(Aselect,    "aten.select",       1, 1, Kshape, Fmove,   "",        D_CPU|D_CUDA, "dim:i index:i") \
	X(Aindex,     "aten.index",        2, 1, Kindex, Fgather, "",        D_CPU|D_CUDA, "dim:i=0") \
	X(Oindexwrite, "index_write",     3, 1, Kindex, Fscatter, "",       D_CPU|D_CUDA, "dim:i") \
	X(Aembedding, "aten.embedding",    2, 1, Kindex, Fgather, "",        D_CPU|D_CUDA, "") \
	X(Abmm,       "aten.bmm",          2, 1, Kmatmul, Fmatmul, "",        D_CPU|D_CUDA, "") \
	X(Asub,       "aten.sub",          2, 1, Kelem, Fbinary, "sub",     D_CPU|D_CUDA, "alpha:f=1") \
	X(Adiv,       "aten.div",          2, 1, Kelem, Fbinary, "div",     D_CPU|D_CUDA, "") \
	X(Apow,       "aten.pow",          2, 1, Kelem, Fbinary, "pow",     D_CPU|D_CUDA, "") \
	X(Awhere,     "aten.where",        3, 1, Kelem, Fwhere,  "",        D_CPU|D_CUDA, "") \
	X(Aeq,        "aten.eq",           2, 1, Kelem, Fcompare, "eq",      D_CPU|D_CUDA, "") \
	X(Ane,        "aten.ne",           2, 1, Kelem, Fcompare, "ne",      D_CPU|D_CUDA, "") \
	X(Alt,        "aten.lt",           2, 1, Kelem, Fcompare, "lt",      D_CPU|D_CUDA, "") \
	X(Ale,        "aten.le",           2, 1, Kelem, Fcompare, "le",      D_CPU|D_CUDA, "") \
	X(Agt,        "aten.gt",           2, 1, Kelem, Fcompare, "gt",      D_CPU|D_CUDA, "") \
	X(Age,        "aten.ge",           2, 1, Kelem, Fcompare, "ge",      D_CPU|D_CUDA, "") \
	X(Aand,       "aten.logical_and",  2, 1, Kelem, Flogic,  "and",     D_CPU|D_CUDA, "") \
	X(Aor,        "aten.logical_or",   2, 1, Kelem, Flogic,  "or",      D_CPU|D_CUDA, "") \
	X(Axor,       "aten.logical_xor",  2, 1, Kelem, Flogic,  "xor",     D_CPU|D_CUDA, "") \
	X(Anot,       "aten.logical_not",  1, 1, Kelem, Flogic,  "not",     D_CPU|D_CUDA, "") \
	X(Arsqrt,     "aten.rsqrt",        1, 1, Kelem, Funary,  "rsqrt",   D_CPU|D_CUDA, "") \
	X(Asqrt,      "aten.sqrt",         1, 1, Kelem, Funary,  "sqrt",    D_CPU|D_CUDA, "") \
	X(Aexp,       "aten.exp",          1, 1, Kelem, Funary,  "exp",     D_CPU|D_CUDA, "") \
	X(Alog,       "aten.log",          1, 1, Kelem, Funary,  "log",     D_CPU|D_CUDA, "") \
	X(Acos,       "aten.cos",          1, 1, Kelem, Funary,  "cos",     D_CPU|D_CUDA, "") \
	X(Asin,       "aten.sin",          1, 1, Kelem, Funary,  "sin",     D_CPU|D_CUDA, "") \
	X(Aneg,       "aten.neg",          1, 1, Kelem, Funaryn, "neg",     D_CPU|D_CUDA, "") \
	X(Aabs,       "aten.abs",          1, 1, Kelem, Funaryn, "abs",     D_CPU|D_CUDA, "") \
	X(Arecip,     "aten.reciprocal",   1, 1, Kelem, Funary,  "reciprocal", D_CPU|D_CUDA, "") \
	X(Asigmoid,   "aten.sigmoid",      1, 1, Kelem, Funary,  "sigmoid", D_CPU|D_CUDA, "") \
	X(Atanh,      "aten.tanh",         1, 1, Kelem, Funary,  "tanh",    D_CPU|D_CUDA, "") \
	X(Asilu,      "aten.silu",         1, 1, Kelem, Funary,  "silu",    D_CPU|D_CUDA, "") \
	X(Agelu,      "aten.gelu",         1, 1, Kelem, Funary,  "gelu",    D_CPU|D_CUDA, "approximate:s?") \
	X(Ahardswish, "aten.hardswish",    1, 1, Kelem, Funary,  "hardswish", D_CPU|D_CUDA, "") \
	X(Ahardsigm,  "aten.hardsigmoid",  1, 1, Kelem, Funary,  "hardsigmoid", D_CPU|D_CUDA, "") \
	X(Aclamp,     "aten.clamp",        1, 1, Kelem, Funaryn, "clamp min=-inf max=inf", D_CPU|D_CUDA, "max:f? min:f?") \
	X(Asdpa,      "aten.scaled_dot_product_attention", -1, 1, Kattn, Fattn,   "",        D_CPU|D_CUDA, "is_causal:i=0 scale:f? enable_gqa:i=0") \
	X(Aarange,    "aten.arange",       0, 1, Ksource, Fsource, "",        D_CPU|D_CUDA, "dtype:s end:f start:f=0 step:f=1") \
	X(Afull,      "aten.full",         0, 1, Ksource, Fsource, "",        D_CPU|D_CUDA, "dtype:s size:is value:f") \
	X(Afulllike,  "aten.full_like",    1, 1, Ksource, Fsource, "",        D_CPU|D_CUDA, "dtype:s? value:f") \
	X(Ascalar,    "aten.scalar_tensor", 0, 1, Ksource, Fsource, "",        D_CPU|D_CUDA, "dtype:s value:f") \
	X(Aany,       "aten.any",          1, 1, Kreduce, Freduce, "",        D_CPU|D_CUDA, "dim:is keepdim:i=0") \
	X(Aacos,      "aten.acos", 1, 1, Kelem, Funary, "acos", D_CPU|D_CUDA, "") \
	X(Aacosh,     "aten.acosh", 1, 1, Kelem, Funary, "acosh", D_CPU|D_CUDA, "") \
	X(Aasin,      "aten.asin", 1, 1, Kelem, Funary, "asin", D_CPU|D_CUDA, "") \
	X(Aasinh,     "aten.asinh", 1, 1, Kelem, Funary, "asinh", D_CPU|D_CUDA, "") \
	X(Aatan,      "aten.atan", 1, 1, Kelem, Funary, "atan", D_CPU|D_CUDA, "") \
	X(Aatanh,     "aten.atanh", 1, 1, Kelem, Funary, "atanh", D_CPU|D_CUDA, "") \
	X(Amish,      "aten.mish", 1, 1, Kelem, Funary, "mish", D_CPU|D_CUDA, "") \
	X(Asoftplus,  "aten.softplus", 1, 1, Kelem, Funary, "softplus beta=1 threshold=20", D_CPU|D_CUDA, "beta:f=1 threshold:f=20") \
	X(Athreshold, "aten.threshold", 1, 1, Kelem, Funary, "threshold threshold=0 value=0", D_CPU|D_CUDA, "threshold:f value:f") \
	X(Ahardshrink, "aten.hardshrink", 1, 1, Kelem, Funary, "hardshrink lambd=0.5", D_CPU|D_CUDA, "lambd:f=0.5") \
	X(Asoftshrink, "aten.softshrink", 1, 1, Kelem, Funary, "softshrink lambd=0.5", D_CPU|D_CUDA, "lambd:f=0.5") \
	X(Afrac,      "aten.frac", 1, 1, Kelem, Funary, "frac", D_CPU|D_CUDA, "") \
	X(Alogit,     "aten.logit", 1, 1, Kelem, Funary, "logit eps=-1", D_CPU|D_CUDA, "eps:f?") \
	X(Aceil,      "aten.ceil", 1, 1, Kelem, Funary, "ceil", D_CPU|D_CUDA, "") \
	X(Acosh,      "aten.cosh", 1, 1, Kelem, Funary, "cosh", D_CPU|D_CUDA, "") \
	X(Aerf,       "aten.erf", 1, 1, Kelem, Funary, "erf", D_CPU|D_CUDA, "") \
	X(Aexpm1,     "aten.expm1", 1, 1, Kelem, Funary, "expm1", D_CPU|D_CUDA, "") \
	X(Afloor,     "aten.floor", 1, 1, Kelem, Funary, "floor", D_CPU|D_CUDA, "") \
	X(Alog10,     "aten.log10", 1, 1, Kelem, Funary, "log10", D_CPU|D_CUDA, "") \
	X(Alog1p,     "aten.log1p", 1, 1, Kelem, Funary, "log1p", D_CPU|D_CUDA, "") \
	X(Alog2,      "aten.log2", 1, 1, Kelem, Funary, "log2", D_CPU|D_CUDA, "") \
	X(Around,     "aten.round", 1, 1, Kelem, Funary, "round", D_CPU|D_CUDA, "") \
	X(Asign,      "aten.sign", 1, 1, Kelem, Funary, "sign", D_CPU|D_CUDA, "") \
	X(Asinh,      "aten.sinh", 1, 1, Kelem, Funary, "sinh", D_CPU|D_CUDA, "") \
	X(Atan,       "aten.tan", 1, 1, Kelem, Funary, "tan", D_CPU|D_CUDA, "") \
	X(Atrunc,     "aten.trunc", 1, 1, Kelem, Funary, "trunc", D_CPU|D_CUDA, "") \
	X(Aleakyrelu, "aten.leaky_relu", 1, 1, Kelem, Funary, "leaky_relu negative_slope=0.01", D_CPU|D_CUDA, "negative_slope:f=0.01") \
	X(Afmod,      "aten.fmod", 2, 1, Kelem, Fbinaryn, "fmod", D_CPU|D_CUDA, "") \
	X(Aremainder, "aten.remainder", 2, 1, Kelem, Fbinaryn, "remainder", D_CPU|D_CUDA, "") \
	X(Adivfloor,  "aten.div_floor", 2, 1, Kelem, Fbinaryn, "div_floor", D_CPU|D_CUDA, "") \
	X(Adivtrunc,  "aten.div_trunc", 2, 1, Kelem, Fbinaryn, "div_trunc", D_CPU|D_CUDA, "") \
	X(Amaximum,   "aten.maximum", 2, 1, Kelem, Fbinaryn, "maximum", D_CPU|D_CUDA, "") \
	X(Aminimum,   "aten.minimum", 2, 1, Kelem, Fbinaryn, "minimum", D_CPU|D_CUDA, "") \
	X(Aatan2,     "aten.atan2", 2, 1, Kelem, Fbinary, "atan2", D_CPU|D_CUDA, "") \
	X(Ahypot,     "aten.hypot", 2, 1, Kelem, Fbinary, "hypot", D_CPU|D_CUDA, "") \
	X(Acopysign,  "aten.copysign", 2, 1, Kelem, Fbinary, "copysign", D_CPU|D_CUDA, "") \
	X(Acumsum,    "aten.cumsum",       1, 1, Kreduce, Fscan,  "",        D_CPU|D_CUDA, "dim:i") \
	X(Acumprod,   "aten.cumprod",      1, 1, Kreduce, Fscan,  "",        D_CPU|D_CUDA, "dim:i") \
	X(Alogcumsumexp, "aten.logcumsumexp", 1, 1, Kreduce, Fscan, "",       D_CPU|D_CUDA, "dim:i") \
	X(Asort,      "aten.sort",         1, 2, Kindex, Fsort,  "",        D_CPU|D_CUDA, "descending:i=0 dim:i=-1") \
	X(Agather,    "aten.gather",       2, 1, Kindex, Fgather, "",        D_CPU|D_CUDA, "dim:i") \
	X(Arand,      "aten.rand",         0, 1, Ksource, Fsource, "",        D_CPU|D_CUDA, "dtype:s seed:i=0 size:is stream:i=0") \
	X(Arandn,     "aten.randn",        0, 1, Ksource, Fsource, "",        D_CPU|D_CUDA, "dtype:s seed:i=0 size:is stream:i=0") \
	COMPOSITE_OPS(X)

/* The composite ops: dp-legalize rewrites each into the primitives above
 * (stages/legalize/rules.c), so no lowering sees them; shape rules in
 * formats/rules.c. */
#define COMPOSITE_OPS(X) \
	X(Aunflatten, "aten.unflatten", 1, 1, Kshape, Fcomposite, "", D_CPU|D_CUDA, "dim:i sizes:is") \
	X(Aexpandas,  "aten.expand_as", 2, 1, Kshape, Fcomposite, "", D_CPU|D_CUDA, "") \
	X(Aaddcmul,   "aten.addcmul", 3, 1, Kelem, Fcomposite, "", D_CPU|D_CUDA, "value:f=1") \
	X(Aaddcdiv,   "aten.addcdiv", 3, 1, Kelem, Fcomposite, "", D_CPU|D_CUDA, "value:f=1") \
	X(Amaskfill,  "aten.masked_fill", -1, 1, Kelem, Fcomposite, "", D_CPU|D_CUDA, "value:f?") \
	X(Afill,      "aten.fill", -1, 1, Ksource, Fcomposite, "", D_CPU|D_CUDA, "value:f?") \
	X(Avecnorm,   "aten.linalg_vector_norm", 1, 1, Kreduce, Fcomposite, "", D_CPU|D_CUDA, "dim:is? keepdim:i=0 ord:f=2") \
	X(Agroupnorm, "aten.group_norm", -1, 1, Knorm, Fcomposite, "", D_CPU|D_CUDA, "eps:f=1e-05 num_groups:i") \
	X(Apad,       "aten.constant_pad_nd", 1, 1, Kshape, Fcomposite, "", D_CPU|D_CUDA, "mode:s? pad:is value:f=0") \
	X(Aroll,      "aten.roll", 1, 1, Kshape, Fcomposite, "", D_CPU|D_CUDA, "dims:is? shifts:is") \
	X(Adiff,      "aten.diff", -1, 1, Kelem, Fcomposite, "", D_CPU|D_CUDA, "append:i=0 dim:i=-1 n:i=1 prepend:i=0") \
	X(Aslicescat, "aten.slice_scatter", 2, 1, Kshape, Fcomposite, "", D_CPU|D_CUDA, "dim:i=0 end:i=9223372036854775807 start:i=0 step:i=1") \
	X(Aselscat,   "aten.select_scatter", 2, 1, Kshape, Fcomposite, "", D_CPU|D_CUDA, "dim:i index:i") \
	X(Avar,       "aten.var", 1, 1, Kreduce, Fcomposite, "", D_CPU|D_CUDA, "correction:f=1 dim:is? keepdim:i=0") \
	X(Alogsoftmax, "aten.log_softmax", 1, 1, Kreduce, Fcomposite, "", D_CPU|D_CUDA, "dim:i") \
	X(Aisnan,     "aten.isnan", 1, 1, Kelem, Fcomposite, "", D_CPU|D_CUDA, "") \
	X(Aisinf,     "aten.isinf", 1, 1, Kelem, Fcomposite, "", D_CPU|D_CUDA, "") \
	X(Aelu,       "aten.elu", 1, 1, Kelem, Fcomposite, "", D_CPU|D_CUDA, "alpha:f=1 input_scale:f=1 scale:f=1") \
	X(Aupnearest, "aten.upsample_nearest2d", 1, 1, Kindex, Fcomposite, "", D_CPU|D_CUDA, "output_size:is scale_h:f? scale_w:f?") \
	X(Aupbilinear, "aten.upsample_bilinear2d", 1, 1, Kindex, Fcomposite, "", D_CPU|D_CUDA, "align_corners:i=0 output_size:is scale_h:f? scale_w:f?") \
	X(Aeinsum,    "aten.einsum", -1, 1, Kmatmul, Fcomposite, "", D_CPU|D_CUDA, "equation:s") \
	X(Aall,       "aten.all", 1, 1, Kreduce, Fcomposite, "", D_CPU|D_CUDA, "dim:is? keepdim:i=0") \
	X(Aindexn,    "aten.index_n", -1, 1, Kindex, Fcomposite, "", D_CPU|D_CUDA, "dim:i=0") \
	X(Aargmaxc,   "aten.argmax", 1, 1, Kindex, Fcomposite, "", D_CPU|D_CUDA, "dim:i? keepdim:i=0") \
	X(Aargmin,    "aten.argmin", 1, 1, Kindex, Fcomposite, "", D_CPU|D_CUDA, "dim:i? keepdim:i=0") \
	X(Aflip,      "aten.flip", 1, 1, Kshape, Fcomposite, "", D_CPU|D_CUDA, "dims:is") \
	X(Arepeat,    "aten.repeat", 1, 1, Kshape, Fcomposite, "", D_CPU|D_CUDA, "repeats:is") \
	X(Acopyto,    "aten.copy", 2, 1, Kshape, Fcomposite, "", D_CPU|D_CUDA, "") \
	X(Aasstrided, "aten.as_strided", 1, 1, Kshape, Fcomposite, "", D_CPU|D_CUDA, "size:is storage_offset:i=0 stride:is") \
	X(Aamax,      "aten.amax", 1, 1, Kreduce, Fcomposite, "", D_CPU|D_CUDA, "dim:is? keepdim:i=0") \
	X(Aamin,      "aten.amin", 1, 1, Kreduce, Fcomposite, "", D_CPU|D_CUDA, "dim:is? keepdim:i=0") \
	X(Aclampt,    "aten.clamp_tensor", -1, 1, Kelem, Fcomposite, "", D_CPU|D_CUDA, "has_max:i=0 has_min:i=0") \
	X(Amaxdim,    "aten.max_dim", 1, 1, Kreduce, Fcomposite, "", D_CPU|D_CUDA, "dim:i keepdim:i=0") \
	X(Amindim,    "aten.min_dim", 1, 1, Kreduce, Fcomposite, "", D_CPU|D_CUDA, "dim:i keepdim:i=0") \
	X(Adiagonal,  "aten.diagonal", 1, 1, Kshape, Fcomposite, "", D_CPU|D_CUDA, "dim1:i=0 dim2:i=1 offset:i=0") \
	X(Amaxpool1,  "aten.max_pool1d", 1, 1, Kreduce, Fcomposite, "", D_CPU|D_CUDA, "ceil_mode:i=0 dilation:is? kernel_size:is padding:is? stride:is?") \
	X(Amaxpool3,  "aten.max_pool3d", 1, 1, Kreduce, Fcomposite, "", D_CPU|D_CUDA, "ceil_mode:i=0 dilation:is? kernel_size:is padding:is? stride:is?") \
	X(Aavgpool1,  "aten.avg_pool1d", 1, 1, Kreduce, Fcomposite, "", D_CPU|D_CUDA, "ceil_mode:i=0 count_include_pad:i=1 kernel_size:is padding:is? stride:is?") \
	X(Aavgpool3,  "aten.avg_pool3d", 1, 1, Kreduce, Fcomposite, "", D_CPU|D_CUDA, "ceil_mode:i=0 count_include_pad:i=1 divisor_override:i? kernel_size:is padding:is? stride:is?") \
	X(Aadaptavg1, "aten.adaptive_avg_pool1d", 1, 1, Kreduce, Fcomposite, "", D_CPU|D_CUDA, "output_size:is") \
	X(Aadaptavg3, "aten.adaptive_avg_pool3d", 1, 1, Kreduce, Fcomposite, "", D_CPU|D_CUDA, "output_size:is") \
	X(Aindexput,  "aten.index_put", -1, 1, Kindex, Fcomposite, "", D_CPU|D_CUDA, "accumulate:i=0 dim:i=0") \
	X(Aindexcopy, "aten.index_copy", 3, 1, Kindex, Fcomposite, "", D_CPU|D_CUDA, "accumulate:i=0 alpha:f=1 dim:i") \
	X(Atopk,      "aten.topk", 1, 2, Kindex, Fcomposite, "", D_CPU|D_CUDA, "dim:i=-1 k:i largest:i=1") \
	X(Aprod,      "aten.prod", 1, 1, Kreduce, Fcomposite, "", D_CPU|D_CUDA, "dim:is? keepdim:i=0") \
	X(Abnstats,   "aten.batch_norm_no_stats", -1, 1, Knorm, Fcomposite, "", D_CPU|D_CUDA, "eps:f=1e-05") \
	X(Acdist,     "aten.cdist", 2, 1, Kmatmul, Fcomposite, "", D_CPU|D_CUDA, "p:f=2") \
	X(Ahistc,     "aten.histc", 1, 1, Kreduce, Fcomposite, "", D_CPU|D_CUDA, "bins:i=100 max:f=0 min:f=0") \
	X(Agroupedmm, "aten.grouped_mm", 3, 1, Kmatmul, Fcomposite, "", D_CPU|D_CUDA, "") \
	X(Apdist,     "aten.pdist", 1, 1, Kmatmul, Fcomposite, "", D_CPU|D_CUDA, "p:f=2") \
	X(Amaskscat,  "aten.masked_scatter", 3, 1, Kindex, Fcomposite, "", D_CPU|D_CUDA, "") \
	X(Aembbag,    "aten.embedding_bag", 3, 1, Kindex, Fcomposite, "", D_CPU|D_CUDA, "include_last_offset:i=0 mode:i=0") \
	X(Acol2im,    "aten.col2im", 1, 1, Kindex, Fcomposite, "", D_CPU|D_CUDA, "dilation:is kernel_size:is output_size:is padding:is stride:is") \
	X(Agridsamp,  "aten.grid_sampler_2d", 2, 1, Kindex, Fcomposite, "", D_CPU|D_CUDA, "align_corners:i=0 interpolation_mode:i=0 padding_mode:i=0") \
	X(Ascatter,   "aten.scatter", 3, 1, Kindex, Fcomposite, "", D_CPU|D_CUDA, "dim:i include_self:i=1 reduce:s?") \
	X(Arandperm,  "aten.randperm", 0, 1, Ksource, Fcomposite, "", D_CPU|D_CUDA, "dtype:s n:i seed:i=0 stream:i=0") \
	X(Afftr2c,    "aten.fft_r2c", 1, 1, Kmatmul, Fcomposite, "", D_CPU|D_CUDA, "dim:is normalization:i=0 onesided:i=1") \
	X(Afftc2r,    "aten.fft_c2r", 1, 1, Kmatmul, Fcomposite, "", D_CPU|D_CUDA, "dim:is last_dim_size:i normalization:i=0") \
	X(Afftc2c,    "aten.fft_c2c", 1, 1, Kmatmul, Fcomposite, "", D_CPU|D_CUDA, "dim:is forward:i=1 normalization:i=0") \
	X(Acmul,      "aten.complex_mul", 2, 1, Kelem, Fcomposite, "", D_CPU|D_CUDA, "") \
	X(Acabs,      "aten.complex_abs", 1, 1, Kelem, Fcomposite, "", D_CPU|D_CUDA, "") \
	X(Acangle,    "aten.complex_angle", 1, 1, Kelem, Fcomposite, "", D_CPU|D_CUDA, "") \
	X(Anonzeros,  "aten.nonzero_static", 1, 1, Kindex, Fcomposite, "", D_CPU|D_CUDA, "fill_value:i=-1 size:i") \
	X(Anonzero,   "aten.nonzero", 1, 2, Kindex, Fcomposite, "", D_CPU|D_CUDA, "") \
	X(Abaddbmm,   "aten.baddbmm", 3, 1, Kmatmul, Fcomposite, "", D_CPU|D_CUDA, "alpha:f=1 beta:f=1") \
	X(Arepeatil,  "aten.repeat_interleave", 1, 1, Kshape, Fcomposite, "", D_CPU|D_CUDA, "dim:i? repeats:i") \
	X(Aunfold,    "aten.unfold", 1, 1, Kshape, Fcomposite, "", D_CPU|D_CUDA, "dimension:i size:i step:i") \
	X(Aupbicubic, "aten.upsample_bicubic2d", 1, 1, Kindex, Fcomposite, "", D_CPU|D_CUDA, "align_corners:i=0 output_size:is scale_h:f? scale_w:f?") \
	RNN_OPS(X)

/* The recurrent layers (shape rule in formats/rules.c, dp_rnn): operands
 * the input, the initial state (h0; h0 and c0 for aten.lstm), then each
 * layer's and direction's parameters in PyTorch's order (w_ih, w_hh, then
 * b_ih and b_hh where has_biases, then w_hr where the LSTM projects);
 * results the output and the final state.  The cells: the input, the
 * state, w_ih, w_hh and both biases or neither. */
#define RNN_OPS(X) \
	X(Alstm,      "aten.lstm", -1, 3, Kmatmul, Fcomposite, "", D_CPU|D_CUDA, RNNATTRS) \
	X(Agru,       "aten.gru", -1, 2, Kmatmul, Fcomposite, "", D_CPU|D_CUDA, RNNATTRS) \
	X(Arnntanh,   "aten.rnn_tanh", -1, 2, Kmatmul, Fcomposite, "", D_CPU|D_CUDA, RNNATTRS) \
	X(Arnnrelu,   "aten.rnn_relu", -1, 2, Kmatmul, Fcomposite, "", D_CPU|D_CUDA, RNNATTRS) \
	X(Alstmcell,  "aten.lstm_cell", -1, 2, Kmatmul, Fcomposite, "", D_CPU|D_CUDA, "") \
	X(Agrucell,   "aten.gru_cell", -1, 1, Kmatmul, Fcomposite, "", D_CPU|D_CUDA, "")
#define RNNATTRS "batch_first:i=0 bidirectional:i=0 has_biases:i=1 num_layers:i=1"

/* Forms of computation: X(enum, name) */
#define DP_FORMS(X) \
	X(Fio, "io") X(Fconst, "const") X(Fcopy, "copy") X(Fcast, "cast") \
	X(Funary, "unary") X(Funaryn, "unary-int") X(Fbinary, "binary") X(Fbinaryn, "binary-int") \
	X(Fcompare, "compare") X(Flogic, "logic") X(Fwhere, "where") X(Fview, "view") \
	X(Fmove, "move") X(Fgather, "gather") X(Fscatter, "scatter") X(Freduce, "reduce") \
	X(Fscan, "scan") X(Fsort, "sort") X(Fmatmul, "matmul") X(Fconv, "conv") \
	X(Fpool, "pool") X(Fnorm, "norm") X(Fattn, "attention") X(Fsource, "source") \
	X(Fimage, "image") X(Fcomposite, "composite")

/* Placement classes: X(enum, name) */
#define DP_CLASSES(X) \
	X(Kio, "io") X(Kconst, "const") X(Kcopy, "copy") X(Kelem, "elementwise") \
	X(Knorm, "normalize") X(Kmatmul, "matmul") X(Kconv, "conv") \
	X(Kreduce, "reduce") X(Kindex, "index") X(Kshape, "shape") \
	X(Kattn, "attention") X(Ksource, "source") X(Kimage, "image")
