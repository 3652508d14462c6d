/* main.c: the command line of generated executables (dprt_main): read inputs
 * (.npy files; images for image inputs), run the program, write or print
 * outputs, benchmark. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "dprtint.h"

enum {
	NSHOW = 8,	/* tensors up to this many elements are printed whole */
	NHEAD = 6	/* elements shown of larger ones */
};

/* One run of the command line; everything it owns, freed by cleanup(). */
typedef struct Cli {
	const dprt_prog *p;
	dprt_decode_fn *decode;		/* image files to pixels, or NULL */
	const char **infile, **outfile;	/* per io, NULL if not named */
	void **in, **out;
	char *staged;			/* per input: in[i] is the program's (inbuf) */
	dprt_image *img;		/* per input: an image input's pixels */
	void *arena, *state;
	int inited;
	long steps;			/* --steps: runs in this process (default 1) */
	const char *genspec;		/* --generate SPEC, or NULL */
	dprt_generation gen;
	const char *promptfile;		/* --prompt FILE, or NULL */
	int64_t *prompt;		/* its tokens */
	const char **stepin;		/* --in files past each input's first, in order */
	int *stepio, nstepin;		/* their inputs */
	const char **outfmt;		/* per output, --out's file (a %d pattern for steps) */
	const char **wfile;		/* --weights, in order */
	int nwfile;
	dprt_weights *weights;
	long bench;
	int full;			/* --full: print whole outputs */
	const char *trace;		/* --trace FILE */
	int profile;			/* --profile */
	int threads;			/* --threads, or 0: DPRT_THREADS or the cores */
	dprt_pool *pool;
	char **tmp;			/* temporary output files not yet renamed */
	const dprt_entry *ent;		/* --entry, or the first; NULL: none */
	char err[1024];
} Cli;

static void *
alloc64(size_t n)
{
	n = n < 64 ? 64 : (n + 63) / 64 * 64;
	if (n == 0)	/* rounded past SIZE_MAX */
		return NULL;
	return aligned_alloc(64, n);
}

/* Whether io is an image input of any size (u8[?,?,C]). */
static int
isimage(const dprt_io *io)
{
	return io->rank == 3 && io->dim[0] == DPRT_DYN;
}

/* Whether io is a text input (u8[?]: UTF-8 of any length). */
static int
istext(const dprt_io *io)
{
	return io->rank == 1 && io->dim[0] == DPRT_DYN;
}

/* Reads text input i: the string after "text:", else the file's bytes;
 * into c->img[i] as h bytes (w = c = 1). */
static int
readtext(Cli *c, int i)
{
	const char *arg = c->infile[i];
	dprt_image *im = &c->img[i];
	uint8_t *b;
	size_t n = 0;
	long len;
	FILE *f;

	if (strncmp(arg, "text:", 5) == 0) {
		n = strlen(arg + 5);
		if ((b = malloc(n + 1)) == NULL)
			return dprt_errf(c->err, sizeof c->err, "out of memory");
		memcpy(b, arg + 5, n);
	} else {
		if ((f = fopen(arg, "rb")) == NULL)
			return dprt_errf(c->err, sizeof c->err, "%s: cannot open: %s", arg, strerror(errno));
		if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
		    (b = malloc((size_t)len + 1)) == NULL) {
			fclose(f);
			return dprt_errf(c->err, sizeof c->err, "%s: cannot read", arg);
		}
		n = fread(b, 1, (size_t)len, f);
		fclose(f);
		if (n != (size_t)len) {
			free(b);
			return dprt_errf(c->err, sizeof c->err, "%s: cannot read", arg);
		}
	}
	im->data = b, im->h = (int64_t)n, im->w = 1, im->c = 1;
	return 0;
}

/* dtype[shape] of an io into buf. */
static char *
iotype(char *buf, size_t n, const dprt_io *io)
{
	char s[200];

	snprintf(buf, n, "%s%s", dprt_dtype_name[io->dtype],
	         dprt_shape_str(s, sizeof s, io->rank, io->dim));
	return buf;
}

