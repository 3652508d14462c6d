/* link.h: private interfaces of the link stage (child processes and files,
 * generated sources). */
#ifndef LINK_H
#define LINK_H

#include <sys/types.h>

#include "capi.h"
#include "dpir.h"

/* What dp-link was asked to do, and its temporary folder. */
typedef struct Link {
	Arena *a;              /* owns what the run allocates */
	const char *in;        /* the .dpir, as given */
	const char *out;       /* -o: the executable; lib and header go beside it */
	const char *weights;   /* --weights, or NULL */
	const char *fatbin;    /* --fatbin (or an operand FILE.fatbin): the device
	                          half of the program's CUDA, embedded as
	                          NAME_gpu_fatbin; or NULL */
	int apart;             /* --apart: the blob stays a file beside the program */
	int shared;            /* --shared-runtime: the executable links libdprt.so */
	unsigned char head[64];   /* the blob's header */
	const char *libdir;    /* --runtime: holds libdprt.a */
	const char *incdir;    /* --include: holds dprt.h */
	const char *cc, *ar;
	int arset;             /* --ar given: libNAME.a made by it */
	const char *cuda;      /* --cuda: the CUDA toolkit folder (cuda programs) */
	const char *cudalib;   /* its library folder, once found */
	int gpu;               /* whether the program has cuda partitions */
	int image;             /* whether it has image inputs (u8[?,?,C]) */
	const char **obj;      /* --obj, in order */
	int nobj;
	const char **ldflag;   /* --ldflag, in order */
	int nldflag;
	char *dir, *base;      /* folder and file name of out */
	char *tmp;             /* temporary folder inside dir, or NULL */
	const char *toollog;   /* the messages of the tool that failed, or NULL */
	Fn *fn;
} Link;

/* build.c */
/* Splits -o into folder and file name; finds the weight blob (its size
 * into *wsize) and the runtime; checks every input file. */
int link_check(Link *l, long long *wsize, Err *err);
/* Makes the outputs in the temporary folder l->tmp (the header's text is
 * hdr, its name hname; the library's name libname), then puts each in
 * place, renamed only when its bytes changed. */
int link_build(Link *l, long long wsize, const Str *hdr, const char *hname,
               const char *libname, Err *err);

/* ar.c */
/* Writes the archive path as `ar qcsD path obj... MEMBERS` would, MEMBERS
 * being every member of each archive lib[] in order.  0; -1 with err; 1
 * when an input is not one it knows (the caller runs ar instead). */
int ar_write(Arena *a, const char *path, const char *const *obj, int nobj,
             const char *const *lib, int nlib, Err *err);

/* files.c */
/* Path parts joined as "a/b", allocated in arena m. */
char *join(Arena *m, const char *a, const char *b);
/* Runs argv (argv[0] looked up on PATH) in folder cwd (NULL: ours), stdin
 * from /dev/null, stdout to outpath (NULL: into the log) and stderr to the
 * log file.  0, or -1 with err naming the tool and what it was doing. */
int spawn(char *const *argv, const char *cwd, const char *outpath, const char *log,
          const char *what, Err *err);
/* spawn in two halves, for children that run side by side: the start
 * (the child's pid into *pid) and the wait (tool: its argv[0]). */
int spawn_start(char *const *argv, const char *cwd, const char *outpath, const char *log,
                const char *what, pid_t *pid, Err *err);
int spawn_wait(pid_t pid, const char *tool, const char *log, const char *what, Err *err);
/* Copies the first lines of the log to stderr, indented. */
void showlog(const char *log);
/* Removes a folder and everything in it (best effort, no symlinks followed). */
void rmtree(const char *path);
/* Renames the built file tmp to dst unless dst already holds the same
 * bytes (so that timestamps only move on change).  0, or -1 with err. */
int install(const char *tmp, const char *dst, Err *err);
/* Whether path names a readable regular file; its size into *size. */
int regfile(const char *path, long long *size);

/* gen.c: the text of NAME.h, of the assembly file embedding the weights
 * (path as given, resolved by the assembler from the current folder), and
 * of the executable's main() (image: with the image decoder). */
int gen_header(Fn *fn, const char *hname, const char *src, const char *lib,
               const char *cudalib, Str *s, Err *err);
void gen_weights(const Fn *fn, const char *path, long long size, Str *s);
void gen_fatbin(const Fn *fn, const char *path, Str *s);
void gen_blob(const Fn *fn, const unsigned char *head, long long size, int embed, Str *s);
void gen_main(const Fn *fn, int image, Str *s);
/* The libraries a cuda program links after libNAME.a (NULL-terminated,
 * static storage). */
extern const char *const cudalibs[];

#endif
