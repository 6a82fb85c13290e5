// SPDX-License-Identifier: MIT
/*
 * The helpers of libibverbs that involve no device: names of enum values
 * (rdma-core's exact strings: tools print them), static rate conversions,
 * fork support, sysfs reading, and the copies between the kernel's ABI
 * structs and the verbs ones that librdmacm uses.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/sa.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include "verbs_int.h"

/*
 * Exported, declared by no installed header: rdma-core keeps them for its
 * own libraries (librdmacm) and providers, in driver.h and marshall.h.
 */
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);
int ibv_read_ibdev_sysfs_file(char *buf, size_t size, void *sysfs_dev,
			      const char *fmt, ...);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
				 struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
			       struct ibv_sa_path_rec *src);
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
				struct ib_uverbs_ah_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
				struct ib_uverbs_qp_attr *src);

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* --- names ----------------------------------------------------------- */

static const char *name_of(const char *const *names, size_t n, int v)
{
	if (v < 0 || (size_t)v >= n || !names[v])
		return "unknown";
	return names[v];
}

VERBS_EXPORT const char *ibv_node_type_str(enum ibv_node_type node_type)
{
	static const char *const names[] = {
		[IBV_NODE_CA] = "InfiniBand channel adapter",
		[IBV_NODE_SWITCH] = "InfiniBand switch",
		[IBV_NODE_ROUTER] = "InfiniBand router",
		[IBV_NODE_RNIC] = "iWARP NIC",
		[IBV_NODE_USNIC] = "usNIC",
		[IBV_NODE_USNIC_UDP] = "usNIC UDP",
		[IBV_NODE_UNSPECIFIED] = "unspecified",
	};

	/* IBV_NODE_UNKNOWN is -1. */
	return name_of(names, ARRAY_SIZE(names), node_type);
}

VERBS_EXPORT const char *ibv_port_state_str(enum ibv_port_state port_state)
{
	static const char *const names[] = {
		[IBV_PORT_NOP] = "no state change (NOP)",
		[IBV_PORT_DOWN] = "down",
		[IBV_PORT_INIT] = "init",
		[IBV_PORT_ARMED] = "armed",
		[IBV_PORT_ACTIVE] = "active",
		[IBV_PORT_ACTIVE_DEFER] = "active defer",
	};

	return name_of(names, ARRAY_SIZE(names), port_state);
}

