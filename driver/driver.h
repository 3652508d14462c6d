/* driver.h: the devproc driver's commands and the helpers they share. */
#include "dpir.h"

typedef struct Gen {
	const char *root;      /* DevProc folder (bin/, lib/, runtime/, targets/, rules.ninja) */
	const char *dir;       /* the build folder: ninja runs here (-C) */
	const char *target;    /* mapping name or path */
	const char *arch;      /* --cuda-arch: overrides the mapping's sm_XX, or NULL */
	int apart;             /* --apart: link the weight blob apart (dp-link --apart) */
	int shared;            /* --shared-runtime: link against libdprt.so */
	const char *file;      /* the ninja file, relative to dir unless absolute (-o) */
	int sub;               /* -o given: a file for subninja (no default, no regeneration) */
	const char **pipe;     /* .dp files */
	int npipe;
} Gen;

int gen_ninja(Gen *g);                 /* writes the ninja file; 0 or 1 */
/* The mapping file of --target T into path (gen.c): T itself where it
 * names a folder (has a '/'), else ROOT/targets/T where that is shipped,
 * else T where a file of that name is in the current folder, else
 * ROOT/targets/T (for the error). */
void gen_targetpath(const char *root, const char *target, char *path, size_t n);
/* The pipeline NAME of a .dp file (gen.c); 0, or 1 with the error printed. */
int gen_pipename(const char *file, char *name, size_t n);
/* devproc tune (tune.c): a tuning database measured on this GPU. */
int cmd_tune(int argc, char **argv, const char *root);
int cmd_dump(int argc, char **argv);   /* devproc dump */
int cmd_parse(int argc, char **argv);  /* devproc parse */
int cmd_stages(int argc, char **argv); /* devproc stages */
int cmd_trace(int argc, char **argv);  /* devproc trace */
int cmd_ops(int argc, char **argv, const char *root); /* devproc ops */
/* The DevProc folder: $DEVPROC_ROOT, else the one above bin/devproc. */
char *findroot(const char *argv0);
/* ROOT/bin/dp-import --targets (ops.c): "TARGET\tOP[\tNOTE]" lines. */
char *import_targets(const char *root);
/* devproc dump of a .pt2 (pt2sig.c): the model's signature and an op
 * histogram marking the targets dp-import lacks; 0 and nothing printed for
 * a zip archive that is not a .pt2. */
int pt2_summary(const char *file);
int cmd_tensor(int argc, char **argv); /* devproc tensor (tensor.c) */
/* Prints an .npy file, each member of an .npz or a decoded image: dtype,
 * shape, statistics, the first values (all: every value); 0 or 1. */
int tensor_show(const char *path, int all);

/* dot.c: a placed or partitioned function as a Graphviz digraph. */
void dot_print(FILE *f, const Fn *fn);

/* dump.c helpers used by other commands. */
/* FNV-1a hash of a whole file, read in chunks; of a weight blob (1.2 on),
 * the data hash its header holds, as the IR records it, without reading
 * the data.  0, or -1 with err set. */
int file_hash(const char *path, uint64_t *h, int64_t *size, Err *err);

/* ninjalog.c: .ninja_log (versions 5 to 7) as a list of edge runs. */
typedef struct LogEntry {
	int64_t start, end;    /* ms since the start of that ninja run */
	int64_t mtime;         /* the output's recorded mtime (ninja's units) */
	char *path;            /* the output, as ninja names it */
	char *hash;            /* the command's hash, as written */
	int run;               /* which ninja run (0 = oldest in the file) wrote it */
} LogEntry;

typedef struct NinjaLog {
	LogEntry *e;
	int n, cap;
	int nrun;              /* ninja runs told apart (end times restart) */
} NinjaLog;

/* Reads DIR/.ninja_log; 0, or -1 with err set (a missing log is an error). */
int ninjalog_read(const char *dir, NinjaLog *log, Err *err);
/* The newest entry for an output path, or NULL. */
const LogEntry *ninjalog_find(const NinjaLog *log, const char *path);
void ninjalog_free(NinjaLog *log);
/* The stage that writes an artifact, from its file name in a pipeline's
 * folder ("import" for 1.import.dpir...), or NULL when not a stage's. */
const char *stage_of(const char *file, const char *pipe);
