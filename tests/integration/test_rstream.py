# SPDX-License-Identifier: MIT
"""rsockets (rdmacm/rsocket.c): Debian's unmodified rstream, a server on one
emulated host and a client on another across the switches, in each of its
modes (non-blocking, blocking, rpoll), with its data verified; the bytes
cross the fabric (the inter-switch ports' counters grow by at least what was
sent); a client to a port nobody listens on fails with 'connection refused'
at once (the CM's REJ) and leaves the daemon unharmed."""

import re
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

    def figures(self, out):
        """rstream's row: (bytes, usec/xfer)."""
        m = re.search(r"^custom\s+(\S+)\s+\d+\s+\d+\s+\S+\s+\S+s\s+\S+"
                      r"\s+([\d.]+)$", out, re.M)
        self.assertIsNotNone(m, out)
        return m.group(1), float(m.group(2))

    def test_modes(self):
        fabric = "rst"
        self.up(topology("two-switch.yaml"), fabric)
        # rstream's three ways of waiting: non-blocking calls in a loop
        # (its default), blocking calls, and rpoll; a ping-pong of 64 B,
        # verified, in virtual time (one way, as rstream prints it)
        lat = {}
        for i, mode in enumerate(("n", "b", "a")):
            with self.subTest(mode=mode):
                out = self.pair(fabric, 7470 + i, "-S", "64", "-C", "1",
                                "-I", "200", "-T", "v", "-T", mode)
                size, lat[mode] = self.figures(out)
                self.assertEqual(size, "64")
                # a fabric's one-way latency, not the host's
                self.assertGreater(lat[mode], 0.3)
                self.assertLess(lat[mode], 5.0)
        # the same virtual time on a second run, where each side waits in
        # ibv_poll_cq (a blocking wait goes through the completion
        # channel, and rdma_get_cm_event's waits during setup are seen
        # only at the grace period: not deterministic, rdmacm/README.md)
        out = self.pair(fabric, 7475, "-S", "64", "-C", "1", "-I", "200",
                        "-T", "v", "-T", "n")
        self.assertEqual(self.figures(out)[1], lat["n"])
        # a stream of 64 KiB transfers, verified, crosses the spines: the
        # inter-switch ports carry at least the bytes sent
        before = self.inter_switch_bytes(fabric)
        out = self.pair(fabric, 7476, "-S", "65536", "-C", "200", "-T", "v",
                        "-T", "b")
        self.assertEqual(self.figures(out)[0], "64k")
        moved = (self.inter_switch_bytes(fabric) - before) * 4
        self.assertGreaterEqual(moved, 65536 * 200)

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
