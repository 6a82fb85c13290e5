/* SPDX-License-Identifier: MIT */
/*
 * How a client library reaches the daemon's session socket: one connection
 * of the kind sess_proto.h describes, with the call timeout every client
 * uses. Header-only and libc-only, like the rest of proto/, so that umad/
 * and verbs/ share it without sharing a library.
 */
#ifndef IBEMU_SESS_CONNECT_H
#define IBEMU_SESS_CONNECT_H

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

/* A call the daemon does not answer within this fails (ETIMEDOUT/EAGAIN). */
#define IBEMU_SESS_CALL_TIMEOUT_S 30

/*
 * Connects to the session socket at 'path' with send and receive timeouts
 * of IBEMU_SESS_CALL_TIMEOUT_S. Returns the fd, -ENAMETOOLONG if 'path'
 * cannot be a socket path, or the -errno of socket() or connect() (the
 * caller says why to its user: -ENOENT or -ECONNREFUSED mean no fabric).
 */
static inline int ibemu_sess_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = IBEMU_SESS_CALL_TIMEOUT_S};
	size_t len = strlen(path);
	int fd, ret;

	if (len >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, len + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

#endif
