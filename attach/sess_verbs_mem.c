// SPDX-License-Identifier: MIT
/*
 * Payload between processes: the memory of the transport's copy, write
 * and atomic ops (struct ibemu_tp_ops). A registered region's handle names
 * its process and a slot here; a slot maps the memfd of the region's
 * pages the library moved onto shared memory (verbs/mr_share.c), so that
 * bytes move with memcpy. What no slot maps is reached with
 * process_vm_readv/writev: one call when the other side is mapped, a read
 * into the daemon's buffer and a write out when neither is.
 *
 * A handle outlives its region in the transport's queued work, so it
 * carries the slot's generation: a stale one reaches the process's
 * memory through its pid, as it would have before the region went.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sess_verbs_int.h"

/* A handle: pid in bits 0-31, slot in 32-51, generation in 52-63. */
#define SLOT_BITS 20
#define GEN_BITS  12
#define MAX_SLOTS (1u << SLOT_BITS)

struct vmr {
	uint32_t gen;
	int used;
	uint32_t next_free;
	uint8_t *map;	 /* the window, or NULL */
	uint64_t lo, hi; /* the window in the process's addresses */
};

struct ibemu_sess_mrs {
	struct vmr *slot;
	uint32_t n, cap;
	uint32_t free_head; /* a free slot + 1, or 0 */
};

static uint64_t handle_of(pid_t pid, uint32_t slot, uint32_t gen)
{
	return (uint32_t)pid | (uint64_t)slot << 32 |
	       (uint64_t)(gen & ((1u << GEN_BITS) - 1)) << (32 + SLOT_BITS);
}

static pid_t pid_of(uint64_t handle)
{
	return (pid_t)(uint32_t)handle;
}

/* The live slot a handle names, or NULL. */
static struct vmr *slot_of(const struct ibemu_sess_server *s, uint64_t handle)
{
	uint32_t i = (uint32_t)(handle >> 32) & (MAX_SLOTS - 1);
	uint32_t gen = (uint32_t)(handle >> (32 + SLOT_BITS));
	struct vmr *r;

	if (!s->mrs || i >= s->mrs->n)
		return NULL;
	r = &s->mrs->slot[i];
	return r->used && (r->gen & ((1u << GEN_BITS) - 1)) == gen ? r : NULL;
}

static struct vmr *slot_new(struct ibemu_sess_server *s, uint32_t *at)
{
	struct ibemu_sess_mrs *t = s->mrs;
	struct vmr *grown;
	uint32_t cap;

	if (!t) {
		t = s->mrs = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
	}
	if (t->free_head) {
		*at = t->free_head - 1;
		t->free_head = t->slot[*at].next_free;
	} else {
		if (t->n == t->cap) {
			cap = t->cap ? t->cap * 2 : 64;
			if (cap > MAX_SLOTS)
				return NULL;
			grown = realloc(t->slot, cap * sizeof(*grown));
			if (!grown)
				return NULL;
			t->slot = grown;
			t->cap = cap;
		}
		*at = t->n++;
		t->slot[*at].gen = 0;
	}
	t->slot[*at].used = 1;
	t->slot[*at].map = NULL;
	return &t->slot[*at];
}

/*
 * Maps the memfd of registration 'm' into slot 'r': a memfd sealed against
 * shrinking (so no access can fault), holding the window whole, page
 * multiples throughout. 0 or -EINVAL with 'why' set.
 */
