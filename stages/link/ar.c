/* ar.c: libNAME.a written by dp-link itself, byte for byte what `ar qcsD`
 * writes for the same members: GNU format, a "/" index of the members'
 * defined global symbols (global, weak and unique; common ones too),
 * a "//" table of the names longer than 15 bytes, zero dates and ids,
 * mode 644.  The runtime's members are copied out of its archives as they
 * are (mapped, never extracted), and no archiver runs: binutils' ar loads
 * every linker plugin it finds to read symbols (LLVMgold and libLLVM where
 * clang is installed), which cost more than all the rest of the archiving
 * (0.14 s of CPU a library against 0.03).  Inputs this reader does not
 * know (not ELF64 little-endian, thin or BSD archives, 4 GiB or more in
 * all) make ar_write answer 1: dp-link then runs ar as before. */
#include <ar.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "link.h"

/* A mapped input file. */
typedef struct Map {
	unsigned char *p;
	size_t n;
} Map;

/* One member of the archive being written, and its symbols. */
typedef struct Mem {
	const char *name;
	const unsigned char *p;
	size_t n;
	size_t sym0, nsym;     /* its symbols: sym[sym0 .. sym0+nsym) */
} Mem;

typedef struct Ar {
	Arena *a;
	Map *map;
	int nmap, capmap;
	Mem *mem;
	int nmem, capmem;
	const char **sym;
	size_t nsym, capsym;
} Ar;

static void *
grow(void *p, int *cap, size_t size)
{
	*cap = *cap ? 2 * *cap : 64;
	if ((p = realloc(p, (size_t)*cap * size)) == NULL)
		dp_die("out of memory (%d archive entries)", *cap);
	return p;
}

/* Maps path (read-only); -1 with err when it cannot be read. */
static int
mapfile(Ar *ar, const char *path, Map *m, Err *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY);

	m->p = NULL, m->n = 0;
	if (fd < 0 || fstat(fd, &st) != 0) {
		dp_seterr(err, "cannot read %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	m->n = (size_t)st.st_size;
	if (m->n > 0) {
		m->p = mmap(NULL, m->n, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m->p == MAP_FAILED) {
			m->p = NULL;
			close(fd);
			dp_seterr(err, "cannot map %s: %s", path, strerror(errno));
			return -1;
		}
	}
	close(fd);
	if (ar->nmap == ar->capmap)
		ar->map = grow(ar->map, &ar->capmap, sizeof *ar->map);
	ar->map[ar->nmap++] = *m;
	return 0;
}

static void
addsym(Ar *ar, const char *name)
{
	if (ar->nsym == ar->capsym) {
		ar->capsym = ar->capsym ? 2 * ar->capsym : 1024;
		ar->sym = realloc(ar->sym, ar->capsym * sizeof *ar->sym);
		if (ar->sym == NULL)
			dp_die("out of memory (%zu archive symbols)", ar->capsym);
	}
	ar->sym[ar->nsym++] = name;
}

/* The symbols ar indexes of the ELF object p[0..n): those of .symtab (in
 * its order) that are global, weak or unique and not undefined.  1 when
 * the object is not one this reader knows. */
static int
elfsyms(Ar *ar, const unsigned char *p, size_t n)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, st;
	size_t i, j, nent;

	if (n < sizeof eh || memcmp(p, ELFMAG, SELFMAG) != 0 || p[EI_CLASS] != ELFCLASS64 ||
	    p[EI_DATA] != ELFDATA2LSB)
		return 1;
	memcpy(&eh, p, sizeof eh);
	if (eh.e_shentsize != sizeof sh || eh.e_shnum == 0 || eh.e_shoff > n ||
	    (n - eh.e_shoff) / sizeof sh < eh.e_shnum)
		return 1;
	for (i = 0; i < eh.e_shnum; i++) {
		memcpy(&sh, p + eh.e_shoff + i * sizeof sh, sizeof sh);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		if (sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_offset > n ||
		    sh.sh_size > n - sh.sh_offset || sh.sh_link >= eh.e_shnum)
			return 1;
		memcpy(&st, p + eh.e_shoff + sh.sh_link * sizeof st, sizeof st);
		if (st.sh_offset > n || st.sh_size > n - st.sh_offset || st.sh_size == 0 ||
		    p[st.sh_offset + st.sh_size - 1] != '\0')
			return 1;
		nent = sh.sh_size / sizeof(Elf64_Sym);
		for (j = 1; j < nent; j++) {
			Elf64_Sym s;
			int bind;
			memcpy(&s, p + sh.sh_offset + j * sizeof s, sizeof s);
			bind = ELF64_ST_BIND(s.st_info);
			if ((bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE) ||
			    s.st_shndx == SHN_UNDEF)
				continue;
			if (s.st_name >= st.sh_size)
				return 1;
			addsym(ar, (const char *)p + st.sh_offset + s.st_name);
		}
		return 0;   /* one symbol table per object */
	}
	return 0;
}

