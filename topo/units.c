// SPDX-License-Identifier: MIT
/* Public face of the unit parsers the YAML key table uses. */
#include "units.h"
#include "yaml_keys.h"

int ibemu_parse_duration(const char *s, uint64_t *ps)
{
	return ibemu__yaml_parse_duration(s, ps);
}

int ibemu_parse_size(const char *s, uint64_t *bytes)
{
	return ibemu__yaml_parse_size(s, bytes);
}
