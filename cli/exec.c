// SPDX-License-Identifier: MIT
/*
 * 'ibemu exec': runs a program as a host of a fabric. It checks that the
 * fabric answers (and that the HCA asked for exists), then replaces itself
 * with the program, whose environment names the fabric's session socket
 * (and the HCA) and puts ibemu's libibumad.so.3 first in the library path,
 * so that unmodified tools (ibstat, OpenSM) run on the emulated fabric.
 * It also preloads libibemu-devnode.so (the HCA's /dev/infiniband node, for
 * UCX) and libibemu-vtime.so, which makes the program's own
 * clocks virtual (vtime/README.md), unless --wall-clock, and says where
 * virtual time stands, where the program's clocks start.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli.h"
#include "run_mpi.h"
#include "runtime.h"
#include "sess_proto.h"

/* Connects to sess.sock; returns the fd or -errno. */
static int sess_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/*
 * One call on sess.sock at 'path': request 'type' with 'req' ('len' bytes);
 * the reply's header in 'h' and payload in 'out' (NUL-terminated when
 * there is room, for text). Returns the payload's length, -errno if sess.sock cannot be
 * reached, or -EPROTO if the daemon did not answer.
 */
static ssize_t sess_call(const char *path, uint16_t type, const void *req,
			 uint32_t len, struct ibemu_sess_hdr *h, void *out,
			 size_t out_len)
{
	uint8_t buf[IBEMU_SESS_MAX_MSG];
	ssize_t n;
	int fd;

	if (sizeof(*h) + len > sizeof(buf))
		return -EMSGSIZE;
	*h = (struct ibemu_sess_hdr){.magic = IBEMU_SESS_MAGIC,
				     .version = IBEMU_SESS_VERSION,
				     .type = type,
				     .len = len};
	fd = sess_connect(path);
	if (fd < 0)
		return fd;
	memcpy(buf, h, sizeof(*h));
	memcpy(buf + sizeof(*h), req, len);
	n = send(fd, buf, sizeof(*h) + len, MSG_NOSIGNAL);
	if (n >= 0)
		n = recv(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (n < (ssize_t)sizeof(*h))
		return -EPROTO;
	memcpy(h, buf, sizeof(*h));
	n -= (ssize_t)sizeof(*h);
	if ((size_t)n > out_len)
		return -EPROTO;
	memcpy(out, buf + sizeof(*h), (size_t)n);
	if ((size_t)n < out_len)
		((char *)out)[n] = '\0';
	return n;
}

/*
 * Asks the daemon for HCA 'host' (a CA_QUERY, which binds this process to
 * it: the program exec'd next keeps the pid and the binding). Returns 0, or
 * 1 with the reason printed.
 */
static int check_host(const char *fabric, const char *path, const char *host)
{
	char text[IBEMU_SESS_MAX_MSG];
	struct ibemu_sess_bind b;
	struct ibemu_sess_hdr h;
	ssize_t n;

	memset(&b, 0, sizeof(b));
	if (strlen(host) >= sizeof(b.host))
		return ibemu_cli_fail(1, "exec: no HCA named %s in fabric %s",
				      host, fabric);
	memcpy(b.host, host, strlen(host) + 1);
	n = sess_call(path, IBEMU_SESS_CA_QUERY, &b, sizeof(b), &h, text,
		      sizeof(text));
	if (n == -EPROTO)
		return ibemu_cli_fail(1, "exec: fabric '%s' did not answer",
				      fabric);
	if (n < 0)
		return ibemu_cli_fail(
			1, "exec: cannot reach fabric '%s' at %s: %s", fabric,
			path, strerror((int)-n));
	if (h.type == IBEMU_SESS_ERROR)
		return ibemu_cli_fail(1, "exec: %s", text);
	return 0;
}

/*
 * $IBEMU_IFADDRS: the IPoIB interface of each port of 'host' with its
 * address (ADDR_QUERY), "ib0=A,ib1=B", for devnode/ifaddrs.c. A port
 * without an address is left out; a failed query sets nothing.
 */
static void set_ifaddrs(const char *path, const char *host)
{
	char spec[IBEMU_SESS_MAX_PORTS * 32] = "";
	unsigned port, nports = 1;
	size_t used = 0;

	for (port = 1; port <= nports && port <= IBEMU_SESS_MAX_PORTS; port++) {
		struct ibemu_sess_addr_query q;
		struct ibemu_sess_hdr h;
		struct in_addr a;
		char ip[INET_ADDRSTRLEN];

		memset(&q, 0, sizeof(q));
		snprintf(q.host, sizeof(q.host), "%s", host);
		q.port = port;
		if (sess_call(path, IBEMU_SESS_ADDR_QUERY, &q, sizeof(q), &h,
			      &q, sizeof(q)) != (ssize_t)sizeof(q) ||
		    h.status)
			return;
		nports = q.nports;
		if (!q.ip)
			continue;
		a.s_addr = htonl(q.ip);
		inet_ntop(AF_INET, &a, ip, sizeof(ip));
		used += (size_t)snprintf(spec + used, sizeof(spec) - used,
					 "%sib%u=%s", used ? "," : "", port - 1,
					 ip);
	}
	if (used)
		setenv(IBEMU_SESS_ENV_IFADDRS, spec, 1);
}

/* <directory of the ibemu binary>/../lib, where libibumad.so.3 is. */
static int lib_dir(char *out, size_t len)
{
	char exe[PATH_MAX], lib[PATH_MAX + 8], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return -errno;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(lib, sizeof(lib), "%s/../lib", exe);
	if (!realpath(lib, out) || strlen(out) >= len)
		return -ENOENT;
	return 0;
}

static int set_library_path(void)
{
	char dir[PATH_MAX], umad[PATH_MAX + 32];
	const char *old = getenv("LD_LIBRARY_PATH");
	char *value;
	int ret;

	if (lib_dir(dir, sizeof(dir)) ||
	    (snprintf(umad, sizeof(umad), "%s/libibumad.so.3", dir),
	     access(umad, R_OK)))
		return ibemu_cli_fail(1,
				      "exec: libibumad.so.3 is not in the lib "
				      "directory next to this ibemu's bin; "
				      "build the project first");
	if (old && *old)
		ret = asprintf(&value, "%s:%s", dir, old);
	else
		ret = asprintf(&value, "%s", dir);
	if (ret < 0)
		return ibemu_cli_fail(1, "out of memory");
	ret = setenv("LD_LIBRARY_PATH", value, 1);
	free(value);
	return ret ? ibemu_cli_fail(1, "exec: %s", strerror(errno)) : 0;
}

static int find_asan_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	if (!strstr(info->dlpi_name, "/libasan.so"))
		return 0;
	*(int *)arg = 1;
	return 1;
}

