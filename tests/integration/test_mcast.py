# SPDX-License-Identifier: MIT
"""UD multicast (issue 23 item 6) on a fabric brought up by ibemu-sm:
tests/clients/verbs-mcast joins a group through the SA (MCMemberRecord
Set, which makes ibemu-sm program the switches' MFTs), attaches UD QPs of
processes on three HCAs across two switches (ibv_attach_mcast), and one
sender's messages reach each of them whole, once, while a QP attached
then detached gets nothing; the PMA counters (perfquery -x) show one
packet entering the fabric and a copy leaving each member's switch port;
the times, relative to the sender's post, are the same on a fresh fabric.
ibv_attach_mcast's errors and limits; a receiver killed while attached;
the MCAST_ATTACH and MCAST_DETACH calls spoken raw with bogus fields.
Debian's unmodified mckey (rdmacm-utils: rdma_join_multicast, the IPv4
group's MGID as the kernel's rdma_cm maps it) between three receivers
and a sender, on ibemu-sm and on OpenSM, with the same counters."""

import os
import re
import signal
import struct
import subprocess

from harness import (IBEMU, IbemuTestCase, OpenSMRunner, main, tool_env,
                     topology)
from programs import PingpongRunner
from sessproto import ERROR, RawVerbs, hdr

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
CLIENT = os.path.join(BUILD, "tests", "verbs-mcast")
TWO = topology("two-switch.yaml")
MGID = "ff12601bffff0000000000000000abcd"
N = 30


def results(out):
    return dict(re.findall(r"(\w+)=(\S+)", out))


