// SPDX-License-Identifier: MIT
/*
 * ibemu-sm: brings a subnet up through its local port, with MADs only
 * (it runs under 'ibemu exec' on ibemu's libibumad, or on any other). One
 * heavy sweep: discovery, routing, programming; then it says SUBNET UP and
 * exits. While it runs it holds the port's issm device, as an SM does,
 * so the port's PortInfo says IsSM.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/umad.h>

#include "routing.h"
#include "sm.h"

static void usage(FILE *f)
{
	const struct ibemu_routing_engine_ops *ops;
	unsigned i;

	fprintf(f,
		"usage: ibemu-sm [options]\n"
		"Discovers the subnet by directed route from the local port,\n"
		"assigns LIDs, programs the switches' LFTs and brings every\n"
		"linked port to ACTIVE, then exits.\n"
		"  -C, --ca NAME       the local CA (default: the first)\n"
		"  -P, --port N        its port (default: the first active or "
		"initialized)\n"
		"  -R, --routing NAME  routing engine:");
	for (i = 0; (ops = ibemu_routing_at(i)); i++)
		fprintf(f, " %s", ops->name);
	fprintf(f,
		" (default %s)\n"
		"  -G, --guid2lid FILE LIDs kept across runs (OpenSM's "
		"format): read\n"
		"                      if it exists, written at SUBNET UP\n"
		"  -L, --sl-dump FILE  the SL of every path, written at SUBNET "
		"UP (routes on\n"
		"                      virtual layers; 'ibemu traffic "
		"--sl-map' "
		"reads it)\n"
		"  -o, --report FILE   how the routes spread traffic, as "
		"JSON, written at\n"
		"                      SUBNET UP ('ibemu sm report' reads "
		"it)\n"
		"  -d, --dump-dir DIR  OpenSM's opensm-lfts.dump, "
		"opensm-subnet.lst and\n"
		"                      guid2lid, written at SUBNET UP\n"
		"  -w, --window N      SMPs in flight (default 256)\n"
		"  -t, --timeout MS    per SMP (default 200), and\n"
		"  -r, --retries N     retries (default 3)\n"
		"  -s, --sweep MS      keep running: a light sweep every MS "
		"ms, a heavy\n"
		"                      one when a port changed (default: "
		"one sweep, exit)\n"
		"  -p, --priority N    SMInfo priority, 0-15 (default 0)\n"
		"  -l, --lmc N         LID Mask Control: 2^N LIDs per CA "
		"port, each\n"
		"                      routed (default 0; at most 7)\n"
		"  -c, --cc-config FILE\n"
		"                      congestion control policy in OpenSM's "
		"syntax\n"
		"                      (congestion_control TRUE, cc_key, "
		"cc_sw_*, cc_ca_*,\n"
		"                      cc_cct): set into every switch and "
		"CA after a heavy\n"
		"                      sweep; CongestionLogs read every "
		"sweep\n"
		"  -S, --status FILE   state and last sweep, as JSON, "
		"rewritten after\n"
		"                      every sweep ('ibemu sm status' reads "
		"it)\n"
		"  -F, --ready-fd N    write \"up\" (or \"standby\") to file "
		"descriptor N\n"
		"                      once the first sweep is done, then "
		"close it\n"
		"  -q, --quality       how the routes spread shift and "
		"all-to-all traffic\n"
		"  -v, --verbose       what was found and programmed\n"
		"  -h, --help\n",
		ibemu_routing_at(0)->name);
}

static int parse_uint(const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int parse_args(struct sm *sm, int argc, char **argv)
{
	static const struct option longs[] = {
		{"ca", required_argument, NULL, 'C'},
		{"port", required_argument, NULL, 'P'},
		{"routing", required_argument, NULL, 'R'},
		{"guid2lid", required_argument, NULL, 'G'},
		{"sl-dump", required_argument, NULL, 'L'},
		{"report", required_argument, NULL, 'o'},
		{"dump-dir", required_argument, NULL, 'd'},
		{"window", required_argument, NULL, 'w'},
		{"timeout", required_argument, NULL, 't'},
		{"retries", required_argument, NULL, 'r'},
		{"verbose", no_argument, NULL, 'v'},
		{"quality", no_argument, NULL, 'q'},
		{"sweep", required_argument, NULL, 's'},
		{"priority", required_argument, NULL, 'p'},
		{"lmc", required_argument, NULL, 'l'},
		{"status", required_argument, NULL, 'S'},
		{"ready-fd", required_argument, NULL, 'F'},
		{"cc-config", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c, bad = 0;

	while ((c = getopt_long(argc, argv,
				"C:P:R:G:L:o:d:w:t:r:s:p:l:S:F:c:qvh", longs,
				NULL)) != -1) {
		switch (c) {
		case 'C':
			sm->ca = optarg;
			break;
		case 'P':
			bad |= parse_uint(optarg, 1, 254, &sm->port_num);
			break;
		case 'R':
			sm->routing = optarg;
			if (!ibemu_routing_find(optarg)) {
				fprintf(stderr,
					"ibemu-sm: no routing engine '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'G':
			sm->guid2lid_path = optarg;
			break;
		case 'w':
			bad |= parse_uint(optarg, 1, 4096, &sm->window);
			break;
		case 't':
			bad |= parse_uint(optarg, 1, 60000, &sm->timeout_ms);
			break;
		case 'r':
			bad |= parse_uint(optarg, 0, 100, &sm->retries);
			break;
		case 'L':
			sm->sl_dump_path = optarg;
			break;
		case 'o':
			sm->report_path = optarg;
			break;
		case 'd':
			sm->dump_dir = optarg;
			break;
		case 'v':
			sm->verbose = 1;
			break;
		case 'q':
			sm->quality = 1;
			break;
		case 's':
			bad |= parse_uint(optarg, 1, 3600000, &sm->sweep_ms);
			break;
		case 'p':
			bad |= parse_uint(optarg, 0, 15, &sm->priority);
			break;
		case 'l':
			bad |= parse_uint(optarg, 0, IBEMU_LMC_MAX, &sm->lmc);
			break;
		case 'S':
			sm->status_path = optarg;
			break;
		case 'c':
			sm->cc_config = optarg;
			break;
		case 'F': {
			unsigned fd;

			bad |= parse_uint(optarg, 3, 65535, &fd);
			if (!bad && fcntl((int)fd, F_GETFD) < 0) {
				fprintf(stderr, "ibemu-sm: --ready-fd %u: %s\n",
					fd, strerror(errno));
				return 2;
			}
			sm->ready_fd = (int)fd;
			break;
		}
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (bad || optind != argc) {
		fprintf(stderr, "ibemu-sm: a bad option value or argument\n");
		usage(stderr);
		return 2;
	}
	return 0;
}

/* The issm device of the port, held open while the SM runs; or -1. */
static int issm_open(const struct sm *sm)
{
	char path[256];

	if (umad_get_issm_path(sm->ca, (int)sm->port_num, path, sizeof(path)) <
	    0)
		return -1;
	return open(path, O_RDWR | O_CLOEXEC);
}

