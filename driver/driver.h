/* driver.h: the devproc driver's commands. */
#include "dpir.h"

typedef struct Gen {
	const char *root;      /* DevProc folder (bin/, lib/, runtime/, targets/, rules.ninja) */
	const char *dir;       /* build folder */
	const char *target;    /* mapping name or path */
	const char *file;      /* the ninja file's name in dir */
	const char *pipe[64];  /* .dp files */
	int npipe;
} Gen;

int gen_ninja(Gen *g);                 /* writes DIR/build.ninja; 0 or 1 */
int cmd_dump(int argc, char **argv);
int cmd_parse(int argc, char **argv);
