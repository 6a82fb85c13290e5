/* SPDX-License-Identifier: MIT */
/*
 * A growable text buffer. Appends never fail visibly: the first allocation
 * failure is remembered in 'err' and later appends are ignored, so a writer
 * checks once at the end (as stdio's ferror does).
 */
#ifndef IBEMU_BUF_H
#define IBEMU_BUF_H

#include <stddef.h>
#include "util.h"

struct ibemu_buf {
	char *data; /* always NUL-terminated once anything was appended */
	size_t len;
	size_t cap;
	int err; /* 0 or -ENOMEM */
};

void ibemu_buf_init(struct ibemu_buf *b);
void ibemu_buf_fini(struct ibemu_buf *b);
void ibemu_buf_reset(struct ibemu_buf *b);
void ibemu_buf_append(struct ibemu_buf *b, const void *data, size_t len);
void ibemu_buf_puts(struct ibemu_buf *b, const char *s);
void ibemu_buf_printf(struct ibemu_buf *b, const char *fmt, ...)
	IBEMU_PRINTF(2, 3);
/*
 * Appends 's' as a JSON string literal, quotes included: controls, DEL,
 * C1 controls and the bidi controls as \uXXXX, bytes that are not valid
 * UTF-8 as U+FFFD, so the output is valid JSON and safe on a terminal.
 */
void ibemu_buf_json_string(struct ibemu_buf *b, const char *s);
/*
 * Appends 's' fit for a terminal: control characters, DEL and bytes that
 * are not part of valid UTF-8 as \xNN (a backslash as \\), the bidi
 * controls (U+202A..U+202E, U+2066..U+2069) as \uXXXX. Past 'max'
 * bytes of 's' (0: no limit) it stops and appends "... (N bytes)", so a
 * huge value read from a file is never echoed whole.
 */
void ibemu_buf_escape(struct ibemu_buf *b, const char *s, size_t max);
/* Takes the text out of the buffer; the caller frees it. NULL on error. */
char *ibemu_buf_steal(struct ibemu_buf *b);

#endif
