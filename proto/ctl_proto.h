/* SPDX-License-Identifier: MIT */
/*
 * The control protocol between the ibemu CLI and a fabric daemon, over the
 * fabric's owner-only Unix socket. Every message is a 16-byte header and a
 * payload. A connection opens with HELLO in both directions so that a CLI
 * and a daemon of different versions fail with a clear message instead of
 * misreading each other. Then each REQUEST (the command's argv, NUL
 * separated) gets exactly one REPLY (output text, status = exit code) or
 * ERROR (message text, status = exit code), which long requests precede
 * with PROGRESS lines.
 *
 * A wire definition of proto/: it includes libc headers only, and every
 * struct that crosses the socket has its size asserted.
 */
#ifndef IBEMU_CTL_PROTO_H
#define IBEMU_CTL_PROTO_H

#include <stdint.h>

#define IBEMU_CTL_MAGIC	  0x49424354u /* "IBCT" */
#define IBEMU_CTL_VERSION 1u

enum ibemu_ctl_type {
	IBEMU_CTL_HELLO = 1,   /* payload: empty; header.version says it */
	IBEMU_CTL_REQUEST = 2, /* payload: argv strings, each NUL-terminated */
	IBEMU_CTL_REPLY = 3,   /* payload: text for stdout */
	IBEMU_CTL_ERROR = 4,   /* payload: one line for stderr */
	IBEMU_CTL_PROGRESS =
		5, /* payload: one progress line, before the answer */
};

/* Host byte order: both ends run on one machine. */
struct ibemu_ctl_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t len;	/* payload bytes following the header */
	int32_t status; /* exit status in REPLY and ERROR, 0 otherwise */
};
_Static_assert(sizeof(struct ibemu_ctl_hdr) == 16, "ctl header is 16 bytes");

/* Requests are small; replies may list every port of a large fabric. */
#define IBEMU_CTL_MAX_REQUEST (64u * 1024u)
#define IBEMU_CTL_MAX_ARGS    256u
#define IBEMU_CTL_MAX_REPLY   (256u * 1024u * 1024u)

#endif
