/* dump.c: devproc dump (any artifact as text: DPIR, weight blobs, target
 * mappings, archives...) and devproc parse (text IR to DPIR). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include "driver.h"

static const char dump_usage[] = "usage: devproc dump [--dot] [--ir X.dpir] FILE\n";

int
file_hash(const char *path, uint64_t *h, int64_t *size, Err *err)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		dp_seterr(err, "cannot open: %s", strerror(errno));
		return -1;
	}
	static char buf[1 << 16];
	size_t n;
	*h = DP_HASH_INIT;
	*size = 0;
	/* a weight blob of 1.2 or later: the data hash of its header */
	n = fread(buf, 1, 64, f);
	if (n == 64 && !memcmp(buf, "DPWB", 4) && buf[4] == 1 && buf[5] == 0 &&
	    (buf[6] >= 2 || buf[7])) {
		struct stat st;
		*h = 0;
		for (int i = 7; i >= 0; i--)
			*h = *h << 8 | (unsigned char)buf[32 + i];
		int bad = fstat(fileno(f), &st) != 0;
		fclose(f);
		if (bad) {
			dp_seterr(err, "cannot stat: %s", strerror(errno));
			return -1;
		}
		*size = (int64_t)st.st_size;
		return 0;
	}
	*h = dp_hash(buf, n, *h);
	*size = (int64_t)n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
		*h = dp_hash(buf, n, *h);
		*size += (int64_t)n;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		dp_seterr(err, "read error");
		return -1;
	}
	return 0;
}