VERBS_EXPORT const char *ibv_event_type_str(enum ibv_event_type event)
{
	static const char *const names[] = {
		[IBV_EVENT_CQ_ERR] = "CQ error",
		[IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
		[IBV_EVENT_QP_REQ_ERR] =
			"invalid request local work queue error",
		[IBV_EVENT_QP_ACCESS_ERR] =
			"local access violation work queue error",
		[IBV_EVENT_COMM_EST] = "communication established",
		[IBV_EVENT_SQ_DRAINED] = "send queue drained",
		[IBV_EVENT_PATH_MIG] = "path migrated",
		[IBV_EVENT_PATH_MIG_ERR] = "path migration request error",
		[IBV_EVENT_DEVICE_FATAL] = "local catastrophic error",
		[IBV_EVENT_PORT_ACTIVE] = "port active",
		[IBV_EVENT_PORT_ERR] = "port error",
		[IBV_EVENT_LID_CHANGE] = "LID change",
		[IBV_EVENT_PKEY_CHANGE] = "P_Key change",
		[IBV_EVENT_SM_CHANGE] = "SM change",
		[IBV_EVENT_SRQ_ERR] = "SRQ catastrophic error",
		[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
		[IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
		[IBV_EVENT_CLIENT_REREGISTER] = "client reregistration",
		[IBV_EVENT_GID_CHANGE] = "GID table change",
		[IBV_EVENT_WQ_FATAL] = "WQ fatal",
	};

	return name_of(names, ARRAY_SIZE(names), event);
}

VERBS_EXPORT const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	static const char *const names[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error",
		[IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
		[IBV_WC_MW_BIND_ERR] = "memory management operation error",
		[IBV_WC_BAD_RESP_ERR] = "bad response error",
		[IBV_WC_LOC_ACCESS_ERR] = "local access error",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error",
		[IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
		[IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
		[IBV_WC_REM_ABORT_ERR] = "aborted error",
		[IBV_WC_INV_EECN_ERR] = "invalid EE context number",
		[IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
		[IBV_WC_FATAL_ERR] = "fatal error",
		[IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
		[IBV_WC_GENERAL_ERR] = "general error",
		[IBV_WC_TM_ERR] = "TM error",
		[IBV_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
	};

	return name_of(names, ARRAY_SIZE(names), status);
}

/* --- static rates (IBA 9.11.1 StaticRate, extended by the verbs) ----- */

/*
 * Each rate with its multiple of 2.5 Gb/s (0: not a whole multiple, which
 * ibv_rate_to_mult() does not name) and its data rate in Mb/s (the
 * 64b/66b rates are not round).
 */
static const struct {
	enum ibv_rate rate;
	int mult;
	int mbps;
} rates[] = {
	{IBV_RATE_2_5_GBPS, 1, 2500},	    {IBV_RATE_5_GBPS, 2, 5000},
	{IBV_RATE_10_GBPS, 4, 10000},	    {IBV_RATE_20_GBPS, 8, 20000},
	{IBV_RATE_30_GBPS, 12, 30000},	    {IBV_RATE_40_GBPS, 16, 40000},
	{IBV_RATE_60_GBPS, 24, 60000},	    {IBV_RATE_80_GBPS, 32, 80000},
	{IBV_RATE_120_GBPS, 48, 120000},    {IBV_RATE_14_GBPS, 0, 14062},
	{IBV_RATE_56_GBPS, 0, 56250},	    {IBV_RATE_112_GBPS, 0, 112500},
	{IBV_RATE_168_GBPS, 0, 168750},	    {IBV_RATE_25_GBPS, 0, 25781},
	{IBV_RATE_100_GBPS, 0, 103125},	    {IBV_RATE_200_GBPS, 0, 206250},
	{IBV_RATE_300_GBPS, 0, 309375},	    {IBV_RATE_28_GBPS, 11, 28125},
	{IBV_RATE_50_GBPS, 20, 53125},	    {IBV_RATE_400_GBPS, 160, 425000},
	{IBV_RATE_600_GBPS, 240, 637500},   {IBV_RATE_800_GBPS, 320, 850000},
	{IBV_RATE_1200_GBPS, 480, 1275000},
};

VERBS_EXPORT int ibv_rate_to_mult(enum ibv_rate rate)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rates); i++)
		if (rates[i].rate == rate)
			return rates[i].mult ? rates[i].mult : -1;
	return -1;
}

VERBS_EXPORT enum ibv_rate mult_to_ibv_rate(int mult)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rates); i++)
		if (mult > 0 && rates[i].mult == mult)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

VERBS_EXPORT int ibv_rate_to_mbps(enum ibv_rate rate)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rates); i++)
		if (rates[i].rate == rate)
			return rates[i].mbps;
	return -1;
}

VERBS_EXPORT enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rates); i++)
		if (rates[i].mbps == mbps)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

/* --- fork ------------------------------------------------------------ */

/*
 * The kernel pins registered pages, so a fork could move them away from
 * the HCA; ibemu reads and writes a process's memory by address from the
 * daemon, which a fork does not disturb. Nothing to set up.
 */
VERBS_EXPORT int ibv_fork_init(void)
{
	return 0;
}

VERBS_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

VERBS_EXPORT int ibv_dontfork_range(void *base, size_t size)
{
	return 0;
}

VERBS_EXPORT int ibv_dofork_range(void *base, size_t size)
{
	return 0;
}

/* --- sysfs ------------------------------------------------------------ */

