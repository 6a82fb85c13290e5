# SPDX-License-Identifier: MIT
"""Careless and hostile verbs processes against the rings they share with
the daemon (issue 18 item 1): more work requests posted than a QP or SRQ
was created for, through the real API (the library refuses them with
ENOMEM, as providers do) and raw (producer indices past the capacity:
that QP alone goes into error), and a context page scribbled over. In
each case the daemon answers 'ibemu status' (within ANSWER_S) while the
process runs and after, idles once it is alone, and another pair's
pingpong completes."""

import os
import random
import socket
import struct
import subprocess
import time

from harness import (IBEMU, IbemuTestCase, cpu_share, main, read, tool_env,
                     topology)
from programs import PingpongRunner
from sessproto import RawVerbs, hdr

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
RINGS = os.path.join(BUILD, "tests", "verbs-rings")
FAT = topology("fat-tree-2l-36.yaml")
ENOMEM, EMFILE = 12, 24
KICK = 24
# Offsets in a ring header (proto/verbs_proto.h): three cache lines.
PROD, CONS, ERR, HDR = 0, 64, 136, 192
SWQE, RWQE = 560, 504
# A wedged daemon never answers; a loaded host (and a sanitizer's start of
# the CLI) may take a second or more to.
ANSWER_S = 10

# ibv_qp_attr_mask bits and QP states the raw modify calls use.
STATE, ACCESS, PKEY, PORT, AV, MTU = 1, 8, 16, 32, 128, 256
TIMEOUT, RETRY, RNR, RQ_PSN, RD_ATOMIC = 512, 1024, 2048, 4096, 8192
MIN_RNR, SQ_PSN, DEST_RD_ATOMIC, DEST_QPN = 32768, 65536, 131072, 1 << 20


def qp_attr(qpn, mask, state, dlid=0, dest_qpn=0, path_mtu=0, port=0,
            timeout=0, retry=0, rnr=0, min_rnr=0, rd=0, dest_rd=0,
            ah_port=0, access=0, psn=0):
    """struct ibemu_verbs_qp_attr."""
    return struct.pack("=7IHH16B", qpn, mask, 0, psn, psn, dest_qpn, access,
                       0, dlid, state, 0, path_mtu, 0, 0, port, timeout,
                       retry, rnr, min_rnr, rd, dest_rd, 0, 0, ah_port, 0)


