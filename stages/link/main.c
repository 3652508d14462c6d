/* main.c: dp-link: links the lowered objects, the weight blob and the
 * runtime into the executable NAME, the static library libNAME.a and the
 * header NAME.h: read the command line and the IR, check the inputs
 * (build.c), write the header's text, make the outputs in a temporary
 * folder and put them in place (build.c). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "link.h"

#define STAGE "link"

static const char usage[] =
	"usage: dp-link IN.dpir OBJ.o... [--fatbin FILE] [--weights BLOB] [--apart] [--shared-runtime]\n"
	"               --runtime LIBDIR\n"
	"               [--include DIR] [--cc CC] [--ar AR] [--ldflag ARG ...] [--cuda DIR]\n"
	"               -o OUT\n"
	"\n"
	"Links a DevProc program.  Writes three files: the executable OUT, the\n"
	"static library DIR/libBASE.a and the header DIR/BASE.h, where DIR and BASE\n"
	"are the folder and file name of OUT; symbols are named after the pipeline\n"
	"(NAME_create, NAME_run... from IN.dpir).  libBASE.a is self-contained: the\n"
	"objects, the weight blob, the runtime and jansson, no main().  Each output is\n"
	"replaced only when its bytes change; with the same inputs and tools the\n"
	"bytes are the same wherever the build runs.\n"
	"\n"
	"  OBJ.o           the objects to link (dp-lower_cpu's, dp-lower_gpu's), in\n"
	"                  order; --obj OBJ.o says the same\n"
	"  --fatbin FILE   the kernels of the program's CUDA, compiled apart from its\n"
	"                  host code (nvcc -fatbin -DDP_DEVICE: runtime/cuda/\n"
	"                  launch.cuh), embedded as NAME_gpu_fatbin; an operand\n"
	"                  FILE.fatbin says the same\n"
	"  --weights BLOB  the weight blob, embedded as NAME_weights by assembling\n"
	"                  `.incbin \"BLOB\"` from the current folder (default: the\n"
	"                  blob the IR names, in IN.dpir's folder); its size must be\n"
	"                  the IR's\n"
	"  --apart         leave the blob out: the program maps it at run time from\n"
	"                  its file name (weights.bin) beside the executable, or\n"
	"                  from the executable's --weights FILE (NAME_create_with's\n"
	"                  weights option), pages read as they are used; its header\n"
	"                  (size, content hash) must be the one linked\n"
	"  --shared-runtime\n"
	"                  link the executable against the runtime's shared library\n"
	"                  DIR/libdprt.so (make lib/libdprt.so) instead of its static\n"
	"                  archive, which the link then does not copy (0.3 s instead\n"
	"                  of 0.7 with the 28 MB sanitized runtime of make SAN=1);\n"
	"                  the executable is small but needs that library at run\n"
	"                  time, found by DIR's absolute path (its rpath), so it is\n"
	"                  not the same bytes from another folder.  For development\n"
	"                  builds and the sanitized test run; libBASE.a and BASE.h\n"
	"                  are the static build's\n"
	"  --runtime DIR   the folder holding libdprt.a (and, for a program with\n"
	"                  cuda partitions, libdprt_cuda.a)\n"
	"  --include DIR   the folder holding dprt.h (default: DIR/../runtime for\n"
	"                  the --runtime DIR, as in the source tree)\n"
	"  --cc CC         the C compiler and linker driver (default: cc)\n"
	"  --ar AR         make libBASE.a with the archiver AR (ar qcsD); by default\n"
	"                  dp-link writes it itself, the same bytes\n"
	"  --ldflag ARG    one more argument for the final link, after the library;\n"
	"                  repeatable\n"
	"  --cuda DIR      the CUDA toolkit folder, for a program with cuda\n"
	"                  partitions (default: the one of the nvcc configure found);\n"
	"                  such a program links its libraries: the CUDA runtime\n"
	"                  statically, cuBLAS where it calls it\n"
	"  -o OUT          the executable to write\n"
	"  --help          this text\n"
	"\n"
	"A program with image inputs (u8[?,?,C]) gets the PNG/JPEG decoder in its\n"
	"executable, which links libpng and libjpeg too (libBASE.a does not need\n"
	"them).\n"
	"\n"
	"Tools run directly (no shell); temporaries live in DIR/.BASE.link-XXXXXX,\n"
	"removed on success and failure.  Errors: `IN: link: message` then the\n"
	"failing tool's messages, exit status 1, no output changed.\n";

/* Reads the command line; objects are the operands after IN.dpir (as
 * Ninja's $in gives them) or --obj. */
