// SPDX-License-Identifier: MIT
/*
 * The shared-mapping fast path of docs/design.md §6. The daemon cannot
 * map a process's private memory, only reach it with process_vm_readv/
 * writev (a system call and a page walk per access, and a bounce buffer
 * between two processes). So at registration the pages of a region that
 * are private anonymous memory (heap, anonymous mmap) move onto a memfd
 * mapped at the same address with the same contents, and the memfd goes
 * to the daemon, which maps it too: payload then moves with one memcpy.
 *
 * The move copies the pages and swaps the mapping under them (mremap), so
 * a write another thread makes to those pages in between would be lost:
 * in a process with one thread every page the region touches moves; with
 * more, only the pages the region covers whole (its own bytes, which no
 * other thread should write while it registers them), the partly covered
 * ones at its ends staying private, unless they moved before (a region
 * inside a moved range is shared whole). The calling thread's stack, file
 * mappings and memory already shared stay as they are, on the slow path.
 * A moved range stays shared until the program unmaps it; registering it
 * again reuses its memfd. After fork() the child gets private copies, as
 * the kernel gives a child copies of pinned pages.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "verbs_int.h"

#define SEG_NAME "ibemu-mr"
/* At most this many moved ranges (each keeps its memfd open), and none
 * larger than this: the move copies it. */
#define MAX_SEGS      512
#define MAX_SEG_BYTES (1ull << 30)

/*
 * Puts 'size' bytes mapped at 'from' at 'to' in place of what is there,
 * through the system call itself: libraries that hook libc's mremap (UCX
 * 1.13's memory hooks) drop its fifth argument, and the pages then go
 * where that register happens to point (address 0, for root), not to the
 * address the program registered.
 */
static int move_mapping(void *from, size_t size, void *to)
{
	long r = syscall(SYS_mremap, from, size, size,
			 MREMAP_MAYMOVE | MREMAP_FIXED, to);

	return r == -1 ? -1 : 0;
}

struct seg {
	uintptr_t base;
	size_t size;
	int fd;
	ino_t ino;
	struct seg *next;
};

static pthread_mutex_t segs_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static struct seg *segs;
static unsigned nsegs;

/* One line of /proc/self/maps. */
struct vma {
	uintptr_t lo, hi;
	char perms[5];
	unsigned long long off;
	unsigned long ino;
	char path[64];
};

/* The mapping that holds address 'a'; 0, or -1 if none does. */
static int vma_of(uintptr_t a, struct vma *v)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int found = -1, n;

	if (!f)
		return -1;
	while (found && fgets(line, sizeof(line), f)) {
		v->path[0] = '\0';
		n = sscanf(line,
			   "%" SCNxPTR "-%" SCNxPTR
			   " %4s %llx %*x:%*x %lu %63s",
			   &v->lo, &v->hi, v->perms, &v->off, &v->ino, v->path);
		if (n >= 5 && v->lo <= a && a < v->hi)
			found = 0;
	}
	fclose(f);
	return found;
}

static unsigned threads_now(void)
{
	char line[128];
	FILE *f = fopen("/proc/self/status", "re");
	unsigned n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %u", &n) == 1)
			break;
	fclose(f);
	return n;
}

/*
 * Copies 'len' bytes between user memory and the memfd through the
 * kernel ('to_fd': from 'buf' into the file at 'off'). Whole pages around
 * a region hold other objects, which a sanitizer's memcpy would report as
 * overflows; the system call is the copy the kernel makes anyway.
 */
#define COPY_CHUNK (1u << 20)

static int fd_copy(int fd, void *buf, size_t len, off_t off, int to_fd,
		   struct ibemu_verbs_context *ctx)
{
	size_t done = 0, step;
	long n;

	while (done < len) {
		step = len - done < COPY_CHUNK ? len - done : COPY_CHUNK;
		n = syscall(to_fd ? SYS_pwrite64 : SYS_pread64, fd,
			    (char *)buf + done, step, off + (off_t)done);
		if (n <= 0)
			return -1;
		done += (size_t)n;
		if (ctx)
			ibemu__verbs_calling(ctx);
	}
	return 0;
}

