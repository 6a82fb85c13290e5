// SPDX-License-Identifier: MIT
/*
 * 'ibemu cc': congestion control (IBA Annex A10) as the fabric applies it.
 * Per switch the SwitchCongestionSetting in effect and per switch port the
 * FECNs it marked; per HCA port the CACongestionSetting's Port_Control and
 * the FECNs received, CNPs sent and BECNs received; then each source: the
 * QPs of attached processes, the SLs of ports that control per SL, and
 * the flows of the running (or last) traffic study, with CCTI, BECNs and
 * the delay an MTU packet waits now. One JSON object with a row array per
 * kind, or aligned tables.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_commands.h"
#include "daemon.h"
#include "hca.h"
#include "attach.h"
#include "switch.h"
#include "table.h"
#include "traffic.h"
#include "transport.h"

/* A flow of a study, as 'ibemu cc' shows it once the study is gone. */
struct ibemu_cc_flow {
	uint32_t src_node, dst_node;
	uint8_t src_port, dst_port;
	struct ibemu_traffic_flow_cc cc;
};

enum { O_JSON, O_NOPTS };

static const struct ibemu_opt cc_table[] = {
	[O_JSON] = {.name = "json",
		    .type = IBEMU_OPT_FLAG,
		    .help = "print JSON instead of aligned tables"},
};

const struct ibemu_opt_cmd ibemu__cc_opts = {
	.name = "cc",
	.opts = cc_table,
	.nopts = O_NOPTS,
	.args = "[NODE[:PORT]]",
	.max_args = 1,
};

/* What NODE[:PORT] lets through (node IBEMU_NONE: everything). */
struct filter {
	uint32_t node;
	unsigned port; /* 0: every port */
};

static int pass(const struct filter *f, uint32_t node, unsigned port)
{
	return f->node == IBEMU_NONE ||
	       (f->node == node && (!f->port || f->port == port));
}

static const struct ibemu_table_col switch_cols[] = {
	{"node", "SWITCH", 0},
	{"control_map", "CONTROL_MAP", 1},
	{"threshold", "THRESHOLD", 1},
	{"marking_rate", "MARKING_RATE", 1},
	{"packet_size", "PACKET_SIZE", 1},
	{"victim_ports", "VICTIM_PORTS", 0},
	{"credit_ports", "CREDIT_PORTS", 0},
};

static const struct ibemu_table_col switch_port_cols[] = {
	{"node", "SWITCH", 0},
	{"port", "PORT", 1},
	{"fecn_marked", "FECN_MARKED", 1},
};

static const struct ibemu_table_col hca_port_cols[] = {
	{"node", "HCA", 0},
	{"port", "PORT", 1},
	{"port_control", "PORT_CONTROL", 0},
	{"control_map", "CONTROL_MAP", 1},
	{"ccti_limit", "CCTI_LIMIT", 1},
	{"fecn_rcvd", "FECN_RCVD", 1},
	{"cnp_sent", "CNP_SENT", 1},
	{"becn_rcvd", "BECN_RCVD", 1},
};

static const struct ibemu_table_col qp_cols[] = {
	{"node", "HCA", 0},	 {"port", "PORT", 1},	{"pid", "PID", 1},
	{"qpn", "QPN", 1},	 {"type", "TYPE", 0},	{"sl", "SL", 1},
	{"ccti", "CCTI", 1},	 {"becns", "BECNS", 1}, {"mtu", "MTU", 1},
	{"ipd_ns", "IPD_NS", 1},
};

static const struct ibemu_table_col sl_cols[] = {
	{"node", "HCA", 0},
	{"port", "PORT", 1},
	{"sl", "SL", 1},
	{"ccti_timer", "CCTI_TIMER", 1},
	{"ccti_increase", "CCTI_INCREASE", 1},
	{"ccti_min", "CCTI_MIN", 1},
	{"ccti", "CCTI", 1},
	{"becns", "BECNS", 1},
	{"mtu", "MTU", 1},
	{"ipd_ns", "IPD_NS", 1},
};

static const struct ibemu_table_col flow_cols[] = {
	{"src", "SRC", 0},	 {"dst", "DST", 0},	{"sl", "SL", 1},
	{"ccti", "CCTI", 1},	 {"becns", "BECNS", 1}, {"mtu", "MTU", 1},
	{"ipd_ns", "IPD_NS", 1},
};

enum { T_SWITCHES, T_SWITCH_PORTS, T_HCA_PORTS, T_QPS, T_SLS, T_FLOWS, T_N };

