/* SPDX-License-Identifier: MIT */
/* Whole-file reads for the loaders. */
#ifndef IBEMU_FILE_H
#define IBEMU_FILE_H

#include <stddef.h>

/*
 * Reads the file at 'path' into a new NUL-terminated buffer (*data, freed by
 * the caller) of *len bytes. Returns 0 or -errno. Refuses files over 1 GiB.
 */
int ibemu_file_read(const char *path, char **data, size_t *len);

#endif
