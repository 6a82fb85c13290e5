/* SPDX-License-Identifier: MIT */
/*
 * A fabric daemon for the session fuzz targets (fuzz-sess, fuzz-rings):
 * the small fabric of fuzz-fabric.h with test routes, a libuv loop and
 * the real session server on it (listening in a private directory), but
 * no control server and no fork. Connections are accepted through the
 * server's own accept op from one end of a socketpair, so replies are
 * real messages the fuzzer reads back; messages go in through
 * ibemu__sess_conn_handle(), without the socket read.
 */
#ifndef IBEMU_FUZZ_DAEMON_H
#define IBEMU_FUZZ_DAEMON_H

#include <stddef.h>
#include <stdint.h>

#include "daemon.h"
#include "sess.h"

/* A daemon serving sess.sock for the fuzz fabric; aborts on failure. */
struct ibemu_daemon *ibemu_fuzz_daemon_create(void);
/* Stops the session server, closes the loop and frees it all. */
void ibemu_fuzz_daemon_destroy(struct ibemu_daemon *d);

/* A client connection of this process; its socket's other end in *peer. */
struct ibemu_sess_conn *ibemu_fuzz_conn_open(struct ibemu_daemon *d, int *peer);

/*
 * Hands message 'msg' ('len' bytes, copied to an aligned buffer) and the
 * fds (owned by the daemon from here) to connection 'c', as if received.
 */
void ibemu_fuzz_conn_feed(struct ibemu_sess_conn *c, const void *msg,
			  size_t len, int *fds, int nfds);

/*
 * Reads what the daemon wrote to 'peer' and checks each message is a
 * well-formed session message: aborts if not. Returns the status of the
 * last one (0 if none) and copies its payload (at most 'cap' bytes) to
 * 'out' when 'out' is not NULL.
 */
int ibemu_fuzz_replies(int peer, void *out, size_t cap);

/* A memfd of 'bytes', sealed against shrinking unless 'unsealed'. */
int ibemu_fuzz_memfd(size_t bytes, int unsealed);

/* Open file descriptors of this process (leak checks). */
int ibemu_fuzz_nfds(void);

#endif
