# SPDX-License-Identifier: MIT
"""ibemu-sm with the engines that break credit loops on virtual lanes
(routing/dfsssp.c, routing/dor.c): on the shipped torus and dragonfly it
brings the fabric up, deadlock-free on its layers' VLs; SL2VL (SL i to VL
i) and VL arbitration read back with infiniband-diags' smpquery; a uniform
traffic study whose packets take their path's SL (--sl-dump, then
'ibemu traffic --sl-map') completes, where the same study on min-hop's
routes deadlocks."""

import os
import re
import subprocess

from harness import IBEMU, IbemuTestCase, main, tool_env, topology

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
SM = os.path.join(BUILD, "bin", "ibemu-sm")


class SmVlTest(IbemuTestCase):
    def setUp(self):
        super().setUp()
        for key in ("IBEMU_SESSION_SOCKET", "IBEMU_HOST"):
            self.env.pop(key, None)
        self.tool_env = tool_env(self.env)

    def run_tool(self, fabric, host, *argv):
        p = subprocess.run(
            [IBEMU, "exec", "--fabric", fabric, "--host", host, "--", *argv],
            capture_output=True, text=True, env=self.tool_env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return p.stdout

    def bring_up(self, name, fabric, routing):
        """The fabric up under ibemu-sm --routing 'routing'; its report
        and the path of the SL dump."""
        self.up(topology(name + ".yaml"), fabric, "--sm", "none")
        hca = self.json_of("nodes", "--type", "hca", "--fabric",
                           fabric)["nodes"][0]["name"]
        dump = os.path.join(self.rundir, fabric + "-sl.txt")
        out = self.run_tool(fabric, hca, SM, "--routing", routing,
                            "--quality", "--sl-dump", dump)
        self.assertIn("ibemu-sm: SUBNET UP", out)
        self.assertIn(", 0 pairs unrouted", out)
        return out, dump, hca

    def study(self, fabric, *extra):
        return self.ibemu("traffic", "uniform", "--duration", "50us",
                          "--fabric", fabric, *extra)

    def test_layers_on_torus_and_dragonfly(self):
        for name in ("torus-2d-4x4", "dragonfly-small"):
            for routing in ("dfsssp", "dor"):
                with self.subTest(fabric=name, routing=routing):
                    out, dump, hca = self.bring_up(name, "vl", routing)
                    m = re.search(r"deadlock-free on (\d+) VLs", out)
                    self.assertIsNotNone(m, out)
                    layers = int(m.group(1))
                    # The fabrics run 4 data VLs (defaults: vls).
                    self.assertTrue(2 <= layers <= 4, out)
                    ports = self.json_of("ports", "--fabric", "vl")["ports"]
                    self.assertEqual(
                        [p for p in ports if p.get("peer_node") and
                         p["state"] != "Active"], [])
                    # Some paths take SLs past 0, and no more than layers.
                    with open(dump) as f:
                        sls = [int(l.split()[2]) for l in f
                               if not l.startswith("#")]
                    self.assertTrue(sls)
                    self.assertTrue(all(0 < s < layers for s in sls))
                    # SL2VL on a switch (LID 2: the SM's HCA is LID 1,
                    # its switch is found next) from two input ports, and
                    # on the HCA port: SL i on VL i up to 4 VLs, else 0.
                    want = "| 0| 1| 2| 3| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0|"
                    sw = self.run_tool("vl", hca, "smpquery", "sl2vl", "2",
                                       "1")
                    self.assertIn("in  0, out  1: " + want, sw)
                    self.assertIn("in  1, out  1: " + want, sw)
                    ca = self.run_tool("vl", hca, "smpquery", "sl2vl", "1")
                    self.assertIn(want, ca)
                    arb = self.run_tool("vl", hca, "smpquery", "vlarb", "2",
                                        "1")
                    low = arb.split("# High")[0]
                    self.assertIn("VL    : |0x0 |0x1 |0x2 |0x3 |0x0 ", low)
                    self.assertIn("WEIGHT: |0x40|0x40|0x40|0x40|0x0 ", low)
                    # The study with each path's SL completes.
                    p = self.study("vl", "--sl-map", dump)
                    self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                    self.assertIn("AGGREGATE GBPS", p.stdout)
                    self.down("vl")

    def test_minhop_deadlocks_where_dfsssp_does_not(self):
        for name in ("torus-2d-4x4", "dragonfly-small"):
            with self.subTest(fabric=name):
                out, dump, _ = self.bring_up(name, "mh", "minhop")
                self.assertIn("credit loops on one VL", out)
                p = self.study("mh", "--sl-map", dump)
                self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
                self.assertIn("the fabric deadlocked", p.stderr)
                self.down("mh")
                # The same fabric, dfsssp's routes but every packet on
                # SL 0 (no --sl-map): its layers share one VL and loop.
                out, dump, _ = self.bring_up(name, "mh", "dfsssp")
                p = self.study("mh")
                self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
                self.assertIn("the fabric deadlocked", p.stderr)
                self.down("mh")

    def test_ibemu_up_publishes_the_sls(self):
        """'ibemu up --routing dfsssp': the resident ibemu-sm publishes
        each path's SL (sl.map in the fabric's directory), which a study
        takes by default, as applications take PathRecords' SLs: it
        completes; forced onto SL 0 (--sl 0) the layers share one VL and
        the same study deadlocks."""
        self.up(topology("torus-2d-4x4.yaml"), "pub", "--routing", "dfsssp")
        with open(os.path.join(self.rundir, "pub", "sl.map")) as f:
            self.assertIn("routing dfsssp, 3 layers", f.readline())
        p = self.study("pub")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        p = self.study("pub", "--sl", "0")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("the fabric deadlocked", p.stderr)
        self.down("pub")

    def test_sl_map_errors(self):
        self.up(topology("two-switch.yaml"), "se")
        p = self.ibemu("traffic", "uniform", "--fabric", "se", "--sl-map",
                       "relative.txt")
        self.assertEqual(p.returncode, 2)
        self.assertIn("give an absolute path", p.stderr)
        bad = os.path.join(self.rundir, "bad-sl.txt")
        with open(bad, "w") as f:
            f.write("# comment\n0x11 0x12 16\n")
        p = self.ibemu("traffic", "uniform", "--fabric", "se", "--sl-map",
                       bad)
        self.assertEqual(p.returncode, 2)
        self.assertIn("bad-sl.txt:2: expected 'SLID DLID SL'", p.stderr)
        self.down("se")


if __name__ == "__main__":
    main()
