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
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/time.h>
#include <time.h>

#include "vtime_int.h"

/*
 * Reads made by the C library, the dynamic loader (which times its
 * relocations with rdtsc) or a sanitizer's runtime (IBEMU_SANITIZE,
 * IBEMU_TSAN: its allocator's timing) are not the program's: virtual,
 * but free. (A sanitizer's interceptor also passes the program's own
 * clock_gettime on: free too, in a sanitized program.) Where their code
 * lies.
 */
#define MAX_SYSTEM 8
static struct {
	uintptr_t lo, hi;
} system_code[MAX_SYSTEM];
static int nsystem;

static const char *const system_libs[] = {
	"/libc.so.",	"/ld-linux-x86-64.so.", "/libasan.so.",
	"/libtsan.so.", "/libubsan.so.",
};

static int is_system_lib(const char *name)
{
	const char *base = strrchr(name, '/');

	for (size_t i = 0;
	     base && i < sizeof(system_libs) / sizeof(*system_libs); i++)
		if (!strncmp(base, system_libs[i], strlen(system_libs[i])))
			return 1;
	return 0;
}

/* The vDSO: its clock_gettime reads the real TSC (tsc.c). */
static uintptr_t vdso_lo, vdso_hi;

static void vdso_found(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			vdso_lo = info->dlpi_addr + ph->p_vaddr;
			vdso_hi = vdso_lo + ph->p_memsz;
		}
	}
}

static int find_system_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (info->dlpi_addr &&
	    (uintptr_t)info->dlpi_phdr - sizeof(ElfW(Ehdr)) ==
		    (uintptr_t)getauxval(AT_SYSINFO_EHDR)) {
		vdso_found(info);
		return 0;
	}
	if (!is_system_lib(info->dlpi_name))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && nsystem < MAX_SYSTEM; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		system_code[nsystem].lo = lo;
		system_code[nsystem++].hi = lo + ph->p_memsz;
	}
	return 0;
}

static void runtime_scan(void);

void ibemu__vtime_clocks_start(void)
{
	nsystem = 0;
	dl_iterate_phdr(find_system_cb, NULL);
	runtime_scan();
}

int ibemu__vtime_vdso_code(uintptr_t pc)
{
	return pc >= vdso_lo && pc < vdso_hi;
}

int ibemu__vtime_system_code(uintptr_t pc)
{
	for (int i = 0; i < nsystem; i++)
		if (pc >= system_code[i].lo && pc < system_code[i].hi)
			return 1;
	return 0;
}

/*
 * Communication runtimes loaded into the program (Open MPI's libraries
 * and components, PMIx, libevent, UCX, hwloc, libfabric): their clock
 * reads stay real. Their timers (a retransmission, a connection's retry,
 * an event loop's timeout) wait in the kernel, on the wall clock, which
 * the virtual clock does not follow while the process waits. Found at
 * start and again when the loader has added objects (plugins come late).
 */
static const char *const runtime_libs[] = {
	"/libopen-pal.so", "/libopen-rte.so", "/libpmix.so", "/libevent",
	"/libucs.so",	   "/libuct",	      "/libucp.so",  "/libucm.so",
	"/libhwloc.so",	   "/libfabric.so",   "/mca_",	     "/libmca_common",
};

#define MAX_RUNTIME 128
struct code_ranges {
	int n;
	struct {
		uintptr_t lo, hi;
	} r[MAX_RUNTIME];
};
/* Two, so that a scan never writes the one a reader may be reading. */
static struct code_ranges runtime_sets[2];
static struct code_ranges *runtime_code;
static unsigned long long runtime_adds;
static unsigned runtime_reads;

static int is_runtime_lib(const char *name)
{
	const char *base = strrchr(name, '/');

	for (size_t i = 0;
	     base && i < sizeof(runtime_libs) / sizeof(*runtime_libs); i++)
		if (!strncmp(base, runtime_libs[i], strlen(runtime_libs[i])))
			return 1;
	return 0;
}

static int find_runtime_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct code_ranges *set = arg;

	(void)size;
	if (!is_runtime_lib(info->dlpi_name))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && set->n < MAX_RUNTIME; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		set->r[set->n].lo = info->dlpi_addr + ph->p_vaddr;
		set->r[set->n].hi = set->r[set->n].lo + ph->p_memsz;
		set->n++;
	}
	return 0;
}

static int adds_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	if (size >=
	    offsetof(struct dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds))
		*(unsigned long long *)arg = info->dlpi_adds;
	return 1;
}

/*
 * Scans the runtimes' code again if the loader added objects since; one
 * thread at a time (another one's scan is as good).
 */
