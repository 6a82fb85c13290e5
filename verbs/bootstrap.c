// SPDX-License-Identifier: MIT
/*
 * The bootstrap of the ranks of 'ibemu run' (ibemu.h): what PMI gives an
 * MPI process, through the fabric's daemon. ibemu_init() opens a job
 * stream on sess.sock and joins the job 'ibemu run' named in the
 * environment; puts, gets and the collectives are requests on it, one at
 * a time (a lock), costed in virtual time: a put or a get by cost.h, a
 * collective by the daemon, which says when every rank resumes. While
 * this process waits in a collective the daemon holds it as waiting under
 * the time rule (attach/sess_job.c); before it asks, the calling thread
 * is marked running on every open context, so that a stale "waiting"
 * word there cannot let the fabric run past the process once it resumes.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "ibemu.h"
#include "sessc.h"
#include "verbs_int.h"

_Static_assert(IBEMU_KV_KEY_MAX == IBEMU_SESS_KV_KEY_MAX &&
		       IBEMU_KV_VAL_MAX == IBEMU_SESS_KV_VAL_MAX,
	       "the API's bounds are the protocol's");

static struct ibemu_sessc sessc = IBEMU_SESSC_INIT("libibverbs", NULL);

static pthread_mutex_t boot_lock = PTHREAD_MUTEX_INITIALIZER;
static int boot_fd = -1;
static int boot_rank = -1, boot_size = -1;
static char boot_host[IBEMU_SESS_HOST_LEN];

/* A decimal in 0..max from the environment; -1 if unset or not one. */
static long env_num(const char *name, long max)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > max)
		return -1;
	return v;
}

/* Returns -1 with errno 'e' (a positive errno). */
static int fail(int e)
{
	errno = e;
	return -1;
}

/*
 * The calling thread runs (it is in a call), on each context: a request
 * of the bootstrap counts as a call there, so a rank busy with puts and
 * gets is not taken for one that went silent (the grace period), and its
 * clock, moved by their costs, is published.
 */
static void mark_running(struct ibemu_verbs_context *ctx, void *arg)
{
	(void)arg;
	ibemu__verbs_calling(ctx);
	ibemu__verbs_clock_publish(ctx);
}

/* One request and its reply on the job stream (boot_lock held). */
static int exchange(uint16_t type, const void *req, size_t len, void *reply,
		    size_t cap, size_t *got)
{
	struct ibemu_sessc_refusal r;
	size_t n;
	int ret;

	if (boot_fd < 0)
		return -EINVAL;
	ibemu__verbs_each_context(mark_running, NULL);
	ret = ibemu_sessc_exchange(boot_fd, type, req, len, NULL, 0, reply, cap,
				   got ? got : &n, &r);
	/* A daemon gone: the stream is of no use from here on. */
	if (ret && !r.status)
		ret = -ECONNREFUSED;
	return ret;
}