class HostileRingsTest(RawVerbs, PingpongRunner, IbemuTestCase):
    def setUp(self):
        super().setUp()
        self.tool_env = tool_env(self.env)

    def assert_answers(self, name):
        """'ibemu status' answers."""
        try:
            p = self.ibemu("status", "--fabric", name, timeout=ANSWER_S)
        except subprocess.TimeoutExpired:
            self.fail(f"the daemon did not answer 'ibemu status' in "
                      f"{ANSWER_S} s")
        self.assertEqual(p.returncode, 0, p.stderr)

    def assert_healthy(self, name):
        """Answering, idle, and another pair's pingpong completes."""
        self.assert_answers(name)
        self.assertLess(cpu_share(self.started[name], 1.0), 0.05)
        self.pingpong(name, "ibv_rc_pingpong", "hca07", "hca08", "-n", "5")
        self.assert_answers(name)

    def careless(self, name, host, *args):
        """verbs-rings ARGS on 'host': what it posted, checked while it
        holds its work and after it exits."""
        p = subprocess.Popen([IBEMU, "exec", "--fabric", name, "--host",
                              host, "--", RINGS, *args],
                             stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True,
                             env=self.tool_env)
        first = p.stdout.readline()
        self.assert_answers(name)  # while it holds its work
        out, _ = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 0, first + out)
        self.assertIn("alive", out)
        return first.strip()

    def test_sends_beyond_capacity(self):
        """101 RDMA WRITEs on an RC QP of max_send_wr 100, then 1.5 s
        without a verbs call: the 101st is refused with ENOMEM."""
        self.up(FAT, "hrsend")
        self.assertEqual(self.careless("hrsend", "hca01", "send", "101"),
                         f"posted=100 err={ENOMEM}")
        self.assert_healthy("hrsend")
        self.down("hrsend")

    def test_receives_beyond_capacity(self):
        """128 receives on a UD QP of max_recv_wr 100, and on an SRQ of
        max_wr 100: the 101st is refused with ENOMEM."""
        self.up(FAT, "hrrecv")
        for kind in ("recv", "srq"):
            self.assertEqual(self.careless("hrrecv", "hca01", kind, "128"),
                             f"posted=100 err={ENOMEM}")
        self.assert_healthy("hrrecv")
        self.down("hrrecv")

    # --- limits --------------------------------------------------------

    def hog(self, name, host):
        """verbs-rings hog on 'host': {what: (count, errno)} once it
        holds all it could take, and the process (its stdin ends it)."""
        p = subprocess.Popen([IBEMU, "exec", "--fabric", name, "--host",
                              host, "--", RINGS, "hog"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True,
                             env=self.tool_env)
        took = {}
        for line in p.stdout:
            if line.strip() == "holding":
                return took, p
            what, rest = line.split("=", 1)
            count, err = rest.split(" err=")
            took[what] = (int(count), int(err))
        p.wait()
        self.fail(f"verbs-rings hog on {host} ended early: {took}")

    def test_limits_per_process_and_for_all(self):
        """Three processes each take all that one process may hold (16
        contexts, 1,024 completion channels, 4,096 QPs and CQs): each is
        refused at those limits with the kernel's errnos; meanwhile the
        daemon answers and another pair's pingpong completes. A fourth
        finds the mappings all processes may hold taken, and the log
        says so."""
        self.up(FAT, "hrlim")
        hogs = []
        try:
            for host in ("hca01", "hca02", "hca03"):
                took, p = self.hog("hrlim", host)
                hogs.append(p)
                # The library's open is one context already.
                self.assertEqual(took, {"contexts": (15, EMFILE),
                                        "channels": (1024, EMFILE),
                                        "qps": (4096, ENOMEM),
                                        "cqs": (4096 - 1026, ENOMEM)})
            self.assert_answers("hrlim")
            self.pingpong("hrlim", "ibv_rc_pingpong", "hca07", "hca08",
                          "-n", "5")
            took, p = self.hog("hrlim", "hca04")
            hogs.append(p)
            self.assertEqual(took["cqs"][1], ENOMEM)
            self.assertLess(took["cqs"][0], 4096 - 1026)
            self.assert_answers("hrlim")
        finally:
            for p in hogs:
                p.stdin.close()
                p.wait(timeout=60)
                p.stdout.close()
        log = read(self.paths("hrlim")["log"])
        self.assertRegex(log, r"process \d+ \(hca01\): a queue pair "
                         r"refused: the process is at its limit of 4096 "
                         r"queue pairs")
        self.assertRegex(log, r"process \d+ \(hca04\): a completion queue "
                         r"refused: attached processes hold 49152 mappings "
                         r"of process memory, the limit for all of them")
        self.assert_healthy("hrlim")
        self.down("hrlim")

    def test_objects_given_back(self):
        """5,000 rounds of a PD, an MR, a CQ with a completion channel, an
        SRQ and a QP, each destroyed after: more than the per-process
        limits of CQs, channels and SRQs, so each destroy must give its
        share back."""
        self.up(FAT, "hrchurn")
        p = self.ibemu("exec", "--fabric", "hrchurn", "--host", "hca01",
                       "--", RINGS, "churn", "5000", env=self.tool_env,
                       check=0)
        self.assertEqual(p.stdout.strip(), "churned=5000 err=0")
        self.down("hrchurn")

    # --- raw: what no library would write -----------------------------

    def raw_qp(self, s, pd, cq, send_wr, recv_wr, sq_entries, rq_entries):
        sq_fd, sq = self.ring(sq_entries, SWQE)
        rq_fd, rq = self.ring(rq_entries, RWQE)
        req = struct.pack("=14I", 2, 0, pd, cq, cq, 0, send_wr, recv_wr, 1,
                          1, 0, sq_entries, rq_entries, 0)
        t, st, body = self.call(s, 16, req, [sq_fd, rq_fd])
        os.close(sq_fd)
        os.close(rq_fd)
        self.assertEqual((t, st), (16, 0), body)
        return struct.unpack("=14I", body)[13], sq, rq

    def raw_stream(self, name, host):
        """A raw verbs stream with a PD and a CQ of 1024 entries."""
        s, page, async_fd = self.verbs_open(name, host)
        t, st, body = self.call(s, 10, struct.pack("=II", 0, 0))
        pd = struct.unpack("=II", body)[0]
        cq_fd, cq_ring = self.ring(1024, 64)
        t, st, body = self.call(s, 14, struct.pack("=4I", 1024, 0, 0, 0),
                                [cq_fd])
        os.close(cq_fd)
        self.assertEqual((t, st), (14, 0), body)
        return s, page, pd, struct.unpack("=4I", body)[2], cq_ring

    def connect_to_itself(self, s, qpn, lid):
        for attr in (
                qp_attr(qpn, STATE | ACCESS | PKEY | PORT, 1, port=1,
                        access=2),
                qp_attr(qpn, STATE | AV | MTU | DEST_QPN | RQ_PSN |
                        DEST_RD_ATOMIC | MIN_RNR, 2, dlid=lid,
                        dest_qpn=qpn, path_mtu=4, dest_rd=1, min_rnr=12,
                        ah_port=1, psn=1),
                qp_attr(qpn, STATE | TIMEOUT | RETRY | RNR | SQ_PSN |
                        RD_ATOMIC, 3, timeout=14, retry=7, rnr=7, rd=1,
                        psn=1)):
            self.assertEqual(self.call(s, 17, attr)[:2], (17, 0))

    def lid(self, name, host):
        ports = self.json_of("ports", host, "--fabric", name)["ports"]
        return ports[0]["lid"]

    def wait_error(self, ring, what):
        end = time.time() + 10
        while struct.unpack("=I", ring[ERR:ERR + 4])[0] != 1:
            self.assertLess(time.time(), end, f"{what} never in error")
            time.sleep(0.02)

    def async_events(self, page):
        prod = struct.unpack("=I", page[192:196])[0]
        return [struct.unpack("=II", page[384 + 16 * i:392 + 16 * i])
                for i in range(prod)]

    def test_raw_producer_past_capacity(self):
        """A send ring of 128 entries on a QP of max_send_wr 100, filled
        with 128 RDMA WRITEs; a receive ring of 128 on max_recv_wr 100
        filled with 128 receives: each QP goes into error with
        IBV_EVENT_QP_FATAL and one log line; nothing else changes."""
        self.up(FAT, "hrraw")
        s, page, pd, cq, cq_ring = self.raw_stream("hrraw", "hca03")
        qp1, sq1, _ = self.raw_qp(s, pd, cq, 100, 1, 128, 1)
        self.connect_to_itself(s, qp1, self.lid("hrraw", "hca03"))
        for i in range(128):  # RDMA WRITE of 0 bytes, unsignaled
            sq1[HDR + i * SWQE:HDR + i * SWQE + 16] = struct.pack(
                "=QII", i, 0, 0)
        sq1[PROD:PROD + 4] = struct.pack("=I", 128)
        self.posted(page)
        qp2, _, rq2 = self.raw_qp(s, pd, cq, 1, 100, 1, 128)
        self.assertEqual(self.call(s, 17, qp_attr(
            qp2, STATE | ACCESS | PKEY | PORT, 1, port=1))[:2], (17, 0))
        for i in range(128):  # receives of no SGE
            rq2[HDR + i * RWQE:HDR + i * RWQE + 12] = struct.pack(
                "=QI", i, 0)
        rq2[PROD:PROD + 4] = struct.pack("=I", 128)
        self.posted(page)
        socket.send_fds(s, [hdr(KICK, 0)], [])
        self.wait_error(sq1, "the over-filled send queue")
        self.wait_error(rq2, "the over-filled receive queue")
        self.assert_answers("hrraw")
        self.assertEqual(sorted(self.async_events(page)),
                         sorted([(1, qp1), (1, qp2)]))
        log = read(self.paths("hrraw")["log"])
        self.assertIn(f"QP {qp1} in error: more work requests than the "
                      "QP was created for (max_send_wr 100)", log)
        self.assertIn(f"QP {qp2} in error: more work requests than the "
                      "QP was created for (max_recv_wr 100)", log)
        self.assertEqual(struct.unpack("=I", cq_ring[ERR:ERR + 4])[0], 0)
        s.close()
        self.assert_healthy("hrraw")
        self.down("hrraw")

    def test_scribbled_context_page(self):
        """Random bytes written over a context page, again and again,
        with a QP's work queued: the daemon goes on answering."""
        self.up(FAT, "hrpage")
        s, page, pd, cq, cq_ring = self.raw_stream("hrpage", "hca05")
        qpn, sq, _ = self.raw_qp(s, pd, cq, 16, 1, 16, 1)
        self.connect_to_itself(s, qpn, self.lid("hrpage", "hca05"))
        for i in range(16):
            sq[HDR + i * SWQE:HDR + i * SWQE + 16] = struct.pack(
                "=QII", i, 0, 2)  # signaled
        sq[PROD:PROD + 4] = struct.pack("=I", 16)
        self.posted(page)
        rng = random.Random(18)
        end = time.time() + 1.5
        while time.time() < end:
            page[:] = bytes(rng.getrandbits(8) for _ in range(4096))
            socket.send_fds(s, [hdr(KICK, 0)], [])
            self.assert_answers("hrpage")
        s.close()
        self.assert_healthy("hrpage")
        self.down("hrpage")


if __name__ == "__main__":
    main()