static double wall_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void report_quality(const struct sm *sm)
{
	struct ibemu_route_quality q;
	unsigned i;

	if (ibemu_routes_quality(sm->graph, sm->routes, &q))
		return;
	printf("ibemu-sm: routes per directed switch link: shift at most %u, "
	       "all-to-all at most %u (ideal %.1f: %.2fx), %llu pairs "
	       "unrouted\n",
	       q.shift_max, q.a2a_max, q.a2a_ideal,
	       q.a2a_ideal ? q.a2a_max / q.a2a_ideal : 0.0,
	       (unsigned long long)q.unrouted);
	printf("ibemu-sm: mean routes per switch link used: shift %.2f, "
	       "all-to-all %.2f (%u of %u links)\n",
	       q.shift_mean, q.a2a_mean, q.a2a_used, q.links);
	printf("ibemu-sm: path lengths (switch hops: pairs):");
	for (i = 0; i < IBEMU_QUALITY_HOPS; i++)
		if (q.hops_hist[i])
			printf(" %u: %llu", i,
			       (unsigned long long)q.hops_hist[i]);
	printf("\n");
}

static void report(const struct sm *sm, double secs)
{
	uint32_t n, sw = 0, links = 0;
	unsigned port;

	for (n = 0; n < sm->nnodes; n++) {
		const struct sm_node *node = &sm->nodes[n];

		sw += node->ni.node_type == 2;
		for (port = 1; port <= node->ni.num_ports; port++)
			links += node->ports[port].peer != UINT32_MAX;
		if (sm->verbose)
			printf("node %016llx %s ports %u hops %u lid %u\n",
			       (unsigned long long)node->ni.node_guid,
			       node->ni.node_type == 2 ? "switch" : "ca",
			       node->ni.num_ports, node->hops,
			       ibemu_routes_lid(sm->routes, node->graph,
						node->ni.node_type == 2
							? 0
							: node->in_port));
	}
	printf("ibemu-sm: %u nodes (%u switches, %u CAs), %u links, LIDs 1-%u, "
	       "routing %s, ",
	       sm->nnodes, sw, sm->nnodes - sw, links / 2,
	       sm->routes ? sm->routes->max_lid : 0, sm->routing);
	if (!sm->routes)
		printf("no routes\n");
	else if (sm->routes->nlayers == 1)
		printf("%s on one VL\n",
		       ibemu_routes_deadlock_free(sm->graph, sm->routes) == 1
			       ? "deadlock-free"
			       : "credit loops");
	else
		/* Layer i on SL i, SL i on VL i, as program.c sets SL2VL. */
		printf("%s on %u VLs (layer i on SL i and VL i)\n",
		       ibemu_routes_deadlock_free(sm->graph, sm->routes) == 1
			       ? "deadlock-free"
			       : "credit loops",
		       sm->routes->nlayers);
	if (sm->quality && sm->routes)
		report_quality(sm);
	printf("ibemu-sm: %lu SMPs, %lu answered, %lu timed out, window %u, "
	       "%lu LFT blocks written, %.3f s\n",
	       sm->sent, sm->answered, sm->timeouts, sm->window, sm->lft_blocks,
	       secs);
	if (sm->cc && sm->cc->enable)
		printf("ibemu-sm: congestion control: %lu switches and CA "
		       "ports configured, %lu Sets, %lu CongestionLog reads, "
		       "%lu failed\n",
		       sm->cc_stats.configured, sm->cc_stats.sets,
		       sm->cc_stats.gets, sm->cc_stats.failed);
	printf("ibemu-sm: sweep steps (wall): discovery %.3f s, routing %.3f "
	       "s, LIDs and LFTs %.3f s, Armed and Active %.3f s\n",
	       sm->last.step_s[SM_STEP_DISCOVER],
	       sm->last.step_s[SM_STEP_ROUTE], sm->last.step_s[SM_STEP_PROGRAM],
	       sm->last.step_s[SM_STEP_ACTIVATE]);
}

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

