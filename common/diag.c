// SPDX-License-Identifier: MIT
/*
 * Formats diagnostics as "FILE:LINE:COL: error: WHAT" so editors and
 * terminals can jump to the place; input from the command line has no file
 * and reads "error: WHAT".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "diag.h"

void ibemu_diag_init(struct ibemu_diag *d)
{
	memset(d, 0, sizeof(*d));
}

void ibemu_diag_fini(struct ibemu_diag *d)
{
	size_t i;

	for (i = 0; i < d->nwarnings; i++)
		free(d->warnings[i]);
	free(d->warnings);
	free(d->error);
	memset(d, 0, sizeof(*d));
}

IBEMU_PRINTF(3, 0)
static char *format(const struct ibemu_loc *loc, const char *kind,
		    const char *fmt, va_list ap)
{
	struct ibemu_buf b;
	va_list ap2;
	int n;

	ibemu_buf_init(&b);
	if (loc && loc->file && loc->line)
		ibemu_buf_printf(&b, "%s:%u:%u: ", loc->file, loc->line,
				 loc->col);
	else if (loc && loc->file)
		ibemu_buf_printf(&b, "%s: ", loc->file);
	ibemu_buf_printf(&b, "%s: ", kind);
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n >= 0) {
		char *msg = malloc((size_t)n + 1);

		if (msg) {
			vsnprintf(msg, (size_t)n + 1, fmt, ap);
			ibemu_buf_puts(&b, msg);
			free(msg);
		}
	}
	return ibemu_buf_steal(&b);
}

int ibemu_diag_error(struct ibemu_diag *d, const struct ibemu_loc *loc,
		     const char *fmt, ...)
{
	va_list ap;

	if (d->error)
		return -EINVAL;
	va_start(ap, fmt);
	d->error = format(loc, "error", fmt, ap);
	va_end(ap);
	if (!d->error)
		d->error = strdup("error: out of memory");
	return -EINVAL;
}

void ibemu_diag_warn(struct ibemu_diag *d, const struct ibemu_loc *loc,
		     const char *fmt, ...)
{
	char **w;
	char *msg;
	va_list ap;

	va_start(ap, fmt);
	msg = format(loc, "warning", fmt, ap);
	va_end(ap);
	if (!msg)
		return;
	w = realloc(d->warnings, (d->nwarnings + 1) * sizeof(*w));
	if (!w) {
		free(msg);
		return;
	}
	d->warnings = w;
	d->warnings[d->nwarnings++] = msg;
}

const char *ibemu_diag_what(const char *msg)
{
	static const char prefix[] = "error: ";

	if (!strncmp(msg, prefix, sizeof(prefix) - 1))
		return msg + sizeof(prefix) - 1;
	return msg;
}
