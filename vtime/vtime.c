// SPDX-License-Identifier: MIT
/*
 * The program's virtual clock (docs/design.md §3): the process's virtual
 * time, as ibemu's libibverbs keeps it (ibemu_now_ps), and never behind
 * the fabric's time when `ibemu exec` ran the program
 * ($IBEMU_VTIME_START_PS) plus what the program's clock reads cost. A
 * process in which that library is not loaded keeps the wall clock:
 * nothing would move its virtual time. A umad-only process (OpenSM, the
 * diags, ibemu-sm) is one: its MAD timeouts are virtual already, and its
 * own timers wait on the wall clock (pthread_cond_timedwait), which
 * virtual reads would confuse. One that loads it later (an MPI program:
 * its transports are plugins, loaded in MPI_Init) turns virtual then,
 * from the wall clock's reading, TSC included: every thread that runs
 * already is made to trap it (threads.c).
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

#include "sess_proto.h"
#include "vtime_int.h"

typedef uint64_t now_fn(void);
typedef void compute_fn(uint64_t ps);
typedef int clock_gettime_fn(clockid_t id, struct timespec *ts);
typedef int sigaction_fn(int sig, const struct sigaction *act,
			 struct sigaction *old);

static int on;
/* Under `ibemu exec` without libibverbs yet: it says when it comes. */
static int pending;
/* A late start: the wall clock's MONOTONIC then, less the virtual time. */
static int64_t shift_ns;
static now_fn *verbs_now;
static compute_fn *verbs_compute;
static clock_gettime_fn *real_clock_gettime;
static sigaction_fn *real_sigaction;
/* The start plus every cost charged: the clock of a process whose
 * libraries do not move it yet (no device opened). */
static uint64_t own_ps;
/* The latest time returned, so that no thread ever sees time go back. */
static uint64_t last_ps;
static int64_t realtime_offset_ns;

/* A symbol of a library already loaded, global or not (RTLD_NOLOAD). */
static void *loaded_sym(const char *lib, const char *name)
{
	void *h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
	void *sym;

	if (!h)
		return NULL;
	sym = dlsym(h, name);
	dlclose(h);
	return sym;
}

/*
 * CLOCK_REALTIME is the wall time at start plus the virtual time elapsed
 * since, but offset from CLOCK_MONOTONIC by whole seconds: the
 * microseconds and seconds a program reads then differ across runs only
 * by that offset.
 */
static void realtime_start(void)
{
	struct timespec wall = {0};
	uint64_t now_s = (ibemu__vtime_read_ps(0) / 1000 + (uint64_t)shift_ns) /
			 1000000000u;

	real_clock_gettime(CLOCK_REALTIME, &wall);
	realtime_offset_ns =
		((int64_t)wall.tv_sec - (int64_t)now_s) * 1000000000;
}

/* The real functions: dlsym() alone, safe while another runtime (a
 * sanitizer's) initialises and calls through us. */
static void resolve_real(void)
{
	if (!__atomic_load_n(&real_clock_gettime, __ATOMIC_ACQUIRE))
		__atomic_store_n(
			&real_clock_gettime,
			(clock_gettime_fn *)dlsym(RTLD_NEXT, "clock_gettime"),
			__ATOMIC_RELEASE);
	if (!__atomic_load_n(&real_sigaction, __ATOMIC_ACQUIRE))
		__atomic_store_n(&real_sigaction,
				 (sigaction_fn *)dlsym(RTLD_NEXT, "sigaction"),
				 __ATOMIC_RELEASE);
}

/*
 * Once, from the constructor: until then every interposed function is
 * libc's (another library's constructor, a sanitizer's start), since
 * finding the libraries and /proc/cpuinfo allocates.
 */
