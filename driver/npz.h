/* npz.h: .npz archives as a list of decoded .npy members (npz.c). */
#include <stdint.h>

#include "dprt.h"

typedef struct NpzMember {
	char *name;             /* without the ".npy" numpy adds */
	int dtype, rank;        /* DPRT_* dtype */
	int64_t dim[DPRT_MAXRANK];
	void *data;             /* malloc'd, dense C order */
} NpzMember;

typedef struct Npz {
	NpzMember *m;
	int n;
} Npz;

/* Whether path starts like a zip archive (an .npz). */
int npz_isnpz(const char *path);
/* Reads every member of path; 0, or -1 with a message in err (nothing to free). */
int npz_read(const char *path, Npz *z, char *err, size_t errn);
/* The member called name (with or without ".npy"), or NULL. */
const NpzMember *npz_find(const Npz *z, const char *name);
void npz_free(Npz *z);
