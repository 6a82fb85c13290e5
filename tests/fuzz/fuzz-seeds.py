#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seed corpora of fuzz-sess (seeds/sess/) and fuzz-rings
(seeds/ring/): a few valid inputs in the record formats their sources
describe, so that the fuzzers start from messages and rings the daemon
takes. Run it after changing either format: tests/fuzz/fuzz-seeds.py"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
MAGIC, VERSION = 0x49425353, 7
(CA_QUERY, OPEN, SEND, PORT_QUERY, VERBS_OPEN, PD_ALLOC, MR_REG, CQ_CREATE,
 QP_CREATE, QP_MODIFY, SRQ_CREATE, KICK, QP_DESTROY, WAIT) = (
    2, 5, 6, 8, 9, 10, 12, 14, 16, 17, 20, 24, 19, 25)
JOB_JOIN, JOB_PUT, JOB_GET, JOB_SYNC = 27, 28, 29, 30
PACK = 50


def msg(mtype, payload=b""):
    return struct.pack("<IHHIi", MAGIC, VERSION, mtype, len(payload), 0) + payload


def rec(m, nfds=0, kinds=0, size=0, new=False, probe=False):
    ctl = nfds | (8 if new else 0) | 0x10 | (0x20 if probe else 0)
    return struct.pack("<BBBH", ctl, kinds, size, len(m)) + m


def bind(host, port=0):
    return host.encode().ljust(64, b"\0") + struct.pack("<II", port, 0)


def sess_seeds():
    mad = bytes([1, 0x81, 1, 1]) + bytes(252)  # SubnGet(NodeInfo), LID routed
    # struct ibemu_sess_mad: a stamp 2 us after the fabric's start
    send = struct.pack("<IIII", 0, 0, 100, 0) + bytes(40) + \
        struct.pack("<IIQ", len(mad), 0, 2000000) + mad
    wait = struct.pack("<QQII", 0, 1, 50, 0)  # seen, wait id, 50 ms
    vopen = bind("h1") + struct.pack("<QQ", 0, 0)
    qp = struct.pack("<14I", 2, 0, 1, 1, 1, 0, 8, 8, 1, 1, 0, 8, 8, 0)
    verbs = (rec(msg(VERBS_OPEN, vopen), 2, 0b0100, 0, probe=True) +
             rec(msg(PD_ALLOC, bytes(8))) +
             rec(msg(MR_REG, struct.pack("<QQIIII", 0x1000, 4096, 1, 7, 0, 0))) +
             rec(msg(CQ_CREATE, struct.pack("<4I", 8, 1, 0, 0)), 2, 0b0100, 0) +
             rec(msg(SRQ_CREATE, struct.pack("<6I", 1, 8, 1, 0, 8, 0)), 1, 0, 0) +
             rec(msg(QP_CREATE, qp), 2, 0, 4) +
             rec(msg(QP_MODIFY, struct.pack("<7IHH", 1, 0x39, 0, 0, 0, 0, 0, 0, 0) +
                     bytes([1, 0, 0, 0, 0, 1]) + bytes(10))) +
             rec(msg(KICK)) +
             rec(msg(QP_DESTROY, struct.pack("<II", 1, 0))))
    # A job of one rank (attach/sess_job.c): join, put, fence, get.
    key = b"addr".ljust(64, b"\0")
    job = (rec(msg(JOB_JOIN, b"job".ljust(64, b"\0") +
                   struct.pack("<IIQ", 0, 1, 0))) +
           rec(msg(JOB_PUT, struct.pack("<II", 0, 4) + key +
                   struct.pack("<Q", 0) + b"lid1")) +
           rec(msg(JOB_SYNC, struct.pack("<IIQQ", 1, 0, 1000000, 0))) +
           rec(msg(JOB_GET, struct.pack("<II", 0, 0) + key +
                   struct.pack("<Q", 0))))
    return {
        "job": job,
        "ca-query": rec(msg(CA_QUERY, bind("h1"))),
        "port-query": rec(msg(PORT_QUERY, bind("h3", 2))),
        "open-send": rec(msg(OPEN, bind("h2", 1))) + rec(msg(SEND, send)),
        "open-send-wait": rec(msg(OPEN, bind("h2", 1))) +
        rec(msg(SEND, send)) + rec(msg(WAIT, wait)),
        # Two SENDs and a WAIT in one message, as ibemu-sm's library sends.
        "open-pack": rec(msg(OPEN, bind("h2", 1))) +
        rec(msg(PACK, msg(SEND, send) + msg(SEND, send) + msg(WAIT, wait))),
        "verbs": verbs,
    }


# fuzz-rings: its objects and the keys a fresh daemon gives them.
KEY, QPB, QPU, LID1 = 256, 3, 4, 5
PAGE, CQ, SRQ, ASQ, ARQ, BSQ, USQ, URQ = range(8)
SIGNALED, INLINE = 2, 8


def sge(off, length):
    return struct.pack("<QII", off, length, KEY)


def swqe(opcode, sges=(), flags=SIGNALED, rkey=KEY, raddr=0, cmp=0, swap=0,
         qpn=0, dlid=0, inline=b""):
    body = b"".join(sges) if not inline else inline
    w = struct.pack("<QIIIIIIQQQIIHBBB3x", 0x5eed, opcode, flags,
                    0 if inline else len(sges), len(inline), 0, rkey, raddr,
                    cmp, swap, qpn, 0x11111111, dlid, 0, 0, 1)
    return w + body


def rwqe(sges):
    return struct.pack("<QII", 0x7ecf, len(sges), 0) + b"".join(sges)


def post(target, entry):
    return struct.pack("<BBH", 7, target, len(entry)) + entry


RUN, CONSUME = b"\x03", b"\x04"


def ring_seeds():
    return {
        "rc-send-srq": post(SRQ, rwqe([sge(8192, 4096)])) +
        post(ASQ, swqe(2, [sge(0, 3000)])) + RUN + CONSUME,
        "rc-write-read": post(ASQ, swqe(0, [sge(0, 2048)], raddr=16384)) +
        post(ASQ, swqe(4, [sge(4096, 512)], raddr=16384)) + RUN + CONSUME,
        "rc-atomics": post(ASQ, swqe(5, [sge(0, 8)], raddr=32768, cmp=0,
                                     swap=7)) +
        post(ASQ, swqe(6, [sge(8, 8)], raddr=32768, cmp=1)) + RUN + CONSUME,
        "rc-inline-imm": post(ARQ, rwqe([sge(40960, 64)])) +
        post(BSQ, swqe(3, flags=SIGNALED | INLINE, inline=b"hello ibemu")) +
        RUN + CONSUME,
        "ud-self": post(URQ, rwqe([sge(49152, 1024)])) +
        post(USQ, swqe(2, [sge(0, 256)], qpn=QPU, dlid=LID1)) + RUN + CONSUME,
        "bad-opcode": post(ASQ, swqe(99, [sge(0, 8)])) + RUN + CONSUME,
        "reset-requeue": post(ASQ, swqe(0, [sge(0, 64)], raddr=4096)) +
        b"\x05\x00" + post(ASQ, swqe(0, [sge(0, 64)], raddr=4096)) + RUN +
        CONSUME,
    }


def write(folder, seeds):
    path = os.path.join(HERE, folder)
    os.makedirs(path, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(path, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    write("seeds/sess", sess_seeds())
    write("seeds/ring", ring_seeds())
