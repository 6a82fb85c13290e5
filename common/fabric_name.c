// SPDX-License-Identifier: MIT
/*
 * Fabric names as path components. "." and ".." would put a fabric's
 * socket, lock and pid file in the runtime root or its parent, "/" would
 * reach into other directories, a leading '-' reads as an option to the
 * tools a user runs on the directory, and control characters reach the
 * terminal: the rule admits none of them.
 */
#include <errno.h>
#include <string.h>

#include "fabric_name.h"

static int allowed(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' ||
	       c == '+';
}

int ibemu_fabric_name_check(const char *name, const char **why)
{
	const char *p;

	*why = NULL;
	if (!*name)
		*why = "it is empty";
	else if (!strcmp(name, ".") || !strcmp(name, ".."))
		*why = "'.' and '..' name directories, not fabrics";
	else if (name[0] == '.')
		*why = "it starts with '.' (such a directory is hidden)";
	else if (name[0] == '-')
		*why = "it starts with '-' (it would read as an option)";
	else if (strlen(name) > IBEMU_FABRIC_NAME_MAX)
		*why = "it is longer than 63 bytes";
	for (p = name; !*why && *p; p++) {
		if (*p == '/')
			*why = "it holds '/' (a name is one path component)";
		else if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*why = "it holds a control character";
		else if (!allowed(*p))
			*why = "it holds a character other than letters, "
			       "digits, '_', '-', '.' and '+'";
	}
	return *why ? -EINVAL : 0;
}
