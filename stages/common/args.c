/* args.c: the command line of the stages that read one IR file and write
 * one file (args.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

void
stage_args(int argc, char **argv, const char *usage, const char **in, const char **out,
           int needout, const char **map)
{
	*in = *out = NULL;
	if (map)
		*map = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			exit(0);
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			*out = argv[++i];
		else if (map && !strcmp(argv[i], "-t") && i + 1 < argc)
			*map = argv[++i];
		else if (!*in && argv[i][0] != '-')
			*in = argv[i];
		else
			goto bad;
	}
	if (*in && (*out || !needout) && (!map || *map))
		return;
bad:
	fputs(usage, stderr);
	exit(1);
}
