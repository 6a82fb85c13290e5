# SPDX-License-Identifier: MIT
"""XRC (IBA Annex A14). Debian's unmodified ibv_xsrq_pingpong between
emulated hosts of a two-level fat tree (same leaf and across the spines;
several sizes, -n, -e, and -c with two clients at once), its packets
counted by the PMA of the switch ports on the route as RC's are. Then
tests/clients/verbs-xrc: ibv_open_xrcd's errors, SENDs and an RDMA WRITE
into an XRC SRQ named by number (the SRQ's CQ gets the receive), a SEND
naming an SRQ that does not exist or is of another domain (NAK Invalid
Request a round trip later, IBV_WC_REM_INV_REQ_ERR), ibv_close_xrcd with
objects alive (EBUSY); two processes of one host sharing a domain by its
file (ibv_open_qp, a message through one process's QPs into the other's
SRQ), and a host that does not share it. Last, the XRC calls spoken raw:
every handle, type and count a client gives the daemon is checked."""

import os
import re
import struct
import subprocess
import tempfile

from harness import IBEMU, IbemuTestCase, main, tool_env, topology
from programs import PingpongRunner, free_port, listening
from sessproto import ERROR, RawVerbs

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
CLIENT = os.path.join(BUILD, "tests", "verbs-xrc")
FAT = topology("fat-tree-2l-36.yaml")


