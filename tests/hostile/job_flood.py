#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""job_flood.py SESS_SOCK: what the job streams of 'ibemu run' let one
process take. It joins jobs of the largest size until the daemon refuses
(the ranks all jobs may hold), joins 63 more ranks of one job, and puts
1 KiB values on every stream until each is refused (the keys a rank may
hold, then the bytes all jobs may hold), never fencing. Prints joins=,
puts=, key_limit= (ENOSPC answers) and holds the streams open until
stdin closes, so the test can measure the daemon meanwhile."""

import socket
import struct
import sys

from wire import HDR, sess_msg

JOB_JOIN, JOB_PUT, SESS_ERROR = 27, 28, 1
ENOSPC = 28
MAX_SIZE = 65536


def stream(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(10)
    s.connect(path)
    return s


def call(s, type_, payload):
    s.send(sess_msg(type_, payload))
    data = s.recv(1 << 16)
    _, _, t, _, status = HDR.unpack(data[:HDR.size])
    return t, status


def join(path, job, rank, size):
    s = stream(path)
    t, status = call(s, JOB_JOIN, struct.pack("=64sIIQ", job, rank, size, 0))
    if t == JOB_JOIN and status == 0:
        return s, 0
    s.close()
    return None, status


def main():
    path = sys.argv[1]
    streams, joins, refused = [], 0, 0
    for i in range(16):
        s, status = join(path, b"flood-%d" % i, 0, MAX_SIZE)
        if not s:
            refused = status
            break
        streams.append(s)
        joins += 1
    for rank in range(1, 64):
        s, _ = join(path, b"flood-0", rank, MAX_SIZE)
        if s:
            streams.append(s)
    puts, key_limit, byte_limit = 0, 0, 0
    value = b"v" * 1024
    for s in streams:
        for k in range(5000):
            msg = struct.pack("=II64sQ", 0, len(value), b"k%d" % k, 0)
            t, status = call(s, JOB_PUT, msg + value)
            if t == JOB_PUT and status == 0:
                puts += 1
                continue
            if status == -ENOSPC and k == 4096:
                key_limit += 1
            else:
                byte_limit += 1
            break
    print(f"joins={joins} refused={refused} streams={len(streams)} "
          f"puts={puts} key_limit={key_limit} byte_limit={byte_limit}",
          flush=True)
    sys.stdin.read()
    for s in streams:
        s.close()


if __name__ == "__main__":
    main()
