// SPDX-License-Identifier: MIT
/*
 * Which HCA an attached process is: every process (by pid) is bound to one
 * HCA node, named by IBEMU_HOST or else handed the first HCA that no live
 * process holds (a subnet manager's holding aside), so that N programs
 * started under 'ibemu exec' act as N hosts. A binding lasts while its process lives; a pid that died (or was
 * reused by another process, which /proc's start time tells) frees it.
 * While bound, the HCA's ports belong to its QP transport (hca/transport.h,
 * one per bound HCA, shared by the processes bound to it): it runs their
 * QPs and passes MADs up to the session server, and a traffic study
 * leaves them alone unless no QP uses them (then it borrows them:
 * ibemu_engine_port_borrow()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sess.h"

/*
 * The start time of 'pid' (field 22 of /proc/PID/stat): 0, -ESRCH when the
 * process is gone or a zombie, or -EMFILE/-ENFILE when the daemon cannot
 * open the file to know (which says nothing about the process).
 */
static int proc_start_time(pid_t pid, uint64_t *start)
{
	char path[64], buf[1024], *p;
	unsigned long long st;
	size_t n;
	FILE *f;
	int field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == EMFILE || errno == ENFILE ? -errno : -ESRCH;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The command name may hold spaces and parentheses: skip to the
	 * last ')'; the state is field 3, the start time field 22. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return -ESRCH;
	p += 2;
	for (field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p || sscanf(p, "%llu", &st) != 1)
		return -ESRCH;
	*start = st;
	return 0;
}

/* Whether a binding's process runs; one the daemon cannot check stays. */
static int binding_alive(const struct ibemu_sess_binding *b)
{
	uint64_t start;
	int ret = proc_start_time(b->pid, &start);

	return ret ? ret != -ESRCH : start == b->start_time;
}

static struct ibemu_sess_binding *binding_find(struct ibemu_sess_server *s,
					       pid_t pid)
{
	uint32_t i;

	for (i = 0; i < s->nbinds; i++)
		if (s->binds[i].pid == pid)
			return &s->binds[i];
	return NULL;
}

static int node_taken(struct ibemu_sess_server *s, uint32_t node)
{
	uint32_t i;

	for (i = 0; i < s->nbinds; i++)
		if (s->binds[i].node == node)
			return 1;
	return 0;
}

/*
 * Whether the processes bound to HCA 'node' look like subnet managers
 * only: no more of them than opens of its ports' issm devices. A host
 * that runs the SM is still a host, handed out as one (as a real
 * cluster's SM node runs jobs too).
 */
static int node_sm_only(struct ibemu_sess_server *s, uint32_t node)
{
	struct ibemu_engine *e = s->d->engine;
	unsigned p, nports = s->d->topo->nodes[node].nports;
	uint32_t i, bound = 0, sms = 0;

	if (!s->issm_opens)
		return 0;
	for (i = 0; i < s->nbinds; i++)
		bound += s->binds[i].node == node;
	for (p = 1; p <= nports; p++)
		sms += s->issm_opens[ibemu_engine_port_index(e, node, p)];
	return bound <= sms;
}

static void release_ports(struct ibemu_sess_server *s, uint32_t node)
{
	struct ibemu_sess_hca *h = s->hcas ? s->hcas[node] : NULL;

	if (!h)
		return;
	IBEMU_BUG_ON(h->verbs);
	ibemu_tp_destroy(h->tp); /* detaches the ports */
	free(h);
	s->hcas[node] = NULL;
}

/*
 * Takes the ports of HCA 'node' for its transport, which hands MADs up
 * (ibemu__sess_tp_ops); -EBUSY if another owner holds one.
 */
