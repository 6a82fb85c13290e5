// SPDX-License-Identifier: MIT
/*
 * The keys of the topology YAML format, each declared once per section with
 * its type, range, default and help, and the generic code that checks a
 * mapping against a section's table: unknown and duplicate keys, values of
 * the wrong type or out of range, missing required keys. The section code
 * in yaml_load.c only sees values that passed these checks.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hca_kind.h"
#include "rate.h"
#include "yaml_keys.h"

/* IBA 14.2.5.6 PortInfo VLCap: 1, 2, 4, 8 or 15 data VLs. */
static const unsigned vl_choices[] = {1, 2, 4, 8, 15, 0};

/*
 * The VL15 buffer is as large as a data VL's, and IBA 7.9.4 drops an SMP
 * that does not fit: a 256-byte MAD with LRH, BTH, DETH, ICRC and VCRC is
 * 290 bytes on the wire, 5 credits of 64 bytes.
 */
#define BUFFER_MIN 320u
#define BUFFER_WHY                                                           \
	"a smaller buffer cannot hold one VL15 SMP (290 bytes on the wire, " \
	"5 credits of 64 bytes), and every SMP through the port would be "   \
	"dropped"

#define PS_PER_MS    1000000000ull
#define MAX_CABLE_MM 100000000ull /* 100 km */

static const struct ibemu__yaml_key top_keys[] = {
	[IBEMU__K_TOP_NAME] = {.name = "name",
			       .type = IBEMU__YT_NAME,
			       .def = "the file's base name without extension",
			       .help = "the fabric's name"},
	[IBEMU__K_TOP_DEFAULTS] =
		{.name = "defaults",
		 .type = IBEMU__YT_MAP,
		 .def = "every default as listed",
		 .help = "fabric-wide defaults that nodes and links inherit"},
	[IBEMU__K_TOP_SWITCHES] = {.name = "switches",
				   .type = IBEMU__YT_SEQ,
				   .def = "none",
				   .help = "the switches, one mapping each"},
	[IBEMU__K_TOP_HCAS] =
		{.name = "hcas",
		 .type = IBEMU__YT_SEQ,
		 .def = "none",
		 .help = "the HCAs (channel adapters), one mapping each"},
	[IBEMU__K_TOP_LINKS] =
		{.name = "links",
		 .type = IBEMU__YT_SEQ,
		 .def = "none",
		 .help = "the cables, as [node:port, node:port] or a mapping"},
	[IBEMU__K_TOP_GENERATE] =
		{.name = "generate",
		 .type = IBEMU__YT_MAP,
		 .def = "none",
		 .help = "a generator kind and its parameters"},
	[IBEMU__K_TOP_CC] =
		{.name = "congestion_control",
		 .type = IBEMU__YT_MAP,
		 .def = "ibemu's default policy",
		 .help = "the congestion control policy the SM applies"},
	[IBEMU__K_TOP_HCA_TUNING] =
		{.name = "hca_tuning",
		 .type = IBEMU__YT_MAP,
		 .def = "the presets as they are",
		 .help = "the host's side of every preset's PCIe link "
			 "(docs/hca-model.md)"},
};

static const struct ibemu__yaml_key defaults_keys[] = {
	[IBEMU__K_DEF_MTU] = {.name = "mtu",
			      .type = IBEMU__YT_INT,
			      .choices = ibemu_mtu_choices,
			      .def = "4096",
			      .help = "the largest payload of a packet, bytes"},
	[IBEMU__K_DEF_VLS] = {.name = "vls",
			      .type = IBEMU__YT_INT,
			      .choices = vl_choices,
			      .def = "4",
			      .help = "data VLs per port"},
	[IBEMU__K_DEF_WIDTH] = {.name = "width",
				.type = IBEMU__YT_WIDTH,
				.def = "4x",
				.help = "link width in lanes"},
	[IBEMU__K_DEF_SPEED] = {.name = "speed",
				.type = IBEMU__YT_SPEED,
				.def = "EDR",
				.help = "link speed (lane signalling rate)"},
	[IBEMU__K_DEF_CABLE_LENGTH] =
		{.name = "cable_length",
		 .type = IBEMU__YT_LENGTH,
		 .max = MAX_CABLE_MM,
		 .def = "2m",
		 .help = "cable length; a link's latency is 5 ns per metre"},
	[IBEMU__K_DEF_BUFFER_PER_VL] =
		{.name = "buffer_per_vl",
		 .type = IBEMU__YT_SIZE,
		 .min = BUFFER_MIN,
		 .why = BUFFER_WHY,
		 .max = 16u << 20,
		 .multiple = 64,
		 .def = "16KiB",
		 .help = "receive buffer of each port per data VL, whole "
			 "64-byte credits"},
	[IBEMU__K_DEF_ROUTING_LATENCY] =
		{.name = "routing_latency",
		 .type = IBEMU__YT_DURATION,
		 .flags = IBEMU__YAML_DERIVED,
		 .min = 1,
		 .max = PS_PER_MS,
		 .def = "by speed: 200ns SDR/DDR, 100ns QDR, 170ns FDR10/FDR, "
			"90ns EDR, 130ns HDR and later",
		 .help = "switch delay from a packet's header arriving to it "
			 "leaving"},
	[IBEMU__K_DEF_HCA_MODEL] =
		{.name = "hca_model",
		 .type = IBEMU__YT_HCA_MODEL,
		 .def = "auto",
		 .help = "the HCAs' host interface (docs/hca-model.md): wire, "
			 "auto (by link speed) or a ConnectX preset"},
};

/* Keys that switches and HCAs share, declared once for both tables. */
#define KEY_NODE_NAME                                               \
	{                                                           \
		.name = "name", .type = IBEMU__YT_NAME,             \
		.flags = IBEMU__YAML_REQUIRED, .def = "required",   \
		.help = "a unique name of letters, digits and _.+-" \
	}
#define KEY_NODE_DESCRIPTION                                  \
	{                                                     \
		.name = "description", .type = IBEMU__YT_STR, \
		.max = IBEMU_NODEDESC_MAX, .def = "the name", \
		.help = "NodeDescription, at most 64 bytes"   \
	}
#define KEY_NODE_SYSIMAGE_GUID                                       \
	{                                                            \
		.name = "system_image_guid", .type = IBEMU__YT_GUID, \
		.def = "the guid", .help = "SystemImageGUID"         \
	}
