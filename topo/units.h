/* SPDX-License-Identifier: MIT */
/*
 * Quantities written with units, as the topology format and the CLI accept
 * them: durations ("100ns", "1.5us", "2ms"), sizes ("4096", "64KiB").
 */
#ifndef IBEMU_UNITS_H
#define IBEMU_UNITS_H

#include <stdint.h>

/* Returns 0, or -EINVAL for text that is not a duration with a unit. */
int ibemu_parse_duration(const char *s, uint64_t *ps);
/* Returns 0, or -EINVAL for text that is not a size (bytes, KiB, MiB). */
int ibemu_parse_size(const char *s, uint64_t *bytes);

#endif