void ibemu__vtime_init(void)
{
	const char *start = getenv(IBEMU_SESS_ENV_VTIME_START);

	resolve_real();
	verbs_now = (now_fn *)loaded_sym("libibverbs.so.1", "ibemu_now_ps");
	verbs_compute =
		(compute_fn *)loaded_sym("libibverbs.so.1", "ibemu_compute_ps");
	own_ps = start ? strtoull(start, NULL, 10) : 0;
	realtime_start();
	if (!verbs_now) {
		pending = getenv(IBEMU_SESS_ENV_SOCKET) != NULL;
		return;
	}
	ibemu__vtime_clocks_start();
	ibemu__vtime_tsc_start();
	__atomic_store_n(&on, 1, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void vtime_constructor(void)
{
	ibemu__vtime_init();
}

int ibemu__vtime_on(void)
{
	return __atomic_load_n(&on, __ATOMIC_ACQUIRE);
}

/* The later of the clock libibverbs keeps and our own. */
static uint64_t sources_ps(void)
{
	uint64_t t = __atomic_load_n(&own_ps, __ATOMIC_ACQUIRE), v;

	if (verbs_now && (v = verbs_now()) > t)
		t = v;
	return t;
}

static void raise_to(uint64_t *clock, uint64_t t)
{
	uint64_t cur = __atomic_load_n(clock, __ATOMIC_ACQUIRE);

	while (cur < t &&
	       !__atomic_compare_exchange_n(clock, &cur, t, 1, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE))
		;
}

uint64_t ibemu__vtime_read_ps(uint64_t cost_ps)
{
	uint64_t last = __atomic_load_n(&last_ps, __ATOMIC_ACQUIRE);
	uint64_t t = sources_ps();

	/*
	 * Nothing moved the clock since the last read (a program spinning
	 * on it): this read does, by its cost, as time spent computing. A
	 * read after a completion is free, so that a measurement around
	 * verbs calls gives the model's times.
	 */
	if (t <= last && cost_ps) {
		if (verbs_compute)
			verbs_compute(cost_ps);
		raise_to(&own_ps, last + cost_ps);
		t = sources_ps();
	}
	raise_to(&last_ps, t);
	return __atomic_load_n(&last_ps, __ATOMIC_ACQUIRE);
}

/*
 * libibverbs has come (a plugin brought it): the clocks turn virtual,
 * going on from the wall clock's MONOTONIC, so that no reading goes back,
 * and so does every thread's TSC (tsc.c, threads.c).
 */
static void start_late(now_fn *now, compute_fn *compute)
{
	struct timespec mono = {0};
	int64_t wall_ns, virt_ns;

	verbs_compute = compute;
	__atomic_store_n(&verbs_now, now, __ATOMIC_RELEASE);
	ibemu__vtime_clocks_start();
	ibemu__vtime_tsc_start_late();
	real_clock_gettime(CLOCK_MONOTONIC, &mono);
	wall_ns = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec;
	virt_ns = (int64_t)(sources_ps() / 1000);
	if (wall_ns > virt_ns)
		shift_ns = wall_ns - virt_ns;
	realtime_start();
	__atomic_store_n(&on, 1, __ATOMIC_RELEASE);
}

/*
 * Called by ibemu's libibverbs as it loads (its constructor), however it
 * is loaded. A process that had none when this library started turns
 * virtual here, once: in the constructor, where allocating and the
 * loader's own functions are safe (a clock read may come from a signal
 * handler). Before this library's constructor (libibverbs linked to the
 * program), nothing to do: the constructor finds it.
 */
IBEMU_VTIME_EXPORT void ibemu_vtime_verbs_loaded(now_fn *now,
						 compute_fn *compute)
{
	static int switched;

	if (!__atomic_load_n(&pending, __ATOMIC_ACQUIRE) ||
	    __atomic_exchange_n(&switched, 1, __ATOMIC_ACQ_REL))
		return;
	start_late(now, compute);
	__atomic_store_n(&pending, 0, __ATOMIC_RELEASE);
}

int64_t ibemu__vtime_shift_ns(void)
{
	return shift_ns;
}

int64_t ibemu__vtime_realtime_offset_ns(void)
{
	return realtime_offset_ns;
}

int ibemu__vtime_real_clock_gettime(clockid_t id, struct timespec *ts)
{
	resolve_real();
	return real_clock_gettime(id, ts);
}

int ibemu__vtime_real_sigaction(int sig, const struct sigaction *act,
				struct sigaction *old)
{
	resolve_real();
	return real_sigaction(sig, act, old);
}