static void
usage(const dprt_prog *p, FILE *f)
{
	char t[256];
	int i;

	fprintf(f, "usage: %s --in NAME=FILE.npy ... [--out NAME=FILE.npy ...] "
	        "[--full] [--bench N] [--threads N] [--trace FILE] [--profile] [--weights FILE ...]\n"
	        "       [--steps N] [--generate IN=OUT,prompt=P,...]%s [--help]\n", p->name,
	        p->nentry ? " [--entry NAME]" : "");
	if (p->nentry) {
		fprintf(f, "entries (--entry NAME runs one, default the first; they share the "
		        "weights and the state):\n");
		for (i = 0; i < p->nentry; i++) {
			int k;
			fprintf(f, "  %s:", p->entry[i].name);
			for (k = 0; k < p->entry[i].nin; k++)
				fprintf(f, " %s", p->in[p->entry[i].in[k]].name);
			fprintf(f, " ->");
			for (k = 0; k < p->entry[i].nout; k++)
				fprintf(f, " %s", p->out[p->entry[i].out[k]].name);
			fprintf(f, "\n");
		}
	}
	fprintf(f, p->nentry ? "inputs (those of the entry run required):\n" : "inputs (all required):\n");
	for (i = 0; i < p->nin; i++)
		fprintf(f, "  %s  %s%s\n", p->in[i].name, iotype(t, sizeof t, &p->in[i]),
		        istext(&p->in[i]) ? "  (UTF-8 text of any length: a file's bytes, or "
		        "text:STRING)" : isimage(&p->in[i]) ? "  (an image of any size: a PNG or JPEG file, or "
		        "a u8 [H,W,C] .npy)" : "");
	fprintf(f, "outputs (written with --out, else printed):\n");
	for (i = 0; i < p->nout; i++)
		fprintf(f, "  %s  %s\n", p->out[i].name, iotype(t, sizeof t, &p->out[i]));
	fprintf(f, "--full prints every value of the printed outputs (else the "
	        "first %d of those over %d).\n", NHEAD, NSHOW);
	fprintf(f, "--bench N runs the program N more times after the first and "
	        "prints the median, min and max time of run() and the peak resident memory.\n");
	fprintf(f, "--threads N runs on N threads (default: DPRT_THREADS, else the cores the "
	        "process may use).\n");
	fprintf(f, "--trace FILE runs it once more, timing each op (cuda kernels by CUDA "
	        "events), and writes the timeline as Chrome/Perfetto trace JSON; "
	        "--profile runs it 20 times so and prints the mean time per op.\n");
	fprintf(f, "--steps N runs it N times in this process, printing \"step K:\" before each "
	        "run's outputs: an input\ngiven once is every step's, one given N times "
	        "(--in x=a --in x=b ...) is one file per step;\n--out NAME=FILE%%d.npy writes "
	        "each step's, %%d the step's number from 1.\n");
	if (p->generate)
		fprintf(f, "--generate prompt=P[,key=value...] generates tokens as the pipeline "
		        "declares (%s),\nthe keys given here replacing its own; or, in full:\n",
		        p->generate);
	fprintf(f, "--generate IN=OUT,prompt=P[,max_tokens=N][,end=T][,temperature=X][,top_k=K]"
	        "[,top_p=Q][,seed=S]\ngenerates tokens: the first P tokens of input IN "
	        "(i64 [1,L]) are the prompt; each run's\nlogits OUT (f32 [1,L,V], or [1,V] for "
	        "the last position) give the next token (greedy when\ntemperature is 0, the "
	        "default; else sampled, SplitMix64 from seed), appended to IN, until\n"
	        "max_tokens (default 16), the end token or L; the tokens are printed as they "
	        "come.\n");
	fprintf(f, "--prompt FILE (with --generate) takes the prompt from an i64 .npy file "
	        "(prompt=P: its first P);\ninputs not given by --in are zeros.  With pos=POS "
	        "(an i64 [L] input: the positions of\nIN's tokens, for a program keeping a KV "
	        "cache as state), the prompt is run L tokens at a\ntime, then each new token "
	        "alone at the next position.\n");
	if (p->blob)
		fprintf(f, "--weights FILE takes the weights from FILE instead of %s: the "
		        "program's weight blob\n(mapped, read as used; %s), or .safetensors "
		        "checkpoints whose tensors replace\nthe model's by name (repeatable; "
		        "the shapes must be the model's, the dtypes too but\nthat f16 and bf16 widen to an f32 model's).\n", p->blob->data ?
		        "the embedded blob" : p->blob->file, p->blob->file);
}

/* Records NAME=FILE for an --in (out = 0) or --out (out = 1). */
static int
bind(Cli *c, int out, const char *opt, const char *arg)
{
	const dprt_io *io = out ? c->p->out : c->p->in;
	int nio = out ? c->p->nout : c->p->nin;
	const char **file = out ? c->outfile : c->infile;
	const char *eq;
	int i, len;

	eq = arg ? strchr(arg, '=') : NULL;
	if (!eq || eq == arg || !eq[1])
		return dprt_errf(c->err, sizeof c->err, "%s needs NAME=FILE, got '%s'",
		                 opt, arg ? arg : "");
	i = dprt_findio(io, nio, arg, (size_t)(eq - arg));
	len = (int)(eq - arg);
	if (i < 0)
		return dprt_errf(c->err, sizeof c->err, "no %s named '%.*s' (see --help)",
		                 out ? "output" : "input", len, arg);
	if (file[i] && !out) {   /* another step's file (checked against --steps) */
		c->stepio[c->nstepin] = i;
		c->stepin[c->nstepin++] = eq + 1;
		return 0;
	}
	if (file[i])
		return dprt_errf(c->err, sizeof c->err, "%s %.*s given twice", opt, len, arg);
	file[i] = eq + 1;
	return 0;
}

static int readimage(Cli *c, int i);

/* --steps N: every input given once (kept for every step) or N times (one
 * file per step, in order); every --out file a pattern with one %d, the
 * step's number from 1. */
