# SPDX-License-Identifier: MIT
"""Every shipped fabric starts, and 'ports --json' answers exactly the
cabling declared: for hand-written files the links read from the YAML by an
independent parser (PyYAML), for generated ones the counts worked out by
hand from the generator's rules and the links of 'ibemu topo gen'."""

import glob
import os
import subprocess

import yaml

from harness import IBEMU, IbemuTestCase, SRC, main

# (switches, HCAs, links), computed by hand from each file's comments.
EXPECTED = {
    "single-switch-8": (1, 8, 8),
    "two-switch": (2, 4, 6),
    # 6 leaves x 6 hosts; 6 leaves x 6 uplinks to 3 spines.
    "fat-tree-2l-36": (9, 36, 36 + 36),
    # 32 edge, 32 agg, 16 core; hosts, edge-agg (8 pods x 16), agg-core (32 x 4).
    "fat-tree-3l-k8": (80, 128, 128 + 128 + 128),
    # 16 switches, 2 hosts each; a 4x4 torus has 2 links per switch.
    "torus-2d-4x4": (16, 32, 32 + 32),
    # 9 groups x 4 routers; hosts 72, intra-group 9 x 6, global 36 x 2 / 2.
    "dragonfly-small": (36, 72, 72 + 54 + 36),
    # 48 leaves x 24 hosts, 48 leaves x 24 uplinks.
    "fat-tree-2l-1152": (72, 1152, 1152 + 1152),
}


def endpoint(text):
    node, port = str(text).rsplit(":", 1)
    return node, int(port)


def link_key(a, b):
    return tuple(sorted([a, b]))


def declared_links(doc):
    links = set()
    for item in doc.get("links", []):
        if isinstance(item, list):
            a, b = item
        else:
            a, b = item["a"], item["b"]
        links.add(link_key(endpoint(a), endpoint(b)))
    return links


