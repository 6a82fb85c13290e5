// SPDX-License-Identifier: MIT
/*
 * Commands that start, stop, find and talk to fabric daemons: up, down,
 * status, and the forwarding of inspect commands to the selected fabric.
 */
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "routing.h"
#include "ctl_client.h"
#include "ctl_commands.h"
#include "daemon.h"
#include "fabric_name.h"
#include "ibnd.h"
#include "runtime.h"
#include "yaml.h"

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

int ibemu_cli_load(const char *path, struct ibemu_topo **out)
{
	struct ibemu_diag d;
	size_t i;
	int ret;

	ibemu_diag_init(&d);
	if (has_suffix(path, ".yaml") || has_suffix(path, ".yml"))
		ret = ibemu_yaml_load_file(path, out, &d);
	else
		ret = ibemu_ibnd_import_file(path, out, &d);
	for (i = 0; i < d.nwarnings; i++)
		ibemu_cli_eputs(d.warnings[i]);
	if (ret)
		ibemu_cli_eputs(d.error ? d.error : strerror(-ret));
	ibemu_diag_fini(&d);
	return ret ? 2 : 0;
}

int ibemu_cli_check_name(const char *what, const char *name)
{
	const char *why;
	struct ibemu_buf b;
	int ret;

	if (!ibemu_fabric_name_check(name, &why))
		return 0;
	ibemu_buf_init(&b);
	ibemu_buf_escape(&b, name, 80);
	ret = ibemu_cli_fail(2,
			     "%s: '%s' is not a valid fabric name: %s (a name "
			     "is %s)",
			     what, b.data ? b.data : "", why,
			     IBEMU_FABRIC_NAME_RULE);
	ibemu_buf_fini(&b);
	return ret;
}

int ibemu_cli_timeout(unsigned *ms)
{
	const char *env = getenv("IBEMU_TIMEOUT");
	char *end;
	double s;

	*ms = IBEMU_CLI_TIMEOUT_MS;
	if (!env || !*env)
		return 0;
	errno = 0;
	s = strtod(env, &end);
	if (errno || *end || end == env || !(s >= 0 && s <= 86400))
		return ibemu_cli_fail(2,
				      "IBEMU_TIMEOUT: '%s' is not a number "
				      "of seconds from 0 (wait forever) to "
				      "86400",
				      env);
	*ms = (unsigned)(s * 1000 + 0.5);
	if (!*ms && s > 0)
		*ms = 1;
	return 0;
}

static int list_failed(int err)
{
	if (err == -EINVAL)
		return ibemu_cli_fail(1,
				      "IBEMU_RUNTIME_DIR must be an absolute "
				      "path, not '%s'",
				      getenv("IBEMU_RUNTIME_DIR"));
	return ibemu_cli_fail(1, "cannot list fabrics: %s", strerror(-err));
}

/* The fabric the user named: --fabric, else $IBEMU_FABRIC; NULL if none. */
static const char *named_fabric(const struct ibemu_cli *cli, const char **src)
{
	const char *env = getenv("IBEMU_FABRIC");

	*src = "--fabric";
	if (cli->fabric)
		return cli->fabric;
	*src = "IBEMU_FABRIC";
	return env && *env ? env : NULL;
}

int ibemu_cli_select(struct ibemu_cli *cli, char *out, size_t len)
{
	const char *src, *name = named_fabric(cli, &src);
	char **names;
	size_t n, i;
	int ret;

	/* An empty --fabric is a mistake, not "whichever runs". */
	if (name) {
		ret = ibemu_cli_check_name(src, name);
		if (ret)
			return ret;
		snprintf(out, len, "%s", name);
		return 0;
	}
	ret = ibemu_runtime_list(&names, &n);
	if (ret)
		return list_failed(ret);
	if (n == 1) {
		snprintf(out, len, "%s", names[0]);
		ibemu_runtime_list_free(names, n);
		return 0;
	}
	if (n == 0) {
		ibemu_runtime_list_free(names, n);
		return ibemu_cli_fail(1, "no fabric is running; start one with "
					 "'ibemu up FILE'");
	}
	fprintf(stderr, "ibemu: error: %zu fabrics are running (", n);
	for (i = 0; i < n; i++)
		fprintf(stderr, "%s%s", i ? ", " : "", names[i]);
	fprintf(stderr, "); choose one with --fabric NAME or IBEMU_FABRIC\n");
	ibemu_runtime_list_free(names, n);
	return 1;
}

/* Progress of long requests: one line redrawn in place on a terminal. */
static void show_progress(const char *line, void *arg)
{
	int *shown = arg;

	if (isatty(STDERR_FILENO)) {
		fprintf(stderr, "\r\033[K%s", line);
		*shown = 1;
	} else {
		fprintf(stderr, "%s\n", line);
	}
	fflush(stderr);
}

/*
 * Whether the daemon of 'name', whose connection just broke, has stopped:
 * its lock is free within a second (a daemon stopping removes its socket
 * first and its lock last).
 */
