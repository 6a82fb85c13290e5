// SPDX-License-Identifier: MIT
/* Runtime directories and the fabric lock. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fabric_name.h"
#include "runtime.h"
#include "unit.h"
#include "util.h"

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
	T_EQ_INT(ibemu_runtime_paths(name, &p), -EINVAL);
	/* Names that are not one plain path component. */
	T_EQ_INT(ibemu_runtime_paths(".", &p), -EINVAL);
	T_EQ_INT(ibemu_runtime_paths("..", &p), -EINVAL);
	T_EQ_INT(ibemu_runtime_paths("a/b", &p), -EINVAL);
	T_EQ_INT(ibemu_runtime_paths("", &p), -EINVAL);
	T_EQ_INT(ibemu_runtime_paths("-f", &p), -EINVAL);
	T_EQ_INT(ibemu_runtime_paths("a\033b", &p), -EINVAL);
	/* The longest name under a long root overflows sun_path. */
	memset(name, 'x', IBEMU_FABRIC_NAME_MAX);
	name[IBEMU_FABRIC_NAME_MAX] = '\0';
	T_EQ_INT(ibemu_runtime_paths(name, &p), 0);
	setenv("IBEMU_RUNTIME_DIR",
	       "/tmp/a-runtime-root-long-enough-to-overflow", 1);
	T_EQ_INT(ibemu_runtime_paths(name, &p), -ENAMETOOLONG);
	/* A relative root would depend on the working directory. */
	setenv("IBEMU_RUNTIME_DIR", "relative/root", 1);
	T_EQ_INT(ibemu_runtime_paths("fab", &p), -EINVAL);
	setenv("IBEMU_RUNTIME_DIR", root, 1);
	rmdir(root);
}

static void test_fabric_names(void)
{
	static const struct {
		const char *name;
		int ok;
	} cases[] = {
		{"fab", 1},
		{"a.b+c_d-e", 1},
		{"x..y", 1},
		{"", 0},
		{".", 0},
		{"..", 0},
		{".x", 0},
		{"-x", 0},
		{"a/b", 0},
		{"a\tb", 0},
		{"a\x7f", 0},
		{"a b", 0},
		{"\xc3\xa9t\xc3\xa9", 0},
	};
	char longest[IBEMU_FABRIC_NAME_MAX + 2];
	const char *why;
	size_t i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(cases); i++) {
		T_EQ_INT(ibemu_fabric_name_check(cases[i].name, &why),
			 cases[i].ok ? 0 : -EINVAL);
		T_TRUE(cases[i].ok ? why == NULL : why != NULL);
	}
	memset(longest, 'n', sizeof(longest) - 1);
	longest[IBEMU_FABRIC_NAME_MAX] = '\0';
	T_EQ_INT(ibemu_fabric_name_check(longest, &why), 0);
	longest[IBEMU_FABRIC_NAME_MAX] = 'n';
	longest[IBEMU_FABRIC_NAME_MAX + 1] = '\0';
	T_EQ_INT(ibemu_fabric_name_check(longest, &why), -EINVAL);
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

void ibemu_test_register_daemon_runtime(void)
{
	static const struct ibemu_test tests[] = {
		{"paths", test_paths},
		{"fabric_names", test_fabric_names},
		{"lock_is_exclusive", test_lock_is_exclusive},
		{"unsafe_dir_refused", test_unsafe_dir_refused},
		{NULL, NULL},
	};

	ibemu_test_add_suite("daemon.runtime", tests);
}