static int
checksteps(Cli *c)
{
	const char *d;
	int i, k, n;

	for (i = 0; i < c->p->nin; i++) {
		for (n = 1, k = 0; k < c->nstepin; k++)
			n += c->stepio[k] == i;
		if (n > 1 && n != c->steps)
			return dprt_errf(c->err, sizeof c->err, c->steps > 1 ? "--in %s given %d "
			                 "times for %ld steps (once, or once per step)" :
			                 "--in %s given twice", c->p->in[i].name, n, c->steps);
	}
	for (i = 0; i < c->p->nout; i++) {
		c->outfmt[i] = c->outfile[i];
		if (!c->outfile[i] || c->steps == 1)
			continue;
		d = strchr(c->outfile[i], '%');
		if (!d || d[1] != 'd' || strchr(d + 1, '%'))
			return dprt_errf(c->err, sizeof c->err, "--out %s=%s: with --steps, the file "
			                 "name has one %%d, the step's number", c->p->out[i].name,
			                 c->outfile[i]);
	}
	return 0;
}

/* Before step k (from 0): the step's --in files, read again; --out's names. */
static int
stepfiles(Cli *c, long k, char (*name)[4096])
{
	const dprt_prog *p = c->p;
	long seen;
	int i, j;

	for (i = 0; i < p->nin && k > 0; i++) {
		for (seen = 0, j = 0; j < c->nstepin && seen < k; j++)
			seen += c->stepio[j] == i;
		if (seen < k)
			continue;   /* given once: kept */
		c->infile[i] = c->stepin[j - 1];
		if (isimage(&p->in[i]) || istext(&p->in[i])) {
			free((void *)c->img[i].data);
			c->img[i].data = NULL;
		}
		if (istext(&p->in[i]) ? readtext(c, i) < 0 : isimage(&p->in[i]) ? readimage(c, i) < 0 :
		    dprt_npy_read(c->infile[i], p->in[i].dtype, p->in[i].rank, p->in[i].dim,
		                  c->in[i], c->err, sizeof c->err) < 0)
			return -1;
	}
	for (i = 0; i < p->nout && c->steps > 1; i++)
		if (c->outfmt[i]) {
			snprintf(name[i], sizeof name[i], c->outfmt[i], (int)k + 1);
			c->outfile[i] = name[i];
		}
	return 0;
}

/* Parses argv; 1 when --help was asked for, 0 to run, -1 on error. */
/* Whether input (out: output) i belongs to the entry that runs: yes in a
 * program without entries. */
static int
isused(const Cli *c, int i, int out)
{
	int k;

	if (!c->ent)
		return 1;
	for (k = 0; k < (out ? c->ent->nout : c->ent->nin); k++)
		if ((out ? c->ent->out : c->ent->in)[k] == i)
			return 1;
	return 0;
}

