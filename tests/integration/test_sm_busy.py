#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Subnet managers beside a busy process (issue 20, items 1 and 2): a verbs
process that creates and destroys a CQ in a loop never waits, and moves
virtual time only by its calls' costs (verbs/cost.h). The SM's MAD
timeouts count virtual time and its waits count as waiting, so it slows
down with the busy process in wall time but loses nothing: ibemu-sm and
the real OpenSM each bring a fabric up, route around a cable pulled
between a leaf and a spine, and make it Active again once it is back,
with no node lost and no SMP timed out. On the old code ibemu-sm lost 44
of 45 nodes beside such a process."""
import os
import subprocess
import time

from harness import IBEMU, IbemuTestCase, OpenSMRunner, main, topology

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
BUSY = os.path.join(BUILD, "tests", "verbs-busy")
FAT = topology("fat-tree-2l-36.yaml")
# A leaf-spine cable that hca01's routes do not need (the spines are
# four), pulled and put back.
CABLE = "leaf01:9"


class BusySmTest(OpenSMRunner, IbemuTestCase):
    def start_busy(self, fabric, host):
        stop = os.path.join(self.rundir, f"{fabric}.stop")
        p = subprocess.Popen(
            [IBEMU, "exec", "--fabric", fabric, "--host", host, "--", BUSY,
             "cq", stop], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=self.tool_env)
        self.addCleanup(self.stop_busy, p, stop)
        return p, stop

    def stop_busy(self, p, stop):
        """Ends the busy process; its stderr."""
        if p.returncode is not None:
            return ""
        open(stop, "w").close()
        try:
            _, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
        return err

    def ports(self, fabric):
        rows = self.json_of("ports", "--fabric", fabric)["ports"]
        return {(r["node"], r["port"]): (r["phys_state"], r["state"])
                for r in rows if r["peer_node"]}

    def all_active(self, fabric):
        return set(self.ports(fabric).values()) == {("LinkUp", "Active")}

    def pull_and_restore(self, fabric, p):
        """The cable down, every pair still routed, the cable up and
        Active again, while the busy process runs on."""
        f = ("--fabric", fabric)
        self.ibemu("link", "down", CABLE, *f)
        self.wait_until("the SM to route around the cable", lambda: all(
            self.ibemu("route", a, b, *f, check=0).returncode == 0
            for a, b in (("hca01", "hca36"), ("hca36", "hca01"),
                         ("hca02", "hca20"))), seconds=60)
        self.ibemu("link", "up", CABLE, *f)
        self.wait_until("the SM to make the cable Active again",
                        lambda: self.all_active(fabric), seconds=60)
        self.assertIsNone(p.poll(), "the busy process ended early")

    def test_ibemu_sm_beside_a_busy_process(self):
        self.up(FAT, "bsm")
        self.assertTrue(self.all_active("bsm"))
        p, stop = self.start_busy("bsm", "hca05")
        time.sleep(0.5)  # it runs: virtual time moves by its calls only
        self.pull_and_restore("bsm", p)
        # The sweep that made the cable Active counts itself once it
        # ends, after the ports it set Active show
        self.wait_until("the SM to end its sweep", lambda: self.json_of(
            "sm", "status", "--fabric", "bsm")["heavy_sweeps"] >= 2,
            seconds=60)
        sm = self.json_of("sm", "status", "--fabric", "bsm")
        self.assertEqual(sm["nodes"], 45)
        self.assertEqual(sm["links"], 72)
        self.assertEqual(sm["smps_timed_out"], 0)
        self.assertGreaterEqual(sm["heavy_sweeps"], 2)
        self.assertEqual(sm["nodes_removed"], 0)
        err = self.stop_busy(p, stop)
        self.assertEqual(p.returncode, 0, err)

    def test_opensm_beside_a_busy_process(self):
        self.up(FAT, "bosm", "--sm", "none")
        p, stop = self.start_busy("bosm", "hca05")
        time.sleep(0.5)
        osm, log = self.resident_opensm("bosm", "hca01")
        self.assertTrue(self.all_active("bosm"))
        self.pull_and_restore("bosm", p)
        text = open(log).read()
        self.assertNotIn("ERR 3111", text)  # lost a node in discovery
        self.assertNotIn("Timeout", text)
        err = self.stop_busy(p, stop)
        self.assertEqual(p.returncode, 0, err)
        self.stop_opensm(osm)


if __name__ == "__main__":
    main()
