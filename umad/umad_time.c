// SPDX-License-Identifier: MIT
/*
 * The virtual clock of a umad process (docs/design.md §3, "umad
 * processes"): the fabric's time when it opened its first port, then the
 * time of each MAD it takes, and of each MAD it sends, stamped a host's
 * MAD cost later. One clock per process, whatever the number of ports.
 */
#include <stdint.h>

#include "umad_int.h"

static uint64_t proc_clock;

void ibemu__umad_clock_at_least(uint64_t t)
{
	uint64_t cur = __atomic_load_n(&proc_clock, __ATOMIC_ACQUIRE);

	while (cur < t &&
	       !__atomic_compare_exchange_n(&proc_clock, &cur, t, 1,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
}

uint64_t ibemu__umad_stamp(void)
{
	return __atomic_add_fetch(&proc_clock, IBEMU_SESS_MAD_SEND_PS,
				  __ATOMIC_ACQ_REL);
}

UMAD_EXPORT uint64_t ibemu_umad_now_ps(void)
{
	return __atomic_load_n(&proc_clock, __ATOMIC_ACQUIRE);
}

UMAD_EXPORT void ibemu_umad_compute_ps(uint64_t ps)
{
	__atomic_fetch_add(&proc_clock, ps, __ATOMIC_ACQ_REL);
}
