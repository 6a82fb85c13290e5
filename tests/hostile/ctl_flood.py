#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ctl_flood.py CTL_SOCK COUNT SECONDS: sends COUNT 'ports --json'
requests without reading one answer, as fast as the daemon takes them,
then holds the connection SECONDS and closes it."""

import socket
import sys
import time

from wire import ctl_connect, ctl_request


def main():
    path, count, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    s = ctl_connect(path)
    req = ctl_request("ports", "--json")
    s.setblocking(False)
    sent, pending = 0, b""
    end = time.time() + seconds
    # A daemon that stops reading fills the socket: then we just wait.
    while sent < count and time.time() < end:
        if not pending:
            pending = req
        try:
            n = s.send(pending)
        except BlockingIOError:
            time.sleep(0.01)
            continue
        pending = pending[n:]
        if not pending:
            sent += 1
    print(f"sent={sent}", flush=True)
    time.sleep(max(0.0, end - time.time()))
    s.close()


if __name__ == "__main__":
    main()
