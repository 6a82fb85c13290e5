#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tiny_study.py CTL_SOCK SECONDS ARGS...: starts 'traffic ARGS' (say a
study of 1-byte messages), waits SECONDS or for the answer, and leaves
without reading the rest, as a CLI killed by Ctrl-C does."""

import sys
import time

from wire import HDR, CTL_PROGRESS, ctl_connect, ctl_request, recv_exact


def main():
    path, seconds, args = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    s = ctl_connect(path)
    s.sendall(ctl_request("traffic", *args))
    s.settimeout(seconds)
    end, progress, answer = time.time() + seconds, 0, None
    try:
        while time.time() < end:
            _, _, type_, length, status = HDR.unpack(recv_exact(s, HDR.size))
            body = recv_exact(s, length)
            if type_ != CTL_PROGRESS:
                answer = (status, body.decode(errors="replace"))
                break
            progress += 1
    except OSError:
        pass
    s.close()
    print(f"progress={progress} answer={answer!r}", flush=True)


if __name__ == "__main__":
    main()
