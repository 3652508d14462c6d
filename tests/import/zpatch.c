/* zpatch.c: test helper: copies a zip of STORED entries, replacing byte
 * strings with strings of the same length, and fixes the CRC-32s.
 * usage: zpatch IN OUT FROM TO [FROM TO ...]  (plain C, no libraries) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t
crc32(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffff;
	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320 : c >> 1;
	}
	return ~c;
}

static uint32_t
get(const unsigned char *p, int n)
{
	uint32_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void
put4(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void
die(const char *msg)
{
	fprintf(stderr, "zpatch: %s\n", msg);
	exit(2);
}

int
main(int argc, char **argv)
{
	if (argc < 3 || argc % 2 == 0)
		die("usage: zpatch IN OUT FROM TO [FROM TO ...]");
	FILE *f = fopen(argv[1], "rb");
	if (!f)
		die("cannot open input");
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc((size_t)n);
	if (!b || fread(b, 1, (size_t)n, f) != (size_t)n)
		die("cannot read input");
	fclose(f);

	int hits = 0;
	for (int a = 3; a < argc; a += 2) {
		size_t l = strlen(argv[a]);
		if (strlen(argv[a + 1]) != l)
			die("FROM and TO must have the same length");
		for (long i = 0; i + (long)l <= n; i++)
			if (memcmp(b + i, argv[a], l) == 0) {
				memcpy(b + i, argv[a + 1], l);
				hits++;
			}
	}
	if (!hits)
		die("no string to replace was found");

	long e = n - 22;
	while (e >= 0 && get(b + e, 4) != 0x06054b50)
		e--;
	if (e < 0)
		die("no end of central directory");
	uint32_t cnt = get(b + e + 10, 2), cd = get(b + e + 16, 4);
	for (uint32_t i = 0; i < cnt; i++) {
		unsigned char *c = b + cd;
		if (get(c, 4) != 0x02014b50)
			die("bad central directory entry");
		if (get(c + 10, 2) != 0)
			die("entry is not STORED");
		uint32_t size = get(c + 24, 4), lo = get(c + 42, 4);
		unsigned char *l = b + lo;
		uint32_t flags = get(l + 6, 2);
		unsigned char *data = l + 30 + get(l + 26, 2) + get(l + 28, 2);
		uint32_t crc = crc32(data, size);
		put4(c + 16, crc);
		if (get(l + 14, 4))
			put4(l + 14, crc);
		if (flags & 8) {
			unsigned char *dd = data + size;
			put4(get(dd, 4) == 0x08074b50 ? dd + 4 : dd, crc);
		}
		cd += 46 + get(c + 28, 2) + get(c + 30, 2) + get(c + 32, 2);
	}
	f = fopen(argv[2], "wb");
	if (!f || fwrite(b, 1, (size_t)n, f) != (size_t)n || fclose(f))
		die("cannot write output");
	return 0;
}