static int window_map(struct vmr *r, const struct ibemu_verbs_mr_req *m, int fd,
		      const char **why)
{
	long page = sysconf(_SC_PAGESIZE);
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);
	void *map;

	if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
		*why = "its fd is not a memfd sealed against shrinking";
		return -EINVAL;
	}
	if ((m->shm_addr | m->shm_len | m->shm_off) % (uint64_t)page ||
	    !m->shm_len || m->shm_addr + m->shm_len < m->shm_addr ||
	    m->shm_off + m->shm_len < m->shm_off ||
	    m->shm_len > IBEMU_VERBS_MAX_MR_SIZE) {
		*why = "its shared window is not whole pages";
		return -EINVAL;
	}
	if (fstat(fd, &st) || (uint64_t)st.st_size < m->shm_off + m->shm_len) {
		*why = "its memfd is smaller than the window";
		return -EINVAL;
	}
	map = mmap(NULL, m->shm_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   (off_t)m->shm_off);
	if (map == MAP_FAILED) {
		*why = "its memfd cannot be mapped";
		return -EINVAL;
	}
	r->map = map;
	r->lo = m->shm_addr;
	r->hi = m->shm_addr + m->shm_len;
	return 0;
}

int ibemu__vs_mr_add(struct ibemu_sess_verbs *v,
		     const struct ibemu_verbs_mr_req *m, int fd,
		     uint64_t *handle)
{
	struct ibemu_sess_server *s = v->c->s;
	const char *why = NULL;
	struct vmr *r;
	uint32_t at;
	int ret = 0;

	r = slot_new(s, &at);
	if (!r)
		return -ENOMEM;
	if (fd >= 0)
		ret = window_map(r, m, fd, &why);
	if (ret) {
		ibemu_daemon_log_limited(vs_daemon(v), &v->garbage_log,
					 "process %ld: memory registration "
					 "refused: %s",
					 (long)v->c->pid, why);
		ibemu__vs_mr_drop(s, handle_of(v->c->pid, at, r->gen));
		return ret;
	}
	*handle = handle_of(v->c->pid, at, r->gen);
	return 0;
}

void ibemu__vs_mr_drop(struct ibemu_sess_server *s, uint64_t handle)
{
	struct vmr *r = slot_of(s, handle);

	if (!r)
		return;
	if (r->map)
		munmap(r->map, r->hi - r->lo);
	r->map = NULL;
	r->used = 0;
	r->gen++;
	r->next_free = s->mrs->free_head;
	s->mrs->free_head = (uint32_t)(r - s->mrs->slot) + 1;
}

void ibemu__sess_verbs_mrs_free(struct ibemu_sess_server *s)
{
	uint32_t i;

	if (!s->mrs)
		return;
	for (i = 0; i < s->mrs->n; i++)
		if (s->mrs->slot[i].used && s->mrs->slot[i].map)
			munmap(s->mrs->slot[i].map,
			       s->mrs->slot[i].hi - s->mrs->slot[i].lo);
	free(s->mrs->slot);
	free(s->mrs);
	s->mrs = NULL;
}

/* --- moving bytes --------------------------------------------------- */

static struct ibemu_sess_server *server_of(const struct ibemu_tp_mem *m)
{
	return ((struct ibemu_sess_hca *)m->ctx)->s;
}

/*
 * Where the 'n' bytes at 'addr' of 'm's process are in the daemon: a
 * pointer into a mapped window, or NULL if they are reached through the
 * pid; 'n' shrinks to where that changes.
 */
static uint8_t *reach(const struct ibemu_tp_mem *m, uint64_t addr, uint64_t *n)
{
	const struct vmr *r = slot_of(server_of(m), m->mr);

	if (!r || !r->map || addr >= r->hi)
		return NULL;
	if (addr < r->lo) {
		if (*n > r->lo - addr)
			*n = r->lo - addr;
		return NULL;
	}
	if (*n > r->hi - addr)
		*n = r->hi - addr;
	return r->map + (addr - r->lo);
}

int ibemu__vs_vm_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr,
			       .iov_len = len};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	return n == (ssize_t)len ? 0 : -EFAULT;
}

static int vm_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = {.iov_base = (void *)buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr,
			       .iov_len = len};
	ssize_t n = process_vm_writev(pid, &local, 1, &remote, 1, 0);

	return n == (ssize_t)len ? 0 : -EFAULT;
}

