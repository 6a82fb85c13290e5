// SPDX-License-Identifier: MIT
/*
 * 'ibemu run --mpi': Debian's Open MPI mpirun (ORTE, 4.1) launches the
 * ranks on this machine, as a user's own mpirun would; each rank's program
 * is 'ibemu --fabric F exec --rank-hosts H0,H1,... -- PROG ARGS', which
 * binds it to the HCA of its rank ($OMPI_COMM_WORLD_RANK) and becomes
 * PROG. mpirun forwards signals, ends every rank when one fails and
 * returns the worst status. What Open MPI needs of the host, ibemu gives:
 * /dev/infiniband/uverbs-HCA (devnode/), a sysfs tree (SYSFS_PATH, set by
 * 'exec'), and here the MCA settings that undo Debian's
 * /etc/openmpi/openmpi-mca-params.conf ("pml = ^ucx", "btl =
 * ^uct,openib,ofi"): environment variables, which Open MPI takes before
 * any file, so no system file is edited and the user's own settings win.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "run.h"
#include "run_mpi.h"

/* Sets 'name' to 'value' unless the user set it. */
static int env_default(const char *name, const char *value)
{
	return setenv(name, value, 0) ? -errno : 0;
}

/* The pml the user asked for ($OMPI_MCA_pml), else UCX. */
static const char *pml(void)
{
	const char *p = getenv("OMPI_MCA_pml");

	return p && *p ? p : "ucx";
}

int ibemu__run_mpi_setenv(void)
{
	int ret = env_default("OMPI_MCA_pml", pml());

	if (!ret && !strcmp(pml(), "ob1")) {
		/* openib over the emulated HCAs: IB ports (not only RoCE,
		 * 4.1's default), and no warning that ibemu's vendor and
		 * part IDs are not in its device table. */
		ret = env_default("OMPI_MCA_btl", "self,openib");
		if (!ret)
			ret = env_default("OMPI_MCA_btl_openib_allow_ib", "1");
		if (!ret)
			ret = env_default("OMPI_MCA_btl_openib_warn_no_device_"
					  "params_found",
					  "0");
		/* udcm, openib's connection manager, sends its requests
		 * over UD and resends what is not acknowledged within 0.5 s
		 * of the wall clock (a libevent timer), 25 times, then
		 * fails the connection ("too many retries"): with the
		 * fabric's time far behind the wall clock, as under the
		 * rule with many ranks on few cores, that is a failure of
		 * a fabric that lost nothing. The fabric loses a UD packet
		 * only with no receive posted (udcm keeps 512): 2 s, and
		 * retries for longer than any run waits. */
		if (!ret)
			ret = env_default("OMPI_MCA_btl_openib_connect_udcm_"
					  "timeout",
					  "2000000");
		if (!ret)
			ret = env_default("OMPI_MCA_btl_openib_connect_udcm_"
					  "max_retry",
					  "1000");
		/* Debian's file excludes osc ucx and pt2pt; rdma is left,
		 * over openib. */
		if (!ret)
			ret = env_default("OMPI_MCA_osc", "^ucx,pt2pt");
	} else if (!ret) {
		/* pml ucx carries point-to-point; no BTL but self, so that
		 * nothing goes through shared memory or TCP behind it. */
		ret = env_default("OMPI_MCA_btl", "self");
		if (!ret)
			ret = env_default("OMPI_MCA_osc", "ucx");
		if (!ret)
			ret = env_default("UCX_TLS", "self,rc_verbs,ud_verbs");
		if (!ret)
			ret = env_default("UCX_WARN_UNUSED_ENV_VARS", "n");
		/* UCX's UD resends on its own clock, which stays the wall
		 * clock (vtime/README.md), every 10 ms: many ranks on few
		 * cores keep the fabric's time well behind it, and resent
		 * connection requests and replies crossing the first ones
		 * reach UCX 1.13's UD races (ud_ep.c asserts: "ctl->type ==
		 * UCT_UD_PACKET_CREP", "acked_psn must be smaller than
		 * current_psn"; UCX issues 8620, 9602). The fabric loses
		 * nothing UCX keeps a receive for: a resend is only ever
		 * the wall clock outrunning virtual time. */
		if (!ret)
			ret = env_default("UCX_UD_TIMER_TICK", "2s");
	}
	/* All ranks on one machine, fewer cores than ranks. */
	if (!ret)
		ret = env_default("OMPI_MCA_rmaps_base_oversubscribe", "1");
	if (!ret)
		ret = env_default("OMPI_MCA_hwloc_base_binding_policy", "none");
	if (!ret && geteuid() == 0) {
		/* mpirun refuses root unless told twice. */
		ret = env_default("OMPI_ALLOW_RUN_AS_ROOT", "1");
		if (!ret)
			ret = env_default("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM",
					  "1");
	}
	return ret;
}

void ibemu__run_mpi_argv_free(char **argv)
{
	char **a;

	for (a = argv; a && *a; a++)
		free(*a);
	free(argv);
}

/* "H0,H1,...": the HCA of each rank, in rank order. */
static char *host_list(const struct ibemu_run_mpi *m)
{
	size_t len = 1;
	char *list;
	int i;

	for (i = 0; i < m->n; i++)
		len += strlen(m->hosts[i]) + 1;
	list = malloc(len);
	if (!list)
		return NULL;
	list[0] = '\0';
	for (i = 0; i < m->n; i++) {
		if (i)
			strcat(list, ",");
		strcat(list, m->hosts[i]);
	}
	return list;
}

