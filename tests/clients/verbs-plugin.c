// SPDX-License-Identifier: MIT
/*
 * libibverbs as a plugin's library, the way Open MPI's openib BTL has it:
 * not linked, but loaded with dlopen() and closed with dlclose() while a
 * thread that polled a CQ lives on (Open MPI's progress thread), and that
 * thread ends only after. It must end cleanly: whatever the library set
 * up for its threads outlives the dlclose(). Prints plugin=ok and exits
 * 0; on failure the process dies of its signal.
 *
 * usage: verbs-plugin
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include <infiniband/verbs.h>

/* The calls it makes, found with dlsym(). */
struct lib {
	struct ibv_device **(*get_device_list)(int *n);
	void (*free_device_list)(struct ibv_device **list);
	struct ibv_context *(*open_device)(struct ibv_device *d);
	int (*close_device)(struct ibv_context *ctx);
	struct ibv_cq *(*create_cq)(struct ibv_context *ctx, int cqe,
				    void *cq_context,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	int (*destroy_cq)(struct ibv_cq *cq);
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int polled, closed;

static void set(int *flag)
{
	pthread_mutex_lock(&lock);
	*flag = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

static void await(const int *flag)
{
	pthread_mutex_lock(&lock);
	while (!*flag)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

/* Takes part in the context (one poll), then outlives the library. */
static void *progress(void *arg)
{
	struct ibv_cq *cq = arg;
	struct ibv_wc wc;

	cq->context->ops.poll_cq(cq, 1, &wc);
	set(&polled);
	await(&closed);
	return NULL;
}

static int bind_lib(void *h, struct lib *l)
{
	*(void **)&l->get_device_list = dlsym(h, "ibv_get_device_list");
	*(void **)&l->free_device_list = dlsym(h, "ibv_free_device_list");
	*(void **)&l->open_device = dlsym(h, "ibv_open_device");
	*(void **)&l->close_device = dlsym(h, "ibv_close_device");
	*(void **)&l->create_cq = dlsym(h, "ibv_create_cq");
	*(void **)&l->destroy_cq = dlsym(h, "ibv_destroy_cq");
	return l->get_device_list && l->free_device_list && l->open_device &&
	       l->close_device && l->create_cq && l->destroy_cq;
}

int main(void)
{
	void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	struct ibv_device **list = NULL;
	struct ibv_context *ctx = NULL;
	struct ibv_cq *cq = NULL;
	struct lib l;
	pthread_t t;

	if (!h || !bind_lib(h, &l)) {
		printf("FAIL: dlopen: %s\n", dlerror());
		return 1;
	}
	list = l.get_device_list(NULL);
	ctx = list && list[0] ? l.open_device(list[0]) : NULL;
	cq = ctx ? l.create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	if (!cq || pthread_create(&t, NULL, progress, cq)) {
		printf("FAIL: setup\n");
		return 1;
	}
	await(&polled);
	if (l.destroy_cq(cq) || l.close_device(ctx)) {
		printf("FAIL: destroy or close\n");
		return 1;
	}
	l.free_device_list(list);
	dlclose(h);
	set(&closed);
	pthread_join(t, NULL);
	printf("plugin=ok\n");
	return 0;
}
