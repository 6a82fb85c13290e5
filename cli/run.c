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

/* In the order of enum ibemu_run_map. */
static const char *const map_names[] = {"spread", "block", "cyclic", NULL};

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
	{.name = "report",
	 .type = IBEMU_OPT_STRING,
	 .metavar = "FILE",
	 .help = "write what the run cost as JSON: per rank the virtual time "
		 "spent waiting, in declared compute and in calls; per link "
		 "the bytes each way during the run (PMA PortXmitData)"},
	{.name = "plot",
	 .type = IBEMU_OPT_STRING,
	 .metavar = "FILE",
	 .help = "draw the run's timeline in virtual time as SVG: a row per "
		 "rank, with the time it waited, computed "
		 "(ibemu_compute_ps), sent and received"},
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

enum {
	OPT_RANKS,
	OPT_HOSTS,
	OPT_MAP,
	OPT_NO_PREFIX,
	OPT_WALL_CLOCK,
	OPT_REPORT,
	OPT_PLOT,
	OPT_MPI
};

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

/* The number after "key": in 'line'; 0 if none. */
static uint64_t json_uint(const char *line, const char *key)
{
	char pat[40];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(line, pat);
	return p ? strtoull(p + strlen(pat), NULL, 10) : 0;
}

static struct ibemu_run_hca *hca_find(struct ibemu_run_hca *h, int n,
				      const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(h[i].name, name))
			return &h[i];
	return NULL;
}

/* The fabric's HCAs and their leaves, in the daemon's node order. */
static int fabric_hcas(const char *fabric, struct ibemu_run_hca **out,
		       int *nout)
{
	char *nodes = NULL, *ports = NULL, *line, *save, name[64], v[64];
	struct ibemu_run_hca *h = NULL, *x;
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
	return strverscmp(((const struct ibemu_run_hca *)a)->name,
			  ((const struct ibemu_run_hca *)b)->name);
}

static int by_leaf(const void *a, const void *b)
{
	const struct ibemu_run_hca *x = a, *y = b;
	int c = strverscmp(x->leaf, y->leaf);

	return c ? c : strverscmp(x->name, y->name);
}

/*
 * Orders 'h' for map 'map': the first n are the ranks' HCAs. spread takes
 * one HCA of each leaf in turn (leaves in name order, skipping a leaf
 * whose HCAs are all taken), so neighbouring ranks sit on different
 * leaves and their traffic crosses the fabric.
 */
static int place(struct ibemu_run_hca *h, int nh, int map)
{
	struct ibemu_run_hca *sorted;
	int *next, nleaves = 0, i, j, k = 0;

	if (map == IBEMU_RUN_MAP_CYCLIC) {
		qsort(h, (size_t)nh, sizeof(*h), by_name);
		return 0;
	}
	qsort(h, (size_t)nh, sizeof(*h), by_leaf);
	if (map == IBEMU_RUN_MAP_BLOCK)
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
static int hosts_pick(struct ibemu_run_hca *h, int nh, const char *list, int *n,
		      const char *fabric)
{
	char *copy = strdup(list), *tok, *save;
	struct ibemu_run_hca tmp, *x;
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

void ibemu__run_job_fini(struct ibemu_run_job *job)
{
	unsigned k;
	int i;

	for (i = 0; job->ranks && i < job->n; i++)
		for (k = 0; k < job->ranks[i].nenv; k++)
			free(job->ranks[i].env[k].value);
	free(job->ranks);
}

int ibemu__run_job_init(struct ibemu_run_job *job,
			const struct ibemu_run_hca *h, char **argv)
{
	struct ibemu_run_rank *r;
	int i;

	snprintf(job->id, sizeof(job->id), "run.%ld", (long)getpid());
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

/* Whether 'arg' is one of our options that takes the next word. */
static int takes_value(const char *arg)
{
	int o;

	if (strncmp(arg, "--", 2) || strchr(arg, '='))
		return 0;
	o = ibemu_opt_find(&ibemu_cli_run_opts, arg + 2, strlen(arg + 2));
	return o >= 0 && run_opts[o].type != IBEMU_OPT_FLAG;
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
		if (takes_value(argv[i]))
			i++; /* its value, which may be anything */
	}
}

/* PortXmitData of one port. */
struct port_words {
	char key[80]; /* NODE:PORT */
	uint64_t words;
};

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct port_words *)a)->key,
		      ((const struct port_words *)b)->key);
}

