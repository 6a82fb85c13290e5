# SPDX-License-Identifier: MIT
"""The real Debian OpenSM brings ibemu fabrics up, and the real
infiniband-diags see exactly the fabric that was declared: ibnetdiscover's
nodes and links against the YAML, smpquery against 'ibemu nodes/ports',
ibroute and ibtracert against 'ibemu route', perfquery against 'ibemu
counters' after traffic. Every program runs unmodified under 'ibemu exec',
through ibemu's libibumad.so.3."""

import os
import re
import subprocess
import time

import yaml

from harness import (IBEMU, IbemuTestCase, OpenSMRunner, main, read,
                     topology)

SM = os.path.join(os.path.dirname(IBEMU), "ibemu-sm")

SHIPPED = ["single-switch-8.yaml", "two-switch.yaml", "fat-tree-2l-36.yaml",
           "torus-2d-4x4.yaml", "dragonfly-small.yaml", "fat-tree-3l-k8.yaml",
           "fat-tree-2l-1152.yaml"]
# OpenSM's min-hop routes on one VL deadlock on rings (its own docs say to
# use updn or a torus engine there); our check here is that it comes up.

def parse_ibnetdiscover(text):
    """Nodes {guid: (type, nports, desc)} and links {frozenset of (guid, port)}
    from ibnetdiscover's topology output."""
    nodes, links = {}, set()
    cur = None
    for line in text.splitlines():
        m = re.match(r'^(Switch|Ca)\s+(\d+)\s+"[SH]-([0-9a-f]+)"\s+# "([^"]*)"',
                     line)
        if m:
            cur = int(m.group(3), 16)
            nodes[cur] = (m.group(1), int(m.group(2)), m.group(4))
            continue
        m = re.match(r'^\[(\d+)\](?:\([0-9a-f]+\))?\s+"[SH]-([0-9a-f]+)"\[(\d+)\]',
                     line)
        if m and cur is not None:
            links.add(frozenset([(cur, int(m.group(1))),
                                 (int(m.group(2), 16), int(m.group(3)))]))
    return nodes, links


