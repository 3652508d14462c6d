/* verify.c: the IR verifier: SSA, attributes, shape/dtype rules, devices. */
#include <stdlib.h>
#include <string.h>

#include "dpir.h"

/* Sets err for op i, at its text position when it has one. */
static int
bad(Err *err, const Fn *fn, int i, const char *msg)
{
	const Op *op = &fn->op[i];
	if (op->line)
		dp_seterr_at(err, op->line, op->col, "%s", msg);
	else
		dp_seterr(err, "op %d (%s): %s", i, dp_op_name[op->kind], msg);
	return -1;
}

/* 1 when s is a C identifier (names become symbols of the generated C). */
static int
isident(const char *s)
{
	if (!s || !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
		return 0;
	for (; *s; s++)
		if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9')))
			return 0;
	return 1;
}

int
dp_verify(const Fn *fn, Err *err)
{
	if (!isident(fn->name)) {
		dp_seterr(err, "the function's name '%.100s' is not a C identifier", fn->name ? fn->name : "");
		return -1;
	}
	if (!isident(fn->stage)) {
		dp_seterr(err, "the stage name '%.100s' is not an identifier", fn->stage ? fn->stage : "");
		return -1;
	}
	char msg[600], x[160], y[160];
	int rc = -1;
	int *defby = calloc(fn->nval ? fn->nval : 1, sizeof *defby); /* op index + 1 */
	if (!defby) {
		dp_seterr(err, "out of memory");
		return -1;
	}
	for (int i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		if (op->kind < 0 || op->kind >= DP_NOP) {
			dp_seterr(err, "op %d: unknown op kind %d", i, op->kind);
			goto out;
		}
		for (int k = 0; k < op->nin; k++) {
			int v = op->in[k];
			if (v < 0 || v >= fn->nval) {
				snprintf(msg, sizeof msg, "operand %d refers to %%%d, which does not exist", k, v);
				bad(err, fn, i, msg);
				goto out;
			}
			if (!defby[v]) {
				snprintf(msg, sizeof msg, "operand %%%d is used before it is defined", v);
				bad(err, fn, i, msg);
				goto out;
			}
		}
		int nout = dp_op_nout[op->kind];
		if (op->nout != nout) {
			snprintf(msg, sizeof msg, "has %d results, expected %d", op->nout, nout);
			bad(err, fn, i, msg);
			goto out;
		}
		for (int k = 0; k < op->nout; k++) {
			int v = op->out[k];
			if (v < 0 || v >= fn->nval) {
				snprintf(msg, sizeof msg, "result %d refers to %%%d, which does not exist", k, v);
				bad(err, fn, i, msg);
				goto out;
			}
			if (defby[v]) {
				snprintf(msg, sizeof msg, "%%%d is defined twice (first by op %d)", v, defby[v] - 1);
				bad(err, fn, i, msg);
				goto out;
			}
			if (fn->val[v].def != i) {
				snprintf(msg, sizeof msg, "%%%d does not record op %d as its definition", v, i);
				bad(err, fn, i, msg);
				goto out;
			}
			defby[v] = i + 1;
		}
		if (op->dev >= DEV_N) {
			bad(err, fn, i, "unknown device");
			goto out;
		}
		if (!(dp_op_devs[op->kind] & (1 << op->dev))) {
			snprintf(msg, sizeof msg, "cannot run on %s", dp_dev_name[op->dev]);
			bad(err, fn, i, msg);
			goto out;
		}
		if (op->kind == Oinput && op->dev != DEV_CPU) {
			bad(err, fn, i, "graph inputs arrive on the cpu");
			goto out;
		}
		for (int k = 0; k < op->nin; k++) {
			const Type *t = &fn->val[op->in[k]].t;
			if (fn->npart && op->kind != Ocopy && t->dev != op->dev) {
				snprintf(msg, sizeof msg, "operand %%%d is on %s but the op runs on %s (a copy is missing)",
				         op->in[k], dp_dev_name[t->dev], dp_dev_name[op->dev]);
				bad(err, fn, i, msg);
				goto out;
			}
		}
		if (op->part >= 0) {
			if (op->part >= fn->npart) {
				snprintf(msg, sizeof msg, "partition %d does not exist", op->part);
				bad(err, fn, i, msg);
				goto out;
			}
			if (fn->part[op->part].dev != op->dev) {
				snprintf(msg, sizeof msg, "runs on %s but its partition %d is on %s",
				         dp_dev_name[op->dev], op->part, dp_dev_name[fn->part[op->part].dev]);
				bad(err, fn, i, msg);
				goto out;
			}
		} else if (fn->npart) {
			bad(err, fn, i, "is in no partition");
			goto out;
		}
		Type want[DP_MAXOUT];
		Err e2;
		if (dp_rule(fn, op, want, &e2)) {
			bad(err, fn, i, e2.msg);
			goto out;
		}
		for (int k = 0; k < op->nout && op->kind != Oinput && op->kind != Oconst; k++) {
			const Type *got = &fn->val[op->out[k]].t;
			if (!dp_type_eq(got, &want[k])) {
				snprintf(msg, sizeof msg, "result%s is declared %s but the op gives %s",
				         k ? " 1" : "", dp_type_str(got, 1, x, sizeof x),
				         dp_type_str(&want[k], 1, y, sizeof y));
				bad(err, fn, i, msg);
				goto out;
			}
		}
	}
	for (int v = 0; v < fn->nval; v++)
		if (!defby[v]) {
			dp_seterr(err, "%%%d is never defined", v);
			goto out;
		}
	if (fn->nout == 0) {
		dp_seterr(err, "the function has no outputs");
		goto out;
	}
	for (int k = 0; k < fn->nout; k++) {
		const Port *p = &fn->out[k];
		if (p->val < 0 || p->val >= fn->nval) {
			dp_seterr(err, "output '%s' refers to %%%d, which does not exist", p->name, p->val);
			goto out;
		}
		if (!p->name[0]) {
			dp_seterr(err, "output %d has an empty name", k);
			goto out;
		}
		if (!isident(p->name)) {
			dp_seterr(err, "output name '%.100s' is not a C identifier", p->name);
			goto out;
		}
		if (dp_isdyn(&fn->val[p->val].t)) {
			dp_seterr(err, "output '%s' is an image of unknown size; outputs have static "
			          "shapes (resize it)", p->name);
			goto out;
		}
		if (fn->npart && fn->val[p->val].t.dev != DEV_CPU) {
			dp_seterr(err, "output '%s' is on %s; outputs leave on the cpu (a copy is missing)",
			          p->name, dp_dev_name[fn->val[p->val].t.dev]);
			goto out;
		}
		for (int j = 0; j < k; j++)
			if (strcmp(fn->out[j].name, p->name) == 0) {
				dp_seterr(err, "output '%s' is named twice", p->name);
				goto out;
			}
	}
	if (dp_bound_ports(fn, err))
		goto out;
	for (int i = 0; i < fn->nop; i++) {
		if (fn->op[i].kind != Oinput)
			continue;
		if (!isident(dp_gets(&fn->op[i], "name"))) {
			snprintf(msg, sizeof msg, "input name '%.100s' is not a C identifier",
			         dp_gets(&fn->op[i], "name"));
			bad(err, fn, i, msg);
			goto out;
		}
		for (int j = 0; j < i; j++)
			if (fn->op[j].kind == Oinput &&
			    strcmp(dp_gets(&fn->op[i], "name"), dp_gets(&fn->op[j], "name")) == 0) {
				snprintf(msg, sizeof msg, "input '%s' is declared twice", dp_gets(&fn->op[i], "name"));
				bad(err, fn, i, msg);
				goto out;
			}
	}
	if (dp_entries(fn, dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof(int)), NULL, err) < 0)
		goto out;   /* entry points: every op in one (formats/dp.md, "Entries") */
	rc = 0;
out:
	free(defby);
	return rc;
}
