// SPDX-License-Identifier: MIT
/*
 * The devices rdma_cm works on: the process's emulated HCA, opened through
 * libibverbs (ibemu's, under 'ibemu exec') once and kept open, as
 * rdma-core's ucma_init() opens every device. rdma_get_devices() hands
 * their contexts out.
 */
#include <errno.h>
#include <stdlib.h>

#include "rdmacm_int.h"

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rdmacm_device device;
static int opened;

static int open_device(void)
{
	struct ibv_device **list;
	struct ibv_device_attr attr;
	int n = 0, ret = 0;

	list = ibv_get_device_list(&n);
	if (!list)
		return -ENODEV;
	if (n < 1) {
		ret = -ENODEV;
		goto out;
	}
	device.verbs = ibv_open_device(list[0]);
	if (!device.verbs) {
		ret = -ENODEV;
		goto out;
	}
	if (ibv_query_device(device.verbs, &attr)) {
		ibv_close_device(device.verbs);
		device.verbs = NULL;
		ret = -ENODEV;
		goto out;
	}
	device.nports = attr.phys_port_cnt;
out:
	ibv_free_device_list(list);
	return ret;
}

int rdmacm__init(void)
{
	int ret = 0;

	pthread_mutex_lock(&init_lock);
	if (!opened) {
		ret = open_device();
		opened = !ret;
	}
	pthread_mutex_unlock(&init_lock);
	return ret;
}

struct rdmacm_device *rdmacm__device(void)
{
	return opened ? &device : NULL;
}

struct ibv_pd *rdmacm__device_pd(struct rdmacm_device *dev)
{
	pthread_mutex_lock(&init_lock);
	if (!dev->pd)
		dev->pd = ibv_alloc_pd(dev->verbs);
	pthread_mutex_unlock(&init_lock);
	return dev->pd;
}

RDMACM_EXPORT struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **list;
	int ret = rdmacm__init();

	if (ret) {
		/* As rdma-core's: NULL and no devices when ucma_init fails. */
		if (num_devices)
			*num_devices = 0;
		errno = -ret;
		return NULL;
	}
	list = calloc(2, sizeof(*list));
	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	list[0] = device.verbs;
	if (num_devices)
		*num_devices = 1;
	return list;
}

RDMACM_EXPORT void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}
