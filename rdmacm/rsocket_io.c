// SPDX-License-Identifier: MIT
/*
 * The data path of rsockets (rsocket_int.h gives the protocol): the
 * connection's QP, memory and credits, rsend/rrecv and their vector and
 * message forms, and rpoll/rselect.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rsocket.h>

#include "rdmacm_int.h"
#include "rsocket_int.h"

static uint8_t *rx_slot(struct rsock *rs, uint32_t i)
{
	return rs->mem + (size_t)i * RSOCK_SLOT;
}

static uint8_t *tx_slot(struct rsock *rs, uint32_t i)
{
	return rs->mem + ((size_t)rs->rx_slots + i) * RSOCK_SLOT;
}

static int post_recv(struct rsock *rs, uint32_t slot)
{
	struct ibv_sge sge = {.addr = (uintptr_t)rx_slot(rs, slot),
			      .length = RSOCK_SLOT,
			      .lkey = rs->mr->lkey};
	struct ibv_recv_wr wr = {
		.wr_id = RSOCK_WR_RECV | slot, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad;

	return ibv_post_recv(rs->id->qp, &wr, &bad);
}

/* One SEND with immediate: 'len' bytes of send slot 'slot', or none for a
 * control message (slot ignored). Returns our credits to the peer. */
static int post_send(struct rsock *rs, uint32_t slot, uint32_t len, int fin)
{
	struct ibv_sge sge = {.addr = (uintptr_t)tx_slot(rs, slot),
			      .length = len,
			      .lkey = rs->mr->lkey};
	struct ibv_send_wr wr, *bad;
	uint32_t imm = rs->to_return & RSOCK_IMM_CREDITS;
	int ret;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = len ? slot : RSOCK_WR_CTL;
	wr.sg_list = len ? &sge : NULL;
	wr.num_sge = len ? 1 : 0;
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (len && len <= rs->inline_size)
		wr.send_flags |= IBV_SEND_INLINE;
	wr.imm_data = htobe32(imm | (fin ? RSOCK_IMM_FIN : 0));
	ret = ibv_post_send(rs->id->qp, &wr, &bad);
	if (ret)
		return ret;
	rs->to_return -= imm;
	rs->credits--;
	rs->sends_inflight++;
	if (!len)
		rs->ctl_inflight++;
	return 0;
}

/* Tells the peer about our reposted receives when half of them wait to be
 * told, or when it may have run out (it keeps one credit back for this). */
static void credits_return(struct rsock *rs)
{
	if (!rs->to_return || !rs->credits || rs->broken ||
	    rs->ctl_inflight >= RSOCK_CTL_MAX)
		return;
	if (rs->to_return < (rs->rx_slots + 1) / 2)
		return;
	post_send(rs, 0, 0, 0);
}

static void rx_push(struct rsock *rs, uint32_t slot, uint32_t len)
{
	struct rsock_rx *r;

	r = &rs->rx[(rs->rx_head + rs->rx_count) % rs->rx_slots];
	r->slot = slot;
	r->len = len;
	r->off = 0;
	rs->rx_count++;
}

static void wc_take(struct rsock *rs, const struct ibv_wc *wc)
{
	uint32_t imm;

	if (wc->status != IBV_WC_SUCCESS) {
		rs->broken = 1;
		if (wc->wr_id & RSOCK_WR_RECV)
			return;
		rs->sends_inflight--;
		if (wc->wr_id == RSOCK_WR_CTL)
			rs->ctl_inflight--;
		else
			rs->tx_free[rs->tx_nfree++] = (uint32_t)wc->wr_id;
		return;
	}
	if (!(wc->wr_id & RSOCK_WR_RECV)) {
		rs->sends_inflight--;
		if (wc->wr_id == RSOCK_WR_CTL)
			rs->ctl_inflight--;
		else
			rs->tx_free[rs->tx_nfree++] = (uint32_t)wc->wr_id;
		return;
	}
	imm = (wc->wc_flags & IBV_WC_WITH_IMM) ? be32toh(wc->imm_data) : 0;
	rs->credits += imm & RSOCK_IMM_CREDITS;
	if (imm & RSOCK_IMM_FIN)
		rs->peer_fin = 1;
	if (wc->byte_len) {
		rx_push(rs, (uint32_t)(wc->wr_id & 0xffffffffu), wc->byte_len);
		return;
	}
	/* a control message: its slot goes back at once */
	if (!post_recv(rs, (uint32_t)(wc->wr_id & 0xffffffffu)))
		rs->to_return++;
}

