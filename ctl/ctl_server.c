// SPDX-License-Identifier: MIT
/*
 * The control socket. Each connection is checked (peer uid), greeted (HELLO
 * with the protocol version) and then answers requests one at a time. A
 * client that sends garbage gets an ERROR and is dropped; nothing it sends
 * can make the daemon read past what it received, and a client that does
 * not read its answers stops being served (CTL_QUEUE_SOFT) until it does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach.h"
#include "ctl_commands.h"
#include "ctl_proto.h"
#include "daemon.h"

/*
 * Bytes of answers one client may have waiting to be written before the
 * daemon stops reading and serving its requests, until they drain. A
 * request's answer is built whole, so a client's queue holds at most this
 * plus one answer (IBEMU_CTL_MAX_REPLY); past CTL_QUEUE_HARD (reachable
 * only by progress lines behind a paused queue) it is dropped.
 */
#define CTL_QUEUE_SOFT (4u << 20)
#define CTL_QUEUE_HARD ((size_t)CTL_QUEUE_SOFT + IBEMU_CTL_MAX_REPLY)

/*
 * A client that sends nothing for this long while the daemon owes it
 * nothing (no answer being written, no study of its running) is closed:
 * a connection that never says HELLO, or one left open and idle, would
 * hold one of the daemon's file descriptors for good. Every CLI command
 * speaks at once, so this only ever meets idle or hostile clients.
 */
#define IBEMU_CTL_SILENT_MS 10000u

struct ibemu_ctl_conn {
	uv_pipe_t pipe; /* first: the handle's address is the conn's */
	struct ibemu_daemon *d;
	struct ibemu_ctl_conn *next;
	char *in; /* bytes received and not yet handled */
	size_t in_len, in_cap;
	int greeted;
	int closing;
	int stop_after_reply; /* the reply to 'down' is on its way */
	size_t queued;	      /* bytes of messages not yet written */
	int paused;	      /* not reading: 'queued' is past CTL_QUEUE_SOFT */
	uv_timer_t silent;    /* IBEMU_CTL_SILENT_MS since the last bytes */
	int handles;	      /* open handles: freed when both are closed */
};

struct write_req {
	uv_write_t req;
	struct ibemu_ctl_conn *conn;
	struct ibemu_ctl_hdr hdr;
	char *payload; /* owned */
};

static void conn_close_cb(uv_handle_t *h)
{
	struct ibemu_ctl_conn *c = h->data;

	if (--c->handles)
		return;
	free(c->in);
	free(c);
}

