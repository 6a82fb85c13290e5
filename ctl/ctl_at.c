// SPDX-License-Identifier: MIT
/*
 * Faults at a virtual time: 'ibemu link down|up NODE:PORT --at T' and
 * 'ibemu node down|up NODE --at T'. The change waits as an item due of the
 * daemon (daemon.h) and happens when the fabric's time reaches T, at the
 * same point of every run, so a fault mid-stream is reproducible. On an
 * idle fabric the pump paces the leap to T on the wall clock.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ctl_commands.h"

struct ibemu_ctl_fault {
	struct ibemu_due due; /* first: the item is the fault */
	struct ibemu_ctl_fault *next;
	int up;	       /* bring up (1) or take down (0) */
	uint32_t node; /* a node's every cable, or */
	uint32_t port; /* one port's cable (global index) */
	int whole_node;
};

static void fault_unlink(struct ibemu_daemon *d, struct ibemu_ctl_fault *f)
{
	struct ibemu_ctl_fault **pp;

	for (pp = &d->ctl->faults; *pp; pp = &(*pp)->next) {
		if (*pp == f) {
			*pp = f->next;
			return;
		}
	}
}

static void fault_fire(struct ibemu_daemon *d, struct ibemu_due *due)
{
	struct ibemu_ctl_fault *f = (struct ibemu_ctl_fault *)due;
	const struct ibemu_topo *t = d->topo;
	uint32_t node = f->node, pi;
	unsigned p;
	int ret = 0;

	fault_unlink(d, f);
	if (f->whole_node) {
		for (p = 1; !ret && p <= t->nodes[node].nports; p++) {
			if (t->nodes[node].ports[p].link == IBEMU_NONE)
				continue;
			pi = ibemu_engine_port_index(d->engine, node, p);
			ret = f->up ? ibemu__link_up(d, pi)
				    : ibemu__link_down(d, pi);
		}
	} else {
		ret = f->up ? ibemu__link_up(d, f->port)
			    : ibemu__link_down(d, f->port);
	}
	ibemu_daemon_log(d, "at virtual time %.3f us: %s %s%s%s",
			 (double)ibemu_engine_now(d->engine) / 1e6,
			 f->whole_node ? "node" : "link", f->up ? "up" : "down",
			 ret ? ": " : "", ret ? strerror(-ret) : "");
	free(f);
}

static int at_parse(struct ibemu_ctl_call *call, const char *what,
		    const char *text, uint64_t *at_ps)
{
	uint64_t now = ibemu_engine_now(call->d->engine);
	int rel = text[0] == '+';
	char *end;
	double us;

	errno = 0;
	us = strtod(text + rel, &end);
	if (errno || end == text + rel || *end || us < 0 || us > 1e12) {
		ibemu_buf_printf(call->err,
				 "%s: --at '%s': expected a virtual time in "
				 "microseconds since the fabric started, or "
				 "+US from now",
				 what, text);
		return 2;
	}
	*at_ps = (uint64_t)(us * 1e6) + (rel ? now : 0);
	if (*at_ps < now) {
		ibemu_buf_printf(call->err,
				 "%s: --at %s: virtual time is %.3f us "
				 "already; give a later time or +US",
				 what, text, (double)now / 1e6);
		return 1;
	}
	return 0;
}

int ibemu__ctl_at(struct ibemu_ctl_call *call, const char *what,
		  const char *text, int up, int whole_node,
		  uint32_t node_or_port)
{
	struct ibemu_daemon *d = call->d;
	struct ibemu_ctl_fault *f;
	uint64_t at_ps;
	int ret;

	ret = at_parse(call, what, text, &at_ps);
	if (ret)
		return ret;
	f = calloc(1, sizeof(*f));
	if (!f) {
		ibemu_buf_puts(call->err, "out of memory");
		return 1;
	}
	f->due.fire = fault_fire;
	f->up = up;
	f->whole_node = whole_node;
	if (whole_node)
		f->node = node_or_port;
	else
		f->port = node_or_port;
	f->next = d->ctl->faults;
	d->ctl->faults = f;
	ibemu_due_arm(d, &f->due, at_ps);
	ibemu_buf_printf(
		call->out, "scheduled at virtual time %.3f us (now %.3f us)\n",
		(double)at_ps / 1e6, (double)ibemu_engine_now(d->engine) / 1e6);
	return 0;
}

void ibemu__ctl_at_fini(struct ibemu_daemon *d)
{
	struct ibemu_ctl_fault *f;

	while ((f = d->ctl->faults)) {
		d->ctl->faults = f->next;
		ibemu_due_cancel(d, &f->due);
		free(f);
	}
}
