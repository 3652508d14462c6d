/* target.c: target mapping files: reading them and applying their
 * placement rules (spec: formats/target.md). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "dpir.h"

/* Splits the next whitespace-separated word of a line; NULL at the end. */
static char *
word(char **p, int *col, const char *bol)
{
	char *s = *p;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return NULL;
	*col = (int)(s - bol) + 1;
	char *e = s;
	if (*s == '"') {
		e = strchr(s + 1, '"');
		if (!e)
			return NULL;
		*e = 0;
		*p = e + 1;
		return s + 1;
	}
	while (*e && *e != ' ' && *e != '\t')
		e++;
	if (*e)
		*e++ = 0;
	*p = e;
	return s;
}

int
dp_target_parse(const char *text, size_t len, Target *t, Err *err)
{
	memset(t, 0, sizeof *t);
	const char *nul = memchr(text, 0, len);
	if (nul) {   /* the lines below end at a NUL: refuse rather than cut */
		int line = 1;
		const char *bol = text;
		for (const char *c = text; c < nul; c++)
			if (*c == '\n') {
				line++;
				bol = c + 1;
			}
		dp_seterr_at(err, line, (int)(nul - bol) + 1, "NUL byte (a mapping is a text file)");
		return -1;
	}
	char *buf = malloc(len + 1);
	if (!buf) {
		dp_seterr(err, "out of memory");
		return -1;
	}
	memcpy(buf, text, len);
	buf[len] = 0;
	int line = 0, rc = -1, havedefault = 0;
	char *p = buf;
	while (p && *p) {
		char *bol = p, *nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		p = nl ? nl + 1 : NULL;
		line++;
		for (char *c = bol; *c; c++)
			if (*c == '#') {   /* comments run to the end of the line */
				*c = 0;
				break;
			}
		int nq = 0;
		for (char *c = bol; *c; c++)
			nq += *c == '"';
		if (nq % 2) {
			dp_seterr_at(err, line, (int)(strrchr(bol, '"') - bol) + 1, "unterminated string");
			goto out;
		}
		char *cur = bol;
		int col = 1, col2 = 1, col3 = 1;
		char *w = word(&cur, &col, bol);
		if (!w)
			continue;
		char *a = word(&cur, &col2, bol);
		char *b = a ? word(&cur, &col3, bol) : NULL;
		int c4;
		char *extra = b ? word(&cur, &c4, bol) : NULL;
		if (!strcmp(w, "target")) {
			if (!a || b) {
				dp_seterr_at(err, line, col, "expected 'target NAME'");
				goto out;
			}
			snprintf(t->name, sizeof t->name, "%s", a);
		} else if (!strcmp(w, "device")) {
			int d = a ? dp_dev_lookup(a) : -1;
			if (d < 0) {
				dp_seterr_at(err, line, a ? col2 : col, "expected 'device cpu' or 'device cuda [sm_XX]'");
				goto out;
			}
			if (b && d != DEV_CUDA) {
				dp_seterr_at(err, line, col3, "only a cuda device takes an architecture");
				goto out;
			}
			if (b) {
				if (strncmp(b, "sm_", 3) || !isdigit((unsigned char)b[3]) || strlen(b) > 10) {
					dp_seterr_at(err, line, col3, "bad cuda architecture '%s' (expected e.g. sm_90)", b);
					goto out;
				}
				snprintf(t->arch, sizeof t->arch, "%s", b);
			} else if (d == DEV_CUDA)
				snprintf(t->arch, sizeof t->arch, "sm_90");
			t->devs |= 1 << d;
		} else if (!strcmp(w, "default") || !strcmp(w, "class") || !strcmp(w, "op")) {
			Rule r = { .line = line };
			const char *dev = a;
			int dcol = col2;
			if (!strcmp(w, "default")) {
				r.what = R_DEFAULT;
				havedefault = 1;
				if (!a || b) {
					dp_seterr_at(err, line, col, "expected 'default DEVICE'");
					goto out;
				}
			} else {
				if (!a || !b || extra) {
					dp_seterr_at(err, line, col, "expected '%s NAME DEVICE'", w);
					goto out;
				}
				dev = b;
				dcol = col3;
				if (w[0] == 'c') {
					r.what = R_CLASS;
					r.key = dp_class_lookup(a);
					if (r.key < 0) {
						char names[256] = "";
						for (int k = 0; k < DP_NCLASS; k++)
							snprintf(names + strlen(names), sizeof names - strlen(names),
							         "%s%s", k ? ", " : "", dp_class_name[k]);
						dp_seterr_at(err, line, col2, "unknown op class '%s' (classes: %s)", a, names);
						goto out;
					}
				} else {
					r.what = R_OP;
					r.key = dp_op_lookup(a);
					if (r.key < 0) {
						dp_seterr_at(err, line, col2, "unknown op '%s'", a);
						goto out;
					}
				}
			}
			r.dev = dp_dev_lookup(dev);
			if (r.dev < 0) {
				dp_seterr_at(err, line, dcol, "unknown device '%s'", dev);
				goto out;
			}
			if (!(t->devs & (1 << r.dev))) {
				dp_seterr_at(err, line, dcol, "device '%s' is not declared (add 'device %s')", dev, dev);
				goto out;
			}
			if (t->nrule == (int)(sizeof t->rule / sizeof *t->rule)) {
				dp_seterr_at(err, line, col, "too many rules");
				goto out;
			}
			t->rule[t->nrule++] = r;
		} else if (!strcmp(w, "tune")) {
			if (!a || !b || extra) {
				dp_seterr_at(err, line, col, "expected 'tune KEY VALUE'");
				goto out;
			}
			if (t->ntune == (int)(sizeof t->tune / sizeof *t->tune)) {
				dp_seterr_at(err, line, col, "more than %d tunables",
				             (int)(sizeof t->tune / sizeof *t->tune));
				goto out;
			}
			if (strlen(a) >= sizeof t->tune[0].key || strlen(b) >= sizeof t->tune[0].val) {
				int k = strlen(a) >= sizeof t->tune[0].key;
				dp_seterr_at(err, line, k ? col2 : col3, "tunable %s longer than %d bytes",
				             k ? "name" : "value",
				             (int)(k ? sizeof t->tune[0].key : sizeof t->tune[0].val) - 1);
				goto out;
			}
			snprintf(t->tune[t->ntune].key, 32, "%s", a);
			snprintf(t->tune[t->ntune].val, 128, "%s", b);
			t->tune[t->ntune].line = line;
			t->tune[t->ntune].col = col3;
			t->ntune++;
		} else {
			dp_seterr_at(err, line, col, "unknown directive '%s' (expected target, device, default, class, op or tune)", w);
			goto out;
		}
	}
	if (!t->name[0]) {
		dp_seterr(err, "missing 'target NAME' line");
		goto out;
	}
	if (!(t->devs & D_CPU)) {
		dp_seterr(err, "missing 'device cpu' line (the host is always a cpu)");
		goto out;
	}
	if (!havedefault) {
		dp_seterr(err, "missing 'default DEVICE' line");
		goto out;
	}
	rc = 0;
out:
	free(buf);
	return rc;
}

