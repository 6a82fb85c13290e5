// SPDX-License-Identifier: MIT
/*
 * Tables of typed cells rendered as aligned text or JSON. Cells are kept
 * typed (not pre-formatted) so JSON gets numbers as numbers and null as
 * null, while text gets a dash.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

void ibemu_table_init(struct ibemu_table *t, const char *name,
		      const struct ibemu_table_col *cols, size_t ncols)
{
	memset(t, 0, sizeof(*t));
	t->name = name;
	t->cols = cols;
	t->ncols = ncols;
}

void ibemu_table_fini(struct ibemu_table *t)
{
	size_t i;

	for (i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i].s);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

void ibemu_table_row(struct ibemu_table *t)
{
	struct ibemu_cell *cells;
	size_t cap;

	if (t->err)
		return;
	if (t->nrows == t->cap_rows) {
		cap = t->cap_rows ? t->cap_rows * 2 : 64;
		cells = realloc(t->cells, cap * t->ncols * sizeof(*cells));
		if (!cells) {
			t->err = -ENOMEM;
			return;
		}
		t->cells = cells;
		t->cap_rows = cap;
	}
	memset(&t->cells[t->nrows * t->ncols], 0, t->ncols * sizeof(*t->cells));
	t->nrows++;
	t->cur = 0;
}

static struct ibemu_cell *next_cell(struct ibemu_table *t)
{
	IBEMU_BUG_ON(!t->err && (t->nrows == 0 || t->cur >= t->ncols));
	if (t->err)
		return NULL;
	return &t->cells[(t->nrows - 1) * t->ncols + t->cur++];
}

void ibemu_table_str(struct ibemu_table *t, const char *s)
{
	struct ibemu_cell *c = next_cell(t);

	if (!c)
		return;
	c->type = IBEMU_CELL_STR;
	c->s = strdup(s);
	if (!c->s) {
		c->type = IBEMU_CELL_NULL;
		t->err = -ENOMEM;
	}
}

void ibemu_table_strf(struct ibemu_table *t, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	ibemu_table_str(t, tmp);
}

void ibemu_table_uint(struct ibemu_table *t, uint64_t v)
{
	struct ibemu_cell *c = next_cell(t);

	if (!c)
		return;
	c->type = IBEMU_CELL_UINT;
	c->u = v;
}

void ibemu_table_real(struct ibemu_table *t, double v)
{
	struct ibemu_cell *c = next_cell(t);

	if (!c)
		return;
	c->type = IBEMU_CELL_REAL;
	c->r = v;
}

void ibemu_table_null(struct ibemu_table *t)
{
	next_cell(t);
}

/* A text cell holds at most this many bytes of its string. */
#define TEXT_CELL_MAX 128

static int cell_text(const struct ibemu_cell *c, char *out, size_t len)
{
	switch (c->type) {
	case IBEMU_CELL_STR: {
		/* Names and descriptions come from files: escaped, cut. */
		struct ibemu_buf b;
		int n;

		ibemu_buf_init(&b);
		ibemu_buf_escape(&b, c->s, TEXT_CELL_MAX);
		n = snprintf(out, len, "%s", b.err || !b.data ? "?" : b.data);
		ibemu_buf_fini(&b);
		return n;
	}
	case IBEMU_CELL_UINT:
		return snprintf(out, len, "%llu", (unsigned long long)c->u);
	case IBEMU_CELL_REAL:
		if (c->r == (double)(long long)c->r)
			return snprintf(out, len, "%lld", (long long)c->r);
		return snprintf(out, len, "%.2f", c->r);
	default:
		return snprintf(out, len, "-");
	}
}

static void cell_json(const struct ibemu_cell *c, struct ibemu_buf *out)
{
	switch (c->type) {
	case IBEMU_CELL_STR:
		ibemu_buf_json_string(out, c->s);
		break;
	case IBEMU_CELL_UINT:
		ibemu_buf_printf(out, "%llu", (unsigned long long)c->u);
		break;
	case IBEMU_CELL_REAL:
		ibemu_buf_printf(out, "%.10g", c->r);
		break;
	default:
		ibemu_buf_puts(out, "null");
	}
}

static void render_text(const struct ibemu_table *t, struct ibemu_buf *out)
{
	size_t *width = calloc(t->ncols, sizeof(*width));
	char tmp[512];
	size_t r, c;

	if (!width) {
		out->err = -ENOMEM;
		return;
	}
	for (c = 0; c < t->ncols; c++)
		width[c] = strlen(t->cols[c].header);
	for (r = 0; r < t->nrows; r++) {
		for (c = 0; c < t->ncols; c++) {
			int n = cell_text(&t->cells[r * t->ncols + c], tmp,
					  sizeof(tmp));

			if (n > 0 && (size_t)n > width[c])
				width[c] = (size_t)n;
		}
	}
	for (r = 0; r <= t->nrows; r++) {
		for (c = 0; c < t->ncols; c++) {
			const char *text = tmp;
			int last = c + 1 == t->ncols;

			if (r == 0)
				text = t->cols[c].header;
			else
				cell_text(&t->cells[(r - 1) * t->ncols + c],
					  tmp, sizeof(tmp));
			if (t->cols[c].numeric)
				ibemu_buf_printf(out, "%*s", (int)width[c],
						 text);
			else if (last)
				ibemu_buf_puts(out, text);
			else
				ibemu_buf_printf(out, "%-*s", (int)width[c],
						 text);
			ibemu_buf_puts(out, last ? "\n" : "  ");
		}
	}
	free(width);
}

