// SPDX-License-Identifier: MIT
/*
 * The program's clock functions, interposed (LD_PRELOAD): the monotonic
 * clocks (MONOTONIC, MONOTONIC_RAW, MONOTONIC_COARSE, BOOTTIME) count
 * the process's virtual time since the fabric started; the wall clocks
 * (REALTIME, REALTIME_COARSE, gettimeofday, time, timespec_get) are the
 * wall time at start plus the virtual time elapsed (vtime.c). Every read
 * costs its IBEMU_VTIME_COST_*. CPU-time clocks, CLOCK_TAI and the
 * alarms stay real, and so is everything in a process vtime.c leaves on
 * the wall clock.
 */
#include <sys/time.h>
#include <time.h>

#include "vtime_int.h"

static int is_monotonic(clockid_t id)
{
	return id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW ||
	       id == CLOCK_MONOTONIC_COARSE || id == CLOCK_BOOTTIME;
}

static int is_realtime(clockid_t id)
{
	return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE;
}

/* Virtual nanoseconds: monotonic, or on the wall clock's scale. */
static int64_t virtual_ns(int realtime, uint64_t cost_ps)
{
	int64_t ns = (int64_t)(ibemu__vtime_read_ps(cost_ps) / 1000);

	return realtime ? ns + ibemu__vtime_realtime_offset_ns() : ns;
}

static void to_timespec(int64_t ns, struct timespec *ts)
{
	ts->tv_sec = (time_t)(ns / 1000000000);
	ts->tv_nsec = (long)(ns % 1000000000);
}

IBEMU_VTIME_EXPORT int clock_gettime(clockid_t id, struct timespec *ts)
{
	if (!ibemu__vtime_on() || !(is_monotonic(id) || is_realtime(id)))
		return ibemu__vtime_real_clock_gettime(id, ts);
	to_timespec(virtual_ns(is_realtime(id), IBEMU_VTIME_COST_CLOCK_PS), ts);
	return 0;
}

IBEMU_VTIME_EXPORT int gettimeofday(struct timeval *restrict tv,
				    void *restrict tz)
{
	struct timespec ts;

	if (!ibemu__vtime_on()) {
		ibemu__vtime_real_clock_gettime(CLOCK_REALTIME, &ts);
	} else {
		to_timespec(virtual_ns(1, IBEMU_VTIME_COST_CLOCK_PS), &ts);
	}
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	/* The kernel's timezone is always UTC for glibc: zeros. */
	if (tz)
		*(struct timezone *)tz = (struct timezone){0, 0};
	return 0;
}

IBEMU_VTIME_EXPORT time_t time(time_t *t)
{
	struct timespec ts;

	if (!ibemu__vtime_on())
		ibemu__vtime_real_clock_gettime(CLOCK_REALTIME, &ts);
	else
		to_timespec(virtual_ns(1, IBEMU_VTIME_COST_TIME_PS), &ts);
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}

IBEMU_VTIME_EXPORT int timespec_get(struct timespec *ts, int base)
{
	if (base != TIME_UTC)
		return 0;
	return clock_gettime(CLOCK_REALTIME, ts) ? 0 : base;
}
