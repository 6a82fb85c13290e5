/* SPDX-License-Identifier: MIT */
/*
 * The session protocol between a fabric daemon and the processes attached
 * to its HCAs (the libibumad-compatible library and the libibverbs-compatible
 * one), over the fabric's owner-only socket sess.sock. The socket is
 * SOCK_SEQPACKET: one message per packet, a 16-byte header and a payload,
 * so neither side ever reassembles a stream.
 *
 * Two kinds of connection:
 * - a call: the client sends one request (CA_QUERY, PORT_QUERY, REGISTER,
 *   UNREGISTER),
 *   reads one reply (the same type, or ERROR with a message) and closes;
 * - a port stream, opened by OPEN, which is what umad_open_port() returns
 *   as its fd: the client writes SEND messages (no reply) and reads RECV
 *   messages, so the fd polls readable exactly when a MAD waits. The time
 *   rule adds one message each way (docs/design.md §3): WAIT, which the
 *   library writes as a thread is about to block in umad_recv() or
 *   umad_poll(), and TICK, the daemon's answer when the wait's timeout
 *   passed in virtual time; a TICK comes only after a WAIT with a timeout,
 *   to the call that waits for it.
 *
 * Every message carries the magic and version, checked on each one: a
 * client of another version gets an ERROR that says so, never a
 * misreading. Both ends run on one machine: host byte order, except MAD
 * bytes, which are the wire image (big-endian) as libibumad passes them.
 *
 * A wire definition of proto/, shared by the daemon (attach/sess_*.c), the
 * CLI (cli/exec.c) and the client libraries (umad/, verbs/): it includes libc
 * headers only, and every struct that crosses the socket has its size
 * asserted. A change that breaks either end bumps IBEMU_SESS_VERSION.
 */
#ifndef IBEMU_SESS_PROTO_H
#define IBEMU_SESS_PROTO_H

#include <stdint.h>

#define IBEMU_SESS_MAGIC 0x49425353u /* "IBSS" */
/* 2: MADs of RMPP transfers, up to 256 KiB; 3: PORT_QUERY, CA_QUERY says
 * the vendor and device ids and the P_Key table size; 4: verbs streams
 * (VERBS_*, payloads in verbs_proto.h); 5: MR_REG may carry a memfd of
 * the region's pages; 6: PORT_QUERY on a verbs stream, so that a context
 * queries the daemon it opened and no other; 7: port streams in virtual
 * time (SEND and RECV carry it, WAIT and TICK, OPEN says the time). */
#define IBEMU_SESS_VERSION 9u
#define IBEMU_SESS_SOCKET  "sess.sock"

/* Environment of an attached process (set by `ibemu exec`). */
#define IBEMU_SESS_ENV_SOCKET "IBEMU_SESSION_SOCKET" /* path of sess.sock */
#define IBEMU_SESS_ENV_HOST   "IBEMU_HOST"	     /* HCA to bind, by name */
/* The fabric's virtual time (ps, decimal) when `ibemu exec` ran the
 * program: where its clocks start (verbs/clock.c, vtime/). */
#define IBEMU_SESS_ENV_VTIME_START "IBEMU_VTIME_START_PS"
/* Set by `ibemu run` for each rank: its rank, the job's size, and the
 * job's id, unique in the fabric (what a job stream joins). */
#define IBEMU_SESS_ENV_RANK "IBEMU_RANK"
#define IBEMU_SESS_ENV_SIZE "IBEMU_SIZE"
#define IBEMU_SESS_ENV_JOB  "IBEMU_JOB"
/* A pipe `ibemu run` reads, named "FD:INODE": at exit, libibverbs writes
 * there the process's rank and final virtual clock, with the time its
 * clock leapt forward while it waited and the compute time it declared,
 * one line "RANK CLOCK_PS WAITED_PS COMPUTE_PS\n" (verbs/clock.c), so
 * that the run says how long it took in virtual time and what each rank
 * did of it. */
#define IBEMU_SESS_ENV_CLOCK_FD "IBEMU_RUN_CLOCK_FD"
/* Set by `ibemu run --plot`: each rank's libibverbs writes what its clock
 * did to this path plus ".RANK" at exit (verbs/trace.c). */
