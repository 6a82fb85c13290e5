// SPDX-License-Identifier: MIT
/*
 * The control socket. Each connection is checked (peer uid), greeted (HELLO
 * with the protocol version) and then answers requests one at a time. A
 * client that sends garbage gets an ERROR and is dropped; nothing it sends
 * can make the daemon read past what it received.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl_commands.h"
#include "ctl_proto.h"
#include "daemon.h"

struct ibemu_ctl_conn {
	uv_pipe_t pipe; /* first: the handle's address is the conn's */
	struct ibemu_daemon *d;
	struct ibemu_ctl_conn *next;
	char *in; /* bytes received and not yet handled */
	size_t in_len, in_cap;
	int greeted;
	int closing;
	int stop_after_reply; /* the reply to 'down' is on its way */
};

struct write_req {
	uv_write_t req;
	struct ibemu_ctl_conn *conn;
	struct ibemu_ctl_hdr hdr;
	char *payload; /* owned */
};

static void conn_close_cb(uv_handle_t *h)
{
	struct ibemu_ctl_conn *c = (struct ibemu_ctl_conn *)h;

	free(c->in);
	free(c);
}

static void conn_close(struct ibemu_ctl_conn *c)
{
	struct ibemu_ctl_conn **pp;

	if (c->closing)
		return;
	c->closing = 1;
	if (c->d->job && c->d->job->conn == c)
		c->d->job->conn = NULL;
	for (pp = &c->d->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	uv_close((uv_handle_t *)&c->pipe, conn_close_cb);
}

static void write_cb(uv_write_t *req, int status)
{
	struct write_req *w = (struct write_req *)req;
	struct ibemu_ctl_conn *c = w->conn;

	free(w->payload);
	free(w);
	if (status < 0 || c->greeted < 0)
		conn_close(c);
	else if (c->stop_after_reply)
		ibemu_daemon_stop(c->d);
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
	}
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

	IBEMU_BUG_ON(d->job != NULL);
	job->conn = c;
	job->last_progress_ms = uv_now(&d->loop);
	d->job = job;
	uv_idle_start(&d->job_idle, job_idle_cb);
}

static void job_end(struct ibemu_daemon *d)
{
	struct ibemu_job *job = d->job;

	d->job = NULL;
	uv_idle_stop(&d->job_idle);
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

/*
 * One turn of a long request between the loop's other work. A client that
 * leaves does not stop the job: the engine's state must stay whole.
 */
static void job_idle_cb(uv_idle_t *h)
{
	struct ibemu_daemon *d = h->data;
	struct ibemu_job *job = d->job;
	struct ibemu_buf out, err;
	uint64_t now;
	int done = 0, status;

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

void ibemu__ctl_jobs_init(struct ibemu_daemon *d)
{
	uv_idle_init(&d->loop, &d->job_idle);
	d->job_idle.data = d;
}

void ibemu__ctl_jobs_fini(struct ibemu_daemon *d)
{
	if (d->job)
		job_end(d);
	uv_close((uv_handle_t *)&d->job_idle, NULL);
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
	conn_process(c);
	/* Bound what one client may make us buffer. */
	if (!c->closing &&
	    c->in_len > IBEMU_CTL_MAX_REQUEST + sizeof(struct ibemu_ctl_hdr))
		conn_error(c, "request too large");
}

static int peer_allowed(uv_pipe_t *p)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	uv_os_fd_t fd;

	if (uv_fileno((uv_handle_t *)p, &fd))
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		return 0;
	return cred.uid == getuid();
}

static void connection_cb(uv_stream_t *server, int status)
{
	struct ibemu_daemon *d = server->data;
	struct ibemu_ctl_conn *c;

	if (status < 0 || d->stopping)
		return;
	c = calloc(1, sizeof(*c));
	if (!c)
		return;
	c->d = d;
	uv_pipe_init(&d->loop, &c->pipe, 0);
	c->next = d->conns;
	d->conns = c;
	if (uv_accept(server, (uv_stream_t *)&c->pipe)) {
		conn_close(c);
		return;
	}
	if (!peer_allowed(&c->pipe)) {
		ibemu_daemon_log(d, "refused a control client of another user");
		conn_close(c);
		return;
	}
	uv_read_start((uv_stream_t *)&c->pipe, alloc_cb, read_cb);
}

int ibemu__ctl_server_start(struct ibemu_daemon *d)
{
	mode_t old;
	int ret;

	ret = uv_pipe_init(&d->loop, &d->server, 0);
	if (ret)
		return ret;
	d->server.data = d;
	/* Owner-only from the moment the socket exists. */
	old = umask(0077);
	ret = uv_pipe_bind(&d->server, d->paths.sock);
	umask(old);
	if (!ret)
		ret = uv_listen((uv_stream_t *)&d->server, 64, connection_cb);
	if (ret) {
		uv_close((uv_handle_t *)&d->server, NULL);
		return ret;
	}
	chmod(d->paths.sock, 0600);
	return 0;
}

void ibemu__ctl_server_stop(struct ibemu_daemon *d)
{
	uv_close((uv_handle_t *)&d->server, NULL);
	while (d->conns)
		conn_close(d->conns);
}
