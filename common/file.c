// SPDX-License-Identifier: MIT
/* Whole-file reads: topology files are read once, parsed from memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "file.h"

int ibemu_file_read(const char *path, char **data, size_t *len)
{
	struct stat st;
	size_t got = 0;
	char *buf;
	FILE *f;
	int ret = 0;

	f = fopen(path, "rb");
	if (!f)
		return -errno;
	if (fstat(fileno(f), &st)) {
		ret = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		ret = -EISDIR;
		goto out;
	}
	if (st.st_size > (1 << 30)) {
		ret = -EFBIG;
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	got = fread(buf, 1, (size_t)st.st_size, f);
	if (ferror(f)) {
		free(buf);
		ret = -EIO;
		goto out;
	}
	buf[got] = '\0';
	*data = buf;
	*len = got;
out:
	fclose(f);
	return ret;
}
