// SPDX-License-Identifier: MIT
/*
 * ServiceRecords (IBA 15.2.5.14): a Set registers one, keyed by ServiceID,
 * ServiceGID and ServiceP_Key (a second Set of the same key replaces it),
 * a Delete removes it, Get and GetTable query them by ComponentMask. The
 * lease is not timed: a record stays until it is deleted or the SM stops.
 */
#include <stdlib.h>
#include <string.h>

#include "sa.h"

struct sm_service {
	uint8_t rec[SA_SERVICE_RECORD_LEN];
};

/*
 * ServiceID, ServiceGID, ServiceP_Key, reserved, ServiceLease, ServiceKey,
 * ServiceName, then ServiceData as 16 bytes, 8 words, 4 and 2 (a bit
 * each).
 */
static const uint16_t sr_widths[] = {
	64, 128, 16, 16, 32, 128, 512,	   /* 0-6 */
	8,  8,	 8,  8,	 8,  8,	  8,   8,  /* ServiceData8 */
	8,  8,	 8,  8,	 8,  8,	  8,   8,  /* ... */
	16, 16,	 16, 16, 16, 16,  16,  16, /* ServiceData16 */
	32, 32,	 32, 32,		   /* ServiceData32 */
	64, 64,				   /* ServiceData64 */
};
_Static_assert(sizeof(sr_widths) / sizeof(sr_widths[0]) == 37,
	       "ServiceRecord: 37 ComponentMask bits");
static const struct sa_fields sr_fields = {sr_widths, 37};

#define SR_SID	   0
#define SR_SGID	   1
#define SR_SPKEY   2
#define SR_KEY_LEN 26 /* ServiceID, ServiceGID, ServiceP_Key */

static struct sm_service *find(struct sm *sm, const uint8_t *rec)
{
	uint32_t i;

	for (i = 0; i < sm->nservices; i++)
		if (!memcmp(sm->services[i].rec, rec, SR_KEY_LEN))
			return &sm->services[i];
	return NULL;
}

static int has_key(const struct sa_req *req)
{
	uint64_t key = 1ull << SR_SID | 1ull << SR_SGID | 1ull << SR_SPKEY;

	return (req->comp_mask & key) == key;
}

static void reg(struct sm *sm, struct sa_req *req)
{
	struct sm_service *s, *grown;

	/* IBA 15.2.5.14: the key, and a GID of this subnet. */
	if (!has_key(req)) {
		req->status = SA_STATUS_INSUF_COMPS;
		return;
	}
	if (!sa_gid_lid(sm, req->rec + 8)) {
		req->status = SA_STATUS_INVALID_GID;
		return;
	}
	s = find(sm, req->rec);
	if (!s) {
		grown = realloc(sm->services,
				(sm->nservices + 1) * sizeof(*grown));
		if (!grown) {
			req->status = SA_STATUS_NO_RESOURCES;
			return;
		}
		sm->services = grown;
		s = &sm->services[sm->nservices++];
	}
	memcpy(s->rec, req->rec, SA_SERVICE_RECORD_LEN);
	sa_add(req, s->rec);
}

static void unreg(struct sm *sm, struct sa_req *req)
{
	struct sm_service *s;

	if (!has_key(req)) {
		req->status = SA_STATUS_INSUF_COMPS;
		return;
	}
	s = find(sm, req->rec);
	if (!s) {
		req->status = SA_STATUS_NO_RECORDS;
		return;
	}
	if (sa_add(req, s->rec))
		return;
	*s = sm->services[--sm->nservices];
}

void sa_service_records(struct sm *sm, struct sa_req *req)
{
	uint32_t i;

	req->rec_size = SA_SERVICE_RECORD_LEN;
	switch (req->method) {
	case IBEMU_MAD_METHOD_SET:
		reg(sm, req);
		break;
	case SA_METHOD_DELETE:
		unreg(sm, req);
		break;
	default:
		for (i = 0; i < sm->nservices; i++)
			if (sa_add_if(req, &sr_fields, sm->services[i].rec))
				return;
	}
}

void sm_service_free(struct sm *sm)
{
	free(sm->services);
	sm->services = NULL;
	sm->nservices = 0;
}