/* Adds member name with bytes p[0..n) and its symbols; 1: not an ELF
 * object this reader knows. */
static int
addmem(Ar *ar, const char *name, const unsigned char *p, size_t n)
{
	Mem *m;
	size_t s0 = ar->nsym;

	if (elfsyms(ar, p, n) != 0)
		return 1;
	if (ar->nmem == ar->capmem)
		ar->mem = grow(ar->mem, &ar->capmem, sizeof *ar->mem);
	m = &ar->mem[ar->nmem++];
	m->name = name, m->p = p, m->n = n, m->sym0 = s0, m->nsym = ar->nsym - s0;
	return 0;
}

/* A decimal header field of w bytes, or -1 (as for "/" and "//" too). */
static long long
field(const unsigned char *h, int w)
{
	long long v = 0;
	int i;

	for (i = 0; i < w && h[i] == ' '; i++)
		;
	if (i == w || h[i] < '0' || h[i] > '9')
		return -1;
	for (; i < w && h[i] >= '0' && h[i] <= '9'; i++)
		v = v * 10 + (h[i] - '0');
	for (; i < w; i++)
		if (h[i] != ' ')
			return -1;
	return v;
}

/* Adds every member of the archive mapped at m, in its order; 1 when it
 * is not a GNU archive of ELF objects. */
static int
addarchive(Ar *ar, const Map *m)
{
	const unsigned char *p = m->p, *names = NULL;
	size_t off = SARMAG, nnames = 0;

	if (m->n < SARMAG || memcmp(p, ARMAG, SARMAG) != 0)
		return 1;
	while (off < m->n) {
		const unsigned char *h = p + off;
		long long size;
		char *name;
		size_t k;

		if (m->n - off < 60 || h[58] != '`' || h[59] != '\n')
			return 1;
		size = field(h + 48, 10);
		off += 60;
		if (size < 0 || (unsigned long long)size > m->n - off)
			return 1;
		if (memcmp(h, "/               ", 16) == 0) {
			;   /* the index: made anew */
		} else if (memcmp(h, "//              ", 16) == 0) {
			names = p + off, nnames = (size_t)size;
		} else if (h[0] == '/') {   /* "/N": a long name */
			long long at = field(h + 1, 15);
			if (at < 0 || names == NULL || (size_t)at >= nnames)
				return 1;
			for (k = (size_t)at; k < nnames && names[k] != '/' && names[k] != '\n'; k++)
				;
			if (k == nnames || names[k] != '/')
				return 1;
			name = dp_strndup(ar->a, (const char *)names + at, k - (size_t)at);
			if (addmem(ar, name, p + off, (size_t)size) != 0)
				return 1;
		} else {                    /* "name/" */
			for (k = 0; k < 16 && h[k] != '/'; k++)
				;
			if (k == 0 || k == 16)
				return 1;
			name = dp_strndup(ar->a, (const char *)h, k);
			if (addmem(ar, name, p + off, (size_t)size) != 0)
				return 1;
		}
		off += (size_t)size + ((size_t)size & 1);
	}
	return 0;
}

/* A 60-byte member header: name, then date, ids and mode as ar -D writes
 * them (empty for the name table: all == NULL), size. */
