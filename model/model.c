// SPDX-License-Identifier: MIT
/*
 * Registers the node models and the agents with a new engine: the one place
 * that knows every layer, so that none of them needs to know another.
 */
#include "model.h"

#include "agent.h"
#include "hca.h"
#include "node.h"
#include "switch.h"

static const struct ibemu_engine_classes fabric_classes = {
	.hca = &ibemu_hca_ops,
	.sw = &ibemu_switch_ops,
	.mgmt = &ibemu_agent_ops,
};

int ibemu_model_create(const struct ibemu_topo *t, struct ibemu_engine **out)
{
	return ibemu_engine_create(t, &fabric_classes, out);
}
