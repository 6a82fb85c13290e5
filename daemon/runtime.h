/* SPDX-License-Identifier: MIT */
/*
 * Where a fabric lives while it runs: one directory per fabric under a
 * per-user root, holding the control socket, the lock that makes a daemon
 * the only owner of its name, its pid and its log.
 */
#ifndef IBEMU_RUNTIME_H
#define IBEMU_RUNTIME_H

#include <stddef.h>
#include <sys/types.h>

#define IBEMU_PATH_MAX 108 /* sun_path: socket paths must fit */
/* Files that are not sockets, whose names may be longer than sess.sock. */
#define IBEMU_FILE_PATH_MAX 160

struct ibemu_runtime_paths {
	char dir[IBEMU_PATH_MAX];
	char sock[IBEMU_PATH_MAX];
	char lock[IBEMU_PATH_MAX];
	char pid[IBEMU_PATH_MAX];
	char log[IBEMU_PATH_MAX];
	/* What 'ibemu up' runs ibemu-sm with: its status, log, LIDs. */
	char sm_status[IBEMU_PATH_MAX];
	char sm_log[IBEMU_PATH_MAX];
	char guid2lid[IBEMU_PATH_MAX];
	/* The SL of each path, as the SM publishes it (ibemu-sm --sl-dump):
	 * what traffic studies take when no --sl or --sl-map says. */
	char sl_map[IBEMU_PATH_MAX];
	/* ibemu-sm's --report, and the dumps its --dump-dir (the fabric's
	 * directory) gets, as OpenSM names them. */
	char sm_report[IBEMU_FILE_PATH_MAX];
	char sm_lfts[IBEMU_FILE_PATH_MAX];
	char sm_subnet[IBEMU_FILE_PATH_MAX];
	/* The congestion control policy 'ibemu up' gives ibemu-sm
	 * (--cc-config), in OpenSM's option syntax: OpenSM reads it too. */
	char cc_conf[IBEMU_FILE_PATH_MAX];
};

/*
 * Fills 'root' with the runtime root: $IBEMU_RUNTIME_DIR, else
 * $XDG_RUNTIME_DIR/ibemu, else /tmp/ibemu-UID. Returns 0, -EINVAL if
 * $IBEMU_RUNTIME_DIR is not an absolute path, or -ENAMETOOLONG.
 */
int ibemu_runtime_root(char *root, size_t len);

/*
 * Fills the paths of fabric 'name'. Returns 0, -EINVAL for a name that
 * breaks the rule of common/fabric_name.h or a relative root, or
 * -ENAMETOOLONG (the socket paths must fit sun_path).
 */
int ibemu_runtime_paths(const char *name, struct ibemu_runtime_paths *p);

/* Says in 'why' what an error 'err' of ibemu_runtime_paths() meant. */
void ibemu_runtime_explain(int err, const char *name, char *why, size_t whylen);

/*
 * Creates the root and the fabric directory (mode 0700) and checks that they
 * belong to this user and are not writable by others. Returns 0 or -errno;
 * on error 'why' says what is wrong.
 */
int ibemu_runtime_prepare(const struct ibemu_runtime_paths *p, char *why,
			  size_t whylen);

/*
 * Takes the fabric's lock without waiting. Returns the locked fd, -EBUSY if
 * a live daemon holds it, or another -errno. The lock dies with its process,
 * so a killed daemon never leaves a fabric locked.
 */
int ibemu_runtime_lock(const struct ibemu_runtime_paths *p);

/* Removes the fabric's files (lock last) and closes the lock fd. */
void ibemu_runtime_release(const struct ibemu_runtime_paths *p, int lock_fd);

/*
 * Removes everything a daemon leaves in its fabric directory when it is
 * killed: both sockets, the issm/ files, the pid file and (last) the lock,
 * then closes 'lock_fd'. The caller holds the lock (ibemu_runtime_lock()).
 */
void ibemu_runtime_cleanup(const struct ibemu_runtime_paths *p, int lock_fd);

/*
 * Returns 1 if process 'pid' has the fabric's lock file open, which tells
 * its daemon from an unrelated process that reuses a stale pid.
 */
int ibemu_runtime_holder(const struct ibemu_runtime_paths *p, pid_t pid);

/*
 * Returns 1, with "permission denied: fabric 'name' belongs to uid U
 * (...); only its owner may use it" in 'why', if the fabric's socket (or,
 * when that cannot be reached, its directory) belongs to another user;
 * else 0. The daemon refuses other users anyway: this names the reason
 * before a client tries.
 */
int ibemu_runtime_other_owner(const char *name, char *why, size_t whylen);

/* Returns 1 if a live daemon holds the lock of fabric 'name'. */
int ibemu_runtime_running(const char *name);

/* Reads the pid file of fabric 'name'; 0 if unknown. */
pid_t ibemu_runtime_pid(const char *name);

/*
 * Lists the fabrics with a live daemon: *names is a sorted array of *count
 * strings; free with ibemu_runtime_list_free(). Returns 0 or -errno.
 */
int ibemu_runtime_list(char ***names, size_t *count);
void ibemu_runtime_list_free(char **names, size_t count);

#endif
