// SPDX-License-Identifier: MIT
/*
 * An RDMA WRITE's bytes land in address order (attach/sess_verbs_land.c):
 * the body, then the last 64 bytes one by one. Every length, below, at
 * and above those 64, copies exactly and writes nothing around. (The
 * order itself is a property of the stores, which a second thread sees
 * only in a window of nanoseconds: glibc's memcpy passed a reader that
 * spins on the last byte 5,000 times out of 5,000 too, so no test here
 * claims to see it.)
 */
#include "sess_verbs_int.h"
#include "unit.h"

static void test_copies_every_length(void)
{
	static unsigned char src[600], dst[610];
	size_t len, i;
	int bad = 0;

	for (i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i * 13 + 1);
	for (len = 0; len <= sizeof(src); len++) {
		memset(dst, 0xee, sizeof(dst));
		ibemu__vs_land(dst + 3, src, len);
		bad += dst[0] != 0xee || dst[1] != 0xee || dst[2] != 0xee ||
		       memcmp(dst + 3, src, len) || dst[3 + len] != 0xee;
	}
	T_EQ_INT(bad, 0);
}

void ibemu_test_register_attach_land(void)
{
	static const struct ibemu_test tests[] = {
		{"copies_every_length", test_copies_every_length},
		{NULL, NULL},
	};

	ibemu_test_add_suite("attach.land", tests);
}