void rsock__progress(struct rsock *rs)
{
	struct ibv_wc wc[16];
	int n, i;

	if (rs->state != RSOCK_CONNECTED)
		return;
	do {
		n = ibv_poll_cq(rs->cq, 16, wc);
		for (i = 0; i < n; i++)
			wc_take(rs, &wc[i]);
	} while (n == 16);
	credits_return(rs);
}

void rsock__wait(struct rsock *rs)
{
	struct ibv_cq *cq;
	struct ibv_wc wc;
	void *ctx;
	int n;

	if (ibv_req_notify_cq(rs->cq, 0))
		return;
	/* a completion between the last poll and the arming raised no event */
	n = ibv_poll_cq(rs->cq, 1, &wc);
	if (n > 0) {
		wc_take(rs, &wc);
		return;
	}
	if (!ibv_get_cq_event(rs->cc, &cq, &ctx))
		ibv_ack_cq_events(cq, 1);
}

int rsock__conn_create(struct rsock *rs, uint32_t peer_slots)
{
	struct ibv_qp_init_attr qa;
	struct ibv_pd *pd;
	size_t bytes;
	uint32_t i;
	int ret;

	rs->credits = peer_slots;
	rs->cc = ibv_create_comp_channel(rs->id->verbs);
	if (!rs->cc)
		return errno;
	rs->cq = ibv_create_cq(
		rs->id->verbs,
		(int)(rs->rx_slots + rs->tx_slots + RSOCK_CTL_MAX), rs, rs->cc,
		0);
	if (!rs->cq)
		return errno;
	bytes = ((size_t)rs->rx_slots + rs->tx_slots) * RSOCK_SLOT;
	rs->mem = aligned_alloc(4096, bytes);
	rs->tx_free = calloc(rs->tx_slots, sizeof(*rs->tx_free));
	rs->rx = calloc(rs->rx_slots, sizeof(*rs->rx));
	if (!rs->mem || !rs->tx_free || !rs->rx)
		return ENOMEM;
	pd = rdmacm__device_pd(rdmacm_id_of(rs->id)->dev);
	if (!pd)
		return errno;
	rs->mr = ibv_reg_mr(pd, rs->mem, bytes, IBV_ACCESS_LOCAL_WRITE);
	if (!rs->mr)
		return errno;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = rs->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = rs->tx_slots + RSOCK_CTL_MAX;
	qa.cap.max_recv_wr = rs->rx_slots;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = rs->inline_size;
	if (rdma_create_qp(rs->id, pd, &qa))
		return errno;
	if (rs->inline_size > qa.cap.max_inline_data)
		rs->inline_size = qa.cap.max_inline_data;
	for (i = 0; i < rs->tx_slots; i++)
		rs->tx_free[rs->tx_nfree++] = rs->tx_slots - 1 - i;
	for (i = 0; i < rs->rx_slots; i++) {
		ret = post_recv(rs, i);
		if (ret)
			return ret;
	}
	return 0;
}

void rsock__conn_destroy(struct rsock *rs)
{
	if (rs->id && rs->id->qp)
		rdma_destroy_qp(rs->id);
	if (rs->mr)
		ibv_dereg_mr(rs->mr);
	if (rs->cq)
		ibv_destroy_cq(rs->cq);
	if (rs->cc)
		ibv_destroy_comp_channel(rs->cc);
	free(rs->mem);
	free(rs->tx_free);
	free(rs->rx);
	rs->mr = NULL;
	rs->cq = NULL;
	rs->cc = NULL;
	rs->mem = NULL;
	rs->tx_free = NULL;
	rs->rx = NULL;
}

