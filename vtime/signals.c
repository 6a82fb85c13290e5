// SPDX-License-Identifier: MIT
/*
 * SIGSEGV, shared with the program: the TSC trap needs our handler
 * installed first, and a program may install its own (a JIT, a
 * garbage collector, a crash reporter). sigaction() and signal() are
 * interposed for SIGSEGV only: they read and set the program's
 * disposition, kept here, and the handler passes every fault that is not
 * an rdtsc to it, or to the default action (the fault happens again with
 * the default disposition, so the process dumps core as it would have).
 */
#include <errno.h>
#include <string.h>

#include "vtime_int.h"

static struct sigaction program;

void ibemu__vtime_signals_start(const struct sigaction *prev)
{
	program = *prev;
}

/* Runs the program's handler as the kernel would have: with its mask. */
static void call_program(int sig, siginfo_t *si, void *uc,
			 const struct sigaction *p)
{
	sigset_t old;

	sigprocmask(SIG_BLOCK, &p->sa_mask, &old);
	if (p->sa_flags & SA_SIGINFO)
		p->sa_sigaction(sig, si, uc);
	else
		p->sa_handler(sig);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

void ibemu__vtime_signals_pass(int sig, siginfo_t *si, void *uc)
{
	struct sigaction p = program, dfl = {.sa_handler = SIG_DFL};

	if (p.sa_handler == SIG_IGN && si->si_code <= 0)
		return; /* sent by kill(): ignored, as asked */
	if (p.sa_handler != SIG_DFL && p.sa_handler != SIG_IGN) {
		if (p.sa_flags & SA_RESETHAND)
			program = dfl;
		call_program(sig, si, uc, &p);
		return;
	}
	/* The default action; a fault cannot be ignored (the kernel forces
	 * it), so SIG_IGN is the default for one too. */
	ibemu__vtime_real_sigaction(sig, &dfl, NULL);
	if (si->si_code <= 0)
		raise(sig); /* delivered when the handler returns */
}

static int trapped(int sig)
{
	/* From the moment our handler is in (a late start: before the
	 * clocks turn virtual, while the other threads are trapped). */
	return sig == SIGSEGV && ibemu__vtime_tsc_trapping();
}

IBEMU_VTIME_EXPORT int sigaction(int sig, const struct sigaction *act,
				 struct sigaction *old)
{
	if (!trapped(sig))
		return ibemu__vtime_real_sigaction(sig, act, old);
	if (old)
		*old = program;
	if (act)
		program = *act;
	return 0;
}

IBEMU_VTIME_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction act = {.sa_handler = handler, .sa_flags = SA_RESTART};
	struct sigaction old;

	/* glibc's signal() has BSD semantics: SA_RESTART, not reset. */
	if (handler == SIG_ERR || sig <= 0 || sig >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	sigemptyset(&act.sa_mask);
	sigaddset(&act.sa_mask, sig);
	if (sigaction(sig, &act, &old))
		return SIG_ERR;
	return old.sa_handler;
}
