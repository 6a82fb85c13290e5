// SPDX-License-Identifier: MIT
/*
 * The bytes of an RDMA WRITE land in address order, as an HCA's DMA
 * writes reach a host's memory on PCIe (posted writes, in order), so a
 * process that spins on the last byte of a message finds the rest there
 * once it sees that byte. Open MPI's openib BTL (its eager RDMA ring:
 * a flag in the fragment's footer, after the header and the data) and
 * perftest's ib_write_lat (the buffer's last byte) wait so. A plain
 * memcpy does not keep that order: glibc's stores the first 32 bytes of
 * a copy over 256 bytes after everything else (it loads them before the
 * loop, for overlaps), and `rep movsb` orders nothing within itself; a
 * receiver could then read the footer of a new fragment with the header
 * of the old one still in place.
 */
#include <string.h>

#include "sess_verbs_int.h"

/* Stored one byte at a time, in order, after everything before them:
 * any flag a program polls sits within the last few bytes. */
#define LAND_TAIL 64u

void ibemu__vs_land(void *dst, const void *src, size_t len)
{
	size_t body = len > LAND_TAIL ? len - LAND_TAIL : 0, i;
	volatile unsigned char *d = (unsigned char *)dst + body;
	const unsigned char *s = (const unsigned char *)src + body;

	memcpy(dst, src, body);
	/* The body's stores (string or non-temporal ones included) are
	 * visible before any of the tail's. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (i = 0; i < len - body; i++)
		d[i] = s[i];
}
