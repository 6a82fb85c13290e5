// SPDX-License-Identifier: MIT
/*
 * Blocking control client. One connection carries a HELLO exchange and then
 * any number of request/answer rounds.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_client.h"
#include "ctl_proto.h"
#include "runtime.h"

/* SO_RCVTIMEO and SO_SNDTIMEO end a blocked call with EAGAIN. */
static int timed_out(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return timed_out() ? -ETIMEDOUT : -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_all(int fd, void *data, size_t len)
{
	char *p = data;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return timed_out() ? -ETIMEDOUT : -errno;
		if (n == 0)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int send_msg(int fd, uint16_t type, const void *payload, size_t len)
{
	struct ibemu_ctl_hdr hdr = {
		.magic = IBEMU_CTL_MAGIC,
		.version = IBEMU_CTL_VERSION,
		.type = type,
		.len = (uint32_t)len,
	};
	int ret = write_all(fd, &hdr, sizeof(hdr));

	return ret ? ret : write_all(fd, payload, len);
}

/* Receives one message; *payload is NUL-terminated and owned by the caller. */
static int recv_msg(int fd, struct ibemu_ctl_hdr *hdr, char **payload)
{
	int ret = read_all(fd, hdr, sizeof(*hdr));

	*payload = NULL;
	if (ret)
		return ret;
	if (hdr->magic != IBEMU_CTL_MAGIC || hdr->len > IBEMU_CTL_MAX_REPLY)
		return -EPROTO;
	*payload = malloc((size_t)hdr->len + 1);
	if (!*payload)
		return -ENOMEM;
	ret = read_all(fd, *payload, hdr->len);
	if (ret) {
		free(*payload);
		*payload = NULL;
		return ret;
	}
	(*payload)[hdr->len] = '\0';
	return 0;
}

/* Every blocking call on 'fd' gives up after 'ms' (0: never). */
static int set_timeout(int fd, unsigned ms)
{
	struct timeval tv = {.tv_sec = ms / 1000,
			     .tv_usec = (long)(ms % 1000) * 1000};

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		return -errno;
	return 0;
}

void ibemu_ctl_timeout_text(const char *name, unsigned timeout_ms, char *why,
			    size_t whylen)
{
	pid_t pid = ibemu_runtime_pid(name);
	char who[48] = "its daemon";

	if (pid > 0)
		snprintf(who, sizeof(who), "its daemon (pid %ld)", (long)pid);
	snprintf(why, whylen,
		 "fabric '%s': %s did not answer within %u.%03u s; it may be "
		 "stopped or busy ('ibemu down' stops it anyway; "
		 "IBEMU_TIMEOUT=SECONDS waits longer)",
		 name, who, timeout_ms / 1000, timeout_ms % 1000);
}

int ibemu_ctl_connect(const char *name, unsigned timeout_ms, char *why,
		      size_t whylen)
{
	struct ibemu_runtime_paths p;
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct ibemu_ctl_hdr hdr;
	char *payload;
	int fd, ret;

	ret = ibemu_runtime_paths(name, &p);
	if (ret) {
		ibemu_runtime_explain(ret, name, why, whylen);
		return ret;
	}
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", p.sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, whylen, "socket: %s", strerror(errno));
		return -errno;
	}
	/* A connect to a daemon whose backlog is full waits as long. */
	ret = set_timeout(fd, timeout_ms);
	if (ret) {
		snprintf(why, whylen, "setsockopt: %s", strerror(-ret));
		goto err_close;
	}
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		ret = timed_out() ? -ETIMEDOUT : -errno;
		if (ret == -ETIMEDOUT)
			ibemu_ctl_timeout_text(name, timeout_ms, why, whylen);
		else if (ret == -EACCES &&
			 ibemu_runtime_other_owner(name, why, whylen))
			;
		else if (ret == -ENOENT || ret == -ECONNREFUSED)
			snprintf(why, whylen,
				 "fabric '%s' is not running (no daemon "
				 "listens on %s)",
				 name, p.sock);
		else
			snprintf(why, whylen, "cannot connect to %s: %s",
				 p.sock, strerror(-ret));
		goto err_close;
	}
	ret = send_msg(fd, IBEMU_CTL_HELLO, NULL, 0);
	/* A daemon out of file descriptors refuses with an ERROR in place of
	 * the HELLO and may have closed before we wrote: read it anyway. */
	if (!ret || ret == -EPIPE || ret == -ECONNRESET)
		ret = recv_msg(fd, &hdr, &payload);
	if (ret) {
		if (ret == -ETIMEDOUT)
			ibemu_ctl_timeout_text(name, timeout_ms, why, whylen);
		else if (!ibemu_runtime_other_owner(name, why, whylen))
			snprintf(why, whylen,
				 "fabric '%s': no greeting from daemon: %s",
				 name, strerror(-ret));
		goto err_close;
	}
	if (hdr.type != IBEMU_CTL_HELLO) {
		snprintf(why, whylen, "fabric '%s': %s", name,
			 hdr.type == IBEMU_CTL_ERROR ? payload
						     : "unexpected greeting");
		free(payload);
		ret = -EPROTO;
		goto err_close;
	}
	free(payload);
	return fd;

err_close:
	close(fd);
	return ret;
}

int ibemu_ctl_call(int fd, int argc, char *const *argv, char **text,
		   ibemu_ctl_progress_cb *progress, void *arg)
{
	struct ibemu_ctl_hdr hdr;
	size_t len = 0, off = 0;
	char *req;
	int i, ret;

	*text = NULL;
	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	if (len > IBEMU_CTL_MAX_REQUEST || argc > (int)IBEMU_CTL_MAX_ARGS)
		return -E2BIG;
	req = malloc(len ? len : 1);
	if (!req)
		return -ENOMEM;
	for (i = 0; i < argc; i++) {
		size_t n = strlen(argv[i]) + 1;

		memcpy(req + off, argv[i], n);
		off += n;
	}
	ret = send_msg(fd, IBEMU_CTL_REQUEST, req, len);
	free(req);
	if (ret)
		return ret;
	for (;;) {
		ret = recv_msg(fd, &hdr, text);
		if (ret)
			return ret;
		if (hdr.type != IBEMU_CTL_PROGRESS)
			break;
		if (progress)
			progress(*text, arg);
		free(*text);
		*text = NULL;
	}
	if (hdr.type == IBEMU_CTL_REPLY)
		return 0;
	if (hdr.type == IBEMU_CTL_ERROR)
		return hdr.status ? hdr.status : 1;
	free(*text);
	*text = NULL;
	return -EPROTO;
}
