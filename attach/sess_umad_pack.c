// SPDX-License-Identifier: MIT
/*
 * PACKs on port streams (proto/sess_proto.h): several SENDs and WAITs in
 * one message from a process, several RECVs in one message to it. Each
 * message costs both ends a socket buffer, a wake-up and a copy, about as
 * much as the daemon's handling of the MAD it carries; a sweep of a
 * 10,000-HCA subnet has half a million of them each way.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mad.h"
#include "sess.h"

/* The largest RECV packed: one MAD of 256 bytes (RMPP transfers go
 * alone). */
#define PACKED_MAX                                                       \
	(sizeof(struct ibemu_sess_hdr) + sizeof(struct ibemu_sess_mad) + \
	 IBEMU_MAD_LEN)

/* Why inner message at 'at' of a PACK of 'len' bytes is wrong, or NULL. */
static const char *inner_wrong(const uint8_t *p, size_t at, size_t len,
			       size_t *n)
{
	struct ibemu_sess_hdr h;

	if (len - at < sizeof(h))
		return "a message cut short";
	memcpy(&h, p + at, sizeof(h));
	*n = sizeof(h) + (size_t)h.len;
	if (h.len > len - at - sizeof(h))
		return "a message longer than what is left";
	if (*n % IBEMU_SESS_PACK_ALIGN)
		return "a message of a length not a multiple of 8";
	if (h.type != IBEMU_SESS_SEND && h.type != IBEMU_SESS_WAIT)
		return "a message other than SEND or WAIT";
	return NULL;
}

void ibemu__su_unpack(struct ibemu_sess_conn *c, const struct ibemu_sess_hdr *h,
		      const uint8_t *payload)
{
	const char *why = NULL;
	char msg[160];
	size_t at, n = 0;
	unsigned count = 0;

	/* The whole PACK is checked first: none of it or all of it runs. */
	for (at = 0; at < h->len && !why; at += n, count++)
		why = inner_wrong(payload, at, h->len, &n);
	if (!why && count < 2)
		why = "fewer than two messages";
	if (!why && h->len > IBEMU_SESS_PACK_MAX)
		why = "more bytes than a PACK holds";
	if (why) {
		snprintf(msg, sizeof(msg), "PACK of %u bytes with %s", h->len,
			 why);
		ibemu__sess_conn_close(c, msg);
		return;
	}
	/* It speaks PACKs: its RECVs go packed from now on. */
	c->packs = 1;
	for (at = 0; at < h->len && !c->closing; at += n) {
		inner_wrong(payload, at, h->len, &n);
		/* Each one is checked whole there, as if it came alone. */
		ibemu__sess_conn_handle(c, payload + at, n, NULL, 0);
	}
}

/* Whether queued message 'o' may travel in a PACK. */
static int packable(const struct ibemu_sess_out *o)
{
	struct ibemu_sess_hdr h;

	if (o->len > PACKED_MAX || o->len % IBEMU_SESS_PACK_ALIGN)
		return 0;
	memcpy(&h, o->msg, sizeof(h));
	return h.type == IBEMU_SESS_RECV;
}

unsigned ibemu__su_pack_out(const struct ibemu_sess_conn *c,
			    const struct ibemu_sess_out *o,
			    struct ibemu_sess_hdr *ph, struct iovec *iov,
			    unsigned max_iov, unsigned *niov)
{
	unsigned k = 0;
	size_t bytes = 0;

	*niov = 1;
	iov[0].iov_base = (void *)o->msg;
	iov[0].iov_len = o->len;
	if (!c->packs || max_iov < 3)
		return 1;
	while (o && k + 1 < max_iov && packable(o) &&
	       bytes + o->len <= IBEMU_SESS_PACK_MAX) {
		iov[k + 1].iov_base = (void *)o->msg;
		iov[k + 1].iov_len = o->len;
		bytes += o->len;
		k++;
		o = o->next;
	}
	if (k < 2)
		return 1; /* alone, as it is */
	*ph = (struct ibemu_sess_hdr){
		.magic = IBEMU_SESS_MAGIC,
		.version = IBEMU_SESS_VERSION,
		.type = IBEMU_SESS_PACK,
		.len = (uint32_t)bytes,
	};
	iov[0].iov_base = ph;
	iov[0].iov_len = sizeof(*ph);
	*niov = k + 1;
	return k;
}
