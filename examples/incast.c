// SPDX-License-Identifier: MIT
/*
 * incast: ranks 1..N-1 all RDMA WRITE to rank 0 at once, each into its
 * own region of rank 0's buffer, a window of WRITEs in flight, then a
 * SEND that tells rank 0 it is done (RC: it arrives after the WRITEs).
 * Each sender measures its throughput from the barrier to its SEND's
 * completion and publishes it in the key-value store; rank 0 checks
 * every region, then prints each sender's throughput and all of them
 * together (their bytes over the longest sender's time), which the link
 * into rank 0 bounds.
 *
 * usage: ibemu run -n N incast [-s SIZE] [-m MESSAGES] [-w WINDOW]
 */
#include "common/ex.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct opts {
	size_t size; /* bytes of a WRITE */
	int messages, window;
};

/* What a sender publishes under "incast.result". */
struct result {
	uint64_t bytes, ps;
	char host[64];
};

#define DONE_LEN 8
#define DONE_ID	 (1ull << 32)

static size_t region(const struct opts *o, int sender)
{
	return (size_t)(sender - 1) * o->size;
}

/* A sender: its WRITEs, a window at a time, then the SEND. */
static struct result send_all(struct ex *e, const struct opts *o)
{
	struct result r = {0};
	int posted = 0, completed = 0;
	uint64_t t0 = ex_now_ps();

	while (completed < o->messages) {
		while (posted < o->messages && posted - completed < o->window) {
			ex_post(e, 0, IBV_WR_RDMA_WRITE, 0, o->size,
				region(o, e->rank), (uint64_t)posted, 1);
			posted++;
		}
		ex_wait(e, 1, NULL);
		completed++;
	}
	ex_post(e, 0, IBV_WR_SEND, 0, DONE_LEN, 0, DONE_ID, 1);
	ex_wait(e, 1, NULL);
	r.ps = ex_now_ps() - t0;
	r.bytes = (uint64_t)o->size * (uint64_t)o->messages;
	snprintf(r.host, sizeof(r.host), "%s", ibemu_host ? ibemu_host() : "");
	return r;
}

static void report(struct ex *e, const struct opts *o)
{
	uint64_t bytes = 0, longest = 0;
	struct result r;
	int s;

	printf("# incast: %d senders RDMA WRITE %d x %zu bytes each to rank "
	       "0 (window %d)\n",
	       e->size - 1, o->messages, o->size, o->window);
	printf(" %-6s %-10s %-12s %-14s %s\n", "#rank", "host", "#bytes",
	       "time[usec]", "BW[Gb/sec]");
	for (s = 1; s < e->size; s++) {
		if (ibemu_kv_get(s, "incast.result", &r, sizeof(r)) !=
		    (ssize_t)sizeof(r))
			ex_fail(e, "ibemu_kv_get(%d): %s", s, strerror(errno));
		bytes += r.bytes;
		if (r.ps > longest)
			longest = r.ps;
		printf(" %-6d %-10s %-12llu %-14.2f %.2f\n", s, r.host,
		       (unsigned long long)r.bytes, r.ps / 1e6,
		       r.ps ? r.bytes * 8.0 / (r.ps / 1e3) : 0);
	}
	/* All senders' bytes over the longest sender's time. */
	printf(" %-6s %-10s %-12llu %-14.2f %.2f\n", "all", "",
	       (unsigned long long)bytes, longest / 1e6,
	       longest ? bytes * 8.0 / (longest / 1e3) : 0);
	fflush(stdout);
}

static int parse(int argc, char **argv, struct opts *o)
{
	int c;

	while ((c = getopt(argc, argv, "s:m:w:")) != -1) {
		switch (c) {
		case 's':
			o->size = strtoul(optarg, NULL, 0);
			if (!o->size || o->size > 1u << 30)
				return -1;
			break;
		case 'm':
			o->messages = atoi(optarg);
			if (o->messages < 1)
				return -1;
			break;
		case 'w':
			o->window = atoi(optarg);
			if (o->window < 1 || o->window > 1024)
				return -1;
			break;
		default:
			return -1;
		}
	}
	return optind == argc ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct opts o = {.size = 65536, .messages = 100, .window = 16};
	struct result r;
	struct ex e;
	int s;

	if (parse(argc, argv, &o)) {
		fprintf(stderr,
			"usage: %s [-s SIZE] [-m MESSAGES] "
			"[-w WINDOW]\n",
			argv[0]);
		return 2;
	}
	ex_open(&e, "incast");
	if (e.size < 2)
		ex_fail(&e, "needs 2 ranks or more");
	/* rank 0: a region per sender, then a DONE slot per sender */
	ex_register(&e,
		    e.rank ? (o.size > DONE_LEN ? o.size : DONE_LEN)
			   : (size_t)(e.size - 1) * (o.size + DONE_LEN),
		    IBV_ACCESS_REMOTE_WRITE);
	ex_connect(&e, o.window + 2, 4);
	if (e.rank == 0)
		for (s = 1; s < e.size; s++)
			ex_post_recv(&e, s,
				     (size_t)(e.size - 1) * o.size +
					     (size_t)(s - 1) * DONE_LEN,
				     DONE_LEN, DONE_ID + (uint64_t)s);
	else
		ex_fill(e.buf, o.size, e.rank, 0, 0);
	ex_barrier(&e);
	if (e.rank == 0) {
		ex_wait(&e, e.size - 1, NULL);
		for (s = 1; s < e.size; s++)
			ex_check(&e, e.buf + region(&o, s), o.size, s, 0, 0,
				 "incast");
	} else {
		r = send_all(&e, &o);
		if (ibemu_kv_put("incast.result", &r, sizeof(r)))
			ex_fail(&e, "ibemu_kv_put: %s", strerror(errno));
	}
	if (ibemu_kv_fence())
		ex_fail(&e, "ibemu_kv_fence: %s", strerror(errno));
	if (e.rank == 0)
		report(&e, &o);
	ex_close(&e);
	return 0;
}
