// SPDX-License-Identifier: MIT
/*
 * What the process's clock did, for 'ibemu run --plot' (a timeline of the
 * ranks in virtual time): its leaps while it waited, the compute time it
 * declared, its sends (ibv_post_send) and its receives (polls that took
 * completions), as intervals of virtual time. Recorded only when the run
 * asks ($IBEMU_RUN_TRACE), in a bounded buffer, and written at exit to
 * "$IBEMU_RUN_TRACE.RANK", one line "KIND FROM_PS TO_PS" each (KIND: w,
 * c, s or r).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "sess_proto.h"
#include "verbs_int.h"

/* 65,536 intervals (1.5 MiB): beyond, the timeline ends early. */
#define TRACE_MAX 65536u

struct trace_rec {
	uint64_t from_ps, to_ps;
	uint32_t kind;
};

static struct trace_rec *recs;
static uint32_t nrecs;

static const char kind_letter[] = {
	[IBEMU_VERBS_TRACE_WAIT] = 'w',
	[IBEMU_VERBS_TRACE_COMPUTE] = 'c',
	[IBEMU_VERBS_TRACE_SEND] = 's',
	[IBEMU_VERBS_TRACE_RECV] = 'r',
};

__attribute__((constructor)) static void trace_start(void)
{
	if (getenv(IBEMU_SESS_ENV_TRACE) && getenv(IBEMU_SESS_ENV_RANK))
		recs = calloc(TRACE_MAX, sizeof(*recs));
}

void ibemu__verbs_trace(enum ibemu_verbs_trace kind, uint64_t from_ps,
			uint64_t to_ps)
{
	uint32_t i;

	if (!recs || to_ps <= from_ps)
		return;
	i = __atomic_fetch_add(&nrecs, 1, __ATOMIC_RELAXED);
	if (i < TRACE_MAX)
		recs[i] = (struct trace_rec){from_ps, to_ps, kind};
}

__attribute__((destructor)) static void trace_write(void)
{
	uint32_t i, n = __atomic_load_n(&nrecs, __ATOMIC_ACQUIRE);
	char path[4096];
	FILE *f;
	int fd;

	if (!recs)
		return;
	if (snprintf(path, sizeof(path), "%s.%s", getenv(IBEMU_SESS_ENV_TRACE),
		     getenv(IBEMU_SESS_ENV_RANK)) >= (int)sizeof(path))
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	for (i = 0; i < n && i < TRACE_MAX; i++)
		fprintf(f, "%c %llu %llu\n", kind_letter[recs[i].kind],
			(unsigned long long)recs[i].from_ps,
			(unsigned long long)recs[i].to_ps);
	fclose(f);
}