/* Rewrites the status file; a failure is said, and the SM goes on. */
static void status(const struct sm *sm)
{
	int ret = sm_status_write(sm);

	if (ret)
		fprintf(stderr, "ibemu-sm: cannot write %s: %s\n",
			sm->status_path, strerror(-ret));
}

/* Why a heavy sweep failed, in words a user can act on. */
static void sweep_failure(const struct sm *sm, int ret, char *out, size_t len)
{
	unsigned long long sw = 0, ports = 0;
	uint32_t i;

	if (ret == -ENOSPC) {
		snprintf(out, len,
			 "the routes need more virtual layers than the "
			 "links have VLs");
		return;
	}
	if (ret != -ERANGE || !sm->graph) {
		snprintf(out, len, "%s", strerror(-ret));
		return;
	}
	for (i = 0; i < sm->graph->nnodes; i++) {
		if (sm->graph->nodes[i].type == IBEMU_GRAPH_SWITCH)
			sw++;
		else
			ports += sm->graph->nodes[i].nports;
	}
	/* IBA 7.11.1: a port's 2^LMC LIDs are one aligned block. */
	snprintf(out, len,
		 "out of unicast LIDs: %llu switches (one LID each) and %llu "
		 "HCA ports of %u LIDs each (--lmc %u) need %llu LIDs, past "
		 "the %u unicast LIDs (1..0x%x)",
		 sw, ports, 1u << sm->lmc, sm->lmc, sw + (ports << sm->lmc),
		 IBEMU_LID_UNICAST_MAX, IBEMU_LID_UNICAST_MAX);
}

