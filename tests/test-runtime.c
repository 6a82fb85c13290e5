// SPDX-License-Identifier: MIT
/* Runtime directories and the fabric lock. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime.h"
#include "unit.h"

static char root[64];

static void setup_root(void)
{
	snprintf(root, sizeof(root), "/tmp/ibemu-unit-XXXXXX");
	T_TRUE(mkdtemp(root) != NULL);
	setenv("IBEMU_RUNTIME_DIR", root, 1);
}

static void test_paths(void)
{
	struct ibemu_runtime_paths p;
	char name[200];

	setup_root();
	T_EQ_INT(ibemu_runtime_paths("fab", &p), 0);
	T_TRUE(strstr(p.sock, "/fab/ctl.sock") != NULL);
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	T_EQ_INT(ibemu_runtime_paths(name, &p), -ENAMETOOLONG);
	rmdir(root);
}

static void test_lock_is_exclusive(void)
{
	struct ibemu_runtime_paths p;
	char why[256];
	char **names;
	size_t n;
	int fd, status;
	pid_t pid;

	setup_root();
	T_EQ_INT(ibemu_runtime_paths("locked", &p), 0);
	T_EQ_INT(ibemu_runtime_prepare(&p, why, sizeof(why)), 0);
	fd = ibemu_runtime_lock(&p);
	T_TRUE(fd >= 0);
	T_EQ_INT(ibemu_runtime_running("locked"), 1);
	/* Another process cannot take it while we hold it. */
	pid = fork();
	if (pid == 0)
		_exit(ibemu_runtime_lock(&p) == -EBUSY ? 0 : 1);
	T_EQ_INT(waitpid(pid, &status, 0), pid);
	T_EQ_INT(WEXITSTATUS(status), 0);
	T_EQ_INT(ibemu_runtime_list(&names, &n), 0);
	T_EQ_INT(n, 1);
	if (n == 1)
		T_EQ_STR(names[0], "locked");
	ibemu_runtime_list_free(names, n);
	ibemu_runtime_release(&p, fd);
	T_EQ_INT(ibemu_runtime_running("locked"), 0);
	T_EQ_INT(access(p.lock, F_OK), -1);
	rmdir(p.dir);
	rmdir(root);
}

static void test_unsafe_dir_refused(void)
{
	struct ibemu_runtime_paths p;
	char why[256] = "";

	setup_root();
	T_EQ_INT(ibemu_runtime_paths("open", &p), 0);
	T_EQ_INT(mkdir(p.dir, 0777), 0);
	T_EQ_INT(chmod(p.dir, 0777), 0);
	T_EQ_INT(ibemu_runtime_prepare(&p, why, sizeof(why)), -EPERM);
	T_TRUE(strstr(why, "not writable by others") != NULL);
	rmdir(p.dir);
	rmdir(root);
}

void ibemu_test_register_runtime(void)
{
	static const struct ibemu_test tests[] = {
		{"paths", test_paths},
		{"lock_is_exclusive", test_lock_is_exclusive},
		{"unsafe_dir_refused", test_unsafe_dir_refused},
		{NULL, NULL},
	};

	ibemu_test_add_suite("runtime", tests);
}
