// SPDX-License-Identifier: MIT
/*
 * Symbols kept for programs and libraries of other eras, which ibemu
 * exports so that they load (libibverbs.map) but does not implement:
 *
 * - IBVERBS_1.0, the ABI of libibverbs before 1.1 (2006), whose structs
 *   differ from today's: a program linked against it gets no device
 *   (NULL and errno EOPNOTSUPP from ibv_get_device_list), so it never
 *   holds an object the other calls could take;
 * - ibv_register_driver@IBVERBS_1.1, how providers of that era registered;
 * - IBVERBS_PRIVATE_34, rdma-core 44's interface for its providers
 *   (ibv_cmd_*: kernel commands, verbs_* context helpers). ibemu loads no
 *   provider; one that loads itself against this library finds every
 *   command failing with EOPNOTSUPP.
 *
 * Their parameters are those of their eras' headers, which are not
 * installed; none is read, and on this ABI a function may ignore the
 * arguments it is passed, so the stubs take none.
 */
#include <stdbool.h>

#include "verbs_int.h"

/* --- IBVERBS_1.0 ------------------------------------------------------ */

VERBS_EXPORT void ibemu__ibv_ack_async_event_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_ack_async_event_1_0, ibv_ack_async_event,
		    "IBVERBS_1.0");
void ibemu__ibv_ack_async_event_1_0(void)
{
}

VERBS_EXPORT void ibemu__ibv_ack_cq_events_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_ack_cq_events_1_0, ibv_ack_cq_events,
		    "IBVERBS_1.0");
void ibemu__ibv_ack_cq_events_1_0(void)
{
}

VERBS_EXPORT void *ibemu__ibv_alloc_pd_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_alloc_pd_1_0, ibv_alloc_pd, "IBVERBS_1.0");
void *ibemu__ibv_alloc_pd_1_0(void)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

VERBS_EXPORT int ibemu__ibv_attach_mcast_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_attach_mcast_1_0, ibv_attach_mcast,
		    "IBVERBS_1.0");
int ibemu__ibv_attach_mcast_1_0(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_close_device_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_close_device_1_0, ibv_close_device,
		    "IBVERBS_1.0");
int ibemu__ibv_close_device_1_0(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT void *ibemu__ibv_create_ah_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_create_ah_1_0, ibv_create_ah, "IBVERBS_1.0");
void *ibemu__ibv_create_ah_1_0(void)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

VERBS_EXPORT void *ibemu__ibv_create_cq_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_create_cq_1_0, ibv_create_cq, "IBVERBS_1.0");
void *ibemu__ibv_create_cq_1_0(void)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

VERBS_EXPORT void *ibemu__ibv_create_qp_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_create_qp_1_0, ibv_create_qp, "IBVERBS_1.0");
void *ibemu__ibv_create_qp_1_0(void)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

VERBS_EXPORT void *ibemu__ibv_create_srq_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_create_srq_1_0, ibv_create_srq, "IBVERBS_1.0");
void *ibemu__ibv_create_srq_1_0(void)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

VERBS_EXPORT int ibemu__ibv_dealloc_pd_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_dealloc_pd_1_0, ibv_dealloc_pd, "IBVERBS_1.0");
int ibemu__ibv_dealloc_pd_1_0(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_dereg_mr_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_dereg_mr_1_0, ibv_dereg_mr, "IBVERBS_1.0");
int ibemu__ibv_dereg_mr_1_0(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_destroy_ah_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_destroy_ah_1_0, ibv_destroy_ah, "IBVERBS_1.0");
int ibemu__ibv_destroy_ah_1_0(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_destroy_cq_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_destroy_cq_1_0, ibv_destroy_cq, "IBVERBS_1.0");
int ibemu__ibv_destroy_cq_1_0(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_destroy_qp_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_destroy_qp_1_0, ibv_destroy_qp, "IBVERBS_1.0");
int ibemu__ibv_destroy_qp_1_0(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_destroy_srq_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_destroy_srq_1_0, ibv_destroy_srq, "IBVERBS_1.0");
int ibemu__ibv_destroy_srq_1_0(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_detach_mcast_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_detach_mcast_1_0, ibv_detach_mcast,
		    "IBVERBS_1.0");
int ibemu__ibv_detach_mcast_1_0(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT void ibemu__ibv_free_device_list_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_free_device_list_1_0, ibv_free_device_list,
		    "IBVERBS_1.0");
void ibemu__ibv_free_device_list_1_0(void)
{
}

