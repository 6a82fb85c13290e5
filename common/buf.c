// SPDX-License-Identifier: MIT
/*
 * Growable text buffer used by every renderer (tables, JSON, YAML, the
 * ibnetdiscover format) so output is built once and written in one piece.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "buf.h"

void ibemu_buf_init(struct ibemu_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void ibemu_buf_fini(struct ibemu_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

void ibemu_buf_reset(struct ibemu_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

static int reserve(struct ibemu_buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (b->err)
		return b->err;
	if (extra > SIZE_MAX / 2 - b->len - 1)
		return b->err = -ENOMEM;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p)
		return b->err = -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

void ibemu_buf_append(struct ibemu_buf *b, const void *data, size_t len)
{
	if (reserve(b, len))
		return;
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void ibemu_buf_puts(struct ibemu_buf *b, const char *s)
{
	ibemu_buf_append(b, s, strlen(s));
}

void ibemu_buf_printf(struct ibemu_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* Length of the valid UTF-8 sequence at 'p' (at most 'left' bytes), or 0. */
static size_t utf8_len(const unsigned char *p, size_t left)
{
	size_t n, i;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (n > left)
		return 0;
	for (i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* Overlong forms, UTF-16 surrogates and code points past U+10FFFF
	 * are not UTF-8 (RFC 3629), and JSON parsers refuse them. */
	if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
	    (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
		return 0;
	/* C1 controls (U+0080..U+009F) act on terminals as ESC does. */
	if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
		return 0;
	return n;
}

/*
 * The bidirectional embeddings, overrides and isolates (U+202A..U+202E,
 * U+2066..U+2069) at a valid 3-byte sequence 'p': printed raw they
 * reorder the rest of the line on a terminal (a name that reads as
 * another; CVE-2021-42574's "Trojan Source"). Returns the code point, or 0.
 */
static unsigned bidi_control(const unsigned char *p, size_t n)
{
	unsigned cp;

	if (n != 3)
		return 0;
	cp = (unsigned)(p[0] & 0x0f) << 12 | (unsigned)(p[1] & 0x3f) << 6 |
	     (p[2] & 0x3f);
	return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)
		       ? cp
		       : 0;
}

void ibemu_buf_escape(struct ibemu_buf *b, const char *s, size_t max)
{
	unsigned cp;
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), i = 0, n;

	while (i < len) {
		if (max && i >= max) {
			ibemu_buf_printf(b, "... (%zu bytes)", len);
			return;
		}
		if (p[i] == '\\') {
			ibemu_buf_puts(b, "\\\\");
			i++;
		} else if (p[i] >= 0x20 && p[i] < 0x7f) {
			ibemu_buf_append(b, p + i, 1);
			i++;
		} else if (p[i] >= 0x80 && (n = utf8_len(p + i, len - i))) {
			if ((cp = bidi_control(p + i, n)))
				ibemu_buf_printf(b, "\\u%04x", cp);
			else
				ibemu_buf_append(b, p + i, n);
			i += n;
		} else {
			ibemu_buf_printf(b, "\\x%02x", p[i]);
			i++;
		}
	}
}

/*
 * JSON text is UTF-8 (RFC 8259 8.1): a byte that is not part of valid
 * UTF-8 becomes U+FFFD, as a decoder replaces it; controls, DEL and the
 * bidi controls are written as \uXXXX, so the parsed string is the real
 * one and the raw text is safe on a terminal.
 */
void ibemu_buf_json_string(struct ibemu_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), i = 0, n;
	unsigned cp;

	ibemu_buf_append(b, "\"", 1);
	while (i < len) {
		if (p[i] == '"' || p[i] == '\\') {
			ibemu_buf_printf(b, "\\%c", p[i]);
		} else if (p[i] == '\n') {
			ibemu_buf_puts(b, "\\n");
		} else if (p[i] == '\t') {
			ibemu_buf_puts(b, "\\t");
		} else if (p[i] < 0x20 || p[i] == 0x7f) {
			ibemu_buf_printf(b, "\\u%04x", p[i]);
		} else if (p[i] >= 0x80) {
			n = utf8_len(p + i, len - i);
			if (!n && p[i] == 0xc2 && i + 1 < len &&
			    (p[i + 1] & 0xc0) == 0x80) /* a C1 control */
				ibemu_buf_printf(b, "\\u%04x", p[++i]);
			else if (!n)
				ibemu_buf_puts(b, "\\ufffd");
			else if ((cp = bidi_control(p + i, n)))
				ibemu_buf_printf(b, "\\u%04x", cp);
			else
				ibemu_buf_append(b, p + i, n);
			i += n ? n - 1 : 0;
		} else {
			ibemu_buf_append(b, p + i, 1);
		}
		i++;
	}
	ibemu_buf_append(b, "\"", 1);
}

char *ibemu_buf_steal(struct ibemu_buf *b)
{
	char *s;

	if (b->err) {
		ibemu_buf_fini(b);
		return NULL;
	}
	if (!b->data)
		return strdup("");
	s = b->data;
	memset(b, 0, sizeof(*b));
	return s;
}