/* After fork(): the child's pages become its own again (private copies). */
static void atfork_child(void)
{
	struct seg *s, *next;
	void *tmp;

	for (s = segs; s; s = next) {
		next = s->next;
		tmp = mmap(NULL, s->size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (tmp != MAP_FAILED) {
			fd_copy(s->fd, tmp, s->size, 0, 0, NULL);
			if (move_mapping(tmp, s->size, (void *)s->base))
				munmap(tmp, s->size);
		}
		close(s->fd);
		free(s);
	}
	segs = NULL;
	nsegs = 0;
	pthread_mutex_init(&segs_lock, NULL);
}

static void atfork_register(void)
{
	pthread_atfork(NULL, NULL, atfork_child);
}

/*
 * The moved range that holds [lo, hi) and is still mapped where it was
 * moved; a range the program has since unmapped or replaced is forgotten.
 */
static struct seg *seg_find(uintptr_t lo, uintptr_t hi)
{
	struct seg **pp, *s;
	struct vma v;

	for (pp = &segs; (s = *pp); pp = &s->next) {
		if (lo < s->base || hi > s->base + s->size)
			continue;
		if (!vma_of(lo, &v) && v.ino == s->ino && v.hi >= hi &&
		    v.off + (lo - v.lo) == lo - s->base)
			return s;
		*pp = s->next;
		close(s->fd);
		free(s);
		nsegs--;
		return NULL;
	}
	return NULL;
}

/* Whether [lo, hi) is private anonymous memory off the caller's stack. */
static int movable(uintptr_t lo, uintptr_t hi)
{
	struct vma v;
	int here;

	if (vma_of(lo, &v) || v.hi < hi || strcmp(v.perms, "rw-p") ||
	    v.ino != 0 || (v.path[0] && strcmp(v.path, "[heap]")))
		return 0;
	/* The calling thread writes its own stack while the pages move. */
	return !((uintptr_t)&here >= v.lo && (uintptr_t)&here < v.hi);
}

/* Moves [lo, hi) onto a new memfd; the segment, or NULL if it cannot. */
static struct seg *seg_move(struct ibemu_verbs_context *ctx, uintptr_t lo,
			    uintptr_t hi)
{
	size_t size = hi - lo;
	struct seg *s = calloc(1, sizeof(*s));
	struct stat st;
	void *tmp;

	if (!s)
		return NULL;
	s->fd = memfd_create(SEG_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (s->fd < 0)
		goto err_free;
	if (ftruncate(s->fd, (off_t)size) ||
	    fcntl(s->fd, F_ADD_SEALS,
		  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) ||
	    fstat(s->fd, &st))
		goto err_close;
	if (fd_copy(s->fd, (void *)lo, size, 0, 1, ctx))
		goto err_close;
	tmp = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (tmp == MAP_FAILED)
		goto err_close;
	if (move_mapping(tmp, size, (void *)lo)) {
		munmap(tmp, size);
		goto err_close;
	}
	s->base = lo;
	s->size = size;
	s->ino = st.st_ino;
	return s;

err_close:
	close(s->fd);
err_free:
	free(s);
	return NULL;
}

int ibemu__verbs_mr_share(struct ibemu_verbs_context *ctx, uint64_t addr,
			  uint64_t len, struct ibemu_verbs_mr_req *m)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo, hi;
	struct seg *s;
	int fd;

	pthread_once(&atfork_once, atfork_register);
	pthread_mutex_lock(&segs_lock);
	/* Pages moved already are shared whole, whoever else writes them. */
	lo = (uintptr_t)addr & ~(page - 1);
	hi = ((uintptr_t)(addr + len) + page - 1) & ~(page - 1);
	s = hi - lo <= MAX_SEG_BYTES ? seg_find(lo, hi) : NULL;
	if (!s && threads_now() != 1) {
		lo = ((uintptr_t)addr + page - 1) & ~(page - 1);
		hi = (uintptr_t)(addr + len) & ~(page - 1);
	}
	if (!s && (hi <= lo || hi - lo > MAX_SEG_BYTES)) {
		pthread_mutex_unlock(&segs_lock);
		return -1;
	}
	if (!s)
		s = seg_find(lo, hi);
	if (!s && nsegs < MAX_SEGS && movable(lo, hi)) {
		s = seg_move(ctx, lo, hi);
		if (s) {
			s->next = segs;
			segs = s;
			nsegs++;
		}
	}
	fd = s ? s->fd : -1;
	if (s) {
		m->shm_addr = lo;
		m->shm_len = hi - lo;
		m->shm_off = lo - s->base;
	}
	pthread_mutex_unlock(&segs_lock);
	return fd;
}
