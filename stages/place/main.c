/* place: gives every op a device by the rules of a target mapping file and
 * records which rule decided it. */
#include <stdlib.h>
#include <string.h>

#include "dpir.h"
#include "args.h"

static const char usage[] =
	"usage: dp-place IN.dpir -t MAPPING -o OUT.dpir\n"
	"Places every op of IN on a device by MAPPING's rules (formats/target.md):\n"
	"the last matching 'op' rule, else the last matching 'class' rule, else\n"
	"'default'; an op with no kernel on that device stays on the cpu.  Graph\n"
	"inputs are on the cpu; a const goes where its first user runs (a state\n"
	"const, on cuda where every reader but its assigns runs on cuda, else on\n"
	"the cpu; its assigns with it).  Each op records the rule that placed it\n"
	"(devproc dump shows it).  IN must not be partitioned yet.  OUT is written\n"
	"only when its bytes change.  Errors: `IN: place: message` (for the mapping\n"
	"`MAPPING[:line:col]: place: message`), exit status 1, no output.\n";

/* Places fn's ops; consts follow their first user. */
static void
place(Fn *fn, const Target *t, const char *tname)
{
	char why[256];
	for (int i = 0; i < fn->nop; i++) {
		Op *op = &fn->op[i];
		if (op->kind == Oinput) {
			op->dev = DEV_CPU;
			op->rule = "graph inputs arrive on the cpu";
		} else if (op->kind == Oconst)
			continue;
		else {
			op->dev = (uint8_t)dp_target_place(t, tname, op->kind, why, sizeof why);
			op->rule = dp_strdup(fn->arena, why);
		}
	}
	for (int i = 0; i < fn->nop; i++) {
		Op *op = &fn->op[i];
		if (op->kind != Oconst)
			continue;
		op->dev = DEV_CPU;
		op->rule = "const with no user: cpu";
		int user = -1;
		for (int j = i + 1; j < fn->nop && user < 0; j++)
			for (int k = 0; k < fn->op[j].nin; k++)
				if (fn->op[j].in[k] == op->out[0])
					user = j;
		if (dp_geti(op, "state", 0)) {   /* the device of its readers, assigns aside */
			int cuda = 0, cpu = 0;
			for (int j = i + 1; j < fn->nop; j++)
				for (int k = 0; k < fn->op[j].nin; k++)
					if (fn->op[j].in[k] == op->out[0] && fn->op[j].kind != Oassign) {
						cuda += fn->op[j].dev == DEV_CUDA;
						cpu += fn->op[j].dev != DEV_CUDA;
					}
			op->dev = cuda && !cpu ? DEV_CUDA : DEV_CPU;
			op->rule = op->dev == DEV_CUDA ? "state: cuda, where all its readers run, kept "
			                                 "there from run to run" : "state: cpu";
			for (int j = i + 1; j < fn->nop; j++)   /* its assigns: where it lives */
				if (fn->op[j].kind == Oassign && fn->op[j].in[0] == op->out[0]) {
					fn->op[j].dev = op->dev;
					fn->op[j].rule = op->dev == DEV_CUDA ? "assign: where its state lives "
					                                       "(cuda)" : "assign: where its "
					                                       "state lives (cpu)";
				}
		} else if (user >= 0) {
			op->dev = fn->op[user].dev;
			snprintf(why, sizeof why, "const follows its first user (%s, op %d)",
			         dp_op_name[fn->op[user].kind], user);
			op->rule = dp_strdup(fn->arena, why);
		}
	}
	for (int i = 0; i < fn->nop; i++)
		for (int k = 0; k < fn->op[i].nout; k++)
			fn->val[fn->op[i].out[k]].t.dev = fn->op[i].dev;
}

int
main(int argc, char **argv)
{
	const char *in, *out, *map;
	stage_args(argc, argv, usage, &in, &out, 1, &map);
	Err err;
	Target t;
	Fn *fn;
	if (dp_target_read(map, &t, &err)) {
		dp_report(map, "place", &err);
		return 1;
	}
	if (dp_read(in, &fn, &err)) {
		dp_report(in, "place", &err);
		return 1;
	}
	if (fn->npart) {
		fprintf(stderr, "%s: place: the IR is already partitioned (stage %s)\n", in, fn->stage);
		return 1;
	}
	const char *tname = strrchr(map, '/') ? strrchr(map, '/') + 1 : map;
	place(fn, &t, tname);
	fn->stage = "place";
	if (dp_write(out, fn, &err)) {
		dp_report(in, "place", &err);
		return 1;
	}
	dp_free(fn);
	return 0;
}
