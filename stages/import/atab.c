/* atab.c: the ATen targets import understands (training IR and Core ATen),
 * with their argument schemas, defaults and the IR op each becomes. */
#include <string.h>

#include "import.h"

/*
 * Argument schemas: space-separated "name:kind[=default][>irkey]", in the
 * ATen schema's order.  Kinds:
 *   T    tensor operand            T?  optional tensor operand (omitted or
 *                                      None: no operand)
 *   S    tensor operand, or a Python scalar that becomes a rank-0 const of
 *        the dtype of the first tensor among the S operands (else the first
 *        T operand)
 *   W=v  optional per-channel tensor: None becomes a const [C] of v
 *        (C = dim 1 of the first operand, its dtype)
 *   L    a list of tensors (as_tensors): one operand each
 *   i f s is   int (bools too), float (ints too), string, int list
 *        attribute; with "=default" (an "is" default is comma-separated,
 *        maybe empty) an omitted or None argument takes the default, with
 *        "?" instead it is left out of the IR
 *   dt   dtype (as_scalar_type) into a string attribute; dt? optional
 *   0    must be omitted, None, False or 0 (a variant import does not do)
 *   -    ignored whatever its value (momentum, memory_format...)
 *   dev  must be omitted, None or a cpu/cuda device (placement is the
 *        target mapping's job); lay: omitted, None or strided
 * The attribute is named irkey in the IR, else name.  A name starting with
 * '@' is no argument at all: its default is a fixed attribute.  Nodes omit
 * arguments equal to their schema default, so every optional one needs its
 * default.
 */
#define FACT " dtype:dt? layout:lay device:dev pin_memory:0"
#define UNARY(n, k) \
	{ "aten." n ".default", k, "self:T", 0, 0 }, \
	{ "aten." n "_.default", k, "self:T", F_INPLACE, 0 }
#define BINARY(n, k, extra) \
	{ "aten." n ".Tensor", k, "self:S other:S" extra, 0, 0 }, \
	{ "aten." n ".Scalar", k, "self:S other:S" extra, 0, 0 }, \
	{ "aten." n "_.Tensor", k, "self:S other:S" extra, F_INPLACE, 0 }, \
	{ "aten." n "_.Scalar", k, "self:S other:S" extra, F_INPLACE, 0 }
#define BOOLOP(n, k) \
	{ "aten.bitwise_" n ".Tensor", k, "self:T other:T", 0, H_BOOL }, \
	{ "aten.bitwise_" n ".Scalar", k, "self:T other:S", 0, H_BOOL }, \
	{ "aten.__" n "__.Tensor", k, "self:T other:T", 0, H_BOOL }, \
	{ "aten.__" n "__.Scalar", k, "self:T other:S", 0, H_BOOL }, \
	{ "aten.logical_" n ".default", k, "self:T other:T", 0, 0 }
#define BN "input:T weight:W=1 bias:W=0 running_mean:T running_var:T"
#define POOL "self:T kernel_size:is stride:is= padding:is=0"
#define EBAG "weight:T indices:T offsets:T scale_grad_by_freq:0 mode:i=0 sparse:0 " \
	"per_sample_weights:T? include_last_offset:i=0 padding_idx:i=-1"

