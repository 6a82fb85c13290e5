# SPDX-License-Identifier: MIT
"""Traffic studies through the real CLI and daemon: the report, the
counters they leave, determinism across daemons, a daemon that keeps
answering while a study runs, fair shares and roles, and plots."""

import json
import os
import shutil
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET

from harness import IBEMU, IbemuTestCase, main, topology

FT = topology("fat-tree-2l-36.yaml")
SVG = "{http://www.w3.org/2000/svg}"
# The payload rate of a 4x EDR link (100 Gb/s of data) for a study's
# 4096-byte packets: each also carries LRH, BTH, ICRC and VCRC (26 bytes).
EDR_PAYLOAD_GBPS = 100.0 * 4096 / (4096 + 26)


def series(root, panel):
    """The plotted lines of one panel: a list of (role, flow)."""
    g = [e for e in root.iter(SVG + "g") if e.get("class") == panel]
    assert len(g) == 1, panel
    return [(e.get("data-role"), e.get("data-flow"))
            for e in g[0].iter(SVG + "polyline")]


class TrafficTest(IbemuTestCase):
    def test_incast_report_and_counters(self):
        # Without congestion control, which 'ibemu up' enables by default
        # and which throttles the incast below a busy hotspot link
        # (98.4% with ibemu's default policy): this is the report and the
        # counters of congestion left alone.
        self.up(FT, "incast", "--cc", "off")
        # The SM's sweep crossed the hotspot's link (hca01 runs it).
        self.ibemu("counters", "--reset", check=0)
        p = self.ibemu("traffic", "incast", "--duration", "20us", "--top", "0",
                       "--json", check=0)
        report = json.loads(p.stdout)
        summary = report["summary"]
        self.assertEqual(summary["pattern"], "incast")
        self.assertEqual(summary["hosts"], 36)
        self.assertEqual(len(report["flows"]), 35)
        self.assertTrue(all(f["dst"] == "hca01:1" for f in report["flows"]))
        # Every message generated was delivered: bytes are whole messages.
        self.assertEqual(summary["bytes"], summary["msgs"] * 65536)
        # The hotspot's link is the busiest, and nearly always busy.
        busiest = report["links"][0]
        self.assertEqual(busiest["port"], "leaf01:1")
        self.assertGreater(busiest["util_pct"], 99.0)
        # The congestion shows as PortXmitWait, never as discards.
        counters = self.json_of("counters")["counters"]
        by_port = {(c["node"], c["port"]): c for c in counters}
        self.assertGreater(by_port[("spine01", 1)]["xmit_wait"], 0)
        self.assertEqual(sum(c["xmit_discards"] for c in counters), 0)
        self.assertEqual(sum(c["rcv_switch_relay_errors"] for c in counters), 0)
        # PortXmitData counts 4-byte words: the hotspot received every byte
        # plus 24 bytes of LRH, BTH and ICRC per packet.
        hot = by_port[("leaf01", 1)]
        self.assertEqual(hot["xmit_data"] * 4,
                         summary["bytes"] + summary["pkts"] * 24)
        self.assertEqual(hot["xmit_pkts"], summary["pkts"])
        # A second study gives rates over the interval since the last look.
        self.ibemu("traffic", "shift", "--duration", "10us", check=0)
        top = self.json_of("counters", "--top", "3")["counters"]
        self.assertEqual(len(top), 3)
        self.assertIsNotNone(top[0]["xmit_gbps"])
        self.assertGreater(top[0]["interval_ps"], 0)
        self.ibemu("counters", "--reset", check=0)
        after = self.json_of("counters")["counters"]
        self.assertEqual(sum(c["xmit_pkts"] for c in after), 0)
        self.down("incast")

    def test_same_study_same_result_on_two_daemons(self):
        outputs = []
        for name in ("det1", "det2"):
            self.up(FT, name)
            p = self.ibemu("--fabric", name, "traffic", "uniform", "--seed", "42",
                           "--duration", "10us", "--load", "0.7", "--json",
                           check=0)
            report = json.loads(p.stdout)
            counters = self.json_of("--fabric", name, "counters")["counters"]
            report.pop("fabric")
            outputs.append((report, counters))
            self.down(name)
        self.assertEqual(outputs[0][0], outputs[1][0])
        strip = [[{k: v for k, v in c.items()} for c in o[1]] for o in outputs]
        self.assertEqual(strip[0], strip[1])

    def test_back_to_back_studies_report_the_same(self):
        """A study's report does not depend on what ran before it on the
        daemon: credits still on their way, arbiters' positions."""
        self.up(FT, "again")
        runs = [self.ibemu("traffic", "shift", "--duration", "20us", "--load",
                           "0.9", "--top", "0", "--json", check=0).stdout
                for _ in range(2)]
        self.assertEqual(runs[0], runs[1])
        self.assertGreater(json.loads(runs[0])["summary"]["events"], 0)
        self.down("again")

    def test_daemon_answers_during_a_study(self):
        self.up(topology("fat-tree-2l-1152.yaml"), "busy")
        study = subprocess.Popen([IBEMU, "traffic", "alltoall", "--duration",
                                  "150us", "--fabric", "busy"], env=self.env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
        time.sleep(0.3)
        answered_while_running = False
        while study.poll() is None:
            status = self.json_of("status", "--fabric", "busy")
            self.assertEqual(status["fabric"], "busy")
            if study.poll() is None:
                answered_while_running = True
                p = self.ibemu("traffic", "uniform", "--fabric", "busy")
                self.assertEqual(p.returncode, 1)
                self.assertIn("a study is running", p.stderr)
                break
        out, err = study.communicate(timeout=600)
        self.assertEqual(study.returncode, 0, err)
        self.assertTrue(answered_while_running, "the study ended too soon to tell")
        self.assertIn("Port transmitters", out)
        # Not a terminal: progress comes as plain lines on stderr.
        self.assertIn("traffic alltoall", err)
        self.down("busy")

    def plot_dir(self):
        d = tempfile.mkdtemp(prefix="ibemu-plot-")
        self.addCleanup(shutil.rmtree, d, True)
        return d

    def test_congestion_tree_report_and_svg(self):
        # No CC manager: the SM leaves congestion control off.
        self.up(FT, "ctree", "--cc", "off")
        out = self.plot_dir()
        # A relative name: the CLI makes it absolute for the daemon.
        p = subprocess.run([IBEMU, "--fabric", "ctree", "traffic",
                            "congestion-tree", "--duration", "20us", "--top",
                            "0", "--json", "--plot", "tree.svg"], cwd=out,
                           env=self.env, capture_output=True, text=True,
                           timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        report = json.loads(p.stdout)
        summary = report["summary"]
        flows = report["flows"]
        roles = [f["role"] for f in flows]
        self.assertEqual(roles.count("contributor"), 30)
        self.assertEqual(roles.count("victim"), 5)
        self.assertEqual(summary["hotspot"], "hca01:1")
        self.assertGreater(summary["hotspot_utilization"], 0.5)
        self.assertLessEqual(summary["hotspot_utilization"], 1.0)
        self.assertGreater(summary["jain_contributors"], 0.9)
        self.assertLessEqual(summary["jain_contributors"], 1.0)
        self.assertEqual(summary["victims"], 5)
        self.assertLessEqual(summary["victims_min_fair_ratio"],
                             summary["victims_mean_fair_ratio"])
        for f in flows:
            self.assertGreater(f["fair_gbps"], 0)
            if f["role"] == "contributor":
                self.assertEqual(f["dst"], "hca01:1")
            else:
                # Sent by a contributor, away from the hotspot's leaf
                # (hca01..hca06).
                self.assertIn(f["src"], [g["src"] for g in flows
                                         if g["role"] == "contributor"])
                self.assertNotIn(f["dst"],
                                 ["hca0%d:1" % i for i in range(1, 7)])
        # The image: one line per flow in the throughput panel, one per
        # contributor in the CCTI panel, nothing left beside it.
        self.assertEqual(os.listdir(out), ["tree.svg"])
        root = ET.parse(os.path.join(out, "tree.svg")).getroot()
        self.assertEqual(root.tag, SVG + "svg")
        lines = series(root, "throughput-panel")
        self.assertEqual(sorted(r for r, _ in lines), sorted(roles))
        self.assertEqual(sorted(f for _, f in lines),
                         sorted(f["src"] + "->" + f["dst"] for f in flows))
        ccti = series(root, "ccti-panel")
        self.assertEqual([r for r, _ in ccti], ["contributor"] * 30)
        title = [e.text for e in root.iter(SVG + "text")
                 if e.get("class") == "title"]
        self.assertEqual(title, ["traffic congestion-tree on ctree, "
                                 "congestion control off"])
        self.down("ctree")

    def test_incast_fair_shares_and_png(self):
        self.up(FT, "fair", "--cc", "off")
        out = self.plot_dir()
        png = os.path.join(out, "incast.png")
        args = ["traffic", "incast", "--duration", "20us", "--top", "0",
                "--json", "--plot", png]
        if not shutil.which("rsvg-convert") and not shutil.which("convert"):
            p = self.ibemu(*args, check=2)
            self.assertIn("librsvg2-bin", p.stderr)
            args = args[:-1] + [os.path.join(out, "incast.svg")]
        report = json.loads(self.ibemu(*args, check=0).stdout)
        # Without congestion control the 35 contributors' fair shares
        # split the hotspot's link evenly.
        flows = report["flows"]
        self.assertEqual(len(flows), 35)
        for f in flows:
            self.assertEqual(f["role"], "contributor")
            self.assertAlmostEqual(f["fair_gbps"] * 35 / EDR_PAYLOAD_GBPS,
                                   1, delta=0.01)
        self.assertAlmostEqual(report["summary"]["gbps"] / EDR_PAYLOAD_GBPS,
                               1, delta=0.01)
        self.assertGreater(report["summary"]["hotspot_utilization"], 0.99)
        self.assertIsNone(report["summary"]["victims_min_fair_ratio"])
        # The hosts would act on congestion control, but 'up --cc off'
        # left their ports without settings: nothing throttles.
        self.assertEqual(report["summary"]["congestion_control"],
                         "unconfigured")
        if shutil.which("rsvg-convert"):
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        # An uncontended flow gets its fair share.
        report = json.loads(self.ibemu("traffic", "shift", "--shift", "1",
                                       "--size", "4KiB", "--duration",
                                       "50us", "--json", "--top", "0",
                                       check=0).stdout)
        for f in report["flows"]:
            self.assertEqual(f["role"], "other")
        best = max(f["gbps"] / f["fair_gbps"] for f in report["flows"])
        self.assertAlmostEqual(best, 1, delta=0.02)
        self.down("fair")

    def test_plot_and_pattern_errors(self):
        self.up(topology("single-switch-8.yaml"), "plots")
        p = self.ibemu("traffic", "shift", "--plot", "/tmp/x.txt", check=2)
        self.assertIn("--plot /tmp/x.txt: the name must end in .svg or .png",
                      p.stderr)
        # A directory that cannot take the plot is told before the study.
        p = self.ibemu("traffic", "shift", "--plot", "/nonexistent/x.svg",
                       check=1)
        self.assertIn("--plot /nonexistent/x.svg: No such file or directory",
                      p.stderr)
        with open(self.paths("plots")["log"]) as f:
            self.assertNotIn("traffic study shift started", f.read())
        p = self.ibemu("traffic", "congestion-tree", check=2)
        self.assertIn("congestion-tree needs hosts on switches other than "
                      "the hotspot's sw", p.stderr)
        # Without roles, the 16 busiest flows.
        out = self.plot_dir()
        self.ibemu("traffic", "shift", "--duration", "5us", "--plot",
                   os.path.join(out, "shift.svg"), check=0)
        root = ET.parse(os.path.join(out, "shift.svg")).getroot()
        self.assertEqual([r for r, _ in series(root, "throughput-panel")],
                         ["other"] * 8)
        self.down("plots")

    def test_message_size_range(self):
        # The range the refusal quotes is the range accepted: 1GiB and
        # 2GiB (IBA's largest message) run; past it, the message says so.
        self.up(topology("single-switch-8.yaml"), "sizes")
        for size in ("1GiB", "2GiB"):
            p = self.ibemu("traffic", "uniform", "--size", size,
                           "--duration", "1us", "--json", check=0)
            self.assertEqual(json.loads(p.stdout)["summary"]["msg_bytes"],
                             {"1GiB": 1 << 30, "2GiB": 1 << 31}[size])
        p = self.ibemu("traffic", "uniform", "--size", "3GiB", check=2)
        self.assertIn("1B..2GiB", p.stderr)
        self.assertIn("'3GiB'", p.stderr)
        self.down("sizes")


if __name__ == "__main__":
    main()
