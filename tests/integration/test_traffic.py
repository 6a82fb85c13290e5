# SPDX-License-Identifier: MIT
"""Traffic studies through the real CLI and daemon: the report, the
counters they leave, determinism across daemons, and a daemon that keeps
answering while a study runs."""

import json
import os
import subprocess
import time

from harness import IBEMU, IbemuTestCase, main, topology

FT = topology("fat-tree-2l-36.yaml")


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


if __name__ == "__main__":
    main()
