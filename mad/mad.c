// SPDX-License-Identifier: MIT
/*
 * The MAD framings as layouts: the common header (IBA 13.4.2), LID-routed
 * and directed-route SMPs (IBA 14.2.1.1, 14.2.1.2), the PMA's GS framing
 * (IBA 16.1.1) and the CC framing (IBA Annex A10.4.1). Every framing
 * repeats the header's fields so a MAD decodes in one pass.
 */
#include <errno.h>

#include "mad.h"
#include "mad_cc.h"

/*
 * The header fields shared by all framings, with the DR ones apart. 'P' is
 * the path to the header in T: "hdr." or nothing.
 */
#define HDR_COMMON(T, P)                                                \
	IBEMU_MAD_F(T, P base_version, 0, 8, "BaseVersion"),            \
		IBEMU_MAD_F(T, P mgmt_class, 8, 8, "MgmtClass"),        \
		IBEMU_MAD_F(T, P class_version, 16, 8, "ClassVersion"), \
		IBEMU_MAD_F(T, P method, 24, 8, "Method"),              \
		IBEMU_MAD_F(T, P tid, 64, 64, "TransactionID"),         \
		IBEMU_MAD_F(T, P attr_id, 128, 16, "AttributeID"),      \
		IBEMU_MAD_F(T, P attr_mod, 160, 32, "AttributeModifier")
#define HDR_STATUS(T, P)                            \
	IBEMU_MAD_F(T, P status, 32, 16, "Status"), \
		IBEMU_MAD_F(T, P class_specific, 48, 16, "ClassSpecific")

static const struct ibemu_mad_field hdr_fields[] = {
	HDR_COMMON(struct ibemu_mad_hdr, ),
	HDR_STATUS(struct ibemu_mad_hdr, ),
};

const struct ibemu_mad_layout ibemu_mad_hdr_layout = IBEMU_MAD_LAYOUT(
	"MADHeader", 0, 0, struct ibemu_mad_hdr, IBEMU_MAD_HDR_LEN, hdr_fields);

static const struct ibemu_mad_field smp_lid_fields[] = {
	HDR_COMMON(struct ibemu_mad_smp, hdr.),
	HDR_STATUS(struct ibemu_mad_smp, hdr.),
	IBEMU_MAD_F(struct ibemu_mad_smp, m_key, IBEMU_SMP_MKEY_OFF * 8, 64,
		    "M_Key"),
	IBEMU_MAD_A(struct ibemu_mad_smp, data, IBEMU_SMP_DATA_OFF * 8, 8,
		    IBEMU_SMP_DATA_LEN, 8, "Data"),
};

const struct ibemu_mad_layout ibemu_mad_smp_lid_layout = IBEMU_MAD_LAYOUT(
	"SMP", 0, 0, struct ibemu_mad_smp, IBEMU_MAD_LEN, smp_lid_fields);

static const struct ibemu_mad_field smp_dr_fields[] = {
	HDR_COMMON(struct ibemu_mad_smp, hdr.),
	IBEMU_MAD_F(struct ibemu_mad_smp, d, 32, 1, "D"),
	IBEMU_MAD_F(struct ibemu_mad_smp, hdr.status, 33, 15, "Status"),
	IBEMU_MAD_F(struct ibemu_mad_smp, hop_ptr, 48, 8, "HopPointer"),
	IBEMU_MAD_F(struct ibemu_mad_smp, hop_cnt, 56, 8, "HopCount"),
	IBEMU_MAD_F(struct ibemu_mad_smp, m_key, IBEMU_SMP_MKEY_OFF * 8, 64,
		    "M_Key"),
	IBEMU_MAD_F(struct ibemu_mad_smp, dr_slid, IBEMU_SMP_DR_SLID_OFF * 8,
		    16, "DrSLID"),
	IBEMU_MAD_F(struct ibemu_mad_smp, dr_dlid, IBEMU_SMP_DR_DLID_OFF * 8,
		    16, "DrDLID"),
	IBEMU_MAD_A(struct ibemu_mad_smp, data, IBEMU_SMP_DATA_OFF * 8, 8,
		    IBEMU_SMP_DATA_LEN, 8, "Data"),
	IBEMU_MAD_A(struct ibemu_mad_smp, initial_path,
		    IBEMU_SMP_INITIAL_PATH_OFF * 8, 8, IBEMU_SMP_PATH_LEN, 8,
		    "InitialPath"),
	IBEMU_MAD_A(struct ibemu_mad_smp, return_path,
		    IBEMU_SMP_RETURN_PATH_OFF * 8, 8, IBEMU_SMP_PATH_LEN, 8,
		    "ReturnPath"),
};