static void conn_close(struct ibemu_ctl_conn *c)
{
	struct ibemu_ctl_conn **pp;

	if (c->closing)
		return;
	c->closing = 1;
	if (c->d->ctl->job && c->d->ctl->job->conn == c) {
		/* Nobody waits for the answer: the study stops (Ctrl-C on
		 * the CLI ends up here). */
		c->d->ctl->job->conn = NULL;
		ibemu__ctl_job_cancel(c->d, "job stopped: its client went "
					    "away");
	}
	for (pp = &c->d->ctl->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	uv_close((uv_handle_t *)&c->pipe, conn_close_cb);
	uv_close((uv_handle_t *)&c->silent, conn_close_cb);
}

/* The client said nothing for IBEMU_CTL_SILENT_MS: close it, unless the
 * daemon is the one that owes it something. */
static void silent_cb(uv_timer_t *t)
{
	struct ibemu_ctl_conn *c = t->data;

	if (c->closing)
		return;
	if (c->queued || (c->d->ctl->job && c->d->ctl->job->conn == c)) {
		uv_timer_start(&c->silent, silent_cb, IBEMU_CTL_SILENT_MS, 0);
		return;
	}
	ibemu_daemon_log_limited(c->d, &c->d->refusals,
				 "closed a control client silent for %u s",
				 IBEMU_CTL_SILENT_MS / 1000);
	conn_close(c);
}

static void conn_process(struct ibemu_ctl_conn *c);
static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

/* The client read enough of its answers: serve it again. */
static void conn_resume(struct ibemu_ctl_conn *c)
{
	c->paused = 0;
	conn_process(c);
	if (!c->paused && !c->closing && c->greeted >= 0)
		uv_read_start((uv_stream_t *)&c->pipe, alloc_cb, read_cb);
}

static void write_cb(uv_write_t *req, int status)
{
	struct write_req *w = (struct write_req *)req;
	struct ibemu_ctl_conn *c = w->conn;

	c->queued -= sizeof(w->hdr) + w->hdr.len;
	free(w->payload);
	free(w);
	if (status < 0 || c->greeted < 0)
		conn_close(c);
	else if (c->stop_after_reply)
		ibemu_daemon_stop(c->d);
	else if (c->paused && !c->closing && c->queued < CTL_QUEUE_SOFT / 2)
		conn_resume(c);
}

/* Queues one message; takes ownership of 'payload' (may be NULL). */
static void conn_send(struct ibemu_ctl_conn *c, uint16_t type, int32_t status,
		      char *payload, size_t len)
{
	struct write_req *w = calloc(1, sizeof(*w));
	uv_buf_t bufs[2];
	int ret;

	if (!w) {
		free(payload);
		conn_close(c);
		return;
	}
	if (c->queued + sizeof(w->hdr) + len > CTL_QUEUE_HARD) {
		ibemu_daemon_log(c->d,
				 "control client dropped: it does not read "
				 "its answers (%zu bytes waiting)",
				 c->queued);
		free(payload);
		free(w);
		conn_close(c);
		return;
	}
	w->conn = c;
	w->payload = payload;
	w->hdr.magic = IBEMU_CTL_MAGIC;
	w->hdr.version = IBEMU_CTL_VERSION;
	w->hdr.type = type;
	w->hdr.len = (uint32_t)len;
	w->hdr.status = status;
	bufs[0] = uv_buf_init((char *)&w->hdr, sizeof(w->hdr));
	bufs[1] = uv_buf_init(payload ? payload : (char *)"", (unsigned)len);
	ret = uv_write(&w->req, (uv_stream_t *)&c->pipe, bufs, 2, write_cb);
	if (ret) {
		free(payload);
		free(w);
		conn_close(c);
		return;
	}
	c->queued += sizeof(w->hdr) + len;
}

static void conn_error(struct ibemu_ctl_conn *c, const char *msg)
{
	char *copy = strdup(msg);

	ibemu_daemon_log(c->d, "control client dropped: %s", msg);
	conn_send(c, IBEMU_CTL_ERROR, 2, copy, copy ? strlen(copy) : 0);
	/* Stop reading; the handle closes once the error is written. */
	uv_read_stop((uv_stream_t *)&c->pipe);
	c->greeted = -1;
}

/* Splits a REQUEST payload into argv; every string must be terminated. */
static int split_argv(char *p, size_t len, char **argv, int *argc)
{
	size_t i, start = 0;
	int n = 0;

	if (len == 0 || p[len - 1] != '\0')
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (p[i] != '\0')
			continue;
		if (n == (int)IBEMU_CTL_MAX_ARGS)
			return -E2BIG;
		argv[n++] = p + start;
		start = i + 1;
	}
	argv[n] = NULL;
	*argc = n;
	return 0;
}

/* Sends the answer of a request: REPLY with 'out', or ERROR with 'err'. */
static void conn_answer(struct ibemu_ctl_conn *c, int status,
			struct ibemu_buf *out, struct ibemu_buf *err)
{
	size_t n;

	if (out->err || err->err) {
		ibemu_buf_fini(out);
		ibemu_buf_fini(err);
		ibemu_buf_puts(err, "out of memory");
		status = 1;
	}
	if (!status && out->len > IBEMU_CTL_MAX_REPLY) {
		ibemu_buf_reset(err);
		ibemu_buf_puts(err, "reply too large");
		status = 1;
	}
	if (status) {
		n = err->len;
		conn_send(c, IBEMU_CTL_ERROR, status, ibemu_buf_steal(err), n);
		ibemu_buf_fini(out);
		return;
	}
	n = out->len;
	conn_send(c, IBEMU_CTL_REPLY, 0, ibemu_buf_steal(out), n);
	ibemu_buf_fini(err);
}

