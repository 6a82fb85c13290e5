// SPDX-License-Identifier: MIT
/*
 * Jobs: the bootstrap of the ranks 'ibemu run' launches (verbs/ibemu.h).
 * Each rank's library opens a job stream and joins its job (by the id
 * 'ibemu run' set); the job keeps a key-value store per rank, values put
 * since the last fence apart from those it made visible, and the
 * collectives (fence, barrier) in progress. A rank that waits in one is
 * held: the time rule counts its process as waiting (docs/design.md §3,
 * "Job collectives"), and the collective completes, when the last rank
 * arrives, at the latest arrival clock plus a modelled cost. The job is
 * freed when the last of its ranks' streams closes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sess.h"
#include "sess_verbs_int.h"

/*
 * What all jobs together may hold: ranks (their records are made at the
 * first JOIN, whatever the size says) and bytes of values. A job's
 * streams are sockets a process must hold, but one process may hold many.
 */
#define JOBS_MAX_RANKS (4ull * IBEMU_SESS_JOB_MAX_SIZE)
#define JOBS_MAX_BYTES (64ull << 20)

/* A value put by a rank: visible to GETs once a fence committed it. */
struct job_kv {
	struct job_kv *next;
	char key[IBEMU_SESS_KV_KEY_MAX];
	int committed;
	uint32_t len;
	uint8_t val[];
};

struct job_rank {
	struct ibemu_sess_conn *conn; /* its stream, NULL once closed */
	int joined;
	int arrived; /* in the collective under way */
	uint64_t arrival_ps;
	struct job_kv *kvs;
	uint32_t nkvs;
};

struct ibemu_sess_job {
	struct ibemu_sess_job *next;
	char id[IBEMU_SESS_JOB_ID_LEN];
	uint32_t size;
	uint32_t live;	  /* ranks whose stream is open */
	int left;	  /* a rank's stream closed: collectives fail */
	uint64_t epoch;	  /* collectives completed */
	uint32_t arrived; /* ranks in the collective under way */
	uint32_t kind;	  /* its kind (the first arrival's) */
	uint64_t latest_ps;
	uint64_t put_bytes; /* values put since the last fence */
	struct job_rank ranks[];
};

static void job_log(struct ibemu_sess_conn *c, const char *what)
{
	ibemu_daemon_log_limited(c->s->d, &c->s->d->refusals,
				 "job client (pid %ld) refused: %s",
				 (long)c->pid, what);
}

/* ERROR on the stream, which stays open (a mistake of the caller's). */
static void job_error(struct ibemu_sess_conn *c, int status, const char *what)
{
	job_log(c, what);
	ibemu__sess_send_msg(c->fd, IBEMU_SESS_ERROR, status, what,
			     strlen(what));
}

/* ERROR, and the stream closes (a broken protocol or a refused JOIN). */
static void job_refuse(struct ibemu_sess_conn *c, int status, const char *what)
{
	job_error(c, status, what);
	ibemu__sess_conn_close(c, NULL);
}

/* 0 if 'key' is NUL-terminated within its field and not empty. */
static int key_ok(const char *key)
{
	return key[0] && memchr(key, '\0', IBEMU_SESS_KV_KEY_MAX) ? 0 : -EINVAL;
}

static struct ibemu_sess_job *job_find(struct ibemu_sess_server *s,
				       const char *id)
{
	struct ibemu_sess_job *j;

	for (j = s->jobs; j; j = j->next)
		if (!strcmp(j->id, id))
			return j;
	return NULL;
}