#define IBEMU_SESS_ENV_TRACE "IBEMU_RUN_TRACE"
/* The HCA ports' IPoIB interfaces, "ib0=127.10.0.1,ib1=...": what
 * getifaddrs() lists in a process under `ibemu exec` (devnode/ifaddrs.c). */
#define IBEMU_SESS_ENV_IFADDRS "IBEMU_IFADDRS"

enum ibemu_sess_type {
	IBEMU_SESS_ERROR = 1,	   /* d->c: status -errno, payload: text */
	IBEMU_SESS_CA_QUERY = 2,   /* call: ibemu_sess_bind -> ibemu_sess_ca */
	IBEMU_SESS_REGISTER = 3,   /* call: ibemu_sess_register, same back */
	IBEMU_SESS_UNREGISTER = 4, /* call: ibemu_sess_unregister -> empty */
	IBEMU_SESS_OPEN = 5,	   /* stream: ibemu_sess_bind -> _opened */
	IBEMU_SESS_SEND = 6,	   /* stream c->d: ibemu_sess_mad */
	IBEMU_SESS_RECV = 7,	   /* stream d->c: ibemu_sess_mad */
	/* A call, or a request on a verbs stream (its HCA; 'host' ignored). */
	IBEMU_SESS_PORT_QUERY = 8, /* ibemu_sess_bind -> _port_attr */
	/* A verbs stream (verbs_proto.h): VERBS_OPEN starts it, the rest
	 * are request/reply on it. */
	IBEMU_SESS_VERBS_OPEN = 9,	  /* ibemu_verbs_open + 2 fds -> same */
	IBEMU_SESS_VERBS_PD_ALLOC = 10,	  /* ibemu_verbs_obj */
	IBEMU_SESS_VERBS_PD_FREE = 11,	  /* ibemu_verbs_obj */
	IBEMU_SESS_VERBS_MR_REG = 12,	  /* ibemu_verbs_mr */
	IBEMU_SESS_VERBS_MR_DEREG = 13,	  /* ibemu_verbs_obj */
	IBEMU_SESS_VERBS_CQ_CREATE = 14,  /* ibemu_verbs_cq + 1-2 fds */
	IBEMU_SESS_VERBS_CQ_DESTROY = 15, /* ibemu_verbs_obj */
	IBEMU_SESS_VERBS_QP_CREATE = 16,  /* ibemu_verbs_qp + 1-2 fds */
	IBEMU_SESS_VERBS_QP_MODIFY = 17,  /* ibemu_verbs_qp_attr */
	IBEMU_SESS_VERBS_QP_QUERY = 18,	  /* ibemu_verbs_qp_attr */
	IBEMU_SESS_VERBS_QP_DESTROY = 19, /* ibemu_verbs_obj */
	IBEMU_SESS_VERBS_SRQ_CREATE = 20, /* ibemu_verbs_srq + 1 fd */
	IBEMU_SESS_VERBS_SRQ_MODIFY = 21, /* ibemu_verbs_obj */
	IBEMU_SESS_VERBS_SRQ_QUERY = 22,  /* ibemu_verbs_srq_req */
	IBEMU_SESS_VERBS_SRQ_DESTROY = 23, /* ibemu_verbs_obj */
	IBEMU_SESS_VERBS_KICK = 24, /* c->d, empty, no reply: rings have work */
	IBEMU_SESS_WAIT = 25,	    /* stream c->d: ibemu_sess_wait */
	IBEMU_SESS_TICK = 26,	    /* stream d->c: ibemu_sess_tick */
	/* A job stream (the bootstrap of 'ibemu run', verbs/bootstrap.c):
	 * JOB_JOIN starts it, the rest are request/reply on it. */
	IBEMU_SESS_JOB_JOIN = 27, /* ibemu_sess_job_join -> same */
	IBEMU_SESS_JOB_PUT = 28,  /* ibemu_sess_job_kv + value -> empty */
	IBEMU_SESS_JOB_GET = 29,  /* ibemu_sess_job_kv -> same + value */
	IBEMU_SESS_JOB_SYNC = 30, /* ibemu_sess_job_sync -> same */
	/* 31 is kept for the job's owner ('ibemu run' itself). */
	/* XRC (verbs_proto.h; 32..36 are XRC's). */
	IBEMU_SESS_VERBS_XRCD_OPEN = 32,   /* ibemu_verbs_xrcd_req + 0-1 fd */
	IBEMU_SESS_VERBS_XRCD_CLOSE = 33,  /* ibemu_verbs_obj */
	IBEMU_SESS_VERBS_XSRQ_CREATE = 34, /* ibemu_verbs_xsrq_req + 1 fd */
	IBEMU_SESS_VERBS_QP_OPEN = 35,	   /* ibemu_verbs_qp_open */
	/* 40..49: rdma_cm (librdmacm, rdmacm/). */
	IBEMU_SESS_ADDR_QUERY = 40, /* call: ibemu_sess_addr, same back */
	/* 41..45: the CM protocol (rdmacm/, attach/sess_cm.c). */
	IBEMU_SESS_CM_LISTEN = 41, /* call: ibemu_sess_cm_listen, same back */
	/* 46..49: multicast (verbs_proto.h). */
	IBEMU_SESS_VERBS_MCAST_ATTACH = 46, /* ibemu_verbs_mcast */
	IBEMU_SESS_VERBS_MCAST_DETACH = 47, /* ibemu_verbs_mcast */
	/* 50..55: the SM's MAD path at scale. */
	IBEMU_SESS_PACK = 50, /* stream, both ways: messages, see below */
	IBEMU_SESS_NTYPES
};

