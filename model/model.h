/* SPDX-License-Identifier: MIT */
/*
 * The composition layer: an engine (fabric/) with the node classes and the
 * management that make it an InfiniBand fabric: switches (switch/), HCAs
 * (hca/) and every node's agents (agent/). What the daemon, the tests and
 * the benchmarks create; the engine itself knows none of these.
 */
#ifndef IBEMU_MODEL_H
#define IBEMU_MODEL_H

#include "engine.h"

/*
 * As ibemu_engine_create() (same returns, same ownership: destroy it with
 * ibemu_engine_destroy()), with switch/, hca/ and agent/ registered.
 */
int ibemu_model_create(const struct ibemu_topo *t, struct ibemu_engine **out);

#endif