class XrcTest(PingpongRunner, IbemuTestCase):
    def setUp(self):
        super().setUp()
        for key in ("IBEMU_SESSION_SOCKET", "IBEMU_HOST"):
            self.env.pop(key, None)
        self.tool_env = tool_env(self.env)
        self.tmp = tempfile.mkdtemp(prefix="ibemu-xrc-")

    def tearDown(self):
        for f in os.listdir(self.tmp):
            os.unlink(os.path.join(self.tmp, f))
        os.rmdir(self.tmp)
        super().tearDown()

    def xmit_pkts(self, fabric):
        return {(c["node"], c["port"]): c["xmit_pkts"] for c in
                self.json_of("counters", "--fabric", fabric)["counters"]}

    def route_ports(self, fabric, a, b):
        hops = self.json_of("route", a, b, "--fabric", fabric)["route"]
        return [(h["node"], h["out_port"]) for h in hops
                if h["type"] == "switch"]

    def xsrq(self, fabric, server, clients, *args):
        """ibv_xsrq_pingpong: a server on 'server', one client per host of
        'clients' (-c), all to exit 0 and print "success"."""
        port = str(free_port())
        extra = ["-c", str(len(clients))] if len(clients) > 1 else []
        srv = self.exec_popen(fabric, server, "ibv_xsrq_pingpong", "-p",
                              port, *extra, *args)
        self.wait_until("the server's socket",
                        lambda: listening(int(port)) or
                        srv.poll() is not None)
        clis = [self.exec_popen(fabric, c, "ibv_xsrq_pingpong", "-p", port,
                                *args, "localhost") for c in clients]
        for p in clis + [srv]:
            try:
                out, _ = p.communicate(timeout=90)
            except subprocess.TimeoutExpired:
                p.kill()
                out, _ = p.communicate()
            self.assertEqual(p.returncode, 0,
                             f"ibv_xsrq_pingpong {args} {server}/{clients}:"
                             f" {out}")
            self.assertRegex(out, r"(?m)^success$")
            self.assertRegex(out, r"SRQN [0-9a-f]{6}")

    def test_xsrq_pingpong(self):
        self.up(FAT, "xrcpp")
        for a, b in (("hca01", "hca02"), ("hca01", "hca36")):
            before = self.xmit_pkts("xrcpp")
            self.xsrq("xrcpp", a, [b], "-n", "200")
            # 200 SENDs each way of 4096 bytes at the default MTU 1024:
            # 4 packets each, an ACK each back, through every switch.
            after = self.xmit_pkts("xrcpp")
            for a_, b_ in ((a, b), (b, a)):
                for key in self.route_ports("xrcpp", a_, b_):
                    self.assertGreaterEqual(after[key] - before[key], 800,
                                            f"{key} on {a_} -> {b_}")
        for size in ("1", "64", "65536"):
            self.xsrq("xrcpp", "hca05", ["hca31"], "-s", size, "-n", "20",
                      "-m", "4096")
        self.xsrq("xrcpp", "hca07", ["hca08"], "-e", "-n", "30")
        self.xsrq("xrcpp", "hca10", ["hca11", "hca29"], "-n", "25",
                  "-s", "3000")
        self.xsrq("xrcpp", "hca12", ["hca13", "hca25", "hca35"], "-e",
                  "-n", "10")
        self.down("xrcpp")

    def client(self, fabric, host, *args):
        p = subprocess.run([IBEMU, "exec", "--fabric", fabric, "--host",
                            host, "--", CLIENT, *args],
                           capture_output=True, text=True,
                           env=self.tool_env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertNotIn("FAIL", p.stdout)
        return dict(re.findall(r"(?m)^(\w+)=(\d+)$", p.stdout))

    def test_rules(self):
        """One process: errors, delivery and NAKs, with their virtual
        times: an 8-byte SEND's round trip and each NAK's are well under a
        microsecond through the leaf, never a retry timeout (67 ms at
        the timeout 14 the client gives)."""
        self.up(FAT, "xrcrules")
        got = self.client("xrcrules", "hca03", "self",
                          os.path.join(self.tmp, "d"))
        send = int(got["send_8_ps"])
        self.assertGreater(send, 0)
        for nak in ("nak_missing_ps", "nak_domain_ps"):
            # A NAK is a round trip of a 64-byte request: as long as an
            # 8-byte SEND's ACK, give or take its payload's wire time.
            self.assertLess(abs(int(got[nak]) - send), 100000, got)
        # Deterministic: a second run on a fresh fabric gives the same.
        self.up(FAT, "xrcrules2")
        again = self.client("xrcrules2", "hca03", "self",
                            os.path.join(self.tmp, "d2"))
        self.assertEqual(got, again)
        self.down("xrcrules")
        self.down("xrcrules2")

    def read_until(self, p, pattern):
        """The match of 'pattern' in the next lines of p's output (up to
        its end, which fails the test with what came)."""
        seen = []
        for line in iter(p.stdout.readline, ""):
            seen.append(line)
            m = re.match(pattern, line)
            if m:
                return m
        self.fail(f"no line like {pattern!r} in: {''.join(seen)}")

    def test_shared_domain(self):
        """Two processes of hca04 share the domain of one file; a third
        on hca05 opens the same file and finds no domain there."""
        self.up(FAT, "xrcshare")
        path = os.path.join(self.tmp, "shared")
        peer = None
        tgt = subprocess.Popen(
            [IBEMU, "exec", "--fabric", "xrcshare", "--host", "hca04", "--",
             CLIENT, "target", path], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=self.tool_env)
        try:
            m = self.read_until(tgt, r"tgt=(\d+) srqn=(\d+)")
            peer = subprocess.Popen(
                [IBEMU, "exec", "--fabric", "xrcshare", "--host", "hca04",
                 "--", CLIENT, "peer", path, m.group(1)],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                env=self.tool_env)
            pm = self.read_until(peer, r"peer=(\d+)")
            # Each process's SRQ has its own number in the one domain.
            self.assertNotEqual(pm.group(1), m.group(2))
            tgt.stdin.write(f"peer={pm.group(1)}\n")
            tgt.stdin.flush()
            out, _ = peer.communicate(timeout=60)
            self.assertEqual(peer.returncode, 0, out)
            self.assertIn("peer done failures=0", out)
            tgt.stdin.write("again=1\n")
            tgt.stdin.flush()
            out, _ = tgt.communicate(timeout=60)
            self.assertEqual(tgt.returncode, 0, out)
            self.assertIn("target done failures=0", out)
        finally:
            for p in (tgt, peer):
                if p and p.poll() is None:
                    p.kill()
                    p.communicate()
        self.client("xrcshare", "hca05", "other", path)
        self.down("xrcshare")


# Session message types (proto/sess_proto.h).
PD_ALLOC, CQ_CREATE, QP_CREATE, QP_DESTROY = 10, 14, 16, 19
XRCD_OPEN, XRCD_CLOSE, XSRQ_CREATE, QP_OPEN = 32, 33, 34, 35
EINVAL, EBUSY = -22, -16


class XrcRawTest(RawVerbs, IbemuTestCase):
    def ok(self, s, type_, payload, fds=()):
        t, st, body = self.call(s, type_, payload, fds)
        for fd in fds:
            os.close(fd)
        self.assertEqual((t, st), (type_, 0), body)
        return body

    def refused(self, s, type_, payload, fds=(), errno=EINVAL):
        t, st, _ = self.call(s, type_, payload, fds)
        for fd in fds:
            os.close(fd)
        self.assertEqual((t, st), (ERROR, errno), (type_, payload))

    def objects(self, s):
        """A PD and a CQ of stream 's'."""
        pd = struct.unpack("=II", self.ok(s, PD_ALLOC, bytes(8)))[0]
        fd, _ = self.ring(256, 64)
        cq = struct.unpack("=4I", self.ok(s, CQ_CREATE,
                                          struct.pack("=4I", 256, 0, 0, 0),
                                          [fd]))[2]
        return pd, cq

    def xsrq(self, pd, xrcd, cq, entries=4, max_wr=4):
        fd, _ = self.ring(entries, 504)
        return struct.pack("=8I", pd, max_wr, 1, 0, entries, 0, xrcd,
                           cq), [fd]

    def test_checked(self):
        self.up(FAT, "xrcraw")
        a, _, _ = self.verbs_open("xrcraw", "hca06")
        b, _, _ = self.verbs_open("xrcraw", "hca06")
        pd_a, cq_a = self.objects(a)
        pd_b, cq_b = self.objects(b)
        # XRCD_OPEN: an fd announced and none sent, one sent unannounced,
        # flags other than O_CREAT and O_EXCL.
        self.refused(a, XRCD_OPEN, struct.pack("=4I", 0x40, 1, 0, 0))
        fd = os.open(self.rundir, os.O_RDONLY)
        self.refused(a, XRCD_OPEN, struct.pack("=4I", 0x40, 0, 0, 0), [fd])
        self.refused(a, XRCD_OPEN, struct.pack("=4I", 0x41, 0, 0, 0))
        # Two streams opening one file share its domain (the same
        # number), each by a handle of its own; 'a' has a domain of its
        # own first, so its handle on the file's is one 'b' lacks.
        anon = struct.unpack("=4I", self.ok(
            a, XRCD_OPEN, struct.pack("=4I", 0, 0, 0, 0)))[2]
        fd = os.open(self.rundir, os.O_RDONLY)
        ha, xa = struct.unpack("=4I", self.ok(
            a, XRCD_OPEN, struct.pack("=4I", 0x40, 1, 0, 0), [fd]))[2:]
        fd = os.open(self.rundir, os.O_RDONLY)
        hb, xb = struct.unpack("=4I", self.ok(
            b, XRCD_OPEN, struct.pack("=4I", 0, 1, 0, 0), [fd]))[2:]
        self.assertEqual(xa, xb)
        self.assertNotEqual(ha, hb)
        # XSRQ_CREATE: a handle, PD or CQ of no object of the stream, a
        # ring smaller than max_wr.
        for args in ((pd_a, ha + 100, cq_a), (pd_a, ha, cq_b),
                     (pd_b, ha, cq_a), (pd_a, 0, cq_a)):
            self.refused(a, XSRQ_CREATE, *self.xsrq(*args))
        self.refused(a, XSRQ_CREATE, *self.xsrq(pd_a, ha, cq_a, 2, 4))
        body = self.ok(a, XSRQ_CREATE, *self.xsrq(pd_a, ha, cq_a))
        srq = struct.unpack("=8I", body)[5]
        # QP_CREATE of an XRC receive QP: its 'pd' is a domain handle of
        # the stream; no CQ, SRQ, queue sizes nor ring.
        def recv_qp(pd, *rest, fds=()):
            return struct.pack("=14I", 10, 0, pd, *rest), list(fds)
        self.refused(a, QP_CREATE, *recv_qp(ha + 5, *[0] * 11))
        self.refused(a, QP_CREATE, *recv_qp(ha, cq_a, *[0] * 10))
        self.refused(a, QP_CREATE, *recv_qp(ha, 0, 0, srq, *[0] * 8))
        self.refused(a, QP_CREATE, *recv_qp(ha, 0, 0, 0, 4, *[0] * 7))
        fd, _ = self.ring(4, 560)
        self.refused(a, QP_CREATE, *recv_qp(ha, *[0] * 11, fds=[fd]))
        tgt = struct.unpack("=14I", self.ok(
            a, QP_CREATE, *recv_qp(ha, *[0] * 11)))[13]
        # An XRC send QP has no receive side; unknown types are refused.
        for type_, rcq in ((9, cq_a), (11, cq_a), (1, cq_a)):
            fd, _ = self.ring(4, 560)
            self.refused(a, QP_CREATE, struct.pack(
                "=14I", type_, 0, pd_a, cq_a, rcq, 0, 4, 0, 1, 0, 0, 4, 0,
                0), [fd])
        # QP_OPEN: only an XRC receive QP of the domain the handle opens.
        self.refused(b, QP_OPEN, struct.pack("=4I", tgt, ha, 10, 0))
        self.refused(a, QP_OPEN, struct.pack("=4I", tgt, anon, 10, 0))
        self.refused(b, QP_OPEN, struct.pack("=4I", tgt, hb, 2, 0))
        self.refused(b, QP_OPEN, struct.pack("=4I", tgt + 50, hb, 10, 0))
        self.ok(b, QP_OPEN, struct.pack("=4I", tgt, hb, 10, 0))
        # XRCD_CLOSE: another stream's handle, and one with objects.
        self.refused(b, XRCD_CLOSE, struct.pack("=II", ha, 0))
        self.refused(a, XRCD_CLOSE, struct.pack("=II", ha, 0),
                     errno=EBUSY)
        self.refused(b, XRCD_CLOSE, struct.pack("=II", hb, 0),
                     errno=EBUSY)
        # The maker's handle on the QP goes; the opener's keeps it.
        self.ok(a, QP_DESTROY, struct.pack("=II", tgt, 0))
        self.ok(b, QP_DESTROY, struct.pack("=II", tgt, 0))
        self.ok(b, XRCD_CLOSE, struct.pack("=II", hb, 0))
        # Closing the stream takes the SRQ and the domain with it.
        a.close()
        b.close()
        self.down("xrcraw")


if __name__ == "__main__":
    main()