struct ibemu_sess_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t len;	/* payload bytes following the header */
	int32_t status; /* replies: 0 or -errno */
};
_Static_assert(sizeof(struct ibemu_sess_hdr) == 16, "sess header is 16 bytes");

#define IBEMU_SESS_HOST_LEN 64 /* a node name: at most 63 chars and NUL */
/* umad_ca_t holds ports 1-9 (UMAD_CA_MAX_PORTS - 1). */
#define IBEMU_SESS_MAX_PORTS 9
#define IBEMU_SESS_PKEYS     32
/* A call's request or reply, header included. */
#define IBEMU_SESS_MAX_MSG 4096
/*
 * MAD bytes in one SEND or RECV: a MAD of 256 bytes, or the whole message
 * of an RMPP transfer (IBA 13.6), which the daemon segments and reassembles
 * as the kernel's ib_mad does for agents registered with an RMPP version.
 * The kernel has no such bound; 256 KiB holds the NodeRecords of 2,300
 * nodes (OpenSM answers 'saquery NR' on fat-tree-2l-1152 with 137 KB).
 */
#define IBEMU_SESS_MAD_MAX (256u * 1024)
/*
 * The largest message on a port stream. A Unix socket refuses a message
 * larger than its send buffer (EMSGSIZE), so both ends set SO_SNDBUF to
 * this (the kernel doubles it; net.core.wmem_default is 208 KiB).
 */
#define IBEMU_SESS_STREAM_MAX_MSG (16u + 72u + IBEMU_SESS_MAD_MAX)

/*
 * Which HCA a process wants: 'host' by name, or empty for the one this
 * process (by pid) is already bound to, else the first HCA no live process
 * is bound to. 'port' is the port number for OPEN (0: the one libibumad
 * would pick: the first Active, else LinkUp, else not Disabled), ignored
 * by CA_QUERY.
 */
struct ibemu_sess_bind {
	char host[IBEMU_SESS_HOST_LEN];
	uint32_t port;
	uint32_t reserved;
};
_Static_assert(sizeof(struct ibemu_sess_bind) == 72, "bind is 72 bytes");

/* What umad_get_port() reports of one port. */
struct ibemu_sess_port {
	uint64_t port_guid;
	uint64_t gid_prefix;
	uint32_t capability_mask;
	uint32_t rate; /* Gb/s, as sysfs 'rate' says it (100 for 4x EDR) */
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t port_num;
	uint8_t lmc;
	uint8_t sm_sl;
	uint8_t state;	    /* IBA PortState: 1 Down .. 4 Active */
	uint8_t phys_state; /* IBA PortPhysicalState: 2 Polling, 5 LinkUp */
	uint8_t npkeys;
	uint16_t reserved;
	uint16_t pkeys[IBEMU_SESS_PKEYS];
};
_Static_assert(sizeof(struct ibemu_sess_port) == 104, "port is 104 bytes");

