// SPDX-License-Identifier: MIT
/*
 * What the SM is doing, for 'ibemu sm status' and for whoever started it:
 * a small JSON file rewritten whole after every sweep (written aside and
 * renamed, so a reader never sees half of one), and a one-time word on a
 * pipe when the subnet first comes up (or this SM turns out standby).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sm.h"

#define NODE_TYPE_SWITCH 2 /* IBA 14.2.5.3 NodeInfo NodeType */

static const char *state_name(const struct sm *sm)
{
	if (!sm->heavy_sweeps)
		return "discovering";
	return sm->standby ? "standby" : "master";
}

/* A JSON string: quotes, backslashes and control bytes escaped. */
static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* What the last heavy sweep found changed since the one before. */
static void write_changes(const struct sm *sm, FILE *f)
{
	const struct sm_changes *c = &sm->changes;
	unsigned i;

	fprintf(f, "  \"last_heavy_sweep\": {\"number\": %lu, \"why\": ",
		c->sweep);
	put_str(f, c->why);
	fprintf(f,
		", \"at\": %lld, \"nodes_added\": %u, \"nodes_removed\": %u, "
		"\"links_added\": %u, \"links_removed\": %u,\n"
		"    \"changes\": [",
		c->at, c->nodes_added, c->nodes_removed, c->links_added,
		c->links_removed);
	for (i = 0; i < c->nlisted; i++) {
		fputs(i ? ",\n      " : "\n      ", f);
		put_str(f, c->listed[i]);
	}
	fprintf(f, "%s]},\n", c->nlisted ? "\n    " : "");
}

/* The CC manager (cc.c): its policy file and its counts. */
static void write_cc(const struct sm *sm, FILE *f)
{
	const struct sm_cc_stats *c = &sm->cc_stats;

	fprintf(f, "  \"cc\": {\"enabled\": %s, \"config\": ",
		sm->cc && sm->cc->enable ? "true" : "false");
	if (sm->cc_config)
		put_str(f, sm->cc_config);
	else
		fputs("null", f);
	fprintf(f,
		", \"configured\": %lu, \"sets\": %lu, \"gets\": %lu, "
		"\"failed\": %lu, \"switch_events\": %lu, "
		"\"ca_events\": %lu},\n",
		c->configured, c->sets, c->gets, c->failed, c->switch_events,
		c->ca_events);
}

static void write_json(const struct sm *sm, FILE *f)
{
	const struct sm_sweep_stats *s = &sm->last;
	uint32_t n, sw = 0, links = 0;
	unsigned port;

	for (n = 0; n < sm->nnodes; n++) {
		const struct sm_node *node = &sm->nodes[n];

		sw += node->ni.node_type == NODE_TYPE_SWITCH;
		for (port = 1; port <= node->ni.num_ports; port++)
			links += node->ports[port].peer != UINT32_MAX;
	}
	fprintf(f,
		"{\n  \"pid\": %ld,\n  \"state\": \"%s\",\n"
		"  \"priority\": %u,\n  \"routing\": \"%s\",\n"
		"  \"sweep_ms\": %u,\n  \"lid\": %u,\n",
		(long)getpid(), state_name(sm), sm->priority, sm->routing,
		sm->sweep_ms, sm->sm_lid);
	if (sm->standby)
		fprintf(f,
			"  \"master\": {\"lid\": %u, \"guid\": "
			"\"0x%016llx\", \"priority\": %u},\n",
			sm->master_lid, (unsigned long long)sm->master_guid,
			sm->master_priority);
	fprintf(f, "  \"handovers\": %lu,\n", sm->handovers);
	fprintf(f,
		"  \"nodes\": %u,\n  \"switches\": %u,\n  \"cas\": %u,\n"
		"  \"links\": %u,\n  \"max_lid\": %u,\n"
		"  \"heavy_sweeps\": %lu,\n  \"light_sweeps\": %lu,\n"
		"  \"traps\": %lu,\n"
		"  \"smps\": {\"sent\": %lu, \"answered\": %lu, "
		"\"timed_out\": %lu},\n",
		sm->nnodes, sw, sm->nnodes - sw, links / 2,
		sm->routes ? sm->routes->max_lid : 0, sm->heavy_sweeps,
		sm->light_sweeps, sm->traps, sm->sent, sm->answered,
		sm->timeouts);
	write_cc(sm, f);
	write_changes(sm, f);
	fprintf(f, "  \"last_sweep\": {\"kind\": \"%s\", \"why\": ",
		s->heavy ? "heavy" : "light");
	put_str(f, s->why);
	fprintf(f, ", \"at\": %lld, \"wall_s\": %.6f, ", (long long)s->at,
		s->wall_s);
	if (s->vt_at_ps == UINT64_MAX)
		fprintf(f, "\"virtual_at_us\": null, \"virtual_us\": null, ");
	else
		fprintf(f, "\"virtual_at_us\": %.3f, \"virtual_us\": %.3f, ",
			(double)s->vt_at_ps / 1e6, (double)s->vt_ps / 1e6);
	fprintf(f, "\"smps\": %lu, \"lft_blocks\": %lu, \"errors\": %u}\n}\n",
		s->smps, s->lft_blocks, s->errors);
}

