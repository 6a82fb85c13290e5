# SPDX-License-Identifier: MIT
"""The HCA's host interface (hca/host_model.c, docs/hca-model.md) through
the real daemon and unmodified perftest (Debian's).

Two HCAs cabled back to back on 4x EDR, 'hca_model: connectx-4': the
one-way latency ib_send_lat and ib_write_lat print is bench-fidelity's
(the transport driven directly, the same model) plus at most the loop's
other calls (verbs/cost.h: a receive posted and a completion polled each
round, 0.2 us at most), and more than 'hca_model: wire' gives on the same
fabric by the receiver's host interface (its pipeline, the DMA write of
the data, the CQE: 0.2 us; the sender's, 0.3 us, is wire's doorbell).
perftest sends inline there because the preset's HCA reports its
ConnectX device ID (4115), as it does on the real adapter. Two fresh
daemons give the same figures. A preset name that does not exist is refused by 'ibemu up' with
its file, line and column."""

import os
import re
import shutil
import subprocess
import tempfile
import unittest

from harness import IbemuTestCase, main

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
FIDELITY = os.path.join(BUILD, "bench", "bench-fidelity")

FABRIC = """name: b2b
defaults: {{width: 4x, speed: EDR, cable_length: 50cm, hca_model: {model}}}
hcas:
  - {{name: hca1}}
  - {{name: hca2}}
links:
  - [hca1:1, hca2:1]
"""


class HcaModelCase(IbemuTestCase):
    def setUp(self):
        super().setUp()
        self.dir = tempfile.mkdtemp(prefix="ibemu-hcamodel-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def fabric(self, model):
        path = os.path.join(self.dir, f"{model}.yaml")
        with open(path, "w") as f:
            f.write(FABRIC.format(model=model))
        return path


class BadPresetTest(HcaModelCase):
    def test_unknown_preset_refused_where_it_is(self):
        path = self.fabric("connectx-9")
        p = self.ibemu("up", path, "--name", "hmbad")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn(f"{path}:2:", p.stderr)
        self.assertIn("bad hca_model 'connectx-9', expected wire, auto, "
                      "connectx-4, connectx-5, connectx-6 or connectx-7",
                      p.stderr)


@unittest.skipUnless(shutil.which("ib_send_lat"),
                     "perftest is not installed (./ibemu.sh deps)")
class PresetLatencyTest(HcaModelCase):
    def setUp(self):
        super().setUp()
        from harness import tool_env
        for key in ("IBEMU_SESSION_SOCKET", "IBEMU_HOST",
                    "IBEMU_VTIME_START_PS"):
            self.env.pop(key, None)
        self.tool_env = tool_env(self.env)
        self.port = 20000 + (os.getpid() + 7) % 20000

    def perftest(self, fabric, tool, *args):
        """'tool' on hca1 (server) and hca2 (client): the client's last
        line (perftest's --output figure)."""
        from test_vtime import listening
        import time
        cmd = [tool, "-p", str(self.port), *args]
        srv = subprocess.Popen(
            [self.ibemu_bin(), "exec", "--fabric", fabric, "--host",
             "hca1", "--", *cmd], stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, env=self.tool_env)
        try:
            end = time.time() + 30
            while not listening(self.port) and time.time() < end:
                time.sleep(0.02)
            cli = subprocess.run(
                [self.ibemu_bin(), "exec", "--fabric", fabric, "--host",
                 "hca2", "--", *cmd, "127.0.0.1"], capture_output=True,
                text=True, env=self.tool_env, timeout=300)
            out, _ = srv.communicate(timeout=60)
        finally:
            if srv.poll() is None:
                srv.kill()
                srv.communicate()
        self.assertEqual(cli.returncode, 0, cli.stdout + cli.stderr)
        self.assertEqual(srv.returncode, 0, out)
        return float(cli.stdout.strip().splitlines()[-1])

    def ibemu_bin(self):
        from harness import IBEMU
        return IBEMU

    def fidelity_32(self):
        """bench-fidelity's SEND_LAT and WRITE_LAT at 32 bytes (us)."""
        p = subprocess.run([FIDELITY, "--quick", "--preset", "connectx-4"],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        row = re.search(r"^ +32 +([\d.]+) +([\d.]+) +([\d.]+) ", p.stdout,
                        re.M)  # SEND_LAT, UD_LAT, WRITE_LAT
        return float(row.group(1)), float(row.group(3))

    def latencies(self, model, name):
        self.up(self.fabric(model), name)
        # perftest sends 32 bytes inline on a device it knows (a
        # preset's HCA reports its ConnectX device ID), as bench-fidelity
        # and the published figures do; on ibemu's own device not.
        out = (self.perftest(name, "ib_send_lat", "-s", "32",
                             "--output=latency"),
               self.perftest(name, "ib_write_lat", "-s", "32",
                             "--output=latency"))
        self.down(name)
        return out

    def test_connectx4_through_perftest(self):
        from test_vtime import cpu_mhz
        send, write = self.fidelity_32()
        cx_send, cx_write = self.latencies("connectx-4", "hmcx4")
        again = self.latencies("connectx-4", "hmcx4b")
        # The same on a fresh daemon, to perftest's TSC tick.
        tick_us = 1 / cpu_mhz()
        for a, b in zip((cx_send, cx_write), again):
            self.assertLessEqual(abs(a - b), tick_us + 1e-9,
                                 f"{(cx_send, cx_write)} vs {again}")
        wire_send, wire_write = self.latencies("wire", "hmwire")
        for got, model, what in ((cx_send, send, "ib_send_lat"),
                                 (cx_write, write, "ib_write_lat")):
            self.assertGreaterEqual(got, model - 1e-6,
                                    f"{what}: {got}, model {model}")
            self.assertLessEqual(got, model + 0.2 + 1e-6,
                                 f"{what}: {got}, model {model}")
        print(f"\nconnectx-4: ib_send_lat {cx_send}, ib_write_lat "
              f"{cx_write}; model {send}, {write}; wire: {wire_send}, "
              f"{wire_write}")
        self.assertGreater(cx_send - wire_send, 0.15,
                           f"connectx-4 {cx_send} vs wire {wire_send}")
        self.assertGreater(cx_write - wire_write, 0.15,
                           f"connectx-4 {cx_write} vs wire {wire_write}")


if __name__ == "__main__":
    main()
