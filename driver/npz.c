/* npz.c: .npz archives (numpy's savez/savez_compressed: a zip of .npy
 * members, stored or deflated) read through libzip, each member decoded by
 * the runtime's .npy reader.  Used by devproc tensor and bin/npycmp. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "dprt.h"
#include "npz.h"

__attribute__((format(printf, 3, 4))) static int
npzerr(char *err, size_t errn, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errn, fmt, ap);
	va_end(ap);
	return -1;
}

int
npz_isnpz(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char h[4] = { 0 };
	if (!f)
		return 0;
	size_t n = fread(h, 1, 4, f);
	fclose(f);
	return n == 4 && !memcmp(h, "PK\3\4", 4);
}

void
npz_free(Npz *z)
{
	for (int i = 0; i < z->n; i++) {
		free(z->m[i].name);
		free(z->m[i].data);
	}
	free(z->m);
	z->m = NULL;
	z->n = 0;
}

int
npz_read(const char *path, Npz *z, char *err, size_t errn)
{
	int zerr = 0;
	memset(z, 0, sizeof *z);
	zip_t *za = zip_open(path, ZIP_RDONLY, &zerr);
	if (!za) {
		zip_error_t ze;
		zip_error_init_with_code(&ze, zerr);
		npzerr(err, errn, "%s: not a readable .npz (zip) file: %s", path, zip_error_strerror(&ze));
		zip_error_fini(&ze);
		return -1;
	}
	zip_int64_t nent = zip_get_num_entries(za, 0);
	z->m = calloc(nent > 0 ? (size_t)nent : 1, sizeof *z->m);
	if (!z->m) {
		zip_close(za);
		return npzerr(err, errn, "%s: out of memory", path);
	}
	for (zip_int64_t i = 0; i < nent; i++) {
		zip_stat_t st;
		if (zip_stat_index(za, (zip_uint64_t)i, 0, &st) || !(st.valid & ZIP_STAT_NAME) ||
		    !(st.valid & ZIP_STAT_SIZE)) {
			npzerr(err, errn, "%s: member %lld: cannot read its entry", path, (long long)i);
			goto fail;
		}
		size_t nl = strlen(st.name);
		if (nl && st.name[nl - 1] == '/')
			continue;   /* a folder entry */
		if (st.size > ((zip_uint64_t)1 << 40)) {
			npzerr(err, errn, "%s: member %s: %llu bytes is too large", path, st.name,
			       (unsigned long long)st.size);
			goto fail;
		}
		char *buf = malloc(st.size ? (size_t)st.size : 1);
		zip_file_t *zf = buf ? zip_fopen_index(za, (zip_uint64_t)i, 0) : NULL;
		zip_int64_t got = zf ? zip_fread(zf, buf, st.size) : -1;
		if (zf)
			zip_fclose(zf);
		if (got < 0 || (zip_uint64_t)got != st.size) {
			free(buf);
			npzerr(err, errn, "%s: member %s: %s", path, st.name,
			       zf ? "cannot read (corrupt or unsupported compression)" : "cannot open");
			goto fail;
		}
		NpzMember *m = &z->m[z->n];
		m->name = malloc(nl + 1);
		char full[1024];
		snprintf(full, sizeof full, "%s:%s", path, st.name);
		if (!m->name || dprt_npy_load_mem(buf, (size_t)st.size, full, &m->dtype, &m->rank,
		                                  m->dim, &m->data, err, errn) < 0) {
			if (!m->name)
				npzerr(err, errn, "%s: out of memory", path);
			free(m->name);
			m->name = NULL;
			free(buf);
			goto fail;
		}
		free(buf);
		memcpy(m->name, st.name, nl + 1);
		if (nl > 4 && !strcmp(m->name + nl - 4, ".npy"))
			m->name[nl - 4] = 0;   /* numpy names members "x.npy"; np.load calls it x */
		z->n++;
	}
	zip_close(za);
	return 0;
fail:
	zip_close(za);
	npz_free(z);
	return -1;
}

const NpzMember *
npz_find(const Npz *z, const char *name)
{
	size_t n = strlen(name);
	if (n > 4 && !strcmp(name + n - 4, ".npy"))
		n -= 4;
	for (int i = 0; i < z->n; i++)
		if (strlen(z->m[i].name) == n && !strncmp(z->m[i].name, name, n))
			return &z->m[i];
	return NULL;
}