/* The wire bytes of a packet of 'mtu' payload bytes with LRH and BTH. */
static uint32_t mtu_wire(uint32_t mtu)
{
	return IBEMU_LRH_BYTES + IBEMU_BTH_BYTES + mtu + IBEMU_ICRC_BYTES +
	       IBEMU_VCRC_BYTES;
}

/*
 * A10.4.3.6: a port mask is a 256-bit field, port i its bit i (bytes in
 * wire order, most significant first). As a list: "1-3,7", or null.
 */
static void port_list(struct ibemu_table *t, const uint8_t *mask,
		      unsigned nports)
{
	char s[1024];
	size_t n = 0;
	unsigned p, first;

	s[0] = '\0';
	for (p = 0; p <= nports && p < 256; p++) {
		if (!(mask[31 - p / 8] & (1u << (p % 8))))
			continue;
		first = p;
		while (p + 1 <= nports && p + 1 < 256 &&
		       (mask[31 - (p + 1) / 8] & (1u << ((p + 1) % 8))))
			p++;
		n += (size_t)snprintf(s + n, sizeof(s) - n,
				      first == p ? "%s%u" : "%s%u-%u",
				      n ? "," : "", first, p);
		if (n >= sizeof(s))
			break;
	}
	if (s[0])
		ibemu_table_str(t, s);
	else
		ibemu_table_null(t);
}

static void add_switch(struct ibemu_table *tabs, struct ibemu_daemon *d,
		       uint32_t node, const struct filter *f)
{
	const struct ibemu_topo_node *tn = &d->topo->nodes[node];
	struct ibemu_switch_cc *cc = ibemu_switch_cc(d->engine, node);
	struct ibemu_port_counters c;
	struct ibemu_table *t = &tabs[T_SWITCHES];
	unsigned p;

	if (!cc)
		return;
	if (f->node == IBEMU_NONE || !f->port) {
		ibemu_table_row(t);
		ibemu_table_str(t, tn->name);
		ibemu_table_uint(t, cc->control_map);
		ibemu_table_uint(t, cc->threshold);
		ibemu_table_uint(t, cc->marking_rate);
		ibemu_table_uint(t, cc->packet_size);
		port_list(t, cc->victim_mask, tn->nports);
		port_list(t, cc->credit_mask, tn->nports);
	}
	t = &tabs[T_SWITCH_PORTS];
	for (p = 1; p <= tn->nports; p++) {
		if (tn->ports[p].peer_node == IBEMU_NONE || !pass(f, node, p))
			continue;
		ibemu_engine_counters(
			d->engine, ibemu_engine_port_index(d->engine, node, p),
			&c);
		ibemu_table_row(t);
		ibemu_table_str(t, tn->name);
		ibemu_table_uint(t, p);
		ibemu_table_uint(t, c.fecn_marked);
	}
}

/* The delay (ns) a packet of 'mtu' bytes of this source waits now. */
static void ipd_cell(struct ibemu_table *t, struct ibemu_engine *e, uint32_t pi,
		     unsigned sl, struct ibemu_cc_src *own, uint32_t mtu)
{
	ibemu_table_real(
		t, (double)ibemu_hca_cc_ipd(e, pi, sl, own, mtu_wire(mtu)) /
			   1000.0);
}

static const char *qp_type_name(unsigned type)
{
	switch (type) {
	case IBEMU_QPT_RC:
		return "RC";
	case IBEMU_QPT_UC:
		return "UC";
	case IBEMU_QPT_XRC_SEND:
		return "XRC_SEND";
	case IBEMU_QPT_XRC_RECV:
		return "XRC_RECV";
	default:
		return "UD";
	}
}

static void add_qps(struct ibemu_table *t, struct ibemu_daemon *d,
		    uint32_t node, const struct filter *f)
{
	struct ibemu_tp *tp = ibemu__sess_hca_tp(d, node);
	struct ibemu_tp_qp_cc q;
	struct ibemu_cc_src *s;
	uint32_t qpn, pnode;
	unsigned pp;

	if (!tp)
		return;
	for (qpn = 0; !ibemu_tp_qp_cc_next(tp, qpn, &q); qpn = q.qpn + 1) {
		ibemu_engine_port_where(d->engine, q.port, &pnode, &pp);
		if (!pass(f, node, pp))
			continue;
		s = ibemu_hca_cc_src(d->engine, q.port, q.sl, q.src);
		ibemu_table_row(t);
		ibemu_table_str(t, d->topo->nodes[node].name);
		ibemu_table_uint(t, pp);
		ibemu_table_uint(t,
				 (uint64_t)ibemu__sess_qp_pid(d, node, q.qpn));
		ibemu_table_uint(t, q.qpn);
		ibemu_table_str(t, qp_type_name(q.type));
		ibemu_table_uint(t, q.sl);
		ibemu_table_uint(
			t, ibemu_hca_cc_ccti(d->engine, q.port, q.sl, q.src));
		ibemu_table_uint(t, s ? s->becns : 0);
		ibemu_table_uint(t, q.mtu);
		ipd_cell(t, d->engine, q.port, q.sl, q.src, q.mtu);
	}
}