static int
parse(Cli *c, int argc, char **argv)
{
	const char *a, *v;
	char *end;
	int i, out;

	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
			return 1;
		if (strcmp(a, "--full") == 0) {
			c->full = 1;
			continue;
		}
		if (strcmp(a, "--profile") == 0) {
			c->profile = 1;
			continue;
		}
		if (strcmp(a, "--entry") == 0 || strncmp(a, "--entry=", 8) == 0) {
			v = a[7] == '=' ? a + 8 : i + 1 < argc ? argv[++i] : "";
			for (out = 0; out < c->p->nentry && strcmp(c->p->entry[out].name, v) != 0; out++)
				;
			if (out == c->p->nentry)
				return dprt_errf(c->err, sizeof c->err, "--entry %s: %s", v, c->p->nentry ?
				                 "no such entry (see --help)" : "the program has no entries");
			c->ent = &c->p->entry[out];
			continue;
		}
		if (strcmp(a, "--prompt") == 0 || strncmp(a, "--prompt=", 9) == 0) {
			c->promptfile = a[8] == '=' ? a + 9 : i + 1 < argc ? argv[++i] : "";
			if (!*c->promptfile)
				return dprt_errf(c->err, sizeof c->err, "--prompt needs a FILE");
			continue;
		}
		if (strcmp(a, "--trace") == 0 || strncmp(a, "--trace=", 8) == 0) {
			c->trace = a[7] == '=' ? a + 8 : i + 1 < argc ? argv[++i] : "";
			if (!*c->trace)
				return dprt_errf(c->err, sizeof c->err, "--trace needs a FILE");
			continue;
		}
		if (strcmp(a, "--in") == 0 || strcmp(a, "--out") == 0 ||
		    strcmp(a, "--bench") == 0 || strcmp(a, "--threads") == 0 ||
		    strcmp(a, "--weights") == 0 || strcmp(a, "--steps") == 0 ||
		    strcmp(a, "--generate") == 0) {
			v = i + 1 < argc ? argv[++i] : NULL;
		} else if (strncmp(a, "--in=", 5) == 0 || strncmp(a, "--out=", 6) == 0 ||
		           strncmp(a, "--bench=", 8) == 0 || strncmp(a, "--threads=", 10) == 0 ||
		           strncmp(a, "--weights=", 10) == 0 || strncmp(a, "--steps=", 8) == 0 ||
		           strncmp(a, "--generate=", 11) == 0) {
			v = strchr(a, '=') + 1;
		} else {
			return dprt_errf(c->err, sizeof c->err,
			                 "unknown argument '%s' (see --help)", a);
		}
		if (a[2] == 'g') {
			if (!v || !*v)
				return dprt_errf(c->err, sizeof c->err, "--generate needs IN=OUT,prompt=P...");
			c->genspec = v;
			continue;
		}
		if (a[2] == 's') {
			c->steps = v ? strtol(v, &end, 10) : 0;
			if (!v || *end || c->steps < 1 || c->steps > 1000000)
				return dprt_errf(c->err, sizeof c->err,
				                 "--steps needs a count from 1 to 1000000, got '%s'", v ? v : "");
			continue;
		}
		if (a[2] == 'w') {
			if (!v || !*v)
				return dprt_errf(c->err, sizeof c->err, "--weights needs a file");
			c->wfile[c->nwfile++] = v;
			continue;
		}
		if (a[2] == 't') {
			if (dprt_parse_threads(v, &c->threads, "--threads", c->err, sizeof c->err) < 0)
				return -1;
			continue;
		}
		if (a[2] == 'b') {
			if (!v || !*v)
				return dprt_errf(c->err, sizeof c->err, "--bench needs a count");
			c->bench = strtol(v, &end, 10);
			if (*end || c->bench < 1 || c->bench > 100000000)
				return dprt_errf(c->err, sizeof c->err,
				                 "--bench needs a count from 1 to 100000000, got '%s'", v);
			continue;
		}
		out = a[2] == 'o';
		if (bind(c, out, out ? "--out" : "--in", v) < 0)
			return -1;
	}
	if (c->promptfile && !c->genspec)
		return dprt_errf(c->err, sizeof c->err, "--prompt goes with --generate");
	for (i = 0; c->ent && !c->genspec && i < c->p->nin + c->p->nout; i++) {   /* another entry's */
		int o = i >= c->p->nin, k = o ? i - c->p->nin : i;
		if ((o ? c->outfile : c->infile)[k] && !isused(c, k, o))
			return dprt_errf(c->err, sizeof c->err, "--%s %s: not an %s of entry %s (see "
			                 "--entry)", o ? "out" : "in", (o ? c->p->out : c->p->in)[k].name,
			                 o ? "output" : "input", c->ent->name);
	}
	for (i = 0; i < c->p->nin && !c->promptfile; i++)   /* with --prompt: zeros */
		if (!c->infile[i] && isused(c, i, 0)) {
			char t[256];
			return dprt_errf(c->err, sizeof c->err, "missing --in %s (%s)",
			                 c->p->in[i].name, iotype(t, sizeof t, &c->p->in[i]));
		}
	return checksteps(c);
}

/* Reads image input i: a u8 [H,W,C] .npy file, or a PNG or JPEG file
 * through the decoder (C = 3); the pixels go to c->img[i]. */
static int
readimage(Cli *c, int i)
{
	static const unsigned char png[4] = {0x89, 'P', 'N', 'G'}, jpg[3] = {0xff, 0xd8, 0xff};
	const dprt_io *io = &c->p->in[i];
	const char *path = c->infile[i];
	dprt_image *im = &c->img[i];
	unsigned char head[6] = {0};
	char a[200];
	int64_t dim[DPRT_MAXRANK];
	int dt, rank;
	void *data;
	FILE *f;
	size_t n;

	if ((f = fopen(path, "rb")) == NULL)
		return dprt_errf(c->err, sizeof c->err, "%s: cannot open: %s", path, strerror(errno));
	n = fread(head, 1, sizeof head, f);
	fclose(f);
	if (n == 6 && memcmp(head, "\x93NUMPY", 6) == 0) {
		if (dprt_npy_load(path, &dt, &rank, dim, &data, c->err, sizeof c->err) < 0)
			return -1;
		im->data = data;
		if (dt != DPRT_U8 || rank != 3 || dim[0] < 1 || dim[1] < 1 || dim[2] != io->dim[2])
			return dprt_errf(c->err, sizeof c->err, "%s: holds %s%s; input %s takes an "
			                 "image u8[H,W,%lld]", path, dprt_dtype_name[dt],
			                 dprt_shape_str(a, sizeof a, rank, dim), io->name,
			                 (long long)io->dim[2]);
		im->h = dim[0], im->w = dim[1], im->c = dim[2];
		return 0;
	}
	if ((n < 4 || memcmp(head, png, 4) != 0) && (n < 3 || memcmp(head, jpg, 3) != 0))
		return dprt_errf(c->err, sizeof c->err, "%s: not a PNG, JPEG or .npy file", path);
	if (!c->decode)
		return dprt_errf(c->err, sizeof c->err, "%s: this program reads no image files "
		                 "(give a .npy)", path);
	if (io->dim[2] != 3)
		return dprt_errf(c->err, sizeof c->err, "%s: input %s takes %lld channels, but "
		                 "image files decode to RGB (3); give a u8[H,W,%lld] .npy", path,
		                 io->name, (long long)io->dim[2], (long long)io->dim[2]);
	return c->decode(path, im, c->err, sizeof c->err);
}

