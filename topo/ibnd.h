/* SPDX-License-Identifier: MIT */
/*
 * The ibnetdiscover topology format, as ibnetdiscover prints it and as ibsim
 * reads it: node records ("Switch 36 \"S-...\"", "Ca 2 \"H-...\"") followed by
 * their connected ports ("[1] \"peer\"[3]").
 */
#ifndef IBEMU_IBND_H
#define IBEMU_IBND_H

#include <stddef.h>

#include "buf.h"
#include "diag.h"
#include "topo.h"

/*
 * Parses ibnetdiscover text 'data' (of 'len' bytes, not necessarily
 * NUL-terminated), naming it 'file' in diagnostics, into a new topology
 * named after the file (its base name without extension). The result is
 * finalized. Errors carry file:line:column. Returns 0 or -errno; on error
 * *out is untouched and d->error says why.
 */
int ibemu_ibnd_import(const char *file, const char *data, size_t len,
		      struct ibemu_topo **out, struct ibemu_diag *d);

/* Reads and parses the file at 'path'; as ibemu_ibnd_import(). */
int ibemu_ibnd_import_file(const char *path, struct ibemu_topo **out,
			   struct ibemu_diag *d);

/* Appends 't' (finalized) in ibnetdiscover format. */
void ibemu_ibnd_export(const struct ibemu_topo *t, struct ibemu_buf *out);

#endif
