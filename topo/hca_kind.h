/* SPDX-License-Identifier: MIT */
/*
 * The kinds of HCA a topology may declare (YAML 'hca_model:'): what host
 * interface the HCA models, by name. topo/ knows only the names; the
 * parameters of each are hca/host_model.c's.
 */
#ifndef IBEMU_HCA_KIND_H
#define IBEMU_HCA_KIND_H

#include <stdint.h>

#include "rate.h"

enum ibemu_hca_kind {
	IBEMU_HCA_WIRE, /* no host interface: a 300 ns doorbell, then wire */
	IBEMU_HCA_AUTO, /* the preset that matches the HCA's link speed */
	IBEMU_HCA_CX4,
	IBEMU_HCA_CX5,
	IBEMU_HCA_CX6,
	IBEMU_HCA_CX7,
	IBEMU_HCA_KIND_COUNT
};

/*
 * A topology's 'hca_tuning:' (docs/hca-model.md): what it changes in the
 * preset of every HCA that has one. These are the host's side of the PCIe
 * link (its CPU, root complex and memory), which vary with the server as
 * much as with the adapter. 0: the preset's value.
 */
struct ibemu_hca_tuning {
	uint64_t doorbell_ps;	   /* the CPU's MMIO store reaching the HCA */
	uint64_t dma_read_ps;	   /* a DMA read: request out to data in */
	uint64_t dma_write_ps;	   /* a DMA write: leaving the HCA to memory */
	uint32_t max_payload;	   /* PCIe Max_Payload_Size, bytes */
	uint32_t max_read_request; /* PCIe Max_Read_Request_Size, bytes */
};

/* 1 if 'tn' changes anything in a preset. */
static inline int ibemu_hca_tuning_any(const struct ibemu_hca_tuning *tn)
{
	return tn->doorbell_ps || tn->dma_read_ps || tn->dma_write_ps ||
	       tn->max_payload || tn->max_read_request;
}

/* Parses "connectx-5" (any case); returns 0 or -EINVAL. */
int ibemu_hca_kind_parse(const char *s, enum ibemu_hca_kind *out);
const char *ibemu_hca_kind_name(enum ibemu_hca_kind kind);
/* Lists the accepted names, for help and errors. */
const char *ibemu_hca_kind_names(void);
/* The preset 'auto' picks for a link of 'speed': EDR connectx-5, HDR
 * connectx-6, NDR and later connectx-7, slower ones connectx-4. */
enum ibemu_hca_kind ibemu_hca_kind_for_speed(enum ibemu_speed speed);
/* The PCI device ID of a preset's adapter, which an HCA of that kind
 * reports as its NodeInfo DeviceID and ibv_query_device's vendor_part_id
 * unless the topology gives one (perftest picks its defaults, inline
 * sizes among them, by it); 0 for wire and auto. */
unsigned ibemu_hca_kind_device_id(enum ibemu_hca_kind kind);

#endif