static int
args(Link *l, int argc, char **argv)
{
	static const char *const flags[] = {"--obj", "--weights", "--runtime", "--include",
	                                    "--cc", "--ar", "--ldflag", "-o", "--cuda", "--fatbin", NULL};
	int i, f;

	l->obj = dp_alloc(l->a, (size_t)argc, sizeof *l->obj);
	l->ldflag = dp_alloc(l->a, (size_t)argc, sizeof *l->ldflag);
	l->cc = "cc";
	l->ar = "ar";
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage, stdout);
			exit(0);
		}
		if (strcmp(a, "--apart") == 0) {
			l->apart = 1;
			continue;
		}
		if (strcmp(a, "--shared-runtime") == 0) {
			l->shared = 1;
			continue;
		}
		for (f = 0; flags[f] && strcmp(a, flags[f]) != 0; f++)
			;
		if (flags[f] && i + 1 >= argc) {
			fprintf(stderr, "dp-link: %s needs an argument (see --help)\n", a);
			return -1;
		}
		switch (flags[f] ? f : -1) {
		case 0: l->obj[l->nobj++] = argv[++i]; break;
		case 1: l->weights = argv[++i]; break;
		case 2: l->libdir = argv[++i]; break;
		case 3: l->incdir = argv[++i]; break;
		case 4: l->cc = argv[++i]; break;
		case 5: l->ar = argv[++i], l->arset = 1; break;
		case 6: l->ldflag[l->nldflag++] = argv[++i]; break;
		case 7: l->out = argv[++i]; break;
		case 8: l->cuda = argv[++i]; break;
		case 9: l->fatbin = argv[++i]; break;
		default:
			if (a[0] == '-' && a[1] != '\0') {
				fprintf(stderr, "dp-link: unknown option %s (see --help)\n", a);
				return -1;
			}
			size_t n = strlen(a);
			if (l->in && n > 7 && strcmp(a + n - 7, ".fatbin") == 0)
				l->fatbin = a;
			else if (l->in)
				l->obj[l->nobj++] = a;
			else
				l->in = a;
		}
	}
	if (!l->in || !l->out || !l->libdir || l->nobj == 0) {
		fprintf(stderr, "dp-link: need IN.dpir, objects, --runtime and -o (see --help)\n");
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	Link l = {0};
	Err err = {0};
	Str hdr = {0};
	char tmpl[PATH_MAX], *hname, *libname;
	const char *src;
	long long wsize = 0;
	int rc = 1;

	l.a = dp_arena_new();
	if (args(&l, argc, argv) != 0)
		goto done;
	if (dp_read(l.in, &l.fn, &err) != 0 || link_check(&l, &wsize, &err) != 0)
		goto fail;
	hname = dp_alloc(l.a, strlen(l.base) + 8, 1);
	libname = dp_alloc(l.a, strlen(l.base) + 8, 1);
	sprintf(hname, "%s.h", l.base);
	sprintf(libname, "lib%s.a", l.base);
	src = strrchr(l.in, '/') ? strrchr(l.in, '/') + 1 : l.in;
	if (gen_header(l.fn, hname, src, libname, l.gpu ? l.cudalib : NULL, &hdr, &err) != 0)
		goto fail;

	/* the temporary folder, beside the outputs so that rename works */
	if ((size_t)snprintf(tmpl, sizeof tmpl, "%s/.%s.link-XXXXXX", l.dir, l.base) >=
	    sizeof tmpl || mkdtemp(tmpl) == NULL) {
		dp_seterr(&err, "cannot make a temporary folder in %s: %s", l.dir, strerror(errno));
		goto fail;
	}
	l.tmp = tmpl;
	if (link_build(&l, wsize, &hdr, hname, libname, &err) != 0)
		goto fail;
	rc = 0;
	goto done;
fail:
	dp_report(l.in, STAGE, &err);
	if (l.toollog)
		showlog(l.toollog);
done:
	if (l.tmp)
		rmtree(l.tmp);
	str_free(&hdr);
	if (l.fn)
		dp_free(l.fn);
	dp_arena_free(l.a);
	return rc;
}
