/* SPDX-License-Identifier: MIT */
/*
 * Inside ibemu's libibverbs.so.1: the objects behind the public structs
 * (each embeds the struct programs see as its first member, as rdma-core's
 * providers do), the session client they are queried through
 * (verbs_sess.c), and the macros that export the API with rdma-core's
 * symbol versions (libibverbs.map).
 */
#ifndef IBEMU_VERBS_INT_H
#define IBEMU_VERBS_INT_H

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "sess_proto.h"
#include "verbs_proto.h"

/* The library is built with -fvisibility=hidden; the API is exported. */
#define VERBS_EXPORT __attribute__((visibility("default")))

/*
 * A name defined in two versions: 'impl' is exported as 'name@@node' (the
 * default, what the linker binds new programs to) or 'name@node' (kept
 * for programs linked long ago). The implementation itself must be
 * VERBS_EXPORT for the alias to be; the map keeps its own name local.
 */
#define VERBS_SYMVER_DEFAULT(impl, name, node) \
	__asm__(".symver " #impl ", " #name "@@" node)
#define VERBS_SYMVER_COMPAT(impl, name, node) \
	__asm__(".symver " #impl ", " #name "@" node)

/* verbs.h turns these names into inline wrappers; the library defines the
 * functions the wrappers call. */
#undef ibv_get_device_list
#undef ibv_query_port
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

/* The process's HCA, as ibv_get_device_list() returns it. */
struct ibemu_verbs_device {
	struct ibv_device dev; /* first: programs hold &dev */
	int refs;	       /* the list's and each open context's */
	uint64_t node_guid;    /* host order */
	uint64_t sys_guid;
	uint32_t vendor_id;
	uint16_t device_id;
	uint16_t partition_cap;
	unsigned nports;
};

/*
 * An open device. Object counts and the key counter are under
 * context.mutex (ibv_context's own, which rdma-core also takes for the
 * completion channels' reference counts).
 */
struct ibemu_verbs_context {
	struct verbs_context vctx; /* first; ends with the ibv_context */
	struct ibemu_verbs_device *dev;
	uint32_t next_key; /* lkey/rkey of the next MR */
	unsigned npds, nmrs, ncqs, nahs;
};

struct ibemu_verbs_pd {
	struct ibv_pd pd;
	unsigned users; /* MRs, AHs (and later QPs) on it */
};

struct ibemu_verbs_mr {
	struct ibv_mr mr;
	unsigned access;
};

struct ibemu_verbs_ah {
	struct ibv_ah ah;
	struct ibv_ah_attr attr;
};

struct ibemu_verbs_cq;

/*
 * A completion channel: 'fd' is an eventfd in semaphore mode that counts
 * the events queued on 'head' (CQs, each at most once: an armed CQ raises
 * one event, IBA 11.4.2.2). A CQ destroyed with its event unread leaves a
 * count with no event behind it ('stale'), which a reader skips.
 */
struct ibemu_verbs_channel {
	struct ibv_comp_channel ch;
	pthread_mutex_t lock;
	struct ibemu_verbs_cq *head, *tail;
	unsigned stale;
};

struct ibemu_verbs_cq {
	struct ibv_cq cq; /* mutex, cond and comp_events_completed used */
	struct ibemu_verbs_cq *next_event; /* on the channel's queue */
	int armed;	      /* req_notify_cq: 1 any, 2 solicited */
	int queued;	      /* an event is on the channel */
	uint32_t events_read; /* by ibv_get_cq_event */
};

static inline struct ibemu_verbs_context *
ibemu__verbs_ctx(struct ibv_context *context)
{
	return (struct ibemu_verbs_context *)((char *)context -
					      offsetof(struct verbs_context,
						       context));
}

/* Returns NULL with errno set to 'err' (the verbs convention). */
static inline void *ibemu__verbs_null(int err)
{
	errno = err;
	return NULL;
}

/* verbs_sess.c */
/*
 * CA_QUERY: the HCA this process is bound to, in *out (free() it). Returns
 * 0 or -errno: -ENODEV outside 'ibemu exec'; other failures are explained
 * on stderr once.
 */
int ibemu__verbs_ca_query(struct ibemu_sess_ca **out);
/* PORT_QUERY: port 'port' of HCA 'host'; 0 or -errno (-EINVAL: no port). */
int ibemu__verbs_port_query(const char *host, unsigned port,
			    struct ibemu_sess_port_attr *out);

/* device.c */
/* Drops a reference to 'dev', freeing it with the last one. */
void ibemu__verbs_device_put(struct ibemu_verbs_device *dev);

/* query.c */
/* Fills 'attr' from what the device list said of the HCA. */
void ibemu__verbs_device_attr(struct ibemu_verbs_context *ctx,
			      struct ibv_device_attr *attr);
int ibemu__verbs_query_port(struct ibv_context *context, uint8_t port_num,
			    struct ibv_port_attr *attr, size_t len);
int ibemu__verbs_query_device_ex(struct ibv_context *context,
				 const struct ibv_query_device_ex_input *input,
				 struct ibv_device_attr_ex *attr,
				 size_t attr_size);

/* ops.c */
/* Fills the context's ops tables: what ibemu does, stubs for the rest. */
void ibemu__verbs_ops_init(struct ibemu_verbs_context *ctx);

/* cq.c */
int ibemu__verbs_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int ibemu__verbs_req_notify_cq(struct ibv_cq *cq, int solicited_only);
/*
 * A completion reached 'cq' ('solicited': with the Solicited Event bit):
 * if the CQ is armed for it, queues one event on its channel. For the
 * transport; any thread.
 */
void ibemu__verbs_cq_event(struct ibv_cq *cq, int solicited);

/* pd.c */
/* A user of 'pd' more (+1) or less (-1): MRs, AHs, QPs keep it alive. */
void ibemu__verbs_pd_use(struct ibv_pd *pd, int delta);

#endif
