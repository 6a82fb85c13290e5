# SPDX-License-Identifier: MIT
"""What ibemu-sm shows of itself (issue 11, "Visibility"): 'ibemu sm
status' after 'ibemu up' and after a switch-to-switch link goes down (the
heavy sweep that follows says which link it lost), 'ibemu sm report'
against numbers worked out by hand and against ibemu-sm's own --quality,
the error without an SM, and the dumps in OpenSM's formats compared file
against file with the real OpenSM's on the same fabric and LIDs."""

import os
import re
import shutil
import subprocess
import tempfile

from harness import IBEMU, IbemuTestCase, OpenSMRunner, main, read, topology

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
SM = os.path.join(BUILD, "bin", "ibemu-sm")
GUID = r"0x[0-9a-f]{16}"


class SmViewTest(OpenSMRunner, IbemuTestCase):
    def sm_json(self, fabric, what="status"):
        return self.json_of("sm", what, "--fabric", fabric)

    def test_status_after_up(self):
        self.up(topology("fat-tree-2l-36.yaml"), "sv")
        s = self.sm_json("sv")
        self.assertEqual(s["fabric"], "sv")
        for key, value in {"state": "master", "priority": 0,
                           "routing": "minhop", "lid": 1, "master_lid": None,
                           "sweep_ms": 10000, "nodes": 45, "switches": 9,
                           "cas": 36, "links": 72, "max_lid": 45,
                           "heavy_sweeps": 1, "smps_timed_out": 0,
                           "last_sweep": "heavy", "last_sweep_why": "start",
                           "last_sweep_lft_blocks": 9,
                           "last_sweep_errors": 0, "last_heavy_sweep": 1,
                           "last_heavy_why": "start", "nodes_added": 45,
                           "nodes_removed": 0, "links_added": 72,
                           "links_removed": 0, "changes": []}.items():
            self.assertEqual(s[key], value, key)
        self.assertTrue(os.path.exists(f"/proc/{s['pid']}"))
        self.assertEqual(s["smps_sent"], s["smps_answered"])
        self.assertEqual(s["last_sweep_smps"], s["smps_sent"])
        self.assertGreater(s["last_sweep_wall_ms"], 0)
        self.assertRegex(s["last_sweep_at"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        text = self.ibemu("sm", "status", "--fabric", "sv", check=0).stdout
        self.assertRegex(text, r"(?m)^State: +master$")
        self.assertRegex(text, r"(?m)^Why: +start$")
        self.assertRegex(text, r"(?m)^LFT blocks written: +9$")
        # ibemu up gave the SM --report and --dump-dir: all three files.
        # The SM says it is ready before it writes its files (ibemu up
        # returns then): they come right after.
        d = self.paths("sv")["dir"]
        for name in ("report.json", "opensm-lfts.dump", "opensm-subnet.lst",
                     "guid2lid"):
            self.wait_until(name, lambda: os.path.exists(
                os.path.join(d, name)), seconds=10)
        self.down("sv")
        self.assertFalse(os.path.exists(os.path.join(d, "report.json")))

    def test_status_after_link_down(self):
        """A switch-to-switch link down: the light sweep (or the trap)
        calls a heavy sweep, which lost that one link; up again, it
        finds it back."""
        self.up(topology("fat-tree-2l-36.yaml"), "svl", "--sweep", "100")
        self.ibemu("link", "down", "leaf01:7", "--fabric", "svl", check=0)
        seen = {}

        def second():
            seen["s"] = self.sm_json("svl")
            return seen["s"]["heavy_sweeps"] == 2

        self.wait_until("a second heavy sweep", second)
        s = seen["s"]
        self.assertEqual(s["last_heavy_why"], "a port changed")
        self.assertEqual((s["links"], s["nodes"]), (71, 45))
        self.assertEqual((s["links_removed"], s["links_added"],
                          s["nodes_removed"], s["nodes_added"]), (1, 0, 0, 0))
        self.assertEqual(len(s["changes"]), 1)
        self.assertRegex(s["changes"][0]["change"],
                         rf"^- link spine01:1 \({GUID}\) - leaf01:7 \({GUID}\)$")
        if s["last_sweep"] == "heavy":
            self.assertEqual(s["last_sweep_errors"], 0)
            self.assertLess(s["last_sweep_lft_blocks"], 9)
        else:  # a light sweep since
            self.assertIn(s["last_sweep_why"], ("trap 128", "period"))
        self.ibemu("link", "up", "leaf01:7", "--fabric", "svl", check=0)
        # The status as the third heavy sweep left it: a fourth may follow
        # at once (the trap and a light sweep each call one), and that
        # one changes nothing.
        def third():
            seen["s"] = self.sm_json("svl")
            return seen["s"]["heavy_sweeps"] >= 3

        self.wait_until("a third heavy sweep", third)
        s = seen["s"]
        self.assertEqual(s["links"], 72)
        if s["heavy_sweeps"] == 3:
            self.assertEqual((s["links_added"], s["links_removed"]), (1, 0))
            self.assertRegex(s["changes"][0]["change"],
                             r"^\+ link spine01:1 ")
        self.down("svl")

    def test_no_sm(self):
        self.up(topology("two-switch.yaml"), "svn", "--sm", "none")
        for what in ("status", "report"):
            p = self.ibemu("sm", what, "--fabric", "svn", check=1)
            self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertIn("no routes report", p.stderr)
        err = self.ibemu("sm", "status", "--fabric", "svn").stderr
        self.assertIn("no ibemu-sm was started on fabric 'svn'", err)
        self.assertIn("'ibemu up --sm none'", err)
        self.down("svn")
        # One sweep and gone: no status, but the routes it left are
        # reported.
        self.up(topology("two-switch.yaml"), "svz", "--sweep", "0")
        self.wait_until("the SM to exit", lambda: not os.path.exists(
            self.paths("svz")["sm_status"]) and self.ibemu(
                "sm", "status", "--fabric", "svz").returncode == 1)
        self.assertEqual(self.sm_json("svz", "report")["hosts"], 4)
        err = self.ibemu("sm", "status", "--fabric", "svz").stderr
        self.assertIn("exited with status 0", err)
        self.assertIn("its last log line: ibemu-sm: SUBNET UP", err)
        self.down("svz")
        p = self.ibemu("sm", "status", "--fabric", "svz", check=1)
        self.assertIn("fabric 'svz' is not running", p.stderr)

    def test_report_two_switch(self):
        """By hand: hca1, hca2 on sw1, hca3, hca4 on sw2, two cables
        between the switches. The SM's port (hca1) takes LID 1, then
        breadth first sw1 2, hca2 3, sw2 4, hca3 5, hca4 6. Min-hop's
        port balancing sends hca3 and hca4 by different cables (and
        hca1, hca2 back), so all-to-all puts the 2 routes from the other
        switch's two HCAs on each directed cable: max 2, ideal 8 / 4 =
        2; every shift k puts at most one route on a cable (k = 2: four
        routes, one per directed cable). Pairs on one switch take no
        switch hop (4), the others one (8)."""
        self.up(topology("two-switch.yaml"), "svr")
        r = self.sm_json("svr", "report")
        for key, value in {"routing": "minhop", "heavy_sweep": 1, "hosts": 4,
                           "links": 4, "max_lid": 6, "deadlock_free": "yes",
                           "layers": 1, "shift_max": 1, "shift_mean": 1,
                           "a2a_max": 2, "a2a_mean": 2, "a2a_ideal": 2,
                           "a2a_max_over_ideal": 1, "a2a_links_used": 4,
                           "unrouted": 0,
                           "path_lengths": [{"hops": 0, "pairs": 4},
                                            {"hops": 1, "pairs": 8}]}.items():
            self.assertEqual(r[key], value, key)
        text = self.ibemu("sm", "report", "--fabric", "svr", check=0).stdout
        self.assertRegex(text, r"(?m)^All-to-all: ideal \(even on every "
                         r"link\): +2$")
        self.assertRegex(text, r"(?m)^ +1 +8$")
        self.down("svr")

    def test_report_fat_tree(self):
        """fat-tree-2l-36: 6 leaves of 6 HCAs: 180 pairs on one leaf (no
        switch hop), 1080 across (2 hops), so 2160 hops on 72 directed
        links: ideal 30. The maxima are those ibemu-sm --quality prints
        for the same routes (the same SM port, so the same LIDs)."""
        self.up(topology("fat-tree-2l-36.yaml"), "svf")
        r = self.sm_json("svf", "report")
        self.down("svf")
        self.assertEqual(r["a2a_ideal"], 30)
        self.assertEqual(r["path_lengths"], [{"hops": 0, "pairs": 180},
                                             {"hops": 2, "pairs": 1080}])
        self.assertEqual((r["hosts"], r["links"], r["unrouted"]), (36, 72, 0))
        self.up(topology("fat-tree-2l-36.yaml"), "svf", "--sm", "none")
        p = subprocess.run(
            [IBEMU, "exec", "--fabric", "svf", "--host", "hca01", "--", SM,
             "--quality"], capture_output=True, text=True,
            env=self.tool_env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        m = re.search(r"shift at most (\d+), all-to-all at most (\d+) "
                      r"\(ideal ([\d.]+)", p.stdout)
        self.assertEqual((r["shift_max"], r["a2a_max"], r["a2a_ideal"]),
                         (int(m.group(1)), int(m.group(2)),
                          float(m.group(3))), p.stdout)
        self.assertLessEqual(r["a2a_max"], 1.25 * 30)
        self.assertGreaterEqual(r["shift_mean"], 1)
        self.assertLessEqual(r["shift_mean"], r["shift_max"])
        self.down("svf")

    def test_dumps_match_opensm(self):
        """The real OpenSM (min-hop) and ibemu-sm (min-hop, with
        OpenSM's guid2lid so every LID is the same) on the same fabric:
        opensm-subnet.lst is the same file; opensm-lfts.dump has the same
        header and summary lines and the same destinations, line for
        line, and the same port wherever OpenSM's hop table
        (opensm-lid-matrix.dump) leaves one min-hop port. Elsewhere the
        two may choose differently among equal min-hop ports (their port
        balancing counts different things in a different order), so
        there ibemu-sm's port must be one of the min-hop ones."""
        fabric = "svd"
        self.up(topology("fat-tree-2l-36.yaml"), fabric, "--sm", "none")
        # -D 0x43: errors, info, verbose and routing, which makes OpenSM
        # write its LFT and hop dumps.
        argv, env, log = self.opensm_args(fabric, "hca01", "--once",
                                          "-D", "0x43")
        p = subprocess.run(argv, env=env, capture_output=True, text=True,
                           timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("SUBNET UP", read(log))
        self.down(fabric)
        osm = os.path.join(self.osm_root, fabric)
        ours = tempfile.mkdtemp(prefix="ibemu-sm-dump-")
        self.addCleanup(shutil.rmtree, ours, True)
        self.up(topology("fat-tree-2l-36.yaml"), fabric, "--sm", "none")
        p = subprocess.run(
            [IBEMU, "exec", "--fabric", fabric, "--host", "hca01", "--", SM,
             "-G", os.path.join(osm, "guid2lid"), "--dump-dir", ours],
            capture_output=True, text=True, env=self.tool_env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.down(fabric)

        self.assertEqual(read(os.path.join(ours, "opensm-subnet.lst")),
                         read(os.path.join(osm, "opensm-subnet.lst")))
        self.assertEqual(len(read(os.path.join(ours, "opensm-subnet.lst"))
                             .splitlines()), 144)
        # guid2lid: the same LIDs (OpenSM's file may order them otherwise).
        g2l = re.compile(rf"^({GUID}) (0x[0-9a-f]{{4}}) 0x[0-9a-f]{{4}}$", re.M)
        self.assertEqual(
            dict(g2l.findall(read(os.path.join(ours, "guid2lid")))),
            dict(g2l.findall(read(os.path.join(osm, "guid2lid")))))

        theirs = read(os.path.join(osm, "opensm-lfts.dump")).splitlines()
        mine = read(os.path.join(ours, "opensm-lfts.dump")).splitlines()
        self.assertEqual(len(mine), len(theirs))
        entry = re.compile(r"^0x([0-9a-f]{4}) (\d{3}) # (.*)$")
        # OpenSM keeps hops to switch LIDs only; an HCA's LID is reached
        # by the hops to its switch, and then the port it is cabled to.
        hops = self.lid_matrix(os.path.join(osm, "opensm-lid-matrix.dump"))
        cabled = {}
        for sw, port, ca in re.findall(
                r"^\{ SW\S* .*?LID:([0-9A-F]{4}) PN:([0-9A-F]{2}) \} "
                r"\{ CA\S* .*?LID:([0-9A-F]{4}) ",
                read(os.path.join(osm, "opensm-subnet.lst")), re.M):
            cabled[int(ca, 16)] = (int(sw, 16), int(port, 16))
        self.assertEqual(len(cabled), 36)
        switch, single, several = None, 0, 0
        for a, b in zip(mine, theirs):
            ma, mb = entry.match(a), entry.match(b)
            if not mb:
                self.assertEqual(a, b)  # header or "N lids dumped"
                m = re.match(rf"^Unicast lids \[0-\d+\] of switch Lid (\d+) "
                             rf"guid ({GUID})", b)
                if m:
                    switch, own = m.group(2), int(m.group(1))
                continue
            self.assertTrue(ma, a)
            # The same destination, described the same way.
            self.assertEqual((ma.group(1), ma.group(3)),
                             (mb.group(1), mb.group(3)))
            lid, port = int(ma.group(1), 16), int(ma.group(2))
            if lid == own:
                self.assertEqual(a, b)
                continue
            if lid in cabled and cabled[lid][0] == own:
                best = [cabled[lid][1]]
            else:
                row = hops[switch][cabled[lid][0] if lid in cabled else lid]
                least = min(row[1:])
                best = [i + 1 for i, h in enumerate(row[1:]) if h == least]
            self.assertIn(port, best, f"{switch} LID {lid}: {a}")
            if len(best) == 1:
                single += 1
                self.assertEqual(a, b)
            else:
                several += 1
        # Both kinds are there: HCAs on the switch (one port), and the
        # other leaves' HCAs (one port to each spine).
        self.assertGreater(single, 0)
        self.assertGreater(several, 0)

    @staticmethod
    def lid_matrix(path):
        """{switch GUID: {LID: [hops by port 0..N]}} of OpenSM's dump."""
        out, cur = {}, None
        for line in read(path).splitlines():
            m = re.match(rf"^Switch: guid ({GUID})$", line)
            if m:
                cur = out.setdefault(m.group(1), {})
                continue
            m = re.match(r"^0x([0-9a-fA-F]{4}):((?: [0-9a-f]{2})+)", line)
            if m and cur is not None:
                cur[int(m.group(1), 16)] = [int(x, 16)
                                            for x in m.group(2).split()]
        return out


if __name__ == "__main__":
    main()