static int stopped_meanwhile(const char *name)
{
	struct timespec ts = {0, 20 * 1000 * 1000};
	int i;

	for (i = 0; i < 50 && ibemu_runtime_running(name); i++)
		nanosleep(&ts, NULL);
	return !ibemu_runtime_running(name);
}

/*
 * Makes the values of the options that name files (opt 'path') absolute
 * in argv, since the daemon resolves them in its own directory. The new
 * strings are kept in 'owned' (argc entries) for the caller to free.
 */
static int absolute_paths(const struct ibemu_opt_cmd *cmd,
			  const struct ibemu_opt_val *v, int argc, char **argv,
			  char **owned)
{
	char cwd[4096];
	size_t i;
	int k;

	for (i = 0; i < cmd->nopts; i++) {
		const char *s = v[i].s;

		if (!cmd->opts[i].path || !v[i].given || !s || s[0] == '/')
			continue;
		if (!getcwd(cwd, sizeof(cwd)))
			return ibemu_cli_fail(1,
					      "%s: --%s: the current "
					      "directory: %s",
					      cmd->name, cmd->opts[i].name,
					      strerror(errno));
		/* The value is argv[k] itself or its tail after '='. */
		for (k = 1; k < argc; k++) {
			size_t pre = (size_t)(s - argv[k]);
			struct ibemu_buf b;

			if (s < argv[k] || s > argv[k] + strlen(argv[k]))
				continue;
			ibemu_buf_init(&b);
			ibemu_buf_append(&b, argv[k], pre);
			ibemu_buf_printf(&b, "%s/%s", cwd, s);
			if (b.err) {
				ibemu_buf_fini(&b);
				return ibemu_cli_fail(1, "out of memory");
			}
			argv[k] = owned[k] = ibemu_buf_steal(&b);
			break;
		}
	}
	return 0;
}

/* Sends the request and prints the answer. */
static int forward(struct ibemu_cli *cli, int argc, char **argv, char *name,
		   size_t namelen)
{
	char *text = NULL, why[512];
	int shown = 0, fd, ret;
	unsigned timeout;

	ret = ibemu_cli_select(cli, name, namelen);
	if (!ret)
		ret = ibemu_cli_timeout(&timeout);
	if (ret)
		return ret;
	fd = ibemu_ctl_connect(name, timeout, why, sizeof(why));
	if (fd < 0)
		return ibemu_cli_fail(1, "%s", why);
	/* Each progress line of a long request restarts the timeout. */
	ret = ibemu_ctl_call(fd, argc, argv, &text, show_progress, &shown);
	close(fd);
	if (shown)
		fprintf(stderr, "\r\033[K");
	if (ret == -ETIMEDOUT) {
		ibemu_ctl_timeout_text(name, timeout, why, sizeof(why));
		return ibemu_cli_fail(1, "%s: %s", argv[0], why);
	}
	if ((ret == -ECONNRESET || ret == -EPIPE) && stopped_meanwhile(name))
		return ibemu_cli_fail(1,
				      "%s: fabric '%s' was stopped ('ibemu "
				      "down' or a signal) before it answered",
				      argv[0], name);
	if (ret < 0)
		return ibemu_cli_fail(1, "fabric '%s': %s", name,
				      strerror(-ret));
	if (ret > 0) {
		ibemu_cli_fail(ret, "%s", text ? text : "failed");
	} else {
		fputs(text, stdout);
		fflush(stdout);
	}
	free(text);
	return ret;
}

int ibemu_cli_forward(struct ibemu_cli *cli, int argc, char **argv)
{
	const struct ibemu_ctl_command *c = ibemu_ctl_command_find(argv[0]);
	char name[64], **args, **owned;
	int ret, n, i;

	owned = calloc((size_t)argc + 1, sizeof(*owned));
	if (!owned)
		return ibemu_cli_fail(1, "out of memory");
	/* The daemon parses with the same table; checking here first tells
	 * a usage error without a fabric to ask. */
	if (c && c->opts) {
		struct ibemu_opt_val *v =
			calloc(c->opts->nopts + 1, sizeof(*v));

		args = calloc((size_t)argc + 1, sizeof(*args));
		ret = !v || !args ? ibemu_cli_fail(1, "out of memory")
				  : ibemu_cli_parse(c->opts, argc, argv, v,
						    args, &n, NULL);
		if (!ret)
			ret = absolute_paths(c->opts, v, argc, argv, owned);
		free(v);
		free(args);
		if (ret)
			goto out;
	}
	ret = forward(cli, argc, argv, name, sizeof(name));
out:
	for (i = 0; i < argc; i++)
		free(owned[i]);
	free(owned);
	return ret;
}

enum {
	UP_NAME,
	UP_SM,
	UP_ROUTING,
	UP_SWEEP,
	UP_LMC,
	UP_CC,
	UP_CLOCK,
	UP_FOREGROUND,
	UP_NOPTS
};

