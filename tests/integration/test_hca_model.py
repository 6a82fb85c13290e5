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
daemons give the same figures; 'hca_tuning:' moves them by exactly what
it changes. A preset name that does not exist is refused by 'ibemu up' with
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
{extra}hcas:
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

    def fabric(self, model, extra=""):
        path = os.path.join(self.dir, f"{model}{len(extra)}.yaml")
        with open(path, "w") as f:
            f.write(FABRIC.format(model=model, extra=extra))
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


class NodesShowModelTest(HcaModelCase):
    def test_nodes_name_each_hcas_model(self):
        """'ibemu nodes' names each HCA's host interface: the preset
        ('auto' resolved by link speed), '+tuned' under hca_tuning:, a
        wire HCA as wire; null for a switch."""
        for model, extra, want in (
                ("auto", "", "connectx-5"),
                ("connectx-6", "hca_tuning: {dma_read: 600ns}\n",
                 "connectx-6+tuned"),
                ("wire", "", "wire")):
            name = f"hmnodes{len(want)}"
            self.up(self.fabric(model, extra), name)
            nodes = self.json_of("nodes", "--fabric", name)["nodes"]
            self.down(name)
            self.assertEqual({n["name"]: n["hca_model"] for n in nodes},
                             {"hca1": want, "hca2": want}, model)


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

    def latencies(self, model, name, extra=""):
        self.up(self.fabric(model, extra), name)
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

    def test_tuning_through_perftest(self):
        """hca_tuning: reaches the daemon's HCAs: a DMA write 300 ns
        slower (dma_write 400ns against the preset's 100) makes every
        one-way latency perftest prints exactly 0.3 us longer (an inline
        WRITE or SEND crosses one DMA write: its data and CQE), to
        perftest's TSC tick."""
        from test_vtime import cpu_mhz
        tick_us = 1 / cpu_mhz()
        plain = self.latencies("connectx-4", "hmtune0")
        tuned = self.latencies("connectx-4", "hmtune1",
                               "hca_tuning: {dma_write: 400ns}\n")
        print(f"\nconnectx-4: {plain}; with dma_write 400ns: {tuned}")
        for a, b, what in zip(plain, tuned, ("ib_send_lat",
                                             "ib_write_lat")):
            self.assertLessEqual(abs(b - a - 0.3), tick_us + 1e-9,
                                 f"{what}: {a} then {b}")


# ibv_devinfo -v of the real adapters (docs/hca-model.md, "Device
# limits"): ConnectX-5, open-mpi/ompi#6137; ConnectX-6, openucx/ucx#8229
# and #10317. A wire HCA keeps ibemu's own (proto/verbs_proto.h).
MLX5_LIMITS = {
    "max_qp": "262144", "max_qp_wr": "32768", "max_sge": "30",
    "max_sge_rd": "30", "max_cq": "16777216", "max_cqe": "4194303",
    "max_mr": "16777216", "max_pd": "16777216", "max_qp_rd_atom": "16",
    "max_res_rd_atom": "4194304", "max_qp_init_rd_atom": "16",
    "atomic_cap": "ATOMIC_HCA (1)", "max_srq": "8388608",
    "max_srq_wr": "32767", "max_ah": "2147483647",
}
WIRE_LIMITS = {
    "max_qp": "4096", "max_qp_wr": "16384", "max_sge": "30",
    "max_sge_rd": "30", "max_cq": "4096", "max_cqe": "65535",
    "max_mr": "65536", "max_pd": "4096", "max_qp_rd_atom": "16",
    "max_res_rd_atom": "65536", "max_qp_init_rd_atom": "16",
    "atomic_cap": "ATOMIC_HCA (1)", "max_srq": "1024",
    "max_srq_wr": "16384", "max_ah": "65536",
}


@unittest.skipUnless(shutil.which("ibv_devinfo") and
                     shutil.which("ibv_rc_pingpong"),
                     "rdma-core's tools are not installed (./ibemu.sh deps)")
class DeviceLimitsTest(HcaModelCase):
    """ibv_query_device reports the limits of the HCA's hca_model, as
    Debian's ibv_devinfo -v prints them, and the verbs calls hold to
    them: a QP of 20,000 receive WRs is refused on a wire HCA (16,384)
    and made on a ConnectX one (32,768)."""

    def setUp(self):
        super().setUp()
        from harness import tool_env
        for key in ("IBEMU_SESSION_SOCKET", "IBEMU_HOST",
                    "IBEMU_VTIME_START_PS"):
            self.env.pop(key, None)
        self.tool_env = tool_env(self.env)
        self.port = 20000 + (os.getpid() + 11) % 20000

    def exec(self, fabric, *cmd, **kw):
        from harness import IBEMU
        return [IBEMU, "exec", "--fabric", fabric, "--host", "hca1",
                "--", *cmd]

    def devinfo(self, fabric):
        p = subprocess.run(self.exec(fabric, "ibv_devinfo", "-v"),
                           capture_output=True, text=True,
                           env=self.tool_env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        fields = {}
        for line in p.stdout.splitlines():
            m = re.match(r"\s*(\w+):\s+(\S.*?)\s*$", line)
            if m and m.group(1) not in fields:
                fields[m.group(1)] = m.group(2)
        return fields

    def big_rq_made(self, fabric):
        """Whether ibv_rc_pingpong -r 20000 made its QP (it listens for
        its peer once it has)."""
        from test_vtime import listening
        import time
        srv = subprocess.Popen(
            self.exec(fabric, "ibv_rc_pingpong", "-p", str(self.port),
                      "-r", "20000"), stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, env=self.tool_env)
        try:
            end = time.time() + 60
            while (srv.poll() is None and not listening(self.port) and
                   time.time() < end):
                time.sleep(0.05)
            made = srv.poll() is None and listening(self.port)
        finally:
            if srv.poll() is None:
                srv.kill()
            out, _ = srv.communicate()
        return made, out

    def test_limits_per_preset(self):
        for model, part, lim in (
                ("wire", "60161", WIRE_LIMITS),
                ("connectx-4", "4115", MLX5_LIMITS),
                ("connectx-5", "4119", MLX5_LIMITS),
                ("connectx-6", "4123", MLX5_LIMITS),
                ("connectx-7", "4129", MLX5_LIMITS),
                ("auto", "4119", MLX5_LIMITS)):
            with self.subTest(model=model):
                name = "hml" + model.replace("connectx-", "cx")
                self.up(self.fabric(model), name)
                got = self.devinfo(name)
                self.assertEqual(got.get("vendor_part_id"), part, got)
                self.assertEqual({k: got.get(k) for k in lim}, lim)
                made, out = self.big_rq_made(name)
                self.assertEqual(made, model != "wire", out)
                if model == "wire":
                    self.assertIn("Couldn't create QP", out)
                self.down(name)


if __name__ == "__main__":
    main()
