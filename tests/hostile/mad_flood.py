#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mad_flood.py SESS_SOCK COUNT unregistered|pkey: opens a port stream and
sends COUNT MADs the daemon drops with a reason: as an agent it never
registered, or from a registered agent with a P_Key index that names no
P_Key. Then closes the stream."""

import struct
import sys

from wire import SESS_REGISTER, send_mad, sess_call, sess_open


def main():
    path, count, how = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    stream, session = sess_open(path)
    mad = bytearray(256)
    mad[0:4] = bytes([1, 0x04, 1, 0x01])  # PerfMgt Get, a GMP
    agent = 7
    pkey_index = 0
    if how == "pkey":
        reg = struct.pack("=QQQIIIBBBB", session, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        t, status, body = sess_call(path, SESS_REGISTER, reg)
        if t != SESS_REGISTER:
            sys.exit(f"REGISTER refused ({status}): {body!r}")
        agent, = struct.unpack_from("=I", body, 24)
        pkey_index = 1000
    msg = send_mad(agent, bytes(mad), pkey_index)
    for _ in range(count):
        stream.send(msg)
    stream.close()
    print(f"sent={count}", flush=True)


if __name__ == "__main__":
    main()
