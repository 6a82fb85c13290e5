/* SPDX-License-Identifier: MIT */
/*
 * Private to the YAML loader and emitter: the parsed YAML tree, the one
 * table of keys per section (type, default, range, help) and the generic
 * code that checks a mapping against its table and converts the values
 * (integers, GUIDs, durations, lengths, sizes, widths, speeds).
 */
#ifndef IBEMU_YAML_KEYS_H
#define IBEMU_YAML_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "diag.h"
#include "topo.h"

/* A YAML node as the loader keeps it: just enough for the schema. */
enum ibemu__ynode_kind {
	IBEMU__Y_SCALAR,
	IBEMU__Y_SEQ,
	IBEMU__Y_MAP,
};

struct ibemu__ynode {
	enum ibemu__ynode_kind kind;
	struct ibemu_loc loc; /* where the node starts */
	char *str;	      /* scalar text, NUL-terminated */
	size_t len;	      /* scalar bytes (the text may hold a NUL) */
	int plain;	      /* scalar written without quotes */
	/* Sequence items, or mapping keys and values alternating. */
	struct ibemu__ynode **kids;
	size_t nkids, kids_cap;
};

/* Returns 1 for a plain scalar that YAML reads as null ("", "~", "null"). */
int ibemu__ynode_is_null(const struct ibemu__ynode *n);
/* "a scalar", "a sequence", "a mapping" or "null", for messages. */
const char *ibemu__ynode_what(const struct ibemu__ynode *n);

enum ibemu__yaml_type {
	IBEMU__YT_INT,	     /* decimal or 0x hex; 'choices' may restrict it */
	IBEMU__YT_GUID,	     /* 0x hex, non-zero, up to 64 bits */
	IBEMU__YT_GUIDS,     /* sequence of GUIDs */
	IBEMU__YT_STR,	     /* any scalar; 'max' bounds its bytes */
	IBEMU__YT_NAME,	     /* a node or fabric name */
	IBEMU__YT_DURATION,  /* to picoseconds */
	IBEMU__YT_LENGTH,    /* to millimetres */
	IBEMU__YT_SIZE,	     /* to bytes */
	IBEMU__YT_WIDTH,     /* to lanes */
	IBEMU__YT_SPEED,     /* to enum ibemu_speed */
	IBEMU__YT_HCA_MODEL, /* to enum ibemu_hca_kind */
	IBEMU__YT_ENDPOINT,  /* NODE:PORT, checked against the model later */
	IBEMU__YT_BOOL,	     /* true or false */
	IBEMU__YT_PORTS,     /* "all", or a sequence of port numbers 0..255 */
	IBEMU__YT_CC_ENTRY,  /* "shift:multiplier", to its 16-bit wire form */
	IBEMU__YT_CCT,	     /* CC_ENTRYs in a sequence, or a mapping */
	IBEMU__YT_SEQ,	     /* a section: sequence, null for empty */
	IBEMU__YT_MAP,	     /* a section: mapping, null for empty */
};

#define IBEMU__YAML_REQUIRED 0x1u /* must be given */
#define IBEMU__YAML_HEX	     0x2u /* print its range in hex */
/* The default is derived from other values; 'def' describes how. */
#define IBEMU__YAML_DERIVED 0x4u

struct ibemu__yaml_key {
	const char *name; /* NULL: not a key of this section */
	enum ibemu__yaml_type type;
	unsigned flags;
	uint64_t min, max;	 /* value range, or bytes for strings */
	const unsigned *choices; /* 0-terminated list of allowed values */
	uint32_t multiple;	 /* value must be a multiple of this */
	const char *def;	 /* the default, as documented */
	const char *help;
	const char *why; /* why the range is what it is; NULL if obvious */
};

enum ibemu__yaml_section_id {
	IBEMU__YS_TOP,
	IBEMU__YS_DEFAULTS,
	IBEMU__YS_SWITCH,
	IBEMU__YS_HCA,
	IBEMU__YS_LINK,
	IBEMU__YS_GENERATE,
	IBEMU__YS_CC,
	IBEMU__YS_CC_SWITCH,
	IBEMU__YS_CC_CA,
	IBEMU__YS_CC_SL,
	IBEMU__YS_CC_CCT,
	IBEMU__YS_HCA_TUNING,
	IBEMU__YS_COUNT
};

