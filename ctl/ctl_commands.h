/* SPDX-License-Identifier: MIT */
/*
 * The commands a fabric daemon serves, as one table: name, arguments, help
 * and handler. The CLI prints its help from this table and forwards these
 * commands to the daemon unchanged.
 */
#ifndef IBEMU_CTL_COMMANDS_H
#define IBEMU_CTL_COMMANDS_H

#include <stdint.h>

#include "buf.h"
#include "ctl.h"
#include "opt.h"

struct ibemu_daemon;
struct ibemu_ctl_conn;

/*
 * Work that takes longer than one turn of the loop (a traffic study): the
 * daemon runs it in bounded steps between other requests, sends progress
 * lines to the client that asked, and its result when it is done.
 */
struct ibemu_job {
	/* Does a bounded piece of the work; sets *done when finished. */
	void (*step)(struct ibemu_job *job, int *done);
	/* Describes how far the work is, on one line. */
	void (*progress)(struct ibemu_job *job, struct ibemu_buf *line);
	/* Writes the result (or the error); returns the exit status. */
	int (*finish)(struct ibemu_job *job, struct ibemu_buf *out,
		      struct ibemu_buf *err);
	void (*destroy)(struct ibemu_job *job);
	/* Owned by the daemon. */
	struct ibemu_ctl_conn *conn; /* NULL once the client has gone */
	uint64_t last_progress_ms;
	/* Set: the job ends at its next turn, its client told this. */
	const char *cancelled;
};

/*
 * Ends the running job at the loop's next turn (not at once: it may be
 * inside its step); 'why' (static, one line) is logged and is the error
 * its client gets, if still there. Returns 0, or -ENOENT when no job
 * runs.
 */
int ibemu__ctl_job_cancel(struct ibemu_daemon *d, const char *why);

/* One request being served. */
struct ibemu_ctl_call {
	struct ibemu_daemon *d;
	int argc;
	char **argv;
	struct ibemu_buf *out; /* stdout text of the answer */
	struct ibemu_buf *err; /* one line, when the status is not 0 */
	int stop;	       /* set: stop the daemon once answered */
	struct ibemu_job *job; /* set: answer later, when this job is done */
};

struct ibemu_ctl_command {
	const char *name;
	/* Arguments and options: the daemon parses with it, the CLI prints
	 * the help from it. */
	const struct ibemu_opt_cmd *opts;
	const char *help; /* one line */
	int inspect;	  /* takes --json */
	/* Returns the exit status. */
	int (*serve)(struct ibemu_ctl_call *call);
};

/*
 * Parses the call's argv against 'cmd' (ibemu_opt_parse()); 'args' has
 * room for argc pointers. Returns 0, or 2 with the error in call->err.
 */
int ibemu__ctl_parse(struct ibemu_ctl_call *call,
		     const struct ibemu_opt_cmd *cmd,
		     struct ibemu_opt_val *vals, char **args, int *nargs,
		     int *variant);

/*
 * Resolves NODE[:PORT] ('where') to a node and a port (0: all its ports);
 * 0, or the exit status with the error, which names command 'cmd', in
 * call->err.
 */
int ibemu__ctl_where(struct ibemu_ctl_call *call, const char *cmd,
		     const char *where, uint32_t *node, unsigned *port);

/* Option tables of the served commands that have a file of their own. */
extern const struct ibemu_opt_cmd ibemu__route_opts;
extern const struct ibemu_opt_cmd ibemu__counters_opts;
extern const struct ibemu_opt_cmd ibemu__traffic_opts;
extern const struct ibemu_opt_cmd ibemu__link_opts;
extern const struct ibemu_opt_cmd ibemu__node_opts;
extern const struct ibemu_opt_cmd ibemu__cc_opts;

/*
 * ctl_link.c: takes the cable of port 'pi' down (the port Disabled) or
 * up (both ends polling, then training); 0 or -errno. ctl_node.c does it
 * for every cabled port of a node.
 */
int ibemu__link_down(struct ibemu_daemon *d, uint32_t pi);
int ibemu__link_up(struct ibemu_daemon *d, uint32_t pi);

/* The table, terminated by an entry with a NULL name. */
extern const struct ibemu_ctl_command ibemu_ctl_commands[];

const struct ibemu_ctl_command *ibemu_ctl_command_find(const char *name);

#endif
