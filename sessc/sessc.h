/* SPDX-License-Identifier: MIT */
/*
 * The session client of the client libraries: how libibumad.so.3 (umad/)
 * and libibverbs.so.1 (verbs/) reach the daemon of the fabric a process is
 * attached to, over the sess.sock that 'ibemu exec' names in
 * $IBEMU_SESSION_SOCKET (proto/sess_proto.h). A static library, built with
 * hidden visibility and linked into both: it exports nothing, and each
 * shared library has its own copy of it.
 *
 * Errors are 0 or -errno throughout; each library converts them to its
 * API's convention at its own boundary. Every function may be called from
 * any thread; one fd must not be read by two threads at once.
 */
#ifndef IBEMU_SESSC_H
#define IBEMU_SESSC_H

#include <stddef.h>
#include <stdint.h>

#include "sess_proto.h"

/* A call the daemon does not answer within this fails (-ETIMEDOUT). */
#define IBEMU_SESSC_CALL_TIMEOUT_S 30
/* The most of a daemon's refusal that is kept (its messages are shorter). */
#define IBEMU_SESSC_WHY_LEN 512
/* The most fds one message carries (VERBS_OPEN: 2, CQ/QP create: 1-2). */
#define IBEMU_SESSC_MAX_FDS 4

/*
 * One library's client: the name it signs its stderr lines with, what it
 * says outside 'ibemu exec' (NULL: nothing, as a host without HCAs), and
 * whether it has said why it cannot reach the fabric. It says that once:
 * tools call a library many times and one line is enough. The library
 * owns it (a static object, IBEMU_SESSC_INIT).
 */
struct ibemu_sessc {
	const char *name;
	const char *outside;
	int said;
};
#define IBEMU_SESSC_INIT(lib, outside_msg)               \
	{                                                \
		.name = (lib), .outside = (outside_msg), \
	}

/*
 * A daemon's ERROR reply: its status (-errno; -EIO if it gave none) and
 * its message ("" if none). 'status' is 0 when the daemon did not refuse,
 * so that a caller tells the daemon's answer from a broken exchange.
 */
struct ibemu_sessc_refusal {
	int status;
	char why[IBEMU_SESSC_WHY_LEN];
};

/* No refusal (yet): what 'r' says before a reply or when none came. */
static inline void ibemu_sessc_refusal_clear(struct ibemu_sessc_refusal *r)
{
	r->status = 0;
	r->why[0] = '\0';
}

/*
 * Prints "NAME (ibemu): MESSAGE" on stderr the first time 'c' says
 * anything; later calls print nothing.
 */
void ibemu_sessc_say_once(struct ibemu_sessc *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The path of sess.sock, or NULL outside 'ibemu exec' (unset or empty). */
const char *ibemu_sessc_socket_path(void);

/*
 * Whether this process runs under 'ibemu exec'. The first time it does
 * not, says c->outside (if any).
 */
int ibemu_sessc_attached(struct ibemu_sessc *c);

/*
 * Connects to sess.sock with send and receive timeouts of
 * IBEMU_SESSC_CALL_TIMEOUT_S. Returns the fd (close-on-exec), -ENODEV
 * outside 'ibemu exec', or -errno (-ENAMETOOLONG: not a socket path), what
 * went wrong said once.
 */
int ibemu_sessc_connect(struct ibemu_sessc *c);

/*
 * Fills 'b' for HCA 'host' (NULL or "": the daemon's choice) and port
 * 'port'. Returns 0, or -EINVAL (said once) if no node has a name that
 * long.
 */
int ibemu_sessc_bind_fill(struct ibemu_sessc *c, struct ibemu_sess_bind *b,
			  const char *host, unsigned port);

/*
 * Sends message 'type' with 'len' bytes of 'msg' (NULL if 0) and 'nfds'
 * (at most IBEMU_SESSC_MAX_FDS) of 'fds' by SCM_RIGHTS on 'fd', with
 * sendmsg flags 'flags' (MSG_NOSIGNAL is added). The fds stay the
 * caller's. Returns 0 or -errno.
 */
int ibemu_sessc_send(int fd, uint16_t type, const void *msg, size_t len,
		     const int *fds, int nfds, int flags);

/*
 * Reads one reply to 'type' from 'fd' into 'reply' (at most 'cap' bytes;
 * *got set). Returns 0; -EPROTO for a message that is not a reply to
 * 'type' (magic, version, length, type, or longer than 'cap'); the
 * daemon's status for an ERROR (in 'r' with its message); -ETIMEDOUT if
 * the daemon did not answer; or the -errno of recv(). A reset is read
 * past once: a daemon that closed with our request unread left its
 * ERROR behind the reset.
 */
int ibemu_sessc_recv(int fd, uint16_t type, void *reply, size_t cap,
		     size_t *got, struct ibemu_sessc_refusal *r);

/*
 * ibemu_sessc_send() then ibemu_sessc_recv() on 'fd'. A send that finds
 * the daemon's end closed still reads: a daemon out of file descriptors
 * answers a connection with an ERROR and closes it before our request.
 */
int ibemu_sessc_exchange(int fd, uint16_t type, const void *req, size_t len,
			 const int *fds, int nfds, void *reply, size_t cap,
			 size_t *got, struct ibemu_sessc_refusal *r);

/*
 * A call: connect, one request, one reply, close (ibemu_sessc_exchange).
 * Returns as ibemu_sessc_recv(), or as ibemu_sessc_connect().
 */
int ibemu_sessc_call(struct ibemu_sessc *c, uint16_t type, const void *req,
		     size_t len, void *reply, size_t cap, size_t *got,
		     struct ibemu_sessc_refusal *r);

/*
 * Says once why a call that returned 'ret' failed: the daemon's message,
 * else the error (nothing for -ENODEV: outside 'ibemu exec').
 */
void ibemu_sessc_explain(struct ibemu_sessc *c, int ret,
			 const struct ibemu_sessc_refusal *r);

/*
 * CA_QUERY for HCA $IBEMU_HOST: the HCA this process is bound to, in
 * *out (the caller frees it). Returns 0 or -errno (-ENODEV outside
 * 'ibemu exec'), a failure explained once.
 */
int ibemu_sessc_ca_query(struct ibemu_sessc *c, struct ibemu_sess_ca **out);

#endif