/* An SL is shown when the port controls it or it has been acted on. */
static void add_sls(struct ibemu_table *t, struct ibemu_daemon *d,
		    uint32_t node, unsigned port, uint32_t pi)
{
	struct ibemu_hca_cc *cc = ibemu_hca_cc(d->engine, pi, 0);
	unsigned sl, ccti;

	if (!cc || !(cc->port_control & 1u))
		return;
	for (sl = 0; sl < IBEMU_HCA_CC_SLS; sl++) {
		ccti = ibemu_hca_cc_ccti(d->engine, pi, sl, NULL);
		if (!(cc->control_map & (1u << sl)) && !ccti &&
		    !cc->sl_src[sl].becns)
			continue;
		ibemu_table_row(t);
		ibemu_table_str(t, d->topo->nodes[node].name);
		ibemu_table_uint(t, port);
		ibemu_table_uint(t, sl);
		ibemu_table_uint(t, cc->sl[sl].ccti_timer);
		ibemu_table_uint(t, cc->sl[sl].ccti_increase);
		ibemu_table_uint(t, cc->sl[sl].ccti_min);
		ibemu_table_uint(t, ccti);
		ibemu_table_uint(t, cc->sl_src[sl].becns);
		/* A port's own MTU is the SM's to set: the largest. */
		ibemu_table_uint(t, 4096);
		ipd_cell(t, d->engine, pi, sl, NULL, 4096);
	}
}

static void add_hca(struct ibemu_table *tabs, struct ibemu_daemon *d,
		    uint32_t node, const struct filter *f)
{
	const struct ibemu_topo_node *tn = &d->topo->nodes[node];
	struct ibemu_table *t = &tabs[T_HCA_PORTS];
	struct ibemu_port_counters c;
	struct ibemu_hca_cc *cc;
	uint32_t pi;
	unsigned p;

	for (p = 1; p <= tn->nports; p++) {
		if (tn->ports[p].peer_node == IBEMU_NONE || !pass(f, node, p))
			continue;
		pi = ibemu_engine_port_index(d->engine, node, p);
		cc = ibemu_hca_cc(d->engine, pi, 0);
		ibemu_engine_counters(d->engine, pi, &c);
		ibemu_table_row(t);
		ibemu_table_str(t, tn->name);
		ibemu_table_uint(t, p);
		/* A10.4.3.8 Port_Control bit 0; unset settings read 0. */
		ibemu_table_str(t, cc && (cc->port_control & 1u) ? "sl" : "qp");
		ibemu_table_uint(t, cc ? cc->control_map : 0);
		ibemu_table_uint(t, cc ? cc->ccti_limit : 0);
		ibemu_table_uint(t, c.fecn_rcvd);
		ibemu_table_uint(t, c.cnp_sent);
		ibemu_table_uint(t, c.becn_rcvd);
		add_sls(&tabs[T_SLS], d, node, p, pi);
	}
	add_qps(&tabs[T_QPS], d, node, f);
}

static void add_flow(struct ibemu_table *t, struct ibemu_daemon *d,
		     const struct ibemu_cc_flow *fl)
{
	const struct ibemu_topo *topo = d->topo;

	ibemu_table_row(t);
	ibemu_table_strf(t, "%s:%u", topo->nodes[fl->src_node].name,
			 fl->src_port);
	ibemu_table_strf(t, "%s:%u", topo->nodes[fl->dst_node].name,
			 fl->dst_port);
	ibemu_table_uint(t, fl->cc.sl);
	ibemu_table_uint(t, fl->cc.ccti);
	ibemu_table_uint(t, fl->cc.becns);
	ibemu_table_uint(t, fl->cc.mtu);
	ibemu_table_real(t, (double)fl->cc.ipd_ps / 1000.0);
}

/* Flow 'i' of study 'tr', resolved to nodes and ports. */
static void flow_of(struct ibemu_traffic *tr, size_t i,
		    struct ibemu_cc_flow *out)
{
	unsigned sp, dp;

	ibemu_traffic_flow_cc(tr, i, &out->cc);
	ibemu_traffic_host(tr, out->cc.src, &out->src_node, &sp);
	ibemu_traffic_host(tr, out->cc.dst, &out->dst_node, &dp);
	out->src_port = (uint8_t)sp;
	out->dst_port = (uint8_t)dp;
}

