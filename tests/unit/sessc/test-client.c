// SPDX-License-Identifier: MIT
/*
 * Unit tests of the session client of the client libraries (sessc/): the
 * messages it sends (header, payload, fds by SCM_RIGHTS) and the replies it
 * takes or refuses, read from the other end of a socketpair, and how it
 * finds sess.sock in the environment.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "sessc.h"
#include "unit.h"

/* A connected pair of SOCK_SEQPACKET sockets: [0] the client's end. */
static void pair(int sv[2])
{
	T_EQ_INT(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

/* Writes one message with header fields as given on 'fd'. */
static void put(int fd, uint32_t magic, uint16_t version, uint16_t type,
		int32_t status, const void *payload, size_t len,
		size_t said_len)
{
	uint8_t buf[IBEMU_SESS_MAX_MSG];
	struct ibemu_sess_hdr h = {
		.magic = magic,
		.version = version,
		.type = type,
		.len = (uint32_t)said_len,
		.status = status,
	};

	memcpy(buf, &h, sizeof(h));
	if (len)
		memcpy(buf + sizeof(h), payload, len);
	T_EQ_INT(send(fd, buf, sizeof(h) + len, 0), sizeof(h) + len);
}

static void put_reply(int fd, uint16_t type, int32_t status, const void *p,
		      size_t len)
{
	put(fd, IBEMU_SESS_MAGIC, IBEMU_SESS_VERSION, type, status, p, len,
	    len);
}

static void test_send_with_fds(void)
{
	uint8_t buf[256];
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct ibemu_sess_hdr h;
	struct cmsghdr *cm;
	int sv[2], fds[2], got[2];
	ssize_t n;

	pair(sv);
	T_EQ_INT(pipe(fds), 0);
	T_EQ_INT(ibemu_sessc_send(sv[0], IBEMU_SESS_VERBS_OPEN, "hello", 5, fds,
				  2, 0),
		 0);
	n = recvmsg(sv[1], &mh, 0);
	T_EQ_INT(n, sizeof(h) + 5);
	memcpy(&h, buf, sizeof(h));
	T_EQ_U64(h.magic, IBEMU_SESS_MAGIC);
	T_EQ_INT(h.version, IBEMU_SESS_VERSION);
	T_EQ_INT(h.type, IBEMU_SESS_VERBS_OPEN);
	T_EQ_INT(h.len, 5);
	T_TRUE(!memcmp(buf + sizeof(h), "hello", 5));
	cm = CMSG_FIRSTHDR(&mh);
	T_TRUE(cm && cm->cmsg_type == SCM_RIGHTS);
	if (cm) {
		T_EQ_INT(cm->cmsg_len, CMSG_LEN(2 * sizeof(int)));
		memcpy(got, CMSG_DATA(cm), sizeof(got));
		/* The same pipe: what goes in one end comes out the other. */
		T_EQ_INT(write(got[1], "x", 1), 1);
		T_EQ_INT(read(fds[0], buf, 1), 1);
		close(got[0]);
		close(got[1]);
	}
	/* An empty message (a kick) is the header alone; too many fds are
	 * refused before anything is sent. */
	T_EQ_INT(ibemu_sessc_send(sv[0], IBEMU_SESS_VERBS_KICK, NULL, 0, NULL,
				  0, MSG_DONTWAIT),
		 0);
	T_EQ_INT(recv(sv[1], buf, sizeof(buf), 0), sizeof(h));
	T_EQ_INT(ibemu_sessc_send(sv[0], IBEMU_SESS_VERBS_OPEN, NULL, 0, fds,
				  IBEMU_SESSC_MAX_FDS + 1, 0),
		 -EINVAL);
	close(fds[0]);
	close(fds[1]);
	close(sv[0]);
	close(sv[1]);
}

static void test_recv_reply(void)
{
	struct ibemu_sessc_refusal r;
	char out[16];
	size_t got;
	int sv[2];

	pair(sv);
	put_reply(sv[1], IBEMU_SESS_REGISTER, 0, "answer", 6);
	T_EQ_INT(ibemu_sessc_recv(sv[0], IBEMU_SESS_REGISTER, out, sizeof(out),
				  &got, &r),
		 0);
	T_EQ_INT(got, 6);
	T_TRUE(!memcmp(out, "answer", 6));
	T_EQ_INT(r.status, 0);
	close(sv[0]);
	close(sv[1]);
}

/* A reply that 'put' makes wrong in one field: -EPROTO, not a refusal. */
static void expect_proto(uint32_t magic, uint16_t version, uint16_t type,
			 size_t len, size_t said_len, size_t cap)
{
	struct ibemu_sessc_refusal r;
	char out[64];
	size_t got;
	int sv[2];

	pair(sv);
	put(sv[1], magic, version, type, 0, "0123456789abcdef", len, said_len);
	T_EQ_INT(ibemu_sessc_recv(sv[0], IBEMU_SESS_CA_QUERY, out, cap, &got,
				  &r),
		 -EPROTO);
	T_EQ_INT(r.status, 0);
	T_EQ_INT(got, 0);
	close(sv[0]);
	close(sv[1]);
}

static void test_recv_checks_header(void)
{
	const uint16_t ca = IBEMU_SESS_CA_QUERY;
	int sv[2];
	struct ibemu_sessc_refusal r;
	char out[8];
	size_t got;

	expect_proto(IBEMU_SESS_MAGIC ^ 1, IBEMU_SESS_VERSION, ca, 4, 4, 64);
	expect_proto(IBEMU_SESS_MAGIC, IBEMU_SESS_VERSION + 1, ca, 4, 4, 64);
	expect_proto(IBEMU_SESS_MAGIC, IBEMU_SESS_VERSION, ca, 4, 5, 64);
	expect_proto(IBEMU_SESS_MAGIC, IBEMU_SESS_VERSION, ca, 4, 3, 64);
	expect_proto(IBEMU_SESS_MAGIC, IBEMU_SESS_VERSION, IBEMU_SESS_REGISTER,
		     4, 4, 64);
	expect_proto(IBEMU_SESS_MAGIC, IBEMU_SESS_VERSION, ca, 16, 16, 15);
	/* Shorter than a header. */
	pair(sv);
	T_EQ_INT(send(sv[1], "short", 5, 0), 5);
	T_EQ_INT(ibemu_sessc_recv(sv[0], ca, out, sizeof(out), &got, &r),
		 -EPROTO);
	close(sv[0]);
	close(sv[1]);
}

static void test_recv_refusal(void)
{
	static const char why[] = "hca9: no such HCA";
	struct ibemu_sessc_refusal r;
	size_t got;
	int sv[2];

	pair(sv);
	put_reply(sv[1], IBEMU_SESS_ERROR, -ENOENT, why, strlen(why));
	T_EQ_INT(
		ibemu_sessc_recv(sv[0], IBEMU_SESS_CA_QUERY, NULL, 0, &got, &r),
		-ENOENT);
	T_EQ_INT(r.status, -ENOENT);
	T_EQ_STR(r.why, why);
	/* An ERROR without a status is still a refusal: EIO. */
	put_reply(sv[1], IBEMU_SESS_ERROR, 0, NULL, 0);
	T_EQ_INT(
		ibemu_sessc_recv(sv[0], IBEMU_SESS_CA_QUERY, NULL, 0, &got, &r),
		-EIO);
	T_EQ_INT(r.status, -EIO);
	T_EQ_STR(r.why, "");
	close(sv[0]);
	close(sv[1]);
}

/*
 * A daemon out of fds answers a connection with an ERROR and closes it:
 * before our request (the send fails, the ERROR is still read) or with our
 * request unread (the receive reports a reset first).
 */
static void test_exchange_after_close(void)
{
	static const char why[] = "the daemon is out of file descriptors";
	struct ibemu_sessc_refusal r;
	size_t got;
	int sv[2];

	pair(sv);
	put_reply(sv[1], IBEMU_SESS_ERROR, -EMFILE, why, strlen(why));
	close(sv[1]);
	T_EQ_INT(ibemu_sessc_exchange(sv[0], IBEMU_SESS_CA_QUERY, "q", 1, NULL,
				      0, NULL, 0, &got, &r),
		 -EMFILE);
	T_EQ_STR(r.why, why);
	close(sv[0]);

	pair(sv);
	T_EQ_INT(ibemu_sessc_send(sv[0], IBEMU_SESS_CA_QUERY, "q", 1, NULL, 0,
				  0),
		 0);
	put_reply(sv[1], IBEMU_SESS_ERROR, -EMFILE, why, strlen(why));
	close(sv[1]);
	T_EQ_INT(
		ibemu_sessc_recv(sv[0], IBEMU_SESS_CA_QUERY, NULL, 0, &got, &r),
		-EMFILE);
	T_EQ_STR(r.why, why);
	close(sv[0]);
}

static void test_connect_env(void)
{
	struct ibemu_sessc c = IBEMU_SESSC_INIT("libtest", NULL);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char *old = getenv(IBEMU_SESS_ENV_SOCKET);
	char dir[] = "/tmp/ibemu-sessc-XXXXXX";
	char path[sizeof(sa.sun_path) + 8];
	struct timeval tv;
	socklen_t tvlen = sizeof(tv);
	int lfd, fd;

	old = old ? strdup(old) : NULL;
	/* Outside 'ibemu exec': quietly nothing. */
	unsetenv(IBEMU_SESS_ENV_SOCKET);
	T_TRUE(!ibemu_sessc_socket_path());
	T_EQ_INT(ibemu_sessc_connect(&c), -ENODEV);
	T_EQ_INT(c.said, 0);
	setenv(IBEMU_SESS_ENV_SOCKET, "", 1);
	T_EQ_INT(ibemu_sessc_connect(&c), -ENODEV);
	/* A path no socket can have, said once. */
	memset(path, 'p', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	setenv(IBEMU_SESS_ENV_SOCKET, path, 1);
	T_EQ_INT(ibemu_sessc_connect(&c), -ENAMETOOLONG);
	T_EQ_INT(c.said, 1);
	/* A listening socket: connected, with the call timeouts. */
	T_TRUE(mkdtemp(dir) != NULL);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sess.sock", dir);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	T_EQ_INT(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	T_EQ_INT(listen(lfd, 1), 0);
	setenv(IBEMU_SESS_ENV_SOCKET, sa.sun_path, 1);
	fd = ibemu_sessc_connect(&c);
	T_TRUE(fd >= 0);
	T_EQ_INT(getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &tvlen), 0);
	T_EQ_INT(tv.tv_sec, IBEMU_SESSC_CALL_TIMEOUT_S);
	close(fd);
	close(lfd);
	unlink(sa.sun_path);
	rmdir(dir);
	if (old)
		setenv(IBEMU_SESS_ENV_SOCKET, old, 1);
	else
		unsetenv(IBEMU_SESS_ENV_SOCKET);
	free(old);
}

void ibemu_test_register_sessc_client(void)
{
	static const struct ibemu_test tests[] = {
		{"send_with_fds", test_send_with_fds},
		{"recv_reply", test_recv_reply},
		{"recv_checks_header", test_recv_checks_header},
		{"recv_refusal", test_recv_refusal},
		{"exchange_after_close", test_exchange_after_close},
		{"connect_env", test_connect_env},
		{NULL, NULL},
	};

	ibemu_test_add_suite("sessc.client", tests);
}
