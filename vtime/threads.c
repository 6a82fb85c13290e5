// SPDX-License-Identifier: MIT
/*
 * The TSC trap in every thread of a process whose clocks turn virtual
 * late (an MPI program: its libibverbs comes in MPI_Init, vtime.c). The
 * trap is per thread (prctl(PR_SET_TSC) acts on the caller), and the
 * process's other threads run already: each one found in /proc/self/task
 * gets a private real-time signal whose handler traps it, and the caller
 * waits until each has (or has gone). Threads created meanwhile by one
 * not yet trapped are found by the next pass over /proc/self/task;
 * those created after inherit the trap of their creator. A thread that
 * blocks the signal (a runtime's signal thread in sigwait) is left
 * alone, untrapped: the signal would go to its sigwait. No allocation:
 * the caller may be anywhere (a constructor run by dlopen).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "vtime_int.h"

/* Threads a sweep handles; more are left untrapped. */
#define MAX_THREADS 1024
/* Passes over /proc/self/task, each trapping the threads the last one
 * had not seen. */
#define MAX_PASSES 16
/* How long a pass waits for its threads, in 100 us naps (wall): 2 s. */
#define WAIT_NAPS 20000

static struct {
	pid_t tid;
	int acked;
} threads[MAX_THREADS];
static int nthreads;
static struct sigaction program_rt;

/* What getdents64 returns (the kernel's struct linux_dirent64). */
struct dirent_raw {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static int known(pid_t tid)
{
	for (int i = 0; i < nthreads; i++)
		if (threads[i].tid == tid)
			return 1;
	return 0;
}

/* The handler: this thread traps its TSC and says so. */
static void trap_cb(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	int n = __atomic_load_n(&nthreads, __ATOMIC_ACQUIRE);
	pid_t me = gettid_();

	if (si->si_code != SI_TKILL || si->si_pid != getpid()) {
		/* Not ours: the program's, if it had a handler. */
		errno = saved;
		if (program_rt.sa_flags & SA_SIGINFO)
			program_rt.sa_sigaction(sig, si, uc);
		else if (program_rt.sa_handler != SIG_DFL &&
			 program_rt.sa_handler != SIG_IGN)
			program_rt.sa_handler(sig);
		return;
	}
	prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
	for (int i = 0; i < n; i++)
		if (threads[i].tid == me)
			__atomic_store_n(&threads[i].acked, 1,
					 __ATOMIC_RELEASE);
	errno = saved;
}

/* Whether thread 'tid' blocks 'sig' (its SigBlk in /proc). */
static int blocks(pid_t tid, int sig)
{
	char path[64], buf[2048], *p;
	unsigned long long mask;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1; /* gone */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = 0;
	p = strstr(buf, "\nSigBlk:");
	if (!p || sscanf(p + 8, "%llx", &mask) != 1)
		return 1;
	return (mask >> (sig - 1)) & 1;
}

/* Signals every thread of /proc/self/task not seen before; returns how
 * many it signalled. getdents64 on a stack buffer: no allocation. */
static int signal_new(int sig)
{
	char buf[4096];
	pid_t self = gettid_(), pid = getpid();
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int sent = 0;
	long n;

	if (fd < 0)
		return 0;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct dirent_raw *d = (struct dirent_raw *)(buf + off);
			pid_t tid = (pid_t)strtol(d->name, NULL, 10);

			off += d->reclen;
			if (tid <= 0 || tid == self || known(tid) ||
			    nthreads == MAX_THREADS)
				continue;
			threads[nthreads].tid = tid;
			__atomic_store_n(&nthreads, nthreads + 1,
					 __ATOMIC_RELEASE);
			if (blocks(tid, sig)) {
				threads[nthreads - 1].acked = 1;
				continue;
			}
			if (syscall(SYS_tgkill, pid, tid, sig))
				threads[nthreads - 1].acked = 1; /* gone */
			else
				sent++;
		}
	}
	close(fd);
	return sent;
}

/* Waits until every thread signalled has trapped itself or is gone. */
static void wait_acks(void)
{
	struct timespec nap = {0, 100000};
	pid_t pid = getpid();

	for (int round = 0; round < WAIT_NAPS; round++) {
		int waiting = 0;

		for (int i = 0; i < nthreads; i++) {
			if (__atomic_load_n(&threads[i].acked,
					    __ATOMIC_ACQUIRE))
				continue;
			if (syscall(SYS_tgkill, pid, threads[i].tid, 0))
				threads[i].acked = 1; /* it has exited */
			else
				waiting = 1;
		}
		if (!waiting)
			return;
		nanosleep(&nap, NULL);
	}
}

int ibemu__vtime_threads_trap(void)
{
	struct sigaction act = {.sa_sigaction = trap_cb,
				.sa_flags = SA_SIGINFO | SA_RESTART};
	int sig = IBEMU_VTIME_TRAP_SIG, pass;

	sigemptyset(&act.sa_mask);
	if (ibemu__vtime_real_sigaction(sig, &act, &program_rt))
		return -errno;
	if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0))
		return -errno;
	for (pass = 0; pass < MAX_PASSES && signal_new(sig); pass++)
		wait_acks();
	return 0;
}