static void add_flows(struct ibemu_table *t, struct ibemu_daemon *d,
		      const struct filter *f)
{
	struct ibemu_cc_flow fl;
	size_t i, n;

	if (!d->ctl->cc_study) {
		for (i = 0; i < d->ctl->cc_nflows; i++) {
			fl = d->ctl->cc_flows[i];
			if (pass(f, fl.src_node, fl.src_port) ||
			    pass(f, fl.dst_node, fl.dst_port))
				add_flow(t, d, &fl);
		}
		return;
	}
	n = ibemu_traffic_flow_cc_count(d->ctl->cc_study);
	for (i = 0; i < n; i++) {
		flow_of(d->ctl->cc_study, i, &fl);
		if (pass(f, fl.src_node, fl.src_port) ||
		    pass(f, fl.dst_node, fl.dst_port))
			add_flow(t, d, &fl);
	}
}

void ibemu__cc_study_start(struct ibemu_daemon *d, struct ibemu_traffic *tr)
{
	free(d->ctl->cc_flows);
	d->ctl->cc_flows = NULL;
	d->ctl->cc_nflows = 0;
	d->ctl->cc_study = tr;
}

void ibemu__cc_study_end(struct ibemu_daemon *d)
{
	size_t i, n;

	if (!d->ctl->cc_study)
		return;
	n = ibemu_traffic_flow_cc_count(d->ctl->cc_study);
	d->ctl->cc_flows = n ? calloc(n, sizeof(*d->ctl->cc_flows)) : NULL;
	/* Out of memory: the flows are not shown, nothing else is lost. */
	for (i = 0; d->ctl->cc_flows && i < n; i++)
		flow_of(d->ctl->cc_study, i, &d->ctl->cc_flows[i]);
	d->ctl->cc_nflows = d->ctl->cc_flows ? n : 0;
	d->ctl->cc_study = NULL;
}

void ibemu__cc_fini(struct ibemu_daemon *d)
{
	free(d->ctl->cc_flows);
	d->ctl->cc_flows = NULL;
	d->ctl->cc_nflows = 0;
	d->ctl->cc_study = NULL;
}

int ibemu__serve_cc(struct ibemu_ctl_call *call)
{
	static const struct {
		const char *name;
		const struct ibemu_table_col *cols;
		size_t ncols;
	} kinds[T_N] = {
		[T_SWITCHES] = {"switches", switch_cols,
				IBEMU_ARRAY_SIZE(switch_cols)},
		[T_SWITCH_PORTS] = {"switch_ports", switch_port_cols,
				    IBEMU_ARRAY_SIZE(switch_port_cols)},
		[T_HCA_PORTS] = {"hca_ports", hca_port_cols,
				 IBEMU_ARRAY_SIZE(hca_port_cols)},
		[T_QPS] = {"qps", qp_cols, IBEMU_ARRAY_SIZE(qp_cols)},
		[T_SLS] = {"sls", sl_cols, IBEMU_ARRAY_SIZE(sl_cols)},
		[T_FLOWS] = {"flows", flow_cols, IBEMU_ARRAY_SIZE(flow_cols)},
	};
	struct ibemu_daemon *d = call->d;
	struct ibemu_table tabs[T_N];
	const struct ibemu_table *order[T_N];
	struct ibemu_opt_val v[O_NOPTS];
	struct filter f = {IBEMU_NONE, 0};
	char *args[1];
	uint32_t node;
	int ret, n;
	size_t i;

	ret = ibemu__ctl_parse(call, &ibemu__cc_opts, v, args, &n, NULL);
	if (!ret && n)
		ret = ibemu__ctl_where(call, "cc", args[0], &f.node, &f.port);
	if (ret)
		return ret;
	for (i = 0; i < T_N; i++) {
		ibemu_table_init(&tabs[i], kinds[i].name, kinds[i].cols,
				 kinds[i].ncols);
		order[i] = &tabs[i];
	}
	for (node = 0; node < d->topo->nnodes; node++) {
		if (f.node != IBEMU_NONE && node != f.node)
			continue;
		if (d->topo->nodes[node].type == IBEMU_NODE_SWITCH)
			add_switch(tabs, d, node, &f);
		else
			add_hca(tabs, d, node, &f);
	}
	add_flows(&tabs[T_FLOWS], d, &f);
	ibemu_table_render_many(order, T_N, d->topo->name, (int)v[O_JSON].u,
				call->out);
	for (i = 0; i < T_N; i++)
		ibemu_table_fini(&tabs[i]);
	return 0;
}
