// SPDX-License-Identifier: MIT
/*
 * 'ibemu run -n N -- PROG ARGS': N ranks of a program, one per HCA of the
 * fabric, as an MPI launcher would start them but with no ssh and no
 * hostfile. The HCAs and the leaf switch of each come from the daemon
 * ('nodes' and 'ports'); the ranks are placed on them by --hosts or a map,
 * each gets IBEMU_RANK, IBEMU_SIZE and IBEMU_JOB besides what 'ibemu exec'
 * sets, and run_procs.c launches and supervises them. At the end the run
 * says how much virtual time it took.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ctl_client.h"
#include "run.h"
#include "run_mpi.h"
#include "runtime.h"

/* An HCA of the fabric and the switch its first cabled port reaches. */
struct run_hca {
	char name[64];
	char leaf[64];
};

static const char *const map_names[] = {"spread", "block", "cyclic", NULL};
enum { MAP_SPREAD, MAP_BLOCK, MAP_CYCLIC };

static const struct ibemu_opt run_opts[] = {
	{.name = "ranks",
	 .type = IBEMU_OPT_UINT,
	 .metavar = "N",
	 .min = 1,
	 .max = 65536,
	 .def_help = "the number of --hosts",
	 .help = "how many ranks to launch, one per HCA (also -n N)"},
	{.name = "hosts",
	 .type = IBEMU_OPT_STRING,
	 .metavar = "LIST",
	 .help = "the HCAs of the ranks, in rank order: hca01,hca05,..."},
	{.name = "map",
	 .type = IBEMU_OPT_ENUM,
	 .metavar = "MAP",
	 .def = "spread",
	 .values = map_names,
	 .help = "how ranks are placed: spread (rank i on the i-th leaf "
		 "switch in name order, round robin, each leaf's HCAs in "
		 "name order), block (a leaf's HCAs filled before the next "
		 "leaf's) or cyclic (the HCAs in name order)"},
	{.name = "no-prefix",
	 .type = IBEMU_OPT_FLAG,
	 .help = "copy the ranks' output as it is, without '[RANK] ' "
		 "before each line"},
	{.name = "wall-clock",
	 .type = IBEMU_OPT_FLAG,
	 .help = "leave the ranks' own clocks on wall time (as 'exec "
		 "--wall-clock')"},
	{.name = "mpi",
	 .type = IBEMU_OPT_FLAG,
	 .help = "an Open MPI program: Debian's mpirun launches the ranks, "
		 "each on its HCA, over UCX ($OMPI_MCA_pml, default ucx) or "
		 "the openib BTL (OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,openib); "
		 "output as mpirun gives it (docs/mpi.md)"},
};

const struct ibemu_opt_cmd ibemu_cli_run_opts = {
	.name = "run",
	.opts = run_opts,
	.nopts = IBEMU_ARRAY_SIZE(run_opts),
	.args = "[--] COMMAND [ARGS...]",
	.stop_at_arg = 1,
};

enum { OPT_RANKS, OPT_HOSTS, OPT_MAP, OPT_NO_PREFIX, OPT_WALL_CLOCK, OPT_MPI };

/* Copies the string value of "key": "..." in 'line' into 'out'. */
static int json_str(const char *line, const char *key, char *out, size_t len)
{
	char pat[40];
	const char *p, *q;

	snprintf(pat, sizeof(pat), "\"%s\": \"", key);
	p = strstr(line, pat);
	if (!p)
		return -ENOENT;
	p += strlen(pat);
	q = strchr(p, '"');
	if (!q || (size_t)(q - p) >= len)
		return -EINVAL;
	memcpy(out, p, (size_t)(q - p));
	out[q - p] = '\0';
	return 0;
}

/* Runs inspect command 'cmd' with --json on the fabric's daemon. */
static int ctl_json(const char *fabric, const char *cmd, char **text)
{
	char why[512], json[] = "--json", name[32];
	char *argv[] = {name, json};
	unsigned ms;
	int fd, ret;

	snprintf(name, sizeof(name), "%s", cmd);
	if (ibemu_cli_timeout(&ms))
		return 2;
	fd = ibemu_ctl_connect(fabric, ms, why, sizeof(why));
	if (fd < 0)
		return ibemu_cli_fail(1, "run: %s", why);
	ret = ibemu_ctl_call(fd, 2, argv, text, NULL, NULL);
	close(fd);
	if (ret) {
		ibemu_cli_fail(1, "run: %s: %s", cmd,
			       *text ? *text : strerror(-ret));
		free(*text);
		*text = NULL;
		return 1;
	}
	return 0;
}

static struct run_hca *hca_find(struct run_hca *h, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(h[i].name, name))
			return &h[i];
	return NULL;
}