static void job_idle_cb(uv_idle_t *h);

static void job_start(struct ibemu_ctl_conn *c, struct ibemu_job *job)
{
	struct ibemu_daemon *d = c->d;

	IBEMU_BUG_ON(d->ctl->job != NULL);
	job->conn = c;
	job->last_progress_ms = uv_now(&d->loop);
	d->ctl->job = job;
	d->engine_held = 1; /* the job runs the engine itself */
	uv_idle_start(&d->ctl->job_idle, job_idle_cb);
}

static void job_end(struct ibemu_daemon *d)
{
	struct ibemu_job *job = d->ctl->job;

	d->ctl->job = NULL;
	d->engine_held = 0;
	uv_idle_stop(&d->ctl->job_idle);
	job->destroy(job);
	ibemu_daemon_pump(d); /* MADs that came meanwhile */
}

static void job_send_progress(struct ibemu_job *job)
{
	struct ibemu_buf line;
	size_t n;

	ibemu_buf_init(&line);
	job->progress(job, &line);
	n = line.len;
	if (!line.err && n)
		conn_send(job->conn, IBEMU_CTL_PROGRESS, 0,
			  ibemu_buf_steal(&line), n);
	else
		ibemu_buf_fini(&line);
}

int ibemu__ctl_job_cancel(struct ibemu_daemon *d, const char *why)
{
	if (!d->ctl->job)
		return -ENOENT;
	if (!d->ctl->job->cancelled)
		d->ctl->job->cancelled = why;
	return 0;
}

/* Ends a cancelled job: a study stopped half way leaves the engine whole
 * (it detaches; the packets it had in flight are the engine's). */
static void job_cancelled(struct ibemu_daemon *d)
{
	struct ibemu_job *job = d->ctl->job;
	struct ibemu_buf out, err;

	ibemu_daemon_log(d, "%s", job->cancelled);
	if (job->conn) {
		ibemu_buf_init(&out);
		ibemu_buf_init(&err);
		ibemu_buf_puts(&err, job->cancelled);
		conn_answer(job->conn, 1, &out, &err);
	}
	job_end(d);
}

/*
 * One turn of a long request between the loop's other work. A job ends
 * early when cancelled: by 'ibemu traffic --stop' or when its client
 * leaves.
 */
static void job_idle_cb(uv_idle_t *h)
{
	struct ibemu_daemon *d = h->data;
	struct ibemu_job *job = d->ctl->job;
	struct ibemu_buf out, err;
	uint64_t now;
	int done = 0, status;

	if (job->cancelled) {
		job_cancelled(d);
		return;
	}
	job->step(job, &done);
	if (!done) {
		now = uv_now(&d->loop);
		if (job->conn && now - job->last_progress_ms >= 500) {
			job->last_progress_ms = now;
			job_send_progress(job);
		}
		return;
	}
	ibemu_buf_init(&out);
	ibemu_buf_init(&err);
	status = job->finish(job, &out, &err);
	if (job->conn) {
		conn_answer(job->conn, status, &out, &err);
	} else {
		ibemu_buf_fini(&out);
		ibemu_buf_fini(&err);
	}
	job_end(d);
}

