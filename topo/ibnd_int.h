/* SPDX-License-Identifier: MIT */
/*
 * Private to the ibnetdiscover import: the records that ibnd_parse.c reads
 * from the text and ibnd_build.c turns into a topology, and the error
 * helpers both report with.
 */
#ifndef IBEMU_IBND_INT_H
#define IBEMU_IBND_INT_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "strmap.h"
#include "topo.h"
#include "util.h"

/* PortInfo LinkWidthEnabled bits (IBA 14.2.5.6): 1x, 4x, 8x, 12x, 2x. */
#define IBEMU__IBND_WIDTH_ALL 0x1fu

/* A node record as read, before it becomes a node. */
struct ibemu__ibnd_rec {
	enum ibemu_node_type type;
	unsigned nports;
	char *id;			    /* as written between the quotes */
	char *desc;			    /* NULL when the header gave none */
	uint64_t guid, sysguid, port0_guid; /* 0: not given */
	uint32_t vendor_id;
	uint16_t device_id;
	uint8_t wmask;	/* ibsim "width=" in force for its ports, or 0 */
	uint16_t smask; /* ibsim "speed=" in force, or 0 */
	unsigned line, guid_line;
	uint32_t *side_of; /* per port 0..nports: its port line, or NONE */
};

/* One port line: one end of a cable, as seen from record 'rec'. */
struct ibemu__ibnd_side {
	uint32_t rec;
	unsigned port;
	char *peer_id;
	uint32_t peer; /* record of 'peer_id', once resolved */
	unsigned peer_port;
	uint64_t guid, peer_guid; /* 0: not given */
	uint8_t wmask;		  /* 0: not given */
	uint16_t smask;
	unsigned line, peer_col, pport_col;
};

/* What key lines said; they describe the records that follow them. */
struct ibemu__ibnd_keys {
	/*
	 * ibsim treats switchguid= and caguid= as the GUID of the next node
	 * of that type and counts on from there; ibnetdiscover writes one
	 * before every record, which makes the two readings agree.
	 */
	uint64_t base[2]; /* [0] switches, [1] CAs */
	unsigned base_line[2];
	int has_base[2];
	uint64_t port0_guid; /* "switchguid=G(P)": P, for the next switch */
	uint64_t sysguid;
	int has_sysguid;
	long vendid, devid; /* -1 until given; they stay, as in ibsim */
	uint8_t wmask;
	uint16_t smask;
	unsigned unused_line; /* first key line no record used yet */
};

/* One import: the records and port lines read so far, and where it is. */
struct ibemu__ibnd_parser {
	const char *file;
	struct ibemu_diag *d;
	const char *line, *end; /* current line, without its line break */
	unsigned lineno;
	struct ibemu__ibnd_rec *recs;
	uint32_t nrecs, recs_cap;
	struct ibemu__ibnd_side *sides;
	uint32_t nsides, sides_cap;
	struct ibemu_strmap ids; /* id as written -> record */
	uint32_t cur;		 /* record that port lines belong to */
	struct ibemu__ibnd_keys k;
};

/* Character classes that ignore the locale, unlike <ctype.h>'s. */
static inline int ibemu__ibnd_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline int ibemu__ibnd_is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Sets up an empty parser; 'file' names the input in diagnostics. */
void ibemu__ibnd_parser_init(struct ibemu__ibnd_parser *ps, const char *file,
			     struct ibemu_diag *d);
/* Frees what the parser read; 'ps' itself belongs to the caller. */
void ibemu__ibnd_parser_fini(struct ibemu__ibnd_parser *ps);

/*
 * Reads every line of 'data' ('len' bytes) into records and port lines.
 * Returns 0 or -errno, with the first error in ps->d.
 */
int ibemu__ibnd_parse(struct ibemu__ibnd_parser *ps, const char *data,
		      size_t len);

/* Reports an error at a line read earlier; returns -EINVAL. */
int ibemu__ibnd_perr_at(struct ibemu__ibnd_parser *ps, unsigned line,
			unsigned col, const char *fmt, ...) IBEMU_PRINTF(4, 5);
/* Reports running out of memory; returns -ENOMEM. */
int ibemu__ibnd_oom(struct ibemu__ibnd_parser *ps);
/* A number read from the file, for messages; "N+" once it hit the cap. */
const char *ibemu__ibnd_num_text(unsigned v, char buf[16]);

#endif