const struct ibemu_mad_layout ibemu_mad_smp_dr_layout =
	IBEMU_MAD_LAYOUT("DirectedRouteSMP", 0, 0, struct ibemu_mad_smp,
			 IBEMU_MAD_LEN, smp_dr_fields);

static const struct ibemu_mad_field pma_fields[] = {
	HDR_COMMON(struct ibemu_mad_pma, hdr.),
	HDR_STATUS(struct ibemu_mad_pma, hdr.),
	IBEMU_MAD_A(struct ibemu_mad_pma, data, IBEMU_PMA_DATA_OFF * 8, 8,
		    IBEMU_PMA_DATA_LEN, 8, "Data"),
};

const struct ibemu_mad_layout ibemu_mad_pma_layout = IBEMU_MAD_LAYOUT(
	"PMA", 0, 0, struct ibemu_mad_pma, IBEMU_MAD_LEN, pma_fields);

static const struct ibemu_mad_field cc_fields[] = {
	HDR_COMMON(struct ibemu_mad_cc, hdr.),
	HDR_STATUS(struct ibemu_mad_cc, hdr.),
	IBEMU_MAD_F(struct ibemu_mad_cc, cc_key, IBEMU_CC_KEY_OFF * 8, 64,
		    "CC_Key"),
	IBEMU_MAD_A(struct ibemu_mad_cc, data, IBEMU_CC_LOG_DATA_OFF * 8, 8,
		    IBEMU_CC_LOG_DATA_LEN, 8, "Data"),
};

const struct ibemu_mad_layout ibemu_mad_cc_layout = IBEMU_MAD_LAYOUT(
	"CC", 0, 0, struct ibemu_mad_cc, IBEMU_MAD_LEN, cc_fields);

int ibemu_mad_hdr_encode(const struct ibemu_mad_hdr *hdr, uint8_t *buf,
			 size_t len)
{
	return ibemu_mad_layout_encode(&ibemu_mad_hdr_layout, hdr, buf, len);
}

int ibemu_mad_hdr_decode(const uint8_t *buf, size_t len,
			 struct ibemu_mad_hdr *hdr)
{
	return ibemu_mad_layout_decode(&ibemu_mad_hdr_layout, buf, len, hdr);
}

static const struct ibemu_mad_layout *smp_layout(uint8_t mgmt_class)
{
	if (mgmt_class == IBEMU_MAD_CLASS_SUBN_DR)
		return &ibemu_mad_smp_dr_layout;
	if (mgmt_class == IBEMU_MAD_CLASS_SUBN_LID)
		return &ibemu_mad_smp_lid_layout;
	return NULL;
}

int ibemu_mad_smp_encode(const struct ibemu_mad_smp *smp, uint8_t *buf,
			 size_t len)
{
	const struct ibemu_mad_layout *l = smp_layout(smp->hdr.mgmt_class);

	if (!l)
		return -EINVAL;
	return ibemu_mad_layout_encode(l, smp, buf, len);
}

int ibemu_mad_smp_decode(const uint8_t *buf, size_t len,
			 struct ibemu_mad_smp *smp)
{
	const struct ibemu_mad_layout *l;

	/* MgmtClass is byte 1; the length check comes first. */
	if (len < IBEMU_MAD_LEN)
		return -EINVAL;
	l = smp_layout(buf[1]);
	if (!l)
		return -EINVAL;
	return ibemu_mad_layout_decode(l, buf, len, smp);
}

int ibemu_mad_pma_encode(const struct ibemu_mad_pma *mad, uint8_t *buf,
			 size_t len)
{
	return ibemu_mad_layout_encode(&ibemu_mad_pma_layout, mad, buf, len);
}

int ibemu_mad_pma_decode(const uint8_t *buf, size_t len,
			 struct ibemu_mad_pma *mad)
{
	return ibemu_mad_layout_decode(&ibemu_mad_pma_layout, buf, len, mad);
}

int ibemu_mad_cc_encode(const struct ibemu_mad_cc *mad, uint8_t *buf,
			size_t len)
{
	return ibemu_mad_layout_encode(&ibemu_mad_cc_layout, mad, buf, len);
}

int ibemu_mad_cc_decode(const uint8_t *buf, size_t len,
			struct ibemu_mad_cc *mad)
{
	return ibemu_mad_layout_decode(&ibemu_mad_cc_layout, buf, len, mad);
}

uint8_t *ibemu_mad_cc_payload(struct ibemu_mad_cc *mad, size_t *len)
{
	if (mad->hdr.attr_id == IBEMU_CC_ATTR_CONGESTION_LOG) {
		*len = IBEMU_CC_LOG_DATA_LEN;
		return mad->data;
	}
	*len = IBEMU_CC_DATA_LEN;
	return mad->data + (IBEMU_CC_DATA_OFF - IBEMU_CC_LOG_DATA_OFF);
}
