// SPDX-License-Identifier: MIT
/* Placeholder so the daemon library is not empty while it is written. */
#include "topo.h"
int ibemu__daemon_placeholder(void);
int ibemu__daemon_placeholder(void)
{
	return 0;
}
