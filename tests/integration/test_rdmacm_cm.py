# SPDX-License-Identifier: MIT
"""The CM protocol of ibemu's librdmacm (rdmacm/cm.c) and the daemon's
routing of CM MADs (attach/sess_cm.c), with Debian's unmodified
rdmacm-utils between emulated hosts: rping (sizes and counts, verified),
ucmatose (several connections), udaddy (SIDR), rdma_server/rdma_client;
the CM MADs cross the fabric (the PMA counters of the ports on the path
grow by them) and connection setup takes the same virtual time on every
run. Faults: a port nobody listens on (REJECTED, reason 8), a listener
that never accepts (UNREACHABLE -ETIMEDOUT after the spec's retries, in
virtual time), a peer killed mid-connection (DISCONNECTED)."""

import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from harness import (IBEMU, SRC, IbemuTestCase, OpenSMRunner, main,
                     topology)

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
CMCLIENT = os.path.join(BUILD, "tests", "rdmacm-cm")


class RdmaCmProtocolTest(OpenSMRunner, IbemuTestCase):
    def popen(self, fabric, host, *argv):
        """A program under 'ibemu exec'; its output goes to a file (rping
        -v writes more than a pipe holds while the test waits on its
        peer)."""
        out = tempfile.TemporaryFile(mode="w+", errors="replace")
        p = subprocess.Popen(
            [IBEMU, "exec", "--fabric", fabric, "--host", host, "--",
             *argv], stdout=out, stderr=subprocess.STDOUT, text=True,
            env=self.tool_env)
        p.out = out
        return p

    def output(self, p):
        p.out.seek(0)
        return p.out.read()

    def finish(self, p, timeout=60):
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            self.fail(f"{p.args} hung:\n{self.output(p)[-2000:]}")
        out = self.output(p)
        p.out.close()
        return p.returncode, out

    def ips(self, fabric):
        return {n["name"]: n["ip"] for n in
                self.json_of("nodes", "--fabric", fabric, "--type",
                             "hca")["nodes"]}

    def xmit_pkts(self, fabric, node):
        c = self.json_of("counters", node, "--fabric", fabric)["counters"]
        return sum(p["xmit_pkts"] for p in c)

    def pair(self, fabric, server, client, settle=0.5, timeout=60):
        """Starts 'server' (argv on hca2), then 'client' (on hca1) once
        the server had time to listen; returns both (status, output)."""
        srv = self.popen(fabric, "hca2", *server)
        time.sleep(settle)
        if srv.poll() is not None:
            self.fail(self.output(srv)[-2000:])
        cli = self.popen(fabric, "hca1", *client)
        c = self.finish(cli, timeout)
        s = self.finish(srv, timeout)
        return s, c

    def test_rping(self):
        """rping, verified, with several sizes and counts; the CM MADs
        show in the counters of both hosts' ports."""
        self.up(topology("two-switch.yaml"), "rp")
        ip = self.ips("rp")["hca2"]
        for size, count in ((64, 3), (1024, 10), (60000, 2)):
            before = {h: self.xmit_pkts("rp", h) for h in ("hca1", "hca2")}
            s, c = self.pair("rp", ("rping", "-s", "-a", ip, "-C",
                                    str(count), "-S", str(size), "-v"),
                             ("rping", "-c", "-a", ip, "-C", str(count),
                              "-S", str(size), "-v"))
            self.assertEqual(s[0], 0, s[1][-2000:])
            self.assertEqual(c[0], 0, c[1][-2000:])
            self.assertEqual(c[1].count("ping data:"), count, c[1][-2000:])
            self.assertEqual(s[1].count("server ping data:"), count,
                             s[1][-2000:])
            after = {h: self.xmit_pkts("rp", h) for h in ("hca1", "hca2")}
            # REQ, RTU and DREQ (or DREP) at least from the client; REP
            # and a DREQ or DREP from the server, besides the data.
            for h in after:
                self.assertGreater(after[h], before[h], h)
        self.down("rp")

    def check_utils(self, fabric):
        """ucmatose with several connections (RC, private data both ways,
        disconnect), udaddy over SIDR (UD: the peer's QPN and Q_Key in
        ESTABLISHED), rdma_server/rdma_client (synchronous ids,
        rdma_create_ep and rdma_get_request), rdma_xserver/rdma_xclient
        (their default RC mode), rstream over rsockets (verified)."""
        ip = self.ips(fabric)["hca2"]
        s, c = self.pair(fabric, ("ucmatose", "-c", "4"),
                         ("ucmatose", "-s", ip, "-c", "4"))
        self.assertEqual((s[0], c[0]), (0, 0), s[1][-2000:] + c[1][-2000:])
        for out in (s[1], c[1]):
            self.assertIn("data transfers complete", out)
            self.assertIn("test complete", out)
        s, c = self.pair(fabric, ("udaddy", "-c", "3"),
                         ("udaddy", "-s", ip, "-c", "3"))
        self.assertEqual((s[0], c[0]), (0, 0), s[1][-2000:] + c[1][-2000:])
        for out in (s[1], c[1]):
            self.assertIn("test complete", out)
        s, c = self.pair(fabric, ("rdma_server", "-s", ip),
                         ("rdma_client", "-s", ip))
        self.assertEqual((s[0], c[0]), (0, 0), s[1][-2000:] + c[1][-2000:])
        self.assertIn("rdma_client: end 0", c[1])
        self.assertIn("rdma_server: end 0", s[1])
        # rdma_xserver/rdma_xclient in their RC mode (XRC: not yet).
        s, c = self.pair(fabric, ("rdma_xserver",),
                         ("rdma_xclient", "-s", ip))
        self.assertEqual((s[0], c[0]), (0, 0), s[1][-2000:] + c[1][-2000:])
        self.assertIn("rdma_xclient: end 0", c[1])
        opts = ("-S", "4096", "-C", "1", "-I", "50", "-T", "v")
        s, c = self.pair(fabric, ("rstream", "-b", ip, *opts),
                         ("rstream", "-s", ip, *opts))
        self.assertEqual((s[0], c[0]), (0, 0), s[1][-2000:] + c[1][-2000:])
        self.assertRegex(c[1], r"(?m)^custom\s+4k\s")

    def test_ucmatose_udaddy(self):
        """The other rdmacm-utils (check_utils) on ibemu-sm's subnet."""
        self.up(topology("two-switch.yaml"), "uc")
        self.check_utils("uc")
        self.down("uc")

    def cm_pair(self, fabric, mode, *client_args, port="7471"):
        ip = self.ips(fabric)["hca2"]
        srv = self.popen(fabric, "hca2", CMCLIENT, "server", ip, port, mode)
        self.wait_until("the server to listen",
                        lambda: "listening" in self.output(srv))
        cli = self.popen(fabric, "hca1", CMCLIENT, "client", ip, port,
                         *client_args)
        return srv, cli

    def test_connect_events(self):
        """Private data both ways, ESTABLISHED on both sides, DISCONNECTED
        on both; connection setup takes the same virtual time twice."""
        self.up(topology("two-switch.yaml"), "ce")
        times, outs = [], []
        for _ in range(2):
            srv, cli = self.cm_pair("ce", "accept")
            c = self.finish(cli)
            s = self.finish(srv)
            outs.append(c[1] + s[1])
            self.assertEqual((c[0], s[0]), (0, 0), c[1] + s[1])
            self.assertIn("server_event=RDMA_CM_EVENT_CONNECT_REQUEST "
                          "status=0 pd=cli-hello pd_len=56", s[1])
            self.assertIn("server_event=RDMA_CM_EVENT_ESTABLISHED", s[1])
            self.assertIn("server_event=RDMA_CM_EVENT_DISCONNECTED", s[1])
            self.assertIn("client_event=RDMA_CM_EVENT_ESTABLISHED status=0 "
                          "pd=srv-hello pd_len=196", c[1])
            self.assertIn("client_event=RDMA_CM_EVENT_DISCONNECTED", c[1])
            vt = int(re.search(r"connect_vt_ps=(\d+)", c[1]).group(1))
            print(f"connection setup: {vt / 1e6:.3f} us of virtual time")
            self.assertGreater(vt, 0)
            times.append(vt)
        if times[0] != times[1]:  # what the daemon saw, for the record
            with open(self.paths("ce")["log"]) as f:
                log = f.readlines()[-40:]
            self.fail(f"setup took {times[0]} then {times[1]} ps:\n" +
                      "".join(outs) + "".join(log))
        self.down("ce")

    def test_faults(self):
        """No listener on the port: REJECTED status 8, answered by the
        daemon (the process on that host listens elsewhere, or no process
        runs there); a consumer
        reject: REJECTED 28 with its private data; the peer killed with
        SIGKILL while connected: DISCONNECTED, told by the daemon's DREQ;
        a listener that never accepts: UNREACHABLE -ETIMEDOUT after the
        REQ's 15 retries, MRAed, in virtual time (no SM sweep between:
        a sweep period keeps to the wall clock)."""
        self.up(topology("two-switch.yaml"), "fa", "--sweep", "3600000")
        ips = self.ips("fa")
        other = self.popen("fa", "hca3", CMCLIENT, "server", ips["hca3"],
                           "7471", "accept")
        self.wait_until("the server to listen",
                        lambda: "listening" in self.output(other))
        before = self.xmit_pkts("fa", "hca3")
        p = self.popen("fa", "hca1", CMCLIENT, "client", ips["hca3"], "9")
        c = self.finish(p)
        self.assertIn("client_event=RDMA_CM_EVENT_REJECTED status=8", c[1])
        # hca3's process sent nothing: its port's one packet is the REJ
        # the daemon sent for it.
        self.assertEqual(self.xmit_pkts("fa", "hca3") - before, 1)
        other.kill()
        self.finish(other)
        # A host where no process runs: its kernel CM would answer, and
        # the daemon does for it (one REJ out of its port)
        before = self.xmit_pkts("fa", "hca4")
        p = self.popen("fa", "hca1", CMCLIENT, "client", ips["hca4"], "9")
        c = self.finish(p)
        self.assertIn("client_event=RDMA_CM_EVENT_REJECTED status=8", c[1])
        self.assertEqual(self.xmit_pkts("fa", "hca4") - before, 1)
        srv, cli = self.cm_pair("fa", "reject")
        c = self.finish(cli)
        s = self.finish(srv)
        self.assertIn("client_event=RDMA_CM_EVENT_REJECTED status=28 "
                      "pd=go away pd_len=148", c[1])
        srv, cli = self.cm_pair("fa", "hold", "wait", port="7472")
        self.wait_until("the connection",
                        lambda: "client_event=RDMA_CM_EVENT_ESTABLISHED"
                        in self.output(cli))
        self.kill_all(srv)
        c = self.finish(cli)
        self.finish(srv)
        self.assertIn("client_event=RDMA_CM_EVENT_DISCONNECTED", c[1])
        t0 = time.time()
        srv, cli = self.cm_pair("fa", "never", port="7473")
        c = self.finish(cli, timeout=120)
        wall = time.time() - t0
        self.kill_all(srv)
        s = self.finish(srv)
        self.assertIn("client_event=RDMA_CM_EVENT_UNREACHABLE status=-110",
                      c[1])
        self.assertEqual(s[1].count("CONNECT_REQUEST"), 1, s[1])
        vt = int(re.search(r"connect_vt_ps=(\d+)", c[1]).group(1))
        print(f"never accepted: UNREACHABLE after {vt / 1e12:.1f} s of "
              f"virtual time, {wall:.1f} s of wall time")
        # 2 x 2^(PLT-8) + 2^12 ms, then 15 retries MRAed 2^16 ms each.
        self.assertGreater(vt, (4096 + 15 * 65536) * 10**9)
        self.assertLess(vt, (4096 + 16 * 65536 + 2 * 4096) * 10**9)
        self.down("fa")

    def test_opensm(self):
        """rping, ucmatose and the others (check_utils) on a subnet OpenSM
        brought up (its SA answers the route queries; the CM needs nothing
        from the SM)."""
        self.up(topology("two-switch.yaml"), "os", "--sm", "none")
        sm, _ = self.resident_opensm("os", "hca4")
        try:
            ip = self.ips("os")["hca2"]
            s, c = self.pair("os", ("rping", "-s", "-a", ip, "-C", "5",
                                    "-S", "512", "-v"),
                             ("rping", "-c", "-a", ip, "-C", "5", "-S",
                              "512", "-v"))
            self.assertEqual((s[0], c[0]), (0, 0),
                             s[1][-2000:] + c[1][-2000:])
            self.assertEqual(c[1].count("ping data:"), 5)
            s, c = self.pair("os", ("ucmatose", "-c", "4"),
                             ("ucmatose", "-s", ip, "-c", "4"))
            self.assertEqual((s[0], c[0]), (0, 0),
                             s[1][-2000:] + c[1][-2000:])
            self.assertIn("test complete", c[1])
            self.check_utils("os")
        finally:
            self.stop_opensm(sm)
        self.down("os")

    def test_hostile_cm_input(self):
        """Malformed CM MADs and bogus CM_LISTEN calls from a process that
        holds two CM agents on one port (tests/hostile/cm_garbage.py):
        refused with their errnos, the daemon unharmed and its log
        bounded; a connection works afterwards."""
        self.up(topology("two-switch.yaml"), "hc")
        log = self.paths("hc")["log"]
        before = os.path.getsize(log)
        sock = os.path.join(self.paths("hc")["dir"], "sess.sock")
        for seed in (1, 2, 3):
            p = subprocess.run(
                [sys.executable, os.path.join(SRC, "tests", "hostile",
                                              "cm_garbage.py"),
                 sock, "3000", str(seed)],
                capture_output=True, text=True, timeout=120,
                env=dict(self.env, IBEMU_SOURCE_DIR=SRC))
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        time.sleep(0.5)
        self.assertLess(os.path.getsize(log) - before, 32 * 1024)
        with open(log) as f:
            self.assertIn("sent a CM MAD", f.read())
        self.ibemu("status", "--fabric", "hc", check=0)
        srv, cli = self.cm_pair("hc", "accept")
        c = self.finish(cli)
        s = self.finish(srv)
        self.assertEqual((c[0], s[0]), (0, 0), c[1] + s[1])
        self.assertIn("client_event=RDMA_CM_EVENT_DISCONNECTED", c[1])
        self.down("hc")

    def test_processes_share_a_port(self):
        """Three servers on hca2 and three clients on hca1 at once, each a
        process with its own CM on the one port: REQs reach the process
        listening on their port, the rest the process whose Comm ID they
        name; a second listener on a port taken is EADDRINUSE."""
        self.up(topology("two-switch.yaml"), "sp")
        ip = self.ips("sp")["hca2"]
        ports = ("7471", "7472", "7473")
        srvs = [self.popen("sp", "hca2", CMCLIENT, "server", ip, port,
                           "accept") for port in ports]
        for srv in srvs:
            self.wait_until("the servers to listen",
                            lambda: "listening" in self.output(srv))
        dup = self.popen("sp", "hca2", CMCLIENT, "server", ip, "7471",
                         "accept")
        d = self.finish(dup)
        self.assertIn("FAIL: rdma_listen: Address already in use", d[1])
        clis = [self.popen("sp", "hca1", CMCLIENT, "client", ip, port)
                for port in ports]
        for cli, srv in zip(clis, srvs):
            c = self.finish(cli)
            s = self.finish(srv)
            self.assertEqual((c[0], s[0]), (0, 0), c[1] + s[1])
            self.assertIn("client_event=RDMA_CM_EVENT_ESTABLISHED", c[1])
            self.assertIn("client_event=RDMA_CM_EVENT_DISCONNECTED", c[1])
            self.assertEqual(s[1].count("CONNECT_REQUEST"), 1, s[1])
        self.down("sp")

    def test_device_removal(self):
        """The fabric goes down under a listener: DEVICE_REMOVAL."""
        self.up(topology("two-switch.yaml"), "dr")
        ip = self.ips("dr")["hca2"]
        srv = self.popen("dr", "hca2", CMCLIENT, "server", ip, "7471",
                         "accept")
        self.wait_until("the server to listen",
                        lambda: "listening" in self.output(srv))
        self.down("dr", clients_gone=False)
        s = self.finish(srv)
        self.assertIn("server_event=RDMA_CM_EVENT_DEVICE_REMOVAL", s[1])

    def kill_all(self, p):
        """SIGKILL to 'ibemu exec' and the program it runs."""
        kids = subprocess.run(["pgrep", "-P", str(p.pid)],
                              capture_output=True, text=True).stdout.split()
        for pid in [p.pid] + [int(k) for k in kids]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

if __name__ == "__main__":
    main()
