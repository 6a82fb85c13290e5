// SPDX-License-Identifier: MIT
/*
 * The quiescence time rule (DESIGN.md section 3) as the verbs streams see
 * it: hand-offs counted on the context page, the horizon the running
 * processes leave the engine and the grace period of a process that runs
 * without verbs calls (sess_verbs_bell.c wakes the engine when the
 * horizon moves).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sess_verbs_int.h"

/* Whether the process said it waits, having seen every hand-off. */
static int is_waiting(const struct ibemu_sess_verbs *v)
{
	return __atomic_load_n(&v->page->wait_seq, __ATOMIC_SEQ_CST) ==
	       v->handed + 1;
}

/*
 * A hand-off begins: bumps 'handing' before anything becomes visible to
 * the process, so that it never claims to wait on a count older than
 * what it saw. Returns whether the process waited.
 */
int ibemu__vs_handoff_begin(struct ibemu_sess_verbs *v)
{
	int was;

	/* A free clock counts nothing: the page's words are the rule's. */
	if (!ibemu__vs_rule_on(vs_daemon(v)))
		return 0;
	was = is_waiting(v);
	__atomic_store_n(&v->page->handing, v->handed + 1, __ATOMIC_SEQ_CST);
	return was;
}

/*
 * Something at virtual time 't' became visible to the process: it runs
 * from now on, with a clock of at least 't' if it was waiting. The engine
 * may still run until 't' plus the doorbell delay.
 */
void ibemu__vs_handoff(struct ibemu_sess_verbs *v, int was_waiting, uint64_t t)
{
	struct ibemu_daemon *d = vs_daemon(v);

	if (!ibemu__vs_rule_on(d))
		return;
	if (was_waiting && t > v->hand_ps)
		v->hand_ps = t;
	v->handed++;
	__atomic_store_n(&v->page->handed, v->handed, __ATOMIC_SEQ_CST);
	if (t + IBEMU_TP_DOORBELL_PS < d->run_cap)
		d->run_cap = t + IBEMU_TP_DOORBELL_PS;
}

/*
 * Whether a thread of process 'pid' other than its main one is runnable
 * ('R' in /proc/PID/task/TID/stat): a worker may run while the main thread
 * sleeps in pthread_join (the library counts waiting per thread).
 */
static int task_runnable(pid_t pid)
{
	char path[64], line[1024], *p;
	struct dirent *e;
	int found = 0;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.' || atol(e->d_name) == (long)pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/task/%.20s/stat",
			 (long)pid, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
		fclose(f);
		found = p && p[1] == ' ' && p[2] == 'R';
	}
	closedir(d);
	return found;
}

/*
 * CPU time (clock ticks, all threads) process 'pid' has used, or 0; in
 * *state 'R' if one of its threads is runnable, else its main thread's
 * state ('S' sleeping...).
 */
static uint64_t cpu_ticks(pid_t pid, char *state)
{
	unsigned long long ut = 0, st = 0;
	char path[64], line[1024], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	/* After the name: state, then 10 fields, then utime and stime. */
	*state = 'R';
	if (!p || sscanf(p + 1,
			 " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu "
			 "%llu",
			 state, &ut, &st) != 3)
		return 0;
	if (*state != 'R' && task_runnable(pid))
		*state = 'R';
	return ut + st;
}

/*
 * The grace period: a running process that has made no verbs call and
 * been handed nothing for IBEMU_GRACE_MS of wall time, twice over, counts
 * as waiting if it used the CPU meanwhile (it spins, on memory an RDMA
 * WRITE fills) or sleeps in the kernel (in anything but verbs: a socket,
 * pause()) in every thread. One runnable but not scheduled (a loaded
 * host) does not: it still runs, as far as the rule knows.
 */
static int grace_over(struct ibemu_sess_verbs *v, uint64_t now_ms)
{
	uint64_t mark, cpu;
	char state;

	mark = __atomic_load_n(&v->page->calls, __ATOMIC_RELAXED) +
	       __atomic_load_n(&v->page->wait_seq, __ATOMIC_RELAXED) +
	       v->handed;
	if (!v->idle_known || mark != v->idle_mark) {
		v->idle_known = 1;
		v->idle_cpu_known = 0;
		v->idle_mark = mark;
		v->idle_since_ms = now_ms;
		return 0;
	}
	if (now_ms - v->idle_since_ms < IBEMU_GRACE_MS)
		return 0;
	cpu = cpu_ticks(v->c->pid, &state);
	if (v->idle_cpu_known && (cpu > v->idle_cpu || state != 'R'))
		return 1;
	v->idle_cpu_known = 1;
	v->idle_cpu = cpu;
	v->idle_since_ms = now_ms;
	return 0;
}

uint64_t ibemu__sess_horizon(struct ibemu_daemon *d, pid_t *presumed)
{
	struct ibemu_sess_server *s = d->sess;
	uint64_t h = UINT64_MAX, clk, now_ms = uv_now(&d->loop);
	struct ibemu_sess_verbs *v;
	struct ibemu_sess_conn *c;

	for (c = s ? s->conns : NULL; c; c = c->next) {
		if (c->kind != IBEMU_SESS_CONN_VERBS || c->closing || !c->verbs)
			continue;
		v = c->verbs;
		if (is_waiting(v)) {
			v->idle_known = 0;
			continue;
		}
		if (grace_over(v, now_ms)) {
			*presumed = c->pid;
			continue;
		}
		clk = __atomic_load_n(&v->page->clock_ps, __ATOMIC_ACQUIRE);
		/* A clock past any stamp is garbage: it must not wrap. */
		if (clk > IBEMU_VERBS_MAX_STAMP_PS)
			clk = IBEMU_VERBS_MAX_STAMP_PS;
		if (clk < v->hand_ps)
			clk = v->hand_ps;
		if (clk + IBEMU_TP_DOORBELL_PS < h)
			h = clk + IBEMU_TP_DOORBELL_PS;
	}
	return h;
}

int ibemu__sess_holder(struct ibemu_daemon *d, uint64_t horizon, pid_t *pid,
		       uint32_t *node)
{
	struct ibemu_sess_server *s = d->sess;
	struct ibemu_sess_verbs *v;
	struct ibemu_sess_conn *c;
	uint64_t clk;

	for (c = s ? s->conns : NULL; c; c = c->next) {
		if (c->kind != IBEMU_SESS_CONN_VERBS || c->closing || !c->verbs)
			continue;
		v = c->verbs;
		if (is_waiting(v))
			continue;
		/* The same bound as the horizon's, without its grace. */
		clk = __atomic_load_n(&v->page->clock_ps, __ATOMIC_ACQUIRE);
		if (clk > IBEMU_VERBS_MAX_STAMP_PS)
			clk = IBEMU_VERBS_MAX_STAMP_PS;
		if (clk < v->hand_ps)
			clk = v->hand_ps;
		if (clk + IBEMU_TP_DOORBELL_PS == horizon) {
			*pid = c->pid;
			*node = v->hca->node;
			return 0;
		}
	}
	return -ENOENT;
}
