/* args.h: the command line of the stages that read one IR file and write
 * one file (verify, place, partition). */
#ifndef ARGS_H
#define ARGS_H

/* Reads argv: the operand IN, "-o OUT" and, where map is not NULL,
 * "-t MAPPING".  --help or -h prints usage on stdout and exits 0; an
 * unknown option or a second operand, or a missing IN (OUT where needout,
 * MAPPING where asked for) prints usage on stderr and exits 1.  What is
 * not given is NULL. */
void stage_args(int argc, char **argv, const char *usage, const char **in, const char **out,
                int needout, const char **map);

#endif
