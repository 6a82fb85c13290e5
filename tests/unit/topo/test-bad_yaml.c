// SPDX-License-Identifier: MIT
/*
 * The bad-input corpus of the topology YAML loader: every file in
 * tests/data/bad-yaml/ holds one mistake and says on its first line, as
 * "# expect: LINE:COL: error: MESSAGE", the exact error the loader must give.
 * Every prefix of every file must also load or fail cleanly (no crash, no
 * leak, a message for every failure).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "topo.h"
#include "unit.h"
#include "yaml.h"

#define CORPUS	    IBEMU_TEST_SRCDIR "/tests/data/bad-yaml"
#define MIN_FILES   25
#define EXPECT_MARK "# expect: "

static int is_yaml(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return n > 5 && !strcmp(e->d_name + n - 5, ".yaml");
}

/* Lists the corpus in name order; the caller frees the list. */
static int corpus(struct dirent ***list)
{
	int n = scandir(CORPUS, list, is_yaml, alphasort);

	T_TRUE(n >= 0);
	return n < 0 ? 0 : n;
}

static void free_list(struct dirent **list, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

/* "<path>:" and the text after the mark of the first line. */
static char *expected_error(const char *path, const char *data)
{
	const char *end = strchr(data, '\n');
	size_t plen = strlen(path), mlen = strlen(EXPECT_MARK), n;
	char *s;

	if (strncmp(data, EXPECT_MARK, mlen) || !end)
		return NULL;
	n = (size_t)(end - data) - mlen;
	s = malloc(plen + 1 + n + 1);
	if (!s)
		return NULL;
	memcpy(s, path, plen);
	s[plen] = ':';
	memcpy(s + plen + 1, data + mlen, n);
	s[plen + 1 + n] = '\0';
	return s;
}

static void test_corpus(void)
{
	struct dirent **list = NULL;
	int n = corpus(&list), i;

	T_TRUE(n >= MIN_FILES);
	for (i = 0; i < n; i++) {
		char path[4096], *data = NULL, *want;
		struct ibemu_topo *t = NULL;
		struct ibemu_diag d;
		size_t len;
		int ret;

		snprintf(path, sizeof(path), "%s/%s", CORPUS, list[i]->d_name);
		T_EQ_INT(ibemu_file_read(path, &data, &len), 0);
		if (!data)
			continue;
		want = expected_error(path, data);
		if (!want)
			fprintf(stderr, "%s: no '%s' first line\n", path,
				EXPECT_MARK);
		T_TRUE(want != NULL);
		ibemu_diag_init(&d);
		ret = ibemu_yaml_load_file(path, &t, &d);
		T_EQ_INT(ret, -EINVAL);
		T_TRUE(t == NULL);
		if (want)
			T_EQ_STR(d.error, want);
		ibemu_topo_destroy(t);
		ibemu_diag_fini(&d);
		free(want);
		free(data);
	}
	free_list(list, n);
}

/* Truncated files are the likeliest bad input of all: cut every corpus file
 * at every byte and check each cut loads or fails with a message. */
static void test_every_prefix(void)
{
	struct dirent **list = NULL;
	int n = corpus(&list), i;

	for (i = 0; i < n; i++) {
		char path[4096], *data = NULL;
		size_t len, cut;

		snprintf(path, sizeof(path), "%s/%s", CORPUS, list[i]->d_name);
		if (ibemu_file_read(path, &data, &len))
			continue;
		for (cut = 0; cut <= len; cut++) {
			struct ibemu_topo *t = NULL;
			struct ibemu_diag d;
			int ret;

			ibemu_diag_init(&d);
			ret = ibemu_yaml_load(path, data, cut, &t, &d);
			if (ret) {
				T_TRUE(d.error != NULL);
				T_TRUE(t == NULL);
			} else {
				T_TRUE(d.error == NULL && t != NULL);
			}
			ibemu_topo_destroy(t);
			ibemu_diag_fini(&d);
		}
		free(data);
	}
	free_list(list, n);
}

/* A file that cannot be read is reported by name, with the reason. */
static void test_unreadable(void)
{
	const char *path = CORPUS "/no-such-file.yaml";
	struct ibemu_topo *t = NULL;
	struct ibemu_diag d;
	char *want = NULL;

	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_yaml_load_file(path, &t, &d), -ENOENT);
	T_TRUE(asprintf(&want, "%s: error: cannot read: %s", path,
			strerror(ENOENT)) > 0);
	T_EQ_STR(d.error, want);
	T_TRUE(t == NULL);
	free(want);
	ibemu_diag_fini(&d);

	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_yaml_load_file(CORPUS, &t, &d), -EISDIR);
	T_TRUE(d.error && strstr(d.error, "cannot read: "));
	ibemu_diag_fini(&d);
}

void ibemu_test_register_topo_bad_yaml(void)
{
	static const struct ibemu_test tests[] = {
		{"corpus", test_corpus},
		{"every_prefix", test_every_prefix},
		{"unreadable", test_unreadable},
		{NULL, NULL},
	};

	ibemu_test_add_suite("topo.bad_yaml", tests);
}