/* Neither side mapped: through the daemon's buffer, a MiB at a time. */
static int copy_bounced(const struct ibemu_tp_mem *dst, uint64_t daddr,
			const struct ibemu_tp_mem *src, uint64_t saddr,
			uint64_t len)
{
	uint8_t *buf = server_of(dst)->copy_buf;
	uint64_t off;
	size_t chunk;
	int ret;

	for (off = 0; off < len; off += chunk) {
		chunk = len - off < IBEMU_SESS_COPY_CHUNK
				? (size_t)(len - off)
				: IBEMU_SESS_COPY_CHUNK;
		ret = ibemu__vs_vm_read(pid_of(src->mr), saddr + off, buf,
					chunk);
		if (!ret)
			ret = vm_write(pid_of(dst->mr), daddr + off, buf,
				       chunk);
		if (ret)
			return ret;
	}
	return 0;
}

int ibemu__vs_copy(void *ctx, const struct ibemu_tp_mem *dst,
		   const struct ibemu_tp_mem *src, uint64_t len)
{
	uint64_t off = 0, n;
	uint8_t *d, *s;
	int ret = 0;

	(void)ctx;
	while (off < len && !ret) {
		n = len - off;
		s = reach(src, src->addr + off, &n);
		d = reach(dst, dst->addr + off, &n);
		if (s && d)
			memcpy(d, s, n);
		else if (s)
			ret = vm_write(pid_of(dst->mr), dst->addr + off, s, n);
		else if (d)
			ret = ibemu__vs_vm_read(pid_of(src->mr),
						src->addr + off, d, n);
		else
			ret = copy_bounced(dst, dst->addr + off, src,
					   src->addr + off, n);
		off += n;
	}
	return ret;
}

int ibemu__vs_write(void *ctx, const struct ibemu_tp_mem *dst, const void *buf,
		    uint64_t len)
{
	const uint8_t *from = buf;
	uint64_t off = 0, n;
	uint8_t *d;
	int ret = 0;

	(void)ctx;
	while (off < len && !ret) {
		n = len - off;
		d = reach(dst, dst->addr + off, &n);
		if (d)
			memcpy(d, from + off, n);
		else
			ret = vm_write(pid_of(dst->mr), dst->addr + off,
				       from + off, n);
		off += n;
	}
	return ret;
}

/*
 * On a mapped window the atomic is a CPU atomic, so it is atomic with the
 * process's own atomics too; through the pid it is atomic only with the
 * other operations of emulated HCAs (they all run on this thread), as on
 * real HCAs, whose atomics are not atomic with the host's. The transport
 * checked the 8-byte alignment.
 */
int ibemu__vs_atomic(void *ctx, const struct ibemu_tp_mem *m, int opcode,
		     uint64_t compare_add, uint64_t swap, uint64_t *orig)
{
	uint64_t n = sizeof(uint64_t), v;
	uint8_t *at = reach(m, m->addr, &n);
	int ret;

	(void)ctx;
	if (at && n == sizeof(uint64_t)) {
		uint64_t *w = (uint64_t *)(void *)at;

		if (opcode == IBEMU_WR_ATOMIC_FETCH_AND_ADD) {
			*orig = __atomic_fetch_add(w, compare_add,
						   __ATOMIC_SEQ_CST);
		} else {
			*orig = compare_add;
			__atomic_compare_exchange_n(w, orig, swap, 0,
						    __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST);
		}
		return 0;
	}
	ret = ibemu__vs_vm_read(pid_of(m->mr), m->addr, &v, sizeof(v));
	if (ret)
		return ret;
	*orig = v;
	if (opcode == IBEMU_WR_ATOMIC_FETCH_AND_ADD)
		v += compare_add;
	else if (v == compare_add)
		v = swap;
	else
		return 0;
	return vm_write(pid_of(m->mr), m->addr, &v, sizeof(v));
}
