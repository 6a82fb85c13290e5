/* SPDX-License-Identifier: MIT */
/*
 * The client side of the control protocol, used by the CLI: connect to a
 * fabric's daemon, greet it, and run commands on it. Blocking calls.
 */
#ifndef IBEMU_CTL_CLIENT_H
#define IBEMU_CTL_CLIENT_H

#include <stddef.h>

/*
 * Connects to the daemon of fabric 'name' and exchanges HELLO. Every later
 * wait on the socket (connect, each message sent or received, including
 * each progress line) gives up after 'timeout_ms' (0: never) with
 * -ETIMEDOUT. Returns the socket fd or -errno; 'why' says what went wrong
 * in words.
 */
int ibemu_ctl_connect(const char *name, unsigned timeout_ms, char *why,
		      size_t whylen);

/* Says in 'why' that fabric 'name' did not answer within 'timeout_ms'. */
void ibemu_ctl_timeout_text(const char *name, unsigned timeout_ms, char *why,
			    size_t whylen);

/* Called with each progress line of a long request. */
typedef void ibemu_ctl_progress_cb(const char *line, void *arg);

/*
 * Sends argv (argc strings) as one request and waits for the answer,
 * passing progress lines to 'progress' (may be NULL) meanwhile. *text
 * (freed by the caller) is the output on success or the error line on
 * failure. Returns the command's exit status (0 on success), or -errno
 * when the connection failed (then *text is NULL).
 */
int ibemu_ctl_call(int fd, int argc, char *const *argv, char **text,
		   ibemu_ctl_progress_cb *progress, void *arg);

#endif
