/* SPDX-License-Identifier: MIT */
/*
 * Inside ibemu's libibumad.so.3: the session protocol client (umad_sess.c)
 * that the public API (umad.c, umad_ca.c) is built on, the table of open
 * ports, and warnings printed the way rdma-core's libibumad prints them.
 */
#ifndef IBEMU_UMAD_INT_H
#define IBEMU_UMAD_INT_H

#include <stdint.h>

#include <infiniband/umad.h>

#include "mad_hdr.h"
#include "sess_proto.h"

/* The library is built with -fvisibility=hidden; the API is exported. */
#define UMAD_EXPORT __attribute__((visibility("default")))

/*
 * ib_umad refuses a MAD write shorter than the MAD and RMPP headers
 * (IB_MGMT_RMPP_HDR); one longer than IBEMU_MAD_LEN must be an RMPP
 * transfer (IBA 13.6).
 */
#define UMAD_MIN_MAD_LEN IBEMU_RMPP_HDR_END

/* umad_debug()'s level. */
int ibemu__umad_debug_level(void);

/* "ibwarn: [PID] FUNC: message" on stderr, as rdma-core's IBWARN. */
void ibemu__umad_warn(const char *func, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define UMAD_DEBUG(...)                                          \
	do {                                                     \
		if (ibemu__umad_debug_level())                   \
			ibemu__umad_warn(__func__, __VA_ARGS__); \
	} while (0)

/*
 * Whether this process runs under 'ibemu exec' ($IBEMU_SESSION_SOCKET
 * set). The first time it is not, says on stderr how to attach.
 */
int ibemu__umad_attached(void);

/*
 * CA_QUERY: the HCA this process is bound to, in *out (free() it).
 * Returns 0 or -errno; a failure to attach is explained on stderr once.
 */
int ibemu__umad_query(struct ibemu_sess_ca **out);

/*
 * umad_ca.c: the CA's name is its HCA's topology name (what libibverbs
 * calls the device), cut to what umad_ca_t holds. The name CAs had before
 * (UMAD_CA_OLD_NAME) is still taken for the CA, as NULL and "" are.
 */
#define UMAD_CA_OLD_NAME "ibemu0"
void ibemu__umad_ca_name(const struct ibemu_sess_ca *ca,
			 char name[UMAD_CA_NAME_LEN]);
/*
 * CA_QUERY for a call that names CA 'ca_name': 0 with *out (free() it) if
 * the HCA answers to it; -ENOENT if it names another CA (or, named, could
 * not be asked: rdma-core takes a given name as it is); -ENODEV if the
 * default CA could not be asked.
 */
int ibemu__umad_ca_named(const char *ca_name, struct ibemu_sess_ca **out);

/*
 * OPEN: a port stream for port 'port' (1..) of this process's HCA.
 * Returns the stream's fd (non-blocking, close-on-exec) or -errno.
 */
int ibemu__umad_open(unsigned port, struct ibemu_sess_opened *out);

/* REGISTER (fills r->agent_id) and UNREGISTER: 0 or -errno. */
int ibemu__umad_register(struct ibemu_sess_register *r);
int ibemu__umad_unregister(uint64_t session, uint32_t agent_id);

/* The directory of sess.sock, where the issm file lives; 0 or -errno. */
int ibemu__umad_runtime_dir(char *dir, size_t len);

/*
 * Open ports, by fd: the session that names the stream in REGISTER and
 * UNREGISTER, which agent ids are registered on it, and for which of them
 * the kernel would do RMPP (an RMPP version, no UMAD_USER_RMPP flag).
 */
int ibemu__umad_port_add(int fd, uint64_t session, unsigned flags);
void ibemu__umad_port_del(int fd);
/* 0 and the session, or -EBADF for an fd that is not an open port. */
int ibemu__umad_port_session(int fd, uint64_t *session);
void ibemu__umad_port_set_agent(int fd, uint32_t agent_id, int registered,
				int rmpp);
int ibemu__umad_port_has_agent(int fd, uint32_t agent_id);
int ibemu__umad_port_agent_rmpp(int fd, uint32_t agent_id);
/*
 * A process that sets this to 1 before it opens a port lets umad_send
 * queue its MADs (umad.c, "Deferred SENDs"); ibemu-sm does.
 */
#define IBEMU_UMAD_DEFER_ENV "IBEMU_UMAD_DEFER_SENDS"
/* How umad.c reads and writes a port's socket. */
#define IBEMU_UMAD_PORT_PEEKS  1u /* SO_PEEK_OFF set: RECVs read in batches */
#define IBEMU_UMAD_PORT_DEFERS 2u /* SENDs queued (IBEMU_UMAD_DEFER_SENDS) */
unsigned ibemu__umad_port_flags(int fd);
/*
 * A RECV read whole that did not fit the caller's buffer, kept for the
 * port's next umad_recv (ib_umad keeps such a MAD queued). stash takes
 * 'msg' (malloc'd): 0, or -EBADF (not taken); unstash gives it back (the
 * caller frees it), or NULL; stashed says whether one waits.
 */
int ibemu__umad_port_stash(int fd, void *msg, size_t len);
void *ibemu__umad_port_unstash(int fd, size_t *len);
int ibemu__umad_port_stashed(int fd);
/*
 * The time rule on a port (umad_time.c, sess_proto.h's WAIT): 'took'
 * counts a RECV or TICK taken off its stream; 'wait' gives what a WAIT
 * says, what it has taken and a new wait id (0, or -EBADF).
 */
void ibemu__umad_port_took(int fd);
int ibemu__umad_port_wait(int fd, uint64_t *seen, uint64_t *wait_id);

/*
 * The process's virtual clock (umad_time.c): moved up to the time of
 * what reaches it (OPEN, RECV, TICK); a SEND is stamped
 * IBEMU_SESS_MAD_SEND_PS after it, and the clock moves to the stamp.
 */
void ibemu__umad_clock_at_least(uint64_t t);
uint64_t ibemu__umad_stamp(void);
/* ibemu's own API (IBEMU_1.0), as verbs/ibemu.h declares it. */
uint64_t ibemu_umad_now_ps(void);
void ibemu_umad_compute_ps(uint64_t ps);
/*
 * The process goes on with work that reads and sends no MAD (an SM
 * writing its reports) until its next call on port 'fd': it counts as
 * waiting meanwhile (a WAIT without timeout). 0 or -errno.
 */
int ibemu_umad_idle(int fd);

#endif