struct ibemu__yaml_section {
	const char *where; /* for messages: "in a switch" */
	const struct ibemu__yaml_key *keys;
	size_t nkeys;
	int open; /* keys outside the table are allowed (generator params) */
};

const struct ibemu__yaml_section *
ibemu__yaml_section(enum ibemu__yaml_section_id id);

/* Key indices of each section's table. */
enum {
	IBEMU__K_TOP_NAME,
	IBEMU__K_TOP_DEFAULTS,
	IBEMU__K_TOP_SWITCHES,
	IBEMU__K_TOP_HCAS,
	IBEMU__K_TOP_LINKS,
	IBEMU__K_TOP_GENERATE,
	IBEMU__K_TOP_CC,
	IBEMU__K_TOP_HCA_TUNING,
	IBEMU__K_TOP_COUNT
};
enum {
	IBEMU__K_DEF_MTU,
	IBEMU__K_DEF_VLS,
	IBEMU__K_DEF_WIDTH,
	IBEMU__K_DEF_SPEED,
	IBEMU__K_DEF_CABLE_LENGTH,
	IBEMU__K_DEF_BUFFER_PER_VL,
	IBEMU__K_DEF_ROUTING_LATENCY,
	IBEMU__K_DEF_HCA_MODEL,
	IBEMU__K_DEF_COUNT
};
/* Switches and HCAs share one index space; each leaves some keys out. */
enum {
	IBEMU__K_NODE_NAME,
	IBEMU__K_NODE_PORTS,
	IBEMU__K_NODE_DESCRIPTION,
	IBEMU__K_NODE_GUID,
	IBEMU__K_NODE_PORT_GUIDS,
	IBEMU__K_NODE_SYSIMAGE_GUID,
	IBEMU__K_NODE_VENDOR_ID,
	IBEMU__K_NODE_DEVICE_ID,
	IBEMU__K_NODE_VLS,
	IBEMU__K_NODE_BUFFER_PER_VL,
	IBEMU__K_NODE_ROUTING_LATENCY,
	IBEMU__K_NODE_HCA_MODEL,
	IBEMU__K_NODE_IP,
	IBEMU__K_NODE_COUNT
};
enum {
	IBEMU__K_LINK_A,
	IBEMU__K_LINK_B,
	IBEMU__K_LINK_WIDTH,
	IBEMU__K_LINK_SPEED,
	IBEMU__K_LINK_CABLE_LENGTH,
	IBEMU__K_LINK_LATENCY,
	IBEMU__K_LINK_COUNT
};
enum { IBEMU__K_GEN_KIND, IBEMU__K_GEN_COUNT };
/* congestion_control: and its blocks (yaml_cc.c). */
enum {
	IBEMU__K_CC_ENABLE,
	IBEMU__K_CC_KEY,
	IBEMU__K_CC_SWITCH,
	IBEMU__K_CC_CA,
	IBEMU__K_CC_CCT,
	IBEMU__K_CC_COUNT
};
enum {
	IBEMU__K_CCSW_CONTROL_MAP,
	IBEMU__K_CCSW_THRESHOLD,
	IBEMU__K_CCSW_MARKING_RATE,
	IBEMU__K_CCSW_PACKET_SIZE,
	IBEMU__K_CCSW_VICTIM_MASK,
	IBEMU__K_CCSW_CREDIT_MASK,
	IBEMU__K_CCSW_CS_THRESHOLD,
	IBEMU__K_CCSW_CS_RETURN_DELAY,
	IBEMU__K_CCSW_COUNT
};
/* A CA's keys and an SL's override share the indices of the four. */
enum {
	IBEMU__K_CCCA_CCTI_TIMER,
	IBEMU__K_CCCA_CCTI_INCREASE,
	IBEMU__K_CCCA_TRIGGER_THRESHOLD,
	IBEMU__K_CCCA_CCTI_MIN,
	IBEMU__K_CCCA_CONTROL,
	IBEMU__K_CCCA_CONTROL_MAP,
	IBEMU__K_CCCA_SLS,
	IBEMU__K_CCCA_SL,
	IBEMU__K_CCCA_COUNT
};
enum { IBEMU__K_CCT_ENTRIES, IBEMU__K_CCT_STEP, IBEMU__K_CCT_COUNT };
/* hca_tuning: (yaml_tuning.c). */
enum {
	IBEMU__K_TUNE_DOORBELL,
	IBEMU__K_TUNE_DMA_READ,
	IBEMU__K_TUNE_DMA_WRITE,
	IBEMU__K_TUNE_MAX_PAYLOAD,
	IBEMU__K_TUNE_MAX_READ_REQUEST,
	IBEMU__K_TUNE_COUNT
};

