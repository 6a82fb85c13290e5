// SPDX-License-Identifier: MIT
/*
 * mca_vtime_probe.so: an rdtsc in a library named as Open MPI's
 * components are ("mca_"), whose clock reads vtime/ leaves real
 * (vtime-late.c loads it).
 */
#include <stdint.h>

__attribute__((visibility("default"))) uint64_t mca_vtime_probe_rdtsc(void);

uint64_t mca_vtime_probe_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}