int rsock__conn_finish(struct rsock *rs)
{
	if (rs->state != RSOCK_CONNECTED)
		return 0;
	rsock__progress(rs);
	/* FIN may use the credit data keeps back; wait for one if need be */
	while (!rs->fin_sent && !rs->broken) {
		if (rs->credits && rs->ctl_inflight < RSOCK_CTL_MAX) {
			if (post_send(rs, 0, 0, 1))
				break;
			rs->fin_sent = 1;
			break;
		}
		rsock__wait(rs);
		rsock__progress(rs);
	}
	while (rs->sends_inflight && !rs->broken) {
		rsock__wait(rs);
		rsock__progress(rs);
	}
	return rs->broken ? ECONNRESET : 0;
}

/* --- send and receive ------------------------------------------------ */

static int must_not_wait(const struct rsock *rs, int flags)
{
	return rs->nonblock || (flags & MSG_DONTWAIT);
}

static struct rsock *connected(int fd, int *err)
{
	struct rsock *rs = rsock__find(fd);

	if (!rs) {
		*err = ENOTSOCK;
		return NULL;
	}
	if (rs->state != RSOCK_CONNECTED) {
		*err = rs->state == RSOCK_FAILED && rs->err ? rs->err
							    : ENOTCONN;
		return NULL;
	}
	return rs;
}

/* Copies up to 'len' bytes of 'iov' into send slots while credits last. */
static size_t send_some(struct rsock *rs, const struct iovec *iov, int iovcnt,
			size_t *iov_i, size_t *iov_off, size_t len)
{
	size_t done = 0;

	while (done < len && rs->credits >= 2 && rs->tx_nfree && !rs->broken) {
		uint32_t slot = rs->tx_free[rs->tx_nfree - 1];
		uint8_t *dst = tx_slot(rs, slot);
		uint32_t n = 0;

		while (n < RSOCK_SLOT && done + n < len &&
		       *iov_i < (size_t)iovcnt) {
			const struct iovec *v = &iov[*iov_i];
			size_t k = v->iov_len - *iov_off;

			if (k > RSOCK_SLOT - n)
				k = RSOCK_SLOT - n;
			if (k > len - done - n)
				k = len - done - n;
			memcpy(dst + n, (const uint8_t *)v->iov_base + *iov_off,
			       k);
			n += (uint32_t)k;
			*iov_off += k;
			if (*iov_off == v->iov_len) {
				(*iov_i)++;
				*iov_off = 0;
			}
		}
		if (post_send(rs, slot, n, 0))
			break;
		rs->tx_nfree--;
		done += n;
	}
	return done;
}

