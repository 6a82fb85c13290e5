// SPDX-License-Identifier: MIT
/*
 * The XRC domains of a verbs stream (IBA Annex A14, ibv_open_xrcd): each
 * open is a handle of the stream on a domain of the HCA's transport. The
 * kernel shares a domain among the processes that open the same file,
 * found by its inode: here the daemon takes the file's descriptor with
 * the call and names the domain by the file's device and inode, so every
 * context of one HCA that opens the file shares it, and no process names
 * a domain it could not open. As the kernel's, a handle cannot be closed
 * while an XRC SRQ or QP made or opened through it lives (EBUSY).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sess_verbs_int.h"

struct vxrcd *ibemu__vs_xrcd_find(struct ibemu_sess_verbs *v, uint32_t handle)
{
	uint32_t i;

	for (i = 0; i < v->nxrcds; i++)
		if (v->xrcds[i].handle == handle)
			return &v->xrcds[i];
	return NULL;
}

void ibemu__vs_xrcd_use(struct ibemu_sess_verbs *v, uint32_t handle, int d)
{
	struct vxrcd *x = ibemu__vs_xrcd_find(v, handle);

	if (x)
		x->objs += (uint32_t)d;
}

/* The file's key: its device and inode, or {0, 0} without a file. */
static int file_key(const struct ibemu_verbs_xrcd_req *r, int *fds, int nfds,
		    uint64_t *dev, uint64_t *ino)
{
	struct stat st;
	int ret = 0;

	*dev = *ino = 0;
	if (nfds != !!r->has_fd) {
		ret = -EINVAL;
	} else if (nfds) {
		if (fstat(fds[0], &st)) {
			ret = -EBADF;
		} else {
			*dev = (uint64_t)st.st_dev;
			*ino = (uint64_t)st.st_ino;
		}
		/* {0, 0} is the anonymous key: a file never has it, but a
		 * file must never open an anonymous domain. */
		if (!ret && !*dev && !*ino)
			*ino = 1;
	}
	if (nfds)
		close(fds[0]);
	return ret;
}

static int xrcd_add(struct ibemu_sess_verbs *v, uint32_t xrcd, uint32_t *handle)
{
	struct vxrcd *a;

	if (v->nxrcds == v->xrcds_cap) {
		uint32_t cap = v->xrcds_cap ? 2 * v->xrcds_cap : 4;

		a = realloc(v->xrcds, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		v->xrcds = a;
		v->xrcds_cap = cap;
	}
	/* Handles from 1, never reused while the stream lives. */
	*handle = ++v->xrcd_next;
	v->xrcds[v->nxrcds++] =
		(struct vxrcd){.handle = *handle, .xrcd = xrcd, .objs = 0};
	return 0;
}

int ibemu__vs_xrcd_open(struct ibemu_sess_verbs *v,
			struct ibemu_verbs_xrcd_req *r, int *fds, int nfds)
{
	uint64_t dev, ino;
	uint32_t xrcd;
	int ret;

	ret = file_key(r, fds, nfds, &dev, &ino);
	if (ret)
		return ret;
	if (r->oflags & ~(uint32_t)(O_CREAT | O_EXCL))
		return -EINVAL;
	if (v->nxrcds >= IBEMU_VERBS_MAX_XRCD || v->xrcd_next == UINT32_MAX)
		return -ENOMEM;
	ret = ibemu_tp_xrcd_open(v->hca->tp, dev, ino, !!(r->oflags & O_CREAT),
				 !!(r->oflags & O_EXCL), &xrcd);
	if (ret)
		return ret;
	ret = xrcd_add(v, xrcd, &r->handle);
	if (ret) {
		ibemu_tp_xrcd_close(v->hca->tp, xrcd);
		return ret;
	}
	r->xrcd = xrcd;
	return 0;
}

int ibemu__vs_xrcd_close(struct ibemu_sess_verbs *v, uint32_t handle)
{
	struct vxrcd *x = ibemu__vs_xrcd_find(v, handle);
	int ret;

	if (!x)
		return -EINVAL;
	if (x->objs)
		return -EBUSY;
	ret = ibemu_tp_xrcd_close(v->hca->tp, x->xrcd);
	if (ret)
		return ret;
	*x = v->xrcds[--v->nxrcds];
	return 0;
}

void ibemu__vs_xrcd_close_all(struct ibemu_sess_verbs *v)
{
	uint32_t i;

	for (i = 0; i < v->nxrcds; i++)
		ibemu_tp_xrcd_close(v->hca->tp, v->xrcds[i].xrcd);
	free(v->xrcds);
	v->xrcds = NULL;
	v->nxrcds = v->xrcds_cap = 0;
}