static const Aten aten[] = {
	/* matrices */
	{ "aten.linear.default", Alinear, "input:T weight:T bias:T?", 0, 0 },
	{ "aten.addmm.default", Aaddmm, "self:T mat1:T mat2:T beta:f=1 alpha:f=1", 0, 0 },
	{ "aten.mm.default", Amm, "self:T mat2:T", 0, 0 },
	{ "aten.bmm.default", Abmm, "self:T mat2:T", 0, 0 },
	{ "aten.baddbmm.default", Abaddbmm, "self:T batch1:T batch2:T beta:f=1 alpha:f=1", 0, 0 },
	{ "aten.matmul.default", Amatmul, "self:T other:T", 0, 0 },
	{ "aten.mv.default", Amatmul, "self:T vec:T", 0, 0 },
	{ "aten.dot.default", Amatmul, "self:T tensor:T", 0, 0 },
	{ "aten.addmv.default", Amatmul, "self:T mat:T vec:T beta:f=1 alpha:f=1", 0, H_ADDMV },
	{ "aten.bucketize.Tensor", Asum, "self:T boundaries:T out_int32:i=0 right:i=0", 0, H_BUCKETIZE },
	{ "aten.searchsorted.Tensor", Asum, "sorted_sequence:T self:T out_int32:i=0 right:i=0 side:s? sorter:0",
	  0, H_BUCKETIZE },

	/* elementwise arithmetic, with broadcasting and scalars */
	BINARY("add", Aadd, " alpha:f=1"),
	BINARY("sub", Asub, " alpha:f=1"),
	BINARY("mul", Amul, ""),
	BINARY("div", Adiv, ""),
	{ "aten.div.Tensor_mode", Adiv, "self:S other:S rounding_mode:s?", 0, H_DIVMODE },
	{ "aten.div_.Tensor_mode", Adiv, "self:S other:S rounding_mode:s?", F_INPLACE, H_DIVMODE },
	{ "aten.div.Scalar_mode", Adiv, "self:S other:S rounding_mode:s?", 0, H_DIVMODE },
	{ "aten.floor_divide.default", Adiv, "self:S other:S @rounding_mode:s=floor", 0, H_DIVMODE },
	{ "aten.floor_divide.Scalar", Adiv, "self:S other:S @rounding_mode:s=floor", 0, H_DIVMODE },
	{ "aten.rsub.Tensor", Asub, "self:S other:S alpha:f=1", 0, H_RSUB },
	{ "aten.rsub.Scalar", Asub, "self:S other:S alpha:f=1", 0, H_RSUB },
	BINARY("fmod", Afmod, ""),
	BINARY("remainder", Aremainder, ""),
	{ "aten.maximum.default", Amaximum, "self:S other:S", 0, 0 },
	{ "aten.minimum.default", Aminimum, "self:S other:S", 0, 0 },
	{ "aten.max.other", Amaximum, "self:S other:S", 0, 0 },
	{ "aten.min.other", Aminimum, "self:S other:S", 0, 0 },
	{ "aten.atan2.default", Aatan2, "self:S other:S", 0, 0 },
	{ "aten.atan2_.default", Aatan2, "self:S other:S", F_INPLACE, 0 },
	{ "aten.atan2.out", Aatan2, "self:S other:S out:-", F_OUT, 0 },
	{ "aten.hypot.default", Ahypot, "self:S other:S", 0, 0 },
	{ "aten.hypot_.default", Ahypot, "self:S other:S", F_INPLACE, 0 },
	{ "aten.copysign.Tensor", Acopysign, "self:S other:S", 0, 0 },
	{ "aten.copysign.Scalar", Acopysign, "self:S other:S", 0, 0 },
	{ "aten.copysign_.Tensor", Acopysign, "self:S other:S", F_INPLACE, 0 },
	{ "aten.addcmul.default", Aaddcmul, "self:T tensor1:T tensor2:T value:f=1", 0, 0 },
	{ "aten.addcmul_.default", Aaddcmul, "self:T tensor1:T tensor2:T value:f=1", F_INPLACE, 0 },
	{ "aten.addcdiv.default", Aaddcdiv, "self:T tensor1:T tensor2:T value:f=1", 0, 0 },
	{ "aten.addcdiv_.default", Aaddcdiv, "self:T tensor1:T tensor2:T value:f=1", F_INPLACE, 0 },
	{ "aten.pow.Tensor_Scalar", Apow, "self:S exponent:S", 0, 0 },
	{ "aten.pow.Tensor_Tensor", Apow, "self:S exponent:S", 0, 0 },
	{ "aten.pow.Scalar", Apow, "self:S exponent:S", 0, 0 },
	{ "aten.pow_.Scalar", Apow, "self:S exponent:S", F_INPLACE, 0 },
	{ "aten.pow_.Tensor", Apow, "self:S exponent:S", F_INPLACE, 0 },

	/* elementwise functions */
	UNARY("relu", Arelu), UNARY("rsqrt", Arsqrt), UNARY("sqrt", Asqrt), UNARY("exp", Aexp),
	UNARY("log", Alog), UNARY("cos", Acos), UNARY("sin", Asin), UNARY("neg", Aneg),
	UNARY("abs", Aabs), UNARY("reciprocal", Arecip), UNARY("sigmoid", Asigmoid),
	UNARY("tanh", Atanh), UNARY("silu", Asilu), UNARY("hardswish", Ahardswish),
	UNARY("hardsigmoid", Ahardsigm),
	UNARY("acos", Aacos), UNARY("acosh", Aacosh), UNARY("asin", Aasin), UNARY("asinh", Aasinh),
	UNARY("mish", Amish),
	UNARY("atan", Aatan), UNARY("atanh", Aatanh), UNARY("ceil", Aceil), UNARY("cosh", Acosh),
	UNARY("erf", Aerf), UNARY("expm1", Aexpm1), UNARY("floor", Afloor), UNARY("log10", Alog10),
	UNARY("log1p", Alog1p), UNARY("log2", Alog2), UNARY("round", Around), UNARY("sign", Asign),
	UNARY("sinh", Asinh), UNARY("tan", Atan), UNARY("trunc", Atrunc),
	{ "aten.leaky_relu.default", Aleakyrelu, "self:T negative_slope:f=0.01", 0, 0 },
	{ "aten.softplus.default", Asoftplus, "self:T beta:f=1 threshold:f=20", 0, 0 },
	{ "aten.threshold.default", Athreshold, "self:T threshold:f value:f", 0, 0 },
	{ "aten.hardshrink.default", Ahardshrink, "self:T lambd:f=0.5", 0, 0 },
	{ "aten.softshrink.default", Asoftshrink, "self:T lambd:f=0.5", 0, 0 },
	{ "aten.frac.default", Afrac, "self:T", 0, 0 },
	{ "aten.logit.default", Alogit, "self:T eps:f?", 0, 0 },
	{ "aten.sgn.default", Asign, "self:T", 0, 0 },
	{ "aten.max.default", Aamax, "self:T", 0, 0 },
	{ "aten.min.default", Aamin, "self:T", 0, 0 },
	{ "aten.triu.default", Awhere, "self:T diagonal:i=0", 0, H_TRI },
	{ "aten.tril.default", Awhere, "self:T diagonal:i=0", 0, H_TRI },
	{ "aten.nan_to_num.default", Awhere, "self:T nan:f? posinf:f? neginf:f?", 0, H_NANTONUM },
	{ "aten.lerp.Scalar", Aadd, "self:T end:T weight:S", 0, H_LERP },
	{ "aten.lerp.Tensor", Aadd, "self:T end:T weight:T", 0, H_LERP },
	{ "aten.logaddexp.default", Aadd, "self:T other:T", 0, H_LOGADDEXP },
	{ "aten._prelu_kernel.default", Awhere, "self:T weight:T", 0, H_PRELU },
	{ "aten.prelu.default", Awhere, "self:T weight:T", 0, H_PRELUCH },
	{ "aten.std.correction", Avar, "self:T dim:is= correction:f=1 keepdim:i=0", 0, H_STD },
	{ "aten.std.dim", Avar, "self:T dim:is= unbiased:i=1>correction keepdim:i=0", 0, H_STD },
	{ "aten.std.default", Avar, "self:T unbiased:i=1>correction", 0, H_STD },
	{ "aten.var_mean.correction", Avar, "self:T dim:is= correction:f=1 keepdim:i=0", F_MULTI, H_VARMEAN },
	{ "aten.var_mean.dim", Avar, "self:T dim:is= unbiased:i=1>correction keepdim:i=0", F_MULTI, H_VARMEAN },
	{ "aten.var_mean.default", Avar, "self:T unbiased:i=1>correction", F_MULTI, H_VARMEAN },
	{ "aten.std_mean.correction", Avar, "self:T dim:is= correction:f=1 keepdim:i=0", F_MULTI, H_VARMEAN },
	{ "aten.std_mean.dim", Avar, "self:T dim:is= unbiased:i=1>correction keepdim:i=0", F_MULTI, H_VARMEAN },
	{ "aten.std_mean.default", Avar, "self:T unbiased:i=1>correction", F_MULTI, H_VARMEAN },
	{ "aten.logsumexp.default", Aamax, "self:T dim:is keepdim:i=0", 0, H_LOGSUMEXP },
	{ "aten.glu.default", Amul, "self:T dim:i=-1", 0, H_GLU },
	{ "aten.pixel_shuffle.default", Aview, "self:T upscale_factor:i", 0, H_PIXSHUF },
	{ "aten.pixel_unshuffle.default", Aview, "self:T downscale_factor:i", 0, H_PIXSHUF },
	{ "aten.leaky_relu_.default", Aleakyrelu, "self:T negative_slope:f=0.01", F_INPLACE, 0 },
	{ "aten.elu.default", Aelu, "self:T alpha:f=1 scale:f=1 input_scale:f=1", 0, 0 },
	{ "aten.elu_.default", Aelu, "self:T alpha:f=1 scale:f=1 input_scale:f=1", F_INPLACE, 0 },
	{ "aten.celu.default", Aelu, "self:T alpha:f=1", 0, H_CELU },
	{ "aten.celu_.default", Aelu, "self:T alpha:f=1", F_INPLACE, H_CELU },
	{ "aten.log_sigmoid_forward.default", Asub, "self:T", F_MULTI, H_LOGSIGMOID },
	{ "aten.log_sigmoid.default", Asub, "self:T", 0, H_LOGSIGMOID },
	{ "aten.selu.default", Aelu,
	  "self:T @alpha:f=1.6732632423543772 @scale:f=1.0507009873554805", 0, 0 },
	{ "aten.selu_.default", Aelu,
	  "self:T @alpha:f=1.6732632423543772 @scale:f=1.0507009873554805", F_INPLACE, 0 },
	{ "aten.isnan.default", Aisnan, "self:T", 0, 0 },
	{ "aten.isinf.default", Aisinf, "self:T", 0, 0 },
	{ "aten.gelu.default", Agelu, "self:T approximate:s?", 0, 0 },
	{ "aten.gelu_.default", Agelu, "self:T approximate:s?", F_INPLACE, 0 },
	{ "aten.clamp.default", Aclamp, "self:T min:f? max:f?", 0, 0 },
	{ "aten.clamp_.default", Aclamp, "self:T min:f? max:f?", F_INPLACE, 0 },
	{ "aten.clamp_min.default", Aclamp, "self:T min:f", 0, 0 },
	{ "aten.clamp_min_.default", Aclamp, "self:T min:f", F_INPLACE, 0 },
	{ "aten.clamp_max.default", Aclamp, "self:T max:f", 0, 0 },
	{ "aten.clamp_max_.default", Aclamp, "self:T max:f", F_INPLACE, 0 },
	{ "aten.clamp.Tensor", Aclampt, "self:T min:T? max:T?", 0, H_CLAMPT },
	{ "aten.clamp_.Tensor", Aclampt, "self:T min:T? max:T?", F_INPLACE, H_CLAMPT },
	{ "aten.hardtanh.default", Aclamp, "self:T min_val:f=-1>min max_val:f=1>max", 0, 0 },
	{ "aten.hardtanh_.default", Aclamp, "self:T min_val:f=-1>min max_val:f=1>max", F_INPLACE, 0 },
	{ "aten.relu6.default", Aclamp, "self:T @min:f=0>min @max:f=6>max", 0, 0 },
	{ "aten.relu6_.default", Aclamp, "self:T @min:f=0>min @max:f=6>max", F_INPLACE, 0 },

	/* comparisons and logic */
	{ "aten.eq.Tensor", Aeq, "self:S other:S", 0, 0 },
	{ "aten.eq.Scalar", Aeq, "self:S other:S", 0, 0 },
	{ "aten.ne.Tensor", Ane, "self:S other:S", 0, 0 },
	{ "aten.ne.Scalar", Ane, "self:S other:S", 0, 0 },
	{ "aten.lt.Tensor", Alt, "self:S other:S", 0, 0 },
	{ "aten.lt.Scalar", Alt, "self:S other:S", 0, 0 },
	{ "aten.le.Tensor", Ale, "self:S other:S", 0, 0 },
	{ "aten.le.Scalar", Ale, "self:S other:S", 0, 0 },
	{ "aten.gt.Tensor", Agt, "self:S other:S", 0, 0 },
	{ "aten.gt.Scalar", Agt, "self:S other:S", 0, 0 },
	{ "aten.ge.Tensor", Age, "self:S other:S", 0, 0 },
	{ "aten.ge.Scalar", Age, "self:S other:S", 0, 0 },
	BOOLOP("and", Aand), BOOLOP("or", Aor), BOOLOP("xor", Axor),
	{ "aten.logical_not.default", Anot, "self:T", 0, 0 },
	{ "aten.bitwise_not.default", Anot, "self:T", 0, H_BOOL },
	{ "aten.masked_fill.Scalar", Amaskfill, "self:T mask:T value:f", 0, 0 },
	{ "aten.masked_fill_.Scalar", Amaskfill, "self:T mask:T value:f", F_INPLACE, 0 },
	{ "aten.masked_fill.Tensor", Amaskfill, "self:T mask:T value:T", 0, 0 },
	{ "aten.masked_fill_.Tensor", Amaskfill, "self:T mask:T value:T", F_INPLACE, 0 },
	{ "aten.where.self", Awhere, "condition:T self:S other:S", 0, 0 },
	{ "aten.where.ScalarSelf", Awhere, "condition:T self:S other:S", 0, 0 },
	{ "aten.where.ScalarOther", Awhere, "condition:T self:S other:S", 0, 0 },

	/* shapes and data movement */
	{ "aten.view.default", Aview, "self:T size:is", 0, 0 },
	{ "aten._unsafe_view.default", Aview, "self:T size:is", 0, 0 },
	{ "aten.reshape.default", Areshape, "self:T shape:is", 0, 0 },
	{ "aten.reshape_as.default", Areshape, "self:T other:T", 0, H_ASSHAPE },
	{ "aten.view_as.default", Aview, "self:T other:T", 0, H_ASSHAPE },
	{ "aten.permute.default", Apermute, "self:T dims:is", 0, 0 },
	{ "aten.t.default", At, "self:T", 0, 0 },
	{ "aten.numpy_T.default", Apermute, "self:T", 0, H_REVERSE },
	{ "aten.transpose.int", Atranspose, "self:T dim0:i dim1:i", 0, 0 },
	{ "aten.flatten.using_ints", Oflatten, "self:T start_dim:i=0>start end_dim:i=-1>end", 0, 0 },
	{ "aten.expand.default", Aexpand, "self:T size:is implicit:0", 0, 0 },
	{ "aten.expand_as.default", Aexpandas, "self:T other:T", 0, 0 },
	{ "aten.unflatten.int", Aunflatten, "self:T dim:i sizes:is", 0, 0 },
	{ "aten.swapaxes.default", Atranspose, "self:T axis0:i>dim0 axis1:i>dim1", 0, 0 },
	{ "aten.swapdims.default", Atranspose, "self:T dim0:i dim1:i", 0, 0 },
	{ "aten.flip.default", Aflip, "self:T dims:is", 0, 0 },
	{ "aten.repeat.default", Arepeat, "self:T repeats:is", 0, 0 },
	{ "aten.repeat_interleave.self_int", Arepeatil, "self:T repeats:i dim:i? output_size:-", 0, 0 },
	{ "aten.unfold.default", Aunfold, "self:T dimension:i size:i step:i", 0, 0 },
	{ "aten.roll.default", Aroll, "self:T shifts:is dims:is=", 0, 0 },
	{ "aten.as_strided.default", Aasstrided, "self:T size:is stride:is storage_offset:i=0", 0, 0 },
	{ "aten.constant_pad_nd.default", Apad, "self:T pad:is value:f=0", 0, 0 },
	{ "aten.pad.default", Apad, "self:T pad:is mode:s=constant value:f=0", 0, 0 },
	{ "aten.reflection_pad1d.default", Apad, "self:T padding:is>pad @mode:s=reflect", 0, 0 },
	{ "aten.reflection_pad2d.default", Apad, "self:T padding:is>pad @mode:s=reflect", 0, 0 },
	{ "aten.reflection_pad3d.default", Apad, "self:T padding:is>pad @mode:s=reflect", 0, 0 },
	{ "aten.replication_pad2d.default", Apad, "self:T padding:is>pad @mode:s=replicate", 0, 0 },
	{ "aten.replication_pad3d.default", Apad, "self:T padding:is>pad @mode:s=replicate", 0, 0 },
	{ "aten.slice_scatter.default", Aslicescat,
	  "self:T src:T dim:i=0 start:i=0 end:i=9223372036854775807 step:i=1", 0, 0 },
	{ "aten.select_scatter.default", Aselscat, "self:T src:T dim:i index:i", 0, 0 },
	{ "aten.copy.default", Acopyto, "self:T src:T non_blocking:0", 0, 0 },
	{ "aten.copy_.default", Acopyto, "self:T src:T non_blocking:0", F_INPLACE, 0 },
	{ "aten.fill.Scalar", Afill, "self:T value:f", 0, 0 },
	{ "aten.fill_.Scalar", Afill, "self:T value:f", F_INPLACE, 0 },
	{ "aten.zero_.default", Afill, "self:T @value:f=0>value", F_INPLACE, 0 },
	{ "aten.fill.Tensor", Afill, "self:T value:T", 0, 0 },
	{ "aten.fill_.Tensor", Afill, "self:T value:T", F_INPLACE, 0 },
	{ "aten.gather.default", Agather, "self:T dim:i index:T sparse_grad:0", 0, 0 },
	{ "aten.index_select.default", Aindex, "self:T dim:i index:T", 0, 0 },
	{ "aten.upsample_nearest2d.vec", Aupnearest, "input:T output_size:is? scale_factors:-", 0,
	  H_OUTSIZE },
	{ "aten.upsample_bilinear2d.vec", Aupbilinear,
	  "input:T output_size:is? align_corners:i scale_factors:-", 0, H_OUTSIZE },
	{ "aten.upsample_bicubic2d.vec", Aupbicubic,
	  "input:T output_size:is? align_corners:i scale_factors:-", 0, H_OUTSIZE },
	{ "aten.upsample_bicubic2d.default", Aupbicubic,
	  "self:T output_size:is align_corners:i scales_h:- scales_w:-", 0, H_OUTSIZE },
	{ "aten.upsample_bilinear2d.default", Aupbilinear,
	  "self:T output_size:is align_corners:i scales_h:- scales_w:-", 0, H_OUTSIZE },
	{ "aten.upsample_nearest1d.vec", Aupnearest, "input:T output_size:is? scale_factors:-", 0,
	  H_UPND },
	{ "aten.upsample_nearest1d.default", Aupnearest, "self:T output_size:is scales:-", 0, H_UPND },
	{ "aten.upsample_linear1d.vec", Aupbilinear,
	  "input:T output_size:is? align_corners:i scale_factors:-", 0, H_UPND },
	{ "aten.upsample_linear1d.default", Aupbilinear,
	  "self:T output_size:is align_corners:i scales:-", 0, H_UPND },
	{ "aten.upsample_nearest3d.vec", Aupnearest, "input:T output_size:is? scale_factors:-", 0,
	  H_UPND },
	{ "aten.upsample_nearest3d.default", Aupnearest,
	  "self:T output_size:is scales_d:- scales_h:- scales_w:-", 0, H_UPND },
	{ "aten.upsample_trilinear3d.vec", Aupbilinear,
	  "input:T output_size:is? align_corners:i scale_factors:-", 0, H_UPND },
	{ "aten.upsample_trilinear3d.default", Aupbilinear,
	  "self:T output_size:is align_corners:i scales_d:- scales_h:- scales_w:-", 0, H_UPND },
	{ "aten.einsum.default", Aeinsum, "equation:s tensors:L path:-", 0, 0 },
	{ "aten.upsample_nearest2d.default", Aupnearest,
	  "self:T output_size:is scales_h:- scales_w:-", 0, H_OUTSIZE },
	{ "aten.unsqueeze.default", Aview, "self:T dim:i", 0, H_UNSQUEEZE },
	{ "aten.squeeze.default", Aview, "self:T", 0, H_SQUEEZE },
	{ "aten.squeeze.dim", Aview, "self:T dim:is", 0, H_SQUEEZE },
	{ "aten.squeeze.dims", Aview, "self:T dim:is", 0, H_SQUEEZE },
	{ "aten.clone.default", Aclone, "self:T memory_format:-", 0, H_IDENTITY },
	{ "aten.contiguous.default", Aclone, "self:T memory_format:-", 0, H_IDENTITY },
	{ "aten.alias.default", Aclone, "self:T", 0, H_IDENTITY },
	{ "aten.detach.default", Aclone, "self:T", 0, H_IDENTITY },
	{ "aten.detach_.default", Aclone, "self:T", 0, H_IDENTITY },
	{ "aten.lift_fresh_copy.default", Aclone, "self:T", 0, H_IDENTITY },
	{ "aten.dropout.default", Aclone, "input:T p:- train:0", 0, H_IDENTITY },
	{ "aten.native_dropout.default", Aclone, "input:T p:- train:0", F_MULTI, H_IDENTITY },
	{ "aten.dropout_.default", Aclone, "self:T p:- train:0", F_INPLACE, H_IDENTITY },
	{ "aten.feature_dropout.default", Aclone, "input:T p:- train:0", 0, H_IDENTITY },
	{ "aten.alpha_dropout.default", Aclone, "input:T p:- train:0", 0, H_IDENTITY },
	{ "aten.cat.default", Acat, "tensors:L dim:i=0", 0, 0 },
	{ "aten.concat.default", Acat, "tensors:L dim:i=0", 0, 0 },
	{ "aten.concatenate.default", Acat, "tensors:L dim:i=0", 0, 0 },
	{ "aten.stack.default", Astack, "tensors:L dim:i=0", 0, 0 },
	{ "aten.split.Tensor", Aslice, "self:T split_size:i dim:i=0", F_LIST, H_SPLIT },
	{ "aten.split_with_sizes.default", Aslice, "self:T split_sizes:is dim:i=0", F_LIST, H_SPLIT },
	{ "aten.chunk.default", Aslice, "self:T chunks:i dim:i=0", F_LIST, H_SPLIT },
	{ "aten.tensor_split.indices", Aslice, "self:T indices:is dim:i=0", F_LIST, H_SPLIT },
	{ "aten.tensor_split.sections", Aslice, "self:T sections:i dim:i=0", F_LIST, H_SPLIT },
	{ "aten.unbind.int", Aselect, "self:T dim:i=0", F_LIST, H_SPLIT },
	{ "aten.slice.Tensor", Aslice,
	  "self:T dim:i=0 start:i=0 end:i=9223372036854775807 step:i=1", 0, 0 },
	{ "aten.select.int", Aselect, "self:T dim:i index:i", 0, 0 },
	{ "aten.index.Tensor", Aindex, "self:T indices:-", 0, H_INDEX },
	{ "aten.index_put.default", Aindexput, "self:T indices:- values:T accumulate:i=0", 0,
	  H_INDEXPUT },
	{ "aten.index_put_.default", Aindexput, "self:T indices:- values:T accumulate:i=0",
	  F_INPLACE, H_INDEXPUT },
	{ "aten.index_copy.default", Aindexcopy, "self:T dim:i index:T source:T", 0, 0 },
	{ "aten.index_copy_.default", Aindexcopy, "self:T dim:i index:T source:T", F_INPLACE, 0 },
	{ "aten.index_fill.int_Scalar", Aindexcopy, "self:T dim:i index:T value:f", 0, H_INDEXFILL },
	{ "aten.index_fill_.int_Scalar", Aindexcopy, "self:T dim:i index:T value:f", F_INPLACE,
	  H_INDEXFILL },
	{ "aten.index_add.default", Aindexcopy, "self:T dim:i index:T source:T alpha:f=1 @accumulate:i=1",
	  0, 0 },
	{ "aten.index_add_.default", Aindexcopy, "self:T dim:i index:T source:T alpha:f=1 @accumulate:i=1",
	  F_INPLACE, 0 },
	{ "aten.scatter.src", Ascatter, "self:T dim:i index:T src:T", 0, 0 },
	{ "aten.scatter.value", Ascatter, "self:T dim:i index:T value:S", 0, 0 },
	{ "aten.scatter_.src", Ascatter, "self:T dim:i index:T src:T", F_INPLACE, 0 },
	{ "aten.scatter_.value", Ascatter, "self:T dim:i index:T value:S", F_INPLACE, 0 },
	{ "aten.scatter_add.default", Ascatter, "self:T dim:i index:T src:T @reduce:s=sum", 0, 0 },
	{ "aten.scatter_add_.default", Ascatter, "self:T dim:i index:T src:T @reduce:s=sum",
	  F_INPLACE, 0 },
	{ "aten.scatter_reduce.two", Ascatter,
	  "self:T dim:i index:T src:T reduce:s include_self:i=1", 0, 0 },
	{ "aten.scatter_reduce_.two", Ascatter,
	  "self:T dim:i index:T src:T reduce:s include_self:i=1", F_INPLACE, 0 },
	{ "aten.embedding.default", Aembedding,
	  "weight:T indices:T padding_idx:- scale_grad_by_freq:0 sparse:0", 0, 0 },

	/* reductions */
	{ "aten.mean.dim", Amean, "self:T dim:is= keepdim:i=0 dtype:dt?", 0, H_DTYPEIN },
	{ "aten.mean.default", Amean, "self:T @dim:is= dtype:dt?", 0, H_DTYPEIN },
	{ "aten.sum.dim_IntList", Asum, "self:T dim:is= keepdim:i=0 dtype:dt?", 0, H_DTYPEIN },
	{ "aten.sum.default", Asum, "self:T @dim:is= dtype:dt?", 0, H_DTYPEIN },
	{ "aten.any.dim", Aany, "self:T dim:is keepdim:i=0", 0, 0 },
	{ "aten.any.dims", Aany, "self:T dim:is= keepdim:i=0", 0, 0 },
	{ "aten.any.default", Aany, "self:T @dim:is=", 0, 0 },
	{ "aten.argmax.default", Aargmaxc, "self:T dim:i? keepdim:i=0", 0, 0 },
	{ "aten.argmin.default", Aargmin, "self:T dim:i? keepdim:i=0", 0, 0 },
	{ "aten.max.dim", Amaxdim, "self:T dim:i keepdim:i=0", F_MULTI, 0 },
	{ "aten.min.dim", Amindim, "self:T dim:i keepdim:i=0", F_MULTI, 0 },
	{ "aten.diagonal.default", Adiagonal, "self:T offset:i=0 dim1:i=0 dim2:i=1", 0, 0 },
	{ "aten.amax.default", Aamax, "self:T dim:is= keepdim:i=0", 0, 0 },
	{ "aten.amin.default", Aamin, "self:T dim:is= keepdim:i=0", 0, 0 },
	{ "aten.all.default", Aall, "self:T", 0, 0 },
	{ "aten.all.dim", Aall, "self:T dim:is keepdim:i=0", 0, 0 },
	{ "aten.all.dims", Aall, "self:T dim:is= keepdim:i=0", 0, 0 },
	{ "aten.diff.default", Adiff, "self:T n:i=1 dim:i=-1 prepend:T? append:T?", 0, H_DIFF },
	{ "aten.cumsum.default", Acumsum, "self:T dim:i dtype:dt?", 0, H_DTYPEIN },
	{ "aten.cumsum_.default", Acumsum, "self:T dim:i dtype:dt?", F_INPLACE, H_DTYPEIN },
	{ "aten.cumprod.default", Acumprod, "self:T dim:i dtype:dt?", 0, H_DTYPEIN },
	{ "aten.cumprod_.default", Acumprod, "self:T dim:i dtype:dt?", F_INPLACE, H_DTYPEIN },
	{ "aten.logcumsumexp.default", Alogcumsumexp, "self:T dim:i", 0, 0 },
	{ "aten.var.correction", Avar, "self:T dim:is= correction:f=1 keepdim:i=0", 0, 0 },
	{ "aten.var.dim", Avar, "self:T dim:is= unbiased:i=1>correction keepdim:i=0", 0, 0 },
	{ "aten.linalg_vector_norm.default", Avecnorm,
	  "self:T ord:f=2 dim:is= keepdim:i=0 dtype:0", 0, 0 },
	{ "aten.log_softmax.int", Alogsoftmax, "self:T dim:i dtype:dt?", 0, H_DTYPEIN },
	{ "aten._log_softmax.default", Alogsoftmax, "self:T dim:i half_to_float:0", 0, 0 },
	{ "aten.softmax.int", Osoftmax, "self:T dim:i dtype:dt?", 0, H_DTYPEIN },
	{ "aten._softmax.default", Osoftmax, "self:T dim:i half_to_float:0", 0, 0 },

	/* norms (inference form) */
	{ "aten.batch_norm.default", Abatchnorm,
	  "input:T weight:W=1 bias:W=0 running_mean:T? running_var:T? training:i=0 momentum:- "
	  "eps:f=1e-05 cudnn_enabled:-", 0, H_BATCHNORM },
	{ "aten._native_batch_norm_legit.no_stats", Abnstats,
	  "input:T weight:W=1 bias:W=0 training:i momentum:- eps:f", F_MULTI, H_BATCHNORM },
	{ "aten._native_batch_norm_legit_no_training.default", Abatchnorm,
	  BN " momentum:- eps:f", F_MULTI, 0 },
	{ "aten.native_batch_norm.default", Abatchnorm, BN " training:0 momentum:- eps:f", F_MULTI, 0 },
	{ "aten._native_batch_norm_legit.default", Abatchnorm,
	  BN " training:0 momentum:- eps:f", F_MULTI, 0 },
	{ "aten.layer_norm.default", Alayernorm,
	  "input:T normalized_shape:is weight:T? bias:T? eps:f=1e-05 cudnn_enable:-", 0, H_LAYERNORM },
	{ "aten.native_layer_norm.default", Alayernorm,
	  "input:T normalized_shape:is weight:T? bias:T? eps:f", F_MULTI, H_LAYERNORM },
	{ "aten.rms_norm.default", Armsnorm, "input:T normalized_shape:is weight:T? eps:f?", 0, 0 },
	{ "aten.group_norm.default", Agroupnorm,
	  "input:T num_groups:i weight:W=1 bias:W=0 eps:f=1e-05 cudnn_enabled:-", 0, 0 },
	{ "aten.native_group_norm.default", Agroupnorm,
	  "input:T weight:W=1 bias:W=0 N:- C:- HxW:- group:i>num_groups eps:f", F_MULTI, 0 },

	/* convolution and pooling */
	{ "aten.conv1d.default", Aconv,
	  "input:T weight:T bias:T? stride:is=1 padding:is=0 dilation:is=1 groups:i=1", 0, 0 },
	{ "aten.conv2d.default", Aconv,
	  "input:T weight:T bias:T? stride:is=1 padding:is=0 dilation:is=1 groups:i=1", 0, 0 },
	/* recurrent layers (inference: train must be false, dropout unused) */
#define RNNARGS " params:L has_biases:i num_layers:i dropout:- train:0 bidirectional:i batch_first:i"
	{ "aten.lstm.input", Alstm, "input:T hx:L" RNNARGS, F_MULTI | F_RESVIEW, 0 },
	{ "aten.gru.input", Agru, "input:T hx:T" RNNARGS, F_MULTI, 0 },
	{ "aten.rnn_tanh.input", Arnntanh, "input:T hx:T" RNNARGS, F_MULTI, 0 },
	{ "aten.rnn_relu.input", Arnnrelu, "input:T hx:T" RNNARGS, F_MULTI, 0 },
	{ "aten.lstm_cell.default", Alstmcell, "input:T hx:L w_ih:T w_hh:T b_ih:T? b_hh:T?", F_MULTI, 0 },
	{ "aten.gru_cell.default", Agrucell, "input:T hx:T w_ih:T w_hh:T b_ih:T? b_hh:T?", 0, 0 },
	{ "aten.conv_transpose1d.default", Aconv, "input:T weight:T bias:T? stride:is=1 padding:is=0 "
	  "output_padding:is=0 groups:i=1 dilation:is=1 @transposed:i=1", 0, 0 },
	{ "aten.conv_transpose2d.input", Aconv, "input:T weight:T bias:T? stride:is=1 padding:is=0 "
	  "output_padding:is=0 groups:i=1 dilation:is=1 @transposed:i=1", 0, 0 },
	{ "aten.conv_transpose3d.input", Aconv, "input:T weight:T bias:T? stride:is=1 padding:is=0 "
	  "output_padding:is=0 groups:i=1 dilation:is=1 @transposed:i=1", 0, 0 },
	{ "aten.conv3d.default", Aconv,
	  "input:T weight:T bias:T? stride:is=1 padding:is=0 dilation:is=1 groups:i=1", 0, 0 },
	{ "aten.convolution.default", Aconv,
	  "input:T weight:T bias:T? stride:is padding:is dilation:is transposed:i? output_padding:is? "
	  "groups:i", 0, H_CONV },
	{ "aten.max_pool2d.default", Amaxpool, POOL " dilation:is=1 ceil_mode:i=0", 0, 0 },
	{ "aten.adaptive_max_pool2d.default", Aview, "self:T output_size:is", F_MULTI, H_ADAPTMAX },
	{ "aten.im2col.default", Aview,
	  "self:T kernel_size:is dilation:is padding:is stride:is", 0, H_IM2COL },
	{ "aten.max_pool2d_with_indices.default", Amaxpool, POOL " dilation:is=1 ceil_mode:i=0",
	  F_MULTI, 0 },
	{ "aten.avg_pool2d.default", Aavgpool,
	  POOL " ceil_mode:i=0 count_include_pad:i=1 divisor_override:i?", 0, 0 },
	{ "aten.adaptive_avg_pool2d.default", Aadaptavg, "self:T output_size:is", 0, 0 },
	{ "aten._adaptive_avg_pool2d.default", Aadaptavg, "self:T output_size:is", 0, 0 },
	{ "aten.max_pool1d.default", Amaxpool1, POOL " dilation:is=1 ceil_mode:i=0", 0, 0 },
	{ "aten.max_pool1d_with_indices.default", Amaxpool1, POOL " dilation:is=1 ceil_mode:i=0",
	  F_MULTI, 0 },
	{ "aten.max_pool3d.default", Amaxpool3, POOL " dilation:is=1 ceil_mode:i=0", 0, 0 },
	{ "aten.max_pool3d_with_indices.default", Amaxpool3, POOL " dilation:is=1 ceil_mode:i=0",
	  F_MULTI, 0 },
	{ "aten.avg_pool1d.default", Aavgpool1, POOL " ceil_mode:i=0 count_include_pad:i=1", 0, 0 },
	{ "aten.avg_pool3d.default", Aavgpool3,
	  POOL " ceil_mode:i=0 count_include_pad:i=1 divisor_override:i?", 0, 0 },
	{ "aten.adaptive_avg_pool1d.default", Aadaptavg1, "self:T output_size:is", 0, 0 },
	{ "aten.adaptive_avg_pool3d.default", Aadaptavg3, "self:T output_size:is", 0, 0 },
	{ "aten._adaptive_avg_pool3d.default", Aadaptavg3, "self:T output_size:is", 0, 0 },

	/* sorting, distances, bags, folds and sampling */
	{ "aten.sort.default", Asort, "self:T dim:i=-1 descending:i=0", 0, 0 },
	{ "aten.sort.stable", Asort, "self:T stable:- dim:i=-1 descending:i=0", 0, 0 },
	{ "aten.topk.default", Atopk, "self:T k:i dim:i=-1 largest:i=1 sorted:-", 0, 0 },
	{ "aten.prod.default", Aprod, "self:T dtype:0", 0, 0 },
	{ "aten.prod.dim_int", Aprod, "self:T dim:is keepdim:i=0 dtype:0", 0, 0 },
	{ "aten.cdist.default", Acdist, "x1:T x2:T p:f=2 compute_mode:-", 0, 0 },
	{ "aten._cdist_forward.default", Acdist, "x1:T x2:T p:f compute_mode:-", 0, 0 },
	{ "aten.pdist.default", Apdist, "self:T p:f=2", 0, 0 },
	{ "aten._pdist_forward.default", Apdist, "self:T p:f=2", 0, 0 },
	{ "aten.masked_scatter.default", Amaskscat, "self:T mask:T source:T", 0, 0 },
	{ "aten.masked_scatter_.default", Amaskscat, "self:T mask:T source:T", F_INPLACE, 0 },
	{ "aten.embedding_bag.padding_idx", Aembbag, EBAG, F_MULTI, H_EMBBAG },
	{ "aten._embedding_bag.default", Aembbag, EBAG, F_MULTI, H_EMBBAG },
	{ "aten._embedding_bag_forward_only.default", Aembbag, EBAG, F_MULTI, H_EMBBAG },
	{ "aten.col2im.default", Acol2im,
	  "self:T output_size:is kernel_size:is dilation:is padding:is stride:is", 0, 0 },
	{ "aten.grid_sampler.default", Agridsamp,
	  "input:T grid:T interpolation_mode:i padding_mode:i align_corners:i", 0, 0 },
	{ "aten.grid_sampler_2d.default", Agridsamp,
	  "input:T grid:T interpolation_mode:i padding_mode:i align_corners:i", 0, 0 },

	/* attention */
	{ "aten.scaled_dot_product_attention.default", Asdpa,
	  "query:T key:T value:T attn_mask:T? dropout_p:0 is_causal:i=0 scale:f? enable_gqa:i=0", 0, 0 },

	/* tensors made from nothing */
	{ "aten.arange.default", Aarange, "end:f" FACT, 0, H_ARANGE },
	{ "aten.arange.start", Aarange, "start:f end:f" FACT, 0, H_ARANGE },
	{ "aten.arange.start_step", Aarange, "start:f end:f step:f=1" FACT, 0, H_ARANGE },
	{ "aten.full.default", Afull, "size:is fill_value:f>value" FACT, 0, H_FULL },
	{ "aten.zeros.default", Afull, "size:is @value:f=0>value" FACT, 0, H_FLOATDEF },
	{ "aten.empty.memory_format", Afull, "size:is @value:f=0>value" FACT " memory_format:-", 0,
	  H_FLOATDEF },
	{ "aten.empty_strided.default", Afull, "size:is stride:- @value:f=0>value" FACT, 0,
	  H_FLOATDEF },
	{ "aten.ones.default", Afull, "size:is @value:f=1>value" FACT, 0, H_FLOATDEF },
	{ "aten.scalar_tensor.default", Ascalar, "s:f>value" FACT, 0, H_FLOATDEF },
	{ "aten.full_like.default", Afulllike,
	  "self:T fill_value:f>value" FACT " memory_format:-", 0, 0 },
	{ "aten.zeros_like.default", Afulllike, "self:T @value:f=0>value" FACT " memory_format:-", 0, 0 },
	{ "aten.ones_like.default", Afulllike, "self:T @value:f=1>value" FACT " memory_format:-", 0, 0 },
	{ "aten.empty_like.default", Afulllike, "self:T @value:f=0>value" FACT " memory_format:-", 0, 0 },
	{ "aten.new_full.default", Afull, "self:T size:is fill_value:f>value" FACT, 0, H_NEW },
	{ "aten.new_zeros.default", Afull, "self:T size:is @value:f=0>value" FACT, 0, H_NEW },
	{ "aten.new_ones.default", Afull, "self:T size:is @value:f=1>value" FACT, 0, H_NEW },
	{ "aten.rand.default", Arand, "size:is" FACT, 0, H_RANDOM },
	{ "aten.randn.default", Arandn, "size:is" FACT, 0, H_RANDOM },
	{ "aten.randperm.default", Arandperm, "n:i" FACT, 0, H_RANDOM },

	/* complex values, as f32 [..., 2] (formats/ops.md, "Complex values") */
	{ "aten._fft_r2c.default", Afftr2c, "self:T dim:is normalization:i onesided:i", 0, 0 },
	{ "aten._fft_c2r.default", Afftc2r, "self:T dim:is normalization:i last_dim_size:i", 0, 0 },
	{ "aten.view_as_real.default", Aview, "self:T", 0, H_CVIEW },
	{ "aten.view_as_complex.default", Aview, "self:T", 0, H_CVIEW },
	{ "aten.angle.default", Acangle, "self:T", 0, 0 },
	{ "aten.fft_rfft.default", Afftr2c, "self:T n:i? dim:is=-1 norm:s?", 0, H_FFT },
	{ "aten.fft_fft.default", Afftr2c, "self:T n:i? dim:is=-1 norm:s?", 0, H_FFT },
	{ "aten.fft_irfft.default", Afftc2r, "self:T n:i? dim:is=-1 norm:s?", 0, H_FFT },
	{ "aten.fft_rfft2.default", Afftr2c, "self:T s:is? dim:is=-2,-1 norm:s?", 0, H_FFT },
	{ "aten.fft_irfft2.default", Afftc2r, "self:T s:is? dim:is=-2,-1 norm:s?", 0, H_FFT },
	{ "aten.fft_rfftn.default", Afftr2c, "self:T s:is? dim:is? norm:s?", 0, H_FFT },
	{ "aten.fft_irfftn.default", Afftc2r, "self:T s:is? dim:is? norm:s?", 0, H_FFT },

	/* a one-element tensor's value as a scalar (.item()), for arithmetic */
	{ "aten._local_scalar_dense.default", Aview, "self:T", 0, H_ITEM },
	{ "aten.item.default", Aview, "self:T", 0, H_ITEM },
	{ "aten.nonzero_static.default", Anonzeros, "self:T size:i fill_value:i=-1", 0, 0 },
	{ "aten.nonzero.default", Anonzero, "self:T", 0, 0 },

	/* dtype conversions (device and layout must say cpu/cuda and strided) */
	{ "aten._to_copy.default", Ocast, "self:T" FACT " non_blocking:0 memory_format:-", 0, H_TOCOPY },
	{ "aten.to.dtype", Ocast, "self:T dtype:dt non_blocking:0 copy:- memory_format:-", 0, H_TOCOPY },
	{ "aten.to.dtype_layout", Ocast,
	  "self:T" FACT " non_blocking:0 copy:- memory_format:-", 0, H_TOCOPY },
	{ "aten.to.device", Ocast,
	  "self:T device:dev dtype:dt non_blocking:0 copy:- memory_format:-", 0, H_TOCOPY },
	{ "aten.type_as.default", Ocast, "self:T other:T", 0, H_TYPEAS },

	/* sizes of tensors with static shapes: import folds them into ints */
	{ "aten.sym_size.int", Aclone, "self:T dim:i", 0, H_SYM },
	{ "aten.sym_numel.default", Aclone, "self:T", 0, H_SYM },
	{ "aten.sym_stride.int", Aclone, "self:T dim:i", 0, H_SYM },
	{ "aten.sym_storage_offset.default", Aclone, "self:T", 0, H_SYM },
	{ "aten.sym_is_contiguous.default", Aclone, "self:T memory_format:-", 0, H_SYM },
	{ "aten.resize_.default", Aview, "self:T size:is memory_format:-", F_INPLACE, H_RESIZE },

	/* checks of static metadata or of symbolic values: nothing to run */
	{ "aten._assert_tensor_metadata.default", -1, "", 0, 0 },
	{ "aten._assert_scalar.default", -1, "", 0, 0 },
	{ "aten._assert_async.default", -1, "", 0, 0 },
	{ "aten._assert_async.msg", -1, "", 0, 0 },
	{ "aten._functional_assert_async.msg", -1, "", 0, 0 },
	{ "aten.sym_constrain_range.default", -1, "", 0, 0 },
	{ "aten.sym_constrain_range_for_size.default", -1, "", 0, 0 },
};

/* The entry for target (without "torch.ops."), or NULL. */
const Aten *
aten_lookup(const char *target)
{
	for (size_t i = 0; i < sizeof aten / sizeof aten[0]; i++)
		if (strcmp(aten[i].target, target) == 0)
			return &aten[i];
	return NULL;
}

/* The number of entries, and entry i (for tests and listings). */
int
aten_count(void)
{
	return (int)(sizeof aten / sizeof aten[0]);
}

const Aten *
aten_entry(int i)
{
	return i >= 0 && i < aten_count() ? &aten[i] : NULL;
}