class ShippedFabricsTest(IbemuTestCase):
    def check_fabric(self, path):
        name = os.path.basename(path)[:-5]
        fabric = "it-" + name
        with open(path) as f:
            doc = yaml.safe_load(f)
        # ibemu up brings the subnet up through ibemu-sm alone.
        out = self.up(path, fabric).stdout
        self.assertIn(f"fabric {fabric}: subnet up through ibemu-sm", out)
        nodes = self.json_of("nodes", "--fabric", fabric)["nodes"]
        ports = self.json_of("ports", "--fabric", fabric)["ports"]
        links = self.json_of("links", "--fabric", fabric)["links"]

        switches = sum(1 for n in nodes if n["type"] == "switch")
        self.assertEqual((switches, len(nodes) - switches, len(links)),
                         EXPECTED[name], name)
        self.assertEqual(len(ports), sum(n["ports"] for n in nodes))

        # ports: every cabled port names its peer, and the peer names it back.
        by_port = {(p["node"], p["port"]): p for p in ports}
        from_ports = set()
        for p in ports:
            if p["peer_node"] is None:
                self.assertEqual((p["phys_state"], p["state"]), ("Polling", "Down"))
                continue
            # ibemu-sm brought every cabled port to Active.
            self.assertEqual((p["phys_state"], p["state"]), ("LinkUp", "Active"))
            self.assertIsNotNone(p["lid"])
            peer = by_port[(p["peer_node"], p["peer_port"])]
            self.assertEqual((peer["peer_node"], peer["peer_port"]),
                             (p["node"], p["port"]))
            from_ports.add(link_key((p["node"], p["port"]),
                                    (p["peer_node"], p["peer_port"])))
        from_links = {link_key((l["a_node"], l["a_port"]), (l["b_node"], l["b_port"]))
                      for l in links}
        self.assertEqual(from_ports, from_links)

        if "generate" in doc:
            gen = dict(doc["generate"])
            args = ["topo", "gen", gen.pop("kind")]
            for key, value in gen.items():
                args += ["--" + key, str(value)]
            out = self.ibemu(*args, check=0).stdout
            expected = declared_links(yaml.safe_load(out))
        else:
            expected = declared_links(doc)
        self.assertEqual(from_ports, expected, name)
        self.down(fabric)

    def test_every_shipped_fabric(self):
        files = sorted(glob.glob(os.path.join(SRC, "topologies", "*.yaml")))
        self.assertEqual({os.path.basename(f)[:-5] for f in files},
                         set(EXPECTED), "a shipped fabric without expectations")
        for path in files:
            with self.subTest(fabric=path):
                self.check_fabric(path)

    def test_route_follows_lfts(self):
        self.up(os.path.join(SRC, "topologies", "two-switch.yaml"), "route")
        hops = self.json_of("route", "hca1", "hca3:1")["route"]
        self.assertEqual([h["node"] for h in hops], ["hca1", "sw1", "sw2", "hca3"])
        self.assertEqual((hops[0]["in_port"], hops[0]["out_port"]), (None, 1))
        self.assertEqual(hops[1]["in_port"], 1)
        self.assertIn(hops[1]["out_port"], (7, 8))
        self.assertEqual(hops[2]["in_port"], hops[1]["out_port"])
        self.assertEqual((hops[2]["out_port"], hops[3]["in_port"]), (1, 1))
        self.assertEqual([h["hop"] for h in hops], [0, 1, 2, 3])
        p = self.ibemu("route", "hca1", "sw1", check=2)
        self.assertIn("both ends must be HCA ports", p.stderr)
        p = self.ibemu("route", "hca1", "nosuch:1", check=1)
        self.assertIn("route: no node named 'nosuch' in fabric", p.stderr)
        p = self.ibemu("route", "hca1", "hca3:9", check=2)
        self.assertIn("'hca3:9' is not a port of fabric", p.stderr)
        self.down("route")

    def test_without_sm(self):
        self.up(os.path.join(SRC, "topologies", "two-switch.yaml"), "noroutes",
                "--sm", "none")
        self.assertIsNone(self.json_of("status")["sm"])
        for p in self.json_of("ports")["ports"]:
            expected = ("Polling", "Down") if p["peer_node"] is None else ("LinkUp", "Init")
            self.assertEqual((p["phys_state"], p["state"]), expected)
            self.assertIsNone(p["lid"])
        p = self.ibemu("traffic", "shift", check=1)
        self.assertIn("hca1:1 is not configured (LID 0, Init): no subnet manager runs "
                      "('ibemu up FILE' starts ibemu-sm)", p.stderr)
        p = self.ibemu("route", "hca1", "hca3", check=1)
        self.assertIn("route: hca3 has no LID", p.stderr)
        p = self.ibemu("up", "x.yaml", "--routing", "bogus", check=2)
        self.assertIn("option '--routing' takes minhop, updown, ftree, dor or dfsssp, not 'bogus'",
                      p.stderr)
        p = self.ibemu("up", "x.yaml", "--sm", "opensm", check=2)
        self.assertIn("option '--sm' takes ibemu or none, not 'opensm'",
                      p.stderr)
        self.down("noroutes")

    def test_two_switch_details(self):
        self.up(os.path.join(SRC, "topologies", "two-switch.yaml"), "details")
        links = self.json_of("links")["links"]
        isl = [l for l in links if l["a_node"] == "sw1" and l["b_node"] == "sw2"]
        self.assertEqual(len(isl), 2)
        for l in isl:
            self.assertEqual((l["width"], l["speed"], l["rate_gbps"]),
                             ("4x", "HDR", 200))
            self.assertEqual((l["length_mm"], l["latency_ps"]), (5000, 25000))
        ports = self.json_of("ports", "hca1")["ports"]
        self.assertEqual(len(ports), 1)
        self.assertEqual((ports[0]["peer_node"], ports[0]["peer_port"]), ("sw1", 1))
        nodes = {n["name"]: n for n in self.json_of("nodes")["nodes"]}
        self.assertEqual(nodes["hca1"]["description"], "hca1 HCA-1")
        self.assertEqual(nodes["sw1"]["description"], "sw1")
        self.assertTrue(nodes["sw1"]["guid"].startswith("0x02ebe0"))
        text = self.ibemu("ports", "sw1", check=0).stdout.splitlines()
        self.assertEqual(text[0].split(), ["NODE", "PORT", "GUID", "LID", "WIDTH",
                                           "SPEED",
                                           "GBIT/S", "PHYS", "STATE", "PEER",
                                           "PEER_PORT"])
        self.assertEqual(len(text), 1 + 8)
        # Switch ports share the switch's LID. ibemu-sm (on hca1) gives
        # LIDs breadth-first from its own port, ports in increasing order
        # (sm/README.md): hca1 1, sw1 2, hca2 3, sw2 4, hca3 5, hca4 6.
        self.assertEqual({p["lid"] for p in self.json_of("ports", "sw1")["ports"]}, {2})
        self.assertEqual({p["lid"] for p in self.json_of("ports", "sw2")["ports"]}, {4})
        self.assertEqual(ports[0]["lid"], 1)
        self.assertEqual(self.json_of("ports", "hca4")["ports"][0]["lid"], 6)
        p = self.ibemu("ports", "nosuch", check=1)
        self.assertEqual(p.stderr, "ibemu: ports: no node named 'nosuch' "
                         "in fabric 'details'\n")
        self.down("details")


if __name__ == "__main__":
    main()
