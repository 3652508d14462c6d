/* tap.h: the TAP result of the unit test programs that report with a
 * printf format (tests/unit/nn.c, regex.c, runtime.c, ucat.c): ok() prints
 * one numbered result, counted in ntest and nfail; main ends with
 * printf("1..%d\n", ntest) and returns nfail != 0. */
#ifndef TAP_H
#define TAP_H

#include <stdarg.h>
#include <stdio.h>

static int ntest, nfail;

/* Reports one TAP result; returns cond. */
__attribute__((format(printf, 2, 3)))
static int
ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++ntest);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		nfail++;
	return cond;
}

#endif
