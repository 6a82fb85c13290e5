/* SPDX-License-Identifier: MIT */
/*
 * Topology generators: fat trees, k-ary n-trees, tori and meshes,
 * dragonflies, rings and single switches. Each kind is one entry of a table
 * that declares its parameters once (name, default, range, help); the YAML
 * 'generate:' block and 'ibemu topo gen' both go through it, and help text
 * is printed from it.
 */
#ifndef IBEMU_GEN_H
#define IBEMU_GEN_H

#include <stddef.h>

#include "buf.h"
#include "diag.h"
#include "topo.h"

/* One "key: value" parameter as the user gave it, with where it was given. */
struct ibemu_gen_arg {
	const char *key;
	const char *value;
	struct ibemu_loc
		loc; /* of the value; loc.file NULL on a command line */
};

/*
 * Adds the nodes and links of generator 'kind' to 't', which must have its
 * defaults set already (links take the fabric's width, speed and length).
 * Unknown kinds or parameters, bad values and parameters that do not fit
 * the switch radix are reported to 'd' at their location ('kind_loc' for
 * the kind and for parameters that are missing). Returns 0 or -errno.
 */
int ibemu_gen_run(struct ibemu_topo *t, const char *kind,
		  const struct ibemu_loc *kind_loc,
		  const struct ibemu_gen_arg *args, size_t nargs,
		  struct ibemu_diag *d);

/* Appends the help of every kind (or only 'kind' when not NULL). */
void ibemu_gen_help(struct ibemu_buf *out, const char *kind);

/*
 * The table of kinds and their parameters as a command line sees it: the
 * name of kind 'i' (NULL past the last), and the name and help of its
 * parameter 'j' (NULL past the last). The strings are static.
 */
const char *ibemu_gen_kind_name(size_t i);
const char *ibemu_gen_param_name(size_t kind, size_t j, const char **help);

/* Returns 1 if 'kind' names a generator. */
int ibemu_gen_kind_exists(const char *kind);

#endif
