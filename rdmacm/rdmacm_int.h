/* SPDX-License-Identifier: MIT */
/*
 * What the files of librdmacm.so.1 share: the library's wrappers around
 * rdma_cma.h's public structs (an event channel with its queue, an id with
 * its event count), the device table, and the session calls that look
 * fabric addresses up. See README.md.
 */
#ifndef IBEMU_RDMACM_INT_H
#define IBEMU_RDMACM_INT_H

#include <pthread.h>
#include <stdint.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define RDMACM_EXPORT __attribute__((visibility("default")))

/* rdma-core's ERR(): -1 with errno, the API's convention. */
static inline int rdmacm_err(int e)
{
	errno = e;
	return -1;
}

/* One opened device (the process's HCA), kept open for the library's life
 * as rdma-core keeps its cma devices. */
struct rdmacm_device {
	struct ibv_context *verbs;
	struct ibv_pd *pd; /* for QPs created without one; lazily */
	uint8_t nports;
};

struct rdmacm_event;
struct rdmacm_mc;

/* An event channel: an eventfd counting the queued events (the semaphore
 * mode reads one at a time), so it polls readable exactly while one waits,
 * as the kernel's rdma_cm fd does. */
struct rdmacm_channel {
	struct rdma_event_channel ch; /* ch.fd: the eventfd */
	pthread_mutex_t lock;
	struct rdmacm_event *head, *tail;
	int internal; /* made for a synchronous id (NULL channel) */
};

/* Where an id is in the CM protocol (cm.c), as ib_cm's states. */
enum rdmacm_cm_state {
	RDMACM_CM_IDLE,
	RDMACM_CM_LISTEN,
	RDMACM_CM_REQ_SENT, /* active: REQ out */
	RDMACM_CM_REP_RCVD, /* active without a QP: CONNECT_RESPONSE */
	RDMACM_CM_REQ_RCVD, /* passive: CONNECT_REQUEST given */
	RDMACM_CM_MRA_SENT, /* passive: the REQ came again, MRA sent */
	RDMACM_CM_REP_SENT, /* passive: accepted, waiting for RTU */
	RDMACM_CM_ESTABLISHED,
	RDMACM_CM_DREQ_SENT,
	RDMACM_CM_DISCONNECTED,
	RDMACM_CM_SIDR_REQ_SENT,
};

/* An id's side of a connection: what REQ, REP and SIDR carried. */
struct rdmacm_conn {
	enum rdmacm_cm_state state;
	uint32_t local_id, remote_id; /* Comm IDs (SIDR: the request ID) */
	uint64_t tid;		      /* of the request out with a timeout */
	uint32_t remote_qpn, remote_qkey;
	uint32_t local_psn, remote_psn;
	uint16_t peer_lid; /* the peer port's LID: CM MADs go there */
	uint8_t sl;
	uint8_t resp_res, init_depth; /* this side's, for its QP */
	uint8_t retry, rnr_retry;
	uint8_t srq;
	int backlog, pending; /* a listener's */
	uint8_t req_mad[256]; /* passive: the REQ, for rdma_accept */
};

struct rdmacm_id {
	struct rdma_cm_id id;
	pthread_mutex_t lock;
	unsigned unacked;  /* events handed out and not acked */
	int destroyed;	   /* rdma_destroy_id ran: freed at the last ack */
	int addr_resolved; /* ADDR_RESOLVED queued */
	int sync;	   /* created with a NULL channel */
	struct rdmacm_device *dev;
	/* The CM (cm.c), under its lock: the id's connection, the list of
	 * ids the CM knows, the listener of a passive id. */
	struct rdmacm_conn conn;
	struct rdmacm_id *cm_next;
	struct rdmacm_id *listener;
	int cm_known;
	/* rdma_create_ep's passive endpoint: its requests' QPs. */
	struct ibv_qp_init_attr *ep_qp_attr;
	struct ibv_pd *ep_pd;
	struct rdmacm_mc *mcs; /* multicast groups joined (mcast.c) */
};

struct rdmacm_event {
	struct rdma_cm_event ev;
	struct rdmacm_event *next;
	uint64_t at_ps;		   /* the umad clock when it was raised */
	uint8_t private_data[256]; /* ev.param's points here */
};