int
dp_target_read(const char *path, Target *t, Err *err)
{
	char *buf;
	size_t len;
	if (dp_slurp(path, &buf, &len, err))
		return -1;
	int rc = dp_target_parse(buf, len, t, err);
	free(buf);
	return rc;
}

int
dp_target_place(const Target *t, const char *file, int kind, char *why, size_t n)
{
	const Rule *best = NULL;
	for (int i = 0; i < t->nrule; i++) {
		const Rule *r = &t->rule[i];
		int match = r->what == R_DEFAULT || (r->what == R_CLASS && r->key == dp_op_class[kind]) ||
		            (r->what == R_OP && r->key == kind);
		if (match && (!best || r->what >= best->what))
			best = r;
	}
	if (!best)
		dp_die("target without a default rule");
	int dev = best->dev;
	const char *what = best->what == R_OP ? "op" : best->what == R_CLASS ? "class" : "default";
	const char *key = best->what == R_OP ? dp_op_name[kind] : best->what == R_CLASS ? dp_class_name[dp_op_class[kind]] : "";
	if (!(dp_op_devs[kind] & (1 << dev))) {
		snprintf(why, n, "%s:%d: %s%s%s -> %s, but %s has no %s kernel: cpu", file, best->line,
		         what, *key ? " " : "", key, dp_dev_name[dev], dp_op_name[kind], dp_dev_name[dev]);
		return DEV_CPU;
	}
	snprintf(why, n, "%s:%d: %s%s%s -> %s", file, best->line, what, *key ? " " : "", key,
	         dp_dev_name[dev]);
	return dev;
}

/* The last tune line naming key, or NULL. */
static const Tune *
tunefind(const Target *t, const char *key)
{
	for (int i = t->ntune - 1; i >= 0; i--)
		if (!strcmp(t->tune[i].key, key))
			return &t->tune[i];
	return NULL;
}

const char *
dp_target_tune(const Target *t, const char *key, const char *def)
{
	const Tune *u = tunefind(t, key);

	return u ? u->val : def;
}

void
dp_target_tune_at(const Target *t, const char *key, int *line, int *col)
{
	const Tune *u = tunefind(t, key);

	*line = u ? u->line : 0;
	*col = u ? u->col : 0;
}