/* CA_QUERY reply: the HCA the process is bound to, then its ports. */
struct ibemu_sess_ca {
	char host[IBEMU_SESS_HOST_LEN]; /* the HCA's node name */
	uint64_t node_guid;
	uint64_t system_guid;
	uint32_t node_type; /* 1: CA */
	uint32_t nports;    /* ports[] entries that follow, <= MAX_PORTS */
	/* NodeInfo (IBA 14.2.5.3): VendorID (24 bits), DeviceID and
	 * PartitionCap, the P_Key table size of each port. */
	uint32_t vendor_id;
	uint16_t device_id;
	uint16_t partition_cap;
	/* The HCA's host interface (topology 'hca_model:', auto resolved):
	 * 0 wire, else the ConnectX generation of its preset, 4 to 7. The
	 * verbs library reports and enforces its limits by it
	 * (ibemu_verbs_limits_of(), proto/verbs_proto.h). */
	uint32_t hca_gen;
	uint32_t reserved;
	struct ibemu_sess_port ports[];
};
_Static_assert(sizeof(struct ibemu_sess_ca) == 104, "ca is 104 bytes");

/* P_Keys a PORT_QUERY reply carries: an HCA's whole table (PartitionCap). */
#define IBEMU_SESS_PORT_PKEYS 128

/*
 * PORT_QUERY reply: one port of the process's HCA (the request's 'port',
 * 1..nports; another number gets ERROR -EINVAL), what ibv_query_port(),
 * ibv_query_gid() and ibv_query_pkey() read. The fields are PortInfo's
 * (IBA 14.2.5.6) in its encodings, as the SMA answers Get(PortInfo) at the
 * time of the call; the verbs library converts them as the kernel's
 * drivers do.
 */
struct ibemu_sess_port_attr {
	uint64_t port_guid;
	uint64_t gid_prefix;
	uint32_t capability_mask;
	uint16_t capability_mask2;
	uint16_t lid;
	uint16_t sm_lid;
	uint16_t p_key_violations;
	uint16_t q_key_violations;
	uint16_t npkeys; /* the P_Key table's size; pkeys[] holds the first */
	uint8_t port_num;
	uint8_t state;	    /* PortState: 1 Down .. 4 Active */
	uint8_t phys_state; /* PortPhysicalState: 2 Polling, 5 LinkUp */
	uint8_t lmc;
	uint8_t sm_sl;
	uint8_t subnet_timeout;
	uint8_t init_type_reply;
	uint8_t link_width_active;     /* 1 1x, 2 4x, 4 8x, 8 12x, 16 2x */
	uint8_t link_speed_active;     /* 1 SDR, 2 DDR, 4 QDR */
	uint8_t link_speed_ext_active; /* 0, or 1 FDR, 2 EDR, 4 HDR, 8 NDR */
	/* An FDR10 link reads as QDR in PortInfo; Mellanox's vendor
	 * ExtendedPortInfo tells it apart (its LinkSpeedActive bit 0), which
	 * this flag stands for. */
	uint8_t fdr10_active;
	uint8_t mtu_cap;      /* MTUCap: 1 256 .. 5 4096 */
	uint8_t neighbor_mtu; /* NeighborMTU, same encoding */
	uint8_t vl_cap;	      /* VLCap: 1 VL0, 2 VL0-1, 3 VL0-3, 4 VL0-7 */
	uint8_t guid_cap;     /* GUIDCap: the GID table's size */
	uint8_t reserved;
	uint16_t pkeys[IBEMU_SESS_PORT_PKEYS];
};
_Static_assert(sizeof(struct ibemu_sess_port_attr) == 304,
	       "port attr is 304 bytes");

/*
 * ADDR_QUERY: which HCA port of the fabric has an address, for rdma_cm.
 * The request names it by one key, in this order: 'ip' (IPv4, host order;
 * 0: not this key), 'port_guid' (an AF_IB GID's interface ID; 0: not this
 * key), or 'host' (a node name; its port 'port', 0 for 1). The reply is the
 * same struct filled in: the port's node name, number, address, GUIDs and
 * LID (0 while the SM has not given one) at the time of the call. No such
 * port: ERROR -ENOENT. It binds nothing: a process that is not attached
 * may ask (rdma_getaddrinfo before any device is opened).
 */