class McastTest(OpenSMRunner, PingpongRunner, IbemuTestCase):
    def setUp(self):
        super().setUp()
        for key in ("IBEMU_SESSION_SOCKET", "IBEMU_HOST"):
            self.env.pop(key, None)
        self.tool_env = tool_env(self.env)

    def client(self, fabric, host, *args):
        return subprocess.Popen(
            [IBEMU, "exec", "--fabric", fabric, "--host", host, "--",
             CLIENT, *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, env=self.tool_env)

    def read_until(self, p, pattern):
        seen = []
        for line in iter(p.stdout.readline, ""):
            seen.append(line)
            if re.match(pattern, line):
                return line
        self.fail(f"no line like {pattern!r} in: {''.join(seen)}")

    def finish(self, p):
        try:
            out, _ = p.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
        self.assertEqual(p.returncode, 0, out)
        self.assertNotIn("FAIL", out)
        return results(out)

    def mcast_pkts(self, fabric, node, port):
        """PortMulticastXmitPkts and PortMulticastRcvPkts of a switch
        port, as perfquery -x reads them from its PMA."""
        lid = [p["lid"] for p in self.json_of("ports", "--fabric",
                                              fabric)["ports"]
               if p["node"] == node][0]
        out = self.ibemu("exec", "--fabric", fabric, "--host", "hca2", "--",
                         "perfquery", "-x", str(lid), str(port),
                         env=self.tool_env, timeout=60).stdout
        get = {k: int(re.search(rf"{k}:\.+(\d+)", out).group(1))
               for k in ("PortMulticastXmitPkts", "PortMulticastRcvPkts")}
        return get["PortMulticastXmitPkts"], get["PortMulticastRcvPkts"]

    def group_run(self, fabric):
        """Receivers on hca1 (the sender's switch) and hca3 (across the
        inter-switch links), each with a second QP attached and detached
        again; the sender on hca2; hca4 no member. Returns the receivers'
        times relative to the post and the counters' deltas."""
        ports = [("sw1", 1), ("sw1", 2), ("sw1", 7), ("sw1", 8),
                 ("sw2", 1), ("sw2", 2), ("sw2", 7), ("sw2", 8)]
        recvs = [self.client(fabric, h, "recv", MGID, str(N))
                 for h in ("hca1", "hca3")]
        try:
            # The sender starts once every receiver's receives are
            # posted, in virtual time (UD drops what finds none).
            ready = max(int(results(self.read_until(p, r"ready mlid="))[
                "ready_ps"]) for p in recvs)
            before = {k: self.mcast_pkts(fabric, *k) for k in ports}
            snd = self.client(fabric, "hca2", "send", MGID, str(N), "1000",
                              str(ready))
            sent = self.finish(snd)
            self.assertEqual(sent["sent"], str(N))
            got = [self.finish(p) for p in recvs]
        finally:
            for p in recvs:
                if p.poll() is None:
                    p.kill()
                    p.communicate()
        for g in got:
            self.assertEqual((g["got"], g["bad"], g["detached_got"]),
                             (str(N), "0", "0"), g)
        after = {k: self.mcast_pkts(fabric, *k) for k in ports}
        delta = {k: (after[k][0] - before[k][0], after[k][1] - before[k][1])
                 for k in ports}
        post = int(sent["post_ps"]) // 1000
        times = [(int(g["first_ns"]) - post, int(g["last_ns"]) - post)
                 for g in got]
        return times, delta

    def test_group(self):
        self.up(TWO, "mcast1")
        times, delta = self.group_run("mcast1")
        # One packet a message enters the fabric (sw1 port 2, from hca2),
        # a copy leaves to hca1 and one crosses to sw2 (on one of the two
        # inter-switch cables: the SM's tree), which sends a copy to hca3
        # and none to hca4 (no member); nothing goes back to hca2.
        self.assertEqual(delta[("sw1", 2)], (0, N))
        self.assertEqual(delta[("sw1", 1)], (N, 0))
        self.assertEqual(delta[("sw1", 7)][0] + delta[("sw1", 8)][0], N)
        self.assertEqual(delta[("sw2", 7)][1] + delta[("sw2", 8)][1], N)
        self.assertEqual(delta[("sw2", 1)], (N, 0))
        self.assertEqual(delta[("sw2", 2)], (0, 0))
        # hca1 is one switch away, hca3 two: it gets each message later.
        for first, last in times:
            self.assertGreater(first, 0)
            self.assertGreater(last, first)
        self.assertGreater(times[1][0], times[0][0])
        # The same virtual times on a fresh fabric.
        self.up(TWO, "mcast2")
        again, _ = self.group_run("mcast2")
        self.assertEqual(times, again)
        self.down("mcast1")
        self.down("mcast2")

    def mckey_run(self, fabric, count):
        """Debian's mckey: receivers on hca1, hca3 and hca4, the sender
        on hca2, group 239.1.1.1 (bound to each host's address, plan of
        topologies/README.md); the counters' deltas of the sender's
        switch port and of each receiver's."""
        ips = {"hca1": "127.10.0.1", "hca2": "127.10.0.17",
               "hca3": "127.10.0.33", "hca4": "127.10.0.49"}
        ports = [("sw1", 2), ("sw1", 1), ("sw2", 1), ("sw2", 2)]
        recvs = [self.exec_popen(fabric, h, "mckey", "-m", "239.1.1.1",
                                 "-b", ips[h], "-C", str(count))
                 for h in ("hca1", "hca3", "hca4")]
        try:
            # mckey's output is buffered in a pipe: the receivers are in
            # once the switches' MFTs hold them (their receives are
            # posted before they join).
            self.wait_until("the receivers' joins",
                            lambda: self.mft_has(fabric, "sw1", {1}) and
                            self.mft_has(fabric, "sw2", {1, 2}), 60)
            before = {k: self.mcast_pkts(fabric, *k) for k in ports}
            snd = self.exec_popen(fabric, "hca2", "mckey", "-m",
                                  "239.1.1.1", "-b", ips["hca2"], "-s",
                                  "-C", str(count))
            out, _ = snd.communicate(timeout=90)
            self.assertEqual(snd.returncode, 0, out)
            self.assertIn("joined dgid: ff12:4001:ffff::f01:101", out)
            for p in recvs:
                rest, _ = p.communicate(timeout=90)
                self.assertEqual(p.returncode, 0, rest)
                self.assertIn("data transfers complete", rest)
        finally:
            for p in recvs:
                if p.poll() is None:
                    p.kill()
                    p.communicate()
        after = {k: self.mcast_pkts(fabric, *k) for k in ports}
        return {k: (after[k][0] - before[k][0], after[k][1] - before[k][1])
                for k in ports}

    def mft_has(self, fabric, node, ports):
        """Whether some MLID of switch 'node''s MFT (ibroute -M) sends
        to every port of 'ports'."""
        lid = [p["lid"] for p in self.json_of("ports", "--fabric",
                                              fabric)["ports"]
               if p["node"] == node][0]
        out = self.ibemu("exec", "--fabric", fabric, "--host", "hca2", "--",
                         "ibroute", "-M", str(lid), env=self.tool_env,
                         check=None, timeout=60).stdout
        head = next((ln for ln in out.splitlines() if "Ports:" in ln), "")
        cols = {int(m.group()): m.start()
                for m in re.finditer(r"\d+", head.split("Ports:")[1])} \
            if head else {}
        base = head.index("Ports:") + len("Ports:") if head else 0
        for row in out.splitlines():
            if row.startswith("0x") and all(
                    len(row) > base + cols[p] and row[base + cols[p]] == "x"
                    for p in ports if p in cols):
                return bool(cols)
        return False

    def test_mckey(self):
        """One packet a message in, a copy out to each receiver: the
        group's tree as ibemu-sm and OpenSM program it."""
        self.up(TWO, "mckey")
        delta = self.mckey_run("mckey", 40)
        self.assertEqual(delta[("sw1", 2)], (0, 40))
        for key in (("sw1", 1), ("sw2", 1), ("sw2", 2)):
            self.assertEqual(delta[key], (40, 0), key)
        self.down("mckey")
        self.up(TWO, "mckeyo", "--sm", "none")
        sm, _ = self.resident_opensm("mckeyo", "hca1")
        try:
            delta = self.mckey_run("mckeyo", 40)
        finally:
            self.stop_opensm(sm)
        self.assertEqual(delta[("sw1", 2)], (0, 40))
        for key in (("sw1", 1), ("sw2", 1), ("sw2", 2)):
            self.assertEqual(delta[key], (40, 0), key)
        self.down("mckeyo")

    def test_errors_and_death(self):
        self.up(TWO, "mcasterr")
        r = self.finish(self.client("mcasterr", "hca3", "errors", MGID))
        self.assertEqual((r["max_mcast_grp"], r["max_mcast_qp_attach"],
                          r["max_total_mcast_qp_attach"]),
                         ("1024", "240", "4096"))
        # A receiver killed while attached: its QP leaves the group with
        # it; the sender's messages reach nobody there, the daemon lives.
        p = self.client("mcasterr", "hca3", "recv", MGID, "5")
        ready = results(self.read_until(p, r"ready mlid="))["ready_ps"]
        p.send_signal(signal.SIGKILL)
        p.communicate()
        self.finish(self.client("mcasterr", "hca2", "send", MGID, "5",
                                "64", ready))
        self.json_of("nodes", "--fabric", "mcasterr")
        self.down("mcasterr")


# Session message types (proto/sess_proto.h).
PD_ALLOC, CQ_CREATE, QP_CREATE, QP_DESTROY = 10, 14, 16, 19
MCAST_ATTACH, MCAST_DETACH = 46, 47
EINVAL, ENOMEM = -22, -12


class McastRawTest(RawVerbs, IbemuTestCase):
    """MCAST_ATTACH and MCAST_DETACH spoken raw: a QP of another stream,
    of no stream, not UD; a GID or LID that is not multicast; a payload
    of the wrong size (the stream is closed)."""

    def ok(self, s, type_, payload, fds=()):
        t, st, body = self.call(s, type_, payload, fds)
        for fd in fds:
            os.close(fd)
        self.assertEqual((t, st), (type_, 0), body)
        return body

    def refused(self, s, type_, payload, errno=EINVAL):
        t, st, _ = self.call(s, type_, payload)
        self.assertEqual((t, st), (ERROR, errno), (type_, payload))

    def qp(self, s, type_):
        pd = struct.unpack("=II", self.ok(s, PD_ALLOC, bytes(8)))[0]
        fd, _ = self.ring(256, 64)
        cq = struct.unpack("=4I", self.ok(s, CQ_CREATE,
                                          struct.pack("=4I", 256, 0, 0, 0),
                                          [fd]))[2]
        sq_fd, _ = self.ring(4, 560)
        rq_fd, _ = self.ring(4, 504)
        req = struct.pack("=14I", type_, 0, pd, cq, cq, 0, 4, 4, 1, 1, 0, 4,
                          4, 0)
        body = self.ok(s, QP_CREATE, req, [sq_fd, rq_fd])
        return struct.unpack("=14I", body)[13]

    def test_bogus(self):
        self.up(TWO, "mcastraw")
        a, _, _ = self.verbs_open("mcastraw", "hca1")
        b, _, _ = self.verbs_open("mcastraw", "hca1")
        ud = self.qp(a, 4)
        rc = self.qp(a, 2)
        mgid = bytes.fromhex(MGID)

        def mc(qpn, lid=0xC001, gid=mgid, reserved=0):
            return struct.pack("=IHH16s", qpn, lid, reserved, gid)

        self.refused(b, MCAST_ATTACH, mc(ud))  # another stream's QP
        self.refused(a, MCAST_ATTACH, mc(ud + 1000))  # no QP
        self.refused(a, MCAST_ATTACH, mc(rc))  # not UD
        for lid in (0, 1, 0xBFFF, 0xFFFF):
            self.refused(a, MCAST_ATTACH, mc(ud, lid=lid))
        self.refused(a, MCAST_ATTACH, mc(ud, gid=b"\xfe\x80" + bytes(14)))
        self.refused(a, MCAST_DETACH, mc(ud))  # not attached
        self.ok(a, MCAST_ATTACH, mc(ud))
        self.ok(a, MCAST_ATTACH, mc(ud))  # again: no error
        self.ok(a, MCAST_DETACH, mc(ud))
        self.refused(a, MCAST_DETACH, mc(ud))
        # Groups of one HCA: max_mcast_grp (1024), then ENOMEM.
        for i in range(1024):
            self.ok(a, MCAST_ATTACH,
                    mc(ud, gid=mgid[:14] + struct.pack(">H", i)))
        self.refused(a, MCAST_ATTACH,
                     mc(ud, gid=mgid[:14] + struct.pack(">H", 1024)),
                     errno=ENOMEM)
        # A destroyed QP leaves its groups.
        self.ok(a, QP_DESTROY, struct.pack("=II", ud, 0))
        ud2 = self.qp(a, 4)
        self.ok(a, MCAST_ATTACH,
                mc(ud2, gid=mgid[:14] + struct.pack(">H", 1024)))
        # A payload of the wrong size closes the stream.
        a.sendall(hdr(MCAST_ATTACH, 8) + bytes(8))
        self.assertEqual(a.recv(1 << 16), b"")
        a.close()
        b.close()
        self.down("mcastraw")


if __name__ == "__main__":
    main()
