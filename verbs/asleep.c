// SPDX-License-Identifier: MIT
/*
 * Whether a thread of this process sleeps in the kernel: blocked on a
 * lock, a socket or a condition, not computing. waiting.c asks it of a
 * thread that the time rule counts as running while another thread of the
 * process waits in verbs: Open MPI's openib BTL sends its connection
 * messages from two threads under one mutex, and the one blocked on it
 * would hold virtual time still until the daemon's grace period (twice
 * 10 ms, far longer on a loaded host), while the thread that holds the
 * mutex spins on a send completion that only virtual time can bring.
 *
 * Asleep means: not runnable now ('S' or 'D' in its stat: a thread that
 * a loaded host keeps off its CPU is 'R'), blocked on a futex (its wchan:
 * a mutex or a condition, which another thread of the process releases;
 * a sleep of a set length stands for compute, and a socket's peer acts in
 * wall time, both left to the grace period), and not scheduled once since
 * the first look that found it so (its schedstat: time on a CPU and count
 * of time slices unchanged), at least 'need_ns' ago. Where the kernel
 * hides wchan, nothing is taken for asleep.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "verbs_int.h"

/* Reads /proc/self/task/TID/NAME into 'buf' (NUL-terminated); its length
 * or -1. */
static ssize_t task_file(pid_t tid, const char *name, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/%s", (long)tid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* Whether it blocks on a futex: the kernel function it sleeps in. */
static int task_on_futex(pid_t tid)
{
	char buf[64];

	return task_file(tid, "wchan", buf, sizeof(buf)) > 0 &&
	       !strncmp(buf, "futex", 5);
}

/* Its state letter from stat (after the name, which may hold spaces). */
static int task_state(pid_t tid)
{
	char buf[512], *p;

	if (task_file(tid, "stat", buf, sizeof(buf)) < 0)
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

int ibemu__verbs_thread_asleep(pid_t tid, struct ibemu_verbs_nap *nap,
			       uint64_t now_ns, uint64_t need_ns)
{
	unsigned long long run_ns, slices;
	char buf[128];
	int state;

	state = task_state(tid);
	if ((state != 'S' && state != 'D') || !task_on_futex(tid) ||
	    task_file(tid, "schedstat", buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%llu %*u %llu", &run_ns, &slices) != 2) {
		nap->known = 0;
		return 0;
	}
	if (!nap->known || nap->run_ns != run_ns || nap->slices != slices) {
		nap->known = 1;
		nap->run_ns = run_ns;
		nap->slices = slices;
		nap->since_ns = now_ns;
		return 0;
	}
	return now_ns - nap->since_ns >= need_ns;
}
