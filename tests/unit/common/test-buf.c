// SPDX-License-Identifier: MIT
/* Unit tests of the text buffer: escaping bytes for a terminal. */
#include <string.h>

#include "buf.h"
#include "diag.h"
#include "unit.h"

static void expect_escaped(const char *in, size_t max, const char *want)
{
	struct ibemu_buf b;

	ibemu_buf_init(&b);
	ibemu_buf_escape(&b, in, max);
	T_EQ_STR(b.data ? b.data : "", want);
	ibemu_buf_fini(&b);
}

static void test_escape(void)
{
	char big[5000];

	expect_escaped("plain name", 0, "plain name");
	/* ESC and BEL would drive the terminal; a backslash stays readable. */
	expect_escaped("a\033[31mred\007", 0, "a\\x1b[31mred\\x07");
	expect_escaped("back\\slash", 0, "back\\\\slash");
	expect_escaped("tab\tnl\n\x7f", 0, "tab\\x09nl\\x0a\\x7f");
	/* UTF-8 passes; broken sequences and C1 controls do not. */
	expect_escaped("caf\xc3\xa9", 0, "caf\xc3\xa9");
	expect_escaped("x\xc3(", 0, "x\\xc3(");
	expect_escaped("\xc2\x9b"
		       "2J",
		       0,
		       "\\xc2\\x9b"
		       "2J");
	expect_escaped("\xff", 0, "\\xff");
	/* Bidi overrides and isolates would reorder the line they are on;
	 * other characters of that block pass. */
	expect_escaped("ab\xe2\x80\xae"
		       "c",
		       0, "ab\\u202ec");
	expect_escaped("\xe2\x81\xa6x\xe2\x81\xa9", 0, "\\u2066x\\u2069");
	expect_escaped("\xe2\x80\x94", 0, "\xe2\x80\x94");
	/* Surrogates and overlong forms are not UTF-8. */
	expect_escaped("\xed\xa0\x80", 0, "\\xed\\xa0\\x80");
	expect_escaped("\xe0\x80\xaf", 0, "\\xe0\\x80\\xaf");
	/* A huge value is cut and its length told. */
	memset(big, 'n', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	expect_escaped(big, 4, "nnnn... (4999 bytes)");
	expect_escaped("four", 4, "four");
}

static void expect_json(const char *in, const char *want)
{
	struct ibemu_buf b;

	ibemu_buf_init(&b);
	ibemu_buf_json_string(&b, in);
	T_EQ_STR(b.data ? b.data : "", want);
	ibemu_buf_fini(&b);
}

/* JSON output stays valid JSON, and safe when printed raw. */
static void test_json_string(void)
{
	expect_json("a\"b\\c\n", "\"a\\\"b\\\\c\\n\"");
	expect_json("\033[2J\x7f", "\"\\u001b[2J\\u007f\"");
	expect_json("caf\xc3\xa9", "\"caf\xc3\xa9\"");
	expect_json("x\xff\xc3(", "\"x\\ufffd\\ufffd(\"");
	expect_json("\xc2\x9b", "\"\\u009b\"");
	expect_json("a\xe2\x80\xae"
		    "b",
		    "\"a\\u202eb\"");
}

static void test_diag_what(void)
{
	T_EQ_STR(ibemu_diag_what("error: shift 4 maps"), "shift 4 maps");
	T_EQ_STR(ibemu_diag_what("f.yaml:1:2: error: x"),
		 "f.yaml:1:2: error: x");
}

void ibemu_test_register_common_buf(void)
{
	static const struct ibemu_test tests[] = {
		{"escape", test_escape},
		{"json_string", test_json_string},
		{"diag_what", test_diag_what},
		{NULL, NULL},
	};

	ibemu_test_add_suite("common.buf", tests);
}