/* A heavy sweep (called for 'why') and what it says; 0 or -errno. */
static int heavy(struct sm *sm, double t0, const char *why)
{
	const char *unwritten = NULL; /* a file that could not be written */
	char failure[256];
	double secs;
	int ret;

	sm_sweep_begin(sm, 1, why);
	ret = sm_heavy_sweep(sm);
	sm->discovering = 0;
	sm_sweep_end(sm);
	status(sm);
	if (!ret && sm->standby) {
		printf("ibemu-sm: standby: the master SM (port GUID 0x%016llx, "
		       "LID %u) %s\n",
		       (unsigned long long)sm->master_guid, sm->master_lid,
		       sm_master_outranks(sm)
			       ? "outranks this one"
			       : "ranks below this one: asked to hand over "
				 "(Trap 144)");
		fflush(stdout);
		sm_status_ready(sm, 0);
		return 0;
	}
	secs = wall_s() - t0;
	if (!ret && sm->guid2lid_path) {
		ret = sm_guid2lid_save(sm, sm->guid2lid_path);
		unwritten = ret ? sm->guid2lid_path : NULL;
		if (ret)
			fprintf(stderr, "ibemu-sm: cannot write %s: %s\n",
				sm->guid2lid_path, strerror(-ret));
	}
	if (!ret && sm->sl_dump_path) {
		ret = sm_sl_dump(sm);
		unwritten = ret ? sm->sl_dump_path : NULL;
		if (ret)
			fprintf(stderr, "ibemu-sm: cannot write %s: %s\n",
				sm->sl_dump_path, strerror(-ret));
	}
	/* Whoever waits for the subnet need not wait for the report and
	 * the dumps, whose quality and deadlock checks take seconds on a
	 * 10,000-HCA fabric ('ibemu sm report' waits for its file). */
	if (!ret && !sm->errors)
		sm_status_ready(sm, 1);
	/* What follows reads and sends no MAD: time need not wait. */
	sm_idle(sm);
	report(sm, secs);
	if (!ret && sm->report_path) {
		ret = sm_report_write(sm);
		unwritten = ret ? sm->report_path : NULL;
		if (ret)
			fprintf(stderr, "ibemu-sm: cannot write %s: %s\n",
				sm->report_path, strerror(-ret));
	}
	if (!ret && sm->dump_dir) {
		ret = sm_dump_write(sm);
		unwritten = ret ? sm->dump_dir : NULL;
		if (ret)
			fprintf(stderr,
				"ibemu-sm: cannot write the dumps in %s: "
				"%s\n",
				sm->dump_dir, strerror(-ret));
	}
	if (!ret && !sm->errors) {
		printf("ibemu-sm: SUBNET UP\n");
		fflush(stdout);
		return 0;
	}
	/* The failure is the log's last line: 'ibemu sm status' quotes it
	 * once the SM is gone. */
	fflush(stdout);
	if (unwritten)
		fprintf(stderr,
			"ibemu-sm: heavy sweep failed: cannot write %s: %s, %u "
			"errors\n",
			unwritten, strerror(-ret), sm->errors);
	else if (ret) {
		sweep_failure(sm, ret, failure, sizeof(failure));
		fprintf(stderr, "ibemu-sm: heavy sweep failed: %s, %u errors\n",
			failure, sm->errors);
	} else
		fprintf(stderr, "ibemu-sm: heavy sweep done, %u errors\n",
			sm->errors);
	return ret ? ret : sm->errors ? -EIO : 0;
}

/*
 * IBA 14.4.1: a standby polls the master every period, and takes over
 * once it is gone (or, in the sweep loop, once the master hands the
 * mastership over by Set(SMInfo) HANDOVER). Traps meanwhile are the
 * master's business.
 */
/* Polls in a row a master may miss before it counts as gone: OpenSM's
 * default polling_retry_number, so one answer lost to a loaded host does
 * not make two masters. */
#define MASTER_POLL_RETRIES 4

static int standby_poll(struct sm *sm)
{
	sm->trap144 = 0;
	if (sm_master_alive(sm)) {
		sm->master_misses = 0;
		sm_ask_handover(sm);
		status(sm); /* still standby, and still running */
		return 0;
	}
	/* The master handed over while it was polled (and is standby now):
	 * the sweep loop takes the handover next. */
	if (sm->handover_in || ++sm->master_misses < MASTER_POLL_RETRIES) {
		status(sm);
		return 0;
	}
	sm->master_misses = 0;
	printf("ibemu-sm: the master is gone: taking over\n");
	sm->discovering = 1;
	return heavy(sm, wall_s(), "the master is gone");
}

/*
 * With --sweep: a light sweep every period, a heavy one when it finds a
 * change, until SIGTERM or SIGINT.
 */
