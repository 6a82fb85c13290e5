// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the CM MAD parser the daemon routes with
 * (attach/sess_cm.c's ibemu__sess_cm_parse(), on mad/mad_cm.h): any bytes,
 * of any length, as a MAD. The parser must refuse what is not a whole CM
 * message of class version 2 and never read past the input; what it takes
 * must give the IDs its fields hold; every field read of a taken message
 * must stay inside the MAD, and setting a field to what it holds must not
 * change a byte.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mad_cm.h"
#include "sess.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_fields(const uint8_t *mad)
{
	const struct ibemu_cm_field f[] = {
		IBEMU_CM_REQ_SERVICE_ID,
		IBEMU_CM_REQ_LOCAL_QPN,
		IBEMU_CM_REQ_PRIMARY_FLOW_LABEL,
		IBEMU_CM_REQ_PRIMARY_PACKET_RATE,
		IBEMU_CM_MRA_SERVICE_TIMEOUT,
		IBEMU_CM_REJ_REASON,
		IBEMU_CM_REP_LOCAL_CA_GUID,
		IBEMU_CM_REP_SRQ,
		IBEMU_CM_DREQ_REMOTE_QPN,
		IBEMU_CM_SIDR_REP_QKEY,
	};
	uint8_t copy[IBEMU_MAD_LEN];
	size_t i;

	memcpy(copy, mad, sizeof(copy));
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (f[i].byte + (f[i].bit + f[i].width + 7) / 8 > IBEMU_MAD_LEN)
			abort();
		ibemu_cm_set(copy, f[i], ibemu_cm_get(copy, f[i]));
	}
	if (memcmp(copy, mad, sizeof(copy)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ibemu_sess_cm_key k;
	size_t off, len;
	uint8_t *mad;
	int ret;

	/* An exact-size copy: ASan sees a read past the input. */
	mad = malloc(size ? size : 1);
	if (!mad)
		abort();
	memcpy(mad, data, size);
	ret = ibemu__sess_cm_parse(mad, size, &k);
	if (ret && ret != -EINVAL && ret != -EPROTONOSUPPORT)
		abort();
	if (!ret) {
		if (size < IBEMU_MAD_LEN || k.attr < IBEMU_CM_ATTR_REQ ||
		    k.attr > IBEMU_CM_ATTR_SIDR_REP)
			abort();
		if (k.attr == IBEMU_CM_ATTR_REQ &&
		    k.service_id != ibemu_cm_get(mad, IBEMU_CM_REQ_SERVICE_ID))
			abort();
		off = ibemu_cm_private(k.attr, &len);
		if (!off || off + len > IBEMU_MAD_LEN)
			abort();
		check_fields(mad);
	}
	free(mad);
	return 0;
}