static void handle_request(struct ibemu_ctl_conn *c, char *payload, size_t len)
{
	char *argv[IBEMU_CTL_MAX_ARGS + 1];
	struct ibemu_buf out, err;
	struct ibemu_ctl_call call;
	int argc, status;

	if (split_argv(payload, len, argv, &argc)) {
		conn_error(c, "malformed request: expected NUL-terminated "
			      "arguments");
		return;
	}
	ibemu_buf_init(&out);
	ibemu_buf_init(&err);
	memset(&call, 0, sizeof(call));
	call.d = c->d;
	call.argc = argc;
	call.argv = argv;
	call.out = &out;
	call.err = &err;
	status = ibemu__ctl_dispatch(&call);
	if (!status && call.job) {
		ibemu_buf_fini(&out);
		ibemu_buf_fini(&err);
		job_start(c, call.job);
		return;
	}
	c->stop_after_reply = !status && call.stop;
	conn_answer(c, status, &out, &err);
}

/* Handles every complete message in c->in. */
static void conn_process(struct ibemu_ctl_conn *c)
{
	struct ibemu_ctl_hdr hdr;
	size_t off = 0;

	while (c->greeted >= 0 && !c->closing &&
	       c->in_len - off >= sizeof(hdr)) {
		if (c->queued >= CTL_QUEUE_SOFT && !c->paused) {
			/* The rest waits in c->in until the answers drain. */
			c->paused = 1;
			uv_read_stop((uv_stream_t *)&c->pipe);
		}
		if (c->paused)
			break;
		memcpy(&hdr, c->in + off, sizeof(hdr));
		if (hdr.magic != IBEMU_CTL_MAGIC) {
			conn_error(c,
				   "not an ibemu control client (bad magic)");
			return;
		}
		if (hdr.version != IBEMU_CTL_VERSION) {
			char msg[200];

			snprintf(msg, sizeof(msg),
				 "control protocol version mismatch: the "
				 "daemon speaks version %u, the client %u; "
				 "use the ibemu that started this fabric",
				 IBEMU_CTL_VERSION, hdr.version);
			conn_error(c, msg);
			return;
		}
		if (hdr.len > IBEMU_CTL_MAX_REQUEST) {
			conn_error(c, "request too large");
			return;
		}
		if (c->in_len - off - sizeof(hdr) < hdr.len)
			break; /* wait for the rest */
		off += sizeof(hdr);
		if (!c->greeted) {
			if (hdr.type != IBEMU_CTL_HELLO) {
				conn_error(c, "expected HELLO first");
				return;
			}
			c->greeted = 1;
			conn_send(c, IBEMU_CTL_HELLO, 0, NULL, 0);
		} else if (hdr.type == IBEMU_CTL_REQUEST) {
			handle_request(c, c->in + off, hdr.len);
		} else {
			conn_error(c, "unexpected message type");
			return;
		}
		off += hdr.len;
	}
	if (c->closing)
		return;
	memmove(c->in, c->in + off, c->in_len - off);
	c->in_len -= off;
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct ibemu_ctl_conn *c = (struct ibemu_ctl_conn *)h;
	size_t want = c->in_len + (suggested < 4096 ? 4096 : suggested);
	char *p;

	(void)suggested;
	if (want > c->in_cap) {
		p = realloc(c->in, want);
		if (!p) {
			*buf = uv_buf_init(NULL, 0);
			return;
		}
		c->in = p;
		c->in_cap = want;
	}
	*buf = uv_buf_init(c->in + c->in_len,
			   (unsigned)(c->in_cap - c->in_len));
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct ibemu_ctl_conn *c = (struct ibemu_ctl_conn *)s;

	(void)buf;
	if (nread < 0) {
		conn_close(c);
		return;
	}
	c->in_len += (size_t)nread;
	uv_timer_start(&c->silent, silent_cb, IBEMU_CTL_SILENT_MS, 0);
	conn_process(c);
	/* Bound what one client may make us buffer. */
	if (!c->closing && !c->paused &&
	    c->in_len > IBEMU_CTL_MAX_REQUEST + sizeof(struct ibemu_ctl_hdr))
		conn_error(c, "request too large");
}

static void refuse_cb(struct ibemu_listener *l, int fd, const char *why);