#define KEY_NODE_VENDOR_ID                                                    \
	{                                                                     \
		.name = "vendor_id", .type = IBEMU__YT_INT,                   \
		.flags = IBEMU__YAML_HEX, .max = 0xffffff, .def = "0x02ebe0", \
		.help = "NodeInfo VendorID (an IEEE OUI)"                     \
	}
#define KEY_NODE_VLS                                                         \
	{                                                                    \
		.name = "vls", .type = IBEMU__YT_INT, .choices = vl_choices, \
		.def = "defaults: vls", .help = "data VLs of every port"     \
	}
#define KEY_NODE_BUFFER_PER_VL                                          \
	{                                                               \
		.name = "buffer_per_vl", .type = IBEMU__YT_SIZE,        \
		.min = BUFFER_MIN, .why = BUFFER_WHY, .max = 16u << 20, \
		.multiple = 64, .def = "defaults: buffer_per_vl",       \
		.help = "receive buffer of each port per data VL"       \
	}
#define KEY_NODE_DEVICE_ID(default_)                                      \
	{                                                                 \
		.name = "device_id", .type = IBEMU__YT_INT,               \
		.flags = IBEMU__YAML_HEX, .max = 0xffff, .def = default_, \
		.help = "NodeInfo DeviceID"                               \
	}

/* Switches and HCAs share the indices; a NULL name leaves a key out. */
static const struct ibemu__yaml_key switch_keys[] = {
	[IBEMU__K_NODE_NAME] = KEY_NODE_NAME,
	[IBEMU__K_NODE_PORTS] = {.name = "ports",
				 .type = IBEMU__YT_INT,
				 .flags = IBEMU__YAML_REQUIRED,
				 .min = 1,
				 .max = IBEMU_MAX_PORTS,
				 .def = "required",
				 .help = "the number of physical ports"},
	[IBEMU__K_NODE_DESCRIPTION] = KEY_NODE_DESCRIPTION,
	[IBEMU__K_NODE_GUID] =
		{.name = "guid",
		 .type = IBEMU__YT_GUID,
		 .def = "derived from the name",
		 .help = "NodeGUID; also the GUID of every port"},
	[IBEMU__K_NODE_SYSIMAGE_GUID] = KEY_NODE_SYSIMAGE_GUID,
	[IBEMU__K_NODE_VENDOR_ID] = KEY_NODE_VENDOR_ID,
	[IBEMU__K_NODE_DEVICE_ID] = KEY_NODE_DEVICE_ID("0xeb02"),
	[IBEMU__K_NODE_VLS] = KEY_NODE_VLS,
	[IBEMU__K_NODE_BUFFER_PER_VL] = KEY_NODE_BUFFER_PER_VL,
	[IBEMU__K_NODE_ROUTING_LATENCY] =
		{.name = "routing_latency",
		 .type = IBEMU__YT_DURATION,
		 .min = 1,
		 .max = PS_PER_MS,
		 .def = "defaults: routing_latency",
		 .help = "delay from a packet's header arriving to it leaving"},
};

static const struct ibemu__yaml_key hca_keys[] = {
	[IBEMU__K_NODE_NAME] = KEY_NODE_NAME,
	[IBEMU__K_NODE_PORTS] = {.name = "ports",
				 .type = IBEMU__YT_INT,
				 .min = 1,
				 .max = IBEMU_HCA_MAX_PORTS,
				 .why = "rdma-core's libibumad handles HCA "
					"ports 1..9 (UMAD_CA_MAX_PORTS is "
					"10), so ibstat and OpenSM would not "
					"see the others",
				 .def = "1",
				 .help = "the number of ports"},
	[IBEMU__K_NODE_DESCRIPTION] = KEY_NODE_DESCRIPTION,
	[IBEMU__K_NODE_GUID] = {.name = "guid",
				.type = IBEMU__YT_GUID,
				.def = "derived from the name",
				.help = "NodeGUID"},
	[IBEMU__K_NODE_PORT_GUIDS] =
		{.name = "port_guids",
		 .type = IBEMU__YT_GUIDS,
		 .def = "guid + port number",
		 .help = "PortGUID of each port, one per port in port order"},
	[IBEMU__K_NODE_SYSIMAGE_GUID] = KEY_NODE_SYSIMAGE_GUID,
	[IBEMU__K_NODE_VENDOR_ID] = KEY_NODE_VENDOR_ID,
	[IBEMU__K_NODE_DEVICE_ID] = KEY_NODE_DEVICE_ID("0xeb01"),
	[IBEMU__K_NODE_VLS] = KEY_NODE_VLS,
	[IBEMU__K_NODE_BUFFER_PER_VL] = KEY_NODE_BUFFER_PER_VL,
	[IBEMU__K_NODE_HCA_MODEL] =
		{.name = "hca_model",
		 .type = IBEMU__YT_HCA_MODEL,
		 .def = "defaults: hca_model",
		 .help = "this HCA's host interface (docs/hca-model.md)"},
	[IBEMU__K_NODE_IP] =
		{.name = "ip",
		 .type = IBEMU__YT_STR,
		 .max = 15,
		 .def = "127.10.0.0 + 16 * HCA index + 1",
		 .help = "IPv4 address of port 1 in 127.0.0.0/8 "
			 "(rdma_cm); port N has the address + N - 1"},
};

static const struct ibemu__yaml_key link_keys[] = {
	[IBEMU__K_LINK_A] = {.name = "a",
			     .type = IBEMU__YT_ENDPOINT,
			     .flags = IBEMU__YAML_REQUIRED,
			     .def = "required",
			     .help = "one end of the cable, node:port"},
	[IBEMU__K_LINK_B] = {.name = "b",
			     .type = IBEMU__YT_ENDPOINT,
			     .flags = IBEMU__YAML_REQUIRED,
			     .def = "required",
			     .help = "the other end of the cable, node:port"},
	[IBEMU__K_LINK_WIDTH] = {.name = "width",
				 .type = IBEMU__YT_WIDTH,
				 .def = "defaults: width",
				 .help = "lanes"},
	[IBEMU__K_LINK_SPEED] = {.name = "speed",
				 .type = IBEMU__YT_SPEED,
				 .def = "defaults: speed",
				 .help = "lane signalling rate"},
	[IBEMU__K_LINK_CABLE_LENGTH] =
		{.name = "cable_length",
		 .type = IBEMU__YT_LENGTH,
		 .max = MAX_CABLE_MM,
		 .def = "defaults: cable_length",
		 .help = "cable length; sets the latency to 5 ns per metre"},
	[IBEMU__K_LINK_LATENCY] =
		{.name = "latency",
		 .type = IBEMU__YT_DURATION,
		 .max = PS_PER_MS,
		 .def = "from cable_length",
		 .help = "one-way propagation delay, instead of cable_length"},
};

