// SPDX-License-Identifier: MIT
/*
 * Runtime directories and the fabric lock. The lock is an flock() on a file
 * in the fabric directory: the kernel drops it when the daemon dies, which
 * is what lets the next 'ibemu up' tell a stale socket from a live one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "fabric_name.h"
#include "runtime.h"

int ibemu_runtime_root(char *root, size_t len)
{
	const char *env = getenv("IBEMU_RUNTIME_DIR");
	int n;

	if (env && *env && env[0] != '/')
		return -EINVAL; /* it would depend on the working directory */
	if (env && *env)
		n = snprintf(root, len, "%s", env);
	else if ((env = getenv("XDG_RUNTIME_DIR")) && *env)
		n = snprintf(root, len, "%s/ibemu", env);
	else
		n = snprintf(root, len, "/tmp/ibemu-%u", (unsigned)getuid());
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int join_n(char *out, size_t len, const char *dir, const char *file)
{
	int n = snprintf(out, len, "%s/%s", dir, file);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int join(char *out, const char *dir, const char *file)
{
	return join_n(out, IBEMU_PATH_MAX, dir, file);
}

int ibemu_runtime_paths(const char *name, struct ibemu_runtime_paths *p)
{
	char root[IBEMU_PATH_MAX], sess[IBEMU_PATH_MAX];
	const char *why;
	int ret;

	ret = ibemu_runtime_root(root, sizeof(root));
	if (ret)
		return ret;
	if (ibemu_fabric_name_check(name, &why))
		return -EINVAL;
	ret = join(p->dir, root, name);
	if (!ret)
		ret = join(p->sock, p->dir, "ctl.sock");
	if (!ret)
		ret = join(p->lock, p->dir, "lock");
	if (!ret)
		ret = join(p->pid, p->dir, "pid");
	if (!ret)
		ret = join(p->log, p->dir, "daemon.log");
	if (!ret)
		ret = join(p->sm_status, p->dir, "sm.json");
	if (!ret)
		ret = join(p->sm_log, p->dir, "sm.log");
	if (!ret)
		ret = join(p->guid2lid, p->dir, "guid2lid");
	if (!ret)
		ret = join(p->sl_map, p->dir, "sl.map");
	if (!ret)
		ret = join_n(p->sm_report, sizeof(p->sm_report), p->dir,
			     "report.json");
	if (!ret)
		ret = join_n(p->sm_lfts, sizeof(p->sm_lfts), p->dir,
			     "opensm-lfts.dump");
	if (!ret)
		ret = join_n(p->sm_subnet, sizeof(p->sm_subnet), p->dir,
			     "opensm-subnet.lst");
	if (!ret)
		ret = join_n(p->cc_conf, sizeof(p->cc_conf), p->dir, "cc.conf");
	/* The session socket is the longest path that must fit sun_path. */
	if (!ret)
		ret = join(sess, p->dir, "sess.sock");
	return ret;
}

static int private_dir(const char *dir, char *why, size_t whylen)
{
	struct stat st;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		snprintf(why, whylen, "cannot create %s: %s", dir,
			 strerror(errno));
		return -errno;
	}
	if (lstat(dir, &st)) {
		snprintf(why, whylen, "cannot stat %s: %s", dir,
			 strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 0022)) {
		snprintf(why, whylen,
			 "%s must be a directory owned by uid %u and not "
			 "writable by others",
			 dir, (unsigned)getuid());
		return -EPERM;
	}
	return 0;
}

int ibemu_runtime_prepare(const struct ibemu_runtime_paths *p, char *why,
			  size_t whylen)
{
	char root[IBEMU_PATH_MAX];
	char *slash;
	int ret;

	snprintf(root, sizeof(root), "%s", p->dir);
	slash = strrchr(root, '/');
	if (slash && slash != root)
		*slash = '\0';
	ret = private_dir(root, why, whylen);
	if (!ret)
		ret = private_dir(p->dir, why, whylen);
	return ret;
}

int ibemu_runtime_lock(const struct ibemu_runtime_paths *p)
{
	struct stat fst, pst;
	int fd;

	for (;;) {
		fd = open(p->lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			int err = errno == EWOULDBLOCK ? -EBUSY : -errno;

			close(fd);
			return err;
		}
		/*
		 * A daemon that was stopping may have unlinked the file we
		 * opened: then we hold a lock nobody else can see. Retry on
		 * the file that is at the path now.
		 */
		if (!fstat(fd, &fst) && !stat(p->lock, &pst) &&
		    fst.st_ino == pst.st_ino && fst.st_dev == pst.st_dev)
			return fd;
		close(fd);
	}
}

void ibemu_runtime_release(const struct ibemu_runtime_paths *p, int lock_fd)
{
	unlink(p->sock);
	unlink(p->pid);
	/* The SM's LIDs and state die with the fabric: the next one starts
	 * afresh. */
	unlink(p->sm_status);
	unlink(p->guid2lid);
	unlink(p->sl_map);
	unlink(p->sm_report);
	unlink(p->sm_lfts);
	unlink(p->sm_subnet);
	unlink(p->cc_conf);
	/* Unlink while still locked, so no one can lock the old file. */
	unlink(p->lock);
	if (lock_fd >= 0)
		close(lock_fd);
}

