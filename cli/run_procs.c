// SPDX-License-Identifier: MIT
/*
 * The supervisor of 'ibemu run': forks each rank (which binds to its HCA
 * as 'ibemu exec' does and becomes its program, in a process group of its
 * own), copies the ranks' output to ours a whole line at a time with the
 * rank in front, and ends every rank (SIGTERM to its group, SIGKILL after
 * IBEMU_RUN_GRACE_MS) when one fails or when the run itself is signalled.
 * Signals reach the poll loop through a pipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "run.h"
#include "sess_proto.h"

/* A partial line longer than this goes out without waiting for its end. */
#define LINE_MAX_BYTES (1u << 20)

/* One output pipe of one rank and the partial line read from it. */
struct out_pipe {
	int fd; /* read end, -1 once closed */
	int to; /* 1 or 2 */
	int rank;
	char *buf;
	size_t len, cap;
};

static int sig_pipe[2] = {-1, -1};
/* The ranks' final clocks come in on this pipe (verbs/clock.c). */
static int clock_pipe[2] = {-1, -1};

static void sig_cb(int sig)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;

	if (write(sig_pipe[1], &b, 1) < 0) {
		/* The pipe is full: a wake-up is pending anyway. */
	}
	errno = saved;
}

int ibemu__run_rank_setenv(struct ibemu_run_rank *r, const char *name,
			   const char *fmt, ...)
{
	va_list ap;
	char *v;
	int n;

	if (r->nenv >= IBEMU_RUN_MAX_ENV)
		return -E2BIG;
	va_start(ap, fmt);
	n = vasprintf(&v, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	r->env[r->nenv].name = name;
	r->env[r->nenv].value = v;
	r->nenv++;
	return 0;
}

static void write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* our output is gone (EPIPE): drop it */
		p += w;
		n -= (size_t)w;
	}
}

/* Writes 'n' bytes of one line (its newline included, if it has one). */
static void emit(const struct out_pipe *o, const char *line, size_t n,
		 int prefix)
{
	char tag[24];
	int t;

	if (!prefix) {
		write_all(o->to, line, n);
		return;
	}
	t = snprintf(tag, sizeof(tag), "[%d] ", o->rank);
	/* One write per line where it fits, so lines of ranks never mix. */
	if (n <= 4096) {
		char one[4096 + 24 + 1];

		memcpy(one, tag, (size_t)t);
		memcpy(one + t, line, n);
		if (line[n - 1] != '\n')
			one[t + n++] = '\n';
		write_all(o->to, one, (size_t)t + n);
		return;
	}
	write_all(o->to, tag, (size_t)t);
	write_all(o->to, line, n);
	if (line[n - 1] != '\n')
		write_all(o->to, "\n", 1);
}

/* Emits the whole lines buffered; with 'all', the partial one too. */
static void emit_lines(struct out_pipe *o, int prefix, int all)
{
	size_t start = 0, i;

	for (i = 0; i < o->len; i++) {
		if (o->buf[i] != '\n')
			continue;
		emit(o, o->buf + start, i + 1 - start, prefix);
		start = i + 1;
	}
	if (start < o->len && (all || o->len - start >= LINE_MAX_BYTES)) {
		emit(o, o->buf + start, o->len - start, prefix);
		start = o->len;
	}
	memmove(o->buf, o->buf + start, o->len - start);
	o->len -= start;
}

static void pipe_close(struct out_pipe *o, int prefix)
{
	if (o->fd < 0)
		return;
	emit_lines(o, prefix, 1);
	close(o->fd);
	o->fd = -1;
}

/* Reads what the pipe has; closes it at EOF. */
static void pipe_read(struct out_pipe *o, int prefix)
{
	ssize_t n;

	for (;;) {
		if (o->cap - o->len < 65536) {
			size_t cap = o->cap ? o->cap * 2 : 131072;
			char *b = realloc(o->buf, cap);

			if (!b) {
				emit_lines(o, prefix, 1);
				if (o->cap - o->len < 65536)
					return;
			} else {
				o->buf = b;
				o->cap = cap;
			}
		}
		n = read(o->fd, o->buf + o->len, o->cap - o->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			pipe_close(o, prefix);
			return;
		}
		o->len += (size_t)n;
		if ((size_t)n < 65536)
			break;
	}
	emit_lines(o, prefix, 0);
}