struct ibemu_sess_addr_query {
	char host[IBEMU_SESS_HOST_LEN];
	uint64_t port_guid;
	uint64_t gid_prefix; /* reply */
	uint32_t ip;
	uint32_t port;
	uint16_t lid;	 /* reply */
	uint16_t nports; /* reply: the node's ports */
	uint32_t reserved;
};
_Static_assert(sizeof(struct ibemu_sess_addr_query) == 96,
	       "addr query is 96 bytes");

/*
 * CM_LISTEN: the calling process's CM agent (its agent of management
 * class 0x07 on HCA port 'port' of the HCA it is bound to) takes the REQs
 * and SIDR_REQs for 'service_id' ('listen' 1), or no longer ('listen'
 * 0). Several processes may hold CM agents on one port, as programs share
 * the kernel's single ib_cm: the daemon routes the other CM messages by
 * the Comm IDs and SIDR request IDs the agents send, and answers for a
 * service nobody listens on (REJ reason 8, SIDR_REP status 1) and for a
 * process that is gone (DREQ). ERROR -ENOENT: no such CM agent;
 * -EADDRINUSE: another process listens on that service ID there.
 */
struct ibemu_sess_cm_listen {
	uint64_t service_id;
	uint32_t port;
	uint32_t listen;
};
_Static_assert(sizeof(struct ibemu_sess_cm_listen) == 16,
	       "cm listen is 16 bytes");

/* OPEN reply: the stream is bound to (host, port). */
struct ibemu_sess_opened {
	char host[IBEMU_SESS_HOST_LEN];
	uint64_t session; /* names this stream in REGISTER and UNREGISTER */
	uint32_t port;
	uint32_t reserved;
	uint64_t now_ps; /* the fabric's virtual time: the process's clock */
};
_Static_assert(sizeof(struct ibemu_sess_opened) == 88, "opened is 88 bytes");

/*
 * REGISTER: an agent on a stream, as umad_register2() describes it.
 * 'method_mask' is the 128-bit mask of request methods it takes (bit m of
 * word m / 64); responses reach it by TID whatever the mask. Vendor
 * classes 0x30-0x4f carry an OUI. The reply returns 'agent_id'; what the
 * kernel's ib_umad refuses gets ERROR with its errno (-EINVAL, -ENOMEM).
 */
struct ibemu_sess_register {
	uint64_t session;
	uint64_t method_mask[2];
	uint32_t agent_id; /* reply */
	uint32_t flags;
	uint32_t oui; /* 24 bits */
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t rmpp_version;
	uint8_t reserved;
};
_Static_assert(sizeof(struct ibemu_sess_register) == 40,
	       "register is 40 bytes");

struct ibemu_sess_unregister {
	uint64_t session;
	uint32_t agent_id;
	uint32_t reserved;
};
_Static_assert(sizeof(struct ibemu_sess_unregister) == 16,
	       "unregister is 16 bytes");

/* The address of a MAD, as struct ib_mad_addr holds it, in host order. */
struct ibemu_sess_addr {
	uint32_t qpn;
	uint32_t qkey;
	uint16_t lid;
	uint16_t pkey_index;
	uint8_t sl;
	uint8_t path_bits;
	uint8_t grh_present;
	uint8_t gid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint16_t reserved;
	uint32_t flow_label;
	uint8_t gid[16]; /* network order */
};
_Static_assert(sizeof(struct ibemu_sess_addr) == 40, "addr is 40 bytes");

/*
 * SEND (to 'addr', by agent 'agent_id'; a request is answered within
 * 'timeout_ms' or comes back with status ETIMEDOUT after 'retries' more
 * tries) and RECV (from 'addr', for 'agent_id'; 'status' 0 or an errno
 * such as ETIMEDOUT, with the header of the MAD that was sent, as ib_umad
 * returns it). 'len' MAD bytes follow: 256, or for an agent registered
 * with an RMPP version and an RMPP-active MAD of a class that uses RMPP,
 * the whole message of the transfer (up to IBEMU_SESS_MAD_MAX), which the
 * daemon carries as segments, as ib_umad's write() and read() do. A
 * stream has no replies: a SEND that breaks the protocol closes it, one
 * the daemon cannot carry (an agent just unregistered, a duplicate TID) is
 * dropped and logged.
 *
 * 'vt_ps' is virtual time: a SEND's stamp, the process's clock (the MAD
 * enters the fabric then, or at once if the fabric is already past it),
 * and the time a RECV reaches the process (its clock moves up to it).
 * 'timeout_ms' of a SEND counts virtual time too.
 */