static uint64_t
le(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Decodes and verifies DPIR (binary, or text IR when text is set). */
static Fn *
readir(const char *buf, size_t len, int text, Err *err)
{
	Fn *fn;
	int rc = text ? dp_parse(buf, len, &fn, err) : dp_decode(buf, len, &fn, err);
	if (rc)
		return NULL;
	if (!text && dp_verify(fn, err)) {
		dp_free(fn);
		return NULL;
	}
	return fn;
}

/* ---- weight blobs (formats/weights.md) ---- */

typedef struct Tensor {
	int64_t off, nbytes;
	const char *hash;
	int op;                 /* first const op pointing at it */
	int nuse;               /* const ops pointing at it */
} Tensor;

static int
byoff(const void *a, const void *b)
{
	const Tensor *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* The tensors of fn's const ops, one per distinct offset, sorted. */
static Tensor *
tensors(const Fn *fn, int *nt)
{
	Tensor *t = calloc((size_t)fn->nop + 1, sizeof *t);
	if (!t)
		dp_die("out of memory");
	int n = 0;
	for (int i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		if (op->kind != Oconst)
			continue;
		int64_t off = dp_geti(op, "offset", -1);
		int k;
		for (k = 0; k < n && t[k].off != off; k++)
			;
		if (k == n)
			t[n++] = (Tensor){ off, dp_geti(op, "nbytes", 0), dp_gets(op, "hash"), i, 0 };
		t[k].nuse++;
	}
	qsort(t, (size_t)n, sizeof *t, byoff);
	*nt = n;
	return t;
}

/* Finds the IR describing the blob: --ir, else a 1.import.dpir beside it. */
static Fn *
blobir(const char *file, const char *irpath, char *used, size_t n)
{
	char sib[PATH_MAX];
	if (!irpath) {
		const char *s = strrchr(file, '/');
		snprintf(sib, sizeof sib, "%.*s1.import.dpir", s ? (int)(s - file + 1) : 0, file);
		if (access(sib, R_OK))
			return NULL;
		irpath = sib;
	}
	Fn *fn;
	Err err;
	if (dp_read(irpath, &fn, &err)) {
		dp_report(irpath, "dump", &err);
		return NULL;
	}
	snprintf(used, n, "%s", irpath);
	return fn;
}

static int
dumpblob(const char *file, const char *irpath)
{
	int fd = open(file, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "%s: dump: cannot open: %s\n", file, strerror(errno));
		return 1;
	}
	size_t size = (size_t)st.st_size;
	const unsigned char *p = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	close(fd);
	if (size && p == MAP_FAILED) {
		fprintf(stderr, "%s: dump: cannot map: %s\n", file, strerror(errno));
		return 1;
	}
	if (size < 64) {
		fprintf(stderr, "%s: dump: a weight blob of %zu bytes (the header alone is 64)\n", file, size);
		return 1;
	}
	uint64_t count = le(p + 8, 4), res1 = le(p + 12, 4), fsize = le(p + 16, 8);
	uint64_t first = le(p + 24, 8), res2 = 0, minor = le(p + 6, 2);
	/* 1.2 hashes with the weight hash, 1.1 and 1.0 with FNV-1a */
	int fast = minor >= 2;
	uint64_t dhash = le(p + 32, 8);
	uint64_t dwant = fast ? dp_whash(p + 64, size - 64) : dp_hash(p + 64, size - 64, DP_HASH_INIT);
	for (int i = minor >= 1 ? 40 : 32; i < 64; i++)   /* 1.1 keeps the data's hash at 32 */
		res2 |= p[i];
	char whash[17];   /* the hash the IR gives its blob: of the data from 1.2, else of the file */
	if (fast)
		dp_hash_hex(dwant, whash);
	else
		dp_hash_hex(dp_hash(p, size, DP_HASH_INIT), whash);
	int bad = 0;
	printf("%s: DevProc weight blob (formats/weights.md)\n", file);
	printf("  magic         DPWB\n");
	printf("  version       %u.%u%s\n", (unsigned)le(p + 4, 2), (unsigned)le(p + 6, 2),
	       le(p + 4, 2) == 1 ? "" : "   (this dump reads 1.x)");
	printf("  tensors       %" PRIu64 " distinct\n", count);
	printf("  file size     %" PRIu64 " bytes in the header, %zu on disk%s\n", fsize, size,
	       fsize == size ? "" : "   MISMATCH");
	printf("  first tensor  at offset %" PRIu64 "%s\n", first, first == 64 ? "" : "   (want 64)");
	printf("  reserved      %s\n", res1 || res2 ? "NOT ZERO" : "zero");
	if (minor >= 1) {
		char dh[17];
		dp_hash_hex(dhash, dh);
		printf("  data hash     %s (%s of the bytes after the header)%s\n", dh,
		       fast ? "the weight hash" : "FNV-1a 64", dhash == dwant ? "" : "   MISMATCH");
		bad |= dhash != dwant;
	}
	printf("  data          %zu bytes after the header, aligned to 64 (%s)\n", size - 64,
	       size % 64 ? "file size NOT a multiple of 64" : "file size a multiple of 64");
	if (!fast)
		printf("  hash          %s (FNV-1a 64 of the whole file)\n", whash);
	bad |= fsize != size || first != 64 || res1 || res2 || size % 64 || le(p + 4, 2) != 1;

	char used[PATH_MAX];
	Fn *fn = blobir(file, irpath, used, sizeof used);
	if (!fn) {
		if (irpath)
			bad = 1;
		else
			printf("(no IR given or beside it: pass --ir X.dpir to list the tensors)\n");
	} else {
		int nt;
		Tensor *t = tensors(fn, &nt);
		int64_t total = 0, aligned = 0, nconst = 0;
		printf("tensors (from %s):\n", used);
		printf("  %-10s %-10s %-10s %-16s  %-22s %s\n", "offset", "bytes", "aligned", "hash",
		       "type", "check");
		for (int i = 0; i < nt; i++) {
			char h[17] = "-", ty[64];
			int ok = t[i].off >= 0 && t[i].off % 64 == 0 && t[i].nbytes >= 0 &&
			         (uint64_t)(t[i].off + t[i].nbytes) <= size;
			if (ok)
				dp_hash_hex(fast ? dp_whash(p + t[i].off, (size_t)t[i].nbytes)
				                 : dp_hash(p + t[i].off, (size_t)t[i].nbytes, DP_HASH_INIT), h);
			ok = ok && t[i].hash && !strcmp(h, t[i].hash);
			const Op *op = &fn->op[t[i].op];
			Type tt = fn->val[op->out[0]].t;
			dp_type_str(&tt, 0, ty, sizeof ty);
			int64_t al = (t[i].nbytes + 63) / 64 * 64;
			printf("  %-10" PRId64 " %-10" PRId64 " %-10" PRId64 " %-16s  %-22s %s", t[i].off,
			       t[i].nbytes, al, h, ty, ok ? "ok" : "HASH OR BOUNDS MISMATCH");
			if (t[i].nuse > 1)
				printf(" (%d consts share it)", t[i].nuse);
			putchar('\n');
			bad |= !ok;
			total += t[i].nbytes;
			aligned += al;
			nconst += t[i].nuse;
		}
		printf("  total: %" PRId64 " bytes of tensor data in %d tensors (%" PRId64
		       " const ops); %" PRId64 " with 64-byte alignment; %" PRId64 " of padding\n",
		       total, nt, nconst, aligned, (int64_t)size - 64 - total);
		if (nt != (int)count || aligned != (int64_t)size - 64) {
			printf("  the IR's tensors do not account for the blob (%d tensors, %" PRId64
			       " aligned bytes; the blob: %" PRIu64 ", %zu)\n", nt, aligned, count, size - 64);
			bad = 1;
		}
		if (fn->weights) {
			int same = fn->whash && !strcmp(fn->whash, whash) && fn->wsize == (int64_t)size;
			printf("  the IR names \"%s\", hash %s, %" PRId64 " bytes: %s\n", fn->weights,
			       fn->whash ? fn->whash : "-", fn->wsize, same ? "this blob" : "NOT this blob");
			bad |= !same;
		}
		free(t);
		dp_free(fn);
	}
	munmap((void *)p, size);
	return bad;
}

/* ---- target mappings (formats/target.md) ---- */

static int
dumpmap(const char *file)
{
	Target t;
	Err err;
	if (dp_target_read(file, &t, &err)) {
		dp_report(file, "dump", &err);
		return 1;
	}
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	printf("%s: target mapping '%s' (formats/target.md)\n", file, t.name);
	printf("devices:");
	for (int d = 0; d < DEV_N; d++)
		if (t.devs & (1 << d))
			printf(" %s%s%s", dp_dev_name[d], d == DEV_CUDA ? " " : "",
			       d == DEV_CUDA ? t.arch : "");
	printf("\nrules, in file order:\n");
	for (int i = 0; i < t.nrule; i++) {
		const Rule *r = &t.rule[i];
		printf("  line %-4d %-8s %-14s %s\n", r->line,
		       r->what == R_OP ? "op" : r->what == R_CLASS ? "class" : "default",
		       r->what == R_OP ? dp_op_name[r->key] : r->what == R_CLASS ? dp_class_name[r->key] : "",
		       dp_dev_name[r->dev]);
	}
	printf("tunables:%s\n", t.ntune ? "" : " none");
	for (int i = 0; i < t.ntune; i++)
		printf("  %s = %s\n", t.tune[i].key, t.tune[i].val);
	printf("placement of each op (the last matching op rule, else the last class rule,\n"
	       "else the default; an op with no kernel there stays on the cpu):\n");
	for (int k = 0; k < DP_NOP; k++) {
		char why[256];
		const char *dev;
		if (k == Oinput)
			dev = "cpu", snprintf(why, sizeof why, "graph inputs arrive on the cpu");
		else if (k == Oconst)
			dev = "-", snprintf(why, sizeof why, "follows its first user");
		else
			dev = dp_dev_name[dp_target_place(&t, base, k, why, sizeof why)];
		printf("  %-14s %-12s %-5s %s\n", dp_op_name[k], dp_class_name[dp_op_class[k]], dev, why);
	}
	return 0;
}

/* ---- archives and other files ---- */

static int
dumpar(const char *file, const unsigned char *p, size_t len)
{
	printf("%s: ar archive, %zu bytes\n", file, len);
	printf("  %-28s %10s  %s\n", "member", "bytes", "hash");
	const char *names = NULL;
	size_t nnames = 0, off = 8;
	int n = 0;
	while (off + 60 <= len) {
		const unsigned char *h = p + off;
		char name[256], sz[11];
		memcpy(sz, h + 48, 10);
		sz[10] = 0;
		size_t size = (size_t)strtoull(sz, NULL, 10), data = off + 60;
		if (memcmp(h + 58, "`\n", 2) || data + size > len) {
			printf("  (malformed member header at %zu)\n", off);
			return 1;
		}
		int k = 16;
		while (k > 0 && h[k - 1] == ' ')
			k--;
		snprintf(name, sizeof name, "%.*s", k, (const char *)h);
		if (!strcmp(name, "//")) {
			names = (const char *)p + data;
			nnames = size;
		} else if (!strcmp(name, "/") || !strcmp(name, "/SYM64/")) {
			printf("  %-28s %10zu\n", "(symbol table)", size);
		} else {
			if (name[0] == '/' && names) {   /* GNU long name: "/OFFSET" */
				size_t o = (size_t)strtoull(name + 1, NULL, 10), e = o;
				while (e < nnames && names[e] != '/' && names[e] != '\n')
					e++;
				snprintf(name, sizeof name, "%.*s", (int)(e - o), o < nnames ? names + o : "");
			} else if (k && name[k - 1] == '/')
				name[k - 1] = 0;
			char hx[17];
			dp_hash_hex(dp_hash(p + data, size, DP_HASH_INIT), hx);
			printf("  %-28s %10zu  %s\n", name, size, hx);
			n++;
		}
		off = data + size + (size & 1);
	}
	printf("  %d members\n", n);
	return 0;
}

/* A zip archive (a .pt2, an .npz): each member's size, stored size and
 * compression; an .npz's tensors after them. */
static int
dumpzip(const char *file)
{
	int zerr = 0, npz = 1;
	zip_t *za = zip_open(file, ZIP_RDONLY, &zerr);
	if (!za) {
		fprintf(stderr, "%s: dump: not a readable zip archive (libzip error %d)\n", file, zerr);
		return 1;
	}
	zip_int64_t n = zip_get_num_entries(za, 0);
	printf("%s: zip archive, %lld members\n", file, (long long)n);
	printf("  %-56s %12s %12s  %s\n", "member", "bytes", "stored", "method");
	for (zip_int64_t i = 0; i < n; i++) {
		zip_stat_t st;
		if (zip_stat_index(za, (zip_uint64_t)i, 0, &st)) {
			printf("  (member %lld unreadable)\n", (long long)i);
			npz = 0;
			continue;
		}
		size_t nl = strlen(st.name);
		npz &= nl > 4 && !strcmp(st.name + nl - 4, ".npy");
		printf("  %-56s %12llu %12llu  %s\n", st.name, (unsigned long long)st.size,
		       (unsigned long long)st.comp_size,
		       st.comp_method == ZIP_CM_STORE ? "stored" : st.comp_method == ZIP_CM_DEFLATE ?
		       "deflated" : "other");
	}
	zip_close(za);
	if (npz && n > 0) {
		printf("every member is an .npy file: an .npz; its tensors:\n");
		return tensor_show(file, 0);
	}
	return 0;
}

/* Text: no control bytes but tab, line breaks and form feed. */
static int
istext(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];
		if ((c < 0x20 && !strchr("\t\n\r\f", c)) || c == 0x7f || c == 0)
			return 0;
	}
	return 1;
}

