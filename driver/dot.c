/* dot.c: devproc dump --dot: a DPIR function as a Graphviz graph: ops
 * coloured by device, copies marked, partitions drawn as clusters. */
#include <string.h>

#include "driver.h"

static const char *const fill[DEV_N] = { "#a6cee3", "#b2df8a" };  /* cpu blue, cuda green */
#define COPYFILL "#fdbf6f"
#define UNPLACED "#eeeeee"

/* A DOT string body: quotes and backslashes escaped, newlines as \n
 * (left-justified lines: \l), control bytes dropped. */
static void
dstr(FILE *f, const char *s, size_t max)
{
	size_t n = 0;
	for (; *s && n < max; s++, n++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c >= 0x20 && c != 0x7f)
			fputc(c, f);
	}
	if (*s)
		fputs("...", f);
}

/* A short form of the attributes: key=value, long lists cut. */
static void
attrs(FILE *f, const Op *op)
{
	char b[96];
	for (int i = 0; i < op->nattr; i++) {
		const Attr *a = &op->attr[i];
		switch (a->kind) {
		case A_INT: snprintf(b, sizeof b, "%s=%lld", a->key, (long long)a->i); break;
		case A_FLOAT: snprintf(b, sizeof b, "%s=%g", a->key, a->f); break;
		case A_STR: snprintf(b, sizeof b, "%s=%s", a->key, a->s); break;
		case A_INTS: case A_FLOATS: {
			size_t k = (size_t)snprintf(b, sizeof b, "%s=[", a->key);
			for (int j = 0; j < a->n && j < 4 && k < sizeof b; j++)
				k += a->kind == A_INTS
				   ? (size_t)snprintf(b + k, sizeof b - k, "%s%lld", j ? "," : "", (long long)a->ints[j])
				   : (size_t)snprintf(b + k, sizeof b - k, "%s%g", j ? "," : "", a->floats[j]);
			if (k < sizeof b)
				snprintf(b + k, sizeof b - k, "%s]", a->n > 4 ? ",..." : "");
			break;
		}
		}
		fputs(i ? ", " : "\\n", f);
		dstr(f, b, 40);
	}
}

static void
node(FILE *f, const Fn *fn, int i, int placed)
{
	const Op *op = &fn->op[i];
	char ty[96];
	fprintf(f, "    op%d [label=\"", i);
	for (int k = 0; k < op->nout; k++)
		fprintf(f, "%s%%%d", k ? ", " : "", op->out[k]);
	fprintf(f, " = %s", dp_op_name[op->kind]);
	if (op->kind == Oinput) {
		const char *name = dp_gets(op, "name");
		fputs(" \\\"", f);
		dstr(f, name ? name : "", 32);
		fputs("\\\"", f);
	} else if (op->kind == Oconst)
		fprintf(f, "\\n@%lld, %lld bytes", (long long)dp_geti(op, "offset", 0),
		        (long long)dp_geti(op, "nbytes", 0));
	else
		attrs(f, op);
	for (int k = 0; k < op->nout; k++) {
		dp_type_str(&fn->val[op->out[k]].t, placed, ty, sizeof ty);
		fprintf(f, "\\n");
		dstr(f, ty, sizeof ty);
	}
	fputc('"', f);
	const char *color = placed ? fill[op->dev] : UNPLACED;
	if (op->kind == Ocopy)
		fprintf(f, ", shape=cds, margin=\"0.3,0.05\", fillcolor=\"%s\", penwidth=2", COPYFILL);
	else if (op->kind == Oinput)
		fprintf(f, ", shape=invhouse, fillcolor=\"%s\"", color);
	else if (op->kind == Oconst)
		fprintf(f, ", shape=note, fontsize=9, fillcolor=\"%s\"", color);
	else
		fprintf(f, ", fillcolor=\"%s\"", color);
	if (op->rule) {
		fprintf(f, ", tooltip=\"");
		dstr(f, op->rule, 200);
		fputc('"', f);
	}
	fprintf(f, "];\n");
}

/* Writes fn as a digraph: one node per op, an edge per operand (labelled
 * with its type; red where it crosses devices, which only a copy may do
 * once partitioned), the graph outputs as nodes, a cluster per partition
 * and a legend.  IR that is not placed yet (no op has a rule) is grey. */
void
dot_print(FILE *f, const Fn *fn)
{
	int placed = fn->npart > 0;
	for (int i = 0; i < fn->nop && !placed; i++)
		placed = fn->op[i].rule != NULL;
	fprintf(f, "digraph \"");
	dstr(f, fn->name, 64);
	fprintf(f, "\" {\n  label=\"");
	dstr(f, fn->name, 64);
	fprintf(f, " (stage %s)\"; labelloc=t; rankdir=TB;\n", fn->stage);
	fprintf(f, "  node [shape=box, style=\"rounded,filled\", fontname=\"monospace\", fontsize=10];\n");
	fprintf(f, "  edge [fontname=\"monospace\", fontsize=8];\n");

	int *done = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *done);
	for (int p = 0; p < fn->npart; p++) {
		int dev = fn->part[p].dev;
		fprintf(f, "  subgraph cluster_part%d {\n    label=\"partition %d @%s\"; style=\"rounded,dashed\";"
		        " color=\"%s\"; penwidth=2;\n", p, p, dp_dev_name[dev], fill[dev]);
		for (int i = 0; i < fn->nop; i++)
			if (fn->op[i].part == p) {
				node(f, fn, i, placed);
				done[i] = 1;
			}
		fprintf(f, "  }\n");
	}
	for (int i = 0; i < fn->nop; i++)
		if (!done[i])
			node(f, fn, i, placed);

	for (int i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		for (int k = 0; k < op->nin; k++) {
			int v = op->in[k];
			if (v < 0 || v >= fn->nval)
				continue;
			const Type *t = &fn->val[v].t;
			char ty[96];
			dp_type_str(t, 0, ty, sizeof ty);
			int cross = placed && t->dev != op->dev;
			fprintf(f, "  op%d -> op%d [label=\"", fn->val[v].def, i);
			dstr(f, ty, sizeof ty);
			fprintf(f, "\"%s];\n", cross ? ", color=red, fontcolor=red, penwidth=2" : "");
		}
	}
	for (int k = 0; k < fn->nout; k++) {
		fprintf(f, "  out%d [label=\"", k);
		dstr(f, fn->out[k].name, 64);
		fprintf(f, "\", shape=house, style=filled, fillcolor=white];\n");
		if (fn->out[k].val >= 0 && fn->out[k].val < fn->nval)
			fprintf(f, "  op%d -> out%d;\n", fn->val[fn->out[k].val].def, k);
	}
	fprintf(f, "  subgraph cluster_legend {\n    label=\"legend\"; style=dotted; fontsize=9;\n");
	fprintf(f, "    legend_cpu [label=\"cpu\", fillcolor=\"%s\"];\n", fill[DEV_CPU]);
	fprintf(f, "    legend_cuda [label=\"cuda\", fillcolor=\"%s\"];\n", fill[DEV_CUDA]);
	fprintf(f, "    legend_copy [label=\"copy\", shape=cds, fillcolor=\"%s\"];\n", COPYFILL);
	if (!placed)
		fprintf(f, "    legend_unplaced [label=\"not placed yet\", fillcolor=\"%s\"];\n", UNPLACED);
	fprintf(f, "  }\n}\n");
}