struct ibemu_sess_mad {
	uint32_t agent_id;
	uint32_t status;
	uint32_t timeout_ms;
	uint32_t retries;
	struct ibemu_sess_addr addr;
	uint32_t len;
	uint32_t reserved;
	uint64_t vt_ps;
	uint8_t mad[];
};
_Static_assert(sizeof(struct ibemu_sess_mad) == 72, "mad header is 72 bytes");

/*
 * What a umad process costs in virtual time, the kernel's MAD path on a
 * host (ib_umad's write and read, ib_mad's QP0/QP1 post and completion):
 * a SEND is stamped this much after the process's clock, and a MAD that
 * reaches a port is in the process's hands this much later.
 */
#define IBEMU_SESS_MAD_SEND_PS 1000000ull /* 1 us */
#define IBEMU_SESS_MAD_RECV_PS 1000000ull /* 1 us */

/*
 * PACK: several messages of a port stream in one, so that one system call
 * and one socket message carry many MADs (an SM's sweep of a large subnet
 * sends hundreds of thousands, and each message costs both ends about as
 * much as the daemon's handling of the MAD). Its payload is whole stream
 * messages, each with its header, one after the other; each is a multiple
 * of IBEMU_SESS_PACK_ALIGN bytes long (so each header is aligned), and
 * there are at least two. Client to daemon: SENDs and WAITs; daemon to
 * client: RECVs of one MAD (a TICK, or an RMPP transfer, goes alone). The
 * messages inside mean what they mean alone, in the same order; a PACK
 * never holds a PACK, and one that breaks these rules closes the stream.
 * The daemon sends PACKs only to a stream that sent one (ibemu's libibumad
 * sends its deferred SENDs so, IBEMU_UMAD_DEFER_SENDS).
 */
#define IBEMU_SESS_PACK_ALIGN 8u
/* Bytes of a PACK's payload at most (256 RECVs of a MAD of 256 bytes). */
#define IBEMU_SESS_PACK_MAX (256u * (16u + 72u + 256u))

/* WAIT 'timeout_ms' meaning none: the wait ends with a MAD only. */
#define IBEMU_SESS_WAIT_FOREVER UINT32_MAX

/*
 * WAIT: a thread of the process is about to block on the stream, having
 * taken 'seen' RECVs and TICKs from it so far (if the daemon has sent
 * more, one is on its way and the process does not wait). Until a RECV or
 * a TICK reaches it, the process counts as waiting under the time rule;
 * with a 'timeout_ms', the daemon sends TICK 'wait_id' once that much
 * virtual time has passed since the stream's clock (its last MAD in or
 * out), unless a RECV came first.
 */
struct ibemu_sess_wait {
	uint64_t seen;
	uint64_t wait_id;
	uint32_t timeout_ms;
	uint32_t reserved;
};
_Static_assert(sizeof(struct ibemu_sess_wait) == 24, "wait is 24 bytes");

/* TICK: the timeout of WAIT 'wait_id' passed at virtual time 'vt_ps'. */
struct ibemu_sess_tick {
	uint64_t wait_id;
	uint64_t vt_ps;
};
_Static_assert(sizeof(struct ibemu_sess_tick) == 16, "tick is 16 bytes");
/*
 * Job streams: the bootstrap of the ranks of 'ibemu run' (verbs/ibemu.h:
 * ibemu_init, the key-value store, fence and barrier), one connection per
 * rank, answered by attach/sess_job.c. JOB_JOIN names the job, this
 * rank and the job's size (a job is made by its first rank's JOIN and
 * freed when its last rank's stream closes); a rank joined twice, a rank
 * not below the size, or a size other than the job's gets ERROR
 * (-EEXIST, -EINVAL) and the stream closes.
 */
