/* SPDX-License-Identifier: MIT */
/*
 * libyaml's own <yaml.h>. ibemu's topo/yaml.h has the same name and comes
 * first on the include path, so this header, found in topo/ through that
 * path, continues the search in the directories after it.
 */
#ifndef IBEMU_YAML_LIBYAML_H
#define IBEMU_YAML_LIBYAML_H

#include_next <yaml.h>

#endif
