// SPDX-License-Identifier: MIT
/*
 * What the clients that read the TSC share (vtime-client.c, vtime-late.c,
 * mpi-tsc.c): rdtsc itself, and the TSC's frequency as perftest and
 * vtime/ take it, the "cpu MHz" of /proc/cpuinfo's first processor.
 */
#ifndef IBEMU_TESTS_TSC_READ_H
#define IBEMU_TESTS_TSC_READ_H

#include <stdint.h>
#include <stdio.h>

/* kHz; a tick is a nanosecond without a figure (as in vtime/tsc.c). */
static inline uint64_t tsc_cpuinfo_khz(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];
	double mhz = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "cpu MHz : %lf", &mhz) == 1)
			break;
	if (f)
		fclose(f);
	return mhz >= 1 ? (uint64_t)(mhz * 1000 + 0.5) : 1000000;
}

static inline uint64_t tsc_read(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

#endif