static void runtime_scan(void)
{
	static int scanning;
	struct code_ranges *cur =
		__atomic_load_n(&runtime_code, __ATOMIC_ACQUIRE);
	struct code_ranges *next;
	unsigned long long adds = 0;

	dl_iterate_phdr(adds_cb, &adds);
	if (cur && adds == __atomic_load_n(&runtime_adds, __ATOMIC_RELAXED))
		return;
	if (__atomic_exchange_n(&scanning, 1, __ATOMIC_ACQ_REL))
		return;
	next = cur == &runtime_sets[0] ? &runtime_sets[1] : &runtime_sets[0];
	next->n = 0;
	dl_iterate_phdr(find_runtime_cb, next);
	__atomic_store_n(&runtime_adds, adds, __ATOMIC_RELAXED);
	__atomic_store_n(&runtime_code, next, __ATOMIC_RELEASE);
	__atomic_store_n(&scanning, 0, __ATOMIC_RELEASE);
}

int ibemu__vtime_runtime_code_seen(uintptr_t pc)
{
	const struct code_ranges *set =
		__atomic_load_n(&runtime_code, __ATOMIC_ACQUIRE);

	for (int i = 0; set && i < set->n; i++)
		if (pc >= set->r[i].lo && pc < set->r[i].hi)
			return 1;
	return 0;
}

int ibemu__vtime_runtime_code(uintptr_t pc)
{
	/* Now and then: most clock reads are the program's. */
	if (!(__atomic_add_fetch(&runtime_reads, 1, __ATOMIC_RELAXED) %
	      RUNTIME_LOOK_READS))
		runtime_scan();
	return ibemu__vtime_runtime_code_seen(pc);
}

/*
 * For the TSC's handler: an rdtsc neither in a runtime's code nor in the
 * system's may be in a runtime loaded since the last scan (a plugin):
 * scan if the loader added objects. The fault is synchronous, at an
 * rdtsc: dl_iterate_phdr's lock is the loader's recursive one, which a
 * thread holds only briefly, or is this thread's already.
 */
int ibemu__vtime_runtime_code_now(uintptr_t pc)
{
	if (ibemu__vtime_runtime_code_seen(pc))
		return 1;
	if (ibemu__vtime_system_code(pc))
		return 0;
	runtime_scan();
	return ibemu__vtime_runtime_code_seen(pc);
}

/*
 * Whether a read made from 'caller' gets the virtual clock: the clocks
 * are virtual and the caller is not a runtime.
 */
static int virtual_for(const void *caller)
{
	if (!ibemu__vtime_on())
		return 0;
	return !ibemu__vtime_runtime_code((uintptr_t)caller);
}

static int is_monotonic(clockid_t id)
{
	return id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW ||
	       id == CLOCK_MONOTONIC_COARSE || id == CLOCK_BOOTTIME;
}

static int is_realtime(clockid_t id)
{
	return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE;
}

/* What a read costs the program: nothing when the system's code made it. */
static uint64_t cost_for(const void *caller, uint64_t cost_ps)
{
	return ibemu__vtime_system_code((uintptr_t)caller) ? 0 : cost_ps;
}

static int64_t virtual_ns(int realtime, uint64_t cost_ps)
{
	int64_t ns = (int64_t)(ibemu__vtime_read_ps(cost_ps) / 1000) +
		     ibemu__vtime_shift_ns();

	return realtime ? ns + ibemu__vtime_realtime_offset_ns() : ns;
}

static void to_timespec(int64_t ns, struct timespec *ts)
{
	ts->tv_sec = (time_t)(ns / 1000000000);
	ts->tv_nsec = (long)(ns % 1000000000);
}

IBEMU_VTIME_EXPORT int clock_gettime(clockid_t id, struct timespec *ts)
{
	if (!(is_monotonic(id) || is_realtime(id)) ||
	    !virtual_for(__builtin_return_address(0)))
		return ibemu__vtime_real_clock_gettime(id, ts);
	to_timespec(virtual_ns(is_realtime(id),
			       cost_for(__builtin_return_address(0),
					IBEMU_VTIME_COST_CLOCK_PS)),
		    ts);
	return 0;
}

IBEMU_VTIME_EXPORT int gettimeofday(struct timeval *restrict tv,
				    void *restrict tz)
{
	struct timespec ts;

	if (!virtual_for(__builtin_return_address(0))) {
		ibemu__vtime_real_clock_gettime(CLOCK_REALTIME, &ts);
	} else {
		to_timespec(virtual_ns(1, cost_for(__builtin_return_address(0),
						   IBEMU_VTIME_COST_CLOCK_PS)),
			    &ts);
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

	if (!virtual_for(__builtin_return_address(0)))
		ibemu__vtime_real_clock_gettime(CLOCK_REALTIME, &ts);
	else
		to_timespec(virtual_ns(1, cost_for(__builtin_return_address(0),
						   IBEMU_VTIME_COST_TIME_PS)),
			    &ts);
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
