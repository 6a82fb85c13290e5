// SPDX-License-Identifier: MIT
/*
 * A listening Unix socket of the daemon (ctl.sock, sess.sock): created
 * owner-only, watched with uv_poll, and accepted by hand so that running
 * out of file descriptors is handled here, once for both servers. At the
 * limit accept4() fails with EMFILE and leaves the connection queued, so
 * the socket stays readable and a level-triggered loop would spin; instead
 * the daemon gives up the fd it keeps in reserve, accepts the connection,
 * tells the client why in the server's own protocol, closes it and takes
 * the reserve back (the trick of libuv's uv__emfile_trick(), with a reason
 * the client can print). If even that fails it stops accepting a while.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon.h"

/* Connections accepted per readable event: others get their turn. */
#define ACCEPTS_PER_EVENT 64
/* How long accepting pauses when not even the reserve fd is left. */
#define PAUSE_MS 100

int ibemu__reserve_fd_open(void)
{
	return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static void resume_cb(uv_timer_t *t);
static void poll_cb(uv_poll_t *h, int status, int events);

static void pause_accepting(struct ibemu_listener *l)
{
	uv_poll_stop(&l->poll);
	uv_timer_start(&l->pause, resume_cb, PAUSE_MS, 0);
}

static void resume_cb(uv_timer_t *t)
{
	struct ibemu_listener *l = t->data;

	uv_poll_start(&l->poll, UV_READABLE, poll_cb);
}

/*
 * Reads what the refused client sent already: a socket closed with data
 * unread resets the connection, and the client would see the reset
 * before the reason.
 */
static void drain(int fd)
{
	char buf[512];
	int i;

	for (i = 0; i < 16; i++)
		if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0)
			return;
}

/*
 * accept4() failed with 'err' (EMFILE or ENFILE). Returns 1 when a waiting
 * client was refused (there may be more), 0 when accepting paused.
 */
static int out_of_fds(struct ibemu_listener *l, int err)
{
	struct ibemu_daemon *d = l->d;
	struct rlimit rl = {0};
	char why[200];
	int fd = -1;

	getrlimit(RLIMIT_NOFILE, &rl);
	snprintf(why, sizeof(why),
		 "the daemon has too many open files (%s; its limit is %llu): "
		 "detach some processes or close idle connections",
		 strerror(err), (unsigned long long)rl.rlim_cur);
	if (d->reserve_fd >= 0) {
		close(d->reserve_fd);
		do
			fd = accept4(l->fd, NULL, NULL,
				     SOCK_NONBLOCK | SOCK_CLOEXEC);
		while (fd < 0 && errno == EINTR);
		if (fd >= 0) {
			l->ops->refuse(l, fd, why);
			drain(fd);
			close(fd);
		}
		d->reserve_fd = ibemu__reserve_fd_open();
	}
	ibemu_daemon_log_limited(d, &l->full_log, "refused a %s client: %s",
				 l->what, why);
	if (fd >= 0)
		return 1;
	pause_accepting(l);
	return 0;
}

static void poll_cb(uv_poll_t *h, int status, int events)
{
	struct ibemu_listener *l = (struct ibemu_listener *)h;
	int fd, i;

	(void)events;
	if (status < 0)
		return;
	for (i = 0; i < ACCEPTS_PER_EVENT; i++) {
		fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			l->ops->accept(l, fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if ((errno == EMFILE || errno == ENFILE) &&
		    out_of_fds(l, errno))
			continue;
		return; /* EAGAIN: nothing more waits; or paused */
	}
}

static int bind_unix(const char *path, int type)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	mode_t old;
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* We hold the fabric's lock: a socket left here is a dead daemon's. */
	unlink(path);
	/* Owner-only from the moment the socket exists. */
	old = umask(0077);
	ret = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (ret || chmod(path, 0600) || listen(fd, 64)) {
		ret = -errno;
		close(fd);
		unlink(path);
		return ret;
	}
	return fd;
}

int ibemu__listener_start(struct ibemu_daemon *d, struct ibemu_listener *l,
			  const char *path, int type)
{
	int ret;

	l->d = d;
	l->fd = bind_unix(path, type);
	if (l->fd < 0)
		return l->fd;
	ret = uv_poll_init(&d->loop, &l->poll, l->fd);
	if (ret) {
		close(l->fd);
		unlink(path);
		return ret;
	}
	uv_timer_init(&d->loop, &l->pause);
	l->pause.data = l;
	l->open_handles = 2;
	uv_poll_start(&l->poll, UV_READABLE, poll_cb);
	return 0;
}

static void handle_closed_cb(uv_handle_t *h)
{
	struct ibemu_listener *l =
		h->type == UV_TIMER ? h->data : (struct ibemu_listener *)h;

	if (--l->open_handles)
		return;
	close(l->fd);
	if (l->closed)
		l->closed(l);
}

void ibemu__listener_stop(struct ibemu_listener *l,
			  void (*closed)(struct ibemu_listener *l))
{
	l->closed = closed;
	uv_poll_stop(&l->poll);
	uv_timer_stop(&l->pause);
	uv_close((uv_handle_t *)&l->poll, handle_closed_cb);
	uv_close((uv_handle_t *)&l->pause, handle_closed_cb);
}
