# SPDX-License-Identifier: MIT
"""Congestion control configuration (IBA Annex A10): 'ibemu up' writes the
fabric's CC policy as cc.conf in OpenSM's syntax and ibemu-sm sets it into
every switch and CA port; the real ibccquery (infiniband-diags) reads back
exactly the policy, ibemu's default and a YAML override alike; the real
OpenSM given the same cc.conf sets the same values."""

import os
import re
import shutil
import subprocess

from harness import (IbemuTestCase, OpenSMRunner, main, read, topology)

# A policy unlike ibemu's default in every block it has.
OVERRIDE = """
congestion_control:
  cc_key: 0x0
  switch:
    threshold: 8
    marking_rate: 3
    packet_size: 2
    victim_mask: [1, 2]
    cs_threshold: 4
    cs_return_delay: "1:5"
  ca:
    control: sl
    control_map: 0xff
    ccti_timer: 10
    trigger_threshold: 6
    sls:
      - {sl: 3, ccti_increase: 4, ccti_min: 2}
  cct: {entries: 64, step: "1:2"}
"""


def fields(text):
    """ibccquery's 'Name:......value' lines as [(name, value)], in order."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z_]+):\.+(.*)$", line)
        if m:
            out.append((m.group(1), m.group(2).strip()))
    return out


def by_sl(text):
    """CACongestionSetting: the port's values and the 16 SL entries."""
    f = fields(text)
    top = dict(f[:2])
    sls, cur = [], None
    for name, value in f[2:]:
        if name == "SL":
            cur = {}
            sls.append(cur)
        else:
            cur[name] = int(value)
    return top, sls


def cct(text):
    """CongestionControlTable: CCTI_Limit and [(entry, shift, mult)] of
    every block up to CCTI_Limit's (ibccquery reads them all)."""
    f = fields(text)
    limit = int(f[0][1])
    entries = []
    for i in range(1, len(f), 3):
        entries.append((int(f[i][1]), int(f[i + 1][1]), int(f[i + 2][1])))
    return limit, entries


def guid2lid(path):
    """{port GUID: LID} of an SM's guid2lid file (OpenSM's format)."""
    lids = {}
    for line in read(path).splitlines():
        parts = line.split()
        if len(parts) >= 2:
            lids[int(parts[0], 16)] = int(parts[1], 16)
    return lids


