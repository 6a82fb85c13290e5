// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the session protocol as the daemon reads it:
 * arbitrary messages, with arbitrary file descriptors where SCM_RIGHTS
 * would bring them, through ibemu__sess_conn_handle() of a real session
 * server (fuzz-daemon.h) on a real engine. Calls, port streams (SEND),
 * verbs streams (VERBS_OPEN and every control call, KICK) all meet the
 * parser; the rings stay empty (fuzz-rings drives those). Every reply
 * must be a well-formed message, the loop must turn after each message,
 * and when the server stops every fd given to it must be closed.
 *
 * An input is a sequence of records:
 *   ctl    bits 0-2: fds (at most 4, as conn_read() takes);
 *          bit 3: on a new connection; bit 4: fix the header's magic,
 *          version and length; bit 5: make VERBS_OPEN's probe readable
 *   kinds  2 bits per fd: 0 sealed memfd, 1 eventfd, 2 unsealed memfd,
 *          3 /dev/null
 *   size   the memfds' size: 4 KiB << (size % 13)
 *   len    2 bytes, little-endian: the message's bytes that follow
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fuzz-daemon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REC_HEAD 5
#define MAX_FDS	 4
/* Records an input of MAX_LEN bytes can hold. */
#define REC_MAX 1024

/* What VERBS_OPEN's probe reads in this process. */
static volatile uint64_t probe = 0x1beb0b5e;

static int fd_make(unsigned kind, size_t bytes)
{
	switch (kind) {
	case 0:
		return ibemu_fuzz_memfd(bytes, 0);
	case 1:
		return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	case 2:
		return ibemu_fuzz_memfd(bytes, 1);
	default:
		return open("/dev/null", O_RDWR | O_CLOEXEC);
	}
}

static void fix(uint8_t *msg, size_t len, uint8_t ctl)
{
	struct ibemu_sess_hdr h;

	if (len < sizeof(h))
		return;
	memcpy(&h, msg, sizeof(h));
	if (ctl & 0x10) {
		h.magic = IBEMU_SESS_MAGIC;
		h.version = IBEMU_SESS_VERSION;
		h.len = (uint32_t)(len - sizeof(h));
		memcpy(msg, &h, sizeof(h));
	}
	if ((ctl & 0x20) && h.type == IBEMU_SESS_VERBS_OPEN &&
	    len == sizeof(h) + sizeof(struct ibemu_verbs_open)) {
		struct ibemu_verbs_open o;

		memcpy(&o, msg + sizeof(h), sizeof(o));
		o.probe_addr = (uint64_t)(uintptr_t)&probe;
		o.probe = probe;
		memcpy(msg + sizeof(h), &o, sizeof(o));
	}
}

/*
 * The fds handed to the daemon in this input, by number and file: each
 * must be closed (or reused for another file) once the server stopped.
 * Counting open fds would not do: the leak checker opens its own.
 */
static struct given {
	int fd;
	dev_t dev;
	ino_t ino;
} given[REC_MAX * MAX_FDS];
static unsigned ngiven;

static void given_add(int fd)
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st))
		abort();
	given[ngiven++] = (struct given){fd, st.st_dev, st.st_ino};
}

static void given_check(void)
{
	struct stat st;
	unsigned i;

	for (i = 0; i < ngiven; i++) {
		if (!fstat(given[i].fd, &st) && st.st_dev == given[i].dev &&
		    st.st_ino == given[i].ino) {
			fprintf(stderr, "fuzz-sess: fd %d left open\n",
				given[i].fd);
			abort();
		}
	}
	ngiven = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t msg[IBEMU_SESS_STREAM_MAX_MSG];
	struct ibemu_daemon *d;
	struct ibemu_sess_conn *c = NULL;
	int peer = -1;
	size_t off = 0;

	d = ibemu_fuzz_daemon_create();
	while (size - off >= REC_HEAD &&
	       ngiven + MAX_FDS <= REC_MAX * MAX_FDS) {
		uint8_t ctl = data[off], kinds = data[off + 1];
		size_t bytes = (size_t)4096 << (data[off + 2] % 13);
		size_t len = data[off + 3] | (size_t)data[off + 4] << 8, max;
		int fds[MAX_FDS], nfds = ctl & 7, i;

		off += REC_HEAD;
		if (len > size - off)
			len = size - off;
		if (!c || (ctl & 8)) {
			if (peer >= 0)
				close(peer); /* the process hung up */
			c = ibemu_fuzz_conn_open(d, &peer);
		}
		/* conn_read() refuses a longer message before it is read. */
		max = c->kind == IBEMU_SESS_CONN_STREAM
			      ? IBEMU_SESS_STREAM_MAX_MSG
			      : IBEMU_SESS_MAX_MSG;
		memcpy(msg, data + off, len < max ? len : max);
		off += len;
		if (len > max)
			len = max;
		fix(msg, len, ctl);
		if (nfds > MAX_FDS)
			nfds = MAX_FDS;
		for (i = 0; i < nfds; i++) {
			fds[i] = fd_make((kinds >> (2 * i)) & 3, bytes);
			given_add(fds[i]);
		}
		ibemu_fuzz_conn_feed(c, msg, len, fds, nfds);
		ibemu_fuzz_replies(peer, NULL, 0);
		if (c->closing)
			c = NULL; /* freed by its close callback, below */
		/* Close callbacks, the ring drain, the engine's pump. */
		uv_run(&d->loop, UV_RUN_NOWAIT);
	}
	if (peer >= 0)
		close(peer);
	ibemu_fuzz_daemon_destroy(d);
	given_check();
	return 0;
}