static void
header(FILE *f, const char *name, int all, const char *mode, unsigned long long size)
{
	char h[128];   /* 60 used */

	if (all)
		snprintf(h, sizeof h, "%-16s%-12s%-6s%-6s%-8s%-10llu`\n", name, "0", "0", "0", mode,
		         size);
	else
		snprintf(h, sizeof h, "%-16s%-12s%-6s%-6s%-8s%-10llu`\n", name, "", "", "", "", size);
	fwrite(h, 1, 60, f);
}

static void
be32(FILE *f, unsigned long v)
{
	unsigned char b[4] = {v >> 24 & 255, v >> 16 & 255, v >> 8 & 255, v & 255};

	fwrite(b, 1, 4, f);
}

/* Writes it all; 1 when it would need ar's 64-bit index. */
static int
writear(Ar *ar, const char *path, Err *err)
{
	size_t raw = 4 + 4 * ar->nsym, mapsize, nlong = 0, i, k;
	unsigned long long off, *at = dp_alloc(ar->a, (size_t)ar->nmem + 1, sizeof *at);
	FILE *f;
	int j;

	for (i = 0; i < ar->nsym; i++)
		raw += strlen(ar->sym[i]) + 1;
	mapsize = raw + (raw & 1);   /* padded with a NUL */
	for (j = 0; j < ar->nmem; j++)
		if (strlen(ar->mem[j].name) > 15)
			nlong += strlen(ar->mem[j].name) + 2;
	off = SARMAG + 60 + mapsize + (nlong ? 60 + nlong + (nlong & 1) : 0);
	for (j = 0; j < ar->nmem; j++) {
		at[j] = off;
		off += 60 + ar->mem[j].n + (ar->mem[j].n & 1);
	}
	if (off > 0xffffffffULL)
		return 1;
	if ((f = fopen(path, "wb")) == NULL) {
		dp_seterr(err, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	fwrite(ARMAG, 1, SARMAG, f);
	header(f, "/", 1, "0", mapsize);
	be32(f, (unsigned long)ar->nsym);
	for (j = 0; j < ar->nmem; j++)
		for (k = 0; k < ar->mem[j].nsym; k++)
			be32(f, (unsigned long)at[j]);
	for (i = 0; i < ar->nsym; i++)
		fwrite(ar->sym[i], 1, strlen(ar->sym[i]) + 1, f);
	if (raw & 1)
		fputc('\0', f);
	if (nlong) {
		header(f, "//", 0, NULL, nlong + (nlong & 1));
		for (j = 0; j < ar->nmem; j++)
			if (strlen(ar->mem[j].name) > 15)
				fprintf(f, "%s/\n", ar->mem[j].name);
		if (nlong & 1)
			fputc('\n', f);
	}
	for (nlong = 0, j = 0; j < ar->nmem; j++) {
		const Mem *m = &ar->mem[j];
		char name[32];
		if (strlen(m->name) > 15) {
			snprintf(name, sizeof name, "/%zu", nlong);
			nlong += strlen(m->name) + 2;
		} else {
			snprintf(name, sizeof name, "%s/", m->name);
		}
		header(f, name, 1, "644", m->n);
		fwrite(m->p, 1, m->n, f);
		if (m->n & 1)
			fputc('\n', f);
	}
	if (ferror(f) | (fclose(f) != 0)) {
		dp_seterr(err, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int
ar_write(Arena *a, const char *path, const char *const *obj, int nobj,
         const char *const *lib, int nlib, Err *err)
{
	Ar ar = {0};
	Map m;
	int i, rc = 0;

	ar.a = a;
	for (i = 0; rc == 0 && i < nobj; i++) {
		const char *b = strrchr(obj[i], '/');
		if ((rc = mapfile(&ar, obj[i], &m, err)) == 0)
			rc = addmem(&ar, b ? b + 1 : obj[i], m.p, m.n);
	}
	for (i = 0; rc == 0 && i < nlib; i++)
		if ((rc = mapfile(&ar, lib[i], &m, err)) == 0)
			rc = addarchive(&ar, &m);
	if (rc == 0)
		rc = writear(&ar, path, err);
	for (i = 0; i < ar.nmap; i++)
		if (ar.map[i].p)
			munmap(ar.map[i].p, ar.map[i].n);
	free(ar.map);
	free(ar.mem);
	free(ar.sym);
	return rc;
}