/* Allocates the arena and io buffers and reads the inputs. */
static int
setup(Cli *c)
{
	const dprt_prog *p = c->p;
	char t[256];
	int64_t ne;
	size_t n;
	void *b;
	int i;

	c->arena = alloc64(p->arena_bytes);
	if (!c->arena)
		return dprt_errf(c->err, sizeof c->err, "out of memory (arena of %zu bytes)",
		                 p->arena_bytes);
	for (i = 0; i < p->nin + p->nout; i++) {
		const dprt_io *io = i < p->nin ? &p->in[i] : &p->out[i - p->nin];
		if (i < p->nin && (isimage(io) || istext(io))) {
			c->in[i] = &c->img[i];
			continue;
		}
		if (io->dtype < 0 || io->dtype >= DPRT_NDTYPE || io->rank < 0 ||
		    io->rank > DPRT_MAXRANK || dprt_numel(io->rank, io->dim, &ne) < 0)
			return dprt_errf(c->err, sizeof c->err,
			                 "internal error: bad type for %s", io->name);
		n = dprt_io_bytes(io);
		if (n == 0 && ne > 0)
			return dprt_errf(c->err, sizeof c->err, "%s is too large", io->name);
		b = alloc64(n);
		if (!b)
			return dprt_errf(c->err, sizeof c->err,
			                 "out of memory (%s %s)", io->name, iotype(t, sizeof t, io));
		if (i < p->nin)
			c->in[i] = b;
		else
			c->out[i - p->nin] = b;
	}
	for (i = 0; i < p->nin; i++)
		if (!c->infile[i] && !isused(c, i, 0))
			continue;   /* another entry's */
		else if (!c->infile[i] && !isimage(&p->in[i]) && !istext(&p->in[i]))
			memset(c->in[i], 0, dprt_io_bytes(&p->in[i]));   /* --prompt's generation fills it */
		else if (istext(&p->in[i]) ? readtext(c, i) < 0 : isimage(&p->in[i]) ? readimage(c, i) < 0 :
		    dprt_npy_read(c->infile[i], p->in[i].dtype, p->in[i].rank,
		                  p->in[i].dim, c->in[i], c->err, sizeof c->err) < 0)
			return -1;
	return 0;
}

/* The weights: --weights, else the embedded blob, else the blob file
 * beside the executable. */
static int
loadweights(Cli *c)
{
	const dprt_blob *b = c->p->blob;
	char exe[4096], *slash, *path;
	const char *f;
	ssize_t n;
	int rc;

	if (c->nwfile > 0 || b == NULL || b->data)
		return dprt_weights_load(b, c->wfile, c->nwfile, &c->weights, c->err,
		                         sizeof c->err);
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
	slash = strrchr(exe, '/');
	if (slash == NULL)
		return dprt_errf(c->err, sizeof c->err, "the program was linked without its "
		                 "weights and cannot find its folder: give --weights FILE");
	slash[1] = '\0';
	path = malloc(strlen(exe) + strlen(b->file) + 1);
	if (path == NULL)
		return dprt_errf(c->err, sizeof c->err, "out of memory");
	sprintf(path, "%s%s", exe, b->file);
	f = path;
	rc = dprt_weights_load(b, &f, 1, &c->weights, c->err, sizeof c->err);
	free(path);
	return rc;
}

static int
runonce(Cli *c)
{
	int rc;

	dprt_pool_enter(c->pool);
	rc = (c->ent ? c->ent->run : c->p->run)(c->state, dprt_weights_base(c->weights), c->arena,
	               (const void *const *)c->in, (void *const *)c->out, c->err, sizeof c->err);
	dprt_pool_leave(c->pool);
	return rc;
}

static int
genrun(void *ctx)
{
	return runonce(ctx);
}

/* generate's prefill=ENTRY: one run of that entry. */
static int
genprefill(void *ctx)
{
	Cli *c = ctx;
	const dprt_entry *e = c->ent;
	int rc;

	c->ent = &c->p->entry[c->gen.prefill];
	rc = runonce(c);
	c->ent = e;
	return rc;
}

static int
gentoken(void *ctx, int64_t tok)
{
	(void)ctx;
	printf(" %lld", (long long)tok);
	fflush(stdout);
	return 0;
}

/* --generate IN=OUT,key=value...: checks it against the program and fills
 * c->gen (once the inputs are read: the prompt is in IN's buffer). */