static ssize_t send_iov(int fd, const struct iovec *iov, int iovcnt, int flags)
{
	size_t len = 0, done = 0, iov_i = 0, iov_off = 0;
	struct rsock *rs;
	int err, i;

	rs = connected(fd, &err);
	if (!rs)
		return rdmacm_err(err);
	for (i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (rs->fin_sent)
		return rdmacm_err(EPIPE);
	pthread_mutex_lock(&rs->lock);
	for (;;) {
		rsock__progress(rs);
		if (rs->broken)
			break;
		done += send_some(rs, iov, iovcnt, &iov_i, &iov_off,
				  len - done);
		if (done == len || must_not_wait(rs, flags))
			break;
		rsock__wait(rs);
	}
	pthread_mutex_unlock(&rs->lock);
	if (done)
		return (ssize_t)done;
	if (rs->broken)
		return rdmacm_err(ECONNRESET);
	return len ? rdmacm_err(EAGAIN) : 0;
}

static size_t recv_some(struct rsock *rs, const struct iovec *iov, int iovcnt,
			size_t *iov_i, size_t *iov_off, size_t len)
{
	size_t done = 0;

	while (done < len && rs->rx_count && *iov_i < (size_t)iovcnt) {
		struct rsock_rx *r = &rs->rx[rs->rx_head];
		const struct iovec *v = &iov[*iov_i];
		size_t k = r->len - r->off;

		if (k > v->iov_len - *iov_off)
			k = v->iov_len - *iov_off;
		if (k > len - done)
			k = len - done;
		memcpy((uint8_t *)v->iov_base + *iov_off,
		       rx_slot(rs, r->slot) + r->off, k);
		r->off += (uint32_t)k;
		done += k;
		*iov_off += k;
		if (*iov_off == v->iov_len) {
			(*iov_i)++;
			*iov_off = 0;
		}
		if (r->off < r->len)
			continue;
		rs->rx_head = (rs->rx_head + 1) % rs->rx_slots;
		rs->rx_count--;
		if (!post_recv(rs, r->slot))
			rs->to_return++;
	}
	return done;
}

static ssize_t recv_iov(int fd, const struct iovec *iov, int iovcnt, int flags)
{
	size_t len = 0, done = 0, iov_i = 0, iov_off = 0;
	struct rsock *rs;
	int err, i;

	rs = connected(fd, &err);
	if (!rs)
		return rdmacm_err(err);
	if (flags & MSG_PEEK)
		return rdmacm_err(EOPNOTSUPP);
	for (i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (rs->shut_rd || !len)
		return 0;
	pthread_mutex_lock(&rs->lock);
	for (;;) {
		rsock__progress(rs);
		done += recv_some(rs, iov, iovcnt, &iov_i, &iov_off,
				  len - done);
		credits_return(rs);
		if (done == len || rs->peer_fin || rs->broken ||
		    must_not_wait(rs, flags))
			break;
		if (done && !(flags & MSG_WAITALL))
			break;
		rsock__wait(rs);
	}
	pthread_mutex_unlock(&rs->lock);
	if (done || rs->peer_fin)
		return (ssize_t)done;
	if (rs->broken)
		return rdmacm_err(ECONNRESET);
	return rdmacm_err(EAGAIN);
}

RDMACM_EXPORT ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{
	struct iovec v = {.iov_base = (void *)buf, .iov_len = len};

	return send_iov(socket, &v, 1, flags);
}

RDMACM_EXPORT ssize_t rsendto(int socket, const void *buf, size_t len,
			      int flags, const struct sockaddr *dest_addr,
			      socklen_t addrlen)
{
	/* a connected stream ignores the address, as TCP does */
	return rsend(socket, buf, len, flags);
}

RDMACM_EXPORT ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	return send_iov(socket, msg->msg_iov, (int)msg->msg_iovlen, flags);
}

RDMACM_EXPORT ssize_t rwrite(int socket, const void *buf, size_t count)
{
	return rsend(socket, buf, count, 0);
}

RDMACM_EXPORT ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	return send_iov(socket, iov, iovcnt, 0);
}

RDMACM_EXPORT ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	struct iovec v = {.iov_base = buf, .iov_len = len};

	return recv_iov(socket, &v, 1, flags);
}

RDMACM_EXPORT ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags,
				struct sockaddr *src_addr, socklen_t *addrlen)
{
	ssize_t n = rrecv(socket, buf, len, flags);

	if (n >= 0 && src_addr && addrlen)
		rgetpeername(socket, src_addr, addrlen);
	return n;
}

RDMACM_EXPORT ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	return recv_iov(socket, msg->msg_iov, (int)msg->msg_iovlen, flags);
}

RDMACM_EXPORT ssize_t rread(int socket, void *buf, size_t count)
{
	return rrecv(socket, buf, count, 0);
}

RDMACM_EXPORT ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	return recv_iov(socket, iov, iovcnt, 0);
}

/* --- poll and select ------------------------------------------------- */

short rsock__revents(struct rsock *rs, short events)
{
	short r = 0;

	switch (rs->state) {
	case RSOCK_LISTENING:
		/* a waiting CONNECT_REQUEST: the channel's eventfd counts it */
		{
			struct pollfd p = {.fd = rs->ch->fd, .events = POLLIN};

			if (poll(&p, 1, 0) == 1)
				r |= POLLIN;
		}
		break;
	case RSOCK_CONNECTING:
		rsock__connect_drive(rs, 0);
		if (rs->state == RSOCK_CONNECTED)
			r |= POLLOUT;
		else if (rs->state == RSOCK_FAILED)
			r |= POLLOUT | POLLERR;
		break;
	case RSOCK_CONNECTED:
		rsock__progress(rs);
		if (rs->rx_count || rs->peer_fin || rs->shut_rd)
			r |= POLLIN;
		if (rs->credits >= 2 && rs->tx_nfree)
			r |= POLLOUT;
		if (rs->peer_fin)
			r |= POLLRDHUP;
		if (rs->broken)
			r |= POLLHUP | POLLERR;
		break;
	case RSOCK_FAILED:
		r |= POLLOUT | POLLERR | POLLHUP;
		break;
	default:
		r |= POLLOUT | POLLHUP; /* as an unconnected TCP socket */
		break;
	}
	return (short)(r & (events | POLLERR | POLLHUP));
}

