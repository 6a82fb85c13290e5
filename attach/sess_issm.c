// SPDX-License-Identifier: MIT
/*
 * The SM role of a port. On Linux a subnet manager claims it by opening
 * the port's issm device, and the kernel sets PortInfo:CapabilityMask.IsSM
 * for as long as the device stays open (OpenSM does exactly that). Here
 * each HCA port's issm device is an empty file, issm/HOST.PORT in the
 * fabric's runtime directory, made by umad_get_issm_path() the first time
 * it names it (so that an open() without O_CREAT works; the daemon makes
 * none up front: one file per HCA was most of a large fabric's start),
 * and the daemon watches the directory with inotify: a port whose file is
 * held open has IsSM set, through the SMA like any capability.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "daemon.h"
#include "mad_sma.h"
#include "sess.h"

/* Maps issm/HOST.PORT to an HCA port's global index; IBEMU_NONE if none. */
static uint32_t issm_port(const struct ibemu_daemon *d, const char *name)
{
	const char *dot = strrchr(name, '.');
	char host[IBEMU_SESS_HOST_LEN];
	unsigned long port;
	uint32_t node;
	char *end;

	if (!dot || dot == name || (size_t)(dot - name) >= sizeof(host))
		return IBEMU_NONE;
	memcpy(host, name, (size_t)(dot - name));
	host[dot - name] = '\0';
	port = strtoul(dot + 1, &end, 10);
	node = ibemu_topo_find(d->topo, host);
	if (*end || node == IBEMU_NONE ||
	    d->topo->nodes[node].type == IBEMU_NODE_SWITCH || port == 0 ||
	    port > d->topo->nodes[node].nports)
		return IBEMU_NONE;
	return ibemu_engine_port_index(d->engine, node, (unsigned)port);
}

static void issm_event(struct ibemu_sess_server *s,
		       const struct inotify_event *ev)
{
	struct ibemu_daemon *d = s->d;
	uint32_t pi;

	if (!ev->len || (ev->mask & IN_ISDIR))
		return;
	pi = issm_port(d, ev->name);
	if (pi == IBEMU_NONE)
		return;
	if (ev->mask & IN_OPEN) {
		if (s->issm_opens[pi]++ == 0) {
			ibemu_agent_set_port_cap(d->engine, pi,
						 IBEMU_MAD_CAP_IS_SM, 0);
			ibemu_daemon_log(d, "%s: IsSM set (an SM holds it)",
					 ev->name);
		}
	} else if (s->issm_opens[pi] && --s->issm_opens[pi] == 0) {
		ibemu_agent_set_port_cap(d->engine, pi, 0, IBEMU_MAD_CAP_IS_SM);
		ibemu_daemon_log(d, "%s: IsSM cleared", ev->name);
	}
}

static void issm_cb(uv_poll_t *h, int status, int events)
{
	struct ibemu_sess_server *s = h->data;
	char buf[4096]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	(void)events;
	if (status < 0)
		return;
	while ((n = read(s->issm_fd, buf, sizeof(buf))) > 0) {
		const char *p = buf;

		while (p < buf + n) {
			const struct inotify_event *ev =
				(const struct inotify_event *)(const void *)p;

			issm_event(s, ev);
			p += sizeof(*ev) + ev->len;
		}
	}
}

/* Removes the files the library made (whatever their names). */
static void issm_clear(struct ibemu_sess_server *s)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *dir = opendir(s->issm_dir);

	if (!dir)
		return;
	while ((e = readdir(dir))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", s->issm_dir,
			     e->d_name) < (int)sizeof(path))
			unlink(path);
	}
	closedir(dir);
}

int ibemu__sess_issm_start(struct ibemu_sess_server *s)
{
	struct ibemu_daemon *d = s->d;
	int n, ret;

	n = snprintf(s->issm_dir, sizeof(s->issm_dir), "%s/issm", d->paths.dir);
	if (n < 0 || (size_t)n >= sizeof(s->issm_dir))
		return -ENAMETOOLONG;
	s->issm_opens =
		calloc(ibemu_engine_nports(d->engine), sizeof(*s->issm_opens));
	if (!s->issm_opens)
		return -ENOMEM;
	if (mkdir(s->issm_dir, 0700) && errno != EEXIST) {
		ret = -errno;
		goto err_free;
	}
	s->issm_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (s->issm_fd < 0) {
		ret = -errno;
		goto err_dir;
	}
	if (inotify_add_watch(s->issm_fd, s->issm_dir,
			      IN_OPEN | IN_CLOSE_WRITE | IN_CLOSE_NOWRITE) <
	    0) {
		ret = -errno;
		goto err_fd;
	}
	ret = uv_poll_init(&d->loop, &s->issm_poll, s->issm_fd);
	if (ret)
		goto err_fd;
	s->issm_poll.data = s;
	uv_poll_start(&s->issm_poll, UV_READABLE, issm_cb);
	return 0;

err_fd:
	close(s->issm_fd);
err_dir:
	rmdir(s->issm_dir);
err_free:
	free(s->issm_opens);
	s->issm_opens = NULL;
	s->issm_fd = -1;
	return ret;
}

static void issm_close_cb(uv_handle_t *h)
{
	struct ibemu_sess_server *s = h->data;

	close(s->issm_fd);
	free(s->issm_opens);
	s->issm_opens = NULL;
	s->issm_fd = -1;
	ibemu__sess_server_free(s);
}

/* Removes the files, then the directory; frees once the handle closed. */
void ibemu__sess_issm_stop(struct ibemu_sess_server *s)
{
	issm_clear(s);
	rmdir(s->issm_dir);
	uv_poll_stop(&s->issm_poll);
	uv_close((uv_handle_t *)&s->issm_poll, issm_close_cb);
}

uint32_t ibemu__sess_sm_port(const struct ibemu_daemon *d)
{
	const struct ibemu_sess_server *s = d->sess;
	uint32_t pi, n = ibemu_engine_nports(d->engine);

	for (pi = 0; s && s->issm_opens && pi < n; pi++)
		if (s->issm_opens[pi])
			return pi;
	return IBEMU_NONE;
}
