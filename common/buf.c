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

void ibemu_buf_json_string(struct ibemu_buf *b, const char *s)
{
	const unsigned char *p;

	ibemu_buf_append(b, "\"", 1);
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			ibemu_buf_puts(b, "\\\"");
			break;
		case '\\':
			ibemu_buf_puts(b, "\\\\");
			break;
		case '\n':
			ibemu_buf_puts(b, "\\n");
			break;
		case '\t':
			ibemu_buf_puts(b, "\\t");
			break;
		default:
			if (*p < 0x20)
				ibemu_buf_printf(b, "\\u%04x", *p);
			else
				ibemu_buf_append(b, p, 1);
		}
	}
	ibemu_buf_append(b, "\"", 1);
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
	/* C1 controls (U+0080..U+009F) act on terminals as ESC does. */
	if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
		return 0;
	return n;
}

void ibemu_buf_escape(struct ibemu_buf *b, const char *s, size_t max)
{
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
			ibemu_buf_append(b, p + i, n);
			i += n;
		} else {
			ibemu_buf_printf(b, "\\x%02x", p[i]);
			i++;
		}
	}
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
