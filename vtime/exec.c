// SPDX-License-Identifier: MIT
/*
 * Programs this one starts. The kernel keeps the TSC trap across exec,
 * and the dynamic loader of the new image reads the TSC before this
 * library is loaded into it again (LD_PRELOAD, from the environment it
 * inherits) and installs the handler: the calling thread lets the TSC
 * run free for the exec family, posix_spawn, system and popen (whose
 * child is a copy of that thread), and traps it again when they return.
 * A child made by fork() alone keeps the trap and the handler, and stays
 * virtual.
 */
#include <alloca.h>
#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "vtime_int.h"

/* The next definition of 'name' (libc's), looked up once per caller. */
#define REAL(name, type)          \
	static type *real_##name; \
	if (!real_##name)         \
	real_##name = (type *)dlsym(RTLD_NEXT, #name)

/* Runs 'call' with the TSC released, keeping the errno it set. */
#define UNTRAPPED(ret, call)                \
	do {                                \
		int e_;                     \
		ibemu__vtime_tsc_release(); \
		ret = call;                 \
		e_ = errno;                 \
		ibemu__vtime_tsc_retrap();  \
		errno = e_;                 \
	} while (0)

typedef int execve_fn(const char *, char *const[], char *const[]);
typedef int execvp_fn(const char *, char *const[]);
typedef int fexecve_fn(int, char *const[], char *const[]);
typedef int spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *,
		     const posix_spawnattr_t *, char *const[], char *const[]);
typedef int system_fn(const char *);
typedef FILE *popen_fn(const char *, const char *);

IBEMU_VTIME_EXPORT int execve(const char *path, char *const argv[],
			      char *const envp[])
{
	int ret;
	REAL(execve, execve_fn);

	UNTRAPPED(ret, real_execve(path, argv, envp));
	return ret;
}

IBEMU_VTIME_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

IBEMU_VTIME_EXPORT int execvpe(const char *file, char *const argv[],
			       char *const envp[])
{
	int ret;
	REAL(execvpe, execve_fn);

	UNTRAPPED(ret, real_execvpe(file, argv, envp));
	return ret;
}

IBEMU_VTIME_EXPORT int execvp(const char *file, char *const argv[])
{
	int ret;
	REAL(execvp, execvp_fn);

	UNTRAPPED(ret, real_execvp(file, argv));
	return ret;
}

IBEMU_VTIME_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	int ret;
	REAL(fexecve, fexecve_fn);

	UNTRAPPED(ret, real_fexecve(fd, argv, envp));
	return ret;
}

/*
 * The arguments of an execl-family call as an argv, on the stack (no
 * allocation: the caller may be a vfork child); *envp gets the
 * environment execle passes after the NULL.
 */
#define LIST_ARGV(argv, arg0, last, with_env, envp)       \
	do {                                              \
		va_list ap_;                              \
		size_t n_ = 1;                            \
		va_start(ap_, last);                      \
		while (va_arg(ap_, char *))               \
			n_++;                             \
		va_end(ap_);                              \
		argv = alloca((n_ + 1) * sizeof(char *)); \
		argv[0] = (char *)(arg0);                 \
		va_start(ap_, last);                      \
		for (size_t i_ = 1; i_ <= n_; i_++)       \
			argv[i_] = va_arg(ap_, char *);   \
		if (with_env)                             \
			envp = va_arg(ap_, char **);      \
		va_end(ap_);                              \
	} while (0)

IBEMU_VTIME_EXPORT int execl(const char *path, const char *arg, ...)
{
	char **argv, **envp = environ;

	LIST_ARGV(argv, arg, arg, 0, envp);
	return execve(path, argv, envp);
}

IBEMU_VTIME_EXPORT int execle(const char *path, const char *arg, ...)
{
	char **argv, **envp = environ;

	LIST_ARGV(argv, arg, arg, 1, envp);
	return execve(path, argv, envp);
}

IBEMU_VTIME_EXPORT int execlp(const char *file, const char *arg, ...)
{
	char **argv, **envp = environ;

	LIST_ARGV(argv, arg, arg, 0, envp);
	(void)envp;
	return execvp(file, argv);
}

IBEMU_VTIME_EXPORT int posix_spawn(pid_t *pid, const char *path,
				   const posix_spawn_file_actions_t *fa,
				   const posix_spawnattr_t *attr,
				   char *const argv[], char *const envp[])
{
	int ret;
	REAL(posix_spawn, spawn_fn);

	UNTRAPPED(ret, real_posix_spawn(pid, path, fa, attr, argv, envp));
	return ret;
}

IBEMU_VTIME_EXPORT int posix_spawnp(pid_t *pid, const char *file,
				    const posix_spawn_file_actions_t *fa,
				    const posix_spawnattr_t *attr,
				    char *const argv[], char *const envp[])
{
	int ret;
	REAL(posix_spawnp, spawn_fn);

	UNTRAPPED(ret, real_posix_spawnp(pid, file, fa, attr, argv, envp));
	return ret;
}

IBEMU_VTIME_EXPORT int system(const char *command)
{
	int ret;
	REAL(system, system_fn);

	UNTRAPPED(ret, real_system(command));
	return ret;
}

IBEMU_VTIME_EXPORT FILE *popen(const char *command, const char *type)
{
	FILE *ret;
	REAL(popen, popen_fn);

	UNTRAPPED(ret, real_popen(command, type));
	return ret;
}
