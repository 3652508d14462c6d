/* entry.c: the entry points of a program (formats/dp.md, "Entries"): which
 * entry each op belongs to, from the input ops' entry attributes. */
#include <string.h>

#include "dpir.h"

/* The index (1..) of entry name s among names[0..*n-1], added when new. */
static int
entryof(const char **names, int *n, const char *s)
{
	int i;

	for (i = 0; i < *n; i++)
		if (strcmp(names[i], s) == 0)
			return i + 1;
	names[(*n)++] = s;
	return *n;
}

int
dp_entries(const Fn *fn, int *e, const char **names, Err *err)
{
	const char **nm = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *nm);
	int *ve = dp_alloc(fn->arena, (size_t)fn->nval + 1, sizeof *ve);
	int i, k, n = 0, plain = -1;

	for (i = 0; i < fn->nop; i++) {   /* forward: from inputs and operands */
		const Op *op = &fn->op[i];
		const char *s = op->kind == Oinput ? dp_gets(op, "entry") : NULL;

		e[i] = 0;
		if (op->kind == Oinput && s)
			e[i] = entryof(nm, &n, s);
		else if (op->kind == Oinput && plain < 0)
			plain = i;
		for (k = 0; k < op->nin; k++) {
			int w = ve[op->in[k]];
			if (w && e[i] && w != e[i]) {
				dp_seterr(err, "op %d (%s) reads values of two entries ('%s' and '%s')", i,
				          dp_op_name[op->kind], nm[e[i] - 1], nm[w - 1]);
				return -1;
			}
			if (w)
				e[i] = w;
		}
		for (k = 0; k < op->nout; k++)
			ve[op->out[k]] = e[i];
	}
	if (n == 0)
		return 0;
	if (plain >= 0) {
		dp_seterr(err, "input '%s' belongs to no entry (the program has entries)",
		          dp_gets(&fn->op[plain], "name"));
		return -1;
	}
	for (i = fn->nop - 1; i >= 0; i--) {   /* backward: ops of no entry, by their readers */
		const Op *op = &fn->op[i];
		int want = 0, j;

		if (e[i] || op->kind == Oconst)
			continue;
		for (j = i + 1; j < fn->nop; j++)
			for (k = 0; k < fn->op[j].nin; k++) {
				int r;
				if (fn->val[fn->op[j].in[k]].def != i || (r = e[j]) == 0)
					continue;
				if (want && r != want) {
					dp_seterr(err, "op %d (%s) is read by two entries ('%s' and '%s')", i,
					          dp_op_name[op->kind], nm[want - 1], nm[r - 1]);
					return -1;
				}
				want = r;
			}
		e[i] = want;
	}
	for (i = 0; i < fn->nout; i++) {
		int d = fn->val[fn->out[i].val].def;
		if (e[d] == 0) {
			dp_seterr(err, "output '%s' belongs to no entry (it reads no entry's input)",
			          fn->out[i].name);
			return -1;
		}
	}
	if (names)
		memcpy(names, nm, (size_t)n * sizeof *names);
	return n;
}
