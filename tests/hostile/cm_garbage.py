#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""cm_garbage.py SESS_SOCK COUNT SEED: what a hostile process can make of
the CM (attach/sess_cm.c). Two port streams of this process, each with a
CM agent (class 0x07); CM_LISTEN calls that are short, carry a bad flag,
or name a port without a CM agent (each refused with its errno, checked),
and a good one; then COUNT CM MADs of seeded random content from both
agents (every attribute, other class versions and methods, Comm IDs of 0
or the same both ways, random LIDs; the session layer's own length
checks are integration.hostile's), some to the port's
own LID so that they come back through the daemon's routing; then both
streams closed with their connections half made (the daemon tells the
peers). Exits 0 when every refusal was the expected one."""

import errno
import os
import random
import re
import struct
import sys

from wire import SESS_REGISTER, send_mad, sess_call, sess_open


def sess_type(name):
    """A message type of proto/sess_proto.h's enum."""
    src = os.environ.get("IBEMU_SOURCE_DIR",
                         os.path.join(os.path.dirname(__file__), "..", ".."))
    with open(os.path.join(src, "proto", "sess_proto.h")) as f:
        return int(re.search(rf"\b{name}\s*=\s*(\d+)", f.read()).group(1))


CM_LISTEN = sess_type("IBEMU_SESS_CM_LISTEN")


def register_cm(path, session):
    mask = 1 << 3  # Send
    reg = struct.pack("=QQQIIIBBBB", session, mask, 0, 0, 0, 0, 0x07, 2, 0,
                      0)
    t, status, body = sess_call(path, SESS_REGISTER, reg)
    if t != SESS_REGISTER:
        sys.exit(f"REGISTER of a CM agent refused ({status}): {body!r}")
    return struct.unpack_from("=I", body, 24)[0]


def listen(path, payload):
    t, status, _ = sess_call(path, CM_LISTEN, payload)
    return 0 if t == CM_LISTEN else status


def garbage(rng, agents):
    mad = bytearray(rng.randbytes(256))
    mad[0] = 1
    mad[1] = 0x07
    mad[2] = 2 if rng.random() < 0.9 else rng.randrange(256)
    mad[3] = 3 if rng.random() < 0.9 else rng.randrange(256)
    attr = rng.randrange(0x10, 0x19) if rng.random() < 0.9 else \
        rng.randrange(1 << 16)
    mad[16:18] = struct.pack(">H", attr)
    if rng.random() < 0.2:
        mad[24:28] = bytes(4)  # Comm ID 0
    if rng.random() < 0.3:
        mad[28:32] = mad[24:28]  # the same IDs back and forth
    return rng.choice(agents), bytes(mad)


def main():
    path, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    a, sa = sess_open(path)
    b, sb = sess_open(path)
    agents = [(a, register_cm(path, sa)), (b, register_cm(path, sb))]
    want = [
        (struct.pack("=QI", 0x1060000 | 80, 1), -errno.EPROTO),
        (struct.pack("=QII", 0x1060000 | 80, 1, 7), -errno.EINVAL),
        (struct.pack("=QII", 0x1060000 | 80, 9, 1), -errno.ENOENT),
        (struct.pack("=QII", 0x1060000 | 80, 1, 1), 0),
        (struct.pack("=QII", 0x1060000 | 80, 1, 1), 0),
        (struct.pack("=QII", 0x1060000 | 81, 1, 0), 0),
    ]
    bad = 0
    for payload, status in want:
        got = listen(path, payload)
        if got != status:
            print(f"CM_LISTEN {payload!r}: {got}, wanted {status}")
            bad += 1
    for i in range(count):
        (s, agent), mad = garbage(rng, agents)
        msg = bytearray(send_mad(agent, mad))
        # The destination LID (ibemu_sess_addr.lid, after the header,
        # the agent id and 12 reserved bytes, QPN and Q_Key): 1..64 or
        # the permissive LID.
        lid = rng.randrange(1, 65) if rng.random() < 0.95 else 0xffff
        struct.pack_into("=H", msg, 16 + 16 + 8, lid)
        s.send(bytes(msg))
    a.close()
    b.close()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
