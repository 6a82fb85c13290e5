/* SPDX-License-Identifier: MIT */
/*
 * The HCA model as others see it: the node class the composition layer
 * (model/) registers with the engine, and the state an HCA port owns that
 * its agents read and write: the congestion control settings of IBA Annex
 * A10 (the CC agent in agent/cc.c encodes them), and the source side of
 * that congestion control, which every data source on an HCA port (a QP
 * transport, a traffic study's flows) uses to throttle its injection
 * (hca/cc.c).
 */
#ifndef IBEMU_HCA_H
#define IBEMU_HCA_H

#include <stdint.h>

#include "engine.h"

/* The HCA class: ports that pull from their owner (hca/port.c). */
extern const struct ibemu_node_ops ibemu_hca_ops;

#define IBEMU_HCA_CC_SLS     16	  /* CACongestionSetting entries: per SL */
#define IBEMU_HCA_CCT_BLOCKS 16	  /* CongestionInfo ControlTableCap */
#define IBEMU_HCA_CCT_BLOCK  64	  /* CongestionControlTable block */
#define IBEMU_HCA_CCT_LEN    1024 /* entries: blocks x block */

/*
 * The congestion control state of one throttled source (A10.3.1): a QP or a
 * study's flow when CACongestionSetting's Port_Control makes control per
 * QP, else the port's SL (kept in struct ibemu_hca_cc). Zero it to start.
 */
struct ibemu_cc_src {
	uint16_t ccti;	     /* index into the Congestion Control Table */
	uint64_t timer_ps;   /* last CCTI_Timer expiry accounted for */
	uint8_t started;     /* timer_ps is set: the source was used */
	uint64_t next_ps;    /* earliest start of its next packet */
	uint64_t becns;	     /* BECNs received */
	uint64_t delayed_ps; /* total injection delay imposed */
};

/* What a CA CongestionLog entry (A10.4.3.5) records of a source. */
struct ibemu_cc_event {
	uint32_t local_qp, remote_qp; /* 24 bits */
	uint16_t remote_lid;
	uint8_t service_type; /* 0 RC, 1 UC, 2 RD, 3 UD (A10.4.3.5) */
};

#define IBEMU_HCA_CC_LOG_ENTRIES 13 /* a CA CongestionLog holds 13 */

/* A10.4.3.8 CACongestionSetting and A10.4.3.9 CongestionControlTable. */
struct ibemu_hca_cc {
	uint16_t port_control;
	uint16_t control_map; /* one bit per SL */
	struct {
		uint16_t ccti_timer;
		uint8_t ccti_increase;
		uint8_t trigger_threshold;
		uint8_t ccti_min;
	} sl[IBEMU_HCA_CC_SLS];
	uint16_t ccti_limit;
	struct {
		uint8_t shift;	     /* 2 bits */
		uint16_t multiplier; /* 14 bits */
	} cct[IBEMU_HCA_CCT_LEN];    /* inter-packet delay: see hca/cc.c */
	/* The per-SL sources, when Port_Control bit 0 is set. */
	struct ibemu_cc_src sl_src[IBEMU_HCA_CC_SLS];
	/* A10.4.3.5 CongestionLog (CA): events since it was last read. */
	uint16_t log_events; /* ThresholdEventCounter (wraps) */
	uint16_t log_sl_map; /* ThresholdCongestionEventMap */
	uint8_t log_len, log_next;
	struct {
		struct ibemu_cc_event ev;
		uint16_t local_lid;
		uint8_t sl;
		uint32_t timestamp; /* 1.024 us units */
	} log[IBEMU_HCA_CC_LOG_ENTRIES];
};

/*
 * The CC settings of HCA port 'port' (global index). They take 4 KiB a
 * port, so they exist only once written: with 'create' 0 this returns NULL
 * until then (read them as zeros); with 'create' 1 it allocates them.
 * NULL too if 'port' is not an HCA port or memory runs out.
 */
struct ibemu_hca_cc *ibemu_hca_cc(struct ibemu_engine *e, uint32_t port,
				  int create);

/*
 * The source side of congestion control, for whoever sends data on HCA
 * port 'pi' (a QP transport, a traffic study). A source keeps its own
 * struct ibemu_cc_src 'own' (zeroed) and passes it on every call; these
 * calls pick the state that applies, 'own' or the port's SL, as
 * Port_Control says. Nothing throttles while no CC manager has written
 * the port's settings: then ibemu_hca_cc_src() returns NULL and the
 * other calls do nothing.
 */
struct ibemu_cc_src *ibemu_hca_cc_src(struct ibemu_engine *e, uint32_t pi,
				      unsigned sl, struct ibemu_cc_src *own);
/* The CCTI now of a source (after the CCTI_Timer expiries so far). */
unsigned ibemu_hca_cc_ccti(struct ibemu_engine *e, uint32_t pi, unsigned sl,
			   struct ibemu_cc_src *own);
/*
 * A BECN reached the source (in an ACK, a response or a CNP; counted on
 * the port, throttled or not): CCTI rises
 * by CCTI_Increase up to CCTI_Limit, and reaching Trigger_Threshold logs
 * 'ev' in the port's CongestionLog.
 */
void ibemu_hca_cc_becn(struct ibemu_engine *e, uint32_t pi, unsigned sl,
		       struct ibemu_cc_src *own,
		       const struct ibemu_cc_event *ev);
/*
 * Whether the source may start a packet now: 0 if so, else the time it
 * may (the port should pull again then: ibemu_engine_timer()).
 */
uint64_t ibemu_hca_cc_wait(struct ibemu_engine *e, uint32_t pi, unsigned sl,
			   struct ibemu_cc_src *own);
/* The source starts a packet of 'wire_bytes' now: its next may start
 * only after this one's wire time and the inter-packet delay. */
void ibemu_hca_cc_sent(struct ibemu_engine *e, uint32_t pi, unsigned sl,
		       struct ibemu_cc_src *own, uint32_t wire_bytes);
/* The inter-packet delay (ps) the source would wait after a packet of
 * 'wire_bytes' it started now: 0 while it is not controlled. */
uint64_t ibemu_hca_cc_ipd(struct ibemu_engine *e, uint32_t pi, unsigned sl,
			  struct ibemu_cc_src *own, uint32_t wire_bytes);
/* The destination got a packet marked FECN, and answered it with a
 * CNP ('cnp_sent') or a BECN in its ACK: counted on the port. */
void ibemu_hca_cc_fecn(struct ibemu_engine *e, uint32_t pi, int cnp_sent);

/* A10.3.3: the BTH opcode of a Congestion Notification Packet. */
#define IBEMU_OPCODE_CNP 0x80
/* Its headers, LRH and BTH (ibemu_pkt_set_size() adds ICRC and VCRC). */
#define IBEMU_CNP_HDR_BYTES (8 + 12)

#endif
