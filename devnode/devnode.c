// SPDX-License-Identifier: MIT
/*
 * /dev/infiniband/uverbs-HCA for the emulated HCA (devnode/README.md).
 * UCX (uct_ib_device_is_accessible) stats /dev/infiniband/<dev_name> and
 * checks access(R_OK | W_OK), and skips a device that is not a character
 * device there; ibemu's libibverbs names its device's node
 * "uverbs-<host>" and opens nothing. So the stat family and the access
 * family answer for that one path, and only when the real call finds
 * nothing: a character device (uverbs' major, 231), rw for everyone,
 * owned by the caller. Every other path is libc's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sess_proto.h"

#define DEVNODE_EXPORT __attribute__((visibility("default")))

#define UVERBS_PREFIX "/dev/infiniband/uverbs-"
/* The kernel's uverbs character devices: major 231, minors from 192. */
#define UVERBS_MAJOR 231
#define UVERBS_MINOR 192

/* libc's function 'name', found on first use. */
#define REAL(type, name)                                  \
	static type *real;                                \
	if (!real)                                        \
		*(void **)&real = dlsym(RTLD_NEXT, name); \
	if (!real) {                                      \
		errno = ENOSYS;                           \
		return -1;                                \
	}

/*
 * Whether 'path' is the node of the process's HCA: /dev/infiniband/
 * uverbs-$IBEMU_HOST, or any uverbs-NAME when the daemon chose the HCA
 * ($IBEMU_HOST unset). Only absolute paths: UCX builds its own.
 */
static int is_ours(const char *path)
{
	const char *host = getenv(IBEMU_SESS_ENV_HOST);
	const char *name;

	if (!path || strncmp(path, UVERBS_PREFIX, strlen(UVERBS_PREFIX)))
		return 0;
	name = path + strlen(UVERBS_PREFIX);
	if (!*name || strchr(name, '/'))
		return 0;
	return !host || !*host || !strcmp(name, host);
}

/* The real call failed with errno: do we answer in its place? */
static int answer(const char *path)
{
	return (errno == ENOENT || errno == ENOTDIR) && is_ours(path);
}

static void fill_stat(struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(0, 5);
	st->st_ino = 1;
	st->st_mode = S_IFCHR | 0666;
	st->st_nlink = 1;
	st->st_uid = getuid();
	st->st_gid = getgid();
	st->st_rdev = makedev(UVERBS_MAJOR, UVERBS_MINOR);
	st->st_blksize = 4096;
}

typedef int stat_fn(const char *path, struct stat *st);
typedef int fstatat_fn(int dirfd, const char *path, struct stat *st, int flags);
typedef int xstat_fn(int ver, const char *path, struct stat *st);
typedef int fxstatat_fn(int ver, int dirfd, const char *path, struct stat *st,
			int flags);
typedef int statx_fn(int dirfd, const char *path, int flags, unsigned int mask,
		     struct statx *stx);
typedef int access_fn(const char *path, int mode);
typedef int faccessat_fn(int dirfd, const char *path, int mode, int flags);

static int stat_as(stat_fn *real, const char *path, struct stat *st)
{
	int saved = errno;

	if (!real(path, st))
		return 0;
	if (!answer(path))
		return -1;
	errno = saved;
	fill_stat(st);
	return 0;
}

DEVNODE_EXPORT int stat(const char *path, struct stat *st)
{
	REAL(stat_fn, "stat");
	return stat_as(real, path, st);
}

DEVNODE_EXPORT int lstat(const char *path, struct stat *st)
{
	REAL(stat_fn, "lstat");
	return stat_as(real, path, st);
}

/* On LP64, struct stat64 is struct stat. */
_Static_assert(sizeof(struct stat64) == sizeof(struct stat),
	       "struct stat64 is struct stat");

DEVNODE_EXPORT int stat64(const char *path, struct stat64 *st)
{
	REAL(stat_fn, "stat64");
	return stat_as(real, path, (struct stat *)st);
}

DEVNODE_EXPORT int lstat64(const char *path, struct stat64 *st)
{
	REAL(stat_fn, "lstat64");
	return stat_as(real, path, (struct stat *)st);
}

static int fstatat_as(fstatat_fn *real, int dirfd, const char *path,
		      struct stat *st, int flags)
{
	int saved = errno;

	if (!real(dirfd, path, st, flags))
		return 0;
	if (!answer(path))
		return -1;
	errno = saved;
	fill_stat(st);
	return 0;
}