/* The fabric's HCAs and their leaves, in the daemon's node order. */
static int fabric_hcas(const char *fabric, struct run_hca **out, int *nout)
{
	char *nodes = NULL, *ports = NULL, *line, *save, name[64], v[64];
	struct run_hca *h = NULL, *x;
	int n = 0, cap = 0, ret;

	ret = ctl_json(fabric, "nodes", &nodes);
	if (!ret)
		ret = ctl_json(fabric, "ports", &ports);
	if (ret)
		goto out;
	for (line = strtok_r(nodes, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (json_str(line, "name", name, sizeof(name)) ||
		    json_str(line, "type", v, sizeof(v)) || strcmp(v, "hca"))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			x = realloc(h, (size_t)cap * sizeof(*h));
			if (!x) {
				ret = ibemu_cli_fail(1, "out of memory");
				goto out;
			}
			h = x;
		}
		memset(&h[n], 0, sizeof(h[n]));
		memcpy(h[n++].name, name, sizeof(name));
	}
	/* Ports come in node and port order: the first cabled one wins. */
	for (line = strtok_r(ports, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (json_str(line, "node", name, sizeof(name)) ||
		    json_str(line, "peer_node", v, sizeof(v)))
			continue;
		x = hca_find(h, n, name);
		if (x && !x->leaf[0])
			memcpy(x->leaf, v, sizeof(v));
	}
out:
	free(nodes);
	free(ports);
	if (ret) {
		free(h);
		return ret;
	}
	*out = h;
	*nout = n;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strverscmp(((const struct run_hca *)a)->name,
			  ((const struct run_hca *)b)->name);
}

static int by_leaf(const void *a, const void *b)
{
	const struct run_hca *x = a, *y = b;
	int c = strverscmp(x->leaf, y->leaf);

	return c ? c : strverscmp(x->name, y->name);
}

/*
 * Orders 'h' for map 'map': the first n are the ranks' HCAs. spread takes
 * one HCA of each leaf in turn (leaves in name order, skipping a leaf
 * whose HCAs are all taken), so neighbouring ranks sit on different
 * leaves and their traffic crosses the fabric.
 */
static int place(struct run_hca *h, int nh, int map)
{
	struct run_hca *sorted;
	int *next, nleaves = 0, i, j, k = 0;

	if (map == MAP_CYCLIC) {
		qsort(h, (size_t)nh, sizeof(*h), by_name);
		return 0;
	}
	qsort(h, (size_t)nh, sizeof(*h), by_leaf);
	if (map == MAP_BLOCK)
		return 0;
	sorted = malloc((size_t)nh * sizeof(*h));
	next = calloc((size_t)nh + 1, sizeof(*next));
	if (!sorted || !next) {
		free(sorted);
		free(next);
		return ibemu_cli_fail(1, "out of memory");
	}
	/* next[l]: index in h of leaf l's next HCA; leaves start where
	 * their name changes. */
	for (i = 0; i < nh; i++)
		if (!i || strcmp(h[i].leaf, h[i - 1].leaf))
			next[nleaves++] = i;
	next[nleaves] = nh;
	/* Round robin over the leaves, by position within each leaf. */
	for (i = 0; k < nh; i++)
		for (j = 0; j < nleaves; j++) {
			int first = next[j];
			int end = j + 1 < nleaves ? next[j + 1] : nh;

			if (first + i < end)
				sorted[k++] = h[first + i];
		}
	memcpy(h, sorted, (size_t)nh * sizeof(*h));
	free(sorted);
	free(next);
	return 0;
}

/* --hosts: each an HCA of the fabric, once; put first, in order. */
static int hosts_pick(struct run_hca *h, int nh, const char *list, int *n,
		      const char *fabric)
{
	char *copy = strdup(list), *tok, *save;
	struct run_hca tmp, *x;
	int k = 0, ret = 0;

	if (!copy)
		return ibemu_cli_fail(1, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		x = hca_find(h + k, nh - k, tok);
		if (!x) {
			ret = hca_find(h, k, tok)
				      ? ibemu_cli_fail(2,
						       "run: --hosts names %s "
						       "twice (one rank per "
						       "HCA)",
						       tok)
				      : ibemu_cli_fail(1,
						       "run: --hosts: no HCA "
						       "named %s in fabric %s",
						       tok, fabric);
			goto out;
		}
		tmp = h[k];
		h[k] = *x;
		*x = tmp;
		k++;
	}
	if (!k)
		ret = ibemu_cli_fail(2, "run: --hosts names no HCA");
	else if (*n && *n != k)
		ret = ibemu_cli_fail(2,
				     "run: -n %d ranks, but --hosts names %d "
				     "HCA%s",
				     *n, k, k == 1 ? "" : "s");
	*n = k;
out:
	free(copy);
	return ret;
}

static void job_free(struct ibemu_run_job *job)
{
	unsigned k;
	int i;

	for (i = 0; job->ranks && i < job->n; i++)
		for (k = 0; k < job->ranks[i].nenv; k++)
			free(job->ranks[i].env[k].value);
	free(job->ranks);
}

/* Each rank's HCA, argv and environment. */
static int job_build(struct ibemu_run_job *job, const struct run_hca *h,
		     char **argv)
{
	struct ibemu_run_rank *r;
	int i;

	job->ranks = calloc((size_t)job->n, sizeof(*job->ranks));
	if (!job->ranks)
		return -ENOMEM;
	for (i = 0; i < job->n; i++) {
		r = &job->ranks[i];
		r->rank = i;
		r->host = h[i].name;
		r->argv = argv;
		if (ibemu__run_rank_setenv(r, "IBEMU_RANK", "%d", i) ||
		    ibemu__run_rank_setenv(r, "IBEMU_SIZE", "%d", job->n) ||
		    ibemu__run_rank_setenv(r, "IBEMU_JOB", "%s", job->id))
			return -ENOMEM;
	}
	return 0;
}

/* '-n N' and '-nN' are '--ranks N'. */
static void short_options(int argc, char **argv)
{
	static char ranks[] = "--ranks", joined[32];
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "-n"))
			argv[i] = ranks;
		else if (!strncmp(argv[i], "-n", 2) && argv[i][2] >= '0' &&
			 argv[i][2] <= '9' && strlen(argv[i]) < 16) {
			snprintf(joined, sizeof(joined), "--ranks=%s",
				 argv[i] + 2);
			argv[i] = joined;
		}
		if (argv[i][0] != '-')
			break; /* the program: its options are its own */
	}
}