static long long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ll + ts.tv_nsec / 1000000;
}

/* One look at every entry; the number with events. */
static int poll_once(struct pollfd *fds, nfds_t nfds, int *only_rsock)
{
	int ready = 0;
	nfds_t i;

	*only_rsock = 1;
	for (i = 0; i < nfds; i++) {
		struct rsock *rs =
			fds[i].fd >= 0 ? rsock__find(fds[i].fd) : NULL;

		if (rs) {
			pthread_mutex_lock(&rs->lock);
			fds[i].revents = rsock__revents(rs, fds[i].events);
			pthread_mutex_unlock(&rs->lock);
		} else {
			*only_rsock = 0;
			fds[i].revents = 0;
			if (fds[i].fd >= 0 && poll(&fds[i], 1, 0) < 0)
				return -1;
		}
		ready += fds[i].revents != 0;
	}
	return ready;
}

/*
 * rsockets are looked at in turn, other fds through poll() without waiting,
 * until one has an event or the timeout passes. A single connected rsocket
 * with no timeout blocks in its completion channel; otherwise each look's
 * empty poll of a CQ gives the CPU away (verbs/waiting.c), which the time
 * rule takes as waiting.
 */
RDMACM_EXPORT int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	long long end = timeout > 0 ? ms_now() + timeout : 0;
	int only, ready;

	for (;;) {
		ready = poll_once(fds, nfds, &only);
		if (ready || !timeout)
			return ready;
		if (timeout > 0 && ms_now() >= end)
			return 0;
		if (only && nfds == 1 && timeout < 0) {
			struct rsock *rs = rsock__find(fds[0].fd);

			if (rs && rs->state == RSOCK_CONNECTED) {
				pthread_mutex_lock(&rs->lock);
				rsock__wait(rs);
				pthread_mutex_unlock(&rs->lock);
				continue;
			}
		}
		if (!only) {
			/* other fds: let the kernel wake us for a while */
			struct timespec ts = {0, 50000};

			nanosleep(&ts, NULL);
		} else {
			sched_yield();
		}
	}
}

RDMACM_EXPORT int rselect(int nfds, fd_set *readfds, fd_set *writefds,
			  fd_set *exceptfds, struct timeval *timeout)
{
	struct pollfd *p;
	int i, n = 0, ret, ms;

	if (nfds < 0 || nfds > FD_SETSIZE)
		return rdmacm_err(EINVAL);
	p = calloc((size_t)nfds ? (size_t)nfds : 1, sizeof(*p));
	if (!p)
		return rdmacm_err(ENOMEM);
	for (i = 0; i < nfds; i++) {
		short ev = 0;

		if (readfds && FD_ISSET(i, readfds))
			ev |= POLLIN;
		if (writefds && FD_ISSET(i, writefds))
			ev |= POLLOUT;
		if (exceptfds && FD_ISSET(i, exceptfds))
			ev |= POLLPRI;
		if (ev) {
			p[n].fd = i;
			p[n++].events = ev;
		}
	}
	ms = timeout ? (int)(timeout->tv_sec * 1000 + timeout->tv_usec / 1000)
		     : -1;
	ret = rpoll(p, (nfds_t)n, ms);
	if (ret < 0) {
		free(p);
		return ret;
	}
	ret = 0;
	if (readfds)
		FD_ZERO(readfds);
	if (writefds)
		FD_ZERO(writefds);
	if (exceptfds)
		FD_ZERO(exceptfds);
	for (i = 0; i < n; i++) {
		int any = 0;

		if (readfds && (p[i].revents & (POLLIN | POLLHUP | POLLERR))) {
			FD_SET(p[i].fd, readfds);
			any = 1;
		}
		if (writefds && (p[i].revents & (POLLOUT | POLLERR))) {
			FD_SET(p[i].fd, writefds);
			any = 1;
		}
		if (exceptfds && (p[i].revents & POLLPRI)) {
			FD_SET(p[i].fd, exceptfds);
			any = 1;
		}
		ret += any;
	}
	free(p);
	return ret;
}