/*
 * What --routing takes: the engines of routing/'s registry, filled before
 * main() so that help and parsing read the one list of engines.
 */
#define MAX_ROUTING_VALUES 16
static const char *routing_values[MAX_ROUTING_VALUES + 1];

__attribute__((constructor)) static void routing_values_fill(void)
{
	const struct ibemu_routing_engine_ops *ops;
	unsigned i, n = 0;

	for (i = 0; (ops = ibemu_routing_at(i)) && n < MAX_ROUTING_VALUES; i++)
		routing_values[n++] = ops->name;
}

/* In this order: UP_SM_IBEMU, UP_SM_NONE. */
static const char *const sm_values[] = {"ibemu", "none", NULL};
enum { UP_SM_IBEMU, UP_SM_NONE };
/* In this order: UP_CC_ON, UP_CC_OFF. */
static const char *const cc_values[] = {"on", "off", NULL};
enum { UP_CC_ON, UP_CC_OFF };
/* In the order of enum ibemu_clock. */
static const char *const clock_values[] = {"quiesce", "free", NULL};

/* OpenSM's default sweep_interval (10 s). */
#define UP_SWEEP_DEFAULT "10000"

static const struct ibemu_opt up_opts[] = {
	[UP_NAME] = {.name = "name",
		     .type = IBEMU_OPT_STRING,
		     .metavar = "NAME",
		     .def_help = "the file's 'name:' or base name",
		     .help = "the fabric's name: " IBEMU_FABRIC_NAME_RULE},
	[UP_SM] = {.name = "sm",
		   .type = IBEMU_OPT_ENUM,
		   .values = sm_values,
		   .def = "ibemu",
		   .help = "the subnet manager: 'ibemu' runs ibemu-sm on the "
			   "first cabled HCA once the daemon is up and returns "
			   "when "
			   "the subnet is up (the SM stays: sweeps, traps); "
			   "'none' leaves the ports in Init for another SM "
			   "(OpenSM, ibemu-sm under 'ibemu exec')"},
	[UP_ROUTING] =
		{.name = "routing",
		 .type = IBEMU_OPT_ENUM,
		 .values = routing_values,
		 .def = "minhop",
		 .help = "ibemu-sm's routing engine (routing/README.md)"},
	[UP_SWEEP] = {.name = "sweep",
		      .type = IBEMU_OPT_UINT,
		      .metavar = "MS",
		      .min = 0,
		      .max = 3600000,
		      .def = UP_SWEEP_DEFAULT,
		      .help = "ibemu-sm's light sweep period, in ms of "
			      "virtual time (a trap calls a heavy sweep at "
			      "once; an idle fabric keeps to the wall clock); "
			      "0: one sweep, then the SM exits (nothing "
			      "reroutes a fault then)"},
	[UP_LMC] = {.name = "lmc",
		    .type = IBEMU_OPT_UINT,
		    .metavar = "N",
		    .max = 7,
		    .def = "0",
		    .help = "ibemu-sm's LID Mask Control: 2^N LIDs per HCA "
			    "port, each routed (IBA 7.11.1)"},
	[UP_CC] = {.name = "cc",
		   .type = IBEMU_OPT_ENUM,
		   .values = cc_values,
		   .def_help = "the YAML's congestion_control: enable (on)",
		   .help = "congestion control (IBA A10): whether the SM sets "
			   "every switch and CA up; the policy, the YAML's "
			   "congestion_control: or ibemu's default, is "
			   "written as cc.conf in the fabric's directory in "
			   "OpenSM's syntax (for ibemu-sm --cc-config, or "
			   "opensm -F)"},
	[UP_CLOCK] = {.name = "clock",
		      .type = IBEMU_OPT_ENUM,
		      .values = clock_values,
		      .def = "quiesce",
		      .help = "virtual time: 'quiesce' advances it only while "
			      "every attached verbs process waits "
			      "(deterministic); 'free' runs the engine "
			      "whenever it has events (fastest, not "
			      "deterministic)"},
	[UP_FOREGROUND] = {.name = "foreground",
			   .type = IBEMU_OPT_FLAG,
			   .help = "run the daemon in this terminal until "
				   "Ctrl-C"},
};

const struct ibemu_opt_cmd ibemu_cli_up_opts = {
	.name = "up",
	.opts = up_opts,
	.nopts = UP_NOPTS,
	.args = "FILE",
	.max_args = 1,
};

/* The fabric's virtual time (ps), from 'ibemu status'; 0 if unknown. */
uint64_t ibemu_cli_virtual_now(const char *fabric)
{
	char why[256], *text = NULL, *at;
	char status[] = "status", json[] = "--json";
	char *argv[] = {status, json};
	unsigned long long ps = 0;
	int fd = ibemu_ctl_connect(fabric, 10000, why, sizeof(why));

	if (fd < 0)
		return 0;
	if (!ibemu_ctl_call(fd, 2, argv, &text, NULL, NULL) && text &&
	    (at = strstr(text, "\"virtual_time_ps\": ")))
		ps = strtoull(at + strlen("\"virtual_time_ps\": "), NULL, 10);
	free(text);
	close(fd);
	return (uint64_t)ps;
}

