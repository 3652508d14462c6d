/* dump.c: devproc dump (any artifact as text) and devproc parse (text IR to DPIR). */
#include <stdlib.h>
#include <string.h>

#include "driver.h"

int
cmd_dump(int argc, char **argv)
{
	if (argc != 1 || argv[0][0] == '-') {
		fprintf(stderr, "usage: devproc dump FILE\n");
		return argc == 1 && !strcmp(argv[0], "--help") ? 0 : 1;
	}
	const char *file = argv[0];
	char *buf;
	size_t len;
	Err err;
	if (dp_slurp(file, &buf, &len, &err)) {
		dp_report(file, "dump", &err);
		return 1;
	}
	Fn *fn;
	int rc = dp_decode(buf, len, &fn, &err);
	free(buf);
	if (rc || dp_verify(fn, &err)) {
		dp_report(file, "dump", &err);
		return 1;
	}
	dp_print(stdout, fn);
	dp_free(fn);
	return 0;
}

int
cmd_parse(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	int raw = 0;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--no-verify"))
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
