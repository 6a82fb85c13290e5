/* SPDX-License-Identifier: MIT */
/*
 * What the files of libibemu-vtime.so share (vtime/README.md): the
 * program's virtual clock (vtime.c), the TSC trap (tsc.c), the SIGSEGV
 * handler it shares with the program (signals.c) and the real functions
 * the interposed ones end in.
 */
#ifndef IBEMU_VTIME_INT_H
#define IBEMU_VTIME_INT_H

#include <signal.h>
#include <stdint.h>
#include <time.h>

#define IBEMU_VTIME_EXPORT __attribute__((visibility("default")))

/*
 * What reading a clock costs the program, in virtual time: as much as
 * the read takes on a current x86 server (a vDSO clock_gettime or
 * gettimeofday, time(), which reads one word, an rdtsc). A read that
 * would return the time the previous one returned moves the process's
 * clock by it (vtime.c), so that a program that spins on a clock
 * (perftest's frequency sampling, a busy delay) sees it move.
 */
#define IBEMU_VTIME_COST_CLOCK_PS 20000u
#define IBEMU_VTIME_COST_TIME_PS  5000u
#define IBEMU_VTIME_COST_TSC_PS	  10000u

/* vtime.c: the clock. Safe in a signal handler once initialised. */
void ibemu__vtime_init(void); /* the constructor's */
/* Whether the program's clocks are virtual: a virtual clock was found
 * (the TSC is trapped then), and the constructor has run. */
int ibemu__vtime_on(void);

/*
 * A process under `ibemu exec` whose libibverbs was not loaded at start
 * turns virtual when it comes: it calls ibemu_vtime_verbs_loaded() as it
 * loads (until then the clocks stay real).
 */
void ibemu_vtime_verbs_loaded(uint64_t (*now)(void),
			      void (*compute)(uint64_t ps));
/* What a late start adds to the virtual time on the monotonic clocks. */
int64_t ibemu__vtime_shift_ns(void);
/* The process's virtual time (ps), never less than any value returned
 * before in any thread; if it did not move since the last, 'cost_ps' is
 * charged to the process first, so that it does. */
uint64_t ibemu__vtime_read_ps(uint64_t cost_ps);
/* CLOCK_REALTIME minus CLOCK_MONOTONIC under the virtual clock (ns). */
int64_t ibemu__vtime_realtime_offset_ns(void);

/* The real functions the interposed ones call (resolved at init). */
int ibemu__vtime_real_clock_gettime(clockid_t id, struct timespec *ts);
int ibemu__vtime_real_sigaction(int sig, const struct sigaction *act,
				struct sigaction *old);

/* clocks.c: finds the code of libc, the loader and a sanitizer's
 * runtime, whose own reads are not the program's (async-signal-safe). */
void ibemu__vtime_clocks_start(void);
int ibemu__vtime_system_code(uintptr_t pc);
/* Whether 'pc' is a communication runtime's (its reads stay real); the
 * runtimes' code is looked for again every RUNTIME_LOOK_READS reads. */
#define RUNTIME_LOOK_READS 1024u
int ibemu__vtime_runtime_code(uintptr_t pc);
/* The same without looking again: safe in any signal handler. */
int ibemu__vtime_runtime_code_seen(uintptr_t pc);
/* The same looking again if the loader added objects: for the TSC's
 * handler, whose fault is synchronous. */
int ibemu__vtime_runtime_code_now(uintptr_t pc);
/* Whether 'pc' is in the vDSO, whose clocks must see the real TSC. */
int ibemu__vtime_vdso_code(uintptr_t pc);

/* tsc.c: traps rdtsc/rdtscp (x86-64) and converts virtual time to TSC
 * ticks at the frequency /proc/cpuinfo states. */
void ibemu__vtime_tsc_start(void);
/* The same at a late start: every thread of the process traps, and the
 * TSC goes on from the real one's reading (no thread sees it go back). */
void ibemu__vtime_tsc_start_late(void);
/* Whether this thread's rdtsc traps. */
int ibemu__vtime_tsc_trapping(void);
/* Lets the calling thread read the real TSC (before an exec: the new
 * image's loader reads it before this library is loaded again), and
 * traps it again. */
void ibemu__vtime_tsc_release(void);
void ibemu__vtime_tsc_retrap(void);
/* The SIGSEGV handler: rdtsc or rdtscp emulated, anything else to the
 * program's handler (signals.c). */
void ibemu__vtime_tsc_segv_cb(int sig, siginfo_t *si, void *uc);

/* threads.c: traps the TSC in the calling thread and every other one
 * of the process (a late start), with a private real-time signal. */
#define IBEMU_VTIME_TRAP_SIG (SIGRTMAX - 3)
int ibemu__vtime_threads_trap(void);

/* signals.c: the program's own SIGSEGV disposition, which the interposed
 * sigaction() and signal() read and set while ours stays installed. */
void ibemu__vtime_signals_start(const struct sigaction *program);
void ibemu__vtime_signals_pass(int sig, siginfo_t *si, void *uc);

#endif
