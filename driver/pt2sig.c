/* pt2sig.c: devproc dump of a torch.export archive: the model's signature
 * (its inputs and outputs with dtypes and shapes, and how many parameters,
 * buffers and constants it holds) and a histogram of the ATen ops its graph
 * calls, marking those dp-import has no conversion for. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <zip.h>

#include "driver.h"

/* The text of member models/model.json (under the archive's one root
 * folder), or NULL. */
static char *
modeljson(const char *file)
{
	int zerr = 0;
	zip_t *za = zip_open(file, ZIP_RDONLY, &zerr);
	char *buf = NULL;

	if (!za)
		return NULL;
	for (zip_int64_t i = 0; i < zip_get_num_entries(za, 0) && !buf; i++) {
		zip_stat_t st;
		const char *n, *s;
		if (zip_stat_index(za, (zip_uint64_t)i, 0, &st) || !(n = st.name))
			continue;
		s = strchr(n, '/');
		if (!s || strcmp(s, "/models/model.json") != 0 || st.size > (1u << 30))
			continue;
		zip_file_t *zf = zip_fopen_index(za, (zip_uint64_t)i, 0);
		if (!zf || !(buf = malloc(st.size + 1))) {
			if (zf)
				zip_fclose(zf);
			break;
		}
		if (zip_fread(zf, buf, st.size) != (zip_int64_t)st.size) {
			free(buf);
			buf = NULL;
		} else
			buf[st.size] = 0;
		zip_fclose(zf);
	}
	zip_close(za);
	return buf;
}

/* "f32[1,3,224,224]" of tensor value name, into out. */
static void
typeof_value(json_t *tv, const char *name, char *out, size_t n)
{
	json_t *tm = json_object_get(tv, name), *sz = json_object_get(tm, "sizes");
	json_t *dt = json_object_get(tm, "dtype");
	int d = json_is_integer(dt) ? dp_dtype_from_pt2((int)json_integer_value(dt)) : -1;
	size_t k = (size_t)snprintf(out, n, "%s[", d >= 0 ? dp_dtype_name[d] : "?");

	for (size_t i = 0; i < json_array_size(sz) && k < n; i++) {
		json_t *s = json_object_get(json_array_get(sz, i), "as_int");
		k += (size_t)snprintf(out + k, n - k, "%s", i ? "," : "");
		if (k < n)
			k += json_is_integer(s) ? (size_t)snprintf(out + k, n - k, "%lld",
			                                            (long long)json_integer_value(s))
			                        : (size_t)snprintf(out + k, n - k, "?");
	}
	if (k < n)
		snprintf(out + k, n - k, "]");
}

typedef struct Count {
	const char *target;
	int n;
} Count;

static int
bycount(const void *a, const void *b)
{
	const Count *x = a, *y = b;

	return x->n != y->n ? y->n - x->n : strcmp(x->target, y->target);
}

int
pt2_summary(const char *file)
{
	char *text = modeljson(file), *targets = NULL, ty[160];
	json_error_t je;
	json_t *prog, *gm, *sig, *tv, *nodes;
	int np = 0, nb = 0, nc = 0, nun = 0, nkinds = 0;
	Count *c;

	if (!text)
		return 0;   /* not a .pt2 */
	prog = json_loads(text, 0, &je);
	free(text);
	gm = json_object_get(prog, "graph_module");
	sig = json_object_get(gm, "signature");
	tv = json_object_get(json_object_get(gm, "graph"), "tensor_values");
	nodes = json_object_get(json_object_get(gm, "graph"), "nodes");
	if (!prog || !sig || !json_is_array(nodes)) {
		fprintf(stderr, "%s: dump: models/model.json is not a torch.export program\n", file);
		json_decref(prog);
		return 1;
	}
	printf("torch.export program: signature\n");
	json_t *specs = json_object_get(sig, "input_specs");
	for (size_t i = 0; i < json_array_size(specs); i++) {
		json_t *s = json_array_get(specs, i);
		const char *kind = json_object_iter_key(json_object_iter(s));
		json_t *arg = json_object_get(json_object_iter_value(json_object_iter(s)), "arg");
		const char *name = json_string_value(json_object_get(json_object_get(arg, "as_tensor"),
		                                                     "name"));
		if (kind && !strcmp(kind, "user_input")) {
			typeof_value(tv, name ? name : "", ty, sizeof ty);
			printf("  input  %-24s %s\n", name ? name : "(not a tensor)", ty);
		} else if (kind && !strcmp(kind, "parameter"))
			np++;
		else if (kind && !strcmp(kind, "buffer"))
			nb++;
		else
			nc++;
	}
	specs = json_object_get(sig, "output_specs");
	for (size_t i = 0; i < json_array_size(specs); i++) {
		json_t *s = json_array_get(specs, i);
		json_t *arg = json_object_get(json_object_iter_value(json_object_iter(s)), "arg");
		const char *name = json_string_value(json_object_get(json_object_get(arg, "as_tensor"),
		                                                     "name"));
		typeof_value(tv, name ? name : "", ty, sizeof ty);
		printf("  output %-24s %s\n", name ? name : "(not a tensor)", ty);
	}
	printf("  (%d parameters, %d buffers, %d other constants)\n", np, nb, nc);

	c = calloc(json_array_size(nodes) + 1, sizeof *c);
	for (size_t i = 0; c && i < json_array_size(nodes); i++) {
		const char *t = json_string_value(json_object_get(json_array_get(nodes, i), "target"));
		int k;
		if (!t)
			continue;
		if (!strncmp(t, "torch.ops.", 10))
			t += 10;
		for (k = 0; k < nkinds && strcmp(c[k].target, t); k++)
			;
		if (k == nkinds)
			c[nkinds++].target = t;
		c[k].n++;
	}
	if (c)
		qsort(c, (size_t)nkinds, sizeof *c, bycount);
	targets = import_targets(findroot("devproc"));
	printf("ops: %zu nodes, %d targets\n", json_array_size(nodes), nkinds);
	for (int k = 0; c && k < nkinds; k++) {
		const char *p = targets;
		size_t tl = strlen(c[k].target);
		int known = 0;
		for (; p && *p && !known; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "")
			known = !strncmp(p, c[k].target, tl) && p[tl] == '\t';
		nun += !known;
		if (known)
			printf("  %6d  %s\n", c[k].n, c[k].target);
		else
			printf("  %6d  %-50s UNSUPPORTED\n", c[k].n, c[k].target);
	}
	if (nun)
		printf("%d target%s dp-import does not convert (devproc ops --aten lists those it "
		       "does)\n", nun, nun == 1 ? "" : "s");
	free(targets);
	free(c);
	json_decref(prog);
	return 0;
}
