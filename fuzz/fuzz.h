/* help.h: --help for the libFuzzer harnesses, which would otherwise fuzz on
 * it (libFuzzer's flags start with one dash; its own help is -help=1). */
#ifndef FUZZ_HELP_H
#define FUZZ_HELP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* When the command line holds --help or -h: prints the usage of the harness
 * of what and exits 0. */
static void
fuzz_help(int argc, char **argv, const char *what)
{
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf("usage: %s [-FLAG=VALUE...] [CORPUS_DIR... | INPUT...]\n"
			       "libFuzzer harness of %s: fuzzes into the first CORPUS_DIR\n"
			       "(seeded from the others: fuzz/seeds/), or runs each INPUT once.\n"
			       "Run it from the repository root; `make fuzz` runs every harness\n"
			       "(fuzz/README.md); -help=1 lists libFuzzer's flags.\n", name, what);
			exit(0);
		}
}

#endif
