/* main.c: dp-lower_gpu: lowers the cuda partitions of a partitioned DPIR
 * function to CUDA C: read, plan device memory and fusion, emit kernels and
 * schedules, write. */
#include <stdio.h>
#include <string.h>

#include "gpu.h"

#define STAGE "lower_gpu"

static const char usage[] =
	"usage: dp-lower_gpu IN.dpir [-t MAPPING [--arch sm_XX] [-d DEPFILE] [--tunables FILE]]\n"
	"                   -o OUT.cu\n"
	"\n"
	"Lowers the cuda partitions of a partitioned DPIR file to CUDA C, for nvcc:\n"
	"  - chains of elementwise, normalize, shape, source (arange, full) and\n"
	"    gather (embedding, index) ops fused into one kernel (each element\n"
	"    computed from the chain's inputs by index arithmetic; reshapes and\n"
	"    matmul transposes are free views); such kernels of up to 16 blocks\n"
	"    in a row that do not read what another writes launched as one;\n"
	"  - matrix products with their bias and a following relu: a generated\n"
	"    matrix-vector kernel for up to 8 rows, cuBLAS (fp32) beyond, a bias\n"
	"    vector alone in cuBLASLt's epilogue; bmm and matmul a tiled kernel;\n"
	"    with `tune cuda.precision bf16|f16` in the mapping, in 16 bits (16-bit\n"
	"    weights, fp32 sums, results rounded; formats/target.md); a decoder's\n"
	"    one-row products: siblings of one input (q, k, v) in one kernel, an\n"
	"    add or mul after one (residual adds, SwiGLU's silu(gate)·up, the gate\n"
	"    summed in the same warp) in its epilogue;\n"
	"  - convolutions: an implicit GEMM on the tensor cores with the batch\n"
	"    norm after it folded into its weights at init and a residual add and\n"
	"    relu or clamp (ReLU6, hardtanh) in its epilogue (DPRT_CUDA_CONV picks\n"
	"    fp32/tf32/direct at run time; DPRT_CUDA_SPLITK=sum/cluster how a\n"
	"    split K is summed);\n"
	"    pooling; attention as one fused kernel (a block of 8 warps per query\n"
	"    row and chunk of keys for a decoder's few rows); the convolution and\n"
	"    attention kernels are the runtime's kernel library (runtime/cuda/,\n"
	"    lib/libdprt_cuda.a, compiled once), called with each op's shapes;\n"
	"  - argmax, softmax, sums, means, layer and RMS norm: a warp or block\n"
	"    per row; a residual add that a layer norm reads done in its kernel;\n"
	"    an RMS norm written out as ops (pow, mean, add, rsqrt, mul, mul) one\n"
	"    row kernel, or of one row read only by products (a decoder's step)\n"
	"    computed by their matrix-vector kernel (`tune cuda.gemv.norm 0`: its\n"
	"    own kernel);\n"
	"  - an fp32 product as 3xTF32 through cuBLASLt whose A an elementwise\n"
	"    kernel, a layer norm or attention computes, read by nothing else:\n"
	"    that kernel writes A already split (`tune cuda.mm.x3split 0`: a\n"
	"    split kernel);\n"
	"  - the elementwise and matrix-vector kernels launched with\n"
	"    programmatic dependent launch (runtime/cuda/pdl.cuh), each letting\n"
	"    the kernel after it start its blocks at once, before its own wait\n"
	"    (`tune cuda.pdl late`: after its wait; `tune cuda.pdl 0`: ordinary\n"
	"    launches; `tune cuda.gemv.l2 MIB`: each one-row matrix-vector kernel\n"
	"    also asks the next one's weights into L2, off by default);\n"
	"  - index_write (a KV cache's update): the source's slices written at\n"
	"    their positions, into the state in place where nothing else reads it,\n"
	"    the source's elementwise chain computed in that kernel;\n"
	"  - one schedule function per cuda partition (host->device copies from\n"
	"    page-locked staging, launches on one stream, the device->host copies\n"
	"    the host reads next, or for a small result of a generated kernel that\n"
	"    kernel writing it there itself: `tune cuda.copyout 0` keeps the\n"
	"    copy), run through the runtime (dprt_cuda.h), which\n"
	"    captures it into a CUDA graph after the first run;\n"
	"  - the entry points NAME_gpu_init, NAME_gpu_partK, NAME_gpu_host and\n"
	"    NAME_gpu_fini that the host code from dp-lower_cpu calls.\n"
	"A program with no cuda partition gets a file holding only a comment.\n"
	"Compile the output with nvcc -I<runtime headers> (and the arch of the\n"
	"target mapping).\n"
	"\n"
	"OUT.cu is written only when its bytes change.  Errors: `IN: lower_gpu:\n"
	"message`, exit status 1, no output.\n"
	"\n"
	"  -o OUT.cu  the CUDA file to write\n"
	"  -t MAPPING the target mapping: its tuning database (`tune cuda.db FILE`,\n"
	"             formats/target.md) chooses, where it has an entry for an op's\n"
	"             shapes on this GPU generation, over the heuristics\n"
	"  --arch A   the GPU generation of the database's keys (default: the\n"
	"             mapping's `device cuda sm_XX`)\n"
	"  -d FILE    a Ninja depfile naming the mapping and the database\n"
	"  --tunables FILE\n"
	"             write the tunable sites met (with -t): per convolution, product\n"
	"             and attention, \"OP<TAB>KEY<TAB>CHOICE<TAB>HEURISTIC<TAB>CANDIDATES\"\n"
	"             (formats/tune.md), what devproc tune measures\n"
	"  --supports list the ops the cuda target has kernels for, one a line\n"
	"  --help     this text\n";

