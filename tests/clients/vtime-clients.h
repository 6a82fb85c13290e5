// SPDX-License-Identifier: MIT
/*
 * What the clients of the program's clocks share (vtime-client.c,
 * vtime-late.c, mpi-tsc.c): rdtsc itself, the TSC's frequency as
 * perftest and vtime/ take it (the "cpu MHz" of /proc/cpuinfo's first
 * processor), a check run in a fork()ed child, and a fault.
 */
#ifndef IBEMU_TESTS_VTIME_CLIENTS_H
#define IBEMU_TESTS_VTIME_CLIENTS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* 'fn' in a child made by fork(): its exit status (128 + a signal). */
static inline int in_child(int (*fn)(void))
{
	int st;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(fn());
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A store to address 0, as the hardware sees it: written in assembly so
 * that the sanitizers of an instrumented build do not catch it first. */
static inline void store_to_null(void)
{
	__asm__ volatile("movl $1, 0" ::: "memory");
}

#endif
