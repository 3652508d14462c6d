/* npzx.c: test helper: unpacks an uncompressed .npz (a zip of STORED .npy
 * entries, as numpy.savez writes it, zip64 local headers included) into a
 * folder.  usage: npzx FILE.npz DIR  (plain C, no libraries) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char *b;
static size_t n;

static void
die(const char *msg)
{
	fprintf(stderr, "npzx: %s\n", msg);
	exit(2);
}

static uint64_t
get(size_t at, int len)
{
	uint64_t v = 0;

	if (at > n || (size_t)len > n - at)
		die("truncated archive");
	for (int i = len - 1; i >= 0; i--)
		v = v << 8 | b[at + (size_t)i];
	return v;
}

int
main(int argc, char **argv)
{
	if (argc != 3)
		die("usage: npzx FILE.npz DIR");
	FILE *f = fopen(argv[1], "rb");
	if (!f)
		die("cannot open the archive");
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	if (len < 22)
		die("not a zip archive");
	n = (size_t)len;
	b = malloc(n);
	if (!b || fread(b, 1, n, f) != n)
		die("cannot read the archive");
	fclose(f);

	size_t eocd = n - 22;   /* the end record, before a comment of up to 64 KiB */
	while (get(eocd, 4) != 0x06054b50) {
		if (eocd == 0 || n - eocd > 22 + 65535)
			die("no end of central directory");
		eocd--;
	}
	uint64_t count = get(eocd + 10, 2), at = get(eocd + 16, 4);
	for (uint64_t k = 0; k < count; k++) {
		if (get(at, 4) != 0x02014b50)
			die("bad central directory entry");
		uint64_t method = get(at + 10, 2), csize = get(at + 20, 4), usize = get(at + 24, 4);
		uint64_t nlen = get(at + 28, 2), elen = get(at + 30, 2), clen = get(at + 32, 2);
		uint64_t off = get(at + 42, 4);
		/* zip64: the real sizes and offset in extra field 0x0001 */
		for (uint64_t e = at + 46 + nlen; e + 4 <= at + 46 + nlen + elen;) {
			uint64_t id = get(e, 2), sz = get(e + 2, 2), p = e + 4;
			if (id == 1) {
				if (usize == 0xffffffff)
					usize = get(p, 8), p += 8;
				if (csize == 0xffffffff)
					csize = get(p, 8), p += 8;
				if (off == 0xffffffff)
					off = get(p, 8);
			}
			e += 4 + sz;
		}
		if (method != 0 || csize != usize)
			die("an entry is compressed (write the .npz with numpy.savez, not savez_compressed)");
		char name[256];
		if (nlen == 0 || nlen >= sizeof name)
			die("bad entry name");
		memcpy(name, b + at + 46, (size_t)nlen);
		name[nlen] = 0;
		if (strchr(name, '/') || name[0] == '.')
			die("an entry name is a path");
		if (get(off, 4) != 0x04034b50)
			die("bad local header");
		uint64_t data = off + 30 + get(off + 26, 2) + get(off + 28, 2);
		if (data > n || usize > n - data)
			die("an entry lies outside the archive");
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", argv[2], name);
		FILE *o = fopen(path, "wb");
		if (!o || fwrite(b + data, 1, (size_t)usize, o) != usize || fclose(o) != 0)
			die("cannot write an entry");
		at += 46 + nlen + elen + clen;
	}
	free(b);
	return 0;
}