VERBS_EXPORT int ibemu__ibv_get_async_event_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_get_async_event_1_0, ibv_get_async_event,
		    "IBVERBS_1.0");
int ibemu__ibv_get_async_event_1_0(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_get_cq_event_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_get_cq_event_1_0, ibv_get_cq_event,
		    "IBVERBS_1.0");
int ibemu__ibv_get_cq_event_1_0(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT uint64_t ibemu__ibv_get_device_guid_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_get_device_guid_1_0, ibv_get_device_guid,
		    "IBVERBS_1.0");
uint64_t ibemu__ibv_get_device_guid_1_0(void)
{
	return 0;
}

VERBS_EXPORT void *ibemu__ibv_get_device_list_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_get_device_list_1_0, ibv_get_device_list,
		    "IBVERBS_1.0");
void *ibemu__ibv_get_device_list_1_0(void)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

VERBS_EXPORT void *ibemu__ibv_get_device_name_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_get_device_name_1_0, ibv_get_device_name,
		    "IBVERBS_1.0");
void *ibemu__ibv_get_device_name_1_0(void)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

VERBS_EXPORT int ibemu__ibv_modify_qp_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_modify_qp_1_0, ibv_modify_qp, "IBVERBS_1.0");
int ibemu__ibv_modify_qp_1_0(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_modify_srq_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_modify_srq_1_0, ibv_modify_srq, "IBVERBS_1.0");
int ibemu__ibv_modify_srq_1_0(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT void *ibemu__ibv_open_device_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_open_device_1_0, ibv_open_device, "IBVERBS_1.0");
void *ibemu__ibv_open_device_1_0(void)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

VERBS_EXPORT int ibemu__ibv_query_device_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_query_device_1_0, ibv_query_device,
		    "IBVERBS_1.0");
int ibemu__ibv_query_device_1_0(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_query_gid_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_query_gid_1_0, ibv_query_gid, "IBVERBS_1.0");
int ibemu__ibv_query_gid_1_0(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_query_pkey_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_query_pkey_1_0, ibv_query_pkey, "IBVERBS_1.0");
int ibemu__ibv_query_pkey_1_0(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_query_port_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_query_port_1_0, ibv_query_port, "IBVERBS_1.0");
int ibemu__ibv_query_port_1_0(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_query_qp_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_query_qp_1_0, ibv_query_qp, "IBVERBS_1.0");
int ibemu__ibv_query_qp_1_0(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_query_srq_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_query_srq_1_0, ibv_query_srq, "IBVERBS_1.0");
int ibemu__ibv_query_srq_1_0(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT void *ibemu__ibv_reg_mr_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_reg_mr_1_0, ibv_reg_mr, "IBVERBS_1.0");
void *ibemu__ibv_reg_mr_1_0(void)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

VERBS_EXPORT int ibemu__ibv_resize_cq_1_0(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_resize_cq_1_0, ibv_resize_cq, "IBVERBS_1.0");
int ibemu__ibv_resize_cq_1_0(void)
{
	return EOPNOTSUPP;
}

/* --- ibv_register_driver@IBVERBS_1.1 ------------------------------------ */

VERBS_EXPORT void ibemu__ibv_register_driver_1_1(void);
VERBS_SYMVER_COMPAT(ibemu__ibv_register_driver_1_1, ibv_register_driver,
		    "IBVERBS_1.1");
void ibemu__ibv_register_driver_1_1(void)
{
}

/* --- IBVERBS_PRIVATE_34 ------------------------------------------------ */

/* Whether a provider may destroy objects of a disassociated device. */
VERBS_EXPORT bool verbs_allow_disassociate_destroy;