static const struct ibemu__yaml_key generate_keys[] = {
	[IBEMU__K_GEN_KIND] =
		{.name = "kind",
		 .type = IBEMU__YT_STR,
		 .flags = IBEMU__YAML_REQUIRED,
		 .max = 63,
		 .def = "required",
		 .help = "a generator kind (see topologies/GENERATORS.md)"},
};

/*
 * congestion_control: the policy of cc/cc_policy.h, by OpenSM's meaning
 * (IBA Annex A10.4.3); the defaults are ibemu's (cc/cc_policy.c).
 */
static const struct ibemu__yaml_key cc_keys[] = {
	[IBEMU__K_CC_ENABLE] = {.name = "enable",
				.type = IBEMU__YT_BOOL,
				.def = "true",
				.help = "whether the SM configures congestion "
					"control"},
	[IBEMU__K_CC_KEY] = {.name = "cc_key",
			     .type = IBEMU__YT_INT,
			     .flags = IBEMU__YAML_HEX,
			     .max = UINT64_MAX,
			     .def = "0",
			     .help = "the CC_Key of every CC MAD"},
	[IBEMU__K_CC_SWITCH] = {.name = "switch",
				.type = IBEMU__YT_MAP,
				.def = "as listed",
				.help = "SwitchCongestionSetting of every "
					"switch"},
	[IBEMU__K_CC_CA] = {.name = "ca",
			    .type = IBEMU__YT_MAP,
			    .def = "as listed",
			    .help = "CACongestionSetting of every CA port"},
	[IBEMU__K_CC_CCT] = {.name = "cct",
			     .type = IBEMU__YT_CCT,
			     .def = "{entries: 128, step: \"0:1\"}",
			     .help = "the CongestionControlTable of every CA "
				     "port"},
};

static const struct ibemu__yaml_key cc_switch_keys[] = {
	[IBEMU__K_CCSW_CONTROL_MAP] = {.name = "control_map",
				       .type = IBEMU__YT_INT,
				       .flags = IBEMU__YAML_HEX,
				       .max = UINT32_MAX,
				       .def = "0x1f",
				       .help = "the fields that are valid"},
	[IBEMU__K_CCSW_THRESHOLD] = {.name = "threshold",
				     .type = IBEMU__YT_INT,
				     .max = 15,
				     .def = "15",
				     .help = "how eagerly a port marks FECN: 0 "
					     "never, 1 least .. 15 most"},
	[IBEMU__K_CCSW_MARKING_RATE] = {.name = "marking_rate",
					.type = IBEMU__YT_INT,
					.max = UINT16_MAX,
					.def = "0",
					.help = "packets left unmarked between "
						"two marked ones"},
	[IBEMU__K_CCSW_PACKET_SIZE] = {.name = "packet_size",
				       .type = IBEMU__YT_INT,
				       .max = UINT8_MAX,
				       .def = "0",
				       .help = "packets of fewer 64-byte "
					       "credits are not marked"},
	[IBEMU__K_CCSW_VICTIM_MASK] =
		{.name = "victim_mask",
		 .type = IBEMU__YT_PORTS,
		 .def = "none",
		 .help = "ports that mark even as victims "
			 "of congestion"},
	[IBEMU__K_CCSW_CREDIT_MASK] = {.name = "credit_mask",
				       .type = IBEMU__YT_PORTS,
				       .def = "none",
				       .help = "ports that mark when credits "
					       "starve"},
	[IBEMU__K_CCSW_CS_THRESHOLD] = {.name = "cs_threshold",
					.type = IBEMU__YT_INT,
					.max = 15,
					.def = "0",
					.help = "credit starvation threshold"},
	[IBEMU__K_CCSW_CS_RETURN_DELAY] = {.name = "cs_return_delay",
					   .type = IBEMU__YT_CC_ENTRY,
					   .def = "\"0:0\"",
					   .help = "credit starvation return "
						   "delay"},
};

/* The four values of one SL, for every SL (ca:) or one (sls:). */
#define KEY_CC_SL(idx, name_, max_, def_, help_) \
	[idx] = {.name = name_,                  \
		 .type = IBEMU__YT_INT,          \
		 .max = max_,                    \
		 .def = def_,                    \
		 .help = help_}
#define KEYS_CC_SL(where)                                                    \
	KEY_CC_SL(IBEMU__K_CCCA_CCTI_TIMER, "ccti_timer", UINT16_MAX, where, \
		  "CCTI drops by 1 each time it expires, in 1.024 us"),      \
		KEY_CC_SL(IBEMU__K_CCCA_CCTI_INCREASE, "ccti_increase",      \
			  UINT8_MAX, where, "what a BECN adds to CCTI"),     \
		KEY_CC_SL(IBEMU__K_CCCA_TRIGGER_THRESHOLD,                   \
			  "trigger_threshold", UINT8_MAX, where,             \
			  "the CCTI at which the CA logs an event"),         \
		KEY_CC_SL(IBEMU__K_CCCA_CCTI_MIN, "ccti_min", UINT8_MAX,     \
			  where, "the least CCTI (a floor under the delay)")

static const struct ibemu__yaml_key cc_ca_keys[] = {
	KEYS_CC_SL("20, 1, 8, 0 (ccti_timer, ccti_increase, "
		   "trigger_threshold, ccti_min)"),
	[IBEMU__K_CCCA_CONTROL] = {.name = "control",
				   .type = IBEMU__YT_STR,
				   .def = "qp",
				   .help = "qp: each QP throttles on its own; "
					   "sl: per SL of the port"},
	[IBEMU__K_CCCA_CONTROL_MAP] = {.name = "control_map",
				       .type = IBEMU__YT_INT,
				       .flags = IBEMU__YAML_HEX,
				       .max = UINT16_MAX,
				       .def = "0xffff",
				       .help = "the SLs (bit N: SL N) that "
					       "react"},
	[IBEMU__K_CCCA_SLS] = {.name = "sls",
			       .type = IBEMU__YT_SEQ,
			       .def = "none",
			       .help = "per-SL overrides, {sl: N, ...}"},
};

