// SPDX-License-Identifier: MIT
/*
 * Payload between processes: the memory of the transport's copy, write
 * and atomic ops (struct ibemu_tp_ops). A registered region's handle names
 * its process and a slot here; a slot maps the memfd of the region's
 * pages the library moved onto shared memory (verbs/mr_share.c), so that
 * bytes move with memcpy, and holds the files of its shared file mappings
 * (the pages a pin would hold). What neither reaches is reached with
 * process_vm_readv/writev: one call when the other side is mapped, a read
 * into the daemon's buffer and a write out when neither is.
 *
 * Deregistration is a barrier (IBA 10.6.3.5): a handle outlives its
 * region in the transport's queued work, so it carries the slot's
 * generation, and a stale one reaches nothing: the access fails, and the
 * transport reports the access error the HCA would.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sess_verbs_int.h"

/* A handle: pid in bits 0-31, slot in 32-51, generation in 52-63. */
#define SLOT_BITS 20
#define GEN_BITS  12
#define GEN_MASK  ((1u << GEN_BITS) - 1)
#define MAX_SLOTS (1u << SLOT_BITS)

/*
 * A piece of a region in a file or shared mapping. Held: reached through
 * the file the registration found mapped there, at the file's offset,
 * never by address, so a mapping the process puts over it later is not
 * reached (hardware holds the pinned pages); pread/pwrite, not a mapping,
 * so a process that truncates the file makes an access fail, not the
 * daemon fault. Not held (fd -1: a private file mapping, or a shared one
 * the daemon cannot open): reached by address once /proc/PID/maps says
 * the same file is still mapped there, else the access fails.
 */
struct vpin {
	uint64_t lo, hi; /* in the process's addresses */
	uint64_t off;	 /* the file offset of lo */
	int fd;
	unsigned maj, min; /* the file's device and inode */
	uint64_t ino;
};

struct vmr {
	uint32_t gen;
	int used;
	uint32_t next_free;
	uint8_t *map;	 /* the window, or NULL */
	uint64_t lo, hi; /* the window in the process's addresses */
	struct vpin *pins;
	uint32_t npins;
	int pidfd; /* its process's (borrowed from the stream), or -1 */
};

struct ibemu_sess_mrs {
	struct vmr *slot;
	uint32_t n, cap;
	uint32_t free_head; /* a free slot + 1, or 0 */
};