/*
 * In the foreground, the SM is started by a child of the daemon's process:
 * the daemon's pid, which that child stops waiting for once it is gone
 * (0 when 'ibemu up' runs the SM itself).
 */
static pid_t sm_starter_parent;

static int starter_orphaned(void)
{
	return sm_starter_parent && getppid() != sm_starter_parent;
}

/*
 * The foreground daemon stopped: its SM starter goes too, and what the
 * starter wrote after the daemon cleaned up (its cc.conf, the SM's files)
 * is removed, under the fabric's lock so that a fabric started meanwhile
 * under the same name keeps its own.
 */
static void starter_reap(const char *fabric, pid_t starter)
{
	struct ibemu_runtime_paths p;
	int fd;

	kill(starter, SIGTERM);
	while (waitpid(starter, NULL, 0) < 0 && errno == EINTR)
		;
	if (ibemu_runtime_paths(fabric, &p))
		return;
	fd = ibemu_runtime_lock(&p);
	if (fd >= 0)
		ibemu_runtime_release(&p, fd);
}

/* Waits (up to a minute) until fabric 'name' answers; 0 or -ETIMEDOUT. */
static int wait_listening(const char *name)
{
	struct timespec pause = {0, 50 * 1000 * 1000};
	char why[256];
	int i, fd;

	for (i = 0; i < 1200 && !starter_orphaned(); i++) {
		fd = ibemu_ctl_connect(name, 1000, why, sizeof(why));
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		nanosleep(&pause, NULL);
	}
	return -ETIMEDOUT;
}

/* The ibemu-sm next to this ibemu, in 'sm'; 0 or the CLI's failure. */
static int sm_path(char *exe, char *sm, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", exe, PATH_MAX - 1);
	char *slash;

	if (n < 0)
		return ibemu_cli_fail(1, "up: where is this ibemu? %s",
				      strerror(errno));
	exe[n] = '\0';
	snprintf(sm, len, "%s", exe);
	slash = strrchr(sm, '/');
	snprintf(slash ? slash + 1 : sm,
		 len - (size_t)(slash ? slash + 1 - sm : 0), "ibemu-sm");
	if (access(sm, X_OK))
		return ibemu_cli_fail(1, "up: %s: %s (build the project)", sm,
				      strerror(errno));
	return 0;
}

/*
 * The HCA ibemu-sm runs on: the first with a cabled port (an SM on an
 * HCA with no cable would find only itself); "" if none has one.
 */
static void sm_host(const struct ibemu_topo *t, char *out, size_t len)
{
	uint32_t i;
	unsigned p;

	out[0] = '\0';
	for (i = 0; i < t->nnodes; i++) {
		if (t->nodes[i].type != IBEMU_NODE_HCA)
			continue;
		for (p = 1; p <= t->nodes[i].nports; p++)
			if (t->nodes[i].ports[p].link != IBEMU_NONE) {
				snprintf(out, len, "%s", t->nodes[i].name);
				return;
			}
	}
}

/* What 'ibemu up' passes on to ibemu-sm. */
struct sm_opts {
	char host[256]; /* the first HCA with a cable: the SM's */
	const char *routing;
	char sweep[24]; /* ms; "0": one sweep, then it exits */
	char lmc[8];
	struct ibemu_cc_policy cc; /* written to cc.conf */
};

/* Writes the CC policy the SM applies into the fabric's cc.conf. */
static int write_cc_conf(const char *fabric, const struct ibemu_cc_policy *cc)
{
	struct ibemu_runtime_paths p;
	struct ibemu_buf b;
	FILE *f;
	int ret = 0;

	if (ibemu_runtime_paths(fabric, &p))
		return ibemu_cli_fail(1, "up: bad fabric name '%s'", fabric);
	ibemu_buf_init(&b);
	ibemu_cc_policy_write(cc, &b);
	f = fopen(p.cc_conf, "w");
	if (!f || b.err || fwrite(b.data, 1, b.len, f) != b.len)
		ret = ibemu_cli_fail(1, "up: cannot write %s: %s", p.cc_conf,
				     b.err ? "out of memory" : strerror(errno));
	if (f && fclose(f) && !ret)
		ret = ibemu_cli_fail(1, "up: cannot write %s: %s", p.cc_conf,
				     strerror(errno));
	ibemu_buf_fini(&b);
	return ret;
}

/*
 * The SM's watcher: the session leader 'up' leaves behind, parent of the
 * SM, so that its end is known (a detached SM would leave its exit status
 * to no one). It waits for the SM and appends to sm.log how it ended,
 * when, and at what virtual time; 'ibemu sm status' reads that line once
 * the SM is gone. Never returns.
 */
