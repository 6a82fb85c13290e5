// SPDX-License-Identifier: MIT
/*
 * ibemu-sm's election order (sm/sm.h sm_outranks(), IBA 14.4.1.1): the
 * higher priority outranks; at equal priorities the lower port GUID does;
 * an SM never outranks itself. OpenSM's osm_sm_is_greater_than() orders
 * them alike, so the two SMs agree on who is master.
 */
#include "sm.h"
#include "unit.h"

static void test_priority_first(void)
{
	/* Priority decides before the GUID, whichever GUID is lower. */
	T_EQ_INT(sm_outranks(15, 0x9000, 0, 0x1000), 1);
	T_EQ_INT(sm_outranks(0, 0x1000, 15, 0x9000), 0);
	T_EQ_INT(sm_outranks(1, 0xffffffffffffffffull, 0, 1), 1);
}

static void test_equal_priority_lower_guid(void)
{
	T_EQ_INT(
		sm_outranks(5, 0x0002c90300001001ull, 5, 0x0002c90300001002ull),
		1);
	T_EQ_INT(
		sm_outranks(5, 0x0002c90300001002ull, 5, 0x0002c90300001001ull),
		0);
	/* Host order, not the wire's: 0x01...00 is above 0x00...ff. */
	T_EQ_INT(sm_outranks(0, 0x0100000000000000ull, 0, 0xffull), 0);
}

static void test_never_itself(void)
{
	T_EQ_INT(sm_outranks(7, 0x1234, 7, 0x1234), 0);
}

void ibemu_test_register_sm_election(void)
{
	static const struct ibemu_test tests[] = {
		{"priority_first", test_priority_first},
		{"equal_priority_lower_guid", test_equal_priority_lower_guid},
		{"never_itself", test_never_itself},
		{NULL, NULL},
	};

	ibemu_test_add_suite("sm.election", tests);
}
