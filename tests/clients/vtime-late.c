// SPDX-License-Identifier: MIT
/*
 * The TSC of a program whose libibverbs comes late, as Open MPI's does
 * (vtime/threads.c, integration.vtime): not linked with it, the program
 * starts threads, reads the real TSC, then loads libibverbs with
 * dlopen() (its clocks turn virtual then) and, in each thread that ran
 * before, in one created after and in the main thread, one at a time,
 * reads rdtsc and clock_gettime(MONOTONIC) around 1 us of declared
 * computation (ibemu_compute_ps, found with dlsym). Each must move
 * exactly as ibemu_now_ps() did, every thread's TSC must stand at the
 * same offset from the virtual time, and none may read less than the
 * real TSC read before the switch. An rdtsc made by a communication
 * runtime's code (mca_vtime_probe.so, named as Open MPI's components are)
 * reads the real TSC: it runs on across a 20 ms sleep, which the virtual
 * one does not see; so does that of a thread that blocks every signal
 * (it is left untrapped). Prints "CLOCK DELTA ns" per check (the same
 * every run), "FAIL: ..." lines, and exits with the number of failures.
 *
 * usage: vtime-late threads  the above
 *        vtime-late fork     the above, then again in a fork()ed child
 *        vtime-late exec     the above, then execv()s 'vtime-late threads'
 *        vtime-late segv     its own SIGSEGV handler, installed before the
 *                            switch and another after: each gets a NULL
 *                            dereference; rdtsc stays virtual
 */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vtime-clients.h"
#include "verbs-check.h"

#define EARLY_THREADS 3
/* The turn of the thread that blocks every signal. */
#define BLOCKED_TURN 100
#define STEP_PS	     1000000u /* the computation each check declares */

static uint64_t (*now_ps)(void);
static void (*compute_ps)(uint64_t ps);
static uint64_t khz, before_switch;
/* The TSC's offset from the virtual time, as the first check found it. */
static int64_t offset;
static int have_offset;