static uint64_t handle_of(pid_t pid, uint32_t slot, uint32_t gen)
{
	return (uint32_t)pid | (uint64_t)slot << 32 |
	       (uint64_t)(gen & GEN_MASK) << (32 + SLOT_BITS);
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
	return r->used && (r->gen & GEN_MASK) == gen ? r : NULL;
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
	t->slot[*at].pins = NULL;
	t->slot[*at].npins = 0;
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

/* --- what the process has mapped where it registers ------------------ */

/* One line of /proc/PID/maps. */
struct vma {
	uint64_t lo, hi;
	char perms[5];
	uint64_t off;
	unsigned maj, min;
	uint64_t ino;
	char path[256];
};

static int vma_parse(const char *line, struct vma *a)
{
	int n;

	a->path[0] = '\0';
	n = sscanf(line,
		   "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64
		   " %255[^\n]",
		   &a->lo, &a->hi, a->perms, &a->off, &a->maj, &a->min, &a->ino,
		   a->path);
	return n >= 7 ? 0 : -1;
}

/* Whether 'fd' is the regular file of mapping 'a'. */
static int same_file(int fd, const struct vma *a)
{
	struct stat st;

	return !fstat(fd, &st) && st.st_dev == makedev(a->maj, a->min) &&
	       (uint64_t)st.st_ino == a->ino;
}

/* Opens 'path' if it is the file of mapping 'a' (else -1); non-blocking,
 * and checked before the open: the process chooses what its maps say. */
static int open_same(const char *path, const struct vma *a)
{
	struct stat st;
	int fd;

	if (stat(path, &st) || st.st_dev != makedev(a->maj, a->min) ||
	    (uint64_t)st.st_ino != a->ino || !S_ISREG(st.st_mode))
		return -1;
	fd = open(path, (a->perms[1] == 'w' ? O_RDWR : O_RDONLY) | O_NONBLOCK |
				O_NOCTTY | O_CLOEXEC);
	if (fd >= 0 && !same_file(fd, a)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The file descriptor of process 'pid' open on the file of 'a', or -1. */
static int open_held(pid_t pid, const struct vma *a)
{
	char path[64];
	struct dirent *d;
	int fd = -1, n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%ld/fd", (long)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while (fd < 0 && n++ < 4096 && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/fd/%.16s", (long)pid,
			 d->d_name);
		fd = open_same(path, a);
	}
	closedir(dir);
	return fd;
}

/*
 * The file of shared mapping 'a' of process 'pid', opened again: by its
 * path if it is still there; through /proc/PID/map_files (a daemon with
 * CAP_CHECKPOINT_RESTORE); through a descriptor the process holds on it
 * (a memfd, a file it unlinked). Else -1.
 */
static int vma_file(pid_t pid, const struct vma *a)
{
	char path[96];
	int fd = -1;

	if (a->path[0] == '/' && !strstr(a->path, " (deleted)"))
		fd = open_same(a->path, a);
	if (fd < 0) {
		snprintf(path, sizeof(path),
			 "/proc/%ld/map_files/%" PRIx64 "-%" PRIx64, (long)pid,
			 a->lo, a->hi);
		fd = open_same(path, a);
	}
	if (fd < 0)
		fd = open_held(pid, a);
	return fd;
}

/* The files a stream's regions hold, each open once. */
struct vfile {
	unsigned maj, min;
	uint64_t ino;
	int fd;
	uint32_t refs; /* pieces that name it */
};

struct ibemu_vs_files {
	struct vfile file[IBEMU_SESS_FILES_MAX];
	uint32_t nfiles;
	uint32_t npieces;
};

/* The fd of the file of shared mapping 'a' that 'v' holds, opened and
 * counted once more; -1 if the daemon cannot open it. */
static int file_get(struct ibemu_vs_files *t, pid_t pid, const struct vma *a)
{
	struct vfile *f;
	uint32_t i;
	int fd;

	for (i = 0; i < t->nfiles; i++) {
		f = &t->file[i];
		if (f->maj == a->maj && f->min == a->min && f->ino == a->ino &&
		    (a->perms[1] != 'w' ||
		     (fcntl(f->fd, F_GETFL) & O_ACCMODE) == O_RDWR)) {
			f->refs++;
			return f->fd;
		}
	}
	if (t->nfiles == IBEMU_SESS_FILES_MAX)
		return -1;
	fd = vma_file(pid, a);
	if (fd < 0)
		return -1;
	t->file[t->nfiles++] = (struct vfile){a->maj, a->min, a->ino, fd, 1};
	return fd;
}

static void file_put(struct ibemu_vs_files *t, int fd)
{
	uint32_t i;

	for (i = 0; i < t->nfiles && t->file[i].fd != fd; i++)
		;
	if (i == t->nfiles || --t->file[i].refs)
		return;
	close(fd);
	t->file[i] = t->file[--t->nfiles];
}

/* Records [lo, hi) of file or shared mapping 'a' in slot 'r', held by its
 * file if it is shared and the daemon can open it. */
static int pin_add(struct ibemu_sess_verbs *v, struct vmr *r,
		   const struct vma *a, uint64_t lo, uint64_t hi)
{
	struct vpin *grown;
	int fd = -1;

	if (!v->files) {
		v->files = calloc(1, sizeof(*v->files));
		if (!v->files)
			return -ENOMEM;
	}
	if (v->files->npieces >= IBEMU_SESS_PIECES_MAX)
		return -ENOMEM;
	grown = realloc(r->pins, (r->npins + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	r->pins = grown;
	if (a->perms[3] == 's')
		fd = file_get(v->files, v->c->pid, a);
	r->pins[r->npins++] = (struct vpin){
		lo, hi, a->off + (lo - a->lo), fd, a->maj, a->min, a->ino};
	v->files->npieces++;
	return 0;
}

/*
 * Checks that [lo, hi) of the process is mapped with the access 'writable'
 * needs, as the kernel's ib_umem_get() fails with EFAULT where
 * get_user_pages() would (a hole, PROT_NONE, a read-only mapping of a
 * writable region), and holds the files of its shared file mappings.
 * 'f' is the process's /proc/PID/maps, read from its start.
 */
static int range_check(struct ibemu_sess_verbs *v, struct vmr *r, FILE *f,
		       uint64_t lo, uint64_t hi, int writable)
{
	uint64_t at = lo, a_lo, a_hi;
	size_t cap = 0;
	char *line = NULL;
	struct vma a;
	int ret = 0;

	rewind(f);
	/* Whole lines: a path the process chose must not pass for one. */
	while (!ret && at < hi && getline(&line, &cap, f) > 0) {
		if (vma_parse(line, &a) || a.hi <= at)
			continue;
		/* check_vma_flags(): VM_WRITE for a write pin, else VM_READ. */
		if (a.lo > at ||
		    (writable ? a.perms[1] != 'w' : a.perms[0] != 'r'))
			break;
		a_lo = at;
		a_hi = a.hi < hi ? a.hi : hi;
		/* Private anonymous memory (the stack, a region's partial
		 * pages) is reached by address without a check: a look at
		 * the maps costs tens of us, on the common slow path. */
		if (a.perms[3] == 's' || a.ino)
			ret = pin_add(v, r, &a, a_lo, a_hi);
		at = a_hi;
	}
	free(line);
	return ret ? ret : at < hi ? -EFAULT : 0;
}

/* The parts of registration 'm' outside the window of 'r' (by address). */
static int region_check(struct ibemu_sess_verbs *v, struct vmr *r,
			const struct ibemu_verbs_mr_req *m)
{
	uint32_t w = IBEMU_ACCESS_LOCAL_WRITE | IBEMU_ACCESS_REMOTE_WRITE |
		     IBEMU_ACCESS_REMOTE_ATOMIC;
	uint64_t lo = m->addr, hi = m->addr + m->len;
	char path[64];
	FILE *f;
	int ret = 0;

	if (r->map && r->lo <= lo && hi <= r->hi)
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/maps", (long)v->c->pid);
	f = fopen(path, "re");
	if (!f)
		return errno == EMFILE || errno == ENFILE || errno == ENOMEM
			       ? -ENOMEM
			       : -EFAULT;
	if (!r->map)
		ret = range_check(v, r, f, lo, hi, !!(m->access & w));
	else {
		if (lo < r->lo)
			ret = range_check(v, r, f, lo, r->lo,
					  !!(m->access & w));
		if (!ret && r->hi < hi)
			ret = range_check(v, r, f, r->hi, hi,
					  !!(m->access & w));
	}
	fclose(f);
	return ret;
}

/*
 * A pidfd of the stream's process, opened at its first registration: an
 * access by address or through a held file is made only while the
 * process lives (after exit the daemon may not have read the end of the
 * stream yet; its pid may even be another process's by then). -1 where
 * the kernel has no pidfd_open (then the pid is trusted, as before).
 */
static int stream_pidfd(struct ibemu_sess_verbs *v)
{
	if (!v->pidfd_tried) {
		v->pidfd_tried = 1;
#ifdef SYS_pidfd_open
		v->pidfd = (int)syscall(SYS_pidfd_open, v->c->pid, 0);
#else
		v->pidfd = -1;
#endif
		if (v->pidfd >= 0)
			fcntl(v->pidfd, F_SETFD, FD_CLOEXEC);
	}
	return v->pidfd;
}

void ibemu__vs_mem_close(struct ibemu_sess_verbs *v)
{
	if (v->pidfd_tried && v->pidfd >= 0)
		close(v->pidfd);
	v->pidfd_tried = 0;
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
	r->pidfd = stream_pidfd(v);
	if (fd >= 0)
		ret = window_map(r, m, fd, &why);
	if (ret) {
		ibemu_daemon_log_limited(vs_daemon(v), &v->garbage_log,
					 "process %ld: memory registration "
					 "refused: %s",
					 (long)v->c->pid, why);
		ibemu__vs_mr_drop(v, handle_of(v->c->pid, at, r->gen));
		return ret;
	}
	ret = region_check(v, r, m);
	if (ret) {
		ibemu__vs_mr_drop(v, handle_of(v->c->pid, at, r->gen));
		return ret;
	}
	*handle = handle_of(v->c->pid, at, r->gen);
	return 0;
}

/* Unmaps the window of 'r'; its pieces go back to 'files' (NULL: the
 * server goes, the streams went before). */
static void slot_clear(struct vmr *r, struct ibemu_vs_files *files)
{
	uint32_t i;

	if (r->map)
		munmap(r->map, r->hi - r->lo);
	r->map = NULL;
	for (i = 0; files && i < r->npins; i++) {
		if (r->pins[i].fd >= 0)
			file_put(files, r->pins[i].fd);
		files->npieces--;
	}
	free(r->pins);
	r->pins = NULL;
	r->npins = 0;
}

void ibemu__vs_mr_drop(struct ibemu_sess_verbs *v, uint64_t handle)
{
	struct ibemu_sess_mrs *t = v->c->s->mrs;
	struct vmr *r = slot_of(v->c->s, handle);

	if (!r)
		return;
	slot_clear(r, v->files);
	if (v->files && !v->files->npieces) {
		free(v->files);
		v->files = NULL;
	}
	r->used = 0;
	r->gen++;
	/* A slot whose generation would come round again is retired: no
	 * handle of work queued long ago may name a later region. */
	if (!(r->gen & GEN_MASK))
		return;
	r->next_free = t->free_head;
	t->free_head = (uint32_t)(r - t->slot) + 1;
}

void ibemu__sess_verbs_mrs_free(struct ibemu_sess_server *s)
{
	uint32_t i;

	if (!s->mrs)
		return;
	for (i = 0; i < s->mrs->n; i++)
		if (s->mrs->slot[i].used)
			slot_clear(&s->mrs->slot[i], NULL);
	free(s->mrs->slot);
	free(s->mrs);
	s->mrs = NULL;
}

/* --- moving bytes --------------------------------------------------- */

static struct ibemu_sess_server *server_of(const struct ibemu_tp_mem *m)
{
	return ((struct ibemu_sess_hca *)m->ctx)->s;
}

/* How some bytes of a region are reached. */
struct place {
	enum { GONE, MAPPED, FILED, BY_PID } via;
	uint8_t *p;  /* MAPPED: in the daemon */
	int fd;	     /* FILED: the file, at 'at' */
	uint64_t at; /* FILED: a file offset; BY_PID: an address */
	pid_t pid;   /* BY_PID */
};

/* Whether the process of 'r' has not exited (its pidfd not readable). */
static int alive(const struct vmr *r)
{
	struct pollfd p = {.fd = r->pidfd, .events = POLLIN};

	return r->pidfd < 0 || poll(&p, 1, 0) == 0;
}

/* Whether the file of piece 'q' is still what process 'pid' maps there. */
static int piece_mapped(pid_t pid, const struct vpin *q)
{
	uint64_t at = q->lo;
	char path[64], *line = NULL;
	size_t cap = 0;
	struct vma a;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/maps", (long)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (at < q->hi && getline(&line, &cap, f) > 0) {
		if (vma_parse(line, &a) || a.hi <= at)
			continue;
		if (a.lo > at || a.maj != q->maj || a.min != q->min ||
		    a.ino != q->ino ||
		    a.off + (at - a.lo) != q->off + (at - q->lo))
			break;
		at = a.hi;
	}
	free(line);
	fclose(f);
	return at >= q->hi;
}

/*
 * Where the 'n' bytes at 'addr' of 'm's region are: in a mapped window, in
 * a held file, by address through the pid, or GONE if the region is no
 * longer registered; 'n' shrinks to where that changes.
 */
static struct place reach(const struct ibemu_tp_mem *m, uint64_t addr,
			  uint64_t *n)
{
	const struct vmr *r = slot_of(server_of(m), m->mr);
	uint64_t next = UINT64_MAX;
	uint32_t i;

	if (!r)
		return (struct place){.via = GONE};
	if (r->map && r->lo <= addr && addr < r->hi) {
		if (*n > r->hi - addr)
			*n = r->hi - addr;
		return (struct place){.via = MAPPED,
				      .p = r->map + (addr - r->lo)};
	}
	if (!alive(r))
		return (struct place){.via = GONE};
	if (r->map && addr < r->lo)
		next = r->lo;
	for (i = 0; i < r->npins; i++) {
		const struct vpin *q = &r->pins[i];

		if (q->lo <= addr && addr < q->hi) {
			if (*n > q->hi - addr)
				*n = q->hi - addr;
			if (q->fd < 0)
				return piece_mapped(pid_of(m->mr), q)
					       ? (struct place){.via = BY_PID,
								.at = addr,
								.pid = pid_of(
									m->mr)}
					       : (struct place){.via = GONE};
			return (struct place){.via = FILED,
					      .fd = q->fd,
					      .at = q->off + (addr - q->lo)};
		}
		if (addr < q->lo && q->lo < next)
			next = q->lo;
	}
	if (*n > next - addr)
		*n = next - addr;
	return (struct place){.via = BY_PID, .at = addr, .pid = pid_of(m->mr)};
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

/*
 * A held file is read and written within its size only: a process that
 * truncated it made those bytes unreachable (a write would grow it).
 */
static int file_io(int fd, uint64_t off, void *buf, size_t len, int out)
{
	struct stat st;
	size_t done = 0;
	ssize_t n;

	if (fstat(fd, &st) || off + len < off ||
	    off + len > (uint64_t)st.st_size)
		return -EFAULT;
	while (done < len) {
		n = out ? pwrite(fd, (char *)buf + done, len - done,
				 (off_t)(off + done))
			: pread(fd, (char *)buf + done, len - done,
				(off_t)(off + done));
		if (n <= 0)
			return -EFAULT;
		done += (size_t)n;
	}
	return 0;
}

/* 'len' bytes at place 'p' into 'buf' (not for MAPPED). */
static int place_read(const struct place *p, void *buf, size_t len)
{
	if (p->via == FILED)
		return file_io(p->fd, p->at, buf, len, 0);
	return ibemu__vs_vm_read(p->pid, p->at, buf, len);
}

static int place_write(const struct place *p, const void *buf, size_t len)
{
	if (p->via == FILED)
		return file_io(p->fd, p->at, (void *)buf, len, 1);
	return vm_write(p->pid, p->at, buf, len);
}

/* Neither side mapped: through the daemon's buffer, a MiB at a time. */
static int copy_bounced(uint8_t *buf, struct place d, struct place s,
			uint64_t len)
{
	uint64_t off;
	size_t chunk;
	int ret;

	for (off = 0; off < len; off += chunk) {
		chunk = len - off < IBEMU_SESS_COPY_CHUNK
				? (size_t)(len - off)
				: IBEMU_SESS_COPY_CHUNK;
		ret = place_read(&s, buf, chunk);
		if (ret)
			return -EREMOTEIO;
		ret = place_write(&d, buf, chunk);
		if (ret)
			return ret;
		s.at += chunk;
		d.at += chunk;
	}
	return 0;
}

/* One piece of a copy, within one kind of place on each side. */
static int copy_piece(uint8_t *buf, const struct place *d,
		      const struct place *s, uint64_t n)
{
	if (s->via == GONE)
		return -EREMOTEIO;
	if (d->via == GONE)
		return -EFAULT;
	if (s->via == MAPPED && d->via == MAPPED) {
		ibemu__vs_land(d->p, s->p, n);
		return 0;
	}
	if (s->via == MAPPED)
		return place_write(d, s->p, n);
	if (d->via == MAPPED)
		return place_read(s, d->p, n) ? -EREMOTEIO : 0;
	return copy_bounced(buf, *d, *s, n);
}

int ibemu__vs_copy(void *ctx, const struct ibemu_tp_mem *dst,
		   const struct ibemu_tp_mem *src, uint64_t len)
{
	uint8_t *buf = server_of(dst)->copy_buf;
	struct place d, s;
	uint64_t off = 0, n;
	int ret = 0;

	(void)ctx;
	ibemu__vs_mem_landing(dst->ctx, pid_of(dst->mr));
	while (off < len && !ret) {
		n = len - off;
		s = reach(src, src->addr + off, &n);
		d = reach(dst, dst->addr + off, &n);
		ret = copy_piece(buf, &d, &s, n);
		off += n;
	}
	return ret;
}

int ibemu__vs_read(void *ctx, const struct ibemu_tp_mem *src, void *buf,
		   uint64_t len)
{
	uint8_t *to = buf;
	uint64_t off = 0, n;
	struct place s;
	int ret = 0;

	(void)ctx;
	while (off < len && !ret) {
		n = len - off;
		s = reach(src, src->addr + off, &n);
		if (s.via == GONE)
			ret = -EREMOTEIO;
		else if (s.via == MAPPED)
			memcpy(to + off, s.p, n);
		else if (place_read(&s, to + off, n))
			ret = -EREMOTEIO;
		off += n;
	}
	return ret;
}

int ibemu__vs_write(void *ctx, const struct ibemu_tp_mem *dst, const void *buf,
		    uint64_t len)
{
	const uint8_t *from = buf;
	uint64_t off = 0, n;
	struct place d;
	int ret = 0;

	(void)ctx;
	ibemu__vs_mem_landing(dst->ctx, pid_of(dst->mr));
	while (off < len && !ret) {
		n = len - off;
		d = reach(dst, dst->addr + off, &n);
		if (d.via == GONE)
			ret = -EFAULT;
		else if (d.via == MAPPED)
			ibemu__vs_land(d.p, from + off, n);
		else
			ret = place_write(&d, from + off, n);
		off += n;
	}
	return ret;
}

/*
 * On a mapped window the atomic is a CPU atomic, so it is atomic with the
 * process's own atomics too; elsewhere it is atomic only with the other
 * operations of emulated HCAs (they all run on this thread), as on real
 * HCAs, whose atomics are not atomic with the host's. The transport
 * checked the 8-byte alignment.
 */
int ibemu__vs_atomic(void *ctx, const struct ibemu_tp_mem *m, int opcode,
		     uint64_t compare_add, uint64_t swap, uint64_t *orig)
{
	uint64_t n = sizeof(uint64_t), v;
	struct place at = reach(m, m->addr, &n);
	int ret;

	(void)ctx;
	if (at.via == GONE || n != sizeof(uint64_t))
		return -EFAULT;
	ibemu__vs_mem_landing(m->ctx, pid_of(m->mr));
	if (at.via == MAPPED) {
		uint64_t *w = (uint64_t *)(void *)at.p;

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
	ret = place_read(&at, &v, sizeof(v));
	if (ret)
		return ret;
	*orig = v;
	if (opcode == IBEMU_WR_ATOMIC_FETCH_AND_ADD)
		v += compare_add;
	else if (v == compare_add)
		v = swap;
	else
		return 0;
	return place_write(&at, &v, sizeof(v));
}
