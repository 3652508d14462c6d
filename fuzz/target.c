/* target.c: libFuzzer harness of the target mapping reader
 * (dp_target_parse): any text gives a mapping or a positioned error; a
 * mapping places every op kind on a device it declares. */
#include <stdint.h>
#include <string.h>

#include "dpir.h"
#include "fuzz.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_help(*argc, *argv, "the target mapping reader");
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Target t;
	Err err;
	char why[256];
	if (dp_target_parse((const char *)data, size, &t, &err))
		return 0;
	for (int k = 0; k < DP_NOP; k++) {
		int dev = dp_target_place(&t, "fuzz", k, why, sizeof why);
		if (dev < 0 || dev >= DEV_N || !(t.devs & (1 << dev)) || !(dp_op_devs[k] & (1 << dev)))
			dp_die("%s placed on device %d: %s", dp_op_name[k], dev, why);
	}
	dp_target_tune(&t, "gemm_tile", NULL);
	return 0;
}