/*
 * A program built with AddressSanitizer (IBEMU_SANITIZE: the ibemu-sm that
 * 'up' runs) refuses to start when a preloaded library comes before the
 * sanitizer's runtime. Ours needs nothing of it, so when this ibemu is
 * built so too, the check is turned off for the program.
 */
static int asan_allow_preload(void)
{
	const char *old = getenv("ASAN_OPTIONS");
	char *value;
	int asan = 0, ret;

	dl_iterate_phdr(find_asan_cb, &asan);
	if (!asan)
		return 0;
	if (asprintf(&value, "%s%sverify_asan_link_order=0", old ? old : "",
		     old && *old ? ":" : "") < 0)
		return ibemu_cli_fail(1, "out of memory");
	ret = setenv("ASAN_OPTIONS", value, 1);
	free(value);
	return ret ? ibemu_cli_fail(1, "exec: %s", strerror(errno)) : 0;
}

/*
 * Appends lib/'name' to LD_PRELOAD, after what is there (a sanitizer's
 * runtime must stay first); 'why' says what needs it, for the error.
 */
static int preload(const char *name, const char *why)
{
	char dir[PATH_MAX], lib[PATH_MAX + 32];
	const char *old = getenv("LD_PRELOAD");
	char *value;
	int ret;

	if (lib_dir(dir, sizeof(dir)) ||
	    (snprintf(lib, sizeof(lib), "%s/%s", dir, name), access(lib, R_OK)))
		return ibemu_cli_fail(1,
				      "exec: %s is not in the lib directory "
				      "next to this ibemu's bin; build the "
				      "project first%s",
				      name, why);
	ret = asprintf(&value, "%s%s%s", old && *old ? old : "",
		       old && *old ? ":" : "", lib);
	if (ret < 0)
		return ibemu_cli_fail(1, "out of memory");
	ret = setenv("LD_PRELOAD", value, 1);
	free(value);
	return ret ? ibemu_cli_fail(1, "exec: %s", strerror(errno)) : 0;
}

/*
 * The program-clock library (vtime/), unless 'wall_clock', and the
 * device-node library (devnode/: UCX uses only the HCAs whose
 * /dev/infiniband node exists).
 */