VERBS_EXPORT const char *ibv_get_sysfs_path(void)
{
	const char *env = getenv("SYSFS_PATH");

	return env && *env ? env : "/sys";
}

/*
 * Reads 'dir'/'file' into 'buf' without its trailing newline; returns its
 * length or -1 with errno. An emulated device has no sysfs directory, so
 * reads under its paths fail as for an absent file.
 */
VERBS_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file,
				     char *buf, size_t size)
{
	char path[IBV_SYSFS_PATH_MAX * 2];
	ssize_t n;
	int fd;

	if (!size) {
		errno = EINVAL;
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size);
	close(fd);
	if (n < 0)
		return -1;
	if ((size_t)n == size)
		n--;
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return (int)n;
}

/* Reads a file of a provider's device (struct verbs_sysfs_dev): ibemu
 * loads no provider and has no such device. */
VERBS_EXPORT int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
					   void *sysfs_dev, const char *fmt,
					   ...)
{
	errno = ENOENT;
	return -1;
}

/* --- kernel ABI structs (marshalling) -------------------------------- */

/* Field by field: the layouts differ (widths, order), the meanings not. */
/* clang-format off */
#define PATH_FIELDS(X)							\
	X(dlid) X(slid) X(raw_traffic) X(flow_label) X(hop_limit)	\
	X(traffic_class) X(reversible) X(numb_path) X(pkey) X(sl)	\
	X(mtu_selector) X(mtu) X(rate_selector) X(rate)			\
	X(packet_life_time_selector) X(packet_life_time) X(preference)
/* clang-format on */
#define COPY_FIELD(f) dst->f = src->f;

VERBS_EXPORT void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
					      struct ib_user_path_rec *src)
{
	memcpy(dst->dgid.raw, src->dgid, sizeof(dst->dgid.raw));
	memcpy(dst->sgid.raw, src->sgid, sizeof(dst->sgid.raw));
	PATH_FIELDS(COPY_FIELD)
}

VERBS_EXPORT void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
					    struct ibv_sa_path_rec *src)
{
	memcpy(dst->dgid, src->dgid.raw, sizeof(dst->dgid));
	memcpy(dst->sgid, src->sgid.raw, sizeof(dst->sgid));
	PATH_FIELDS(COPY_FIELD)
}

/* clang-format off */
#define AH_FIELDS(X)							\
	X(dlid) X(sl) X(src_path_bits) X(static_rate) X(is_global)	\
	X(port_num) X(grh.flow_label) X(grh.sgid_index)			\
	X(grh.hop_limit) X(grh.traffic_class)
/* clang-format on */

VERBS_EXPORT void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
					     struct ib_uverbs_ah_attr *src)
{
	memcpy(dst->grh.dgid.raw, src->grh.dgid, sizeof(dst->grh.dgid.raw));
	AH_FIELDS(COPY_FIELD)
}

/* clang-format off */
#define QP_FIELDS(X)							\
	X(cur_qp_state) X(path_mtu) X(path_mig_state) X(qkey) X(rq_psn) \
	X(sq_psn) X(dest_qp_num) X(qp_access_flags) X(pkey_index)	\
	X(alt_pkey_index) X(en_sqd_async_notify) X(sq_draining)		\
	X(max_rd_atomic) X(max_dest_rd_atomic) X(min_rnr_timer)		\
	X(port_num) X(timeout) X(retry_cnt) X(rnr_retry) X(alt_port_num) \
	X(alt_timeout)
#define CAP_FIELDS(X)							\
	X(max_send_wr) X(max_recv_wr) X(max_send_sge) X(max_recv_sge)	\
	X(max_inline_data)
/* clang-format on */
#define COPY_CAP(f) dst->cap.f = src->f;

VERBS_EXPORT void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
					     struct ib_uverbs_qp_attr *src)
{
	QP_FIELDS(COPY_FIELD)
	CAP_FIELDS(COPY_CAP)
	ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
	ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);
}
