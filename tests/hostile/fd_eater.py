#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fd_eater.py SOCK stream|seqpacket MAX: opens up to MAX connections to
SOCK and holds them, sending nothing, until its stdin closes. A
connection the daemon refuses (it answers with an error message and
closes) is counted, not held. Prints held= and refused= (with the first
refusal's text) once the daemon has answered or ignored each."""

import select
import socket
import sys
import time


def main():
    path, kind, most = sys.argv[1], sys.argv[2], int(sys.argv[3])
    type_ = socket.SOCK_STREAM if kind == "stream" else socket.SOCK_SEQPACKET
    held, refused, why = [], 0, ""
    for _ in range(most):
        s = socket.socket(socket.AF_UNIX, type_)
        try:
            s.connect(path)
        except OSError:
            s.close()
            break
        held.append(s)
    # Whatever the daemon closed (refused) is readable within a moment.
    time.sleep(1.0)
    ready, _, _ = select.select(held, [], [], 0)
    for s in ready:
        data = s.recv(4096)
        if data and not why:
            why = data[16:].decode(errors="replace")
        held.remove(s)
        s.close()
        refused += 1
    print(f"held={len(held)} refused={refused} why={why!r}", flush=True)
    sys.stdin.read()
    for s in held:
        s.close()


if __name__ == "__main__":
    main()