class CCTest(OpenSMRunner, IbemuTestCase):
    def tool(self, fabric, *cmd, host="hca1"):
        p = self.ibemu("exec", "--fabric", fabric, "--host", host, "--",
                       *cmd, env=self.tool_env, check=0)
        return p.stdout

    def query(self, fabric, op, lid, *extra):
        return self.tool(fabric, "ibccquery", op, str(lid), *extra)

    def yaml_file(self, text):
        src = read(topology("single-switch-8.yaml"))
        path = os.path.join(self.osm_root, "cc-override.yaml")
        with open(path, "w") as f:
            f.write(src + text)
        return path

    def nodes(self, fabric):
        """(switch port GUID, port GUID of hca2)."""
        nodes = {n["name"]: int(n["guid"], 16)
                 for n in self.json_of("nodes", "--fabric", fabric)["nodes"]}
        return nodes["sw"], nodes["hca2"] + 1

    def settings(self, fabric, lids):
        """What ibccquery reads from the switch and from hca2's port."""
        sw, ca = self.nodes(fabric)
        strip = lambda t: t.split("\n", 1)[1]  # the '# ...: Lid N' line
        return (strip(self.query(fabric, "SwitchCongestionSetting", lids[sw])),
                strip(self.query(fabric, "CACongestionSetting", lids[ca])),
                strip(self.query(fabric, "CongestionControlTable", lids[ca])))

    def sm_lids(self, fabric):
        return guid2lid(os.path.join(self.paths(fabric)["dir"], "guid2lid"))

    def sm_cc(self, fabric):
        st = self.json_of("sm", "status", "--fabric", fabric)
        return {k: v for k, v in st.items() if k.startswith("cc")}

    def test_default_policy(self):
        """ibemu's default, from no word in the YAML, under ibemu-sm."""
        self.up(topology("single-switch-8.yaml"), "ccdef", "--sweep", "50")
        conf = read(os.path.join(self.paths("ccdef")["dir"], "cc.conf"))
        self.assertIn("\ncongestion_control TRUE\n", conf)
        self.assertIn("\ncc_sw_cong_setting_threshold 0xa\n", conf)
        lids = self.sm_lids("ccdef")
        sw, ca = self.nodes("ccdef")
        s = dict(fields(self.query("ccdef", "SwitchCongestionSetting",
                                   lids[sw])))
        self.assertEqual(s, {"Control_Map": "0x0000001f",
                             "Victim_Mask": "0" * 64, "Credit_Mask": "0" * 64,
                             "Threshold": "0x0a", "Packet_Size": "0",
                             "CS_Threshold": "0x00",
                             "CS_ReturnDelay": "0x0000",
                             "Marking_Rate": "1"})
        top, sls = by_sl(self.query("ccdef", "CACongestionSetting", lids[ca]))
        self.assertEqual(top, {"Port_Control": "0x0000",
                               "Control_Map": "0xffff"})
        self.assertEqual(sls, [{"CCTI_Timer": 9, "CCTI_Increase": 4,
                                "Trigger_Threshold": 8, "CCTI_Min": 0}] * 16)
        # ibccquery reads the blocks up to CCTI_Limit's.
        limit, entries = cct(self.query("ccdef", "CongestionControlTable",
                                        lids[ca]))
        self.assertEqual((limit, entries),
                         (127, [(i, 0, i) for i in range(128)]))
        # 1 switch and 8 CA ports: 1 + 8 x (1 + 2 CCT blocks) Sets.
        cc = self.sm_cc("ccdef")
        self.assertEqual((cc["cc"], cc["cc_configured"], cc["cc_sets"],
                          cc["cc_failed"]), ("on", 9, 25, 0))
        # Light sweeps read every CongestionLog again, and set nothing:
        # every port holds the policy already.
        self.wait_until("two light sweeps' CongestionLog reads",
                        lambda: self.sm_cc("ccdef")["cc_log_reads"] >= 27)
        cc = self.sm_cc("ccdef")
        self.assertEqual((cc["cc_sets"], cc["cc_failed"]), (25, 0))
        # A port that went away and came back is new to the next heavy
        # sweep (OpenSM's need_update): it alone is set again.
        heavy = lambda: self.json_of("sm", "status", "--fabric",
                                     "ccdef")["heavy_sweeps"]
        self.ibemu("link", "down", "hca5:1", "--fabric", "ccdef", check=0)
        self.wait_until("a heavy sweep without hca5", lambda: heavy() >= 2)
        self.ibemu("link", "up", "hca5:1", "--fabric", "ccdef", check=0)
        self.wait_until("hca5 configured again",
                        lambda: self.sm_cc("ccdef")["cc_configured"] >= 10)
        # (A CongestionLog read in flight when the cable went may have
        # timed out: failures are not counted here.)
        cc = self.sm_cc("ccdef")
        self.assertEqual((cc["cc_configured"], cc["cc_sets"]), (10, 28))
        self.down("ccdef")

    def test_off(self):
        """--cc off: nothing sent, the agents keep their zeros."""
        self.up(topology("single-switch-8.yaml"), "ccoff", "--cc", "off")
        conf = read(os.path.join(self.paths("ccoff")["dir"], "cc.conf"))
        self.assertIn("\ncongestion_control FALSE\n", conf)
        lids = self.sm_lids("ccoff")
        sw, _ = self.nodes("ccoff")
        s = dict(fields(self.query("ccoff", "SwitchCongestionSetting",
                                   lids[sw])))
        self.assertEqual((s["Control_Map"], s["Threshold"]),
                         ("0x00000000", "0x00"))
        self.down("ccoff")

    def test_cc_option_and_errors(self):
        """--cc on overrides the YAML's 'enable: false'; a bad value in
        the section is named by file:line:column, as 'up' says it."""
        path = self.yaml_file("congestion_control: {enable: false}\n")
        self.up(path, "ccyes", "--cc", "on", "--sweep", "0")
        conf = read(os.path.join(self.paths("ccyes")["dir"], "cc.conf"))
        self.assertIn("\ncongestion_control TRUE\n", conf)
        self.assertIn("ibemu-sm: congestion control: 9 switches and CA "
                      "ports configured, 25 Sets",
                      read(self.paths("ccyes")["sm_log"]))
        self.down("ccyes")
        bad = self.yaml_file("congestion_control:\n"
                             "  switch: {threshold: 16}\n")
        lines = len(read(bad).splitlines())
        p = self.ibemu("up", bad, "--name", "ccbad", check=2)
        self.assertEqual(p.stderr.strip(),
                         f"{bad}:{lines}:23: error: threshold 16 is "
                         "out of range, expected 0..15")
        p = self.ibemu("up", path, "--name", "ccbad", "--cc", "yes", check=2)
        self.assertIn("--cc", p.stderr)

    def test_override_and_opensm(self):
        """A YAML override, as ibccquery reads it under ibemu-sm; then the
        real OpenSM with the same cc.conf on a fabric of the same YAML
        with '--sm none' sets exactly the same values."""
        path = self.yaml_file(OVERRIDE)
        self.up(path, "ccyaml", "--sweep", "0")
        lids = self.sm_lids("ccyaml")
        ours = self.settings("ccyaml", lids)
        s = dict(fields("\n" + ours[0]))
        self.assertEqual(s, {"Control_Map": "0x0000001f",
                             "Victim_Mask": "0" * 63 + "6",
                             "Credit_Mask": "0" * 64,
                             "Threshold": "0x08", "Packet_Size": "2",
                             "CS_Threshold": "0x04",
                             "CS_ReturnDelay": "0x4005",
                             "Marking_Rate": "3"})
        top, sls = by_sl(ours[1])
        self.assertEqual(top, {"Port_Control": "0x0001",
                               "Control_Map": "0x00ff"})
        want = {"CCTI_Timer": 10, "CCTI_Increase": 4,
                "Trigger_Threshold": 6, "CCTI_Min": 0}
        self.assertEqual(sls[3], dict(want, CCTI_Increase=4, CCTI_Min=2))
        self.assertEqual(sls[:3] + sls[4:8], [want] * 7)
        # A Set changes only the SLs its Control_Map names (A10.4.3.8).
        self.assertEqual(sls[8:], [{"CCTI_Timer": 0, "CCTI_Increase": 0,
                                    "Trigger_Threshold": 0,
                                    "CCTI_Min": 0}] * 8)
        limit, entries = cct(ours[2])
        self.assertEqual((limit, entries),
                         (63, [(i, 1, 2 * i) for i in range(64)]))
        conf = read(os.path.join(self.paths("ccyaml")["dir"], "cc.conf"))
        self.down("ccyaml")

        self.up(path, "ccosm", "--sm", "none")
        self.assertEqual(
            read(os.path.join(self.paths("ccosm")["dir"], "cc.conf")), conf)
        cfg = os.path.join(self.osm_root, "opensm.conf")
        shutil.copy(os.path.join(self.paths("ccosm")["dir"], "cc.conf"), cfg)
        argv, env, log = self.opensm_args("ccosm", "hca1", "--once",
                                          "--config", cfg)
        p = subprocess.run(argv, env=env, capture_output=True, text=True,
                           timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        text = read(log)
        self.assertIn("SUBNET UP", text)
        self.assertEqual([l for l in text.splitlines() if " ERR " in l], [])
        theirs = self.settings(
            "ccosm", guid2lid(os.path.join(self.osm_root, "ccosm",
                                           "guid2lid")))
        self.assertEqual(theirs, ours)
        self.down("ccosm")


    def incast(self, fabric):
        st = self.json_of("traffic", "incast", "--victims", "--duration",
                          "300us", "--fabric", fabric)
        return st["flows"]

    def test_same_marking_under_both_sms(self):
        """The same incast with victims under ibemu-sm and under OpenSM
        given ibemu's cc.conf: the switches mark alike and the sources
        throttle alike, flow for flow (rates, FECNs, BECNs, CCTI)."""
        self.up(topology("two-switch.yaml"), "ccmi", "--sweep", "0")
        ours = self.incast("ccmi")
        self.down("ccmi")
        self.up(topology("two-switch.yaml"), "ccmo", "--sm", "none")
        cfg = os.path.join(self.osm_root, "opensm.conf")
        shutil.copy(os.path.join(self.paths("ccmo")["dir"], "cc.conf"), cfg)
        argv, env, log = self.opensm_args("ccmo", "hca1", "--once",
                                          "--config", cfg)
        p = subprocess.run(argv, env=env, capture_output=True, text=True,
                           timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("SUBNET UP", read(log))
        theirs = self.incast("ccmo")
        self.down("ccmo")
        # Congestion there is, and control acts on it: the incast
        # sources are marked and throttled, the victim is not.
        roles = {f["role"]: f for f in ours}
        self.assertGreater(roles["contributor"]["becns"], 0)
        self.assertGreater(roles["contributor"]["ccti_max"], 0)
        self.assertEqual(roles["victim"]["becns"], 0)
        self.assertEqual(theirs, ours)


if __name__ == "__main__":
    main()