/* PortXmitData of every port ('counters --json'), sorted by NODE:PORT. */
static int xmit_words(const char *fabric, struct port_words **out, size_t *n)
{
	char *text = NULL, *line, *save, node[64];
	struct port_words *w = NULL, *x;
	size_t k = 0, cap = 0;
	int ret = ctl_json(fabric, "counters", &text);

	if (ret)
		return ret;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strstr(line, "\"xmit_data\": ") ||
		    json_str(line, "node", node, sizeof(node)))
			continue;
		if (k == cap) {
			cap = cap ? 2 * cap : 256;
			x = realloc(w, cap * sizeof(*w));
			if (!x) {
				free(w);
				free(text);
				return ibemu_cli_fail(1, "out of memory");
			}
			w = x;
		}
		snprintf(w[k].key, sizeof(w[k].key), "%s:%llu", node,
			 (unsigned long long)json_uint(line, "port"));
		w[k++].words = json_uint(line, "xmit_data");
	}
	free(text);
	if (w)
		qsort(w, k, sizeof(*w), by_key);
	*out = w;
	*n = k;
	return 0;
}

/* What the report needs from before the run. */
struct report_base {
	struct port_words *words;
	size_t nwords;
	char *links; /* 'links --json' */
};

static void report_base_free(struct report_base *b)
{
	free(b->words);
	free(b->links);
}

static int report_base_take(const char *fabric, struct report_base *b)
{
	int ret = xmit_words(fabric, &b->words, &b->nwords);

	if (!ret)
		ret = ctl_json(fabric, "links", &b->links);
	return ret;
}

static uint64_t words_of(const struct port_words *w, size_t n, const char *key)
{
	struct port_words k, *f;

	snprintf(k.key, sizeof(k.key), "%s", key);
	f = w ? bsearch(&k, w, n, sizeof(*w), by_key) : NULL;
	return f ? f->words : 0;
}

/* Bytes NODE:PORT 'key' sent during the run (PortXmitData counts 4-byte
 * words; a counter that went back was reset meanwhile: 0). */
static uint64_t sent_bytes(const struct report_base *b,
			   const struct port_words *after, size_t nafter,
			   const char *key)
{
	uint64_t w0 = words_of(b->words, b->nwords, key);
	uint64_t w1 = words_of(after, nafter, key);

	return w1 > w0 ? (w1 - w0) * 4 : 0;
}

static void report_ranks(FILE *f, const struct ibemu_run_job *job,
			 uint64_t vend)
{
	int i;

	fprintf(f, "  \"ranks\": [\n");
	for (i = 0; i < job->n; i++) {
		const struct ibemu_run_rank *r = &job->ranks[i];
		uint64_t end = r->reported ? r->end_ps : vend;
		uint64_t total = end > job->vstart ? end - job->vstart : 0;
		uint64_t known = r->waited_ps + r->compute_ps;

		fprintf(f,
			"    {\"rank\": %d, \"host\": \"%s\", \"reported\": "
			"%s, \"end_ps\": %llu, \"total_ps\": %llu, "
			"\"waiting_ps\": %llu, \"compute_ps\": %llu, "
			"\"other_ps\": %llu}%s\n",
			r->rank, r->host, r->reported ? "true" : "false",
			(unsigned long long)end, (unsigned long long)total,
			(unsigned long long)r->waited_ps,
			(unsigned long long)r->compute_ps,
			(unsigned long long)(total > known ? total - known : 0),
			i + 1 < job->n ? "," : "");
	}
	fprintf(f, "  ],\n");
}