static int preload_libs(int wall_clock)
{
	int ret = 0;

	if (!wall_clock)
		ret = preload("libibemu-vtime.so",
			      ", or run with --wall-clock");
	if (!ret)
		ret = preload("libibemu-devnode.so", "");
	return ret ? ret : asan_allow_preload();
}

/* Where the program's virtual clocks start: 'vstart', or the fabric's
 * time now when 0. */
static int set_vtime_start(const char *fabric, uint64_t vstart)
{
	char ps[32];

	if (!vstart)
		vstart = ibemu_cli_virtual_now(fabric);
	snprintf(ps, sizeof(ps), "%llu", (unsigned long long)vstart);
	if (setenv(IBEMU_SESS_ENV_VTIME_START, ps, 1))
		return ibemu_cli_fail(1, "exec: %s", strerror(errno));
	return 0;
}

/*
 * SYSFS_PATH: the HCA's sysfs tree the daemon wrote when check_host() bound
 * to it (attach/sess_sysfs.c), unless the user names another.
 */
static int set_sysfs_path(const char *dir, const char *host)
{
	char path[IBEMU_PATH_MAX + 128];

	if (snprintf(path, sizeof(path), "%s/sysfs/%s", dir, host) >=
	    (int)sizeof(path))
		return -1;
	return setenv("SYSFS_PATH", path, 0);
}

int ibemu_cli_exec_prepare(const char *fabric, const char *host, int wall_clock,
			   uint64_t vstart)
{
	struct ibemu_runtime_paths p;
	char sess[IBEMU_PATH_MAX];
	char why[IBEMU_PATH_MAX + 128];
	int fd, ret;

	/* The daemon would refuse the process anyway, with less said. */
	if (ibemu_runtime_other_owner(fabric, why, sizeof(why)))
		return ibemu_cli_fail(1, "exec: %s", why);
	if (!ibemu_runtime_running(fabric))
		return ibemu_cli_fail(1, "exec: fabric '%s' is not running",
				      fabric);
	if (ibemu_runtime_paths(fabric, &p) ||
	    snprintf(sess, sizeof(sess), "%s/%s", p.dir, IBEMU_SESS_SOCKET) >=
		    (int)sizeof(sess))
		return ibemu_cli_fail(1,
				      "exec: the runtime path of '%s' is "
				      "too long",
				      fabric);
	if (!host)
		host = getenv(IBEMU_SESS_ENV_HOST);
	if (host && *host) {
		ret = check_host(fabric, sess, host);
		if (ret)
			return ret;
		set_ifaddrs(sess, host);
	} else {
		fd = sess_connect(sess);
		if (fd < 0)
			return ibemu_cli_fail(1,
					      "exec: cannot reach fabric '%s' "
					      "at %s: %s",
					      fabric, sess, strerror(-fd));
		close(fd);
	}
	ret = set_library_path();
	if (!ret)
		ret = set_vtime_start(fabric, vstart);
	if (!ret)
		ret = preload_libs(wall_clock);
	if (ret)
		return ret;
	if (setenv(IBEMU_SESS_ENV_SOCKET, sess, 1) ||
	    (host && *host && setenv(IBEMU_SESS_ENV_HOST, host, 1)) ||
	    (host && *host && set_sysfs_path(p.dir, host)))
		return ibemu_cli_fail(1, "exec: %s", strerror(errno));
	return 0;
}

/*
 * Checks the fabric (and the HCA), then becomes the program 'args', its
 * clocks virtual unless 'wall_clock'.
 */
static int run(const char *fabric, const char *host, int wall_clock,
	       char **args)
{
	int ret = ibemu_cli_exec_prepare(fabric, host, wall_clock, 0);

	if (ret)
		return ret;
	fflush(NULL);
	execvp(args[0], args);
	return ibemu_cli_fail(127, "exec: cannot run '%s': %s", args[0],
			      strerror(errno));
}

/* The rank an MPI launcher gave this process, or -1. */
static long launcher_rank(void)
{
	static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK",
					    "PMI_RANK"};
	const char *v;
	char *end;
	long r;
	size_t i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(names); i++) {
		v = getenv(names[i]);
		if (!v || !*v)
			continue;
		r = strtol(v, &end, 10);
		if (!*end && r >= 0)
			return r;
	}
	return -1;
}

/* The entry of 'list' ("H0,H1,...") at the launcher's rank, into 'out'
 * (IBEMU_SESS_HOST_LEN bytes). 0, or the exit status with why. */