VERBS_EXPORT int ibemu_init(void)
{
	struct ibemu_sess_job_join jn, reply;
	const char *job = getenv(IBEMU_SESS_ENV_JOB);
	const char *host = getenv(IBEMU_SESS_ENV_HOST);
	struct timeval forever = {0, 0};
	long rank = env_num(IBEMU_SESS_ENV_RANK, INT_MAX);
	long size = env_num(IBEMU_SESS_ENV_SIZE, INT_MAX);
	int fd, ret;

	if (!job || !*job || rank < 0 || size < 0 || !ibemu_sessc_socket_path())
		return fail(ENOENT);
	if (strlen(job) >= sizeof(jn.job) || rank >= size)
		return fail(EINVAL);
	pthread_mutex_lock(&boot_lock);
	if (boot_fd >= 0) {
		pthread_mutex_unlock(&boot_lock);
		return 0;
	}
	fd = ibemu_sessc_connect(&sessc);
	if (fd < 0) {
		pthread_mutex_unlock(&boot_lock);
		return fail(fd == -ENODEV ? ENOENT : ECONNREFUSED);
	}
	/* A collective waits for the slowest rank, however long. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &forever, sizeof(forever));
	memset(&jn, 0, sizeof(jn));
	memcpy(jn.job, job, strlen(job) + 1);
	jn.rank = (uint32_t)rank;
	jn.size = (uint32_t)size;
	jn.clock_ps = ibemu__verbs_clock();
	boot_fd = fd;
	ret = exchange(IBEMU_SESS_JOB_JOIN, &jn, sizeof(jn), &reply,
		       sizeof(reply), NULL);
	if (ret) {
		close(fd);
		boot_fd = -1;
		pthread_mutex_unlock(&boot_lock);
		return fail(-ret);
	}
	boot_rank = (int)rank;
	boot_size = (int)size;
	snprintf(boot_host, sizeof(boot_host), "%s", host ? host : "");
	pthread_mutex_unlock(&boot_lock);
	return 0;
}

VERBS_EXPORT int ibemu_rank(void)
{
	return __atomic_load_n(&boot_rank, __ATOMIC_ACQUIRE);
}

VERBS_EXPORT int ibemu_size(void)
{
	return __atomic_load_n(&boot_size, __ATOMIC_ACQUIRE);
}

VERBS_EXPORT const char *ibemu_host(void)
{
	return ibemu_rank() < 0 ? NULL : boot_host;
}

/* Whether 'key' is a key: not empty, shorter than IBEMU_KV_KEY_MAX. */
static int key_ok(const char *key)
{
	return key && *key && strnlen(key, IBEMU_KV_KEY_MAX) < IBEMU_KV_KEY_MAX;
}

VERBS_EXPORT int ibemu_kv_put(const char *key, const void *val, size_t len)
{
	uint8_t buf[sizeof(struct ibemu_sess_job_kv) + IBEMU_KV_VAL_MAX];
	struct ibemu_sess_job_kv *m = (struct ibemu_sess_job_kv *)buf;
	int ret;

	if (!key_ok(key) || len > IBEMU_KV_VAL_MAX || (len && !val))
		return fail(EINVAL);
	memset(m, 0, sizeof(*m));
	memcpy(m->key, key, strlen(key) + 1);
	m->len = (uint32_t)len;
	if (len)
		memcpy(m->val, val, len);
	pthread_mutex_lock(&boot_lock);
	ibemu__verbs_charge(NULL, IBEMU_VCOST_KV_PUT, 0);
	m->clock_ps = ibemu__verbs_clock();
	ret = exchange(IBEMU_SESS_JOB_PUT, m, sizeof(*m) + len, NULL, 0, NULL);
	pthread_mutex_unlock(&boot_lock);
	return ret ? fail(-ret) : 0;
}

VERBS_EXPORT ssize_t ibemu_kv_get(int rank, const char *key, void *val,
				  size_t cap)
{
	uint8_t buf[sizeof(struct ibemu_sess_job_kv) + IBEMU_KV_VAL_MAX];
	struct ibemu_sess_job_kv req, *reply = (struct ibemu_sess_job_kv *)buf;
	size_t got;
	int ret;

	if (!key_ok(key) || rank < 0 || (cap && !val))
		return fail(EINVAL);
	memset(&req, 0, sizeof(req));
	memcpy(req.key, key, strlen(key) + 1);
	req.rank = (uint32_t)rank;
	pthread_mutex_lock(&boot_lock);
	ibemu__verbs_charge(NULL, IBEMU_VCOST_KV_GET, 0);
	req.clock_ps = ibemu__verbs_clock();
	ret = exchange(IBEMU_SESS_JOB_GET, &req, sizeof(req), reply,
		       sizeof(buf), &got);
	pthread_mutex_unlock(&boot_lock);
	if (ret)
		return fail(-ret);
	if (got < sizeof(*reply) || reply->len != got - sizeof(*reply))
		return fail(EIO);
	memcpy(val, reply->val, reply->len < cap ? reply->len : cap);
	return (ssize_t)reply->len;
}

static int sync_job(uint32_t kind)
{
	struct ibemu_sess_job_sync m = {.kind = kind}, reply;
	int ret;

	pthread_mutex_lock(&boot_lock);
	m.clock_ps = ibemu__verbs_clock();
	ret = exchange(IBEMU_SESS_JOB_SYNC, &m, sizeof(m), &reply,
		       sizeof(reply), NULL);
	if (!ret)
		ibemu__verbs_clock_raise(reply.clock_ps);
	pthread_mutex_unlock(&boot_lock);
	return ret ? fail(-ret) : 0;
}

VERBS_EXPORT int ibemu_kv_fence(void)
{
	return sync_job(IBEMU_SESS_SYNC_FENCE);
}

VERBS_EXPORT int ibemu_barrier(void)
{
	return sync_job(IBEMU_SESS_SYNC_BARRIER);
}

VERBS_EXPORT void ibemu_finalize(void)
{
	pthread_mutex_lock(&boot_lock);
	if (boot_fd >= 0)
		close(boot_fd);
	boot_fd = -1;
	__atomic_store_n(&boot_rank, -1, __ATOMIC_RELEASE);
	__atomic_store_n(&boot_size, -1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&boot_lock);
}