static void accept_cb(struct ibemu_listener *l, int fd)
{
	struct ibemu_daemon *d = l->data;
	char why[256] = "permission denied";
	struct ibemu_ctl_conn *c;

	if (d->stopping) {
		close(fd);
		return;
	}
	/* Told why in place of the HELLO, as when out of fds. */
	if (!ibemu_daemon_peer_allowed(d, fd, "control", why, sizeof(why))) {
		refuse_cb(l, fd, why);
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->d = d;
	uv_pipe_init(&d->loop, &c->pipe, 0);
	uv_timer_init(&d->loop, &c->silent);
	c->pipe.data = c->silent.data = c;
	c->handles = 2;
	uv_timer_start(&c->silent, silent_cb, IBEMU_CTL_SILENT_MS, 0);
	c->next = d->ctl->conns;
	d->ctl->conns = c;
	if (uv_pipe_open(&c->pipe, fd)) {
		close(fd);
		conn_close(c);
		return;
	}
	uv_read_start((uv_stream_t *)&c->pipe, alloc_cb, read_cb);
}

/* Out of fds: the client's HELLO gets this ERROR in its place. */
static void refuse_cb(struct ibemu_listener *l, int fd, const char *why)
{
	struct ibemu_ctl_hdr hdr = {
		.magic = IBEMU_CTL_MAGIC,
		.version = IBEMU_CTL_VERSION,
		.type = IBEMU_CTL_ERROR,
		.len = (uint32_t)strlen(why),
		.status = 1,
	};
	struct iovec iov[2] = {
		{.iov_base = &hdr, .iov_len = sizeof(hdr)},
		{.iov_base = (void *)why, .iov_len = hdr.len},
	};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};

	(void)l;
	/* A new socket's buffer takes these few bytes at once. */
	if (sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		return;
}

static const struct ibemu_listener_ops ctl_listener_ops = {
	.accept = accept_cb,
	.refuse = refuse_cb,
};

/*
 * The servers of a daemon (daemon.h): this one, then the session server
 * of attached processes (which logs why if processes cannot attach, and
 * the fabric runs without them).
 */
static int servers_start(struct ibemu_daemon *d, char *why, size_t whylen)
{
	int ret;

	d->ctl = calloc(1, sizeof(*d->ctl));
	if (!d->ctl) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	uv_idle_init(&d->loop, &d->ctl->job_idle);
	d->ctl->job_idle.data = d;
	d->ctl->server.ops = &ctl_listener_ops;
	d->ctl->server.what = "control";
	d->ctl->server.data = d;
	ret = ibemu__listener_start(d, &d->ctl->server, d->paths.sock,
				    SOCK_STREAM);
	if (ret) {
		snprintf(why, whylen, "cannot listen on %s: %s", d->paths.sock,
			 uv_strerror(ret));
		/* Freed by servers_fini once the handle has closed. */
		uv_close((uv_handle_t *)&d->ctl->job_idle, NULL);
		return ret;
	}
	ibemu__sess_server_start(d);
	return 0;
}

/* Stops serving: clients first, then the handles. */
static void servers_stop(struct ibemu_daemon *d)
{
	ibemu__listener_stop(&d->ctl->server, NULL);
	while (d->ctl->conns)
		conn_close(d->ctl->conns);
	ibemu__sess_server_stop(d);
	if (d->ctl->job)
		job_end(d);
	uv_close((uv_handle_t *)&d->ctl->job_idle, NULL);
}

static void servers_fini(struct ibemu_daemon *d)
{
	if (!d->ctl)
		return;
	free(d->ctl->snap);
	ibemu__cc_fini(d);
	ibemu__ctl_at_fini(d);
	free(d->ctl);
	d->ctl = NULL;
}

static const char *servers_doing(struct ibemu_daemon *d)
{
	return d->ctl && d->ctl->job ? "a traffic study running"
				     : "no traffic study";
}

const struct ibemu_daemon_servers ibemu_ctl_servers = {
	.start = servers_start,
	.stop = servers_stop,
	.fini = servers_fini,
	.doing = servers_doing,
};