static int signals_catch(int on)
{
	static const int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP};
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on ? sig_cb : SIG_DFL;
	sa.sa_flags = on ? SA_RESTART | SA_NOCLDSTOP : 0;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL))
			return -errno;
	signal(SIGPIPE, on ? SIG_IGN : SIG_DFL);
	return 0;
}

/* The child: becomes rank 'r'. Never returns. */
static void rank_child(const struct ibemu_run_job *job,
		       const struct ibemu_run_rank *r, int out, int err,
		       pid_t parent)
{
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	struct stat st;
	sigset_t none;
	unsigned i;
	int ret;

	/* Signals were blocked across the fork: a SIGTERM for the child must
	 * not reach the parent's handler (and its pipe) in the child. */
	signals_catch(0);
	close(sig_pipe[0]);
	close(sig_pipe[1]);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setpgid(0, 0);
	/* 'ibemu run' killed outright (SIGKILL) takes its ranks with it. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(1);
	close(clock_pipe[0]);
	if (clock_pipe[1] >= 0 && !fstat(clock_pipe[1], &st)) {
		char var[48];

		fcntl(clock_pipe[1], F_SETFD, 0); /* the program keeps it */
		snprintf(var, sizeof(var), "%d:%llu", clock_pipe[1],
			 (unsigned long long)st.st_ino);
		setenv(IBEMU_SESS_ENV_CLOCK_FD, var, 1);
	}
	/* The ranks are not in the terminal's foreground group: a read of
	 * it would stop them. Their input is empty. */
	if (null >= 0)
		dup2(null, 0);
	dup2(out, 1);
	dup2(err, 2);
	for (i = 0; i < r->nenv; i++)
		if (setenv(r->env[i].name, r->env[i].value, 1))
			_exit(ibemu_cli_fail(1, "run: %s", strerror(errno)));
	ret = ibemu_cli_exec_prepare(job->fabric, r->host, job->wall_clock,
				     job->vstart);
	if (ret)
		_exit(ret);
	fflush(NULL);
	execvp(r->argv[0], r->argv);
	_exit(ibemu_cli_fail(127, "run: cannot run '%s': %s", r->argv[0],
			     strerror(errno)));
}

static int rank_start(const struct ibemu_run_job *job, struct ibemu_run_rank *r,
		      struct out_pipe *o)
{
	int out[2], err[2];
	sigset_t all, old;
	pid_t pid, parent;

