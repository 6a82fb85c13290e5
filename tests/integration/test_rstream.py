# SPDX-License-Identifier: MIT
"""rsockets (rdmacm/rsocket.c): Debian's unmodified rstream, a server on one
emulated host and a client on another across the switches, in each of its
modes (non-blocking, blocking, rpoll), with its data verified; the bytes
cross the fabric (the inter-switch ports' counters grow by at least what was
sent); a client to a port nobody listens on fails with 'connection refused'
at once (the CM's REJ) and leaves the daemon unharmed."""

import os
import subprocess
import time

from harness import IBEMU, IbemuTestCase, OpenSMRunner, main, topology

SERVER, CLIENT = "hca1", "hca3"
SERVER_IP = "127.10.0.1"  # topologies/README.md: 127.10.0.0 + 16*0 + 1


class RstreamTest(OpenSMRunner, IbemuTestCase):
    def exec_argv(self, fabric, host, *argv):
        return [IBEMU, "exec", "--fabric", fabric, "--host", host,
                "--", *argv]

    def inter_switch_bytes(self, fabric):
        rows = self.json_of("counters", "--fabric", fabric)["counters"]
        return sum(r["xmit_data"] for r in rows
                   if r["node"] == "sw1" and r["port"] in (7, 8))

    def pair(self, fabric, port, *opts):
        """rstream's server and client with the same options; both must
        end with status 0. Returns the client's output."""
        server = subprocess.Popen(
            self.exec_argv(fabric, SERVER, "rstream", "-b", SERVER_IP, "-p",
                           str(port), *opts),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=self.tool_env)
        try:
            time.sleep(0.5)  # the server listens before the client starts
            client = subprocess.run(
                self.exec_argv(fabric, CLIENT, "rstream", "-s", SERVER_IP,
                               "-p", str(port), *opts),
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                env=self.tool_env, timeout=120)
            sout, _ = server.communicate(timeout=60)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
        self.assertEqual(client.returncode, 0, client.stdout)
        self.assertEqual(server.returncode, 0, sout)
        return client.stdout

    def test_modes(self):
        fabric = "rst"
        self.up(topology("two-switch.yaml"), fabric)
        cases = [("nonblocking", ()), ("blocking", ("-T", "b")),
                 ("rpoll", ("-T", "a"))]
        for i, (name, mode) in enumerate(cases):
            with self.subTest(mode=name):
                before = self.inter_switch_bytes(fabric)
                # 1000 transfers of 64 KiB each way, verified
                out = self.pair(fabric, 7470 + i, "-S", "65536", "-C",
                                "1000", "-T", "v", *mode)
                self.assertIn("64k", out)
                moved = self.inter_switch_bytes(fabric) - before
                # PortXmitData counts 4-byte words; the data went one way
                self.assertGreaterEqual(moved * 4, 65536 * 1000)
        # the whole size sweep (latency and bandwidth connections)
        out = self.pair(fabric, 7479, "-T", "v")
        self.assertIn("lat", out)
        self.assertIn("bw", out)

    def test_refused(self):
        fabric = "rsr"
        self.up(topology("two-switch.yaml"), fabric)
        p = subprocess.run(
            self.exec_argv(fabric, CLIENT, "rstream", "-s", SERVER_IP, "-p",
                           "7999", "-T", "b"),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=self.tool_env, timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("Connection refused", p.stdout)
        self.ibemu("status", "--fabric", fabric)


if __name__ == "__main__":
    main()
