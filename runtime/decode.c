/* decode.c: PNG and JPEG files to RGB pixels as PIL decodes them (libpng,
 * libjpeg-turbo); only programs with image inputs link it. */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>
#include <jpeglib.h>
#include <jerror.h>

#include "dprtint.h"

enum { MAXPIX = 1 << 30 };   /* the most pixels an image may have */

/* The state both decoders share: the file, the pixels, where to jump on a
 * library error and its message. */
typedef struct Dec {
	FILE *f;
	const char *path;
	uint8_t *pix;
	uint8_t **rows;
	jmp_buf jb;
	char msg[JMSG_LENGTH_MAX + 64];
} Dec;

/* Checks the size and allocates the pixels and row pointers. */
static int
room(Dec *d, uint32_t h, uint32_t w, char *err, size_t errn)
{
	uint32_t i;

	if (h == 0 || w == 0 || (uint64_t)h * w > MAXPIX)
		return dprt_errf(err, errn, "%s: unsupported image size %ux%u (at most %d pixels)",
		                 d->path, (unsigned)w, (unsigned)h, MAXPIX);
	d->pix = malloc((size_t)h * w * 3);
	d->rows = malloc(sizeof *d->rows * h);
	if (!d->pix || !d->rows)
		return dprt_errf(err, errn, "%s: out of memory (a %ux%u image)", d->path,
		                 (unsigned)w, (unsigned)h);
	for (i = 0; i < h; i++)
		d->rows[i] = d->pix + (size_t)i * w * 3;
	return 0;
}

/* ---- PNG ---- */

static void
pngerr(png_structp png, png_const_charp msg)
{
	Dec *d = png_get_error_ptr(png);

	snprintf(d->msg, sizeof d->msg, "%s", msg);
	longjmp(d->jb, 1);
}

static void
pngwarn(png_structp png, png_const_charp msg)
{
	(void)png, (void)msg;   /* PIL reads on through ancillary-chunk warnings */
}

static int
readpng(Dec *d, dprt_image *img, char *err, size_t errn)
{
	png_structp png;
	png_infop info = NULL;
	png_uint_32 w, h;
	int depth, type;
	volatile int rc = -1;

	png = png_create_read_struct(PNG_LIBPNG_VER_STRING, d, pngerr, pngwarn);
	if (!png || !(info = png_create_info_struct(png))) {
		dprt_errf(err, errn, "%s: out of memory", d->path);
		goto done;
	}
	if (setjmp(d->jb)) {
		dprt_errf(err, errn, "%s: bad or truncated PNG file (%s)", d->path, d->msg);
		goto done;
	}
	png_init_io(png, d->f);
	png_set_user_limits(png, 1 << 20, 1 << 20);
	png_read_info(png, info);
	png_get_IHDR(png, info, &w, &h, &depth, &type, NULL, NULL, NULL);
	if (type == PNG_COLOR_TYPE_PALETTE)
		png_set_palette_to_rgb(png);   /* the palette's colours; tRNS ignored */
	if (type == PNG_COLOR_TYPE_GRAY && depth < 8)
		png_set_expand_gray_1_2_4_to_8(png);
	if (depth == 16)
		png_set_strip_16(png);         /* the high byte */
	if (type & PNG_COLOR_MASK_ALPHA)
		png_set_strip_alpha(png);
	if (!(type & PNG_COLOR_MASK_COLOR))
		png_set_gray_to_rgb(png);
	png_set_interlace_handling(png);
	png_read_update_info(png, info);
	if (png_get_rowbytes(png, info) != (size_t)w * 3) {
		dprt_errf(err, errn, "%s: unsupported PNG layout", d->path);
		goto done;
	}
	if (room(d, h, w, err, errn) != 0)
		goto done;
	png_read_image(png, d->rows);
	png_read_end(png, NULL);
	img->h = h;
	img->w = w;
	rc = 0;
done:
	png_destroy_read_struct(&png, &info, NULL);
	return rc;
}

/* ---- JPEG ---- */

typedef struct Jerr {
	struct jpeg_error_mgr pub;
	Dec *d;
} Jerr;

static void
jpegerr(j_common_ptr j)
{
	Jerr *e = (Jerr *)j->err;

	j->err->format_message(j, e->d->msg);
	longjmp(e->d->jb, 1);
}

/* Warnings are ignored as PIL ignores them, but for data that ends early,
 * which PIL reports as a truncated file. */
static void
jpegmsg(j_common_ptr j, int level)
{
	if (level < 0 && j->err->msg_code == JWRN_JPEG_EOF)
		jpegerr(j);
}

static int
readjpeg(Dec *d, dprt_image *img, char *err, size_t errn)
{
	struct jpeg_decompress_struct j;
	Jerr e;
	volatile int rc = -1;

	memset(&j, 0, sizeof j);
	j.err = jpeg_std_error(&e.pub);
	e.pub.error_exit = jpegerr;
	e.pub.emit_message = jpegmsg;
	e.d = d;
	if (setjmp(d->jb)) {
		dprt_errf(err, errn, "%s: bad or truncated JPEG file (%s)", d->path, d->msg);
		goto done;
	}
	jpeg_create_decompress(&j);
	jpeg_stdio_src(&j, d->f);
	jpeg_read_header(&j, TRUE);
	if (j.jpeg_color_space == JCS_CMYK || j.jpeg_color_space == JCS_YCCK) {
		dprt_errf(err, errn, "%s: CMYK JPEG files are not supported", d->path);
		goto done;
	}
	j.out_color_space = JCS_RGB;
	j.dct_method = JDCT_ISLOW;   /* libjpeg's default, and PIL's */
	jpeg_start_decompress(&j);
	if (j.output_components != 3) {
		dprt_errf(err, errn, "%s: unsupported JPEG colour layout", d->path);
		goto done;
	}
	if (room(d, j.output_height, j.output_width, err, errn) != 0)
		goto done;
	while (j.output_scanline < j.output_height)
		jpeg_read_scanlines(&j, d->rows + j.output_scanline, j.output_height - j.output_scanline);
	jpeg_finish_decompress(&j);
	img->h = j.output_height;
	img->w = j.output_width;
	rc = 0;
done:
	jpeg_destroy_decompress(&j);
	return rc;
}

int
dprt_image_read(const char *path, dprt_image *img, char *err, size_t errn)
{
	static const uint8_t pngsig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	Dec d;
	uint8_t head[8] = {0};
	size_t n;
	int rc;

	memset(&d, 0, sizeof d);
	memset(img, 0, sizeof *img);
	d.path = path;
	if ((d.f = fopen(path, "rb")) == NULL)
		return dprt_errf(err, errn, "%s: cannot open: %s", path, strerror(errno));
	n = fread(head, 1, sizeof head, d.f);
	rewind(d.f);
	if (n == 8 && memcmp(head, pngsig, 8) == 0)
		rc = readpng(&d, img, err, errn);
	else if (n >= 3 && head[0] == 0xff && head[1] == 0xd8 && head[2] == 0xff)
		rc = readjpeg(&d, img, err, errn);
	else
		rc = dprt_errf(err, errn, "%s: not a PNG or JPEG file", path);
	fclose(d.f);
	free(d.rows);
	if (rc != 0) {
		free(d.pix);
		return -1;
	}
	img->data = d.pix;
	img->c = 3;
	return 0;
}
