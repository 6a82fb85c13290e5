/* SPDX-License-Identifier: MIT */
/*
 * Subnet Administration (IBA 15), answered by ibemu-sm from what its
 * sweeps found: the dispatch and response building (sa.c), the records of
 * nodes, ports, links, switches and the SM (sa_records.c), PathRecords
 * (sa_path.c), multicast groups and their MFTs (sa_mcast.c) and
 * ServiceRecords (sa_service.c). Records are built whole in wire order,
 * then matched against the request's record by ComponentMask.
 */
#ifndef IBEMU_SM_SA_H
#define IBEMU_SM_SA_H

#include <stddef.h>
#include <stdint.h>

#include "sm.h"

/* SA methods (IBA 15.2.2) beyond those of mad_hdr.h. */
#define SA_METHOD_GET_TABLE	 0x12
#define SA_METHOD_GET_TABLE_RESP 0x92
#define SA_METHOD_DELETE	 0x15
#define SA_METHOD_DELETE_RESP	 0x95
#define SA_CLASS_VERSION	 2

/* SA attributes (IBA 15.2.5). */
#define SA_ATTR_NODE_RECORD	   0x0011
#define SA_ATTR_PORT_INFO_RECORD   0x0012
#define SA_ATTR_SWITCH_INFO_RECORD 0x0014
#define SA_ATTR_SM_INFO_RECORD	   0x0018
#define SA_ATTR_LINK_RECORD	   0x0020
#define SA_ATTR_SERVICE_RECORD	   0x0031
#define SA_ATTR_PATH_RECORD	   0x0035
#define SA_ATTR_MCMEMBER_RECORD	   0x0038

/* SA status, class-specific bits 8-15 of Status (IBA 15.2.1.2). */
#define SA_STATUS_NO_RESOURCES	   0x0100
#define SA_STATUS_REQ_INVALID	   0x0200
#define SA_STATUS_NO_RECORDS	   0x0300
#define SA_STATUS_TOO_MANY_RECORDS 0x0400
#define SA_STATUS_INVALID_GID	   0x0500
#define SA_STATUS_INSUF_COMPS	   0x0600

/* IBA 15.2.5: record sizes (AttributeOffset pads them to 8 bytes). */
#define SA_NODE_RECORD_LEN	  108
#define SA_PORT_INFO_RECORD_LEN	  68
#define SA_SWITCH_INFO_RECORD_LEN 24
#define SA_SM_INFO_RECORD_LEN	  25
#define SA_LINK_RECORD_LEN	  8
#define SA_SERVICE_RECORD_LEN	  176
#define SA_PATH_RECORD_LEN	  64
#define SA_MCMEMBER_RECORD_LEN	  52

/* The largest record ibemu-sm answers, padded. */
#define SA_RECORD_MAX 176

/* A request being answered, and the records of its response. */
struct sa_req {
	const uint8_t *mad; /* the request, 256 bytes at least */
	uint8_t method;
	uint16_t attr;
	uint32_t attr_mod;
	uint64_t comp_mask;
	uint64_t sm_key;
	const uint8_t *rec; /* the request's record: SA data */
	size_t rec_len;	    /* bytes of it (IBEMU_SA_DATA_LEN at least) */
	uint16_t slid;	    /* the requester's LID */
	/* The response. */
	size_t rec_size; /* of one record, unpadded */
	uint8_t *buf;	 /* records, each padded to 8 bytes */
	size_t len, cap;
	unsigned nrec;
	uint16_t status; /* an SA error instead of records */
	uint8_t resp_method;
};

/*
 * A record's fields in order, as widths in bits: ComponentMask bit i
 * selects field i (IBA 15.2.1.1). 'n' fields, at most 64.
 */
struct sa_fields {
	const uint16_t *width;
	unsigned n;
};

/* sa.c */
/* Registers the SA agent on the SM's port; 0 or -errno. */
int sm_sa_open(struct sm *sm);
void sm_sa_close(struct sm *sm);
/* Answers the SA MAD 'mad' of 'len' bytes from LID 'slid' (umad addr). */
void sm_sa_recv(struct sm *sm, const void *umad_buf, const uint8_t *mad,
		size_t len);
/* Whether 'rec' matches the request's record in every selected field. */
int sa_match(const struct sa_fields *f, uint64_t mask, const uint8_t *rec,
	     const uint8_t *req);
/* Appends a copy of record 'rec' (req->rec_size bytes); 0 or -ENOMEM. */
int sa_add(struct sa_req *req, const uint8_t *rec);
/* Appends 'rec' if it matches the request by ComponentMask. */
int sa_add_if(struct sa_req *req, const struct sa_fields *f,
	      const uint8_t *rec);
/* Big-endian bits [off, off + width) of 'p' (width <= 64). */
uint64_t sa_bits(const uint8_t *p, unsigned off, unsigned width);
void sa_set_bits(uint8_t *p, unsigned off, unsigned width, uint64_t v);

/* The port GID (subnet prefix and port GUID) of the port of LID 'lid'. */
int sa_port_gid(const struct sm *sm, uint16_t lid, uint8_t gid[16]);
/* The LID of the port of GID 'gid' (port GUID), or 0. */
uint16_t sa_gid_lid(const struct sm *sm, const uint8_t gid[16]);
/* The node and port of LID 'lid' (port 0 for a switch); 0 or -ENOENT. */
int sa_lid_port(const struct sm *sm, uint16_t lid, uint32_t *node,
		unsigned *port);

/* sa_records.c: Get and GetTable of each. */
void sa_node_records(struct sm *sm, struct sa_req *req);
void sa_port_info_records(struct sm *sm, struct sa_req *req);
void sa_switch_info_records(struct sm *sm, struct sa_req *req);
void sa_link_records(struct sm *sm, struct sa_req *req);
void sa_sm_info_records(struct sm *sm, struct sa_req *req);

/* sa_path.c */
void sa_path_records(struct sm *sm, struct sa_req *req);
/* MTU (IBA enum) and rate (PathRecord enum) of that path; 0 or -errno. */
int sa_path_props(const struct sm *sm, uint16_t slid, uint16_t dlid,
		  uint8_t *mtu, uint8_t *rate, unsigned *hops);

/* sa_mcast.c */
void sa_mcmember_records(struct sm *sm, struct sa_req *req);
/* Programs the MFTs of every group anew (after a heavy sweep). */
void sm_mcast_program(struct sm *sm);
void sm_mcast_free(struct sm *sm);

/* sa_service.c */
void sa_service_records(struct sm *sm, struct sa_req *req);
void sm_service_free(struct sm *sm);

#endif
