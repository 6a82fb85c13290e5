# SPDX-License-Identifier: MIT
"""Fault injection through the real CLI and daemon ('ibemu link down|up|
drop'): a link taken down shows in 'ibemu ports' and breaks 'ibemu route';
a traffic study that would cross it is refused rather than losing packets;
'link up' retrains the link (1 ms of virtual time) and, with the daemon's
test routes, makes it Active again; a seeded loss rate shows as
PortXmitDiscards at the sending port while SMPs on VL15 still cross it;
a process attached to the HCA whose port goes down and up gets the port
events."""

import json
import os
import subprocess

from harness import IBEMU, IbemuTestCase, main, tool_env, topology

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
CLIENT = os.path.join(BUILD, "tests", "umad-client")
TWO = topology("two-switch.yaml")


def fields(text):
    """key=value pairs of every line, the last value of a key winning."""
    out = {}
    for line in text.splitlines():
        for word in line.split():
            if "=" in word:
                key, value = word.split("=", 1)
                out[key] = value
    return out


class FaultsTest(IbemuTestCase):
    def port(self, fabric, node, num):
        for p in self.json_of("ports", node, "--fabric", fabric)["ports"]:
            if p["port"] == num:
                return p["phys_state"], p["state"]
        self.fail(f"no port {node}:{num}")

    def counters(self, fabric):
        rows = self.json_of("counters", "--fabric", fabric)["counters"]
        return {(c["node"], c["port"]): c for c in rows}

    def assertFails(self, p, status, text):
        self.assertEqual(p.returncode, status, p.stderr)
        self.assertIn(text, p.stderr)

    def routed(self, fabric, src, dst):
        return self.ibemu("route", src, dst, "--fabric", fabric).returncode == 0

    def test_link_down_rerouted_then_up_restores(self):
        """A cable between switches pulled: ibemu-sm (resident, told by
        Trap 128) routes around it, so every pair is connected again and
        a study loses nothing; an HCA's own link down is refused with the
        way back; links brought up are made Active again by the SM."""
        self.up(TWO, "fdown")
        f = ("--fabric", "fdown")
        out = self.json_of("link", "down", "sw1:8", *f)["link"]
        self.assertEqual([(r["node"], r["port"], r["phys_state"], r["state"])
                          for r in out],
                         [("sw1", 8, "Disabled", "Down"),
                          ("sw2", 8, "Polling", "Down")])
        self.assertEqual(self.port("fdown", "sw1", 8), ("Disabled", "Down"))
        # min-hop sent hca1's packets to hca3 through sw1:8
        # (routing/README.md's balancing); the SM's new routes go by sw1:7.
        self.wait_until("the SM to route hca1 to hca3 around sw1:8",
                        lambda: self.routed("fdown", "hca1", "hca3"))
        hcas = ["hca1", "hca2", "hca3", "hca4"]
        for a in hcas:
            for b in hcas:
                if a != b:
                    self.ibemu("route", a, b, *f, check=0)
        t = self.json_of("traffic", "uniform", "--duration", "5us", *f)
        self.assertEqual(t["summary"]["bytes"], t["summary"]["msgs"] * 65536)
        self.assertEqual(sum(c["xmit_discards"]
                             for c in self.counters("fdown").values()), 0)
        # An HCA's own link down: a study is refused, with the way back.
        self.ibemu("link", "down", "hca4:1", *f, check=0)
        t = self.ibemu("traffic", "uniform", "--duration", "5us", *f)
        self.assertFails(t, 1, "'ibemu link up hca4:1'")
        # Up at the other end of the cable enables both ends; the link
        # trains to Init (1 ms of virtual time, which an idle fabric
        # spends on the wall clock too) and the SM makes it Active.
        out = self.json_of("link", "up", "sw2:2", *f)["link"]
        self.assertEqual({r["phys_state"] for r in out}, {"Polling"})
        self.wait_until("sw2:2 to train", lambda: self.port(
            "fdown", "sw2", 2)[0] == "LinkUp")
        self.json_of("link", "up", "sw1:8", *f)
        self.wait_until("the SM to activate the links again", lambda: (
            self.port("fdown", "sw1", 8) == ("LinkUp", "Active") and
            self.port("fdown", "hca4", 1) == ("LinkUp", "Active")))
        self.ibemu("route", "hca1", "hca4", *f, check=0)
        # Up on a link that is up changes nothing.
        self.ibemu("link", "up", "sw1:8", *f, check=0)
        self.assertEqual(self.port("fdown", "sw1", 8), ("LinkUp", "Active"))
        self.ibemu("counters", "--reset", *f, check=0)
        t = self.json_of("traffic", "uniform", "--duration", "5us", *f)
        s = t["summary"]
        self.assertGreater(s["msgs"], 0)
        self.assertEqual(s["bytes"], s["msgs"] * 65536)
        self.assertEqual(sum(c["xmit_discards"]
                             for c in self.counters("fdown").values()), 0)
        status = json.load(open(self.paths("fdown")["sm_status"]))
        self.assertGreaterEqual(status["heavy_sweeps"], 3)
        self.down("fdown")

    def test_link_up_without_an_sm_stays_in_init(self):
        self.up(TWO, "fnosm", "--sm", "none")
        f = ("--fabric", "fnosm")
        self.ibemu("link", "down", "sw1:7", *f, check=0)
        self.assertEqual(self.port("fnosm", "sw2", 7), ("Polling", "Down"))
        self.ibemu("link", "up", "sw1:7", *f, check=0)
        # Trained, and left in Init for a subnet manager.
        self.assertEqual(self.port("fnosm", "sw1", 7), ("LinkUp", "Init"))
        self.assertEqual(self.port("fnosm", "sw2", 7), ("LinkUp", "Init"))
        self.down("fnosm")

    def test_port_events_reach_the_process(self):
        """Debian's ibv_asyncwatch on hca1 sees its port go and come back
        as mlx5 reports it: PORT_ERR when the port goes Down, PORT_ERR
        when it trains to Init, PORT_ACTIVE once Active; no more."""
        self.up(TWO, "fev")
        f = ("--fabric", "fev")
        env = tool_env(self.env)
        for key in ("IBEMU_SESSION_SOCKET", "IBEMU_HOST"):
            env.pop(key, None)
        watch = subprocess.Popen(
            [IBEMU, "exec", *f, "--host", "hca1", "--", "ibv_asyncwatch"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=env)
        try:
            line = watch.stdout.readline()
            self.assertIn("hca1: async event FD", line)
            self.ibemu("link", "down", "hca1:1", *f, check=0)
            self.ibemu("link", "up", "hca1:1", *f, check=0)
            self.wait_until("the SM to activate hca1:1", lambda:
                            self.port("fev", "hca1", 1) ==
                            ("LinkUp", "Active"))
            events = [watch.stdout.readline().split()[1] for _ in range(3)]
        finally:
            watch.kill()
            watch.communicate()
        self.assertEqual(events, ["IBV_EVENT_PORT_ERR", "IBV_EVENT_PORT_ERR",
                                  "IBV_EVENT_PORT_ACTIVE"])
        self.down("fev")

    def test_at_a_virtual_time(self):
        """'--at': a time that is not a number, or one already past, is
        refused saying why; '+US' schedules the change that far on, and
        on an idle fabric it happens as that much wall time passes."""
        self.up(TWO, "fat")
        f = ("--fabric", "fat")
        self.assertFails(self.ibemu("link", "down", "sw1:8", "--at", "soon",
                                    *f), 2,
                         "--at 'soon': expected a virtual time in "
                         "microseconds")
        self.assertFails(self.ibemu("node", "down", "sw2", "--at", "0", *f),
                         1, "already; give a later time or +US")
        p = self.ibemu("link", "down", "sw1:8", "--at", "+20000", *f)
        self.assertIn("scheduled at virtual time", p.stdout)
        self.wait_until("the link to go down", lambda: self.port(
            "fat", "sw1", 8) == ("Disabled", "Down"))
        self.down("fat")

    def test_node_down_and_up(self):
        """'ibemu node down sw2': every cabled port of sw2 Disabled, its
        peers Polling; 'node up': all trained, and the SM makes them
        Active again; an unknown node is an error."""
        self.up(TWO, "fnode")
        f = ("--fabric", "fnode")
        rows = self.json_of("node", "down", "sw2", *f)["node"]
        self.assertTrue(rows)
        self.assertEqual({(r["phys_state"], r["state"]) for r in rows},
                         {("Disabled", "Down")})
        self.assertEqual(self.port("fnode", "sw1", 7), ("Polling", "Down"))
        self.assertEqual(self.port("fnode", "hca3", 1), ("Polling", "Down"))
        rows = self.json_of("node", "up", "sw2", *f)["node"]
        self.assertEqual({r["phys_state"] for r in rows}, {"Polling"})
        self.wait_until("the SM to activate sw2's links", lambda: {
            (r["phys_state"], r["state"])
            for r in self.json_of("ports", "sw2", *f)["ports"]
            if r["peer_node"]} == {("LinkUp", "Active")})
        self.assertEqual(self.port("fnode", "hca3", 1), ("LinkUp", "Active"))
        self.assertFails(self.ibemu("node", "down", "nosuch", *f), 1,
                         "no node named 'nosuch'")
        self.down("fnode")

    def test_drop_counts_discards_and_spares_vl15(self):
        self.up(TWO, "fdrop")
        f = ("--fabric", "fdrop")
        out = self.json_of("link", "drop", "sw1:8", "10%", "--seed", "7",
                           *f)["link"]
        self.assertEqual((out[0]["node"], out[0]["drop_ppm"]), ("sw1", 100000))
        self.assertEqual(out[1]["drop_ppm"], 0)  # the loss is one-way
        discards = []
        for _ in range(2):
            self.ibemu("counters", "--reset", *f, check=0)
            t = self.ibemu("traffic", "uniform", "--duration", "20us", *f)
            # A study has no retransmission: it reports the loss.
            self.assertFails(t, 1, "drop data packets")
            c = self.counters("fdrop")
            sent = c[("sw1", 8)]["xmit_pkts"]
            lost = c[("sw1", 8)]["xmit_discards"]
            self.assertGreater(sent, 100)
            # Seeded: about 10%, and only where it was set.
            self.assertTrue(0.04 * sent < lost < 0.2 * sent, (lost, sent))
            others = sum(v["xmit_discards"] for k, v in c.items()
                         if k != ("sw1", 8))
            self.assertEqual(others, 0)
            discards.append(lost)
            # Same seed, same losses: set it again for the second run.
            self.ibemu("link", "drop", "sw1:8", "0.1", "--seed", "7", *f,
                       check=0)
        self.assertEqual(discards[0], discards[1])
        # Management packets on VL15 are never dropped: directed-route
        # SMPs from hca1 across sw1:8 to sw2 all come back.
        env = tool_env(self.env)
        for tid in range(5):
            p = self.ibemu("exec", "--fabric", "fdrop", "--host", "hca1",
                           "--", CLIENT, "smp", "1,8", env=env, check=0)
            got = fields(p.stdout)
            self.assertEqual((got["recv"], got["status"]), ("0", "0"), p.stdout)
            self.assertEqual(got["local_port"], "8")
        # Rate 0 turns it off: a study completes and loses nothing.
        self.ibemu("link", "drop", "sw1:8", "0", *f, check=0)
        self.ibemu("counters", "--reset", *f, check=0)
        t = self.json_of("traffic", "uniform", "--duration", "5us", *f)
        self.assertEqual(t["summary"]["bytes"], t["summary"]["msgs"] * 65536)
        self.assertEqual(self.counters("fdrop")[("sw1", 8)]["xmit_discards"],
                         0)
        self.down("fdrop")

    def test_bad_usage(self):
        self.up(TWO, "fbad")
        f = ("--fabric", "fbad")
        self.assertFails(self.ibemu("link", "drop", "sw1:8", "2", *f), 2,
                         "bad RATE")
        self.assertFails(self.ibemu("link", "drop", "sw1:8", *f), 2, "usage")
        self.assertFails(self.ibemu("link", "down", "sw1:8", "--seed", "3",
                                    *f), 2, "does not apply")
        self.assertFails(self.ibemu("link", "down", "nosuch:1", *f), 1,
                         "no node named 'nosuch'")
        self.assertFails(self.ibemu("link", "down", "sw1:3", *f), 1,
                         "not cabled")
        self.assertFails(self.ibemu("link", "down", "sw1:9", *f), 2,
                         "ports 1..8")
        self.assertFails(self.ibemu("link", "down", "sw1", *f), 2,
                         "expected NODE:PORT")
        self.assertFails(self.ibemu("link", "sideways", "sw1:8", *f), 2,
                         "sideways")
        self.down("fbad")


if __name__ == "__main__":
    main()
