// SPDX-License-Identifier: MIT
/*
 * The entry points of librdmacm that need the CM protocol on the wire
 * (connect, listen, accept: issue 23's next part) and the
 * rsockets API: exported so that every program loads, each failing with
 * ENOSYS, the errno rdma-core's librdmacm passes on when the kernel's
 * rdma_ucm lacks a command (ucma_write() answers -ENOSYS, and rsocket.c
 * tests for it), and never touching its arguments.
 */
#include <errno.h>
#include <rdma/rsocket.h>

#include "rdmacm_int.h"

#define NOT_YET() rdmacm_err(ENOSYS)

RDMACM_EXPORT int rdma_connect(struct rdma_cm_id *id,
			       struct rdma_conn_param *conn_param)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_establish(struct rdma_cm_id *id)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_get_request(struct rdma_cm_id *listen,
				   struct rdma_cm_id **id)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_accept(struct rdma_cm_id *id,
			      struct rdma_conn_param *conn_param)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_reject(struct rdma_cm_id *id, const void *private_data,
			      uint8_t private_data_len)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_reject_ece(struct rdma_cm_id *id,
				  const void *private_data,
				  uint8_t private_data_len)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_disconnect(struct rdma_cm_id *id)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_get_remote_ece(struct rdma_cm_id *id,
				      struct ibv_ece *ece)
{
	return NOT_YET();
}

/* rsockets (rsocket.h): sockets over RDMA connections, which need the CM. */
RDMACM_EXPORT int rsocket(int domain, int type, int protocol)
{
	return NOT_YET();
}

RDMACM_EXPORT int rbind(int socket, const struct sockaddr *addr,
			socklen_t addrlen)
{
	return NOT_YET();
}

RDMACM_EXPORT int rlisten(int socket, int backlog)
{
	return NOT_YET();
}

RDMACM_EXPORT int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	return NOT_YET();
}

RDMACM_EXPORT int rconnect(int socket, const struct sockaddr *addr,
			   socklen_t addrlen)
{
	return NOT_YET();
}

RDMACM_EXPORT int rshutdown(int socket, int how)
{
	return NOT_YET();
}

RDMACM_EXPORT int rclose(int socket)
{
	return NOT_YET();
}

RDMACM_EXPORT ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	return NOT_YET();
}

RDMACM_EXPORT ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags,
				struct sockaddr *src_addr, socklen_t *addrlen)
{
	return NOT_YET();
}

RDMACM_EXPORT ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	return NOT_YET();
}

RDMACM_EXPORT ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{
	return NOT_YET();
}

RDMACM_EXPORT ssize_t rsendto(int socket, const void *buf, size_t len,
			      int flags, const struct sockaddr *dest_addr,
			      socklen_t addrlen)
{
	return NOT_YET();
}

RDMACM_EXPORT ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	return NOT_YET();
}

RDMACM_EXPORT ssize_t rread(int socket, void *buf, size_t count)
{
	return NOT_YET();
}

RDMACM_EXPORT ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	return NOT_YET();
}

RDMACM_EXPORT ssize_t rwrite(int socket, const void *buf, size_t count)
{
	return NOT_YET();
}

RDMACM_EXPORT ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	return NOT_YET();
}

RDMACM_EXPORT int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return NOT_YET();
}

RDMACM_EXPORT int rselect(int nfds, fd_set *readfds, fd_set *writefds,
			  fd_set *exceptfds, struct timeval *timeout)
{
	return NOT_YET();
}

RDMACM_EXPORT int rgetpeername(int socket, struct sockaddr *addr,
			       socklen_t *addrlen)
{
	return NOT_YET();
}

RDMACM_EXPORT int rgetsockname(int socket, struct sockaddr *addr,
			       socklen_t *addrlen)
{
	return NOT_YET();
}

RDMACM_EXPORT int rsetsockopt(int socket, int level, int optname,
			      const void *optval, socklen_t optlen)
{
	return NOT_YET();
}

RDMACM_EXPORT int rgetsockopt(int socket, int level, int optname, void *optval,
			      socklen_t *optlen)
{
	return NOT_YET();
}

RDMACM_EXPORT int rfcntl(int socket, int cmd, ...)
{
	return NOT_YET();
}

RDMACM_EXPORT off_t riomap(int socket, void *buf, size_t len, int prot,
			   int flags, off_t offset)
{
	return NOT_YET();
}

RDMACM_EXPORT int riounmap(int socket, void *buf, size_t len)
{
	return NOT_YET();
}

/* rdma-core declares riowrite as size_t: its failure is (size_t)-1. */
RDMACM_EXPORT size_t riowrite(int socket, const void *buf, size_t count,
			      off_t offset, int flags)
{
	return (size_t)NOT_YET();
}