#define rdmacm_id_of(p)	     ((struct rdmacm_id *)(p))
#define rdmacm_channel_of(p) ((struct rdmacm_channel *)(p))

/* device.c */
/* Opens the devices once; 0 or -errno (-ENODEV: none, outside ibemu). */
int rdmacm__init(void);
/* The device the process's HCA is (only one): NULL before init. */
struct rdmacm_device *rdmacm__device(void);
/* The device's PD for QPs and SRQs made without one; NULL with errno. */
struct ibv_pd *rdmacm__device_pd(struct rdmacm_device *dev);

/* channel.c */
struct rdmacm_channel *rdmacm__channel_create(int internal);
/* Queues an event for 'id' on its channel; 0 or -ENOMEM. */
int rdmacm__event_queue(struct rdmacm_id *id, enum rdma_cm_event_type type,
			int status);
/*
 * Queues event 'tmpl' (its type, status, listen_id and param) for 'id' on
 * 'channel' (NULL: the id's), with a copy of the 'pd_len' bytes at 'pd'
 * as its private data; 0 or -ENOMEM. Any thread.
 */
int rdmacm__event_queue_ex(struct rdmacm_id *id,
			   struct rdma_event_channel *channel,
			   const struct rdma_cm_event *tmpl, const void *pd,
			   size_t pd_len);
/* For a synchronous id: takes the event just queued and returns the call's
 * result as rdma-core's ucma_complete() does (0, or -1 with errno). */
int rdmacm__sync_complete(struct rdmacm_id *id);

/* addr.c */
/*
 * Where an address is in the fabric: the HCA port that has it (host,
 * port, LID, GID). 0, -ENOENT when no HCA port has it, -EAFNOSUPPORT for a
 * family rdma_cm does not resolve, or -errno of the session call.
 */
struct rdmacm_where {
	char host[64];
	unsigned port;
	uint16_t lid;
	uint32_t ip; /* host order */
	union ibv_gid gid;
};
int rdmacm__addr_lookup(const struct sockaddr *sa, struct rdmacm_where *w);
/* The same for host name 'name' (its port 1). */
int rdmacm__host_lookup(const char *name, struct rdmacm_where *w);
/* Whether 'sa' is a wildcard address (INADDR_ANY, in6addr_any, AF_IB 0). */
int rdmacm__addr_any(const struct sockaddr *sa);
/* Bytes of a sockaddr of its family; 0 for another. */
size_t rdmacm__addr_len(const struct sockaddr *sa);
/* Writes the address of port 'w' in family 'family' into 'out', with the
 * port number (network order) 'port_be'. */
void rdmacm__addr_fill(struct sockaddr_storage *out, int family,
		       const struct rdmacm_where *w, uint16_t port_be);

/* sa.c */
/*
 * Sends SubnAdm request 'mad' (IBEMU_MAD_LEN bytes, its TID set here) from
 * the id's port to the SM and leaves the answer in 'mad': 0 (the caller
 * checks its method and status), -ETIMEDOUT without an answer after
 * 'retries' resends, -ENETUNREACH without an active port and an SM, -EIO.
 * The round trip moves the program's verbs clock on.
 */
int rdmacm__sa_call(const struct rdma_cm_id *id, uint8_t *mad, int timeout_ms,
		    int retries);

/* route.c */
/* The SA PathRecord query of rdma_resolve_route; 0 or -errno as ib_sa's
 * callback reports it (-ETIMEDOUT, -EINVAL for an SA error status, -EIO). */
int rdmacm__path_query(struct rdmacm_id *id, int timeout_ms,
		       struct ibv_sa_path_rec *out);

/* cm.c */
/* rdma_destroy_id: the CM forgets the id (and tells its peer). */
void rdmacm__cm_forget(struct rdmacm_id *id);
/* mcast.c */
/* Whether 'sa' names a multicast group; its MGID (cma_set_mgid). */
int rdmacm__mcast_mgid(const struct rdma_cm_id *id, const struct sockaddr *sa,
		       union ibv_gid *mgid);
/* Leaves every group of 'id' (rdma_destroy_id). */
void rdmacm__mcast_leave_all(struct rdmacm_id *id);

#endif