static int sweep_loop(struct sm *sm)
{
	uint64_t deadline, now;
	int ret = 0;

	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	while (!stopping && !sm->port_gone) {
		/*
		 * A Trap 128 (a link changed) calls a sweep at once. The
		 * period counts the SM's clock: virtual time under ibemu,
		 * where a wait is one umad_recv() that a TICK ends (and a
		 * signal, so that SIGTERM is seen at once).
		 */
		ret = 0;
		deadline = sm_clock_ms() + sm->sweep_ms;
		while (!ret && !stopping && !sm->port_gone &&
		       !sm->handover_in) {
			now = sm_clock_ms();
			if (now >= deadline)
				break;
			ret = sm_trap_wait(
				sm, deadline - now > INT_MAX
					    ? INT_MAX
					    : (unsigned)(deadline - now));
		}
		if (stopping)
			break;
		if (sm->handover_in) {
			sm->handover_in = 0;
			printf("ibemu-sm: the master handed over: taking "
			       "over\n");
			ret = heavy(sm, wall_s(), "handover from the master");
			continue;
		}
		if (sm->standby) {
			ret = standby_poll(sm);
			continue;
		}
		if (sm->trap144) {
			/* As OpenSM: another SM appeared or changed, and the
			 * election is a heavy sweep's. */
			sm->trap144 = 0;
			printf("ibemu-sm: Trap 144 (another SM): heavy sweep "
			       "%lu\n",
			       sm->heavy_sweeps + 1);
			ret = heavy(sm, wall_s(), "trap 144");
			continue;
		}
		if (ret == 1) {
			/* As OpenSM (osm_trap_rcv.c): a link changed, and a
			 * light sweep would only ask every switch, the one
			 * gone too, to learn so; a heavy one starts from the
			 * SM's port and meets no port that is down. */
			printf("ibemu-sm: Trap 128 (traps so far: %lu): heavy "
			       "sweep %lu\n",
			       sm->traps, sm->heavy_sweeps + 1);
			ret = heavy(sm, wall_s(), "trap 128");
			continue;
		}
		sm_sweep_begin(sm, 0, "period");
		ret = sm_light_sweep(sm);
		sm_sweep_end(sm);
		if (ret > 0 && sm->sm_outranked) {
			printf("ibemu-sm: another SM outranks this one: heavy "
			       "sweep %lu\n",
			       sm->heavy_sweeps + 1);
			ret = heavy(sm, wall_s(), "another SM outranks it");
		} else if (ret > 0) {
			printf("ibemu-sm: a port changed: heavy sweep %lu\n",
			       sm->heavy_sweeps + 1);
			ret = heavy(sm, wall_s(), "a port changed");
		} else {
			status(sm);
		}
	}
	printf("ibemu-sm: stopped after %lu heavy and %lu light sweeps%s\n",
	       sm->heavy_sweeps, sm->light_sweeps,
	       sm->port_gone ? ": its port is gone (the fabric stopped?)" : "");
	if (sm->port_gone)
		return -ENODEV;
	return ret < 0 ? ret : 0;
}

int main(int argc, char **argv)
{
	struct sm sm = {
		.routing = "minhop",
		.window = 256,
		.timeout_ms = 200,
		.retries = 3,
		.ready_fd = -1,
		.cc_agent = -1,
		.last = {.vt_at_ps = UINT64_MAX},
	};
	double t0 = wall_s();
	int ret, issm;

	/* Its log is a file: each line lands at once, so an SM killed or
	 * crashed leaves its last line for 'ibemu sm status' to quote. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = parse_args(&sm, argc, argv);
	if (ret)
		return ret;
	/* A bad policy is a usage error, found before any port is opened. */
	if (sm_cc_load(&sm)) {
		free(sm.cc);
		return 2;
	}
	ret = sm_smp_open(&sm);
	if (ret) {
		fprintf(stderr, "ibemu-sm: cannot open the umad port: %s\n",
			strerror(-ret));
		free(sm.cc);
		return 1;
	}
	issm = issm_open(&sm);
	ret = sm.guid2lid_path ? sm_guid2lid_load(&sm) : 0;
	if (ret)
		fprintf(stderr, "ibemu-sm: %s: %s\n", sm.guid2lid_path,
			strerror(-ret));
	/* Until the first sweep ends, the status says "discovering". */
	if (!ret)
		status(&sm);
	sm.discovering = 1;
	if (!ret)
		ret = heavy(&sm, t0, "start");
	if (!ret && sm.sweep_ms)
		ret = sweep_loop(&sm);
	if (issm >= 0)
		close(issm);
	if (sm.ready_fd >= 0)
		close(sm.ready_fd); /* never up: the reader sees EOF */
	if (sm.status_path)
		unlink(sm.status_path); /* it says what a running SM does */
	sm_smp_close(&sm);
	sm_sweep_free(&sm);
	return ret ? 1 : 0;
}