static const struct ibemu__yaml_key cc_sl_keys[] = {
	KEYS_CC_SL("ca's"),
	[IBEMU__K_CCCA_SL] = {.name = "sl",
			      .type = IBEMU__YT_INT,
			      .flags = IBEMU__YAML_REQUIRED,
			      .max = 15,
			      .def = "required",
			      .help = "the SL it overrides"},
};

static const struct ibemu__yaml_key cc_cct_keys[] = {
	[IBEMU__K_CCT_ENTRIES] = {.name = "entries",
				  .type = IBEMU__YT_INT,
				  .flags = IBEMU__YAML_REQUIRED,
				  .max = IBEMU_CC_POLICY_CCT_MAX,
				  .why = "OpenSM keeps at most 128 entries",
				  .def = "required",
				  .help = "how many entries"},
	[IBEMU__K_CCT_STEP] = {.name = "step",
			       .type = IBEMU__YT_CC_ENTRY,
			       .def = "\"0:1\"",
			       .help = "entry i is shift:(i x multiplier)"},
};

/* PCIe Base Specification, Device Control: Max_Payload_Size and
 * Max_Read_Request_Size are 128 << (0..5) bytes. */
static const unsigned pcie_size_choices[] = {128,  256,	 512, 1024,
					     2048, 4096, 0};

#define NS_PS	 1000ull
#define TUNE_MAX (100 * NS_PS * 1000) /* 100 us */

static const struct ibemu__yaml_key tuning_keys[] = {
	[IBEMU__K_TUNE_DOORBELL] =
		{.name = "doorbell",
		 .type = IBEMU__YT_DURATION,
		 .min = 150 * NS_PS,
		 .max = TUNE_MAX,
		 .why = "with the HCA's 150 ns send pipeline it is the time "
			"rule's 300 ns lookahead (docs/design.md 3): work "
			"may not reach the wire sooner after its post",
		 .def = "the preset's (150ns)",
		 .help = "the CPU's MMIO store reaching the HCA"},
	[IBEMU__K_TUNE_DMA_READ] = {.name = "dma_read",
				    .type = IBEMU__YT_DURATION,
				    .min = 1,
				    .max = TUNE_MAX,
				    .def = "the preset's (250ns)",
				    .help = "a DMA read's round trip, from "
					    "its request leaving the HCA to "
					    "its data coming in"},
	[IBEMU__K_TUNE_DMA_WRITE] = {.name = "dma_write",
				     .type = IBEMU__YT_DURATION,
				     .min = 1,
				     .max = TUNE_MAX,
				     .def = "the preset's (100ns)",
				     .help = "a DMA write, from leaving the "
					     "HCA to being in memory"},
	[IBEMU__K_TUNE_MAX_PAYLOAD] = {.name = "max_payload",
				       .type = IBEMU__YT_SIZE,
				       .choices = pcie_size_choices,
				       .def = "the preset's",
				       .help = "PCIe Max_Payload_Size"},
	[IBEMU__K_TUNE_MAX_READ_REQUEST] = {.name = "max_read_request",
					    .type = IBEMU__YT_SIZE,
					    .choices = pcie_size_choices,
					    .def = "the preset's",
					    .help = "PCIe "
						    "Max_Read_Request_Size"},
};

#define SECTION(w, k, o)                                                       \
	{                                                                      \
		.where = w, .keys = k, .nkeys = IBEMU_ARRAY_SIZE(k), .open = o \
	}

static const struct ibemu__yaml_section sections[IBEMU__YS_COUNT] = {
	[IBEMU__YS_TOP] = SECTION("at the top level", top_keys, 0),
	[IBEMU__YS_DEFAULTS] = SECTION("in defaults", defaults_keys, 0),
	[IBEMU__YS_SWITCH] = SECTION("in a switch", switch_keys, 0),
	[IBEMU__YS_HCA] = SECTION("in an HCA", hca_keys, 0),
	[IBEMU__YS_LINK] = SECTION("in a link", link_keys, 0),
	[IBEMU__YS_GENERATE] = SECTION("in generate", generate_keys, 1),
	[IBEMU__YS_CC] = SECTION("in congestion_control", cc_keys, 0),
	[IBEMU__YS_CC_SWITCH] =
		SECTION("in congestion_control: switch", cc_switch_keys, 0),
	[IBEMU__YS_CC_CA] = SECTION("in congestion_control: ca", cc_ca_keys, 0),
	[IBEMU__YS_CC_SL] = SECTION("in an SL of congestion_control: ca: sls",
				    cc_sl_keys, 0),
	[IBEMU__YS_CC_CCT] =
		SECTION("in congestion_control: cct", cc_cct_keys, 0),
	[IBEMU__YS_HCA_TUNING] = SECTION("in hca_tuning", tuning_keys, 0),
};

_Static_assert(IBEMU_ARRAY_SIZE(switch_keys) <= IBEMU__YAML_MAX_KEYS &&
		       IBEMU_ARRAY_SIZE(hca_keys) <= IBEMU__YAML_MAX_KEYS,
	       "IBEMU__YAML_MAX_KEYS too small");

const struct ibemu__yaml_section *
ibemu__yaml_section(enum ibemu__yaml_section_id id)
{
	IBEMU_BUG_ON((unsigned)id >= IBEMU__YS_COUNT);
	return &sections[id];
}

int ibemu__ynode_is_null(const struct ibemu__ynode *n)
{
	if (n->kind != IBEMU__Y_SCALAR || !n->plain)
		return 0;
	return !n->len || !strcmp(n->str, "~") || !strcmp(n->str, "null") ||
	       !strcmp(n->str, "Null") || !strcmp(n->str, "NULL");
}

const char *ibemu__ynode_what(const struct ibemu__ynode *n)
{
	if (n->kind == IBEMU__Y_SEQ)
		return "a sequence";
	if (n->kind == IBEMU__Y_MAP)
		return "a mapping";
	return ibemu__ynode_is_null(n) ? "empty" : "a scalar";
}

/* Units of the suffixed quantities, each as a multiple of the base unit. */
struct unit {
	const char *name;
	uint64_t scale;
};

static const struct unit duration_units[] = {
	{"ps", 1}, {"ns", 1000}, {"us", 1000000}, {"ms", PS_PER_MS}, {NULL, 0},
};

static const struct unit length_units[] = {
	{"mm", 1},
	{"cm", 10},
	{"m", 1000},
	{NULL, 0},
};