static void job_free(struct ibemu_sess_server *s, struct ibemu_sess_job *j)
{
	struct ibemu_sess_job **pp;
	struct job_kv *kv;
	uint32_t i;

	for (pp = &s->jobs; *pp; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	for (i = 0; i < j->size; i++)
		while ((kv = j->ranks[i].kvs)) {
			j->ranks[i].kvs = kv->next;
			s->job_bytes -= kv->len;
			free(kv);
		}
	s->job_ranks -= j->size;
	free(j);
}

/*
 * Holds or releases every stream of process 'pid' for the rule. On
 * release its grace and memory-polling marks start afresh: time spent
 * held was waiting, not a silence that presumes anything.
 */
static void hold(struct ibemu_sess_server *s, pid_t pid, int on)
{
	struct ibemu_sess_conn *c;

	for (c = s->conns; c; c = c->next) {
		if (c->pid != pid)
			continue;
		c->job_held = on;
		if (on)
			continue;
		if (c->kind == IBEMU_SESS_CONN_VERBS && c->verbs) {
			c->verbs->rule.idle_known = 0;
			c->verbs->rule.mem_known = 0;
		} else if (c->kind == IBEMU_SESS_CONN_STREAM) {
			c->time.rule.idle_known = 0;
		}
	}
}

static void join(struct ibemu_sess_conn *c, const struct ibemu_sess_hdr *h,
		 const struct ibemu_sess_job_join *jn)
{
	struct ibemu_sess_server *s = c->s;
	struct ibemu_sess_job_join reply;
	struct ibemu_sess_job *j;
	char why[160];

	if (h->len != sizeof(*jn))
		return job_refuse(c, -EPROTO, "JOB_JOIN of the wrong size");
	if (!jn->job[0] || !memchr(jn->job, '\0', sizeof(jn->job)))
		return job_refuse(c, -EINVAL,
				  "JOB_JOIN: the job id is empty or not "
				  "NUL-terminated");
	if (!jn->size || jn->size > IBEMU_SESS_JOB_MAX_SIZE ||
	    jn->rank >= jn->size) {
		snprintf(why, sizeof(why),
			 "JOB_JOIN: rank %u of a job of size %u (sizes are "
			 "1..%u)",
			 jn->rank, jn->size, IBEMU_SESS_JOB_MAX_SIZE);
		return job_refuse(c, -EINVAL, why);
	}
	j = job_find(s, jn->job);
	if (j && j->size != jn->size) {
		snprintf(why, sizeof(why),
			 "JOB_JOIN: job %s has %u ranks, this rank says %u",
			 j->id, j->size, jn->size);
		return job_refuse(c, -EINVAL, why);
	}
	if (j && j->ranks[jn->rank].joined) {
		snprintf(why, sizeof(why),
			 "JOB_JOIN: rank %u of job %s joined already", jn->rank,
			 j->id);
		return job_refuse(c, -EEXIST, why);
	}
	if (!j && s->job_ranks + jn->size > JOBS_MAX_RANKS)
		return job_refuse(c, -ENOSPC,
				  "JOB_JOIN: the jobs attached hold too many "
				  "ranks");
	if (!j) {
		j = calloc(1, sizeof(*j) + jn->size * sizeof(j->ranks[0]));
		if (!j)
			return job_refuse(c, -ENOMEM,
					  "JOB_JOIN: out of memory");
		memcpy(j->id, jn->job, sizeof(j->id));
		j->size = jn->size;
		j->next = s->jobs;
		s->jobs = j;
		s->job_ranks += j->size;
	}
	j->ranks[jn->rank].joined = 1;
	j->ranks[jn->rank].conn = c;
	j->live++;
	c->kind = IBEMU_SESS_CONN_JOB;
	c->job = j;
	c->rank = jn->rank;
	reply = *jn;
	ibemu__sess_send_msg(c->fd, IBEMU_SESS_JOB_JOIN, 0, &reply,
			     sizeof(reply));
}

static struct job_kv *kv_find(struct job_rank *r, const char *key,
			      int committed)
{
	struct job_kv *kv;

	for (kv = r->kvs; kv; kv = kv->next)
		if (kv->committed == committed && !strcmp(kv->key, key))
			return kv;
	return NULL;
}

/* Removes 'kv' from rank 'r''s list and frees it. */
static void kv_drop(struct ibemu_sess_server *s, struct job_rank *r,
		    struct job_kv *kv)
{
	struct job_kv **pp;

	for (pp = &r->kvs; *pp; pp = &(*pp)->next)
		if (*pp == kv) {
			*pp = kv->next;
			r->nkvs--;
			s->job_bytes -= kv->len;
			free(kv);
			return;
		}
}

static void put(struct ibemu_sess_conn *c, const struct ibemu_sess_hdr *h,
		const struct ibemu_sess_job_kv *m)
{
	struct ibemu_sess_job *j = c->job;
	struct job_rank *r = &j->ranks[c->rank];
	struct job_kv *kv, *old;

	if (h->len < sizeof(*m) || m->len != h->len - sizeof(*m) ||
	    m->len > IBEMU_SESS_KV_VAL_MAX)
		return job_error(c, -EINVAL,
				 "JOB_PUT: a value of more than 1024 bytes, "
				 "or a length the message does not have");
	if (key_ok(m->key))
		return job_error(c, -EINVAL,
				 "JOB_PUT: the key is empty or not "
				 "NUL-terminated within 64 bytes");
	old = kv_find(r, m->key, 0);
	if (!old && r->nkvs >= IBEMU_SESS_KV_MAX_KEYS)
		return job_error(c, -ENOSPC, "JOB_PUT: too many keys");
	if (c->s->job_bytes + m->len > JOBS_MAX_BYTES)
		return job_error(c, -ENOSPC,
				 "JOB_PUT: the jobs attached hold too many "
				 "bytes");
	kv = malloc(sizeof(*kv) + m->len);
	if (!kv)
		return job_error(c, -ENOMEM, "JOB_PUT: out of memory");
	memset(kv, 0, sizeof(*kv));
	memcpy(kv->key, m->key, sizeof(kv->key));
	kv->len = m->len;
	memcpy(kv->val, m->val, m->len);
	if (old)
		kv_drop(c->s, r, old);
	kv->next = r->kvs;
	r->kvs = kv;
	r->nkvs++;
	c->s->job_bytes += m->len;
	j->put_bytes += m->len;
	ibemu__sess_send_msg(c->fd, IBEMU_SESS_JOB_PUT, 0, NULL, 0);
}

static void get(struct ibemu_sess_conn *c, const struct ibemu_sess_hdr *h,
		const struct ibemu_sess_job_kv *m)
{
	struct ibemu_sess_job *j = c->job;
	uint8_t buf[sizeof(struct ibemu_sess_job_kv) + IBEMU_SESS_KV_VAL_MAX];
	struct ibemu_sess_job_kv *reply = (struct ibemu_sess_job_kv *)buf;
	struct job_kv *kv;

	if (h->len != sizeof(*m) || m->len)
		return job_error(c, -EINVAL, "JOB_GET of the wrong size");
	if (m->rank >= j->size || key_ok(m->key))
		return job_error(c, -EINVAL,
				 "JOB_GET: a rank not in the job, or a key "
				 "empty or not NUL-terminated within 64 "
				 "bytes");
	kv = kv_find(&j->ranks[m->rank], m->key, 1);
	if (!kv)
		return job_error(c, -ENOENT, "JOB_GET: no such key");
	*reply = *m;
	reply->len = kv->len;
	memcpy(reply->val, kv->val, kv->len);
	ibemu__sess_send_msg(c->fd, IBEMU_SESS_JOB_GET, 0, reply,
			     sizeof(*reply) + kv->len);
}

/* Makes every value put before this fence visible, replacing the old. */
static void commit(struct ibemu_sess_server *s, struct ibemu_sess_job *j)
{
	struct job_kv *kv, *old;
	uint32_t i;

	for (i = 0; i < j->size; i++)
		for (kv = j->ranks[i].kvs; kv; kv = kv->next) {
			if (kv->committed)
				continue;
			old = kv_find(&j->ranks[i], kv->key, 1);
			if (old)
				kv_drop(s, &j->ranks[i], old);
			kv->committed = 1;
		}
	j->put_bytes = 0;
}

/* ceil(log2(n)): the rounds of a dissemination barrier over n ranks. */
static uint64_t rounds(uint32_t n)
{
	uint64_t r = 0;

	while ((1ull << r) < n)
		r++;
	return r;
}

/* The last rank arrived: everyone resumes at the same virtual time. */
static void complete(struct ibemu_sess_server *s, struct ibemu_sess_job *j)
{
	struct ibemu_sess_job_sync reply = {.kind = j->kind};
	uint64_t t = j->latest_ps + rounds(j->size) * IBEMU_SESS_SYNC_ROUND_PS;
	uint32_t i;

	if (j->kind == IBEMU_SESS_SYNC_FENCE) {
		t += j->put_bytes * IBEMU_SESS_SYNC_BYTE_PS;
		commit(s, j);
	}
	j->epoch++;
	reply.clock_ps = t;
	reply.epoch = j->epoch;
	for (i = 0; i < j->size; i++) {
		struct job_rank *r = &j->ranks[i];

		r->arrived = 0;
		if (!r->conn)
			continue;
		hold(s, r->conn->pid, 0);
		ibemu__sess_send_msg(r->conn->fd, IBEMU_SESS_JOB_SYNC, 0,
				     &reply, sizeof(reply));
	}
	j->arrived = 0;
	j->latest_ps = 0;
}

/* A rank left: those waiting in the collective get -EPIPE. */
static void fail_arrived(struct ibemu_sess_server *s, struct ibemu_sess_job *j)
{
	static const char why[] = "a rank of the job has left";
	uint32_t i;

	for (i = 0; i < j->size; i++) {
		struct job_rank *r = &j->ranks[i];

		if (!r->arrived)
			continue;
		r->arrived = 0;
		if (!r->conn)
			continue;
		hold(s, r->conn->pid, 0);
		ibemu__sess_send_msg(r->conn->fd, IBEMU_SESS_ERROR, -EPIPE, why,
				     strlen(why));
	}
	j->arrived = 0;
	j->latest_ps = 0;
}

static void sync_arrive(struct ibemu_sess_conn *c,
			const struct ibemu_sess_hdr *h,
			const struct ibemu_sess_job_sync *m)
{
	struct ibemu_sess_job *j = c->job;
	struct job_rank *r = &j->ranks[c->rank];

	if (h->len != sizeof(*m) || (m->kind != IBEMU_SESS_SYNC_FENCE &&
				     m->kind != IBEMU_SESS_SYNC_BARRIER))
		return job_error(c, -EINVAL,
				 "JOB_SYNC of the wrong size or "
				 "kind");
	if (r->arrived)
		return job_error(c, -EINVAL,
				 "JOB_SYNC: this rank waits in one already");
	if (j->left)
		return job_error(c, -EPIPE, "a rank of the job has left");
	if (j->arrived && m->kind != j->kind)
		return job_error(c, -EINVAL,
				 "JOB_SYNC: a fence where the others are in "
				 "a barrier, or the reverse");
	if (!j->arrived)
		j->kind = m->kind;
	r->arrived = 1;
	r->arrival_ps = m->clock_ps;
	if (m->clock_ps > j->latest_ps)
		j->latest_ps = m->clock_ps;
	if (++j->arrived == j->size) {
		complete(c->s, j);
		return;
	}
	hold(c->s, c->pid, 1);
	ibemu_daemon_pump(c->s->d); /* the horizon may have moved */
}

void ibemu__sess_job_msg(struct ibemu_sess_conn *c,
			 const struct ibemu_sess_hdr *h, const void *payload)
{
	if (c->kind == IBEMU_SESS_CONN_NEW)
		return join(c, h, payload);
	switch (h->type) {
	case IBEMU_SESS_JOB_PUT:
		return put(c, h, payload);
	case IBEMU_SESS_JOB_GET:
		return get(c, h, payload);
	case IBEMU_SESS_JOB_SYNC:
		return sync_arrive(c, h, payload);
	default:
		return job_refuse(c, -EPROTO,
				  "a job stream takes JOB_PUT, JOB_GET and "
				  "JOB_SYNC only");
	}
}

void ibemu__sess_job_leave(struct ibemu_sess_conn *c)
{
	struct ibemu_sess_job *j = c->job;
	struct job_rank *r;

	if (!j)
		return;
	r = &j->ranks[c->rank];
	if (r->arrived)
		hold(c->s, c->pid, 0);
	r->arrived = 0;
	r->conn = NULL;
	c->job = NULL;
	j->left = 1;
	fail_arrived(c->s, j);
	if (!--j->live)
		job_free(c->s, j);
}