#define IBEMU_SESS_JOB_ID_LEN	64 /* with its NUL */
#define IBEMU_SESS_JOB_MAX_SIZE 65536u
#define IBEMU_SESS_KV_KEY_MAX	64   /* a key with its NUL */
#define IBEMU_SESS_KV_VAL_MAX	1024 /* bytes of a value */
/* Keys one rank may hold (the pending and the visible ones). */
#define IBEMU_SESS_KV_MAX_KEYS 4096u

struct ibemu_sess_job_join {
	char job[IBEMU_SESS_JOB_ID_LEN];
	uint32_t rank;
	uint32_t size;
	uint64_t clock_ps; /* the rank's clock */
};
_Static_assert(sizeof(struct ibemu_sess_job_join) == 80, "join is 80 bytes");

/*
 * PUT: 'len' bytes of value follow, under (this rank, 'key'); visible to
 * GETs after the next fence. GET: rank 'rank''s value for 'key' as the
 * last fence left it, back with its 'len' bytes, or ERROR -ENOENT. 'key'
 * is NUL-terminated within IBEMU_SESS_KV_KEY_MAX and not empty; a value
 * is at most IBEMU_SESS_KV_VAL_MAX bytes (else ERROR -EINVAL; too many
 * keys: -ENOSPC). The stream stays open after such an ERROR.
 */
struct ibemu_sess_job_kv {
	uint32_t rank; /* GET: whose value */
	uint32_t len;  /* bytes of value following */
	char key[IBEMU_SESS_KV_KEY_MAX];
	uint64_t clock_ps;
	uint8_t val[];
};
_Static_assert(sizeof(struct ibemu_sess_job_kv) == 80, "kv is 80 bytes");

enum ibemu_sess_sync_kind {
	IBEMU_SESS_SYNC_FENCE = 1, /* also makes every PUT before it visible */
	IBEMU_SESS_SYNC_BARRIER = 2,
};

/*
 * SYNC: a collective over the job. The rank waits (under the time rule
 * its process counts as waiting) until every rank of the job has sent its
 * SYNC of the same kind; then each gets the reply with 'clock_ps' the
 * virtual time it resumes at: the latest arrival clock plus the modelled
 * cost below. ERROR -EPIPE if a rank of the job has left (its stream
 * closed), -EINVAL for a kind other than the others'.
 */
struct ibemu_sess_job_sync {
	uint32_t kind;
	uint32_t reserved;
	uint64_t clock_ps; /* request: the rank's clock; reply: release */
	uint64_t epoch;	   /* reply: collectives completed before it */
};
_Static_assert(sizeof(struct ibemu_sess_job_sync) == 24, "sync is 24 bytes");

/*
 * What a collective costs in virtual time (docs/design.md §3, "Job
 * collectives"): a dissemination barrier, ceil(log2 N) rounds of one
 * small message each (an 8-byte SEND one way on an EDR fabric, about a
 * microsecond, plus the bootstrap's software on both ends), and for a
 * fence the exchange of the values put since the last one: every rank
 * receives all of them, at a 100 Gb/s link's 80 ps a byte.
 */
#define IBEMU_SESS_SYNC_ROUND_PS 2000000ull /* 2 us */
#define IBEMU_SESS_SYNC_BYTE_PS	 80ull

_Static_assert(sizeof(struct ibemu_sess_hdr) +
			       sizeof(struct ibemu_sess_job_kv) +
			       IBEMU_SESS_KV_VAL_MAX <=
		       IBEMU_SESS_MAX_MSG,
	       "a PUT or GET fits a call's message");
_Static_assert(sizeof(struct ibemu_sess_hdr) + sizeof(struct ibemu_sess_mad) +
			       IBEMU_SESS_MAD_MAX ==
		       IBEMU_SESS_STREAM_MAX_MSG,
	       "a stream message is a RECV or SEND of the largest MAD");
_Static_assert(sizeof(struct ibemu_sess_hdr) + sizeof(struct ibemu_sess_ca) +
			       IBEMU_SESS_MAX_PORTS *
				       sizeof(struct ibemu_sess_port) <=
		       IBEMU_SESS_MAX_MSG,
	       "a CA_QUERY reply fits a call's message");
_Static_assert(sizeof(struct ibemu_sess_hdr) +
			       sizeof(struct ibemu_sess_port_attr) <=
		       IBEMU_SESS_MAX_MSG,
	       "a PORT_QUERY reply fits a call's message");

#endif