static int
genparse(Cli *c)
{
	int i, o, j, k;

	if (dprt_genspec(c->p, c->genspec, &c->gen, &i, &o, c->err, sizeof c->err) != 0)
		return -1;
	c->gen.ids = c->in[i];
	c->gen.logits = c->out[o];
	for (k = 0; k < c->p->nentry; k++)   /* the entry of the token input runs the loop */
		for (j = 0; j < c->p->entry[k].nin; j++)
			if (c->p->entry[k].in[j] == i)
				c->ent = &c->p->entry[k];
	if (c->gen.prefill >= 0) {   /* the prompt through the prefill entry */
		c->gen.pids = c->in[c->gen.pin];
		c->gen.ppos = c->in[c->gen.pposin];
		c->gen.plogits = c->out[c->gen.plout];
		c->gen.prefill_run = genprefill;
	}
	if (c->promptfile) {   /* the prompt's tokens from a file: any i64 .npy */
		int dt, rank;
		int64_t dim[DPRT_MAXRANK], ne;
		void *data;

		if (dprt_npy_load(c->promptfile, &dt, &rank, dim, &data, c->err, sizeof c->err) != 0)
			return -1;
		c->prompt = data;
		if (dt != DPRT_I64 || dprt_numel(rank, dim, &ne) < 0 || ne < 1)
			return dprt_errf(c->err, sizeof c->err, "--prompt %s: not a non-empty i64 .npy "
			                 "file", c->promptfile);
		if (c->gen.n == 0 || c->gen.n > ne)
			c->gen.n = ne;
		if (c->gen.posin < 0) {
			if (c->gen.n > c->gen.len)
				return dprt_errf(c->err, sizeof c->err, "--prompt %s has %lld tokens; %s "
				                 "takes 1 to %lld", c->promptfile, (long long)c->gen.n,
				                 c->p->in[i].name, (long long)c->gen.len);
			memcpy(c->gen.ids, c->prompt, (size_t)c->gen.n * sizeof *c->prompt);
		}
	}
	if (c->gen.posin >= 0) {
		if (!c->promptfile)
			return dprt_errf(c->err, sizeof c->err, "--generate with pos=%s takes the "
			                 "prompt from --prompt FILE", c->p->in[c->gen.posin].name);
		c->gen.pos = c->in[c->gen.posin];
		c->gen.prompt = c->prompt;
	}
	if (c->gen.n == 0)
		return dprt_errf(c->err, sizeof c->err, "--generate needs prompt=P (the prompt's "
		                 "token count in %s, 1 to %lld)", c->p->in[i].name, (long long)c->gen.len);
	return 0;
}

/* --generate: prints "tokens:" and each token as it comes. */
static int
generate(Cli *c)
{
	const char *cli = c->genspec, *eq = strchr(cli, '=');
	char *full = NULL;
	int64_t n;
	int rc;

	if (c->steps > 1)
		return dprt_errf(c->err, sizeof c->err, "--generate runs its own steps; drop --steps");
	/* keys only: added to the pipeline's generate statement (later keys win) */
	if (c->p->generate && (!eq || dprt_findio(c->p->in, c->p->nin, cli, (size_t)(eq - cli)) < 0)) {
		if ((full = malloc(strlen(c->p->generate) + strlen(cli) + 2)) == NULL)
			return dprt_errf(c->err, sizeof c->err, "out of memory");
		sprintf(full, "%s,%s", c->p->generate, cli);
		c->genspec = full;
	}
	rc = genparse(c);
	c->genspec = cli;
	free(full);
	if (rc != 0)
		return rc;
	printf("tokens:");
	fflush(stdout);
	rc = dprt_generate(&c->gen, genrun, gentoken, c, &n, c->err, sizeof c->err);
	printf("\n");
	return rc;
}

static int
cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The process's peak resident memory in KiB: VmHWM, which starts afresh
 * at exec (getrusage's ru_maxrss keeps a large parent's peak across
 * fork and exec), else ru_maxrss. */
static double
peakrss(void)
{
	struct rusage ru;
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	if (kb >= 0)
		return (double)kb;
	return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss : 0;
}

/* --trace, --profile: runs with each op timed (runtime/trace.c). */
static int
traced(Cli *c)
{
	long i, n = c->profile ? 20 : 1;
	int rc = 0;

	dprt_trace_start();
	for (i = 0; i < n && rc == 0; i++) {
		dprt_trace_mark();
		rc = runonce(c);
	}
	dprt_trace_stop();
	if (rc == 0 && c->trace)
		rc = dprt_trace_write(c->trace, c->p->name, c->err, sizeof c->err);
	if (rc == 0 && c->profile)
		dprt_trace_profile(stdout, n);
	return rc;
}

/* --bench: N timed runs after the first (the warm-up), host to host. */
static int
bench(Cli *c)
{
	double *t, t0, med;
	long i, n;

	n = c->bench;
	t = malloc(sizeof *t * (size_t)n);
	if (!t)
		return dprt_errf(c->err, sizeof c->err, "out of memory (--bench %ld)", n);
	for (i = 0; i < n; i++) {
		t0 = dprt_now();
		if (runonce(c) < 0) {
			free(t);
			return -1;
		}
		t[i] = (dprt_now() - t0) * 1e6;
	}
	qsort(t, (size_t)n, sizeof *t, cmpd);
	med = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
	printf("bench: %ld runs, median %.1f us, min %.1f us, max %.1f us\n", n, med,
	       t[0], t[n - 1]);
	printf("bench: %d threads, %s kernels, peak resident memory %.1f MiB\n",
	       dprt_pool_threads(c->pool), dprt_isa_name(), peakrss() / 1024);
	free(t);
	return 0;
}