	if (pipe2(out, O_CLOEXEC))
		return -errno;
	if (pipe2(err, O_CLOEXEC)) {
		close(out[0]);
		close(out[1]);
		return -errno;
	}
	fflush(NULL);
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	parent = getpid();
	pid = fork();
	if (pid == 0)
		rank_child(job, r, out[1], err[1], parent);
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(out[1]);
	close(err[1]);
	if (pid < 0) {
		close(out[0]);
		close(err[0]);
		return -errno;
	}
	setpgid(pid, pid); /* also in the child: whichever runs first */
	r->pid = pid;
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	fcntl(err[0], F_SETFL, O_NONBLOCK);
	o[0] = (struct out_pipe){.fd = out[0], .to = 1, .rank = r->rank};
	o[1] = (struct out_pipe){.fd = err[0], .to = 2, .rank = r->rank};
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The status a shell would give for what waitpid() said. */
static int shell_status(int status)
{
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static void say_status(const struct ibemu_run_rank *r)
{
	if (WIFSIGNALED(r->status))
		ibemu_cli_fail(0,
			       "run: rank %d (%s, pid %ld) was killed by "
			       "signal %d (%s)%s",
			       r->rank, r->host, (long)r->pid,
			       WTERMSIG(r->status),
			       strsignal(WTERMSIG(r->status)),
			       WCOREDUMP(r->status) ? ", core dumped" : "");
	else
		ibemu_cli_fail(0,
			       "run: rank %d (%s, pid %ld) exited with "
			       "status %d",
			       r->rank, r->host, (long)r->pid,
			       shell_status(r->status));
}

struct supervisor {
	struct ibemu_run_job *job;
	struct out_pipe *pipes; /* 2 per rank */
	int alive;		/* ranks not waited for */
	int ending;		/* SIGTERM sent; SIGKILL at kill_at */
	uint64_t kill_at;
	int end_sig; /* the signal that ended the run, or 0 */
};

static void end_ranks(struct supervisor *sv, int sig)
{
	struct ibemu_run_rank *r;
	int i;

	for (i = 0; i < sv->job->n; i++) {
		r = &sv->job->ranks[i];
		if (!r->pid || r->exited)
			continue;
		r->ended_by_us = 1;
		kill(-r->pid, sig);
		kill(r->pid, sig); /* if its group was not made yet */
	}
	if (!sv->ending) {
		sv->ending = 1;
		sv->kill_at = now_ms() + IBEMU_RUN_GRACE_MS;
	}
}

static void reap(struct supervisor *sv)
{
	struct ibemu_run_rank *r;
	int status, i;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (i = 0; i < sv->job->n; i++)
			if (sv->job->ranks[i].pid == pid)
				break;
		if (i == sv->job->n)
			continue;
		r = &sv->job->ranks[i];
		r->status = status;
		r->exited = 1;
		sv->alive--;
		if (r->ended_by_us || !shell_status(status))
			continue;
		say_status(r);
		if (!sv->ending && sv->alive) {
			ibemu_cli_fail(0, "run: ending the other %d rank%s",
				       sv->alive, sv->alive == 1 ? "" : "s");
			end_ranks(sv, SIGTERM);
		}
	}
}

static void take_signals(struct supervisor *sv)
{
	unsigned char b[64];
	ssize_t n, i;

	n = read(sig_pipe[0], b, sizeof(b));
	for (i = 0; i < n; i++) {
		if (b[i] == SIGCHLD)
			continue;
		if (!sv->end_sig) {
			sv->end_sig = b[i];
			ibemu_cli_fail(0, "run: %s; ending the ranks",
				       strsignal(b[i]));
		}
		end_ranks(sv, SIGTERM);
	}
	reap(sv);
}

void ibemu__run_clock_line(struct ibemu_run_job *job, const char *line)
{
	unsigned long long end, waited, compute;
	struct ibemu_run_rank *r;
	int rank;

	if (sscanf(line, "%d %llu %llu %llu", &rank, &end, &waited, &compute) !=
	    4)
		return;
	if (end > job->vend)
		job->vend = end;
	if (rank < 0 || rank >= job->n)
		return;
	r = &job->ranks[rank];
	/* A rank's children report too: its own clock is the latest. */
	if (r->reported && r->end_ps >= end)
		return;
	r->reported = 1;
	r->end_ps = end;
	r->waited_ps = waited;
	r->compute_ps = compute;
}

/*
 * Reads what the ranks reported into 'job' (lines may come in pieces);
 * closes the pipe once every process that held it is gone.
 */
static void clocks_read(struct ibemu_run_job *job)
{
	static char buf[4096];
	static size_t len;
	char *nl, *p;
	ssize_t n;

	while ((n = read(clock_pipe[0], buf + len, sizeof(buf) - 1 - len)) >
	       0) {
		len += (size_t)n;
		buf[len] = '\0';
		for (p = buf; (nl = strchr(p, '\n')); p = nl + 1) {
			*nl = '\0';
			ibemu__run_clock_line(job, p);
		}
		len -= (size_t)(p - buf);
		memmove(buf, p, len);
		if (len == sizeof(buf) - 1)
			len = 0; /* not a line of ours */
	}
	if (!n) {
		close(clock_pipe[0]);
		clock_pipe[0] = -1;
	}
}

/* Polls the pipes and the signals once. */
static void supervise_step(struct supervisor *sv)
{
	int n = sv->job->n, i, k = 0, timeout = -1;
	struct pollfd *pf = calloc((size_t)(2 * n + 2), sizeof(*pf));
	int *which = calloc((size_t)(2 * n + 2), sizeof(*which));
	uint64_t t;

	if (!pf || !which) {
		free(pf);
		free(which);
		poll(NULL, 0, 10);
		reap(sv);
		return;
	}
	pf[k].fd = sig_pipe[0];
	pf[k++].events = POLLIN;
	pf[k].fd = clock_pipe[0];
	pf[k++].events = POLLIN;
	for (i = 0; i < 2 * n; i++) {
		if (sv->pipes[i].fd < 0)
			continue;
		which[k] = i;
		pf[k].fd = sv->pipes[i].fd;
		pf[k++].events = POLLIN;
	}
	if (sv->ending) {
		t = now_ms();
		timeout = sv->kill_at > t ? (int)(sv->kill_at - t) : 0;
	}
	if (poll(pf, (nfds_t)k, timeout) > 0) {
		if (pf[0].revents)
			take_signals(sv);
		if (pf[1].revents)
			clocks_read(sv->job);
		for (i = 2; i < k; i++)
			if (pf[i].revents)
				pipe_read(&sv->pipes[which[i]],
					  sv->job->prefix);
	}
	if (sv->ending && sv->kill_at <= now_ms() && sv->alive) {
		ibemu_cli_fail(0,
			       "run: %d rank%s still there after %u ms: "
			       "SIGKILL",
			       sv->alive, sv->alive == 1 ? "" : "s",
			       IBEMU_RUN_GRACE_MS);
		end_ranks(sv, SIGKILL);
		sv->kill_at = UINT64_MAX;
	}
	free(pf);
	free(which);
}

/* The run's status: a signal that ended it, else the worst rank's own. */
static int run_status(const struct supervisor *sv)
{
	int i, worst = 0, s;

	if (sv->end_sig)
		return 128 + sv->end_sig;
	for (i = 0; i < sv->job->n; i++) {
		const struct ibemu_run_rank *r = &sv->job->ranks[i];

		if (!r->pid) {
			worst = worst > 1 ? worst : 1;
			continue;
		}
		if (r->ended_by_us)
			continue;
		s = shell_status(r->status);
		if (s > worst)
			worst = s;
	}
	return worst;
}

int ibemu__run_supervise(struct ibemu_run_job *job)
{
	struct supervisor sv = {.job = job};
	int i, ret = 0;

	sv.pipes = calloc((size_t)job->n * 2, sizeof(*sv.pipes));
	if (!sv.pipes)
		return ibemu_cli_fail(1, "out of memory");
	for (i = 0; i < 2 * job->n; i++)
		sv.pipes[i].fd = -1;
	if (pipe2(clock_pipe, O_CLOEXEC | O_NONBLOCK))
		clock_pipe[0] = clock_pipe[1] = -1;
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) || signals_catch(1)) {
		free(sv.pipes);
		return ibemu_cli_fail(1, "run: %s", strerror(errno));
	}
	for (i = 0; i < job->n && !sv.end_sig; i++) {
		ret = rank_start(job, &job->ranks[i], &sv.pipes[2 * i]);
		if (ret) {
			ibemu_cli_fail(1, "run: cannot start rank %d: %s", i,
				       strerror(-ret));
			end_ranks(&sv, SIGTERM);
			break;
		}
		sv.alive++;
		/* A signal or a failure meanwhile stops the launch. */
		take_signals(&sv);
		if (sv.ending)
			break;
	}
	if (clock_pipe[1] >= 0)
		close(clock_pipe[1]);
	clock_pipe[1] = -1;
	while (sv.alive)
		supervise_step(&sv);
	/* Every rank is gone: what they wrote is in the pipes (a child of
	 * theirs that holds one open is not waited for). */
	for (i = 0; i < 2 * job->n; i++)
		if (sv.pipes[i].fd >= 0) {
			pipe_read(&sv.pipes[i], job->prefix);
			pipe_close(&sv.pipes[i], job->prefix);
		}
	for (i = 0; i < 2 * job->n; i++)
		free(sv.pipes[i].buf);
	free(sv.pipes);
	signals_catch(0);
	close(sig_pipe[0]);
	close(sig_pipe[1]);
	sig_pipe[0] = sig_pipe[1] = -1;
	if (clock_pipe[0] >= 0) {
		clocks_read(job);
		close(clock_pipe[0]);
		clock_pipe[0] = -1;
	}
	return ret ? 1 : run_status(&sv);
}
