/* SPDX-License-Identifier: MIT */
/*
 * The topology YAML format: load a fabric from YAML (every key declared
 * once, with type, default, range and help) and write a topology back as
 * YAML that loads to the same fabric.
 */
#ifndef IBEMU_YAML_H
#define IBEMU_YAML_H

#include <stddef.h>

#include "buf.h"
#include "diag.h"
#include "topo.h"

/*
 * Parses YAML text 'data' of 'len' bytes, naming it 'file' in diagnostics.
 * On success *out is a finalized topology (warnings, such as a fabric that
 * is not connected, are in 'd'). On error returns -EINVAL (or -ENOMEM) and
 * d->error is "file:line:column: error: what was wrong and what was
 * expected". Never aborts on any input.
 */
int ibemu_yaml_load(const char *file, const char *data, size_t len,
		    struct ibemu_topo **out, struct ibemu_diag *d);

/* Reads the file at 'path' and loads it; as ibemu_yaml_load(). */
int ibemu_yaml_load_file(const char *path, struct ibemu_topo **out,
			 struct ibemu_diag *d);

/*
 * Appends 't' as topology YAML: 'name', the 'defaults' block, then switches,
 * hcas and links, each on one line in flow style, leaving out every value
 * equal to its default or to what ibemu would derive (GUIDs derived from
 * names, descriptions equal to names).
 */
void ibemu_yaml_emit(const struct ibemu_topo *t, struct ibemu_buf *out);

#endif