static void sm_watch(const char *fabric, pid_t pid)
{
	char when[64] = "?", how[128];
	time_t now;
	struct tm tm;
	uint64_t vt;
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			_exit(1);
	now = time(NULL);
	if (gmtime_r(&now, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (WIFSIGNALED(status))
		snprintf(how, sizeof(how), "died (signal %d, %s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(how, sizeof(how), "exited with status %d",
			 WEXITSTATUS(status));
	vt = ibemu_cli_virtual_now(fabric); /* 0 once the daemon is gone */
	printf(IBEMU_SM_END_MARK "%ld) %s at %s", (long)pid, how, when);
	if (vt)
		printf(", virtual time %.3f us", (double)vt / 1e6);
	printf("\n");
	fflush(stdout);
	_exit(0);
}

/* The child: 'ibemu --fabric F exec -- ibemu-sm ...', detached, its
 * output in the fabric's sm.log, fd 3 the pipe it says "up" on; it
 * stays as the SM's watcher, the SM its child. */
static void sm_child(const char *exe, const char *sm, const char *fabric,
		     const struct ibemu_runtime_paths *p,
		     const struct sm_opts *o, int ready_fd)
{
	const char *argv[32];
	int fd, n = 0;
	pid_t pid;

	setsid();
	/* A new SM, a new log: its last lines are what 'sm status' quotes. */
	fd = open(p->sm_log,
		  O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0) /* never the caller's terminal or pipes */
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		dup2(fd, STDIN_FILENO);
	if (ready_fd != 3) {
		dup2(ready_fd, 3);
		close(ready_fd);
	}
	pid = fork();
	if (pid > 0) {
		close(3); /* the SM's alone: its end is the caller's EOF */
		sm_watch(fabric, pid);
	}
	argv[n++] = exe;
	argv[n++] = "--fabric";
	argv[n++] = fabric;
	argv[n++] = "exec";
	argv[n++] = "--host";
	argv[n++] = o->host;
	argv[n++] = "--";
	argv[n++] = sm;
	argv[n++] = "--routing";
	argv[n++] = o->routing;
	argv[n++] = "--lmc";
	argv[n++] = o->lmc;
	argv[n++] = "--guid2lid";
	argv[n++] = p->guid2lid;
	argv[n++] = "--sl-dump";
	argv[n++] = p->sl_map;
	argv[n++] = "--ready-fd";
	argv[n++] = "3";
	/* The report and the dumps stay after a single sweep (--sweep 0):
	 * they describe the routes programmed, which stay too. */
	argv[n++] = "--report";
	argv[n++] = p->sm_report;
	argv[n++] = "--dump-dir";
	argv[n++] = p->dir;
	argv[n++] = "--cc-config";
	argv[n++] = p->cc_conf;
	if (strcmp(o->sweep, "0")) { /* resident */
		argv[n++] = "--sweep";
		argv[n++] = o->sweep;
		argv[n++] = "--status";
		argv[n++] = p->sm_status;
	}
	argv[n] = NULL;
	execv(exe, (char *const *)argv);
	_exit(127);
}

static pid_t sm_pid(const char *name);

/*
 * '--sm ibemu': starts ibemu-sm resident on the fabric (on its first free
 * HCA, under 'ibemu exec'), waits until it says the subnet is up and says
 * how long that took, on the wall clock and in virtual time. The SM stays:
 * it sweeps, answers traps, and stops when the fabric does.
 */
static int run_ibemu_sm(const char *fabric, const struct sm_opts *o)
{
	char exe[PATH_MAX], sm[PATH_MAX + 16], word[24] = "";
	struct ibemu_runtime_paths p;
	uint64_t v0 = ibemu_cli_virtual_now(fabric), v1;
	struct timespec t0, t1;
	int ret, pipefd[2];
	ssize_t n = 0, got;
	pid_t pid;

	ret = sm_path(exe, sm, sizeof(sm));
	if (ret)
		return ret;
	if (ibemu_runtime_paths(fabric, &p))
		return ibemu_cli_fail(1, "up: bad fabric name '%s'", fabric);
	/* A new fabric starts with no LIDs kept from an earlier one. */
	unlink(p.guid2lid);
	unlink(p.sm_status);
	unlink(p.sl_map);
	unlink(p.sm_report);
	unlink(p.sm_lfts);
	unlink(p.sm_subnet);
	ret = write_cc_conf(fabric, &o->cc);
	if (ret)
		return ret;
	if (pipe(pipefd))
		return ibemu_cli_fail(1, "up: pipe: %s", strerror(errno));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0)
		return ibemu_cli_fail(1, "up: fork: %s", strerror(errno));
	if (pid == 0) {
		close(pipefd[0]);
		sm_child(exe, sm, fabric, &p, o, pipefd[1]);
	}
	close(pipefd[1]);
	/* EOF without a word: the SM (or its exec) stopped first. */
	while ((size_t)n < sizeof(word) - 1 &&
	       ((got = read(pipefd[0], word + n,
			    sizeof(word) - 1 - (size_t)n)) > 0 ||
		(got < 0 && errno == EINTR)))
		n += got > 0 ? got : 0;
	close(pipefd[0]);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* One sweep: it is gone, its agents too, when 'up' returns. */
	if (!strcmp(o->sweep, "0"))
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	if (strncmp(word, "up", 2))
		return ibemu_cli_fail(1,
				      "up: ibemu-sm did not bring the subnet "
				      "up (the fabric runs; see %s)",
				      p.sm_log);
	v1 = ibemu_cli_virtual_now(fabric);
	/* 'pid' is the SM's watcher; a resident SM names itself. */
	pid = strcmp(o->sweep, "0") ? sm_pid(fabric) : 0;
	if (pid > 0)
		snprintf(word, sizeof(word), "pid %ld", (long)pid);
	else
		snprintf(word, sizeof(word), "one sweep");
	printf("fabric %s: subnet up through ibemu-sm (%s, routing %s) "
	       "in %.3f s (%.1f us of virtual time)\n",
	       fabric, word, o->routing,
	       (double)(t1.tv_sec - t0.tv_sec) +
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
	       v1 > v0 ? (double)(v1 - v0) / 1e6 : 0.0);
	return 0;
}

int ibemu_cli_up(struct ibemu_cli *cli, int argc, char **argv)
{
	struct ibemu_daemon_opts opts = {0};
	pid_t starter = 0;
	struct ibemu_opt_val v[UP_NOPTS];
	const char *file, *name = cli->fabric;
	struct ibemu_topo *t;
	uint32_t sw, hca, nlinks;
	char why[512], fabric[64], **args;
	struct sm_opts smo;
	int nargs, ret, with_sm;

	args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args)
		return ibemu_cli_fail(1, "out of memory");
	ret = ibemu_cli_parse(&ibemu_cli_up_opts, argc, argv, v, args, &nargs,
			      NULL);
	file = nargs > 0 ? args[0] : NULL;
	free(args);
	if (ret)
		return ret;
	if (!file)
		return ibemu_cli_fail(2, "up: which fabric? usage: ibemu up "
					 "FILE [options] (see 'ibemu up "
					 "--help')");
	opts.foreground = (int)v[UP_FOREGROUND].u;
	opts.clock = (enum ibemu_clock)v[UP_CLOCK].u;
	with_sm = v[UP_SM].u == UP_SM_IBEMU;
	if (!with_sm &&
	    (v[UP_ROUTING].given || v[UP_SWEEP].given || v[UP_LMC].given))
		return ibemu_cli_fail(2,
				      "up: option '--%s' is ibemu-sm's; it "
				      "does not go with '--sm none'",
				      v[UP_ROUTING].given ? "routing"
				      : v[UP_SWEEP].given ? "sweep"
							  : "lmc");
	if (v[UP_NAME].given)
		name = v[UP_NAME].s;
	if (name) {
		ret = ibemu_cli_check_name(
			v[UP_NAME].given ? "up: --name" : "up: --fabric", name);
		if (ret)
			return ret;
	}
	ret = ibemu_cli_load(file, &t);
	if (ret)
		return ret;
	if (name && ibemu_topo_set_name(t, name)) {
		ibemu_topo_destroy(t);
		return ibemu_cli_fail(1, "out of memory");
	}
	snprintf(fabric, sizeof(fabric), "%s", t->name);
	ibemu_topo_count(t, &sw, &hca);
	nlinks = t->nlinks;
	if (opts.foreground)
		fprintf(stderr,
			"fabric %s: %u switches, %u HCAs, %u links; "
			"running in the foreground (Ctrl-C stops it)\n",
			fabric, sw, hca, nlinks);
	smo.routing = routing_values[v[UP_ROUTING].u];
	sm_host(t, smo.host, sizeof(smo.host));
	snprintf(smo.sweep, sizeof(smo.sweep), "%llu",
		 (unsigned long long)v[UP_SWEEP].u);
	snprintf(smo.lmc, sizeof(smo.lmc), "%llu",
		 (unsigned long long)v[UP_LMC].u);
	if (v[UP_CC].given)
		t->cc.enable = v[UP_CC].u == UP_CC_ON;
	smo.cc = t->cc; /* the daemon takes 't' */
	/* In the foreground the daemon runs in this process: a child waits
	 * for it to listen, then starts the SM. */
	if (opts.foreground && with_sm && smo.host[0]) {
		pid_t daemon_pid = getpid();

		starter = fork();
		if (starter == 0) {
			/* Gone with the daemon, should it stop first. */
			sm_starter_parent = daemon_pid;
			ret = wait_listening(fabric)
				      ? 1
				      : run_ibemu_sm(fabric, &smo);
			fflush(NULL);
			_exit(ret);
		}
	}
	/* The daemon consumes the topology whatever happens. */
	ret = ibemu_daemon_start(t, &opts, &ibemu_ctl_servers, why,
				 sizeof(why));
	if (starter > 0)
		starter_reap(fabric, starter);
	if (ret)
		return ibemu_cli_fail(1, "up: %s", why);
	if (!opts.foreground) {
		struct ibemu_runtime_paths p;

		ibemu_runtime_paths(fabric, &p);
		printf("fabric %s: %u switches, %u HCAs, %u links; daemon pid "
		       "%ld, log %s\n",
		       fabric, sw, hca, nlinks, (long)ibemu_runtime_pid(fabric),
		       p.log);
		fflush(stdout);
	}
	/* Another SM (OpenSM -F cc.conf) may take the same policy. */
	if (!with_sm && !opts.foreground) {
		ret = write_cc_conf(fabric, &smo.cc);
		if (ret)
			return ret;
	}
	if (with_sm && !smo.host[0]) {
		printf("fabric %s: no cabled HCA to run ibemu-sm on: no subnet "
		       "to bring up\n",
		       fabric);
		return 0;
	}
	if (with_sm && !opts.foreground)
		return run_ibemu_sm(fabric, &smo);
	return 0;
}

