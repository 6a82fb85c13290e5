// SPDX-License-Identifier: MIT
/*
 * pmix.c: ibemu's bootstrap API (ibemu.h: ibemu_init, rank and size, the
 * key-value store, the barrier) over PMIx, for running the examples on a
 * real cluster: linked into a program, its definitions take the place of
 * the weak references ibemu.h declares, and srun --mpi=pmix or Open MPI's
 * mpirun (both PMIx servers) start the ranks. ibemu_now_ps stays
 * undefined, so the examples time with CLOCK_MONOTONIC (under 'ibemu
 * exec' it is ibemu's, and the ranks come from the PMIx server, not from
 * 'ibemu run').
 */
#include <errno.h>
#include <pmix.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ibemu.h"

static pmix_proc_t me;
static int job_size = -1, joined;
static char host[256];

/* PMIx status to the errno the bootstrap API documents. */
static int fail(pmix_status_t rc, int err)
{
	(void)rc;
	errno = err;
	return -1;
}

int ibemu_init(void)
{
	pmix_proc_t job;
	pmix_value_t *val = NULL;
	pmix_status_t rc;

	if (joined)
		return 0;
	rc = PMIx_Init(&me, NULL, 0);
	if (rc != PMIX_SUCCESS)
		return fail(rc, ENOENT);
	PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
	rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &val);
	if (rc != PMIX_SUCCESS || !val)
		return fail(rc, EPROTO);
	job_size = (int)val->data.uint32;
	PMIX_VALUE_RELEASE(val);
	if (gethostname(host, sizeof(host) - 1))
		snprintf(host, sizeof(host), "rank%u", me.rank);
	joined = 1;
	return 0;
}

int ibemu_rank(void)
{
	return joined ? (int)me.rank : -1;
}

int ibemu_size(void)
{
	return job_size;
}

const char *ibemu_host(void)
{
	return host;
}

int ibemu_kv_put(const char *key, const void *val, size_t len)
{
	pmix_value_t v;
	pmix_status_t rc;

	if (!joined)
		return fail(PMIX_ERR_INIT, EINVAL);
	if (strlen(key) >= IBEMU_KV_KEY_MAX || len > IBEMU_KV_VAL_MAX)
		return fail(PMIX_ERR_BAD_PARAM, EINVAL);
	memset(&v, 0, sizeof(v));
	v.type = PMIX_BYTE_OBJECT;
	v.data.bo.bytes = (char *)val;
	v.data.bo.size = len;
	rc = PMIx_Put(PMIX_GLOBAL, key, &v);
	return rc == PMIX_SUCCESS ? 0 : fail(rc, EIO);
}

int ibemu_kv_fence(void)
{
	pmix_info_t info;
	bool collect = true;
	pmix_status_t rc;

	if (!joined)
		return fail(PMIX_ERR_INIT, EINVAL);
	rc = PMIx_Commit();
	if (rc != PMIX_SUCCESS)
		return fail(rc, EIO);
	PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
	rc = PMIx_Fence(NULL, 0, &info, 1);
	PMIX_INFO_DESTRUCT(&info);
	return rc == PMIX_SUCCESS ? 0 : fail(rc, EIO);
}

ssize_t ibemu_kv_get(int rank, const char *key, void *val, size_t cap)
{
	pmix_value_t *v = NULL;
	pmix_proc_t proc;
	pmix_status_t rc;
	size_t len;

	if (!joined || rank < 0 || rank >= job_size)
		return fail(PMIX_ERR_BAD_PARAM, EINVAL);
	PMIX_LOAD_PROCID(&proc, me.nspace, (pmix_rank_t)rank);
	rc = PMIx_Get(&proc, key, NULL, 0, &v);
	if (rc != PMIX_SUCCESS || !v)
		return fail(rc, ENOENT);
	if (v->type != PMIX_BYTE_OBJECT) {
		PMIX_VALUE_RELEASE(v);
		return fail(PMIX_ERR_TYPE_MISMATCH, EPROTO);
	}
	len = v->data.bo.size;
	memcpy(val, v->data.bo.bytes, len < cap ? len : cap);
	PMIX_VALUE_RELEASE(v);
	return (ssize_t)len;
}

int ibemu_barrier(void)
{
	pmix_status_t rc;

	if (!joined)
		return fail(PMIX_ERR_INIT, EINVAL);
	rc = PMIx_Fence(NULL, 0, NULL, 0);
	return rc == PMIX_SUCCESS ? 0 : fail(rc, EIO);
}

void ibemu_finalize(void)
{
	if (joined)
		PMIx_Finalize(NULL, 0);
	joined = 0;
}
