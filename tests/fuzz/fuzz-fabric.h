/* SPDX-License-Identifier: MIT */
/*
 * The small fabric the engine-level fuzz targets (fuzz-agent, fuzz-smi)
 * run on: two switches, three HCAs (one with two ports), every kind of
 * port an agent meets (cabled to a switch, to an HCA, uncabled).
 */
#ifndef IBEMU_FUZZ_FABRIC_H
#define IBEMU_FUZZ_FABRIC_H

#include "engine.h"
#include "topo.h"

/* Loaded once and kept: fuzz inputs must not pay for it. */
struct ibemu_topo *ibemu_fuzz_topo(void);

/* Attaches every HCA port of 'e' to an owner whose mad_recv reads every
 * byte handed up. */
void ibemu_fuzz_attach(struct ibemu_engine *e);

#endif