/* True while 'pid' runs; a zombie waiting for its reaper has stopped. */
static int process_alive(pid_t pid)
{
	char path[64], buf[512], *paren;
	size_t n;
	FILE *f;

	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH))
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	return !(paren && paren[1] == ' ' && paren[2] == 'Z');
}

/* Waits up to 'ms' for 'pid' to end and the lock of 'name' to be free. */
static int wait_stopped(const char *name, pid_t pid, unsigned ms)
{
	struct timespec ts = {0, 20 * 1000 * 1000};
	unsigned i;

	for (i = 0;
	     i < ms / 20 && (ibemu_runtime_running(name) || process_alive(pid));
	     i++)
		nanosleep(&ts, NULL);
	return !ibemu_runtime_running(name) && !process_alive(pid);
}

/* Waits up to 'ms' for 'pid' to end. */
static int wait_exit(pid_t pid, unsigned ms)
{
	struct timespec ts = {0, 20 * 1000 * 1000};
	unsigned i;

	for (i = 0; i < ms / 20 && process_alive(pid); i++)
		nanosleep(&ts, NULL);
	return !process_alive(pid);
}

/*
 * 'ibemu down' of a daemon that does not answer: signal the process its
 * pid file names, once it is proven to hold the fabric's lock (a stale pid
 * may belong to anyone by now), then remove what it left behind.
 */
