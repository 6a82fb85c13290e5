# SPDX-License-Identifier: MIT
"""Debian's unmodified ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong
and ibv_srq_pingpong between two processes under 'ibemu exec --host A'
and '--host B' (same leaf and different leaves of a two-level fat tree):
both ends exit 0 and print their figures, their packets show in the PMA
counters of the switch ports on the route, and the daemon holds nothing
more once they are gone. Then the faults: a process killed with SIGKILL
mid-transfer (its RC peer gets retry-exceeded completions, the daemon
runs on) and garbage written into a ring (only that QP or CQ goes into
error)."""

import mmap
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time

from harness import IBEMU, IbemuTestCase, main, pid_alive, tool_env, topology
from programs import FIGURES, PingpongRunner
from sessproto import ERROR, RawVerbs, hdr

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
CLIENT = os.path.join(BUILD, "tests", "verbs-client")
FAT = topology("fat-tree-2l-36.yaml")
TWO = topology("two-switch.yaml")


class PingpongTest(RawVerbs, PingpongRunner, IbemuTestCase):
    def setUp(self):
        super().setUp()
        for key in ("IBEMU_SESSION_SOCKET", "IBEMU_HOST"):
            self.env.pop(key, None)
        self.tool_env = tool_env(self.env)

    def xmit_pkts(self, fabric):
        return {(c["node"], c["port"]): c["xmit_pkts"] for c in
                self.json_of("counters", "--fabric", fabric)["counters"]}

    def route_ports(self, fabric, a, b):
        """(switch, out port) of each switch on the route a -> b."""
        hops = self.json_of("route", a, b, "--fabric", fabric)["route"]
        return [(h["node"], h["out_port"]) for h in hops
                if h["type"] == "switch"]

    def assert_route_counted(self, fabric, a, b, before, at_least):
        after = self.xmit_pkts(fabric)
        for a_, b_ in ((a, b), (b, a)):
            for key in self.route_ports(fabric, a_, b_):
                self.assertGreaterEqual(after[key] - before[key], at_least,
                                        f"{key} on the route {a_} -> {b_}")

    def test_rc_same_and_different_leaves(self):
        self.up(FAT, "pprc")
        for a, b in (("hca01", "hca02"), ("hca01", "hca36")):
            before = self.xmit_pkts("pprc")
            # The defaults: 1000 exchanges of 4096 bytes at MTU 1024.
            self.pingpong("pprc", "ibv_rc_pingpong", a, b)
            self.assert_route_counted("pprc", a, b, before, 4000)
            self.pingpong("pprc", "ibv_rc_pingpong", a, b, "-s", "65536",
                          "-n", "50", "-m", "4096")
        self.down("pprc")

    def test_rc_events(self):
        """-e: completions through a completion channel; across the two
        switches of two-switch.yaml too."""
        self.up(FAT, "ppev")
        self.pingpong("ppev", "ibv_rc_pingpong", "hca03", "hca30", "-e",
                      "-n", "30", "-s", "100")
        self.down("ppev")
        self.up(TWO, "ppev2")
        before = self.xmit_pkts("ppev2")
        self.pingpong("ppev2", "ibv_rc_pingpong", "hca1", "hca2", "-e",
                      "-n", "30")
        self.assert_route_counted("ppev2", "hca1", "hca2", before, 120)
        self.down("ppev2")

    def test_rc_timestamps_and_new_send(self):
        """-t: an extended CQ with completion timestamps, which count
        nanoseconds of virtual time, so the same run on two fresh fabrics
        prints the same receive completion deltas (the time rule makes
        them deterministic; a second run on the same fabric starts at
        another virtual time, and timestamps count whole nanoseconds, so
        a delta may round one nanosecond the other way); -N: the ibv_wr_*
        work request builders of an extended QP."""
        deltas = []
        for name in ("ppts0", "ppts"):
            self.up(FAT, name)
            outs = self.pingpong(name, "ibv_rc_pingpong", "hca07",
                                 "hca31", "-t", "-n", "40", "-s", "256")
            lines = [re.findall(r"^(?:Max|Min|Average) receive completion "
                                r"clock cycles = ([\d.]+)$", o, re.M)
                     for o in outs]
            for found in lines:
                self.assertEqual(len(found), 3, outs)
                self.assertGreater(float(found[1]), 0)
            deltas.append(lines)
        self.down("ppts0")
        self.assertEqual(deltas[0], deltas[1])
        self.pingpong("ppts", "ibv_rc_pingpong", "hca07", "hca08", "-N",
                      "-n", "100")
        self.pingpong("ppts", "ibv_rc_pingpong", "hca07", "hca31", "-N",
                      "-t", "-e", "-n", "20", "-s", "100")
        self.down("ppts")

    def test_uc_ud_srq(self):
        self.up(FAT, "ppx")
        before = self.xmit_pkts("ppx")
        self.pingpong("ppx", "ibv_uc_pingpong", "hca01", "hca36", "-n", "20")
        self.assert_route_counted("ppx", "hca01", "hca36", before, 20)
        before = self.xmit_pkts("ppx")
        self.pingpong("ppx", "ibv_ud_pingpong", "hca02", "hca35", "-n", "20",
                      "-s", "1024")
        self.assert_route_counted("ppx", "hca02", "hca35", before, 20)
        self.pingpong("ppx", "ibv_ud_pingpong", "hca02", "hca03", "-e")
        self.pingpong("ppx", "ibv_srq_pingpong", "hca04", "hca33", "-n",
                      "20", "-q", "4")
        self.pingpong("ppx", "ibv_srq_pingpong", "hca04", "hca05", "-s",
                      "8192", "-n", "10")
        self.down("ppx")

    def test_sigkill_mid_transfer(self):
        """The victim dies with SIGKILL while its peer RDMA-WRITEs to it:
        the writer's next WRITE fails with retry exceeded after the
        modelled timeouts, the daemon frees the victim's objects and
        serves a new pingpong."""
        self.up(FAT, "ppkill")
        d = tempfile.mkdtemp(prefix="ibemu-kill-")
        self.addCleanup(shutil.rmtree, d, True)
        fa, fb = os.path.join(d, "a"), os.path.join(d, "b")
        victim = self.exec_popen("ppkill", "hca01", CLIENT, "peer", fa, fb,
                                 "victim")
        writer = self.exec_popen("ppkill", "hca36", CLIENT, "peer", fb, fa,
                                 "writer")
        line = writer.stdout.readline()
        self.assertEqual(line, "writes=started\n")
        self.assertEqual(victim.stdout.readline(), "victim=ready\n")
        time.sleep(0.2)  # mid-transfer
        # 'ibemu exec' runs the program as its child: kill the program.
        kids = subprocess.run(["pgrep", "-P", str(victim.pid)],
                              capture_output=True, text=True).stdout.split()
        for pid in kids or [str(victim.pid)]:
            os.kill(int(pid), signal.SIGKILL)
        victim.communicate(timeout=10)
        out, _ = writer.communicate(timeout=30)
        self.assertEqual(writer.returncode, 0, out)
        self.assertIn("status=transport retry counter exceeded", out)
        self.assertTrue(pid_alive(self.started["ppkill"]))
        self.pingpong("ppkill", "ibv_rc_pingpong", "hca01", "hca36", "-n",
                      "5")
        self.down("ppkill")

    # --- garbage in the rings, through the raw protocol --------------

    def test_bad_memory_registrations(self):
        """MR_REG with the memfd of shared pages (docs/design.md §6):
        an fd that is not a memfd, an unsealed memfd, one smaller than
        the window it claims, a window of no whole pages, a window with
        no fd: each is refused with EINVAL; the daemon and a good
        registration on the same stream go on."""
        self.up(FAT, "ppmr")
        s, page, async_fd = self.verbs_open("ppmr", "hca09")
        t, st, body = self.call(s, 10, struct.pack("=II", 0, 0))
        pd = struct.unpack("=II", body)[0]

        def mr(shm_len, shm_off=0, fds=(), shm_addr=0x7f0000000000):
            req = struct.pack("=QQIIIIQQQ", 0x7f0000000000, 8192, pd, 1,
                              0, 0, shm_addr, shm_len, shm_off)
            t, st, body = self.call(s, 12, req, fds)
            self.assertEqual(t, 12 if st == 0 else ERROR, body)
            return st

        r, w = os.pipe()
        unsealed = os.memfd_create("ibemu-test", os.MFD_ALLOW_SEALING)
        os.ftruncate(unsealed, 8192)
        small, good = self.memfd(4096), self.memfd(8192)
        try:
            self.assertEqual(mr(8192, fds=[r]), -22)
            self.assertEqual(mr(8192, fds=[unsealed]), -22)
            self.assertEqual(mr(8192, fds=[small]), -22)
            self.assertEqual(mr(100, fds=[good]), -22)
            self.assertEqual(mr(4096, shm_off=4096, fds=[small]), -22)
            self.assertEqual(mr(8192), -22)
            self.assertEqual(mr(8192, fds=[good]), 0)
        finally:
            for fd in (r, w, unsealed, small, good):
                os.close(fd)
        self.assertIn("memory registration refused",
                      open(self.paths("ppmr")["log"]).read())
        self.ibemu("status", "--fabric", "ppmr")
        s.close()
        self.down("ppmr")

    def test_garbage_in_rings(self):
        self.up(FAT, "ppgarb")
        s, page, async_fd = self.verbs_open("ppgarb", "hca07")
        t, st, body = self.call(s, 10, struct.pack("=II", 0, 0))
        pd = struct.unpack("=II", body)[0]
        cq_fd, cq_ring = self.ring(256, 64)
        t, st, body = self.call(s, 14, struct.pack("=4I", 256, 0, 0, 0),
                                [cq_fd])
        os.close(cq_fd)
        self.assertEqual((t, st), (14, 0), body)
        cq = struct.unpack("=4I", body)[2]
        qpn1, sq1, _ = self.make_qp(s, pd, cq)
        qpn2, sq2, _ = self.make_qp(s, pd, cq)
        qpn3, sq3, rq3 = self.make_qp(s, pd, cq)
        # Ids of no object of this stream: errors, not crashes.
        t, st, _ = self.call(s, 17, struct.pack("=7IHH16B", 999, 1, *[0] * 5,
                                                0, 0, *[0] * 16))
        self.assertEqual((t, st), (ERROR, -22))
        t, st, _ = self.call(s, 13, struct.pack("=II", 0xdead00, 0))
        self.assertEqual((t, st), (ERROR, -22))
        # QP 1: an unknown opcode. QP 2: a producer index past the ring.
        # QP 3: a receive WQE with 1000 SGEs.
        sq1[192:192 + 16] = struct.pack("=QII", 1, 77, 0)
        sq1[0:4] = struct.pack("=I", 1)
        sq2[0:4] = struct.pack("=I", 1000)
        rq3[192:192 + 12] = struct.pack("=QI", 1, 1000)
        rq3[0:4] = struct.pack("=I", 1)
        self.posted(page)
        socket.send_fds(s, [hdr(24, 0)], [])
        end = time.time() + 10
        errs = lambda: [struct.unpack("=I", r[136:140])[0]
                        for r in (sq1, sq2, sq3)]
        while errs() != [1, 1, 1] and time.time() < end:
            time.sleep(0.02)
        self.assertEqual(errs(), [1, 1, 1])
        # Each raised a catastrophic error (IBV_EVENT_QP_FATAL) on its QP.
        prod = struct.unpack("=I", page[192:196])[0]
        events = [struct.unpack("=II", page[384 + 16 * i:392 + 16 * i])
                  for i in range(prod)]
        self.assertEqual(sorted(events), sorted([(1, qpn1), (1, qpn2),
                                                 (1, qpn3)]))
        # The CQ and a fresh QP on the stream are fine; so is the daemon.
        self.assertEqual(struct.unpack("=I", cq_ring[136:140])[0], 0)
        qpn4, sq4, rq4 = self.make_qp(s, pd, cq)
        self.assertEqual(struct.unpack("=I", sq4[136:140])[0], 0)
        # A CQ consumer index past the producer: that CQ goes into error
        # (IBV_EVENT_CQ_ERR) at its next completion, here the flush of a
        # receive posted to QP 4 when QP 4 moves to Error.
        init = struct.pack("=7IHH16B", qpn4, 1 | 8 | 16 | 32, *[0] * 5, 0, 0,
                           1, 0, 0, 0, 0, 1, *[0] * 10)
        self.assertEqual(self.call(s, 17, init)[:2], (17, 0))
        rq4[192:192 + 16] = struct.pack("=QII", 5, 0, 0)
        rq4[0:4] = struct.pack("=I", 1)
        self.posted(page)
        socket.send_fds(s, [hdr(24, 0)], [])
        end = time.time() + 10
        while (struct.unpack("=I", rq4[64:68])[0] != 1 and
               time.time() < end):
            time.sleep(0.02)
        cq_ring[64:68] = struct.pack("=I", 1000)
        err = struct.pack("=7IHH16B", qpn4, 1, *[0] * 5, 0, 0, 6,
                          *[0] * 15)
        self.assertEqual(self.call(s, 17, err)[:2], (17, 0))
        end = time.time() + 10
        while (struct.unpack("=I", cq_ring[136:140])[0] != 1 and
               time.time() < end):
            time.sleep(0.02)
        self.assertEqual(struct.unpack("=I", cq_ring[136:140])[0], 1)
        prod = struct.unpack("=I", page[192:196])[0]
        self.assertEqual(struct.unpack("=II", page[384 + 16 * (prod - 1):
                                                   392 + 16 * (prod - 1)]),
                         (0, cq))
        s.close()
        for m in (page, cq_ring, sq1, sq2, sq3, rq3, sq4, rq4):
            m.close()
        self.pingpong("ppgarb", "ibv_rc_pingpong", "hca07", "hca08", "-n",
                      "5")
        self.down("ppgarb")


if __name__ == "__main__":
    main()