/* The first word of the first line that is not blank or a comment. */
static int
firstword(const char *p, const char *w)
{
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (*p == '#') {
			while (*p && *p != '\n')
				p++;
			continue;
		}
		size_t n = strlen(w);
		return !strncmp(p, w, n) && (p[n] == ' ' || p[n] == '\t');
	}
	return 0;
}

int
cmd_dump(int argc, char **argv)
{
	const char *file = NULL, *irpath = NULL;
	int dot = 0;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(dump_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--dot"))
			dot = 1;
		else if (!strcmp(argv[i], "--ir") && i + 1 < argc)
			irpath = argv[++i];
		else if (!file && argv[i][0] != '-')
			file = argv[i];
		else {
			fputs(dump_usage, stderr);
			return 1;
		}
	}
	if (!file) {
		fputs(dump_usage, stderr);
		return 1;
	}
	char head[8];
	size_t nhead = 0;
	FILE *f = fopen(file, "rb");
	if (f) {
		nhead = fread(head, 1, sizeof head, f);
		fclose(f);
	}
	if (nhead >= 4 && !memcmp(head, "DPWB", 4)) {   /* blobs are mapped, not read whole */
		if (dot) {
			fprintf(stderr, "%s: dump: --dot draws DPIR, not a weight blob\n", file);
			return 1;
		}
		return dumpblob(file, irpath);
	}
	char *buf;
	size_t len;
	Err err;
	if (dp_slurp(file, &buf, &len, &err)) {
		dp_report(file, "dump", &err);
		return 1;
	}
	int text = istext(buf, len);
	int dpir = len >= 6 && !memcmp(buf, "\x95\xa4" "DPIR", 6);
	if (dpir || (text && firstword(buf, "dpir"))) {
		Fn *fn = readir(buf, len, !dpir, &err);
		free(buf);
		if (!fn) {
			dp_report(file, "dump", &err);
			return 1;
		}
		if (dot)
			dot_print(stdout, fn);
		else
			dp_print(stdout, fn);
		dp_free(fn);
		return 0;
	}
	int rc = 0;
	if (dot) {
		fprintf(stderr, "%s: dump: --dot draws DPIR (a .dpir file or text IR)\n", file);
		rc = 1;
	} else if (text && firstword(buf, "target"))
		rc = dumpmap(file);
	else if (len >= 8 && !memcmp(buf, "!<arch>\n", 8))
		rc = dumpar(file, (const unsigned char *)buf, len);
	else if (len >= 4 && !memcmp(buf, "PK\3\4", 4))
		rc = dumpzip(file) || pt2_summary(file);
	else if (len >= 6 && !memcmp(buf, "\x93NUMPY", 6))
		rc = tensor_show(file, 0);
	else if (text)
		fwrite(buf, 1, len, stdout);   /* .c, .cu, .h, stamps, .dp: already text */
	else {
		char hx[17];
		const char *kind = "data";
		if (len >= 18 && !memcmp(buf, "\x7f" "ELF", 4)) {
			unsigned t = (unsigned)le((const unsigned char *)buf + 16, 2);
			kind = t == 1 ? "ELF relocatable object" : t == 2 ? "ELF executable"
			     : t == 3 ? "ELF shared object or position-independent executable" : "ELF file";
		}
		dp_hash_hex(dp_hash(buf, len, DP_HASH_INIT), hx);
		printf("%s: %s, %zu bytes, hash %s\n", file, kind, len, hx);
	}
	free(buf);
	return rc;
}