static void report_links(FILE *f, const struct report_base *b,
			 const struct port_words *after, size_t nafter)
{
	char *links = strdup(b->links ? b->links : ""), *line, *save;
	char an[64], bn[64], ak[80], bk[80];
	int first = 1;

	fprintf(f, "  \"links\": [");
	for (line = links ? strtok_r(links, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		uint64_t ap = json_uint(line, "a_port"), bp;

		if (json_str(line, "a_node", an, sizeof(an)) ||
		    json_str(line, "b_node", bn, sizeof(bn)))
			continue;
		bp = json_uint(line, "b_port");
		snprintf(ak, sizeof(ak), "%s:%llu", an, (unsigned long long)ap);
		snprintf(bk, sizeof(bk), "%s:%llu", bn, (unsigned long long)bp);
		fprintf(f,
			"%s\n    {\"a\": \"%s:%llu\", \"b\": \"%s:%llu\", "
			"\"bytes_a_to_b\": %llu, \"bytes_b_to_a\": %llu}",
			first ? "" : ",", an, (unsigned long long)ap, bn,
			(unsigned long long)bp,
			(unsigned long long)sent_bytes(b, after, nafter, ak),
			(unsigned long long)sent_bytes(b, after, nafter, bk));
		first = 0;
	}
	fprintf(f, "\n  ]\n");
	free(links);
}

/* Writes the report of the run to 'path'; 0 or the exit status. */
static int report_write(const char *path, const struct ibemu_run_job *job,
			const struct report_base *b, uint64_t vend, int status)
{
	struct port_words *after = NULL;
	size_t nafter = 0;
	FILE *f;
	int ret = xmit_words(job->fabric, &after, &nafter);

	if (ret)
		return ret;
	f = fopen(path, "w");
	if (!f) {
		free(after);
		return ibemu_cli_fail(1, "run: --report %s: %s", path,
				      strerror(errno));
	}
	fprintf(f,
		"{\"fabric\": \"%s\", \"size\": %d, \"status\": %d, "
		"\"start_ps\": %llu, \"end_ps\": %llu, "
		"\"virtual_time_ps\": %llu,\n",
		job->fabric, job->n, status, (unsigned long long)job->vstart,
		(unsigned long long)vend,
		(unsigned long long)(vend > job->vstart ? vend - job->vstart
							: 0));
	report_ranks(f, job, vend);
	report_links(f, b, after, nafter);
	fprintf(f, "}\n");
	free(after);
	if (fclose(f))
		return ibemu_cli_fail(1, "run: --report %s: %s", path,
				      strerror(errno));
	return 0;
}

int ibemu__run_place(const char *fabric, const char *hosts, int map, int *n,
		     struct ibemu_run_hca **out)
{
	struct ibemu_run_hca *h = NULL;
	int nh, ret;

	if (!ibemu_runtime_running(fabric))
		return ibemu_cli_fail(1, "run: fabric '%s' is not running",
				      fabric);
	ret = fabric_hcas(fabric, &h, &nh);
	if (ret)
		return ret;
	if (hosts)
		ret = hosts_pick(h, nh, hosts, n, fabric);
	else if (*n > nh)
		ret = ibemu_cli_fail(1,
				     "run: %d ranks asked, but fabric %s has "
				     "%d HCA%s (one rank per HCA)",
				     *n, fabric, nh, nh == 1 ? "" : "s");
	else
		ret = place(h, nh, map);
	if (ret) {
		free(h);
		return ret;
	}
	*out = h;
	return 0;
}

/* --mpi: the same HCAs, in rank order, through mpirun (run_mpi.c). */
static int run_mpi(struct ibemu_run_job *job, const struct ibemu_run_hca *h,
		   char **args)
{
	struct ibemu_run_mpi m = {.fabric = job->fabric,
				  .n = job->n,
				  .wall_clock = job->wall_clock,
				  .args = args,
				  .job = job};
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
	const char *report = v[OPT_REPORT].given ? v[OPT_REPORT].s : NULL;
	const char *plot = v[OPT_PLOT].given ? v[OPT_PLOT].s : NULL;
	char plot_dir[4096] = "";
	struct report_base base = {0};
	struct ibemu_run_hca *h = NULL;
	int ret, n = v[OPT_RANKS].given ? (int)v[OPT_RANKS].u : 0;
	uint64_t vend;

	ret = ibemu__run_place(fabric,
			       v[OPT_HOSTS].given ? v[OPT_HOSTS].s : NULL,
			       (int)v[OPT_MAP].u, &n, &h);
	if (ret)
		return ret;
	job.n = n;
	job.prefix = !v[OPT_NO_PREFIX].given;
	job.wall_clock = v[OPT_WALL_CLOCK].given;
	if (ibemu__run_job_init(&job, h, args)) {
		ret = ibemu_cli_fail(1, "out of memory");
		goto out;
	}
	if (report && report_base_take(fabric, &base)) {
		ret = 1;
		goto out;
	}
	if (plot) {
		ret = ibemu__run_plot_begin(plot_dir, sizeof(plot_dir));
		if (ret) {
			plot_dir[0] = 0;
			goto out;
		}
	}
	job.vstart = ibemu_cli_virtual_now(fabric);
	if (v[OPT_MPI].given)
		ret = run_mpi(&job, h, args);
	else
		ret = ibemu__run_supervise(&job);
	/* The ranks' own clocks, which may be past the fabric's last event
	 * (a barrier's cost); the fabric's time if no rank said. */
	vend = job.vend ? job.vend : ibemu_cli_virtual_now(fabric);
	if (vend >= job.vstart && job.vstart)
		fprintf(stderr,
			"ibemu run: %d rank%s on fabric %s, %.3f us of "
			"virtual time (%.3f us to %.3f us)\n",
			n, n == 1 ? "" : "s", fabric,
			(double)(vend - job.vstart) / 1e6,
			(double)job.vstart / 1e6, (double)vend / 1e6);
	if (report) {
		int r = report_write(report, &job, &base, vend, ret);

		ret = ret ? ret : r;
	}
	if (plot) {
		int r = ibemu__run_plot_write(plot, plot_dir, &job, vend);

		ret = ret ? ret : r;
	}
out:
	if (plot_dir[0])
		ibemu__run_plot_end(plot_dir);
	report_base_free(&base);
	ibemu__run_job_fini(&job);
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
