# SPDX-License-Identifier: MIT
"""Debian's libfabric (1.17) over ibemu: its verbs provider finds the HCA
through ibemu's libibverbs and librdmacm and the IPoIB interface that
getifaddrs() lists under 'ibemu exec' (devnode/ifaddrs.c), so fi_info
offers MSG, DGRAM and RDM (ofi_rxm over MSG) endpoints; fi_pingpong runs
between two emulated hosts across the switches over DGRAM, and prints the
fabric's virtual latency, the same on every run; MSG endpoints connect
through ibemu's rdma_cm."""

import re
import subprocess
import time

from harness import IBEMU, IbemuTestCase, OpenSMRunner, main, topology

SERVER, CLIENT = "hca1", "hca3"
SERVER_IP = "127.10.0.1"  # topologies/README.md: 127.10.0.0 + 16*0 + 1


class LibfabricTest(OpenSMRunner, IbemuTestCase):
    def exec_argv(self, fabric, host, *argv):
        return [IBEMU, "exec", "--fabric", fabric, "--host", host, "--",
                *argv]

    def fi_info(self, fabric, prov):
        p = subprocess.run(self.exec_argv(fabric, SERVER, "fi_info", "-p",
                                          prov),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, env=self.tool_env, timeout=60)
        return p.stdout

    def pingpong(self, fabric, port, *opts, prov="verbs", env=None):
        """fi_pingpong's server and client; both end with status 0. Returns
        the client's figures: bytes -> usec/xfer."""
        server = subprocess.Popen(
            self.exec_argv(fabric, SERVER, "fi_pingpong", "-p", prov,
                           "-B", str(port), *opts),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=env or self.tool_env)
        try:
            time.sleep(0.5)
            client = subprocess.run(
                self.exec_argv(fabric, CLIENT, "fi_pingpong", "-p", prov,
                               "-P", str(port), *opts, SERVER_IP),
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                env=env or self.tool_env, timeout=120)
            sout, _ = server.communicate(timeout=60)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
        self.assertEqual(client.returncode, 0, client.stdout)
        self.assertEqual(server.returncode, 0, sout)
        rows = re.findall(r"^(\d+)\s+(\d+)\s+=(\d+)\s+\S+\s+\S+\s+\S+\s+"
                          r"([\d.]+)", client.stdout, re.M)
        self.assertTrue(rows, client.stdout)
        for size, sent, acked, _ in rows:
            self.assertEqual(sent, acked, client.stdout)
        return {int(r[0]): float(r[3]) for r in rows}

    def assert_virtual_latency(self, runs, low, high, fabric=None):
        """Two runs print the same figure, a fabric's one-way latency.
        Under a sanitizer's preloaded runtime libfabric's own clock reads
        reach vtime through the sanitizer's interceptor and turn virtual
        (vtime/README): its timers then run in virtual time, and what the
        runs print depends on them, so that stage checks the transfers
        alone (every message sent was acknowledged: pingpong())."""
        if "LD_PRELOAD" in self.tool_env:
            return
        why = ""
        if runs[0] != runs[1] and fabric:
            # A rare stall of about 6.1 s of virtual time was seen in CI
            # and not reproduced since: say what the daemon saw.
            with open(self.paths(fabric)["log"]) as f:
                why = "daemon log:\n" + "".join(f.readlines()[-40:])
        self.assertEqual(runs[0], runs[1], why)
        self.assertGreater(runs[0][64], low)
        self.assertLess(runs[0][64], high)

    def test_providers_and_dgram(self):
        fabric = "lfi"
        self.up(topology("two-switch.yaml"), fabric)
        out = self.fi_info(fabric, "verbs")
        self.assertIn("FI_EP_MSG", out)
        self.assertIn("FI_EP_DGRAM", out)
        self.assertIn("domain: hca1", out)
        # ofi_rxm needs a MSG domain with an address: the IPoIB interface
        out = self.fi_info(fabric, "verbs;ofi_rxm")
        self.assertIn("FI_PROTO_RXM", out)
        # DGRAM (UD) across the spines, in virtual time, twice the same
        runs = [self.pingpong(fabric, 47600 + i, "-e", "dgram", "-I",
                              "200", "-S", "64", "-c") for i in range(2)]
        self.assert_virtual_latency(runs, 0.3, 5.0, fabric)

    def test_msg(self):
        """MSG endpoints connect through rdma_cm (REQ/REP/RTU), with the
        provider's RDMA_MAX_RESP_RES and RDMA_MAX_INIT_DEPTH taken as the
        device's maxima."""
        fabric = "lfm"
        self.up(topology("two-switch.yaml"), fabric)
        runs = [self.pingpong(fabric, 47610 + i, "-e", "msg", "-I", "200",
                              "-S", "64", "-c") for i in range(2)]
        self.assert_virtual_latency(runs, 0.3, 5.0, fabric)

    def test_rdm(self):
        """RDM endpoints (ofi_rxm over MSG) connect on the first send,
        while both sides spin in fi_cq_read: a connection request queued
        for a process keeps it running under the time rule (rdmacm/
        channel.c), so the fabric does not leap to the REQ's retry timer
        (before, each run printed over 150 ms a round trip). The time
        includes the connection's setup, spread over the iterations."""
        fabric = "lfr"
        self.up(topology("two-switch.yaml"), fabric)
        env = None
        if "LD_PRELOAD" in self.tool_env:
            # Under a sanitizer's runtime its interceptor is what calls
            # the clock, so libfabric's reads turn virtual too (vtime/
            # README) and ofi_rxm's wait of 10 ms between two looks at
            # its connection events never ends (with --wall-clock it
            # passes): it looks every time.
            env = dict(self.tool_env, FI_OFI_RXM_CM_PROGRESS_INTERVAL="0")
        runs = [self.pingpong(fabric, 47620 + i, "-e", "rdm", "-I", "500",
                              "-S", "64", "-c", prov="verbs;ofi_rxm",
                              env=env)
                for i in range(2)]
        self.assert_virtual_latency(runs, 0.3, 10.0, fabric)


if __name__ == "__main__":
    main()