int sm_file_close(FILE *f)
{
	int ret = 0;

	/* fflush() says why it fails; a write that failed earlier (the
	 * stream's error flag) left its errno, which later buffered writes
	 * do not touch. */
	if (fflush(f))
		ret = -errno;
	else if (ferror(f))
		ret = errno ? -errno : -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

int sm_file_write(const char *path, void (*emit)(FILE *f, const void *arg),
		  const void *arg)
{
	sigset_t ends, was;
	char tmp[4200];
	FILE *f;
	int ret;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.new", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	/* A signal that ends the SM (its default action) waits until the
	 * file is in place: a reader never finds half of one, nor a .new
	 * left behind. */
	sigemptyset(&ends);
	sigaddset(&ends, SIGTERM);
	sigaddset(&ends, SIGINT);
	sigaddset(&ends, SIGHUP);
	sigprocmask(SIG_BLOCK, &ends, &was);
	f = fopen(tmp, "we");
	if (!f) {
		ret = -errno;
		goto out;
	}
	emit(f, arg);
	ret = sm_file_close(f);
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
out:
	sigprocmask(SIG_SETMASK, &was, NULL);
	return ret;
}

static void status_json(FILE *f, const void *sm)
{
	write_json(sm, f);
}

int sm_status_write(const struct sm *sm)
{
	if (!sm->status_path)
		return 0;
	return sm_file_write(sm->status_path, status_json, sm);
}

void sm_status_ready(struct sm *sm, int up)
{
	const char *word = up ? "up\n" : "standby\n";

	if (sm->ready_fd < 0)
		return;
	/* A reader that went away loses nothing: SIGPIPE is ignored. */
	if (write(sm->ready_fd, word, strlen(word)) < 0)
		fprintf(stderr, "ibemu-sm: --ready-fd: %s\n", strerror(errno));
	close(sm->ready_fd);
	sm->ready_fd = -1;
}

void sm_sweep_begin(struct sm *sm, int heavy, const char *why)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	sm->last.heavy = heavy;
	snprintf(sm->last.why, sizeof(sm->last.why), "%s", why);
	sm->last.at = time(NULL);
	sm->last.t0 = (double)t.tv_sec + (double)t.tv_nsec / 1e9;
	sm->last.mark = sm->last.t0;
	memset(sm->last.step_s, 0, sizeof(sm->last.step_s));
	sm->last.vt_at_ps = sm_clock_ps();
	sm->last.vt_ps = 0;
	sm->last.sent0 = sm->sent;
	sm->last.blocks0 = sm->lft_blocks;
}

void sm_sweep_mark(struct sm *sm, enum sm_step step)
{
	struct timespec t;
	double now;

	clock_gettime(CLOCK_MONOTONIC, &t);
	now = (double)t.tv_sec + (double)t.tv_nsec / 1e9;
	sm->last.step_s[step] += now - sm->last.mark;
	sm->last.mark = now;
}

void sm_sweep_end(struct sm *sm)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	sm->last.wall_s =
		(double)t.tv_sec + (double)t.tv_nsec / 1e9 - sm->last.t0;
	if (sm->last.vt_at_ps != UINT64_MAX)
		sm->last.vt_ps = sm_clock_ps() - sm->last.vt_at_ps;
	sm->last.smps = sm->sent - sm->last.sent0;
	sm->last.lft_blocks = sm->lft_blocks - sm->last.blocks0;
	sm->last.errors = sm->last.heavy ? sm->errors : 0;
}