DEVNODE_EXPORT int fstatat(int dirfd, const char *path, struct stat *st,
			   int flags)
{
	REAL(fstatat_fn, "fstatat");
	return fstatat_as(real, dirfd, path, st, flags);
}

DEVNODE_EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st,
			     int flags)
{
	REAL(fstatat_fn, "fstatat64");
	return fstatat_as(real, dirfd, path, (struct stat *)st, flags);
}

/* Programs built against glibc before 2.33 call these (no header
 * declares them any more). */
int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st,
	       int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat *st,
		 int flags);

static int xstat_as(xstat_fn *real, int ver, const char *path, struct stat *st)
{
	int saved = errno;

	if (!real(ver, path, st))
		return 0;
	if (!answer(path))
		return -1;
	errno = saved;
	fill_stat(st);
	return 0;
}

DEVNODE_EXPORT int __xstat(int ver, const char *path, struct stat *st)
{
	REAL(xstat_fn, "__xstat");
	return xstat_as(real, ver, path, st);
}

DEVNODE_EXPORT int __xstat64(int ver, const char *path, struct stat *st)
{
	REAL(xstat_fn, "__xstat64");
	return xstat_as(real, ver, path, st);
}

DEVNODE_EXPORT int __lxstat(int ver, const char *path, struct stat *st)
{
	REAL(xstat_fn, "__lxstat");
	return xstat_as(real, ver, path, st);
}

DEVNODE_EXPORT int __lxstat64(int ver, const char *path, struct stat *st)
{
	REAL(xstat_fn, "__lxstat64");
	return xstat_as(real, ver, path, st);
}

static int fxstatat_as(fxstatat_fn *real, int ver, int dirfd, const char *path,
		       struct stat *st, int flags)
{
	int saved = errno;

	if (!real(ver, dirfd, path, st, flags))
		return 0;
	if (!answer(path))
		return -1;
	errno = saved;
	fill_stat(st);
	return 0;
}

DEVNODE_EXPORT int __fxstatat(int ver, int dirfd, const char *path,
			      struct stat *st, int flags)
{
	REAL(fxstatat_fn, "__fxstatat");
	return fxstatat_as(real, ver, dirfd, path, st, flags);
}

DEVNODE_EXPORT int __fxstatat64(int ver, int dirfd, const char *path,
				struct stat *st, int flags)
{
	REAL(fxstatat_fn, "__fxstatat64");
	return fxstatat_as(real, ver, dirfd, path, st, flags);
}

DEVNODE_EXPORT int statx(int dirfd, const char *path, int flags,
			 unsigned int mask, struct statx *stx)
{
	int saved = errno;

	REAL(statx_fn, "statx");
	if (!real(dirfd, path, flags, mask, stx))
		return 0;
	if (!answer(path))
		return -1;
	errno = saved;
	memset(stx, 0, sizeof(*stx));
	stx->stx_mask = STATX_BASIC_STATS & ~STATX_BLOCKS;
	stx->stx_blksize = 4096;
	stx->stx_nlink = 1;
	stx->stx_uid = getuid();
	stx->stx_gid = getgid();
	stx->stx_mode = S_IFCHR | 0666;
	stx->stx_ino = 1;
	stx->stx_rdev_major = UVERBS_MAJOR;
	stx->stx_rdev_minor = UVERBS_MINOR;
	stx->stx_dev_minor = 5;
	return 0;
}

/* Read and write for everyone; no execution, as for a device node. */
static int access_as(int mode)
{
	if (mode & X_OK) {
		errno = EACCES;
		return -1;
	}
	return 0;
}

DEVNODE_EXPORT int access(const char *path, int mode)
{
	int saved = errno;

	REAL(access_fn, "access");
	if (!real(path, mode))
		return 0;
	if (!answer(path))
		return -1;
	errno = saved;
	return access_as(mode);
}

DEVNODE_EXPORT int euidaccess(const char *path, int mode)
{
	int saved = errno;

	REAL(access_fn, "euidaccess");
	if (!real(path, mode))
		return 0;
	if (!answer(path))
		return -1;
	errno = saved;
	return access_as(mode);
}

DEVNODE_EXPORT int eaccess(const char *path, int mode)
{
	return euidaccess(path, mode);
}

DEVNODE_EXPORT int faccessat(int dirfd, const char *path, int mode, int flags)
{
	int saved = errno;

	REAL(faccessat_fn, "faccessat");
	if (!real(dirfd, path, mode, flags))
		return 0;
	if (!answer(path))
		return -1;
	errno = saved;
	return access_as(mode);
}
