// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the two topology parsers: the same bytes go to the
 * YAML loader and to the ibnetdiscover importer. Bad input must never crash,
 * leak or abort; it must fail with a message, or load to a fabric whose
 * YAML, written out by the emitter, loads again.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ibnd.h"
#include "yaml.h"

#define BIG_FABRIC_LINKS 20000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A failure must explain itself; a success must hand back a fabric. */
static void check(int ret, const struct ibemu_topo *t,
		  const struct ibemu_diag *d)
{
	if (ret ? !d->error || t : d->error || !t)
		abort();
}

/* What the emitter writes of a fabric must load again. */
static void check_emit(const struct ibemu_topo *t)
{
	struct ibemu_topo *again = NULL;
	struct ibemu_diag d;
	struct ibemu_buf b;

	/*
	 * A few lines of generate: can make a million links, seconds of work
	 * under the sanitizers; the emit and load paths are those of small
	 * fabrics, so checking those is enough.
	 */
	if (t->nlinks > BIG_FABRIC_LINKS)
		return;
	ibemu_buf_init(&b);
	ibemu_yaml_emit(t, &b);
	if (b.err || !t->nnodes) {
		ibemu_buf_fini(&b);
		return;
	}
	ibemu_diag_init(&d);
	if (ibemu_yaml_load("emitted.yaml", b.data, b.len, &again, &d)) {
		fprintf(stderr, "emitted YAML does not load: %s\n%s", d.error,
			b.data);
		abort();
	}
	ibemu_topo_destroy(again);
	ibemu_diag_fini(&d);
	ibemu_buf_fini(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ibemu_topo *t = NULL;
	struct ibemu_diag d;
	int ret;

	ibemu_diag_init(&d);
	ret = ibemu_yaml_load("fuzz.yaml", (const char *)data, size, &t, &d);
	check(ret, t, &d);
	if (t)
		check_emit(t);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	t = NULL;
	ibemu_diag_init(&d);
	ret = ibemu_ibnd_import("fuzz.ibnd", (const char *)data, size, &t, &d);
	check(ret, t, &d);
	if (t)
		check_emit(t);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);
	return 0;
}