static uint64_t ticks(uint64_t ps)
{
	return (uint64_t)((unsigned __int128)ps * khz / 1000000000u);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One thread's check, 'who' naming it. */
static void check(const char *who)
{
	uint64_t t0 = tsc_read(), v0 = now_ps(), m0 = mono_ns();
	uint64_t t1, v1, m1;
	int64_t off = (int64_t)(t0 - ticks(v0));

	compute_ps(STEP_PS);
	t1 = tsc_read();
	v1 = now_ps();
	m1 = mono_ns();
	CHECK(t0 > before_switch, "%s: rdtsc %llu, before the switch %llu", who,
	      (unsigned long long)t0, (unsigned long long)before_switch);
	CHECK(t1 - t0 == ticks(v1) - ticks(v0),
	      "%s: rdtsc moved %llu ticks, the virtual clock %llu", who,
	      (unsigned long long)(t1 - t0),
	      (unsigned long long)(ticks(v1) - ticks(v0)));
	if (!have_offset) {
		offset = off;
		have_offset = 1;
	}
	CHECK(off == offset, "%s: TSC at %lld ticks from virtual, others %lld",
	      who, (long long)off, (long long)offset);
	printf("%s rdtsc %llu ns monotonic %llu ns\n", who,
	       (unsigned long long)((v1 - v0) / 1000),
	       (unsigned long long)(m1 - m0));
	CHECK(m1 - m0 == v1 / 1000 - v0 / 1000,
	      "%s: monotonic moved %llu ns, the virtual clock %llu", who,
	      (unsigned long long)(m1 - m0),
	      (unsigned long long)(v1 / 1000 - v0 / 1000));
}

/* The threads take turns: 'turn' is the index of the one to check. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int turn = -1, started;

static void *thread_main(void *arg)
{
	int me = (int)(intptr_t)arg;
	char who[32];

	snprintf(who, sizeof(who), "thread%d", me);
	pthread_mutex_lock(&lock);
	started++;
	pthread_cond_broadcast(&cond);
	while (turn != me)
		pthread_cond_wait(&cond, &lock);
	check(who);
	turn = -1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/*
 * A thread that blocks the signals (as one waiting in sigwait does) is
 * left untrapped (vtime/threads.c): its TSC runs on across a sleep.
 */
static void *blocked_main(void *arg)
{
	struct timespec nap = {0, 20000000};
	sigset_t all;
	uint64_t r0, r1;

	(void)arg;
	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&lock);
	started++;
	pthread_cond_broadcast(&cond);
	while (turn != BLOCKED_TURN)
		pthread_cond_wait(&cond, &lock);
	r0 = tsc_read();
	nanosleep(&nap, NULL);
	r1 = tsc_read();
	CHECK(r1 - r0 >= ticks(20000000000u),
	      "a thread blocking signals: its TSC moved %llu across 20 ms",
	      (unsigned long long)(r1 - r0));
	printf("blocked rdtsc real\n");
	turn = -1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void take_turn(int who)
{
	pthread_mutex_lock(&lock);
	turn = who;
	pthread_cond_broadcast(&cond);
	while (turn != -1)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

static int load_verbs(void)
{
	void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL);

	now_ps = h ? (uint64_t(*)(void))dlsym(h, "ibemu_now_ps") : NULL;
	compute_ps =
		h ? (void (*)(uint64_t))dlsym(h, "ibemu_compute_ps") : NULL;
	if (!now_ps || !compute_ps) {
		printf("FAIL: ibemu's libibverbs not found: %s\n", dlerror());
		return -1;
	}
	return 0;
}

/* A runtime's rdtsc reads the real TSC: a sleep of 20 ms moves it by
 * 20 ms of ticks at least; the program's moves by what its reads cost. */
static void check_runtime(void)
{
	char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	char *slash;
	void *h = NULL;
	uint64_t (*probe)(void) = NULL;
	struct timespec nap = {0, 20000000};
	uint64_t r0, r1, t0, t1;

	/* Beside this program. */
	if (n > 0) {
		path[n] = 0;
		slash = strrchr(path, '/');
		strcpy(slash ? slash + 1 : path, "mca_vtime_probe.so");
		h = dlopen(path, RTLD_NOW);
	}
	if (h)
		probe = (uint64_t(*)(void))dlsym(h, "mca_vtime_probe_rdtsc");
	if (!probe) {
		printf("FAIL: mca_vtime_probe.so: %s\n", dlerror());
		failures++;
		return;
	}
	r0 = probe();
	t0 = tsc_read();
	nanosleep(&nap, NULL);
	r1 = probe();
	t1 = tsc_read();
	CHECK(r1 - r0 >= ticks(20000000000u),
	      "the runtime's TSC moved %llu ticks across 20 ms, want %llu",
	      (unsigned long long)(r1 - r0),
	      (unsigned long long)ticks(20000000000u));
	CHECK(t1 - t0 < ticks(1000000u),
	      "the program's TSC moved %llu ticks across a sleep",
	      (unsigned long long)(t1 - t0));
	printf("runtime rdtsc real\n");
}

static int threads(void)
{
	pthread_t early[EARLY_THREADS], late, blocked;
	int i;

	for (i = 0; i < EARLY_THREADS; i++)
		if (pthread_create(&early[i], NULL, thread_main,
				   (void *)(intptr_t)i))
			return 1;
	if (pthread_create(&blocked, NULL, blocked_main, NULL))
		return 1;
	pthread_mutex_lock(&lock);
	while (started < EARLY_THREADS + 1)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	before_switch = tsc_read();
	if (load_verbs())
		return 1;
	for (i = 0; i < EARLY_THREADS; i++)
		take_turn(i);
	if (pthread_create(&late, NULL, thread_main,
			   (void *)(intptr_t)EARLY_THREADS))
		return 1;
	take_turn(EARLY_THREADS);
	take_turn(BLOCKED_TURN);
	for (i = 0; i < EARLY_THREADS; i++)
		pthread_join(early[i], NULL);
	pthread_join(late, NULL);
	pthread_join(blocked, NULL);
	check("main");
	check_runtime();
	return 0;
}

/* The check in a fork()ed child: its failures. */
static int child_check(void)
{
	check("child");
	fflush(stdout);
	return failures;
}

static sigjmp_buf back;
static int faults[2];

static void segv_cb(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	faults[0] += si->si_addr == NULL && si->si_code == SEGV_MAPERR;
	siglongjmp(back, 1);
}

static void segv2_cb(int sig)
{
	(void)sig;
	faults[1]++;
	siglongjmp(back, 1);
}

static int own_handler(void)
{
	struct sigaction sa = {.sa_sigaction = segv_cb, .sa_flags = SA_SIGINFO},
			 old;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	before_switch = tsc_read();
	if (load_verbs())
		return 1;
	CHECK(!sigaction(SIGSEGV, NULL, &old) && old.sa_sigaction == segv_cb,
	      "sigaction gives back %p, want %p", (void *)old.sa_sigaction,
	      (void *)segv_cb);
	check("before");
	if (!sigsetjmp(back, 1))
		store_to_null();
	check("after-fault");
	signal(SIGSEGV, segv2_cb);
	if (!sigsetjmp(back, 1))
		store_to_null();
	check("after-second");
	CHECK(faults[0] == 1 && faults[1] == 1,
	      "handlers got %d and %d faults, want 1 and 1", faults[0],
	      faults[1]);
	printf("handlers got the faults\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc == 2 ? argv[1] : "";
	char *args[] = {argv[0], (char *)"threads", NULL};

	setvbuf(stdout, NULL, _IOLBF, 0);
	khz = tsc_cpuinfo_khz();
	if (!strcmp(mode, "threads"))
		return threads() || failures;
	if (!strcmp(mode, "fork"))
		return threads() || failures || in_child(child_check);
	if (!strcmp(mode, "exec")) {
		if (threads() || failures)
			return 1;
		fflush(stdout);
		execv(argv[0], args);
		return 127;
	}
	if (!strcmp(mode, "segv"))
		return own_handler() || failures;
	fprintf(stderr, "usage: vtime-late threads|fork|exec|segv\n");
	return 2;
}