/* Element k of x as text. */
static void
elem(char *buf, size_t n, int dtype, const void *x, int64_t k)
{
	switch (dtype) {
	case DPRT_U8: snprintf(buf, n, "%u", ((const uint8_t *)x)[k]); break;
	case DPRT_I8: snprintf(buf, n, "%d", ((const int8_t *)x)[k]); break;
	case DPRT_I16: snprintf(buf, n, "%d", ((const int16_t *)x)[k]); break;
	case DPRT_I32: snprintf(buf, n, "%ld", (long)((const int32_t *)x)[k]); break;
	case DPRT_I64: snprintf(buf, n, "%lld", (long long)((const int64_t *)x)[k]); break;
	case DPRT_F16:
		snprintf(buf, n, "%g", dprt_f16_to_f32(((const uint16_t *)x)[k]));
		break;
	case DPRT_BF16:
		snprintf(buf, n, "%g", dprt_bf16_to_f32(((const uint16_t *)x)[k]));
		break;
	case DPRT_F32: snprintf(buf, n, "%g", ((const float *)x)[k]); break;
	case DPRT_F64: snprintf(buf, n, "%g", ((const double *)x)[k]); break;
	case DPRT_BOOL:
		snprintf(buf, n, "%s", ((const uint8_t *)x)[k] ? "true" : "false");
		break;
	default: snprintf(buf, n, "?"); break;
	}
}

/* One line: "label = [3]" when small, else "logits: f32[1,10] = [0.1, ...]"
 * (every value when full). */
static void
show(const dprt_io *io, const void *x, int full)
{
	char t[256], v[64];
	int64_t n, k, m;

	if (dprt_numel(io->rank, io->dim, &n) < 0)
		n = 0;
	if (n <= NSHOW)
		printf("%s = ", io->name);
	else
		printf("%s: %s = ", io->name, iotype(t, sizeof t, io));
	if (io->rank == 0 && n == 1) {
		elem(v, sizeof v, io->dtype, x, 0);
		printf("%s\n", v);
		return;
	}
	m = n <= NSHOW || full ? n : NHEAD;
	printf("[");
	for (k = 0; k < m; k++) {
		elem(v, sizeof v, io->dtype, x, k);
		printf("%s%s", k ? ", " : "", v);
	}
	printf("%s]\n", m < n ? ", ..." : "");
}

/* Output i as this run made it: a bounded output's leading size is the
 * row count its length output received (formats/ops.md, "Bounded sizes"). */
static dprt_io
outio(const Cli *c, int i)
{
	dprt_io io = c->p->out[i];
	int k = c->p->outlen ? c->p->outlen[i] - 1 : -1;

	if (k >= 0 && k < c->p->nout) {
		int64_t n = *(const int64_t *)c->out[k];
		io.dim[0] = n < 0 ? 0 : n < io.dim[0] ? n : io.dim[0];
	}
	return io;
}

/* Writes every --out to a temporary file, then renames them all, so a
 * failure leaves no output behind; prints the other outputs. */
static int
finish(Cli *c)
{
	const dprt_prog *p = c->p;
	int i;

	for (i = 0; i < p->nout; i++) {
		dprt_io io = outio(c, i);
		if (!c->outfile[i])
			continue;
		c->tmp[i] = malloc(4096);
		if (!c->tmp[i])
			return dprt_errf(c->err, sizeof c->err, "out of memory");
		if (dprt_npy_write_tmp(c->outfile[i], c->tmp[i], 4096, io.dtype,
		                       io.rank, io.dim, c->out[i], c->err,
		                       sizeof c->err) < 0) {
			free(c->tmp[i]);
			c->tmp[i] = NULL;
			return -1;
		}
	}
	for (i = 0; i < p->nout; i++) {
		if (!c->tmp[i])
			continue;
		if (c->tmp[i][0] && rename(c->tmp[i], c->outfile[i]) < 0)
			return dprt_errf(c->err, sizeof c->err, "%s: cannot rename into place",
			                 c->outfile[i]);
		free(c->tmp[i]);
		c->tmp[i] = NULL;
	}
	for (i = 0; i < p->nout; i++) {
		if (c->outfile[i] || !isused(c, i, 1))
			continue;
		if (p->textout && p->textout[i])   /* text: up to its first NUL */
			printf("%s = %.*s\n", p->out[i].name, (int)strnlen(c->out[i],
			       (size_t)p->out[i].dim[0]), (const char *)c->out[i]);
		else {
			dprt_io io = outio(c, i);
			show(&io, c->out[i], c->full);
		}
	}
	return 0;
}

/* The inputs the program reads where they are (dprt_prog's inbuf: a cuda
 * program's page-locked staging) move there, read already: the runs then
 * copy nothing on the host. */
static void
staged(Cli *c)
{
	const dprt_prog *p = c->p;
	void *b;
	int i;

	for (i = 0; p->inbuf && i < p->nin; i++) {
		if (isimage(&p->in[i]) || istext(&p->in[i]) || !(b = p->inbuf(c->state, i)))
			continue;
		memcpy(b, c->in[i], dprt_io_bytes(&p->in[i]));
		free(c->in[i]);
		c->in[i] = b;
		c->staged[i] = 1;
	}
}

