// SPDX-License-Identifier: MIT
/* Growable arrays: the one growth rule the loaders and the model share. */
#include <errno.h>

#include "util.h"

int ibemu_array_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > UINT32_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	p = realloc(*arr, (size_t)ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}