int ibemu_runtime_other_owner(const char *name, char *why, size_t whylen)
{
	struct ibemu_runtime_paths p;
	const char *what = "socket";
	const char *path;
	struct stat st;

	if (ibemu_runtime_paths(name, &p))
		return 0;
	path = p.sock;
	/* A directory of another user (0700) hides the socket itself. */
	if (stat(path, &st)) {
		what = "directory";
		path = p.dir;
		if (stat(path, &st)) {
			if (errno != EACCES)
				return 0;
			/* Not even its owner can be seen: a parent of
			 * another user's, closed to others. */
			snprintf(why, whylen,
				 "permission denied: fabric '%s' cannot be "
				 "reached (%s: %s); only its owner may use it",
				 name, path, strerror(EACCES));
			return 1;
		}
	}
	if (st.st_uid == getuid())
		return 0;
	snprintf(why, whylen,
		 "permission denied: fabric '%s' belongs to uid %u (its %s "
		 "is %s); only its owner may use it",
		 name, (unsigned)st.st_uid, what, path);
	return 1;
}

int ibemu_runtime_running(const char *name)
{
	struct ibemu_runtime_paths p;
	int fd, running;

	if (ibemu_runtime_paths(name, &p))
		return 0;
	fd = open(p.lock, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	running = flock(fd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK;
	close(fd);
	return running;
}

pid_t ibemu_runtime_pid(const char *name)
{
	struct ibemu_runtime_paths p;
	long pid = 0;
	FILE *f;

	if (ibemu_runtime_paths(name, &p))
		return 0;
	f = fopen(p.pid, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = 0;
	fclose(f);
	return (pid_t)pid;
}

void ibemu_runtime_explain(int err, const char *name, char *why, size_t whylen)
{
	char root[IBEMU_PATH_MAX];
	const char *env = getenv("IBEMU_RUNTIME_DIR");
	const char *bad;
	struct ibemu_buf b;

	ibemu_buf_init(&b);
	ibemu_buf_escape(&b, name, 80);
	if (ibemu_runtime_root(root, sizeof(root)) == -EINVAL)
		snprintf(why, whylen,
			 "IBEMU_RUNTIME_DIR must be an absolute path, not "
			 "'%s'",
			 env);
	else if (ibemu_fabric_name_check(name, &bad))
		snprintf(why, whylen,
			 "'%s' is not a valid fabric name: %s (a name is "
			 "%s)",
			 b.data ? b.data : "", bad, IBEMU_FABRIC_NAME_RULE);
	else if (err == -ENAMETOOLONG)
		snprintf(why, whylen,
			 "the runtime paths of fabric '%s' are longer than "
			 "%d bytes (the limit of a socket path); choose a "
			 "shorter name or IBEMU_RUNTIME_DIR",
			 name, IBEMU_PATH_MAX - 1);
	else
		snprintf(why, whylen, "fabric '%s': %s", b.data ? b.data : "",
			 strerror(-err));
	ibemu_buf_fini(&b);
}

/* Removes the files of issm/ and the directory. */
static void remove_issm(const struct ibemu_runtime_paths *p)
{
	char dir[IBEMU_PATH_MAX + 8], path[IBEMU_PATH_MAX + 300];
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/issm", p->dir);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

void ibemu_runtime_cleanup(const struct ibemu_runtime_paths *p, int lock_fd)
{
	char sess[IBEMU_PATH_MAX + 16];

	snprintf(sess, sizeof(sess), "%s/sess.sock", p->dir);
	unlink(sess);
	remove_issm(p);
	ibemu_runtime_release(p, lock_fd);
}

int ibemu_runtime_holder(const struct ibemu_runtime_paths *p, pid_t pid)
{
	char dir[64], path[64 + 256];
	struct stat lst, fst;
	struct dirent *e;
	int found = 0;
	DIR *d;

	if (pid <= 0 || stat(p->lock, &lst))
		return 0;
	snprintf(dir, sizeof(dir), "/proc/%ld/fd", (long)pid);
	d = opendir(dir);
	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		found = !stat(path, &fst) && fst.st_dev == lst.st_dev &&
			fst.st_ino == lst.st_ino;
	}
	closedir(d);
	return found;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ibemu_runtime_list(char ***names, size_t *count)
{
	char root[IBEMU_PATH_MAX];
	char **list = NULL, **grown;
	size_t n = 0;
	struct dirent *e;
	DIR *dir;
	int ret;

	*names = NULL;
	*count = 0;
	ret = ibemu_runtime_root(root, sizeof(root));
	if (ret)
		return ret;
	dir = opendir(root);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(dir))) {
		const char *why;

		if (ibemu_fabric_name_check(e->d_name, &why) ||
		    !ibemu_runtime_running(e->d_name))
			continue;
		grown = realloc(list, (n + 1) * sizeof(*list));
		if (!grown)
			goto err_nomem;
		list = grown;
		list[n] = strdup(e->d_name);
		if (!list[n])
			goto err_nomem;
		n++;
	}
	closedir(dir);
	if (n > 1)
		qsort(list, n, sizeof(*list), cmp_names);
	*names = list;
	*count = n;
	return 0;

err_nomem:
	closedir(dir);
	ibemu_runtime_list_free(list, n);
	return -ENOMEM;
}

void ibemu_runtime_list_free(char **names, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++)
		free(names[i]);
	free(names);
}