/* --mpi: the same HCAs, in rank order, through mpirun (run_mpi.c). */
static int run_mpi(const struct ibemu_run_job *job, const struct run_hca *h,
		   char **args)
{
	struct ibemu_run_mpi m = {.fabric = job->fabric,
				  .n = job->n,
				  .wall_clock = job->wall_clock,
				  .args = args};
	const char **hosts = calloc((size_t)job->n, sizeof(*hosts));
	int i, ret;

	if (!hosts)
		return ibemu_cli_fail(1, "out of memory");
	for (i = 0; i < job->n; i++)
		hosts[i] = h[i].name;
	m.hosts = hosts;
	ret = ibemu__run_mpi(&m);
	free(hosts);
	return ret;
}

static int run_job(const char *fabric, struct ibemu_opt_val *v, char **args)
{
	struct ibemu_run_job job = {.fabric = fabric};
	struct run_hca *h = NULL;
	int nh, ret, n = v[OPT_RANKS].given ? (int)v[OPT_RANKS].u : 0;
	uint64_t vend;

	if (!ibemu_runtime_running(fabric))
		return ibemu_cli_fail(1, "run: fabric '%s' is not running",
				      fabric);
	ret = fabric_hcas(fabric, &h, &nh);
	if (ret)
		return ret;
	if (v[OPT_HOSTS].given)
		ret = hosts_pick(h, nh, v[OPT_HOSTS].s, &n, fabric);
	else if (n > nh)
		ret = ibemu_cli_fail(1,
				     "run: %d ranks asked, but fabric %s has "
				     "%d HCA%s (one rank per HCA)",
				     n, fabric, nh, nh == 1 ? "" : "s");
	else
		ret = place(h, nh, (int)v[OPT_MAP].u);
	if (ret)
		goto out;
	job.n = n;
	job.prefix = !v[OPT_NO_PREFIX].given;
	job.wall_clock = v[OPT_WALL_CLOCK].given;
	snprintf(job.id, sizeof(job.id), "run.%ld", (long)getpid());
	if (job_build(&job, h, args)) {
		ret = ibemu_cli_fail(1, "out of memory");
		goto out;
	}
	job.vstart = ibemu_cli_virtual_now(fabric);
	if (v[OPT_MPI].given)
		ret = run_mpi(&job, h, args);
	else
		ret = ibemu__run_supervise(&job);
	vend = ibemu_cli_virtual_now(fabric);
	if (vend >= job.vstart && job.vstart)
		fprintf(stderr,
			"ibemu run: %d rank%s on fabric %s, %.3f us of "
			"virtual time (%.3f us to %.3f us)\n",
			n, n == 1 ? "" : "s", fabric,
			(double)(vend - job.vstart) / 1e6,
			(double)job.vstart / 1e6, (double)vend / 1e6);
out:
	job_free(&job);
	free(h);
	return ret;
}

int ibemu_cli_run(struct ibemu_cli *cli, int argc, char **argv)
{
	struct ibemu_opt_val v[IBEMU_ARRAY_SIZE(run_opts)];
	char fabric[64], **args;
	int nargs, ret;

	args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args)
		return ibemu_cli_fail(1, "out of memory");
	short_options(argc, argv);
	ret = ibemu_cli_parse(&ibemu_cli_run_opts, argc, argv, v, args, &nargs,
			      NULL);
	if (!ret && !nargs)
		ret = ibemu_cli_fail(2, "run: which program? usage: ibemu run "
					"-n N [--hosts LIST | --map MAP] -- "
					"COMMAND [ARGS]");
	else if (!ret && !v[OPT_RANKS].given && !v[OPT_HOSTS].given)
		ret = ibemu_cli_fail(2, "run: how many ranks? give -n N (or "
					"--hosts LIST)");
	else if (!ret && v[OPT_HOSTS].given && v[OPT_MAP].given)
		ret = ibemu_cli_fail(2, "run: --hosts and --map both place "
					"the ranks: give one");
	if (ret)
		goto out;
	ret = ibemu_cli_select(cli, fabric, sizeof(fabric));
	if (!ret)
		ret = run_job(fabric, v, args);
out:
	free(args);
	return ret;
}
