/* partition: splits the placed schedule into device partitions, inserting an
 * explicit copy at every device boundary (and only there). */
#include <stdlib.h>
#include <string.h>

#include "dpir.h"
#include "args.h"

static const char usage[] =
	"usage: dp-partition IN.dpir -o OUT.dpir\n"
	"Groups the placed ops of IN, in schedule order, into partitions: maximal\n"
	"runs of ops on one device.  Where an op reads a value made on another\n"
	"device a copy op is inserted (one per value and device), and graph outputs\n"
	"made off the cpu are copied back to it.  A copy to the cpu is also the\n"
	"synchronization point: the host waits there for the device's work before\n"
	"it (its rule says so); a copy to a device is ordered on that device's\n"
	"stream after the work before it.  The host runs the partitions in order.\n"
	"IN must be placed (dp-place) and not partitioned yet.  OUT is written only\n"
	"when its bytes change.  Errors: `IN: partition: message`, exit status 1,\n"
	"no output.\n";

typedef struct P {
	const Fn *src;
	Fn *dst;
	int *map;          /* src value -> dst value */
	int *copy[DEV_N];  /* src value -> its copy on a device, or -1 */
	int cur;           /* current partition, -1 before the first */
} P;

/* Puts the new op i of dst into a partition, opening one when the device
 * changes. */
static void
assign(P *p, int i)
{
	Op *op = &p->dst->op[i];
	if (p->cur < 0 || p->dst->part[p->cur].dev != op->dev)
		p->cur = dp_addpart(p->dst, op->dev);
	p->dst->op[i].part = p->cur;
}

/* The value to use for src value v on device dev, copying it there once. */
static int
onto(P *p, int v, int dev, Err *err)
{
	int have = p->map[v];
	if (p->dst->val[have].t.dev == dev)
		return have;
	if (p->copy[dev][v] >= 0)
		return p->copy[dev][v];
	int c = dp_addop(p->dst, Ocopy, &have, 1);
	dp_sets(p->dst, c, "to", dp_dev_name[dev]);
	p->dst->op[c].dev = (uint8_t)dev;
	/* a copy to the cpu is where the host synchronizes with the device */
	p->dst->op[c].rule = dev == DEV_CPU ?
		"copy at a device boundary; the host waits for the device here" :
		"copy at a device boundary; ordered after the device's earlier work";
	if (dp_infer(p->dst, c, err))
		return -1;
	assign(p, c);
	return p->copy[dev][v] = p->dst->op[c].out[0];
}

/* The copies to the cpu of the outputs of entry e (all outputs when the
 * program has no entries) into port[], at the end of its ops. */
static int
outputs(P *p, const int *ent, int e, int *port, Err *err)
{
	const Fn *s = p->src;
	for (int k = 0; k < s->nout; k++)
		if (ent[s->val[s->out[k].val].def] == e && (port[k] = onto(p, s->out[k].val, DEV_CPU, err)) < 0)
			return -1;
	return 0;
}

/* Partitions in schedule order.  A program with entry points (formats/dp.md,
 * "Entries") has each entry's ops in partitions of their own, its outputs
 * copied back at its end and copies of shared values made again in each:
 * an entry runs only its own partitions. */
static int
partition(P *p, Err *err)
{
	const Fn *s = p->src;
	int *ent = dp_alloc(p->dst->arena, (size_t)s->nop + 1, sizeof *ent), cure = 0;
	int *port = dp_alloc(p->dst->arena, (size_t)s->nout + 1, sizeof *port);
	if (dp_entries(s, ent, NULL, err) < 0)
		return -1;
	for (int i = 0; i < s->nop; i++) {
		const Op *op = &s->op[i];
		int in[4096];   /* the IR reader's limit (formats/dpir.c) */
		if (ent[i] && ent[i] != cure) {   /* the next entry's ops */
			if (cure && outputs(p, ent, cure, port, err) < 0)
				return -1;
			for (int d = 0; d < DEV_N; d++)
				for (int v = 0; v < s->nval; v++)
					p->copy[d][v] = -1;
			p->cur = -1;
			cure = ent[i];
		}
		if (op->nin > 4096)
			dp_die("op with %d operands", op->nin);
		for (int k = 0; k < op->nin; k++)
			if ((in[k] = onto(p, op->in[k], op->dev, err)) < 0)
				return -1;
		int j = dp_addop(p->dst, op->kind, in, op->nin);
		Op *n = &p->dst->op[j];
		n->dev = op->dev;
		n->rule = op->rule ? dp_strdup(p->dst->arena, op->rule) : NULL;
		for (int k = 0; k < op->nattr; k++) {
			const Attr *a = &op->attr[k];
			switch (a->kind) {
			case A_INT: dp_seti(p->dst, j, a->key, a->i); break;
			case A_FLOAT: dp_setf(p->dst, j, a->key, a->f); break;
			case A_STR: dp_sets(p->dst, j, a->key, a->s); break;
			case A_INTS: dp_setints(p->dst, j, a->key, a->ints, a->n); break;
			case A_FLOATS: dp_setfloats(p->dst, j, a->key, a->floats, a->n); break;
			}
		}
		for (int k = 0; k < op->nout; k++)
			p->map[op->out[k]] = dp_addout(p->dst, j, s->val[op->out[k]].t);
		assign(p, j);
	}
	if (outputs(p, ent, cure, port, err) < 0)
		return -1;
	for (int k = 0; k < s->nout; k++)
		dp_addport(p->dst, s->out[k].name, port[k]);
	return 0;
}

/* Whether fn (read from in) is placed and not yet partitioned; says why
 * not on stderr. */
static int
placed(const Fn *fn, const char *in)
{
	for (int i = 0; i < fn->nop; i++)
		if (!fn->op[i].rule) {
			fprintf(stderr, "%s: partition: op %d (%s) was never placed (run place first)\n", in, i,
			        dp_op_name[fn->op[i].kind]);
			return 0;
		}
	if (fn->npart) {
		fprintf(stderr, "%s: partition: the IR is already partitioned\n", in);
		return 0;
	}
	return 1;
}

/* Starts partitioning fn: an empty function with fn's name, weights and
 * dependencies, and no value mapped or copied yet. */
static void
start(P *p, const Fn *fn)
{
	*p = (P){ .src = fn, .cur = -1 };
	p->dst = dp_new(fn->name, "partition");
	p->dst->weights = fn->weights;
	p->dst->whash = fn->whash;
	p->dst->wsize = fn->wsize;
	for (int i = 0; i < fn->ndep; i++)
		dp_adddep(p->dst, fn->dep[i].path, fn->dep[i].hash);
	p->map = dp_alloc(p->dst->arena, fn->nval + 1, sizeof *p->map);
	for (int d = 0; d < DEV_N; d++) {
		p->copy[d] = dp_alloc(p->dst->arena, fn->nval + 1, sizeof *p->copy[d]);
		for (int v = 0; v < fn->nval; v++)
			p->copy[d][v] = -1;
	}
}

int
main(int argc, char **argv)
{
	const char *in, *out;
	stage_args(argc, argv, usage, &in, &out, 1, NULL);
	Err err;
	Fn *fn;
	if (dp_read(in, &fn, &err)) {
		dp_report(in, "partition", &err);
		return 1;
	}
	if (!placed(fn, in))
		return 1;
	P p;
	start(&p, fn);
	int rc = 0;
	if (partition(&p, &err) || dp_write(out, p.dst, &err)) {
		dp_report(in, "partition", &err);
		rc = 1;
	}
	dp_free(p.dst);
	dp_free(fn);
	return rc;
}