static const char *
gpu_base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

int
main(int argc, char **argv)
{
	const char *in = NULL, *out = NULL, *map = NULL, *arch = NULL, *depfile = NULL;
	const char *sites = NULL;
	Str dep = {0};
	Fn *fn;
	Err err = {0};
	Str text = {0};
	Gpu g = {0};
	int i, rc = 1;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(usage, stdout);
			return 0;
		} else if (strcmp(argv[i], "--supports") == 0) {
			for (int k = 0; k < DP_NOP; k++)
				if (gpu_supports(k))
					puts(dp_op_name[k]);
			return 0;
		} else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
			out = argv[++i];
		} else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc) {
			map = argv[++i];
		} else if (strcmp(argv[i], "--arch") == 0 && i + 1 < argc) {
			arch = argv[++i];
		} else if (strcmp(argv[i], "-d") == 0 && i + 1 < argc) {
			depfile = argv[++i];
		} else if (strcmp(argv[i], "--tunables") == 0 && i + 1 < argc) {
			sites = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			fprintf(stderr, "dp-lower_gpu: unknown option %s (see --help)\n", argv[i]);
			return 1;
		} else if (in == NULL) {
			in = argv[i];
		} else {
			fprintf(stderr, "dp-lower_gpu: more than one input (see --help)\n");
			return 1;
		}
	}
	if (in == NULL || out == NULL) {
		fprintf(stderr, "dp-lower_gpu: need IN.dpir and -o OUT.cu (see --help)\n");
		return 1;
	}

	if (dp_read(in, &fn, &err) != 0) {
		dp_report(in, STAGE, &err);
		return 1;
	}
	g.fn = fn;
	g.err = &err;
	g.pfwant = -1;
	g.gemvnorm = 1;   /* tune cuda.gemv.norm's default */
	g.gvwarps = 512;  /* tune cuda.gemv.warps's default */
	g.mmx3 = -1;      /* tune cuda.mm.x3 auto */
	g.x3fuse = 1;     /* tune cuda.mm.x3split's default */
	g.copyout = 1;    /* tune cuda.copyout's default */
	g.gvtail = 1;     /* tune cuda.gemv.tail's default */
	g.rmsp = -1;
	if (fn->npart == 0 && fn->nop > 0) {
		dp_seterr(&err, "the IR is not partitioned (run dp-partition first)");
		dp_report(in, STAGE, &err);
	} else if (map && tune_read(&g, map, arch, &dep) != 0)
		dp_report(in, STAGE, &err);
	else if (gpu_emit_file(&g, gpu_base(in), gpu_base(out), &text) != 0)
		dp_report(in, STAGE, &err);
	else if (dp_write_file(out, text.p, text.n, &err) != 0)
		dp_report(out, STAGE, &err);
	else
		rc = 0;
	if (rc == 0 && sites) {
		const char *t = tune_sites(&g);
		if (dp_write_file(sites, t, strlen(t), &err) != 0) {
			dp_report(sites, STAGE, &err);
			rc = 1;
		}
	}
	if (rc == 0 && depfile) {   /* OUT: the mapping and the database */
		Str d = {0};
		str_printf(&d, "%s:%s\n", out, dep.p ? dep.p : "");
		if (dp_write_file(depfile, d.p, d.n, &err) != 0) {
			dp_report(depfile, STAGE, &err);
			rc = 1;
		}
		str_free(&d);
	}
	str_free(&dep);
	str_free(&text);
	str_free(&g.kern);
	str_free(&g.host);
	dp_free(fn);
	return rc;
}