#define IBEMU__YAML_MAX_KEYS 13 /* the largest table */

/* One parsed value; 'node' is NULL when the key was not given. */
struct ibemu__yaml_val {
	const struct ibemu__ynode *key;
	const struct ibemu__ynode *node;
	uint64_t u;	  /* numbers, GUIDs, widths, speeds, endpoint ports */
	const char *s;	  /* strings, names, endpoint node names */
	char *buf;	  /* owned storage behind 's', if any */
	uint64_t *guids;  /* GUIDS, CCT entries: 'u' of them, owned */
	uint8_t mask[32]; /* PORTS: bit N of the big-endian number, port N */
};

/*
 * Checks mapping 'map' against section 'id': every key a scalar given once
 * and known (unless the section is open), every value of its type and in
 * range, required keys present. Fills vals[i] for key i of the table.
 * Returns 0, or -EINVAL with the error in 'd'. Free with
 * ibemu__yaml_vals_fini() either way.
 */
int ibemu__yaml_map_parse(const struct ibemu__ynode *map,
			  enum ibemu__yaml_section_id id,
			  struct ibemu__yaml_val *vals, struct ibemu_diag *d);
void ibemu__yaml_vals_fini(struct ibemu__yaml_val *vals, size_t n);

/*
 * Fills 'def' with the defaults the 'defaults:' table declares (a derived
 * default stays 0). Returns 0, or -EINVAL if the table cannot parse its
 * own text, which is a bug.
 */
int ibemu__yaml_defaults_init(struct ibemu_topo_defaults *def);

/* Converts one scalar to key 'k's type; as ibemu__yaml_map_parse(). */
int ibemu__yaml_value_parse(const struct ibemu__yaml_key *k,
			    const struct ibemu__ynode *n,
			    struct ibemu__yaml_val *v, struct ibemu_diag *d);

/*
 * Unit conversions. Each returns 0, -EINVAL for text that is not a value
 * of the kind, -ERANGE for one too large, -EDOM for a bare number where a
 * unit is required, or -ENOTSUP for a fraction of the smallest unit.
 */
int ibemu__yaml_parse_uint(const char *s, uint64_t *out);
int ibemu__yaml_parse_duration(const char *s, uint64_t *ps);
int ibemu__yaml_parse_length(const char *s, uint64_t *mm);
int ibemu__yaml_parse_size(const char *s, uint64_t *bytes);

/*
 * congestion_control: (yaml_cc.c). Applies the mapping 'map' to the
 * policy 't->cc' (which starts as ibemu's default); 0 or -EINVAL with the
 * error in 'd'. The emitter appends the block of what differs from the
 * default, nothing if nothing does.
 */
int ibemu__yaml_cc_apply(struct ibemu_topo *t, const struct ibemu__ynode *map,
			 struct ibemu_diag *d);
void ibemu__yaml_cc_emit(const struct ibemu_topo *t, struct ibemu_buf *b);
/* hca_tuning: (yaml_tuning.c). */
int ibemu__yaml_tuning_apply(struct ibemu_topo *t,
			     const struct ibemu__ynode *map,
			     struct ibemu_diag *d);
void ibemu__yaml_tuning_emit(const struct ibemu_topo *t, struct ibemu_buf *b);

/* Appends values in the units the parsers read back to the same number. */
void ibemu__yaml_format_duration(struct ibemu_buf *b, uint64_t ps);
void ibemu__yaml_format_length(struct ibemu_buf *b, uint64_t mm);
void ibemu__yaml_format_size(struct ibemu_buf *b, uint64_t bytes);

#endif
