// SPDX-License-Identifier: MIT
/*
 * The daemon the session fuzz targets run (fuzz-daemon.h): what
 * daemon_init() builds for a fabric, minus the fork, the runtime lock and
 * the control server, so that each input meets a fresh session server
 * with no binding, no transport and no connection left by the one before.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz-daemon.h"
#include "fuzz-fabric.h"
#include "model.h"
#include "routing.h"
#include "transport.h"

static char run_dir[64];

static void run_dir_remove(void)
{
	char issm[96];

	snprintf(issm, sizeof(issm), "%s/issm", run_dir);
	rmdir(issm);
	rmdir(run_dir);
}

static void fail(const char *what)
{
	fprintf(stderr, "fuzz-daemon: %s\n", what);
	abort();
}

struct ibemu_daemon *ibemu_fuzz_daemon_create(void)
{
	struct ibemu_routes *r = NULL;
	struct ibemu_daemon *d;

	if (!run_dir[0]) {
		snprintf(run_dir, sizeof(run_dir), "/tmp/ibemu-fuzz-XXXXXX");
		if (!mkdtemp(run_dir))
			fail("mkdtemp");
		atexit(run_dir_remove);
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		fail("out of memory");
	d->topo = ibemu_fuzz_topo(); /* borrowed: the fuzzer keeps it */
	d->reserve_fd = -1;
	d->lock_fd = -1;
	d->attached = &ibemu__daemon_none_attached;
	ibemu_rule_init(&d->rule, IBEMU_CLOCK_QUIESCE, IBEMU_TP_DOORBELL_PS);
	snprintf(d->paths.dir, sizeof(d->paths.dir), "%s", run_dir);
	if (ibemu_model_create(d->topo, &d->engine) ||
	    ibemu_routing_run_topo(ibemu_routing_find("minhop"), d->topo, &r) ||
	    ibemu_engine_apply_routes(d->engine, r))
		fail("cannot build the fabric");
	ibemu_routes_destroy(r);
	if (uv_loop_init(&d->loop))
		fail("uv_loop_init");
	d->loop.data = d;
	ibemu__daemon_pump_init(d);
	if (ibemu__sess_server_start(d))
		fail("cannot start the session server");
	return d;
}

void ibemu_fuzz_daemon_destroy(struct ibemu_daemon *d)
{
	/* ibemu_daemon_stop()'s order: servers first, then the handles. */
	ibemu__sess_server_stop(d);
	d->stopping = 1;
	ibemu__daemon_pump_close(d);
	uv_run(&d->loop, UV_RUN_DEFAULT);
	if (uv_loop_close(&d->loop))
		fail("the loop has handles left");
	ibemu_engine_destroy(d->engine);
	free(d);
}

struct ibemu_sess_conn *ibemu_fuzz_conn_open(struct ibemu_daemon *d, int *peer)
{
	struct ibemu_sess_server *s = d->sess;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		fail("socketpair");
	/* The listener's accept op: SO_PEERCRED names this process. */
	s->listener.ops->accept(&s->listener, sv[0]);
	if (!s->conns || s->conns->fd != sv[0])
		fail("connection refused");
	*peer = sv[1];
	return s->conns;
}

void ibemu_fuzz_conn_feed(struct ibemu_sess_conn *c, const void *msg,
			  size_t len, int *fds, int nfds)
{
	/* As conn_read() hands it over: in a malloc'd (aligned) buffer. */
	uint8_t *buf = malloc(len ? len : 1);

	if (!buf)
		fail("out of memory");
	memcpy(buf, msg, len);
	ibemu__sess_conn_handle(c, buf, len, fds, nfds);
	free(buf);
}

int ibemu_fuzz_replies(int peer, void *out, size_t cap)
{
	static uint8_t buf[IBEMU_SESS_STREAM_MAX_MSG];
	struct ibemu_sess_hdr h;
	int status = 0;
	ssize_t n;

	for (;;) {
		n = recv(peer, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
		if (n <= 0)
			return status;
		if ((size_t)n > sizeof(buf) || (size_t)n < sizeof(h))
			fail("reply of a bad size");
		memcpy(&h, buf, sizeof(h));
		if (h.magic != IBEMU_SESS_MAGIC ||
		    h.version != IBEMU_SESS_VERSION ||
		    h.len != (size_t)n - sizeof(h) || !h.type ||
		    h.type >= IBEMU_SESS_NTYPES)
			fail("malformed reply");
		if ((h.type == IBEMU_SESS_ERROR) != (h.status != 0) ||
		    h.status > 0)
			fail("reply status does not match its type");
		status = h.status;
		if (out)
			memcpy(out, buf + sizeof(h), h.len < cap ? h.len : cap);
	}
}

int ibemu_fuzz_memfd(size_t bytes, int unsealed)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0 || ftruncate(fd, (off_t)bytes))
		fail("memfd");
	if (!unsealed && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK))
		fail("memfd seal");
	return fd;
}

int ibemu_fuzz_nfds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;

	if (!dir)
		fail("/proc/self/fd");
	while (readdir(dir))
		n++;
	closedir(dir);
	return n;
}