int
cmd_parse(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	int raw = 0;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: devproc parse [--no-verify] TEXT -o OUT.dpir\n"
			       "Parses a text IR file (formats/text.md) into DPIR, verified unless\n"
			       "--no-verify; OUT is written only when its bytes change.\n");
			return 0;
		} else if (!strcmp(argv[i], "--no-verify"))
			raw = 1;
		else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (!in && argv[i][0] != '-')
			in = argv[i];
		else {
			fprintf(stderr, "usage: devproc parse [--no-verify] TEXT -o OUT.dpir\n");
			return 1;
		}
	}
	if (!in || !out) {
		fprintf(stderr, "usage: devproc parse [--no-verify] TEXT -o OUT.dpir\n");
		return 1;
	}
	char *buf;
	size_t len;
	Err err;
	Fn *fn;
	if (dp_slurp(in, &buf, &len, &err)) {
		dp_report(in, "parse", &err);
		return 1;
	}
	int rc = raw ? dp_parse_raw(buf, len, &fn, &err) : dp_parse(buf, len, &fn, &err);
	free(buf);
	if (rc) {
		dp_report(in, "parse", &err);
		return 1;
	}
	if (raw) {   /* for testing the verifier: encode whatever was written */
		char *b;
		size_t n;
		rc = dp_encode(fn, &b, &n, &err) || dp_write_file(out, b, n, &err);
		if (!rc)
			free(b);
		dp_free(fn);
		if (rc)
			dp_report(out, "parse", &err);
		return rc ? 1 : 0;
	}
	if (dp_write(out, fn, &err)) {
		dp_report(out, "parse", &err);
		return 1;
	}
	dp_free(fn);
	return 0;
}
