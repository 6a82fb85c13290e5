/* SPDX-License-Identifier: MIT */
/*
 * rsockets: stream sockets over RC connections made through this library's
 * rdma_cm (rsocket.h's API). Both ends run this library, so the protocol
 * on the QP is ours, not rdma-core's (the two do not interoperate; no
 * program can tell, as the API is the same):
 * - the connection carries a hello as private data both ways (magic,
 *   version, receive slots, slot size);
 * - each side posts 'rx_slots' receives of RSOCK_SLOT bytes; a byte stream
 *   is cut into SENDs of up to RSOCK_SLOT bytes, each with immediate data
 *   (below), so a receive slot holds one SEND;
 * - credits: a side may send while the peer has receives it has not used;
 *   a data SEND needs two, the last being kept for a message that returns
 *   credits (a zero-length SEND whose immediate carries them), so two
 *   sides that only read can always tell each other they have read;
 * - every SEND's immediate returns the receives its sender has reposted
 *   since it last said so, and a bit says the sender shut its writing
 *   side (FIN), after which the peer's reads return 0.
 * Waiting is a poll of the socket's CQ, or a block in its completion
 * channel, so the time rule sees a waiting program (verbs/README.md).
 */
#ifndef IBEMU_RSOCKET_INT_H
#define IBEMU_RSOCKET_INT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <rdma/rdma_cma.h>

#define RSOCK_MAGIC	0x69627273u /* "ibrs" */
#define RSOCK_VERSION	1u
#define RSOCK_SLOT	16384u /* bytes a receive slot holds: one SEND */
#define RSOCK_SLOTS	32u    /* receive (and send) slots by default */
#define RSOCK_SLOTS_MAX 1024u
#define RSOCK_CTL_MAX	4u /* credit/FIN messages in flight at most */

/* Immediate data of every SEND (host order before htobe32). */
#define RSOCK_IMM_FIN	  0x80000000u
#define RSOCK_IMM_CREDITS 0x00ffffffu

/* Work request ids: a send slot's index, a receive slot's with this bit,
 * or a control message. */
#define RSOCK_WR_RECV 0x100000000ull
#define RSOCK_WR_CTL  0x200000000ull

/* The private data of the connect and of the accept. */
struct rsock_hello {
	uint32_t magic; /* network order, as all four */
	uint32_t version;
	uint32_t slots; /* receives the sender posted */
	uint32_t slot_size;
};

enum rsock_state {
	RSOCK_NEW,
	RSOCK_BOUND,
	RSOCK_LISTENING,
	RSOCK_CONNECTING, /* resolving, or waiting for ESTABLISHED */
	RSOCK_CONNECTED,
	RSOCK_FAILED, /* a connect that failed: 'err' says why */
};

struct rsock_rx {
	uint32_t slot, len, off;
};

struct rsock {
	int fd; /* the handle: the fd of 'ch', the socket's event channel */
	enum rsock_state state;
	pthread_mutex_t lock;
	struct rdma_event_channel *ch; /* O_NONBLOCK: rsockets wait by poll */
	struct rdma_cm_id *id;
	int nonblock;
	int err; /* SO_ERROR: why an asynchronous connect failed */
	int domain;

	/* options, read when the connection is made */
	uint32_t rx_slots, tx_slots, inline_size;
	int keepalive, nodelay, reuseaddr, keepidle;

	/* the connection */
	struct ibv_cq *cq;
	struct ibv_comp_channel *cc;
	struct ibv_mr *mr;
	uint8_t *mem;	  /* rx_slots receive slots, then tx_slots send slots */
	uint32_t credits; /* the peer's receives we may still use */
	uint32_t to_return; /* our receives reposted, not yet told */
	uint32_t *tx_free;  /* stack of free send slots */
	uint32_t tx_nfree;
	uint32_t ctl_inflight, sends_inflight;
	struct rsock_rx *rx; /* receives holding data, in order (a ring) */
	uint32_t rx_head, rx_count;
	int peer_fin; /* the peer shut its writing side */
	int fin_sent; /* we did */
	int shut_rd;
	int broken; /* a work completion failed: the connection is gone */
};

/* rsocket.c */
/* The socket whose handle is 'fd', or NULL (errno ENOTSOCK). */
struct rsock *rsock__find(int fd);
/* Takes the CM events waiting on the socket's channel and moves a
 * connecting socket on (0, or -1 with errno); 'block' waits for one. */
int rsock__connect_drive(struct rsock *rs, int block);

/* rsocket_io.c */
/* Builds the connection's CQ, memory, QP and receives; 0 or an errno. */
int rsock__conn_create(struct rsock *rs, uint32_t peer_slots);
void rsock__conn_destroy(struct rsock *rs);
/* Sends FIN once and waits until every send left; 0 or an errno. */
int rsock__conn_finish(struct rsock *rs);
/* Takes completions without waiting. */
void rsock__progress(struct rsock *rs);
/* poll(2) events the socket has now (after progress). */
short rsock__revents(struct rsock *rs, short events);
/* Blocks until the connection's CQ has a completion. */
void rsock__wait(struct rsock *rs);

#endif
