/* tune.c: TAP tests of devproc tune's arithmetic (driver/tune.c, included
 * whole): the medians it reads from a --trace file and the entries it
 * chooses from the rounds' times, on hand-made input (no GPU). */
#include <string.h>
#include "../../driver/tune.c"

/* gen.c's, which the tests do not reach */
int
gen_ninja(Gen *g)
{
	(void)g;
	return 1;
}

int
gen_pipename(const char *file, char *name, size_t n)
{
	(void)file, (void)name, (void)n;
	return 1;
}

static int ntest, nfail;

static int
ok(int cond, const char *what)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++ntest, what);
	if (!cond)
		nfail++;
	return cond;
}

int
main(int argc, char **argv)
{
	if (argc > 1) {
		int help = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0;
		fputs("usage: test-tune\nRuns the tuner's unit tests (tests/tune.t), printing TAP.\n", help ? stdout : stderr);
		return !help;
	}
	char path[] = "/tmp/dp-test-tune-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	double med[6];

	if (f == NULL) {
		printf("Bail out! cannot make a scratch file\n");
		return 1;
	}
	/* as runtime/trace.c writes them: op 3 in four runs (the first, the
	 * warm-up, slow), op 5 in three (even count after the first), op 2
	 * once, a cpu op, an op past the function's */
	fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n"
	      "{\"name\": \"x\", \"cat\": \"cuda\", \"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"ts\": 1.000, \"dur\": 100.000, \"args\": {\"op\": 3}},\n"
	      "{\"name\": \"x\", \"cat\": \"cpu\", \"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": 1.000, \"dur\": 50.000, \"args\": {\"op\": 4}},\n"
	      "{\"name\": \"x\", \"cat\": \"cuda\", \"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"ts\": 2.000, \"dur\": 5.000, \"args\": {\"op\": 3}},\n"
	      "{\"name\": \"x\", \"cat\": \"cuda\", \"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"ts\": 2.000, \"dur\": 9.000, \"args\": {\"op\": 5}},\n"
	      "{\"name\": \"x\", \"cat\": \"cuda\", \"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"ts\": 3.000, \"dur\": 7.000, \"args\": {\"op\": 3}},\n"
	      "{\"name\": \"x\", \"cat\": \"cuda\", \"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"ts\": 3.000, \"dur\": 2.000, \"args\": {\"op\": 5}},\n"
	      "{\"name\": \"x\", \"cat\": \"cuda\", \"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"ts\": 4.000, \"dur\": 6.500, \"args\": {\"op\": 3}},\n"
	      "{\"name\": \"x\", \"cat\": \"cuda\", \"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"ts\": 4.000, \"dur\": 4.000, \"args\": {\"op\": 5}},\n"
	      "{\"name\": \"x\", \"cat\": \"cuda\", \"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"ts\": 4.000, \"dur\": 4.000, \"args\": {\"op\": 2}},\n"
	      "{\"name\": \"x\", \"cat\": \"cuda\", \"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"ts\": 4.000, \"dur\": 4.000, \"args\": {\"op\": 9}}\n"
	      "]}\n", f);
	fclose(f);
	ok(medians(path, 6, med) == 0, "a trace file is read");
	ok(med[3] == 6.5, "op 3: the median of 5, 7, 6.5 (the first run, 100, left out)");
	ok(med[5] == 3.0, "op 5: the mean of the middle two of 2, 4 (the first run, 9, left out)");
	ok(isnan(med[2]) && isnan(med[4]) && isnan(med[0]),
	   "no median for an op of one run, a cpu op or one without events");
	unlink(path);
	ok(medians(path, 6, med) == -1, "a missing trace: -1");

	/* the choice: round 0 untuned (the heuristic's value), round r the
	 * key's candidate r - 1 */
	double t0[] = {10, 12, 9, 9}, t1[] = {10, 12, 9, 9};   /* a tie of 2 and 4 */
	double t2[] = {5, 6, 7, 0}, t3[] = {1, NAN, 3, 0};     /* the heuristic; a lost event */
	double t4[] = {NAN, NAN, NAN, NAN};
	Site s[] = {
		{.key = "conv sm_90 A", .heur = "8", .key_i = 0, .t = t0},
		{.key = "conv sm_90 A", .heur = "8", .key_i = 0, .t = t1},
		{.key = "attn sm_90 B", .heur = "0", .key_i = 1, .t = t2},
		{.key = "mm sm_90 C", .heur = "gemv", .key_i = 2, .t = t3},
		{.key = "mm sm_90 D", .heur = "0", .key_i = 3, .t = t4},
	};
	Key k[] = {
		{.key = "conv sm_90 A", .name = "split", .cand = {"1", "2", "4"}, .ncand = 3},
		{.key = "attn sm_90 B", .name = "split", .cand = {"1", "2"}, .ncand = 2},
		{.key = "mm sm_90 C", .name = "algo", .cand = {"0", "1"}, .ncand = 2},
		{.key = "mm sm_90 D", .name = "algo", .cand = {"0"}, .ncand = 1},
	};
	char *text = NULL;
	size_t n = 0;
	FILE *db = open_memstream(&text, &n);
	const char *want =
		"# 2 ops: 1 24.0, 2 18.0, 4 18.0; untuned 8 20.0\n"
		"conv sm_90 A split=2\n"
		"# 1 op: 1 6.0, 2 7.0; untuned 0 5.0\n"
		"attn sm_90 B split=0\n"
		"# 1 op: 0 n/a, 1 3.0; untuned gemv 1.0\n"
		"mm sm_90 C algo=gemv\n"
		"# mm sm_90 D: not measured (no event of its ops)\n";
	choose(db, s, 5, k, 4);
	fclose(db);
	if (!ok(strcmp(text, want) == 0, "per key the least summed time, the earlier on a tie, "
	        "the heuristic's where it wins, none with a lost event or none measured"))
		printf("# got:\n%s# want:\n%s", text, want);
	free(text);
	printf("1..%d\n", ntest);
	return nfail != 0;
}