static void
cleanup(Cli *c)
{
	int i;

	if (c->inited && c->p->fini)
		c->p->fini(c->state);
	for (i = 0; c->tmp && i < c->p->nout; i++)
		if (c->tmp[i]) {
			unlink(c->tmp[i]);
			free(c->tmp[i]);
		}
	for (i = 0; c->in && i < c->p->nin; i++) {
		if (isimage(&c->p->in[i]) || istext(&c->p->in[i]))
			free((void *)c->img[i].data);
		else if (!c->staged || !c->staged[i])
			free(c->in[i]);
	}
	free(c->img);
	free(c->staged);
	for (i = 0; c->out && i < c->p->nout; i++)
		free(c->out[i]);
	free(c->infile);
	free(c->outfile);
	free(c->in);
	free(c->out);
	free(c->tmp);
	free(c->arena);
	free(c->wfile);
	free(c->stepin);
	free(c->stepio);
	free(c->outfmt);
	free(c->prompt);
	dprt_weights_free(c->weights);
	dprt_pool_destroy(c->pool);
}

/*
 * The generated executable's main: NAME --in NAME=FILE.npy ... [--out
 * NAME=FILE.npy ...] [--bench N] [--help].  Errors go to stderr as
 * "NAME: message"; returns 0, or 1 on any error.
 */
int
dprt_main(const dprt_prog *p, int argc, char **argv)
{
	return dprt_main_image(p, NULL, argc, argv);
}

int
dprt_main_image(const dprt_prog *p, dprt_decode_fn *decode, int argc, char **argv)
{
	Cli c;
	int rc;
	long k;
	size_t nin, nout;
	char (*outname)[4096] = NULL;	/* --out's files of the current step */

	memset(&c, 0, sizeof c);
	c.p = p;
	c.decode = decode;
	nin = p->nin > 0 ? (size_t)p->nin : 1;
	nout = p->nout > 0 ? (size_t)p->nout : 1;
	c.infile = calloc(nin, sizeof *c.infile);
	c.in = calloc(nin, sizeof *c.in);
	c.img = calloc(nin, sizeof *c.img);
	c.staged = calloc(nin, 1);
	c.outfile = calloc(nout, sizeof *c.outfile);
	c.out = calloc(nout, sizeof *c.out);
	c.tmp = calloc(nout, sizeof *c.tmp);
	c.wfile = calloc((size_t)argc + 1, sizeof *c.wfile);
	c.stepin = calloc((size_t)argc + 1, sizeof *c.stepin);
	c.stepio = calloc((size_t)argc + 1, sizeof *c.stepio);
	c.outfmt = calloc(nout, sizeof *c.outfmt);
	c.steps = 1;
	c.ent = p->nentry > 0 ? &p->entry[0] : NULL;
	outname = calloc(nout, sizeof *outname);
	if (!c.stepin || !c.stepio || !c.outfmt || !outname || !c.staged) {
		rc = dprt_errf(c.err, sizeof c.err, "out of memory");
		goto done;
	}
	if (!c.wfile || !c.infile || !c.in || !c.img || !c.outfile || !c.out || !c.tmp) {
		rc = dprt_errf(c.err, sizeof c.err, "out of memory");
		goto done;
	}
	rc = parse(&c, argc, argv);
	if (rc == 1) {
		usage(p, stdout);
		cleanup(&c);
		free(outname);
		return 0;
	}
	if (rc == 0)
		rc = setup(&c);
	if (rc == 0)
		rc = loadweights(&c);
	if (rc == 0)
		rc = dprt_pool_create(&c.pool, c.threads, c.err, sizeof c.err);
	if (rc == 0 && p->prep)
		dprt_pool_prep(c.pool, p->prep, c.arena, dprt_weights_base(c.weights));
	if (rc == 0 && p->reset)   /* the state's initial value; kept over --steps */
		p->reset(c.arena, dprt_weights_base(c.weights));
	if (rc == 0 && p->init) {
		rc = p->init(&c.state, dprt_weights_base(c.weights), c.err, sizeof c.err);
		c.inited = rc == 0;
	} else if (rc == 0) {
		c.inited = 1;
	}
	if (rc == 0)
		staged(&c);
	if (rc == 0 && c.genspec)
		rc = generate(&c);
	for (k = 0; rc == 0 && !c.genspec && k < c.steps; k++) {   /* --steps: one run each */
		if (c.steps > 1 && (rc = stepfiles(&c, k, outname)) == 0)
			printf("step %ld:\n", k + 1);
		if (rc == 0)
			rc = runonce(&c);
		if (rc == 0)
			rc = finish(&c);
	}
	if (rc == 0 && (c.trace || c.profile))
		rc = traced(&c);
	if (rc == 0 && c.bench > 0)
		rc = bench(&c);
done:
	if (rc < 0) {
		fflush(stdout);
		fprintf(stderr, "%s: %s\n", p->name, c.err);
	}
	cleanup(&c);
	free(outname);
	return rc < 0 ? 1 : 0;
}