static int rank_host(const char *list, char (*out)[IBEMU_SESS_HOST_LEN])
{
	long rank = launcher_rank(), i;
	const char *p = list, *comma;
	size_t len;

	if (rank < 0)
		return ibemu_cli_fail(2, "exec: --rank-hosts: no rank in the "
					 "environment (OMPI_COMM_WORLD_RANK, "
					 "PMIX_RANK, PMI_RANK)");
	for (i = 0; i < rank && p; i++) {
		p = strchr(p, ',');
		if (p)
			p++;
	}
	comma = p ? strchr(p, ',') : NULL;
	len = p ? (comma ? (size_t)(comma - p) : strlen(p)) : 0;
	if (!len || len >= sizeof(*out))
		return ibemu_cli_fail(2,
				      "exec: --rank-hosts names no HCA for "
				      "rank %ld",
				      rank);
	memcpy(*out, p, len);
	(*out)[len] = '\0';
	return 0;
}

/*
 * Under 'run --mpi' ($IBEMU_RUN_CLOCK_PATH): the run's pipe, opened again
 * here since mpirun closed it, for the program's libibverbs to write its
 * final clock to at exit with the launcher's rank (verbs/clock.c), as
 * 'ibemu run' gives its own ranks. A run that is gone is told nothing.
 */
static int rank_clock_pipe(void)
{
	const char *path = getenv(IBEMU_RUN_MPI_CLOCK_PATH);
	char var[48], rank[24];
	struct stat st;
	int fd;

	if (!path || !*path)
		return 0;
	fd = open(path, O_WRONLY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISFIFO(st.st_mode)) {
		close(fd);
		return 0;
	}
	snprintf(var, sizeof(var), "%d:%llu", fd,
		 (unsigned long long)st.st_ino);
	snprintf(rank, sizeof(rank), "%ld", launcher_rank());
	if (setenv(IBEMU_SESS_ENV_CLOCK_FD, var, 1) ||
	    setenv(IBEMU_SESS_ENV_RANK, rank, 1))
		return ibemu_cli_fail(1, "exec: %s", strerror(errno));
	return 0;
}

static const struct ibemu_opt exec_opts[] = {
	{.name = "host",
	 .type = IBEMU_OPT_STRING,
	 .metavar = "HCA",
	 .def_help = "$IBEMU_HOST, else the daemon's choice",
	 .help = "the HCA the program runs on"},
	{.name = "wall-clock",
	 .type = IBEMU_OPT_FLAG,
	 .help = "leave the program's own clocks (clock_gettime, "
		 "gettimeofday, time, rdtsc) on wall time; they are "
		 "virtual by default"},
	{.name = "rank-hosts",
	 .type = IBEMU_OPT_STRING,
	 .metavar = "H0,H1,...",
	 .help = "the HCA of each rank of an MPI launch: the program runs on "
		 "the one at its rank ($OMPI_COMM_WORLD_RANK, else "
		 "$PMIX_RANK or $PMI_RANK); what 'run --mpi' gives mpirun"},
};

const struct ibemu_opt_cmd ibemu_cli_exec_opts = {
	.name = "exec",
	.opts = exec_opts,
	.nopts = IBEMU_ARRAY_SIZE(exec_opts),
	.args = "[--] COMMAND [ARGS...]",
	.stop_at_arg = 1,
};

int ibemu_cli_exec(struct ibemu_cli *cli, int argc, char **argv)
{
	struct ibemu_opt_val v[IBEMU_ARRAY_SIZE(exec_opts)];
	const char *host = NULL;
	char fabric[64], rank[IBEMU_SESS_HOST_LEN], **args;
	int nargs, ret, wall_clock;

	/* Room for the program's argv and its terminating NULL. */
	args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args)
		return ibemu_cli_fail(1, "out of memory");
	ret = ibemu_cli_parse(&ibemu_cli_exec_opts, argc, argv, v, args, &nargs,
			      NULL);
	if (!ret && !nargs)
		ret = ibemu_cli_fail(2, "exec: which program? usage: ibemu "
					"exec [--host HCA] [--wall-clock] -- "
					"COMMAND [ARGS]");
	if (ret)
		goto out;
	if (v[0].given)
		host = v[0].s;
	wall_clock = v[1].given;
	if (v[2].given) {
		ret = v[0].given ? ibemu_cli_fail(2, "exec: --host or "
						     "--rank-hosts, not both")
				 : rank_host(v[2].s, &rank);
		if (!ret)
			ret = rank_clock_pipe();
		if (ret)
			goto out;
		host = rank;
	}
	ret = ibemu_cli_select(cli, fabric, sizeof(fabric));
	if (ret)
		goto out;
	ret = run(fabric, host, wall_clock, args);
out:
	free(args);
	return ret;
}
