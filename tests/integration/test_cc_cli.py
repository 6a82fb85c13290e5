# SPDX-License-Identifier: MIT
"""'ibemu cc' on a real fabric: every switch and cabled HCA port with its
counters at zero once the subnet is up, then the settings the real
ibccconfig (infiniband-diags) writes through the CC agent, shown back,
with the inter-packet delay they imply worked out by hand; NODE[:PORT]
filters and the last traffic study's flows."""

import shutil
import socket
import subprocess
import time

from harness import IBEMU, IbemuTestCase, main, tool_env, topology

TWO = topology("two-switch.yaml")


class CcTest(IbemuTestCase):
    def lids(self):
        # A switch's ports all show its LID (port 0's, IBA 14.2.5.6).
        lids = {}
        for p in self.json_of("ports")["ports"]:
            lids.setdefault(p["node"], p["lid"])
        return lids

    def cc_tool(self, *args):
        self.ibemu("exec", "--host", "hca1", "--", "ibccconfig", *args,
                   env=tool_env(self.env), check=0)

    def test_structure_then_settings(self):
        self.up(TWO, "cc")
        cc = self.json_of("cc")
        self.assertEqual(cc["fabric"], "cc")
        self.assertEqual(sorted(cc), ["fabric", "flows", "hca_ports", "qps",
                                      "sls", "switch_ports", "switches"])
        self.assertEqual([s["node"] for s in cc["switches"]], ["sw1", "sw2"])
        # Every cabled port: 2 hosts and 2 inter-switch cables a switch.
        self.assertEqual([(p["node"], p["port"]) for p in cc["switch_ports"]],
                         [(sw, p) for sw in ("sw1", "sw2")
                          for p in (1, 2, 7, 8)])
        self.assertEqual([p["node"] for p in cc["hca_ports"]],
                         ["hca1", "hca2", "hca3", "hca4"])
        self.assertTrue(all(p["fecn_marked"] == 0
                            for p in cc["switch_ports"]))
        for p in cc["hca_ports"]:
            self.assertEqual((p["fecn_rcvd"], p["cnp_sent"], p["becn_rcvd"]),
                             (0, 0, 0))
        self.assertEqual(cc["qps"], [])
        self.assertEqual(cc["flows"], [])

        # './ibemu.sh deps' installs infiniband-diags: no skipping.
        self.assertTrue(shutil.which("ibccconfig"))
        lid = self.lids()
        # A10.4.3.8: control per SL (Port_Control 1) on SLs 0 and 1,
        # CCTI_Timer 150, CCTI_Increase 2, Trigger_Threshold 5, CCTI_Min 1.
        self.cc_tool("CACongestionSetting", str(lid["hca1"]), "1", "0x3",
                     "150", "2", "5", "1")
        # A10.4.3.9: CCTI_Limit 2, entries 0..2 as shift:multiplier.
        self.cc_tool("CongestionControlTable", str(lid["hca1"]), "2", "0",
                     "0:0", "1:3", "2:100")
        # A10.4.3.6: every field valid (Control_Map 0x1f), victims ports
        # 1, 2 and 7, credit starvation on port 7, threshold 15, packets
        # of 8 credits, marking rate 5.
        self.cc_tool("SwitchCongestionSetting", str(lid["sw1"]), "0x1f",
                     "0x86", "0x80", "0xf", "8", "0", "0:0", "5")

        cc = self.json_of("cc")
        sw1 = cc["switches"][0]
        self.assertEqual(sw1, {"node": "sw1", "control_map": 31,
                               "threshold": 15, "marking_rate": 5,
                               "packet_size": 8, "victim_ports": "1-2,7",
                               "credit_ports": "7"})
        self.assertIsNone(cc["switches"][1]["victim_ports"])
        hca1 = cc["hca_ports"][0]
        self.assertEqual((hca1["node"], hca1["port_control"],
                          hca1["control_map"], hca1["ccti_limit"]),
                         ("hca1", "sl", 3, 2))
        self.assertEqual(cc["hca_ports"][1]["port_control"], "qp")
        # The SLs the port controls, each at CCTI_Min: CCT entry 1 (shift
        # 1, multiplier 3) spaces a 4096-byte packet (4122 bytes on the
        # wire, 40 ps a byte at 4x HDR) by 1.5 times its own time.
        self.assertEqual([(s["sl"], s["ccti_timer"], s["ccti_increase"],
                           s["ccti_min"], s["ccti"], s["becns"])
                          for s in cc["sls"]],
                         [(0, 150, 2, 1, 1, 0), (1, 150, 2, 1, 1, 0)])
        self.assertEqual(cc["sls"][0]["ipd_ns"], 4122 * 40 * 3 / 2 / 1000)

        # NODE and NODE:PORT filters.
        only = self.json_of("cc", "sw1:7")
        self.assertEqual(only["switch_ports"],
                         [{"node": "sw1", "port": 7, "fecn_marked": 0}])
        self.assertEqual(only["switches"], [])
        self.assertEqual(only["hca_ports"], [])
        only = self.json_of("cc", "hca2")
        self.assertEqual([p["node"] for p in only["hca_ports"]], ["hca2"])
        self.assertEqual(only["switches"], [])
        self.assertEqual(only["sls"], [])
        p = self.ibemu("cc", "nosuch", check=1)
        self.assertIn("cc: no node named 'nosuch'", p.stderr)

        # Text: aligned tables, one per kind that has rows.
        text = self.ibemu("cc", check=0).stdout
        lines = text.splitlines()
        self.assertEqual(lines[0].split(), ["SWITCH", "CONTROL_MAP",
                                            "THRESHOLD", "MARKING_RATE",
                                            "PACKET_SIZE", "VICTIM_PORTS",
                                            "CREDIT_PORTS"])
        self.assertEqual(lines[1].split(),
                         ["sw1", "31", "15", "5", "8", "1-2,7", "7"])
        # Numbers right-aligned under their headers.
        self.assertEqual(lines[0].index("THRESHOLD") + len("THRESHOLD"),
                         lines[1].index(" 15 ") + 3)
        self.assertEqual(lines[3], "")

        # A study's flows stay shown once it is done; hca1 controls per SL.
        self.ibemu("traffic", "shift", "--duration", "5us", check=0)
        flows = self.json_of("cc")["flows"]
        self.assertEqual(len(flows), 4)
        by_src = {f["src"]: f for f in flows}
        self.assertEqual((by_src["hca1:1"]["ccti"], by_src["hca1:1"]["sl"]),
                         (1, 0))
        self.assertEqual(by_src["hca2:1"]["ccti"], 0)
        self.assertEqual(by_src["hca2:1"]["ipd_ns"], 0)
        self.down("cc")

    def test_qp_of_a_process(self):
        """A process's QP shows with its own CCTI: Debian's
        ibv_ud_pingpong, as a server, holds a UD QP while it waits."""
        self.assertTrue(shutil.which("ibccconfig"))
        self.assertTrue(shutil.which("ibv_ud_pingpong"))
        self.up(TWO, "ccqp")
        lid = self.lids()
        # Control per QP (Port_Control 0), CCTI_Min 1 on SL 0; entry 1
        # of the table a delay of 1.5 packet times.
        self.ibemu("exec", "--host", "hca3", "--", "ibccconfig",
                   "CACongestionSetting", str(lid["hca3"]), "0", "0x1", "0",
                   "1", "0", "1", env=tool_env(self.env), check=0)
        self.ibemu("exec", "--host", "hca3", "--", "ibccconfig",
                   "CongestionControlTable", str(lid["hca3"]), "1", "0",
                   "0:0", "1:3", env=tool_env(self.env), check=0)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = tool_env(self.env)
        env.pop("IBEMU_HOST", None)
        srv = subprocess.Popen([IBEMU, "exec", "--host", "hca3", "--",
                                "ibv_ud_pingpong", "-p", str(port)],
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=env)
        try:
            qps = []
            end = time.time() + 20
            while not qps and time.time() < end and srv.poll() is None:
                qps = self.json_of("cc")["qps"]
                time.sleep(0.05)
            self.assertEqual(len(qps), 1, qps)
            qp = qps[0]
            self.assertEqual((qp["node"], qp["port"], qp["type"], qp["sl"]),
                             ("hca3", 1, "UD", 0))
            self.assertGreater(qp["pid"], 0)
            self.assertGreaterEqual(qp["qpn"], 2)
            self.assertEqual((qp["ccti"], qp["becns"]), (1, 0))
            wire = 8 + 12 + qp["mtu"] + 6
            self.assertEqual(qp["ipd_ns"], wire * 40 * 3 / 2 / 1000)
            self.assertEqual(self.json_of("cc", "hca1")["qps"], [])
        finally:
            srv.kill()
            srv.wait()
        self.wait_until("the QP gone",
                        lambda: self.json_of("cc")["qps"] == [])
        self.down("ccqp")


if __name__ == "__main__":
    main()
