// SPDX-License-Identifier: MIT
/*
 * The time stamp counter, virtual: prctl(PR_SET_TSC, PR_TSC_SIGSEGV)
 * makes rdtsc and rdtscp fault in this thread and every thread and child
 * it creates (the kernel keeps the setting across fork, clone and exec).
 * The SIGSEGV handler decodes the instruction at the faulting address,
 * writes the virtual time in ticks of the frequency /proc/cpuinfo states
 * ("cpu MHz" of the first processor, which perftest's get_cpu_mhz()
 * reads too) into EDX:EAX (and the TSC_AUX value into ECX for rdtscp)
 * and steps over it. Any other fault goes to the program (signals.c).
 * Async-signal-safe: the clock is atomic loads and adds; no lock, no
 * allocation.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "vtime_int.h"

/* Without a frequency in /proc/cpuinfo, a tick is a nanosecond. */
#define DEFAULT_KHZ 1000000u

static uint64_t tsc_khz = DEFAULT_KHZ;
static int trapping;
/*
 * A late start (threads.c): until every thread traps, a trapped one
 * reads the real TSC ('settled' is 0); then the TSC is the virtual one
 * plus 'shift_ticks', the real reading less the virtual one at the end
 * of the sweep, so that no thread sees it go back.
 */
static int settled = 1;
static int64_t shift_ticks;

static uint64_t cpuinfo_khz(void)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[256];
	double mhz = 0;

	if (!f)
		return DEFAULT_KHZ;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "cpu MHz : %lf", &mhz) == 1)
			break;
	fclose(f);
	return mhz >= 1 ? (uint64_t)(mhz * 1000 + 0.5) : DEFAULT_KHZ;
}

int ibemu__vtime_tsc_trapping(void)
{
	return __atomic_load_n(&trapping, __ATOMIC_ACQUIRE);
}

#if defined(__x86_64__)
/* The TSC at virtual time 'ps': ps * kHz / 10^9, without overflow. */
static uint64_t ticks(uint64_t ps)
{
	return (uint64_t)((unsigned __int128)ps * tsc_khz / 1000000000u);
}

/* What Linux puts in TSC_AUX, which rdtscp returns: node << 12 | cpu. */
static uint32_t tsc_aux(void)
{
	unsigned cpu = 0, node = 0;

	syscall(SYS_getcpu, &cpu, &node, NULL);
	return (node << 12) | (cpu & 0xfff);
}

static void emulate(greg_t *g, int len, int rdtscp)
{
	/* The loader's timing of its relocations is free. */
	uint64_t cost = ibemu__vtime_system_code((uintptr_t)g[REG_RIP])
				? 0
				: IBEMU_VTIME_COST_TSC_PS;
	uint64_t t = ticks(ibemu__vtime_read_ps(cost)) +
		     (uint64_t)__atomic_load_n(&shift_ticks, __ATOMIC_ACQUIRE);

	g[REG_RAX] = (greg_t)(uint32_t)t;
	g[REG_RDX] = (greg_t)(t >> 32);
	if (rdtscp)
		g[REG_RCX] = (greg_t)tsc_aux();
	g[REG_RIP] += len;
}

/*
 * The vDSO's clock_gettime (a real clock: libc's, a sanitizer's, ours
 * for the clocks that stay real) reads the TSC too, and must get the
 * real one; so do the communication runtimes, whose clock reads stay
 * real (clocks.c: UCX's and Open MPI's timers read the TSC, and wait on
 * the wall clock). This thread lets it run free for one read.
 */
static void emulate_real(greg_t *g, int len, int rdtscp)
{
	uint32_t lo, hi, aux = 0;

	prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0);
	if (rdtscp)
		__asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
	else
		__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	if (ibemu__vtime_tsc_trapping())
		prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
	g[REG_RAX] = (greg_t)lo;
	g[REG_RDX] = (greg_t)hi;
	if (rdtscp)
		g[REG_RCX] = (greg_t)aux;
	g[REG_RIP] += len;
}

void ibemu__vtime_tsc_segv_cb(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	greg_t *g = uc->uc_mcontext.gregs;
	const uint8_t *ip = (const uint8_t *)g[REG_RIP];
	int saved = errno;

	/* A general protection fault (SI_KERNEL) at an rdtsc (0F 31) or
	 * rdtscp (0F 01 F9): the CPU fetched these bytes, so they can be
	 * read. */
	if (si->si_code == SI_KERNEL && ip[0] == 0x0f &&
	    (ip[1] == 0x31 || (ip[1] == 0x01 && ip[2] == 0xf9))) {
		if (ibemu__vtime_vdso_code((uintptr_t)ip) ||
		    ibemu__vtime_runtime_code_now((uintptr_t)ip) ||
		    !__atomic_load_n(&settled, __ATOMIC_ACQUIRE))
			emulate_real(g, ip[1] == 0x31 ? 2 : 3, ip[1] == 0x01);
		else
			emulate(g, ip[1] == 0x31 ? 2 : 3, ip[1] == 0x01);
		errno = saved;
		return;
	}
	errno = saved;
	ibemu__vtime_signals_pass(sig, si, uc_);
}

void ibemu__vtime_tsc_start(void)
{
	struct sigaction act = {.sa_sigaction = ibemu__vtime_tsc_segv_cb,
				.sa_flags =
					SA_SIGINFO | SA_ONSTACK | SA_RESTART};
	struct sigaction prev;

	tsc_khz = cpuinfo_khz();
	sigemptyset(&act.sa_mask);
	if (ibemu__vtime_real_sigaction(SIGSEGV, &act, &prev))
		return;
	/* Whatever was there (a sanitizer's handler) is the program's. */
	ibemu__vtime_signals_start(&prev);
	if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0)) {
		ibemu__vtime_real_sigaction(SIGSEGV, &prev, NULL);
		return;
	}
	__atomic_store_n(&trapping, 1, __ATOMIC_RELEASE);
}

/* The real TSC, read with the trap lifted in this thread for it. */
static uint64_t real_tsc(void)
{
	uint32_t lo, hi;

	prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0);
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
	return (uint64_t)hi << 32 | lo;
}

void ibemu__vtime_tsc_start_late(void)
{
	uint64_t real, virt;

	__atomic_store_n(&settled, 0, __ATOMIC_RELEASE);
	ibemu__vtime_tsc_start();
	if (ibemu__vtime_tsc_trapping())
		ibemu__vtime_threads_trap(); /* failing: this thread alone */
	real = real_tsc();
	virt = ticks(ibemu__vtime_read_ps(0));
	if (real > virt)
		__atomic_store_n(&shift_ticks, (int64_t)(real - virt),
				 __ATOMIC_RELEASE);
	__atomic_store_n(&settled, 1, __ATOMIC_RELEASE);
}

void ibemu__vtime_tsc_release(void)
{
	if (ibemu__vtime_tsc_trapping())
		prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0);
}

void ibemu__vtime_tsc_retrap(void)
{
	if (ibemu__vtime_tsc_trapping())
		prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
}
#else
/* No TSC to trap: the clock functions alone are virtual. */
void ibemu__vtime_tsc_start(void)
{
}

void ibemu__vtime_tsc_start_late(void)
{
}

void ibemu__vtime_tsc_release(void)
{
}

void ibemu__vtime_tsc_retrap(void)
{
}
#endif