static const struct unit size_units[] = {
	{"B", 1},
	{"KiB", 1024},
	{"MiB", 1024 * 1024},
	{"GiB", 1024 * 1024 * 1024},
	{NULL, 0},
};

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int ibemu__yaml_parse_uint(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	int x;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		if (!*s)
			return -EINVAL;
		for (; *s; s++) {
			x = ibemu_hex_digit(*s);
			if (x < 0)
				return -EINVAL;
			if (v >> 60)
				return -ERANGE;
			v = v << 4 | (unsigned)x;
		}
		*out = v;
		return 0;
	}
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (!is_digit(*s))
			return -EINVAL;
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (unsigned)(*s - '0');
	}
	*out = v;
	return 0;
}

/*
 * Parses "<decimal>[.<decimal>][ ]<unit>" exactly: the value must be a whole
 * number of base units ("0.5m" is 500 mm, "0.5mm" is refused). 'bare' is the
 * scale of a number without a unit, or 0 when a unit is required.
 */
static int parse_quantity(const char *s, const struct unit *units,
			  uint64_t bare, uint64_t *out)
{
	unsigned __int128 ip = 0, fp = 0, pow10 = 1, v;
	const struct unit *u;
	uint64_t scale = 0;
	unsigned digits = 0;

	if (!is_digit(*s))
		return -EINVAL;
	for (; is_digit(*s); s++) {
		if (++digits > 20)
			return -ERANGE;
		ip = ip * 10 + (unsigned)(*s - '0');
	}
	if (*s == '.') {
		s++;
		if (!is_digit(*s))
			return -EINVAL;
		for (digits = 0; is_digit(*s); s++) {
			if (++digits > 18)
				return -ENOTSUP;
			fp = fp * 10 + (unsigned)(*s - '0');
			pow10 *= 10;
		}
	}
	if (*s == ' ')
		s++;
	if (!*s) {
		if (!bare)
			return -EDOM;
		scale = bare;
	}
	for (u = units; *s && u->name; u++) {
		if (!strcmp(s, u->name)) {
			scale = u->scale;
			break;
		}
	}
	if (!scale)
		return -EINVAL;
	if (fp * scale % pow10)
		return -ENOTSUP;
	v = ip * scale + fp * scale / pow10;
	if (v > UINT64_MAX)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

int ibemu__yaml_parse_duration(const char *s, uint64_t *ps)
{
	return parse_quantity(s, duration_units, 0, ps);
}

int ibemu__yaml_parse_length(const char *s, uint64_t *mm)
{
	return parse_quantity(s, length_units, 0, mm);
}

int ibemu__yaml_parse_size(const char *s, uint64_t *bytes)
{
	return parse_quantity(s, size_units, 1, bytes);
}

/* Prints v in the largest unit it fills, with the decimals it needs. */
static void format_quantity(struct ibemu_buf *b, uint64_t v,
			    const struct unit *units)
{
	const struct unit *u = units, *best = units;
	uint64_t frac;
	int decimals = 0;

	for (; u->name; u++)
		if (v >= u->scale)
			best = u;
	frac = v % best->scale;
	ibemu_buf_printf(b, "%" PRIu64, v / best->scale);
	if (frac) {
		uint64_t div = best->scale;

		/* The scales are powers of ten: drop the fraction's zeros. */
		while (frac % 10 == 0) {
			frac /= 10;
			div /= 10;
		}
		for (; div > 1; div /= 10)
			decimals++;
		ibemu_buf_printf(b, ".%0*" PRIu64, decimals, frac);
	}
	ibemu_buf_puts(b, best->name);
}

void ibemu__yaml_format_duration(struct ibemu_buf *b, uint64_t ps)
{
	format_quantity(b, ps, duration_units);
}

void ibemu__yaml_format_length(struct ibemu_buf *b, uint64_t mm)
{
	format_quantity(b, mm, length_units);
}

void ibemu__yaml_format_size(struct ibemu_buf *b, uint64_t bytes)
{
	/* Binary units are not powers of ten: use the largest exact one. */
	if (bytes && !(bytes % (1024 * 1024)))
		ibemu_buf_printf(b, "%" PRIu64 "MiB", bytes >> 20);
	else if (bytes && !(bytes % 1024))
		ibemu_buf_printf(b, "%" PRIu64 "KiB", bytes >> 10);
	else
		ibemu_buf_printf(b, "%" PRIu64, bytes);
}

/* Appends "1, 2 or 4" for the choices of 'k'. */
static void choices_text(struct ibemu_buf *b, const struct ibemu__yaml_key *k)
{
	const unsigned *c;

	for (c = k->choices; *c; c++)
		ibemu_buf_printf(b, "%s%u",
				 c == k->choices ? ""
				 : c[1]		 ? ", "
						 : " or ",
				 *c);
}

/* Appends what a value of key 'k' looks like, for "expected ..." */
static void expect_text(struct ibemu_buf *b, const struct ibemu__yaml_key *k)
{
	switch (k->type) {
	case IBEMU__YT_INT:
		if (k->choices)
			choices_text(b, k);
		else
			ibemu_buf_puts(b, "an integer (decimal or 0x hex)");
		break;
	case IBEMU__YT_GUID:
		ibemu_buf_puts(b, "a GUID (0x and up to 16 hex digits)");
		break;
	case IBEMU__YT_GUIDS:
		ibemu_buf_puts(b, "a sequence of GUIDs, one per port");
		break;
	case IBEMU__YT_STR:
		ibemu_buf_puts(b, "a string");
		break;
	case IBEMU__YT_NAME:
		ibemu_buf_puts(b, "a name of letters, digits and _.+- "
				  "(at most 63 characters)");
		break;
	case IBEMU__YT_DURATION:
		ibemu_buf_puts(b, "a duration with a unit, ps, ns, us or ms "
				  "(such as 90ns)");
		break;
	case IBEMU__YT_LENGTH:
		ibemu_buf_puts(b, "a length with a unit, mm, cm or m "
				  "(such as 3m)");
		break;
	case IBEMU__YT_SIZE:
		if (k->choices) {
			choices_text(b, k);
			ibemu_buf_puts(b, " bytes");
		} else {
			ibemu_buf_puts(b, "a size in bytes, KiB or MiB (such "
					  "as 16KiB)");
		}
		break;
	case IBEMU__YT_WIDTH:
		ibemu_buf_puts(b, "1x, 2x, 4x, 8x or 12x");
		break;
	case IBEMU__YT_SPEED:
		ibemu_buf_puts(b, ibemu_speed_names());
		break;
	case IBEMU__YT_HCA_MODEL:
		ibemu_buf_puts(b, ibemu_hca_kind_names());
		break;
	case IBEMU__YT_ENDPOINT:
		ibemu_buf_puts(b, "node:port (such as sw1:3)");
		break;
	case IBEMU__YT_BOOL:
		ibemu_buf_puts(b, "true or false");
		break;
	case IBEMU__YT_PORTS:
		ibemu_buf_puts(b, "all, or a sequence of port numbers 0..255");
		break;
	case IBEMU__YT_CC_ENTRY:
		ibemu_buf_puts(b, "\"shift:multiplier\" (shift 0..3, "
				  "multiplier 0..16383)");
		break;
	case IBEMU__YT_CCT:
		ibemu_buf_puts(b, "a sequence of \"shift:multiplier\" "
				  "(at most 128), or {entries: N, step: "
				  "\"shift:multiplier\"}");
		break;
	case IBEMU__YT_SEQ:
		ibemu_buf_printf(b, "a sequence (%s)", k->help);
		break;
	case IBEMU__YT_MAP:
		ibemu_buf_printf(b, "a mapping (%s)", k->help);
		break;
	}
}

static void format_bound(struct ibemu_buf *b, const struct ibemu__yaml_key *k,
			 uint64_t v)
{
	switch (k->type) {
	case IBEMU__YT_DURATION:
		ibemu__yaml_format_duration(b, v);
		break;
	case IBEMU__YT_LENGTH:
		ibemu__yaml_format_length(b, v);
		break;
	case IBEMU__YT_SIZE:
		ibemu__yaml_format_size(b, v);
		break;
	default:
		if (k->flags & IBEMU__YAML_HEX)
			ibemu_buf_printf(b, "0x%" PRIx64, v);
		else
			ibemu_buf_printf(b, "%" PRIu64, v);
	}
}

/* Reports "<what>, expected <what key k takes>" at node 'n'. */
static int IBEMU_PRINTF(4, 5)
	bad_value(struct ibemu_diag *d, const struct ibemu__ynode *n,
		  const struct ibemu__yaml_key *k, const char *fmt, ...)
{
	struct ibemu_buf b;
	va_list ap;
	char *msg;
	int n_;

	ibemu_buf_init(&b);
	va_start(ap, fmt);
	n_ = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	msg = n_ >= 0 ? malloc((size_t)n_ + 1) : NULL;
	if (msg) {
		va_start(ap, fmt);
		vsnprintf(msg, (size_t)n_ + 1, fmt, ap);
		va_end(ap);
		ibemu_buf_puts(&b, msg);
		free(msg);
	}
	ibemu_buf_puts(&b, ", expected ");
	expect_text(&b, k);
	ibemu_diag_error(d, &n->loc, "%s", b.err ? "out of memory" : b.data);
	ibemu_buf_fini(&b);
	return -EINVAL;
}

static int out_of_range(struct ibemu_diag *d, const struct ibemu__ynode *n,
			const struct ibemu__yaml_key *k)
{
	struct ibemu_buf b;

	ibemu_buf_init(&b);
	format_bound(&b, k, k->min);
	ibemu_buf_puts(&b, "..");
	format_bound(&b, k, k->max);
	ibemu_diag_error(d, &n->loc, "%s %s is out of range, expected %s%s%s",
			 k->name, n->str, b.err ? "?" : b.data,
			 k->why ? ": " : "", k->why ? k->why : "");
	ibemu_buf_fini(&b);
	return -EINVAL;
}

/* Checks 'v' against the range, the choices and the multiple of 'k'. */
static int check_number(const struct ibemu__yaml_key *k,
			const struct ibemu__ynode *n, uint64_t v,
			struct ibemu_diag *d)
{
	const unsigned *c;

	if (k->choices) {
		for (c = k->choices; *c; c++)
			if (v == *c)
				return 0;
		return bad_value(d, n, k, "bad %s %s", k->name, n->str);
	}
	if (v < k->min || v > k->max)
		return out_of_range(d, n, k);
	if (k->multiple && v % k->multiple)
		return ibemu_diag_error(
			d, &n->loc,
			"%s %s is not whole credits, expected a "
			"multiple of %u bytes",
			k->name, n->str, k->multiple);
	return 0;
}

static int parse_unit_value(const struct ibemu__yaml_key *k,
			    const struct ibemu__ynode *n, uint64_t *v,
			    struct ibemu_diag *d)
{
	static const char *const base[] = {
		[IBEMU__YT_DURATION] = "picoseconds",
		[IBEMU__YT_LENGTH] = "millimetres",
		[IBEMU__YT_SIZE] = "bytes",
	};
	int ret;

	if (k->type == IBEMU__YT_DURATION)
		ret = ibemu__yaml_parse_duration(n->str, v);
	else if (k->type == IBEMU__YT_LENGTH)
		ret = ibemu__yaml_parse_length(n->str, v);
	else
		ret = ibemu__yaml_parse_size(n->str, v);
	switch (ret) {
	case 0:
		return check_number(k, n, *v, d);
	case -ERANGE:
		return out_of_range(d, n, k);
	case -EDOM:
		return bad_value(d, n, k, "bad %s '%s': a number needs a unit",
				 k->name, n->str);
	case -ENOTSUP:
		return bad_value(d, n, k,
				 "bad %s '%s': not a whole number of %s",
				 k->name, n->str, base[k->type]);
	default:
		return bad_value(d, n, k, "bad %s '%s'", k->name, n->str);
	}
}

static int parse_guid(const struct ibemu__yaml_key *k,
		      const struct ibemu__ynode *n, uint64_t *v,
		      struct ibemu_diag *d)
{
	int ret;

	if (n->str[0] != '0' || (n->str[1] != 'x' && n->str[1] != 'X'))
		return bad_value(d, n, k, "bad %s '%s'", k->name, n->str);
	ret = ibemu__yaml_parse_uint(n->str, v);
	if (ret == -ERANGE)
		return bad_value(d, n, k, "%s %s is longer than 64 bits",
				 k->name, n->str);
	if (ret)
		return bad_value(d, n, k, "bad %s '%s'", k->name, n->str);
	if (!*v)
		return ibemu_diag_error(
			d, &n->loc,
			"%s %s is reserved, expected a non-zero "
			"GUID",
			k->name, n->str);
	return 0;
}

static int parse_endpoint(const struct ibemu__yaml_key *k,
			  const struct ibemu__ynode *n,
			  struct ibemu__yaml_val *v, struct ibemu_diag *d)
{
	const char *colon = strrchr(n->str, ':');
	const char *p;
	uint64_t port;
	char *name;

	if (!colon || !colon[1])
		return bad_value(d, n, k, "bad link endpoint '%s'", n->str);
	for (p = colon + 1; *p; p++)
		if (!is_digit(*p))
			break;
	if (*p || ibemu__yaml_parse_uint(colon + 1, &port))
		return bad_value(d, n, k, "bad link endpoint '%s'", n->str);
	name = strndup(n->str, (size_t)(colon - n->str));
	if (!name)
		return ibemu_diag_error(d, &n->loc, "out of memory");
	if (!ibemu_name_valid(name)) {
		free(name);
		return bad_value(d, n, k, "bad link endpoint '%s'", n->str);
	}
	v->buf = name;
	v->s = name;
	v->u = port;
	return 0;
}

static int parse_guids(const struct ibemu__yaml_key *k,
		       const struct ibemu__ynode *n, struct ibemu__yaml_val *v,
		       struct ibemu_diag *d)
{
	static const struct ibemu__yaml_key item = {
		.name = "port GUID",
		.type = IBEMU__YT_GUID,
	};
	size_t i;
	int ret;

	if (n->kind != IBEMU__Y_SEQ)
		return bad_value(d, n, k, "%s is %s", k->name,
				 ibemu__ynode_what(n));
	v->guids = calloc(n->nkids + 1, sizeof(*v->guids));
	if (!v->guids)
		return ibemu_diag_error(d, &n->loc, "out of memory");
	for (i = 0; i < n->nkids; i++) {
		const struct ibemu__ynode *g = n->kids[i];

		if (g->kind != IBEMU__Y_SCALAR || ibemu__ynode_is_null(g))
			return bad_value(d, g, &item, "port GUID is %s",
					 ibemu__ynode_what(g));
		ret = parse_guid(&item, g, &v->guids[i], d);
		if (ret)
			return ret;
	}
	v->u = n->nkids;
	return 0;
}

static int parse_cc_entry(const struct ibemu__yaml_key *k,
			  const struct ibemu__ynode *n, uint64_t *v,
			  struct ibemu_diag *d)
{
	struct ibemu_cc_entry e;

	if (n->kind != IBEMU__Y_SCALAR || ibemu__ynode_is_null(n))
		return bad_value(d, n, k, "%s is %s", k->name,
				 ibemu__ynode_what(n));
	if (ibemu_cc_entry_parse(n->str, &e))
		return bad_value(d, n, k, "bad %s '%s'", k->name, n->str);
	*v = ibemu_cc_entry_bits(e);
	return 0;
}

/* "all", or port numbers: bits of a 256-bit mask (bit N, port N). */
static int parse_ports(const struct ibemu__yaml_key *k,
		       const struct ibemu__ynode *n, struct ibemu__yaml_val *v,
		       struct ibemu_diag *d)
{
	static const struct ibemu__yaml_key item = {
		.name = "port",
		.type = IBEMU__YT_INT,
		.max = 255,
	};
	uint64_t port;
	size_t i;
	int ret;

	if (n->kind == IBEMU__Y_SCALAR && !strcmp(n->str, "all")) {
		memset(v->mask, 0xff, sizeof(v->mask));
		return 0;
	}
	if (n->kind != IBEMU__Y_SEQ)
		return bad_value(d, n, k, "%s is %s%s%s%s", k->name,
				 ibemu__ynode_what(n),
				 n->kind == IBEMU__Y_SCALAR ? " '" : "",
				 n->kind == IBEMU__Y_SCALAR ? n->str : "",
				 n->kind == IBEMU__Y_SCALAR ? "'" : "");
	for (i = 0; i < n->nkids; i++) {
		const struct ibemu__ynode *p = n->kids[i];
		struct ibemu__yaml_val pv = {0};

		ret = ibemu__yaml_value_parse(&item, p, &pv, d);
		if (ret)
			return ret;
		port = pv.u;
		v->mask[sizeof(v->mask) - 1 - port / 8] |=
			(uint8_t)(1u << (port % 8));
	}
	return 0;
}

/* A CCT: entries in a sequence, or the short form (yaml_cc.c reads it). */
static int parse_cct(const struct ibemu__yaml_key *k,
		     const struct ibemu__ynode *n, struct ibemu__yaml_val *v,
		     struct ibemu_diag *d)
{
	static const struct ibemu__yaml_key item = {
		.name = "CCT entry",
		.type = IBEMU__YT_CC_ENTRY,
	};
	size_t i;
	int ret;

	if (n->kind == IBEMU__Y_MAP)
		return 0;
	if (n->kind != IBEMU__Y_SEQ)
		return bad_value(d, n, k, "%s is %s", k->name,
				 ibemu__ynode_what(n));
	if (n->nkids > IBEMU_CC_POLICY_CCT_MAX)
		return ibemu_diag_error(d, &n->loc,
					"%s has %zu entries, expected at most "
					"%u: OpenSM keeps at most 128",
					k->name, n->nkids,
					IBEMU_CC_POLICY_CCT_MAX);
	v->guids = calloc(n->nkids + 1, sizeof(*v->guids));
	if (!v->guids)
		return ibemu_diag_error(d, &n->loc, "out of memory");
	for (i = 0; i < n->nkids; i++) {
		ret = parse_cc_entry(&item, n->kids[i], &v->guids[i], d);
		if (ret)
			return ret;
	}
	v->u = n->nkids;
	return 0;
}

int ibemu__yaml_value_parse(const struct ibemu__yaml_key *k,
			    const struct ibemu__ynode *n,
			    struct ibemu__yaml_val *v, struct ibemu_diag *d)
{
	enum ibemu_speed speed;
	enum ibemu_hca_kind kind;
	uint8_t lanes;
	int ret;

	v->node = n;
	switch (k->type) {
	case IBEMU__YT_SEQ:
	case IBEMU__YT_MAP:
		if (ibemu__ynode_is_null(n))
			return 0;
		if (n->kind !=
		    (k->type == IBEMU__YT_SEQ ? IBEMU__Y_SEQ : IBEMU__Y_MAP))
			return bad_value(d, n, k, "%s is %s", k->name,
					 ibemu__ynode_what(n));
		return 0;
	case IBEMU__YT_GUIDS:
		return parse_guids(k, n, v, d);
	case IBEMU__YT_PORTS:
		return parse_ports(k, n, v, d);
	case IBEMU__YT_CCT:
		return parse_cct(k, n, v, d);
	case IBEMU__YT_CC_ENTRY:
		return parse_cc_entry(k, n, &v->u, d);
	default:
		break;
	}
	/* Everything else is one scalar. */
	if (n->kind != IBEMU__Y_SCALAR || ibemu__ynode_is_null(n))
		return bad_value(d, n, k, "%s is %s", k->name,
				 ibemu__ynode_what(n));
	if (strlen(n->str) != n->len)
		return bad_value(d, n, k, "%s holds a NUL character", k->name);
	switch (k->type) {
	case IBEMU__YT_INT:
		ret = ibemu__yaml_parse_uint(n->str, &v->u);
		if (ret == -ERANGE)
			return out_of_range(d, n, k);
		if (ret)
			return bad_value(d, n, k, "bad %s '%s'", k->name,
					 n->str);
		return check_number(k, n, v->u, d);
	case IBEMU__YT_GUID:
		return parse_guid(k, n, &v->u, d);
	case IBEMU__YT_STR:
		if (k->max && n->len > k->max)
			return ibemu_diag_error(
				d, &n->loc,
				"%s is %zu bytes long, expected "
				"at most %" PRIu64 " bytes",
				k->name, n->len, k->max);
		v->s = n->str;
		return 0;
	case IBEMU__YT_NAME:
		if (!ibemu_name_valid(n->str))
			return bad_value(d, n, k, "bad %s '%s'", k->name,
					 n->str);
		v->s = n->str;
		return 0;
	case IBEMU__YT_DURATION:
	case IBEMU__YT_LENGTH:
	case IBEMU__YT_SIZE:
		return parse_unit_value(k, n, &v->u, d);
	case IBEMU__YT_WIDTH:
		if (ibemu_width_parse(n->str, &lanes))
			return bad_value(d, n, k, "bad %s '%s'", k->name,
					 n->str);
		v->u = lanes;
		return 0;
	case IBEMU__YT_SPEED:
		if (ibemu_speed_parse(n->str, &speed))
			return bad_value(d, n, k, "bad %s '%s'", k->name,
					 n->str);
		v->u = (uint64_t)speed;
		return 0;
	case IBEMU__YT_HCA_MODEL:
		if (ibemu_hca_kind_parse(n->str, &kind))
			return bad_value(d, n, k, "bad %s '%s'", k->name,
					 n->str);
		v->u = (uint64_t)kind;
		return 0;
	case IBEMU__YT_ENDPOINT:
		return parse_endpoint(k, n, v, d);
	case IBEMU__YT_BOOL:
		if (!n->plain ||
		    (strcmp(n->str, "true") && strcmp(n->str, "false")))
			return bad_value(d, n, k, "bad %s '%s'", k->name,
					 n->str);
		v->u = !strcmp(n->str, "true");
		return 0;
	default:
		IBEMU_BUG_ON(1);
		return -EINVAL;
	}
}

static int find_key(const struct ibemu__yaml_section *s,
		    const struct ibemu__ynode *key)
{
	size_t i;

	for (i = 0; i < s->nkeys; i++)
		if (s->keys[i].name && !strcmp(s->keys[i].name, key->str) &&
		    strlen(key->str) == key->len)
			return (int)i;
	return -1;
}

static int unknown_key(const struct ibemu__yaml_section *s,
		       const struct ibemu__ynode *key, struct ibemu_diag *d)
{
	struct ibemu_buf b;
	size_t i;
	int first = 1;

	ibemu_buf_init(&b);
	for (i = 0; i < s->nkeys; i++) {
		if (!s->keys[i].name)
			continue;
		ibemu_buf_printf(&b, "%s%s", first ? "" : ", ",
				 s->keys[i].name);
		first = 0;
	}
	if (key->kind != IBEMU__Y_SCALAR)
		ibemu_diag_error(
			d, &key->loc, "a key that is %s %s, expected one of %s",
			ibemu__ynode_what(key), s->where, b.err ? "?" : b.data);
	else
		ibemu_diag_error(d, &key->loc,
				 "unknown key '%s' %s, expected one of %s",
				 key->str, s->where, b.err ? "?" : b.data);
	ibemu_buf_fini(&b);
	return -EINVAL;
}

static int same_key(const struct ibemu__ynode *a, const struct ibemu__ynode *b)
{
	return a->kind == IBEMU__Y_SCALAR && b->kind == IBEMU__Y_SCALAR &&
	       a->len == b->len && !memcmp(a->str, b->str, a->len);
}

int ibemu__yaml_map_parse(const struct ibemu__ynode *map,
			  enum ibemu__yaml_section_id id,
			  struct ibemu__yaml_val *vals, struct ibemu_diag *d)
{
	const struct ibemu__yaml_section *s = ibemu__yaml_section(id);
	size_t i, j;
	int ret, k;

	IBEMU_BUG_ON(map->kind != IBEMU__Y_MAP);
	memset(vals, 0, s->nkeys * sizeof(*vals));
	for (i = 0; i + 1 < map->nkids; i += 2) {
		const struct ibemu__ynode *key = map->kids[i];

		if (key->kind != IBEMU__Y_SCALAR)
			return unknown_key(s, key, d);
		for (j = 0; j < i; j += 2)
			if (same_key(map->kids[j], key))
				return ibemu_diag_error(
					d, &key->loc,
					"duplicate key '%s' (first given at "
					"%u:%u), expected each key once",
					key->str, map->kids[j]->loc.line,
					map->kids[j]->loc.col);
		k = find_key(s, key);
		if (k < 0) {
			if (s->open)
				continue;
			return unknown_key(s, key, d);
		}
		vals[k].key = key;
		ret = ibemu__yaml_value_parse(&s->keys[k], map->kids[i + 1],
					      &vals[k], d);
		if (ret)
			return ret;
	}
	for (i = 0; i < s->nkeys; i++) {
		const struct ibemu__yaml_key *key = &s->keys[i];

		if (key->name && (key->flags & IBEMU__YAML_REQUIRED) &&
		    !vals[i].node)
			return ibemu_diag_error(d, &map->loc,
						"missing key '%s' %s, expected "
						"%s",
						key->name, s->where, key->help);
	}
	return 0;
}

void ibemu__yaml_vals_fini(struct ibemu__yaml_val *vals, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(vals[i].buf);
		free(vals[i].guids);
		vals[i].buf = NULL;
		vals[i].guids = NULL;
	}
}