/* Kernel commands: 0 or an errno. */
VERBS_EXPORT int ibv_cmd_advise_mr(void);
int ibv_cmd_advise_mr(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_alloc_dm(void);
int ibv_cmd_alloc_dm(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_alloc_mw(void);
int ibv_cmd_alloc_mw(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_alloc_pd(void);
int ibv_cmd_alloc_pd(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_attach_mcast(void);
int ibv_cmd_attach_mcast(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_close_xrcd(void);
int ibv_cmd_close_xrcd(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_create_ah(void);
int ibv_cmd_create_ah(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_create_counters(void);
int ibv_cmd_create_counters(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_create_cq(void);
int ibv_cmd_create_cq(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_create_cq_ex(void);
int ibv_cmd_create_cq_ex(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_create_flow(void);
int ibv_cmd_create_flow(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_create_flow_action_esp(void);
int ibv_cmd_create_flow_action_esp(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_create_qp(void);
int ibv_cmd_create_qp(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_create_qp_ex(void);
int ibv_cmd_create_qp_ex(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_create_qp_ex2(void);
int ibv_cmd_create_qp_ex2(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_create_rwq_ind_table(void);
int ibv_cmd_create_rwq_ind_table(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_create_srq(void);
int ibv_cmd_create_srq(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_create_srq_ex(void);
int ibv_cmd_create_srq_ex(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_create_wq(void);
int ibv_cmd_create_wq(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_dealloc_mw(void);
int ibv_cmd_dealloc_mw(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_dealloc_pd(void);
int ibv_cmd_dealloc_pd(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_dereg_mr(void);
int ibv_cmd_dereg_mr(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_destroy_ah(void);
int ibv_cmd_destroy_ah(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_destroy_counters(void);
int ibv_cmd_destroy_counters(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_destroy_cq(void);
int ibv_cmd_destroy_cq(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_destroy_flow(void);
int ibv_cmd_destroy_flow(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_destroy_flow_action(void);
int ibv_cmd_destroy_flow_action(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_destroy_qp(void);
int ibv_cmd_destroy_qp(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_destroy_rwq_ind_table(void);
int ibv_cmd_destroy_rwq_ind_table(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_destroy_srq(void);
int ibv_cmd_destroy_srq(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_destroy_wq(void);
int ibv_cmd_destroy_wq(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_detach_mcast(void);
int ibv_cmd_detach_mcast(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_free_dm(void);
int ibv_cmd_free_dm(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_get_context(void);
int ibv_cmd_get_context(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_modify_cq(void);
int ibv_cmd_modify_cq(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_modify_flow_action_esp(void);
int ibv_cmd_modify_flow_action_esp(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_modify_qp(void);
int ibv_cmd_modify_qp(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_modify_qp_ex(void);
int ibv_cmd_modify_qp_ex(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_modify_srq(void);
int ibv_cmd_modify_srq(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_modify_wq(void);
int ibv_cmd_modify_wq(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_open_qp(void);
int ibv_cmd_open_qp(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_open_xrcd(void);
int ibv_cmd_open_xrcd(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_poll_cq(void);
int ibv_cmd_poll_cq(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_post_recv(void);
int ibv_cmd_post_recv(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_post_send(void);
int ibv_cmd_post_send(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_post_srq_recv(void);
int ibv_cmd_post_srq_recv(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_query_context(void);
int ibv_cmd_query_context(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_query_device_any(void);
int ibv_cmd_query_device_any(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_query_mr(void);
int ibv_cmd_query_mr(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_query_port(void);
int ibv_cmd_query_port(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_query_qp(void);
int ibv_cmd_query_qp(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_query_srq(void);
int ibv_cmd_query_srq(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_read_counters(void);
int ibv_cmd_read_counters(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_reg_dm_mr(void);
int ibv_cmd_reg_dm_mr(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_reg_dmabuf_mr(void);
int ibv_cmd_reg_dmabuf_mr(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_reg_mr(void);
int ibv_cmd_reg_mr(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_req_notify_cq(void);
int ibv_cmd_req_notify_cq(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_rereg_mr(void);
int ibv_cmd_rereg_mr(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_cmd_resize_cq(void);
int ibv_cmd_resize_cq(void)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int execute_ioctl(void);
int execute_ioctl(void)
{
	return EOPNOTSUPP;
}

/* A link-time check of command buffers: returns the count it is given. */
VERBS_EXPORT unsigned int __ioctl_final_num_attrs(unsigned int num_attrs);
unsigned int __ioctl_final_num_attrs(unsigned int num_attrs)
{
	return num_attrs;
}

VERBS_EXPORT void __verbs_log(void);
void __verbs_log(void)
{
}

VERBS_EXPORT void *_verbs_init_and_alloc_context(void);
void *_verbs_init_and_alloc_context(void)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

VERBS_EXPORT void *verbs_open_device(void);
void *verbs_open_device(void)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

VERBS_EXPORT void verbs_init_cq(void);
void verbs_init_cq(void)
{
}

VERBS_EXPORT void verbs_register_driver_34(void);
void verbs_register_driver_34(void)
{
}

VERBS_EXPORT void verbs_set_ops(void);
void verbs_set_ops(void)
{
}

VERBS_EXPORT void verbs_uninit_context(void);
void verbs_uninit_context(void)
{
}