/* The pid the SM's status file names (ibemu-sm --status), or 0. */
static pid_t sm_pid(const char *name)
{
	struct ibemu_runtime_paths p;
	char buf[256], *at;
	size_t n;
	FILE *f;

	if (ibemu_runtime_paths(name, &p) || !(f = fopen(p.sm_status, "r")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	at = strstr(buf, "\"pid\": ");
	return at ? (pid_t)atol(at + strlen("\"pid\": ")) : 0;
}

/*
 * After the daemon stopped: its SM sees its port gone and stops too; wait
 * for that (a TERM if it lingers), so that no SM outlives its fabric.
 */
static void sm_reap(const char *name, pid_t pid)
{
	struct timespec pause = {0, 10 * 1000 * 1000};
	struct ibemu_runtime_paths p;
	int i;

	for (i = 0; pid > 0 && process_alive(pid) && i < 300; i++) {
		if (i == 200)
			kill(pid, SIGTERM);
		nanosleep(&pause, NULL);
	}
	if (!ibemu_runtime_paths(name, &p)) {
		unlink(p.sm_status);
		unlink(p.sm_report);
		unlink(p.sm_lfts);
		unlink(p.sm_subnet);
	}
}

static int force_down(const char *name, const char *why)
{
	struct ibemu_runtime_paths p;
	int fd, ret;
	pid_t pid, sm;

	ret = ibemu_runtime_paths(name, &p);
	if (ret)
		return ibemu_cli_fail(1, "down: %s", why);
	pid = ibemu_runtime_pid(name);
	sm = sm_pid(name);
	if (!ibemu_runtime_holder(&p, pid))
		return ibemu_cli_fail(1,
				      "down: %s; no process that holds its "
				      "lock %s is known (pid file: %ld), so "
				      "none was signalled",
				      why, p.lock, (long)pid);
	ibemu_cli_fail(0, "down: %s; sending SIGTERM to pid %ld", why,
		       (long)pid);
	/* A stopped daemon handles its SIGTERM once continued. */
	kill(pid, SIGTERM);
	kill(pid, SIGCONT);
	if (!wait_exit(pid, IBEMU_CLI_DOWN_GRACE_MS)) {
		ibemu_cli_fail(0,
			       "down: pid %ld did not stop within %u s; "
			       "sending SIGKILL",
			       (long)pid, IBEMU_CLI_DOWN_GRACE_MS / 1000);
		kill(pid, SIGKILL);
		if (!wait_exit(pid, IBEMU_CLI_DOWN_GRACE_MS))
			return ibemu_cli_fail(1,
					      "down: pid %ld of fabric '%s' "
					      "survived SIGKILL",
					      (long)pid, name);
	}
	/* Whatever it did not remove: ours once we hold its lock. */
	fd = ibemu_runtime_lock(&p);
	if (fd == -EBUSY)
		return ibemu_cli_fail(1,
				      "down: fabric '%s' was started again "
				      "meanwhile",
				      name);
	if (fd >= 0)
		ibemu_runtime_cleanup(&p, fd);
	sm_reap(name, sm);
	printf("fabric %s: stopped (pid %ld, by signal)\n", name, (long)pid);
	return 0;
}

int ibemu_cli_down(struct ibemu_cli *cli, int argc, char **argv)
{
	char name[64], why[512];
	char *text = NULL;
	unsigned timeout;
	int fd, ret, i;
	pid_t pid, sm;

	ret = ibemu_cli_parse(&ibemu_cli_down_opts, argc, argv, NULL, NULL, &i,
			      NULL);
	if (!ret)
		ret = ibemu_cli_select(cli, name, sizeof(name));
	if (!ret)
		ret = ibemu_cli_timeout(&timeout);
	if (ret)
		return ret;
	pid = ibemu_runtime_pid(name);
	sm = sm_pid(name);
	fd = ibemu_ctl_connect(name, timeout, why, sizeof(why));
	if (fd < 0) {
		/* Not running at all, or running and not answering. */
		if (!ibemu_runtime_running(name))
			return ibemu_cli_fail(1, "%s", why);
		return force_down(name, why);
	}
	ret = ibemu_ctl_call(fd, argc, argv, &text, NULL, NULL);
	close(fd);
	if (ret > 0) {
		ret = ibemu_cli_fail(1, "down: fabric '%s' refused to stop: %s",
				     name, text ? text : "no reason given");
		free(text);
		return ret;
	}
	free(text);
	if (ret == -ETIMEDOUT) {
		ibemu_ctl_timeout_text(name, timeout, why, sizeof(why));
		return force_down(name, why);
	}
	/* Return once the daemon is gone, so 'up' right after works. */
	if (!wait_stopped(name, pid, timeout ? timeout : 10000)) {
		snprintf(why, sizeof(why),
			 "fabric '%s' accepted the stop request but still "
			 "runs after %u.%03u s",
			 name, timeout / 1000, timeout % 1000);
		return force_down(name, why);
	}
	sm_reap(name, sm);
	printf("fabric %s: stopped\n", name);
	return 0;
}

const struct ibemu_opt_cmd ibemu_cli_down_opts = {.name = "down"};

static const struct ibemu_opt status_opts[] = {
	{.name = "json",
	 .type = IBEMU_OPT_FLAG,
	 .help = "print JSON instead of a table"},
};

const struct ibemu_opt_cmd ibemu_cli_status_opts = {
	.name = "status",
	.opts = status_opts,
	.nopts = IBEMU_ARRAY_SIZE(status_opts),
};

int ibemu_cli_status(struct ibemu_cli *cli, int argc, char **argv)
{
	struct ibemu_opt_val v[IBEMU_ARRAY_SIZE(status_opts)];
	const char *src;
	char **names;
	unsigned timeout;
	size_t n, i;
	int json, nargs, ret;

	ret = ibemu_cli_parse(&ibemu_cli_status_opts, argc, argv, v, NULL,
			      &nargs, NULL);
	if (!ret)
		ret = ibemu_cli_timeout(&timeout);
	if (ret)
		return ret;
	json = (int)v[0].u;
	if (named_fabric(cli, &src))
		return ibemu_cli_forward(cli, argc, argv);
	ret = ibemu_runtime_list(&names, &n);
	if (ret)
		return list_failed(ret);
	if (n == 1) {
		ibemu_runtime_list_free(names, n);
		return ibemu_cli_forward(cli, argc, argv);
	}
	/* None or several: list them, as 'ls' lists a directory. */
	if (json) {
		printf("{\"fabrics\": [");
		for (i = 0; i < n; i++)
			printf("%s{\"fabric\": \"%s\", \"pid\": %ld}",
			       i ? ", " : "", names[i],
			       (long)ibemu_runtime_pid(names[i]));
		printf("]}\n");
	} else if (n == 0) {
		printf("no fabric is running\n");
	} else {
		printf("%-24s %s\n", "FABRIC", "PID");
		for (i = 0; i < n; i++)
			printf("%-24s %ld\n", names[i],
			       (long)ibemu_runtime_pid(names[i]));
	}
	ibemu_runtime_list_free(names, n);
	return 0;
}
