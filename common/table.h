/* SPDX-License-Identifier: MIT */
/*
 * Output of inspect commands. A command fills one table (named columns,
 * typed cells) and the table renders either as aligned text for people or
 * as JSON for programs, so the two views can never disagree.
 */
#ifndef IBEMU_TABLE_H
#define IBEMU_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

struct ibemu_table_col {
	const char *key;    /* JSON key: lower_snake_case */
	const char *header; /* text header: UPPER CASE */
	int numeric;	    /* right-aligned in text */
};

enum ibemu_cell_type {
	IBEMU_CELL_NULL,
	IBEMU_CELL_STR,
	IBEMU_CELL_UINT,
	IBEMU_CELL_REAL,
};

struct ibemu_cell {
	enum ibemu_cell_type type;
	uint64_t u;
	double r;
	char *s; /* owned */
};

struct ibemu_table {
	const char *name; /* JSON key of the row array */
	const struct ibemu_table_col *cols;
	size_t ncols;
	struct ibemu_cell *cells; /* row-major */
	size_t nrows, cap_rows;
	size_t cur; /* cells filled in the last row */
	int err;
};

void ibemu_table_init(struct ibemu_table *t, const char *name,
		      const struct ibemu_table_col *cols, size_t ncols);
void ibemu_table_fini(struct ibemu_table *t);
/* Starts a row; then one ibemu_table_* call per column, in order. */
void ibemu_table_row(struct ibemu_table *t);
void ibemu_table_str(struct ibemu_table *t, const char *s);
void ibemu_table_strf(struct ibemu_table *t, const char *fmt, ...)
	IBEMU_PRINTF(2, 3);
void ibemu_table_uint(struct ibemu_table *t, uint64_t v);
/* A real number: two decimals in text (none when whole), full in JSON. */
void ibemu_table_real(struct ibemu_table *t, double v);
void ibemu_table_null(struct ibemu_table *t);

/*
 * Renders rows as text (header line, aligned columns, "-" for null) or as
 * JSON: {"fabric": FABRIC, NAME: [ {key: value, ...}, ... ]}.
 */
void ibemu_table_render(const struct ibemu_table *t, const char *fabric,
			int json, struct ibemu_buf *out);

/*
 * Renders the first row as a record: "Header: value" lines, or one JSON
 * object {"fabric": FABRIC, key: value, ...}.
 */
void ibemu_table_render_record(const struct ibemu_table *t, const char *fabric,
			       int json, struct ibemu_buf *out);

/*
 * Renders the first row of 'rec' as a record followed by every row of
 * 'rows': the record's lines, a blank line and the rows' aligned table
 * (nothing for no rows), or one JSON object {"fabric": FABRIC, key:
 * value, ..., ROWS_NAME: [ {...}, ... ]}.
 */
void ibemu_table_render_record_rows(const struct ibemu_table *rec,
				    const struct ibemu_table *rows,
				    const char *fabric, int json,
				    struct ibemu_buf *out);

/*
 * Renders 'n' tables as one: the text of each that has rows, a blank line
 * between them, or one JSON object {"fabric": FABRIC, NAME: [...], ...}
 * with every table's rows (empty ones too).
 */
void ibemu_table_render_many(const struct ibemu_table *const *t, size_t n,
			     const char *fabric, int json,
			     struct ibemu_buf *out);

#endif
