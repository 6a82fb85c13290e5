# SPDX-License-Identifier: MIT
"""rdma_cm through ibemu's librdmacm.so.1 (rdmacm/README.md): every HCA port
has an address in 127.0.0.0/8 (ibemu nodes shows them), a program resolves
another host's address and its route by a real SA PathRecord query to the
subnet's SM (ibemu-sm and OpenSM), with the SM's SL, MTU and LIDs, in the
same virtual time on every run; an address no HCA has is ADDR_ERROR; and
an address no HCA has is ADDR_ERROR for Debian's ucmatose too (the CM
protocol: test_rdmacm_cm.py)."""

import errno
import os
import re
import signal
import struct
import time

from harness import IbemuTestCase, OpenSMRunner, main, pid_alive, topology
from sessproto import ADDR_QUERY, ERROR, SessionClient, addr_query, hdr

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
CLIENT = os.path.join(BUILD, "tests", "rdmacm-client")
EHOSTUNREACH = 113
ETIMEDOUT = 110


def results(out):
    """The client's key=value pairs (several on a line)."""
    return dict(re.findall(r"(\w+)=(\S+)", out))


def plan_ip(index, port=1):
    """topologies/README.md's plan: 127.10.0.0 + 16 * index + port."""
    v = 0x7F0A0000 + 16 * index + port
    return ".".join(str(v >> s & 0xFF) for s in (24, 16, 8, 0))