class OpenSMTest(OpenSMRunner, IbemuTestCase):
    def tool(self, fabric, *cmd, host=None, check=0, timeout=120):
        args = ["exec", "--fabric", fabric]
        if host:
            args += ["--host", host]
        return self.ibemu(*args, "--", *cmd, check=check, env=self.tool_env,
                          timeout=timeout)

    def opensm(self, fabric, *extra):
        """Runs OpenSM once on the fabric; returns its log."""
        argv, env, log = self.opensm_args(fabric, None, "--once", *extra)
        start = time.time()
        p = subprocess.run(argv, env=env, capture_output=True, text=True,
                           timeout=600)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        text = read(log)
        self.assertIn("SUBNET UP", text,
                      f"OpenSM did not bring {fabric} up in "
                      f"{time.time() - start:.1f} s:\n{text[-3000:]}")
        errors = [line for line in text.splitlines() if " ERR " in line]
        self.assertEqual(errors[:5], [], f"OpenSM logged {len(errors)} errors "
                         f"on {fabric}")
        return text

    def check_all_active(self, fabric):
        ports = self.json_of("ports", "--fabric", fabric)["ports"]
        lids = {}
        for p in ports:
            if p["peer_node"] is None:
                self.assertEqual((p["phys_state"], p["state"]),
                                 ("Polling", "Down"))
                continue
            self.assertEqual((p["phys_state"], p["state"]), ("LinkUp", "Active"),
                             f"{p['node']}:{p['port']}")
            self.assertTrue(p["lid"], f"{p['node']}:{p['port']} has no LID")
            lids.setdefault(p["lid"], set()).add(p["node"])
        # One LID per HCA port, one per switch (all its ports show it).
        for lid, owners in lids.items():
            self.assertEqual(len(owners), 1, f"LID {lid} on {owners}")
        return ports

    def test_subnet_up_on_every_shipped_fabric(self):
        for name in SHIPPED:
            with self.subTest(fabric=name):
                fabric = name.split(".")[0]
                self.up(topology(name), fabric, "--sm", "none")
                self.opensm(fabric)
                ports = self.check_all_active(fabric)
                types = {n["name"]: n["type"] for n in
                         self.json_of("nodes", "--fabric", fabric)["nodes"]}
                hcas = [p for p in ports if types[p["node"]] == "hca"
                        and p["peer_node"] is not None]
                self.assertGreater(len(hcas), 1)
                # A few routes, end to end through OpenSM's LFTs.
                for a, b in ((0, -1), (1, len(hcas) // 2)):
                    src, dst = hcas[a], hcas[b]
                    self.ibemu("route", "--fabric", fabric,
                               f"{src['node']}:{src['port']}",
                               f"{dst['node']}:{dst['port']}", check=0)
                self.down(fabric)

    def test_routing_engines(self):
        # updn finds its roots itself on fat trees; on a torus or a
        # dragonfly every switch looks alike and it needs one (-a).
        cases = [("fat-tree-2l-36.yaml", "updn", False),
                 ("fat-tree-2l-36.yaml", "ftree", False),
                 ("fat-tree-3l-k8.yaml", "ftree", False),
                 ("torus-2d-4x4.yaml", "updn", True),
                 ("dragonfly-small.yaml", "updn", True)]
        for name, engine, root in cases:
            with self.subTest(fabric=name, engine=engine):
                fabric = f"{name.split('.')[0]}-{engine}"
                self.up(topology(name), fabric, "--sm", "none")
                extra = ["--routing_engine", engine]
                if root:
                    sw = next(n for n in self.json_of(
                        "nodes", "--fabric", fabric)["nodes"]
                        if n["type"] == "switch")
                    path = os.path.join(self.osm_root, fabric + ".roots")
                    with open(path, "w") as f:
                        f.write(sw["guid"] + "\n")
                    extra += ["--root_guid_file", path]
                log = self.opensm(fabric, *extra)
                # Not a fallback to min-hop: the engine itself configured.
                self.assertIn(f"{engine} tables configured on all switches",
                              log)
                self.check_all_active(fabric)
                # Deadlock-free engines carry all-to-all traffic to the end.
                self.ibemu("traffic", "--fabric", fabric, "shift",
                           "--duration", "20us", check=0, timeout=300)
                self.down(fabric)

    def test_diags_see_the_declared_fabric(self):
        path = topology("fat-tree-2l-36.yaml")
        self.up(path, "ft", "--sm", "none")
        self.opensm("ft")
        nodes = {n["name"]: n for n in self.json_of("nodes", "--fabric", "ft")["nodes"]}
        ports = self.json_of("ports", "--fabric", "ft")["ports"]
        links = self.json_of("links", "--fabric", "ft")["links"]
        guid = {name: int(n["guid"], 16) for name, n in nodes.items()}

        # ibnetdiscover: every node with its type, ports and description,
        # every cable with both ends.
        out = self.tool("ft", "ibnetdiscover", host="hca01").stdout
        seen_nodes, seen_links = parse_ibnetdiscover(out)
        expected_nodes = {guid[name]: ("Switch" if n["type"] == "switch" else "Ca",
                                       n["ports"], n["description"])
                          for name, n in nodes.items()}
        self.assertEqual(seen_nodes, expected_nodes)
        expected_links = {frozenset([(guid[l["a_node"]], l["a_port"]),
                                     (guid[l["b_node"]], l["b_port"])])
                          for l in links}
        self.assertEqual(seen_links, expected_links)
        with open(path) as f:
            declared = yaml.safe_load(f)
        self.assertEqual(len(seen_links), len(links))
        self.assertEqual(declared.get("generate", {}).get("hosts"),
                         sum(1 for v in seen_nodes.values() if v[0] == "Ca"))

        # smpquery by LID: what the agents answer is what the model holds.
        lid = {p["node"]: p["lid"] for p in ports if p["lid"]}
        for name in ("hca07", "leaf01", "spine02"):
            n = nodes[name]
            out = self.tool("ft", "smpquery", "nodeinfo", str(lid[name])).stdout
            self.assertRegex(out, rf"Guid:\.+0x{guid[name]:016x}")
            self.assertRegex(out, rf"NumPorts:\.+{n['ports']}\b")
            out = self.tool("ft", "smpquery", "nodedesc", str(lid[name])).stdout
            self.assertIn(n["description"], out)
            out = self.tool("ft", "smpquery", "portinfo", str(lid[name]),
                            "1").stdout
            self.assertRegex(out, r"LinkState:\.+Active")
            self.assertRegex(out, r"PhysLinkState:\.+LinkUp")
            if n["type"] == "switch":
                out = self.tool("ft", "smpquery", "switchinfo",
                                str(lid[name])).stdout
                self.assertRegex(out, r"LinearFdbCap:\.+49152")
                top = int(re.search(r"LinearFdbTop:\.+(\d+)", out).group(1))
                self.assertGreaterEqual(top, max(lid.values()))
            else:
                out = self.tool("ft", "smpquery", "portinfo", str(lid[name]),
                                "1").stdout
                self.assertRegex(out, rf"Lid:\.+{lid[name]}\b")
        self.down("ft")

    def test_ibroute_and_ibtracert_follow_ibemu_route(self):
        self.up(topology("fat-tree-2l-36.yaml"), "rt", "--sm", "none")
        self.opensm("rt")
        nodes = self.json_of("nodes", "--fabric", "rt")["nodes"]
        ports = self.json_of("ports", "--fabric", "rt")["ports"]
        lid = {p["node"]: p["lid"] for p in ports if p["lid"]}
        switches = [n["name"] for n in nodes if n["type"] == "switch"]
        hcas = [n["name"] for n in nodes if n["type"] == "hca"]

        # ibroute: each switch's LFT as OpenSM programmed it.
        lft = {}
        for sw in switches:
            out = self.tool("rt", "ibroute", str(lid[sw])).stdout
            lft[sw] = {int(m.group(1), 16): int(m.group(2)) for m in
                       re.finditer(r"^(0x[0-9a-f]+) (\d+) :", out, re.M)}
            # Every HCA's LID has an entry.
            for h in hcas:
                self.assertIn(lid[h], lft[sw], f"{sw} has no entry for {h}")

        for src, dst in ((hcas[0], hcas[-1]), (hcas[3], hcas[20]),
                         (hcas[10], hcas[11])):
            hops = self.json_of("route", "--fabric", "rt", src, dst)["route"]
            for h in hops[1:-1]:
                self.assertEqual(h["out_port"], lft[h["node"]][lid[dst]],
                                 f"{src}->{dst} at {h['node']}")
            # ibtracert walks the same switches.
            out = self.tool("rt", "ibtracert", str(lid[src]),
                            str(lid[dst])).stdout
            walked = re.findall(r'"([^"]+)"', out)
            names = [re.sub(r" HCA-\d+$", "", w) for w in walked]
            self.assertEqual([n for n in names if n in switches],
                             [h["node"] for h in hops[1:-1]], out)

        # Traffic follows OpenSM's LFTs: one flow hca01 -> hca36 (incast
        # with one source: the host after the hotspot) moves packets out
        # of exactly the switch ports on that route, and no other.
        hops = self.json_of("route", "--fabric", "rt", "hca01", "hca36")["route"]
        on_route = {(h["node"], h["out_port"]) for h in hops[1:-1]}
        self.assertEqual(len(on_route), 3)
        self.ibemu("counters", "--fabric", "rt", "--reset", check=0)
        self.ibemu("traffic", "--fabric", "rt", "incast", "--hotspot", "hca36",
                   "--sources", "1", "--duration", "20us", check=0)
        sent = {}
        for c in self.json_of("counters", "--fabric", "rt")["counters"]:
            if c["node"] not in switches:
                continue
            if (c["node"], c["port"]) in on_route:
                sent[(c["node"], c["port"])] = c["xmit_pkts"]
            else:
                self.assertEqual(c["xmit_pkts"], 0, c)
        # Every packet crossed every hop once.
        self.assertEqual(len(set(sent.values())), 1, sent)
        self.assertGreater(next(iter(sent.values())), 0)
        self.down("rt")

    def test_perfquery_reads_the_counters_traffic_left(self):
        self.up(topology("two-switch.yaml"), "pq", "--sm", "none")
        self.opensm("pq")
        self.ibemu("traffic", "--fabric", "pq", "shift", "--duration", "50us",
                   check=0)
        cnt = {(c["node"], c["port"]): c for c in
               self.json_of("counters", "--fabric", "pq")["counters"]}
        lid = {p["node"]: p["lid"] for p in
               self.json_of("ports", "--fabric", "pq")["ports"] if p["lid"]}
        # From hca1, ask hca3's PMA. perfquery first asks ClassPortInfo
        # (for the capability mask), then PortCountersExtended: by the time
        # the PMA reads, hca3's port has received both requests and sent
        # the first answer, each a MAD packet of 72 words (LRH..ICRC).
        out = self.tool("pq", "perfquery", "-x", str(lid["hca3"]), "1",
                        host="hca1").stdout
        got = {k: int(v) for k, v in re.findall(r"^(\w+):\.+(\d+)$", out, re.M)}
        c = cnt[("hca3", 1)]
        self.assertGreater(c["xmit_data"], 0)
        self.assertEqual(got["PortXmitData"], c["xmit_data"] + 72)
        self.assertEqual(got["PortXmitPkts"], c["xmit_pkts"] + 1)
        self.assertEqual(got["PortRcvData"], c["rcv_data"] + 2 * 72)
        self.assertEqual(got["PortRcvPkts"], c["rcv_pkts"] + 2)
        self.down("pq")

    def test_opensm_standby_to_ibemu_sm(self):
        """ibemu-sm master (priority 10, started by 'ibemu up'), the real
        OpenSM at priority 1 on another host: OpenSM finds the master by
        SMInfo and stays standby; when ibemu-sm is killed OpenSM's polls
        (directed-route Get(SMInfo), which ibemu-sm answers) go
        unanswered and it takes over as master."""
        self.up(topology("two-switch.yaml"), "sb", "--sm", "none")
        ibemu_sm = subprocess.Popen(
            [IBEMU, "exec", "--fabric", "sb", "--host", "hca1", "--", SM,
             "--priority", "10", "--sweep", "200"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=self.tool_env)
        try:
            self.assertIn("ibemu-sm:", ibemu_sm.stdout.readline())
            while "SUBNET UP" not in ibemu_sm.stdout.readline():
                pass
            conf = os.path.join(self.osm_root, "standby.conf")
            with open(conf, "w") as f:
                f.write("sminfo_polling_timeout 300\n"
                        "polling_retry_number 2\n")
            argv, env, log = self.opensm_args("sb", "hca3", "-d", "2", "-p",
                                              "1")
            argv[argv.index("/dev/null")] = conf
            osm = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
            self.residents.append(osm)
            self.wait_log(log, "Entering STANDBY state")
            self.assertNotIn("SUBNET UP", read(log))
        finally:
            ibemu_sm.kill()
            ibemu_sm.communicate(timeout=30)
        self.wait_log(log, "Entering MASTER state")
        self.wait_log(log, "SUBNET UP")
        self.stop_opensm(osm)
        self.down("sb")

    def sminfo_of(self, fabric, host, *lid):
        """(guid, priority, state) from Debian's sminfo on 'host': of the
        master the port's MasterSMLID names, or of the SM at 'lid'."""
        out = self.tool(fabric, "sminfo", *map(str, lid), host=host).stdout
        m = re.search(r"sm guid (0x[0-9a-f]+), activity count \d+ priority "
                      r"(\d+) state (\d+)", out)
        self.assertTrue(m, out)
        return int(m.group(1), 16), int(m.group(2)), int(m.group(3))

    def test_opensm_p15_takes_over_from_ibemu_sm(self):
        """IBA 14.4 handover: ibemu-sm master (started by 'ibemu up', at
        priority 0), the real OpenSM started at priority 15 on another
        host enters standby and tells the master (Trap 144); ibemu-sm's
        next heavy sweep finds an SM in standby that outranks it and hands
        the mastership over (Set(SMInfo) HANDOVER), then stays standby,
        polling it. sminfo names OpenSM master at priority 15, and ibemu-sm
        (asked at its LID) standby. OpenSM stopped, ibemu-sm's polls go
        unanswered and it is master again."""
        self.up(topology("two-switch.yaml"), "ho", "--sweep", "200")
        ports = {p["node"]: p for p in
                 self.json_of("ports", "--fabric", "ho")["ports"]}
        ibemu_guid = int(ports["hca1"]["guid"], 16)  # where ibemu-sm runs
        osm_guid = int(ports["hca3"]["guid"], 16)
        self.assertEqual(self.sminfo_of("ho", "hca2"), (ibemu_guid, 0, 3))
        argv, env, log = self.opensm_args("ho", "hca3", "-d", "2", "-p",
                                          "15")
        osm = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        self.residents.append(osm)
        try:
            self.wait_log(log, "Entering MASTER state", seconds=30)
            self.wait_log(log, "SUBNET UP")
            st = self.json_of("sm", "status", "--fabric", "ho")
            self.assertEqual((st["state"], st["master_guid"],
                              st["master_priority"], st["handovers"]),
                             ("standby", f"0x{osm_guid:016x}", 15, 1), st)
            self.assertEqual(self.sminfo_of("ho", "hca2"), (osm_guid, 15, 3))
            lids = {p["node"]: p["lid"] for p in
                    self.json_of("ports", "--fabric", "ho")["ports"]}
            self.assertEqual(self.sminfo_of("ho", "hca2", lids["hca1"]),
                             (ibemu_guid, 0, 2))
            # ibemu-sm repressed OpenSM's Trap 144 (IBA 14.2.5.1) and the
            # TrapRepress reached OpenSM's trap agent, not hca3's SMA:
            # OpenSM's trap did not time out (ERR 3113).
            self.wait_log(log, "SUBNET UP")
            text = read(log)
            self.assertNotIn("ERR 3113", text, text[-3000:])
        finally:
            self.stop_opensm(osm)
        state = lambda: self.json_of("sm", "status", "--fabric",
                                     "ho")["state"]
        self.wait_until("ibemu-sm master again", lambda: state() == "master")
        self.wait_until("ibemu-sm's port named master by sminfo",
                        lambda: self.sminfo_of("ho", "hca2") ==
                        (ibemu_guid, 0, 3))
        self.down("ho")

    def test_ibemu_sm_p15_takes_over_from_opensm(self):
        """The other way round: the real OpenSM master at priority 0,
        ibemu-sm started at priority 15 on another host. Discovering, it
        finds a master and becomes standby (as OpenSM does), and tells the
        master, which ranks below it, by Trap 144; OpenSM's heavy sweep
        hands over (Set(SMInfo) HANDOVER), ibemu-sm answers, sweeps as
        master and brings the subnet up; OpenSM enters standby."""
        self.up(topology("two-switch.yaml"), "hb", "--sm", "none")
        osm, log = self.resident_opensm("hb", "hca1", "-p", "0")
        ports = {p["node"]: p for p in
                 self.json_of("ports", "--fabric", "hb")["ports"]}
        osm_guid = int(ports["hca1"]["guid"], 16)
        ibemu_guid = int(ports["hca3"]["guid"], 16)
        self.assertEqual(self.sminfo_of("hb", "hca2"), (osm_guid, 0, 3))
        sm = subprocess.Popen(
            [IBEMU, "exec", "--fabric", "hb", "--host", "hca3", "--", SM,
             "--priority", "15", "--sweep", "200"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=self.tool_env)
        try:
            lines = []
            while not lines or "SUBNET UP" not in lines[-1]:
                lines.append(sm.stdout.readline())
                self.assertTrue(lines[-1], "".join(lines))
            text = "".join(lines)
            self.assertRegex(text, r"standby: the master SM \(port GUID "
                             rf"0x{osm_guid:016x}, LID \d+\) ranks below "
                             r"this one: asked to hand over \(Trap 144\)")
            self.assertIn("the master handed over: taking over", text)
            self.wait_log(log, "Entering STANDBY state")
            self.assertEqual(self.sminfo_of("hb", "hca2"),
                             (ibemu_guid, 15, 3))
            lids = {p["node"]: p["lid"] for p in
                    self.json_of("ports", "--fabric", "hb")["ports"]}
            self.assertEqual(self.sminfo_of("hb", "hca2", lids["hca1"]),
                             (osm_guid, 0, 2))
        finally:
            sm.terminate()
            sm.communicate(timeout=30)
        self.stop_opensm(osm)
        self.down("hb")

    def test_running_sm_holds_issm_and_answers_sminfo(self):
        """A resident OpenSM: IsSM on its port while it runs (it holds
        the port's issm device open), SMInfo answered by OpenSM itself
        through the library, IsSM cleared when it exits."""
        self.up(topology("two-switch.yaml"), "sm", "--sm", "none")
        sm, log = self.resident_opensm("sm", "hca1")
        try:
            lid = {p["node"]: p["lid"] for p in
                   self.json_of("ports", "--fabric", "sm")["ports"]}
            cap = self.capmask("sm", lid["hca1"])
            self.assertTrue(cap & 0x2, f"IsSM not set: {cap:#x}")
            out = self.tool("sm", "sminfo", host="hca3").stdout
            self.assertIn(f"sm lid {lid['hca1']} ", out)
            self.assertIn("SMINFO_MASTER", out)

            # A link reset on sw2 (ibportstate, a Set(PortInfo)): sw2
            # raises Trap 128 to the SM, which represses it, sweeps again
            # and brings the port back to Active.
            self.tool("sm", "ibportstate", str(lid["sw2"]), "1", "reset",
                      host="hca2")
            text = self.wait_log(log, "SUBNET UP", count=2)
            self.assertIn("num:128 (Link state change) Producer:2 (Switch) "
                          f"from LID:{lid['sw2']}", text)
            self.assertGreaterEqual(text.count("SUBNET UP"), 2, text[-2000:])
            state = {(p["node"], p["port"]): p["state"] for p in
                     self.json_of("ports", "--fabric", "sm")["ports"]}
            self.assertEqual(state[("sw2", 1)], "Active")
            self.assertEqual(state[("hca3", 1)], "Active")
        finally:
            self.stop_opensm(sm)
        self.assertFalse(self.capmask("sm", lid["hca1"]) & 0x2)
        self.down("sm")

    def capmask(self, fabric, lid):
        out = self.tool(fabric, "smpquery", "portinfo", str(lid), "1",
                        host="hca2").stdout
        return int(re.search(r"CapMask:\.+(0x[0-9a-f]+)", out).group(1), 16)


if __name__ == "__main__":
    main()