char **ibemu__run_mpi_argv(const struct ibemu_run_mpi *m, const char *ibemu)
{
	char *head[16], **argv, *hosts = host_list(m);
	size_t nhead = 0, nargs = 0, i;
	int ok = !!hosts;

	while (m->args[nargs])
		nargs++;
	head[nhead++] = strdup("mpirun");
	head[nhead++] = strdup("-np");
	ok &= asprintf(&head[nhead++], "%d", m->n) > 0;
	head[nhead++] = strdup(ibemu);
	head[nhead++] = strdup("--fabric");
	head[nhead++] = strdup(m->fabric);
	head[nhead++] = strdup("exec");
	head[nhead++] = strdup("--rank-hosts");
	head[nhead++] = hosts;
	if (m->wall_clock)
		head[nhead++] = strdup("--wall-clock");
	head[nhead++] = strdup("--");
	argv = calloc(nhead + nargs + 1, sizeof(*argv));
	for (i = 0; i < nhead; i++) {
		ok &= head[i] != NULL;
		if (argv)
			argv[i] = head[i];
		else
			free(head[i]);
	}
	for (i = 0; argv && i < nargs; i++) {
		argv[nhead + i] = strdup(m->args[i]);
		ok &= argv[nhead + i] != NULL;
	}
	if (!ok) {
		ibemu__run_mpi_argv_free(argv);
		return NULL;
	}
	return argv;
}

static volatile sig_atomic_t child_pid;

/* SIGINT, SIGTERM: to mpirun, which ends the ranks and returns. */
static void forward(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

/* The run's pipe for the ranks' final clocks: read end, write end. */
struct clocks {
	int fd[2];
	char buf[4096];
	size_t len;
};

/* Opens the pipe and names it to the ranks; 0, or -errno. */
static int clocks_open(struct clocks *c)
{
	char path[64];

	c->len = 0;
	if (pipe2(c->fd, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	snprintf(path, sizeof(path), "/proc/%ld/fd/%d", (long)getpid(),
		 c->fd[1]);
	if (setenv(IBEMU_RUN_MPI_CLOCK_PATH, path, 1)) {
		close(c->fd[0]);
		close(c->fd[1]);
		return -errno;
	}
	return 0;
}

static void clocks_close(struct clocks *c)
{
	unsetenv(IBEMU_RUN_MPI_CLOCK_PATH);
	close(c->fd[0]);
	close(c->fd[1]);
}

/* Takes the whole lines the ranks have written so far into 'job'. */
static void clocks_read(struct clocks *c, struct ibemu_run_job *job)
{
	char *nl, *p;
	ssize_t n;

	while ((n = read(c->fd[0], c->buf + c->len,
			 sizeof(c->buf) - 1 - c->len)) > 0) {
		c->len += (size_t)n;
		c->buf[c->len] = '\0';
		for (p = c->buf; (nl = strchr(p, '\n')); p = nl + 1) {
			*nl = '\0';
			if (job)
				ibemu__run_clock_line(job, p);
		}
		c->len -= (size_t)(p - c->buf);
		memmove(c->buf, p, c->len);
		if (c->len == sizeof(c->buf) - 1)
			c->len = 0; /* not a line of ours */
	}
}

/*
 * Waits for mpirun, reading the ranks' clocks meanwhile (a pipe holds
 * 64 KiB: a rank's line is written without blocking, and one that finds
 * it full is lost rather than hang the rank). Its exit status.
 */
static int wait_child(pid_t pid, struct clocks *c, struct ibemu_run_job *job)
{
	struct pollfd pf = {.fd = c->fd[0], .events = POLLIN};
	int status;
	pid_t r;

	while ((r = waitpid(pid, &status, WNOHANG)) != pid) {
		if (r < 0 && errno != EINTR)
			return 1;
		poll(&pf, 1, 100);
		clocks_read(c, job);
	}
	clocks_read(c, job);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int ibemu__run_mpi(const struct ibemu_run_mpi *m)
{
	struct sigaction sa = {.sa_handler = forward}, old_int, old_term;
	char exe[4096], **argv;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct clocks clocks;
	pid_t pid;
	int ret;

	if (n < 0)
		return ibemu_cli_fail(1, "run: cannot find this ibemu: %s",
				      strerror(errno));
	exe[n] = '\0';
	if (ibemu__run_mpi_setenv())
		return ibemu_cli_fail(1, "run: %s", strerror(errno));
	ret = clocks_open(&clocks);
	if (ret)
		return ibemu_cli_fail(1, "run: %s", strerror(-ret));
	argv = ibemu__run_mpi_argv(m, exe);
	if (!argv) {
		clocks_close(&clocks);
		return ibemu_cli_fail(1, "out of memory");
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr,
			"ibemu: run: cannot run mpirun: %s (--mpi needs Open "
			"MPI: ./ibemu.sh deps)\n",
			strerror(errno));
		_exit(127);
	}
	ibemu__run_mpi_argv_free(argv);
	if (pid < 0) {
		clocks_close(&clocks);
		return ibemu_cli_fail(1, "run: fork: %s", strerror(errno));
	}
	child_pid = pid;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	ret = wait_child(pid, &clocks, m->job);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	child_pid = 0;
	clocks_close(&clocks);
	return ret;
}