class RdmaCmTest(OpenSMRunner, SessionClient, IbemuTestCase):
    def run_on(self, fabric, host, *argv, check=None):
        return self.ibemu("exec", "--fabric", fabric, "--host", host, "--",
                          *argv, env=self.tool_env, check=check, timeout=60)

    def client(self, fabric, host, dst):
        p = self.run_on(fabric, host, CLIENT, dst)
        r = results(p.stdout)
        self.assertNotIn("FAIL", p.stdout, p.stdout + p.stderr)
        self.assertEqual(r.get("failures"), "0", p.stdout + p.stderr)
        # rdma_get_devices: the process's HCA, under its topology name.
        self.assertEqual((r["devices"], r["name"]), ("1", host))
        return r

    def lids(self, fabric):
        return {p["node"]: p["lid"] for p in
                self.json_of("ports", "--fabric", fabric)["ports"]
                if p["lid"]}

    def counters(self, fabric, node):
        return self.json_of("counters", node, "--fabric", fabric)[
            "counters"][0]

    def saquery_path(self, fabric, host, slid, dlid):
        out = self.run_on(fabric, host, "saquery", "PR", "--slid",
                          str(slid), "--dlid", str(dlid), check=0).stdout
        self.assertEqual(out.count("PathRecord dump"), 1, out)
        got = {k: int(re.search(rf"\n\s*{k}\.+(\S+)", out).group(1), 0)
               for k in ("sl", "mtu", "dlid", "slid")}
        got["mtu"] &= 0x3F  # saquery prints the selector bits with it
        return got

    def check_routes(self, fabric, src, sm_host):
        """Resolves every other HCA from 'src' and checks the path records
        against the SM's own answer (saquery) and 'ibemu ports'."""
        nodes = self.json_of("nodes", "--fabric", fabric, "--type",
                             "hca")["nodes"]
        lid = self.lids(fabric)
        sls = set()
        for n in nodes:
            if n["name"] == src:
                continue
            before = self.counters(fabric, src)
            sm_before = self.counters(fabric, sm_host)
            r = self.client(fabric, src, n["name"])
            self.assertEqual(r["addr_event"], "RDMA_CM_EVENT_ADDR_RESOLVED")
            self.assertEqual(r["route_event"],
                             "RDMA_CM_EVENT_ROUTE_RESOLVED")
            self.assertEqual(r["dst"], n["ip"])
            self.assertEqual(int(r["dlid"]), lid[n["name"]])
            self.assertEqual(int(r["slid"]), lid[src])
            sa = self.saquery_path(fabric, src, lid[src], lid[n["name"]])
            self.assertEqual((int(r["sl"]), int(r["mtu"])),
                             (sa["sl"], sa["mtu"]))
            # The SL and MTU reach the QP moved to RTR.
            self.assertEqual((int(r["qp_sl"]), int(r["qp_mtu"]),
                              int(r["qp_dlid"])),
                             (sa["sl"], sa["mtu"], lid[n["name"]]))
            # No listener there: rdma_connect sends its REQ and returns.
            self.assertNotIn("connect_errno", r)
            sls.add(int(r["sl"]))
            # The query and its answer crossed the source's port, and the
            # SM's port took the query.
            after = self.counters(fabric, src)
            self.assertGreaterEqual(after["xmit_pkts"] - before["xmit_pkts"],
                                    1)
            self.assertGreaterEqual(after["rcv_pkts"] - before["rcv_pkts"],
                                    1)
            self.assertGreaterEqual(self.counters(fabric, sm_host)[
                "rcv_pkts"] - sm_before["rcv_pkts"], 1)
        return sls

    def test_addresses_shown_and_declared(self):
        """The plan's addresses in 'ibemu nodes' (table and JSON), and an
        ip: of the YAML, one per port."""
        path = os.path.join(self.rundir, "ips.yaml")
        with open(path, "w") as f:
            f.write("switches: [{name: sw, ports: 4}]\n"
                    "hcas: [{name: a}, {name: b, ports: 2, ip: 127.3.0.1},"
                    " {name: c}]\n"
                    "links: [[sw:1, a:1], [sw:2, b:1], [sw:3, c:1]]\n")
        self.up(path, "rip")
        nodes = {n["name"]: n for n in
                 self.json_of("nodes", "--fabric", "rip")["nodes"]}
        self.assertEqual(nodes["a"]["ip"], plan_ip(0))
        self.assertEqual(nodes["b"]["ip"], "127.3.0.1,127.3.0.2")
        self.assertEqual(nodes["c"]["ip"], plan_ip(2, 1))
        self.assertIsNone(nodes["sw"]["ip"])
        table = self.ibemu("nodes", "--fabric", "rip", check=0).stdout
        self.assertRegex(table, r"\bIP\b")
        self.assertRegex(table, r"\bc\s+hca.*127\.10\.0\.33")
        # rdma_getaddrinfo and rdma_resolve_addr find b's second port
        # too, by its address, as IPv4-mapped IPv6 and as its GID.
        guid = [p["guid"] for p in
                self.json_of("ports", "b", "--fabric", "rip")["ports"]
                if p["port"] == 2][0]
        g = int(guid, 16)
        gid = "fe80::" + ":".join(f"{g >> s & 0xFFFF:x}"
                                  for s in (48, 32, 16, 0))
        for dst in ("127.3.0.2", "::ffff:127.3.0.2", gid, "ib:" + gid, "b"):
            r = results(self.run_on("rip", "a", CLIENT, dst).stdout)
            self.assertEqual(r["addr_event"], "RDMA_CM_EVENT_ADDR_RESOLVED",
                             dst)
        self.down("rip")

    def test_routes_from_ibemu_sm(self):
        """dor on a torus: path records with the SM's SL (1 on some
        paths), its MTU and the LIDs 'ibemu ports' shows, the SL in the
        QP moved to RTR, and the same virtual time on two runs."""
        self.up(topology("torus-2d-4x4.yaml"), "rcm", "--routing", "dor")
        sls = self.check_routes("rcm", "hca06", "hca01")
        self.assertIn(1, sls)
        self.assertIn(0, sls)
        times = {self.client("rcm", "hca06", "hca01")["route_vt_ps"]
                 for _ in range(2)}
        self.assertEqual(len(times), 1, times)
        self.assertGreater(int(times.pop()), 0)
        self.down("rcm")

    def test_routes_from_opensm(self):
        """The same query answered by OpenSM, resident on hca01."""
        fabric = "rcmo"
        self.up(topology("two-switch.yaml"), fabric, "--sm", "none")
        sm, _ = self.resident_opensm(fabric, "hca1")
        try:
            self.check_routes(fabric, "hca3", "hca1")
        finally:
            self.stop_opensm(sm)
        self.down(fabric)

    def test_errors(self):
        """An address no HCA has: ADDR_ERROR, -EHOSTUNREACH, as the
        kernel's; a name the fabric lacks: getaddrinfo's EAI_NONAME."""
        self.up(topology("two-switch.yaml"), "rce")
        r = self.client("rce", "hca1", "127.99.0.1")
        self.assertEqual(r["addr_event"], "RDMA_CM_EVENT_ADDR_ERROR")
        self.assertEqual(int(r["status"]), -EHOSTUNREACH)
        self.assertNotIn("route_event", r)
        p = self.run_on("rce", "hca1", CLIENT, "nosuchhost")
        self.assertEqual(results(p.stdout)["getaddrinfo"], "-2")
        self.down("rce")

    def test_route_timeout(self):
        """No SM answers (ibemu-sm stopped): ROUTE_ERROR -ETIMEDOUT once
        the query's timeout has passed in virtual time, the same on two
        runs."""
        self.up(topology("two-switch.yaml"), "rct")
        sm = self.json_of("sm", "status", "--fabric", "rct")["pid"]
        os.kill(sm, signal.SIGTERM)
        end = time.time() + 10
        while pid_alive(sm) and time.time() < end:
            time.sleep(0.05)
        times = set()
        for _ in range(2):
            p = self.run_on("rct", "hca3", CLIENT, "hca2", "500")
            r = results(p.stdout)
            self.assertEqual(r["route_event"], "RDMA_CM_EVENT_ROUTE_ERROR",
                             p.stdout)
            self.assertEqual(int(r["status"]), -ETIMEDOUT)
            times.add(int(r["route_vt_ps"]))
        self.assertEqual(len(times), 1, times)
        self.assertGreaterEqual(times.pop(), 500 * 10**9)
        self.down("rct")

    def addr_call(self, fabric, payload):
        s = self.sess(fabric)
        try:
            s.send(hdr(ADDR_QUERY, len(payload)) + payload)
            return self.reply(s)
        finally:
            s.close()

    def test_addr_query_raw(self):
        """ADDR_QUERY on sess.sock: an address, a host's port 2, and
        what the daemon refuses (a bad length, an unterminated name, an
        address nobody has) with an ERROR, serving on."""
        path = os.path.join(self.rundir, "aq.yaml")
        with open(path, "w") as f:
            f.write("switches: [{name: sw, ports: 4}]\n"
                    "hcas: [{name: a}, {name: b, ports: 2}]\n"
                    "links: [[sw:1, a:1], [sw:2, b:1], [sw:3, b:2]]\n")
        self.up(path, "raq")
        lid = {(p["node"], p["port"]): p["lid"] for p in
               self.json_of("ports", "--fabric", "raq")["ports"]}
        type_, status, body = self.addr_call(
            "raq", addr_query(ip=0x7F0A0012))  # 127.10.0.18: b port 2
        self.assertEqual((type_, status, len(body)), (ADDR_QUERY, 0, 96))
        host, guid, _, ip, port, l, nports = struct.unpack(
            "=64sQQIIHH4x", body)
        self.assertEqual((host.rstrip(b"\0"), ip, port, l, nports),
                         (b"b", 0x7F0A0012, 2, lid[("b", 2)], 2))
        type_, status, body = self.addr_call("raq", addr_query("b", port=2))
        self.assertEqual((type_, status), (ADDR_QUERY, 0))
        self.assertEqual(struct.unpack_from("=I", body, 80)[0], 0x7F0A0012)
        for payload, want in ((addr_query(ip=0x7F630001), -errno.ENOENT),
                              (addr_query("sw"), -errno.ENOENT),
                              (b"x" * 64 + addr_query()[64:],
                               -errno.EINVAL),
                              (addr_query()[:95], -errno.EPROTO)):
            type_, status, _ = self.addr_call("raq", payload)
            self.assertEqual((type_, status), (ERROR, want), payload)
        self.ibemu("status", "--fabric", "raq", check=0)
        self.down("raq")

    def test_rdmacm_utils_addr_error(self):
        """Debian's ucmatose to an address no HCA has: ADDR_ERROR with
        -EHOSTUNREACH (the CM protocol's own tests: test_rdmacm_cm.py)."""
        self.up(topology("two-switch.yaml"), "rcu")
        p = self.run_on("rcu", "hca1", "ucmatose", "-s", "127.99.0.1")
        self.assertIn("RDMA_CM_EVENT_ADDR_ERROR, error: -113", p.stdout)
        self.assertEqual(p.returncode, 256 - EHOSTUNREACH)
        self.down("rcu")

if __name__ == "__main__":
    main()
