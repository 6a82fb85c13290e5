// SPDX-License-Identifier: MIT
/* The table renderer: aligned text and JSON from the same cells. */
#include "table.h"
#include "unit.h"

static const struct ibemu_table_col cols[] = {
	{"name", "NAME", 0},
	{"count", "COUNT", 1},
	{"peer", "PEER", 0},
};

static void fill(struct ibemu_table *t)
{
	ibemu_table_init(t, "things", cols, IBEMU_ARRAY_SIZE(cols));
	ibemu_table_row(t);
	ibemu_table_str(t, "a\"b");
	ibemu_table_uint(t, 7);
	ibemu_table_null(t);
	ibemu_table_row(t);
	ibemu_table_str(t, "longer");
	ibemu_table_uint(t, 12345);
	ibemu_table_strf(t, "%s:%d", "sw", 3);
}

static void test_text(void)
{
	struct ibemu_table t;
	struct ibemu_buf b;

	fill(&t);
	ibemu_buf_init(&b);
	ibemu_table_render(&t, "f", 0, &b);
	T_EQ_STR(b.data, "NAME    COUNT  PEER\n"
			 "a\"b         7  -\n"
			 "longer  12345  sw:3\n");
	ibemu_buf_fini(&b);
	ibemu_table_fini(&t);
}

static void test_json(void)
{
	struct ibemu_table t;
	struct ibemu_buf b;

	fill(&t);
	ibemu_buf_init(&b);
	ibemu_table_render(&t, "f", 1, &b);
	T_EQ_STR(b.data,
		 "{\"fabric\": \"f\", \"things\": [\n"
		 "  {\"name\": \"a\\\"b\", \"count\": 7, \"peer\": null},\n"
		 "  {\"name\": \"longer\", \"count\": 12345, \"peer\": "
		 "\"sw:3\"}\n"
		 "]}\n");
	ibemu_buf_reset(&b);
	ibemu_table_render_record(&t, "f", 1, &b);
	T_EQ_STR(b.data,
		 "{\"fabric\": \"f\", \"name\": \"a\\\"b\", \"count\": 7, "
		 "\"peer\": null}\n");
	ibemu_buf_reset(&b);
	ibemu_table_render_record(&t, "f", 0, &b);
	T_EQ_STR(b.data, "NAME:  a\"b\nCOUNT: 7\nPEER:  -\n");
	ibemu_buf_fini(&b);
	ibemu_table_fini(&t);
}

static void test_empty(void)
{
	struct ibemu_table t;
	struct ibemu_buf b;

	ibemu_table_init(&t, "things", cols, IBEMU_ARRAY_SIZE(cols));
	ibemu_buf_init(&b);
	ibemu_table_render(&t, "f", 1, &b);
	T_EQ_STR(b.data, "{\"fabric\": \"f\", \"things\": []}\n");
	ibemu_buf_fini(&b);
	ibemu_table_fini(&t);
}

/* Several tables as one: text skips the empty ones, JSON keeps them. */
static void test_many(void)
{
	static const struct ibemu_table_col one[] = {{"n", "N", 1}};
	struct ibemu_table a, e, c;
	const struct ibemu_table *all[] = {&a, &e, &c};
	struct ibemu_buf b;

	ibemu_table_init(&a, "a", one, 1);
	ibemu_table_init(&e, "e", one, 1);
	ibemu_table_init(&c, "c", cols, IBEMU_ARRAY_SIZE(cols));
	ibemu_table_row(&a);
	ibemu_table_uint(&a, 12);
	ibemu_table_row(&c);
	ibemu_table_str(&c, "x");
	ibemu_table_uint(&c, 3);
	ibemu_table_null(&c);
	ibemu_buf_init(&b);
	ibemu_table_render_many(all, 3, "f", 0, &b);
	T_EQ_STR(b.data, " N\n12\n\nNAME  COUNT  PEER\nx         3  -\n");
	ibemu_buf_fini(&b);
	ibemu_buf_init(&b);
	ibemu_table_render_many(all, 3, "f", 1, &b);
	T_EQ_STR(b.data, "{\"fabric\": \"f\",\n\"a\": [\n  {\"n\": 12}\n],\n"
			 "\"e\": [],\n\"c\": [\n  {\"name\": \"x\", "
			 "\"count\": 3, \"peer\": null}\n]}\n");
	ibemu_buf_fini(&b);
	ibemu_table_fini(&a);
	ibemu_table_fini(&e);
	ibemu_table_fini(&c);
}

void ibemu_test_register_common_table(void)
{
	static const struct ibemu_test tests[] = {
		{"text", test_text}, {"json", test_json}, {"empty", test_empty},
		{"many", test_many}, {NULL, NULL},
	};

	ibemu_test_add_suite("common.table", tests);
}
