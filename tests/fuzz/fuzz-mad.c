// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the MAD codecs: the same bytes go to every decoder
 * of mad/ (each layout, the SMP framing that picks LID or DR by class, both
 * Notice forms). A decoder must refuse input shorter than its wire image
 * and otherwise decode to a struct that encodes and decodes to itself. The
 * bytes are also taken as a host struct: encoding must fail with -ERANGE
 * exactly when a value is too wide, and otherwise decode back to it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad.h"
#include "mad_cc.h"
#include "mad_pma.h"
#include "mad_sma.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

union host {
	uint64_t align;
	uint8_t b[2048];
};

static void fail(const struct ibemu_mad_layout *l, const char *what)
{
	fprintf(stderr, "%s: %s\n", l->name, what);
	abort();
}

/* decode -> encode -> decode gives the same struct and the same bytes. */
static void check_decoded(const struct ibemu_mad_layout *l, const void *a)
{
	uint8_t *wire = malloc(l->wire_len), *again = malloc(l->wire_len);
	union host b;

	if (!wire || !again)
		abort();
	if (ibemu_mad_layout_encode(l, a, wire, l->wire_len))
		fail(l, "a decoded struct does not encode");
	if (ibemu_mad_layout_decode(l, wire, l->wire_len, &b))
		fail(l, "an encoded struct does not decode");
	if (memcmp(a, &b, l->host_size))
		fail(l, "decode(encode(x)) != x");
	if (ibemu_mad_layout_encode(l, &b, again, l->wire_len) ||
	    memcmp(wire, again, l->wire_len))
		fail(l, "encoding is not stable");
	free(wire);
	free(again);
}

static void check_decode(const struct ibemu_mad_layout *l, const uint8_t *data,
			 size_t size)
{
	uint8_t padded[IBEMU_MAD_LEN] = {0};
	union host a;
	int ret;

	ret = ibemu_mad_layout_decode(l, data, size, &a);
	if (size < l->wire_len) {
		if (ret != -EINVAL)
			fail(l, "short input accepted");
		/* Still exercise the codec on what there is. */
		memcpy(padded, data, size);
		data = padded;
		if (ibemu_mad_layout_decode(l, data, l->wire_len, &a))
			fail(l, "padded input refused");
	} else if (ret) {
		fail(l, "input refused");
	}
	check_decoded(l, &a);
}

static int all_fit(const struct ibemu_mad_layout *l, const void *host)
{
	const struct ibemu_mad_field *f;
	unsigned i;

	for (f = l->fields; f < l->fields + l->nfields; f++)
		for (i = 0; i < f->count; i++)
			if (f->width < 64 &&
			    ibemu_mad_field_get(f, host, i) >> f->width)
				return 0;
	return 1;
}

static void check_encode(const struct ibemu_mad_layout *l, const uint8_t *data,
			 size_t size)
{
	const struct ibemu_mad_field *f;
	uint8_t wire[IBEMU_MAD_LEN];
	union host a, b;
	unsigned i;
	int ret;

	memset(&a, 0, sizeof(a));
	memcpy(&a, data, size < l->host_size ? size : l->host_size);
	ret = ibemu_mad_layout_encode(l, &a, wire, l->wire_len);
	if (ret == -ERANGE && !all_fit(l, &a))
		return;
	if (ret || !all_fit(l, &a))
		fail(l, "encode result does not match the values");
	if (ibemu_mad_layout_decode(l, wire, l->wire_len, &b))
		fail(l, "an encoded struct does not decode");
	for (f = l->fields; f < l->fields + l->nfields; f++)
		for (i = 0; i < f->count; i++)
			if (ibemu_mad_field_get(f, &a, i) !=
			    ibemu_mad_field_get(f, &b, i))
				fail(l, "a field changed on the way");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct ibemu_mad_layout *const *l;
	struct ibemu_mad_notice n;
	struct ibemu_mad_smp smp;
	uint8_t wire[IBEMU_MAD_LEN];

	for (l = ibemu_mad_layouts; *l; l++) {
		if ((*l)->host_size > sizeof(union host))
			abort();
		check_decode(*l, data, size);
		check_encode(*l, data, size);
	}

	if (!ibemu_mad_smp_decode(data, size, &smp)) {
		if (ibemu_mad_smp_encode(&smp, wire, sizeof(wire)))
			abort();
		if (smp.hdr.mgmt_class == IBEMU_MAD_CLASS_SUBN_DR &&
		    memcmp(wire + 128, data + 128, 128))
			abort(); /* the DR paths are copied verbatim */
	} else if (size >= IBEMU_MAD_LEN &&
		   (data[1] == IBEMU_MAD_CLASS_SUBN_LID ||
		    data[1] == IBEMU_MAD_CLASS_SUBN_DR)) {
		abort();
	}
	if (!ibemu_mad_notice_decode(data, size, &n) &&
	    ibemu_mad_notice_encode(&n, wire,
				    size < sizeof(wire) ? size : sizeof(wire)))
		abort();
	if (size && ibemu_mad_congestion_log_type(data, size) != data[0])
		abort();
	return 0;
}
