// SPDX-License-Identifier: MIT
/*
 * The topology's 'hca_tuning:' block: what it changes in the preset of
 * every HCA that has one (docs/hca-model.md), and how 'ibemu topo' writes
 * it back. The key table (yaml_keys.c) has checked each value.
 */
#include "yaml_keys.h"

int ibemu__yaml_tuning_apply(struct ibemu_topo *t,
			     const struct ibemu__ynode *map,
			     struct ibemu_diag *d)
{
	struct ibemu__yaml_val v[IBEMU__K_TUNE_COUNT];
	struct ibemu_hca_tuning *tn = &t->hca_tuning;
	int ret;

	ret = ibemu__yaml_map_parse(map, IBEMU__YS_HCA_TUNING, v, d);
	if (ret)
		goto out;
	if (v[IBEMU__K_TUNE_DOORBELL].node)
		tn->doorbell_ps = v[IBEMU__K_TUNE_DOORBELL].u;
	if (v[IBEMU__K_TUNE_DMA_READ].node)
		tn->dma_read_ps = v[IBEMU__K_TUNE_DMA_READ].u;
	if (v[IBEMU__K_TUNE_DMA_WRITE].node)
		tn->dma_write_ps = v[IBEMU__K_TUNE_DMA_WRITE].u;
	if (v[IBEMU__K_TUNE_MAX_PAYLOAD].node)
		tn->max_payload = (uint32_t)v[IBEMU__K_TUNE_MAX_PAYLOAD].u;
	if (v[IBEMU__K_TUNE_MAX_READ_REQUEST].node)
		tn->max_read_request =
			(uint32_t)v[IBEMU__K_TUNE_MAX_READ_REQUEST].u;
out:
	ibemu__yaml_vals_fini(v, IBEMU__K_TUNE_COUNT);
	return ret;
}

static void put_duration(struct ibemu_buf *b, const char *key, uint64_t ps)
{
	if (!ps)
		return;
	ibemu_buf_printf(b, "  %s: ", key);
	ibemu__yaml_format_duration(b, ps);
	ibemu_buf_puts(b, "\n");
}

static void put_size(struct ibemu_buf *b, const char *key, uint32_t bytes)
{
	if (bytes)
		ibemu_buf_printf(b, "  %s: %u\n", key, bytes);
}

void ibemu__yaml_tuning_emit(const struct ibemu_topo *t, struct ibemu_buf *b)
{
	const struct ibemu_hca_tuning *tn = &t->hca_tuning;

	if (!ibemu_hca_tuning_any(tn))
		return;
	ibemu_buf_puts(b, "hca_tuning:\n");
	put_duration(b, "doorbell", tn->doorbell_ps);
	put_duration(b, "dma_read", tn->dma_read_ps);
	put_duration(b, "dma_write", tn->dma_write_ps);
	put_size(b, "max_payload", tn->max_payload);
	put_size(b, "max_read_request", tn->max_read_request);
}