static int hold_ports(struct ibemu_sess_server *s, uint32_t node)
{
	struct ibemu_sess_hca *h;
	int ret;

	/* Processes named to one HCA share its ports. */
	if (s->hcas[node])
		return 0;
	if (!s->tpd) {
		ret = ibemu_tp_domain_create(s->d->engine, &s->tpd);
		if (ret)
			return ret;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->s = s;
	h->node = node;
	ret = ibemu_tp_create(s->tpd, node, &ibemu__sess_tp_ops, h, &h->tp);
	if (ret) {
		free(h);
		return ret;
	}
	s->hcas[node] = h;
	return 0;
}

/* Whether another owner (a traffic study) holds a port of 'node'. */
static int ports_busy(struct ibemu_sess_server *s, uint32_t node)
{
	struct ibemu_engine *e = s->d->engine;
	unsigned p, nports = s->d->topo->nodes[node].nports;
	void *mine =
		s->hcas && s->hcas[node] ? (void *)s->hcas[node]->tp : NULL;
	void *owner;

	for (p = 1; p <= nports; p++) {
		owner = ibemu_engine_port_owner(
			e, ibemu_engine_port_index(e, node, p));
		if (owner && owner != mine)
			return 1;
	}
	return 0;
}

static void binding_remove(struct ibemu_sess_server *s,
			   struct ibemu_sess_binding *b)
{
	uint32_t node = b->node;

	*b = s->binds[--s->nbinds];
	if (!node_taken(s, node))
		release_ports(s, node);
}

/* Forgets the bindings of processes that are gone and hold no stream. */
void ibemu__sess_bind_prune(struct ibemu_sess_server *s)
{
	uint32_t i = 0;

	while (i < s->nbinds) {
		if (!s->binds[i].streams && !binding_alive(&s->binds[i]))
			binding_remove(s, &s->binds[i]);
		else
			i++;
	}
}

/* The HCA 'host' names, or IBEMU_NONE with 'why' filled. */
static uint32_t hca_by_name(struct ibemu_sess_server *s, const char *host,
			    char *why, size_t whylen)
{
	const struct ibemu_topo *t = s->d->topo;
	uint32_t node = ibemu_topo_find(t, host);

	if (node == IBEMU_NONE || t->nodes[node].type != IBEMU_NODE_HCA) {
		snprintf(why, whylen, "no HCA named %s in fabric %s", host,
			 t->name);
		return IBEMU_NONE;
	}
	return node;
}

static uint32_t hca_free(struct ibemu_sess_server *s, char *why, size_t whylen)
{
	const struct ibemu_topo *t = s->d->topo;
	uint32_t node, hcas = 0;

	for (node = 0; node < t->nnodes; node++) {
		if (t->nodes[node].type != IBEMU_NODE_HCA)
			continue;
		hcas++;
		if ((!node_taken(s, node) || node_sm_only(s, node)) &&
		    !ports_busy(s, node))
			return node;
	}
	snprintf(why, whylen,
		 "all %u HCAs of fabric %s are held by running processes "
		 "or a traffic study; name one with IBEMU_HOST (ibemu exec "
		 "--host)",
		 hcas, t->name);
	return IBEMU_NONE;
}

int ibemu__sess_bind(struct ibemu_sess_server *s, pid_t pid, const char *host,
		     uint32_t *node, char *why, size_t whylen)
{
	const struct ibemu_topo *t = s->d->topo;
	struct ibemu_sess_binding *b;
	uint64_t start;
	uint32_t want;
	int ret;

	ibemu__sess_bind_prune(s);
	ret = proc_start_time(pid, &start);
	if (ret == -ESRCH) {
		snprintf(why, whylen, "process %ld is gone", (long)pid);
		return ret;
	}
	if (ret) {
		snprintf(why, whylen,
			 "the daemon has too many open files (%s): detach "
			 "some processes or close idle connections",
			 strerror(-ret));
		return ret;
	}
	b = binding_find(s, pid);
	if (b && b->start_time != start) {
		/* The pid of a dead process came back as another one. */
		if (b->streams) {
			snprintf(why, whylen,
				 "process %ld still has port streams of an "
				 "earlier process with its pid",
				 (long)pid);
			return -EBUSY;
		}
		binding_remove(s, b);
		b = NULL;
	}
	if (*host) {
		want = hca_by_name(s, host, why, whylen);
		if (want == IBEMU_NONE)
			return -ENODEV;
		if (b && b->node != want) {
			if (b->streams) {
				snprintf(why, whylen,
					 "process %ld is attached to %s; it "
					 "cannot use %s too",
					 (long)pid, t->nodes[b->node].name,
					 host);
				return -EBUSY;
			}
			binding_remove(s, b);
			b = NULL;
		}
	} else if (b) {
		want = b->node;
	} else {
		want = hca_free(s, why, whylen);
		if (want == IBEMU_NONE)
			return -EBUSY;
	}
	if (!b) {
		if (ibemu_array_grow((void **)&s->binds, &s->binds_cap,
				     s->nbinds + 1, sizeof(*s->binds))) {
			snprintf(why, whylen, "out of memory");
			return -ENOMEM;
		}
		if (!s->hcas) {
			s->hcas = calloc(t->nnodes, sizeof(*s->hcas));
			if (!s->hcas) {
				snprintf(why, whylen, "out of memory");
				return -ENOMEM;
			}
		}
		if (hold_ports(s, want)) {
			snprintf(why, whylen,
				 "%s is in use by a traffic study; wait for "
				 "it to end or name another HCA",
				 t->nodes[want].name);
			return -EBUSY;
		}
		b = &s->binds[s->nbinds++];
		b->pid = pid;
		b->start_time = start;
		b->node = want;
		b->streams = 0;
	}
	*node = want;
	return 0;
}

void ibemu__sess_bind_streams(struct ibemu_sess_server *s, pid_t pid, int delta)
{
	struct ibemu_sess_binding *b = binding_find(s, pid);

	if (!b)
		return;
	IBEMU_BUG_ON(delta < 0 && b->streams == 0);
	b->streams += delta;
	/* The last stream of a process that exited: its HCA is free. */
	if (!b->streams && !binding_alive(b))
		binding_remove(s, b);
}

void ibemu__sess_bind_fini(struct ibemu_sess_server *s)
{
	while (s->nbinds)
		binding_remove(s, &s->binds[s->nbinds - 1]);
	free(s->binds);
	s->binds = NULL;
	s->nbinds = s->binds_cap = 0;
	if (s->tpd)
		ibemu_tp_domain_destroy(s->tpd);
	s->tpd = NULL;
	free(s->hcas);
	s->hcas = NULL;
}

void ibemu__sess_prune(struct ibemu_daemon *d)
{
	if (d->sess)
		ibemu__sess_bind_prune(d->sess);
}