static void render_json_row(const struct ibemu_table *t, size_t r,
			    struct ibemu_buf *out)
{
	size_t c;

	for (c = 0; c < t->ncols; c++) {
		ibemu_buf_puts(out, c ? ", " : "");
		ibemu_buf_json_string(out, t->cols[c].key);
		ibemu_buf_puts(out, ": ");
		cell_json(&t->cells[r * t->ncols + c], out);
	}
}

void ibemu_table_render(const struct ibemu_table *t, const char *fabric,
			int json, struct ibemu_buf *out)
{
	size_t r;

	if (t->err) {
		out->err = t->err;
		return;
	}
	if (!json) {
		render_text(t, out);
		return;
	}
	ibemu_buf_puts(out, "{\"fabric\": ");
	ibemu_buf_json_string(out, fabric);
	ibemu_buf_puts(out, ", ");
	ibemu_buf_json_string(out, t->name);
	ibemu_buf_puts(out, ": [");
	for (r = 0; r < t->nrows; r++) {
		ibemu_buf_puts(out, r ? ",\n  {" : "\n  {");
		render_json_row(t, r, out);
		ibemu_buf_puts(out, "}");
	}
	ibemu_buf_puts(out, t->nrows ? "\n]}\n" : "]}\n");
}

void ibemu_table_render_record(const struct ibemu_table *t, const char *fabric,
			       int json, struct ibemu_buf *out)
{
	char tmp[512];
	size_t c, width = 0;

	if (t->err || t->nrows < 1) {
		out->err = t->err ? t->err : -EINVAL;
		return;
	}
	if (json) {
		/* A record that names its fabric itself says it once. */
		ibemu_buf_puts(out, "{");
		if (strcmp(t->cols[0].key, "fabric")) {
			ibemu_buf_puts(out, "\"fabric\": ");
			ibemu_buf_json_string(out, fabric);
			ibemu_buf_puts(out, ", ");
		}
		render_json_row(t, 0, out);
		ibemu_buf_puts(out, "}\n");
		return;
	}
	for (c = 0; c < t->ncols; c++)
		if (strlen(t->cols[c].header) > width)
			width = strlen(t->cols[c].header);
	for (c = 0; c < t->ncols; c++) {
		cell_text(&t->cells[c], tmp, sizeof(tmp));
		ibemu_buf_printf(out, "%s:%*s %s\n", t->cols[c].header,
				 (int)(width - strlen(t->cols[c].header)), "",
				 tmp);
	}
}

void ibemu_table_render_record_rows(const struct ibemu_table *rec,
				    const struct ibemu_table *rows,
				    const char *fabric, int json,
				    struct ibemu_buf *out)
{
	size_t r;

	if (rows->err) {
		out->err = rows->err;
		return;
	}
	if (!json) {
		ibemu_table_render_record(rec, fabric, 0, out);
		if (rows->nrows) {
			ibemu_buf_puts(out, "\n");
			render_text(rows, out);
		}
		return;
	}
	ibemu_table_render_record(rec, fabric, 1, out);
	if (out->err || out->len < 2)
		return;
	/* Reopen the record's object ("}\n") for the rows. */
	out->len -= 2;
	out->data[out->len] = '\0';
	ibemu_buf_puts(out, ", ");
	ibemu_buf_json_string(out, rows->name);
	ibemu_buf_puts(out, ": [");
	for (r = 0; r < rows->nrows; r++) {
		ibemu_buf_puts(out, r ? ",\n  {" : "\n  {");
		render_json_row(rows, r, out);
		ibemu_buf_puts(out, "}");
	}
	ibemu_buf_puts(out, rows->nrows ? "\n]}\n" : "]}\n");
}

void ibemu_table_render_many(const struct ibemu_table *const *t, size_t n,
			     const char *fabric, int json,
			     struct ibemu_buf *out)
{
	size_t i, r, shown = 0;

	for (i = 0; i < n; i++) {
		if (t[i]->err) {
			out->err = t[i]->err;
			return;
		}
	}
	if (!json) {
		for (i = 0; i < n; i++) {
			if (!t[i]->nrows)
				continue;
			if (shown++)
				ibemu_buf_puts(out, "\n");
			render_text(t[i], out);
		}
		return;
	}
	ibemu_buf_puts(out, "{\"fabric\": ");
	ibemu_buf_json_string(out, fabric);
	for (i = 0; i < n; i++) {
		ibemu_buf_puts(out, ",\n");
		ibemu_buf_json_string(out, t[i]->name);
		ibemu_buf_puts(out, ": [");
		for (r = 0; r < t[i]->nrows; r++) {
			ibemu_buf_puts(out, r ? ",\n  {" : "\n  {");
			render_json_row(t[i], r, out);
			ibemu_buf_puts(out, "}");
		}
		ibemu_buf_puts(out, t[i]->nrows ? "\n]" : "]");
	}
	ibemu_buf_puts(out, "}\n");
}
