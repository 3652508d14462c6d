/* verify: checks any DPIR (or text IR) file and writes a stamp.  The same
 * check runs inside every stage on read and write; this is the standalone
 * tool and the Ninja validation edge. */
#include <stdlib.h>
#include <string.h>

#include "dpir.h"
#include "args.h"

static const char usage[] =
	"usage: dp-verify IN.dpir [-o STAMP]\n"
	"Checks SSA, attributes, shape/dtype rules and device legality of IN (DPIR,\n"
	"or text IR when it does not start with the DPIR magic).  On success writes\n"
	"STAMP (when given) and exits 0; on failure prints 'IN: verify: message'\n"
	"(IN:line:col for text) and exits 1.\n";

int
main(int argc, char **argv)
{
	const char *in, *out;
	stage_args(argc, argv, usage, &in, &out, 0, NULL);
	char *buf;
	size_t len;
	Err err;
	Fn *fn = NULL;
	if (dp_slurp(in, &buf, &len, &err)) {
		dp_report(in, "verify", &err);
		return 1;
	}
	int text = len < 2 || memcmp(buf, "\x95\xa4", 2) != 0;
	int rc = text ? dp_parse_raw(buf, len, &fn, &err) : dp_decode(buf, len, &fn, &err);
	if (!rc)
		rc = dp_verify(fn, &err);
	if (rc) {
		free(buf);
		dp_report(in, "verify", &err);
		return 1;
	}
	char hex[17], stamp[64];
	dp_hash_hex(dp_hash(buf, len, DP_HASH_INIT), hex);
	free(buf);
	snprintf(stamp, sizeof stamp, "verified %s\n", hex);
	if (out && dp_write_file(out, stamp, strlen(stamp), &err)) {
		dp_report(out, "verify", &err);
		return 1;
	}
	dp_free(fn);
	return 0;
}
