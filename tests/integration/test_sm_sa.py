# SPDX-License-Identifier: MIT
"""Subnet Administration answered by ibemu-sm (sm/sa*.c): the real
saquery (infiniband-diags) asks a resident ibemu-sm for NodeRecords,
PortInfoRecords, LinkRecords, SwitchInfoRecords, SMInfoRecords and
PathRecords, and then asks the real OpenSM the same on the same fabric
(with the same LIDs): the fields both define agree. ServiceRecords and
MCMemberRecords are registered and joined with crafted SA MADs; a join
programs the switches' MulticastForwardingTables (read back with ibroute
-M), a leave clears them. Short and malformed SA MADs do not hurt it."""

import os
import re
import struct
import subprocess
import time

from harness import IBEMU, IbemuTestCase, OpenSMRunner, main, topology
from sessproto import OPEN, RECV, REGISTER, SEND, SessionClient, bind, hdr

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
SM = os.path.join(BUILD, "bin", "ibemu-sm")

SA_CLASS, SA_VERSION = 0x03, 2
GET, SET, GET_TABLE, DELETE = 0x01, 0x02, 0x12, 0x15
GET_RESP, GET_TABLE_RESP, DELETE_RESP = 0x81, 0x92, 0x95
SERVICE_RECORD, MCMEMBER_RECORD, NODE_RECORD = 0x31, 0x38, 0x11
QP1_QKEY = 0x80010000
SA_HDR = 56

# MCMemberRecord ComponentMask bits (IBA 15.2.5.17).
MC_MGID, MC_PORT_GID, MC_QKEY, MC_TCLASS, MC_PKEY = 0, 1, 2, 6, 7
MC_SL, MC_FLOW, MC_JOIN_STATE = 12, 13, 16
# ServiceRecord: ServiceID, ServiceGID, ServiceP_Key, ServiceName.
SR_ID, SR_GID, SR_PKEY, SR_NAME = 0, 1, 2, 6

MGID = bytes.fromhex("ff12a01cffff0000000000000000abcd")
SERVICE_ID = 0x1000000000abcdef


def bits(*ns):
    return sum(1 << n for n in ns)


def records(out, title):
    """saquery's dump: one dict per record, 'name....value' lines."""
    recs = []
    for chunk in out.split(title)[1:]:
        rec = {}
        for m in re.finditer(r"^\s*([A-Za-z_]\w*)[:.]*\.{2,}:?(.*)$", chunk,
                             re.M):
            rec.setdefault(m.group(1), m.group(2).strip())
        recs.append(rec)
    return recs


class SmSaTest(OpenSMRunner, SessionClient, IbemuTestCase):
    # --- running ibemu-sm, saquery, crafted SA MADs -------------------

    def start_sm(self, fabric, *args, host="hca1"):
        sm = subprocess.Popen(
            [IBEMU, "exec", "--fabric", fabric, "--host", host, "--", SM,
             "--sweep", "60000", *args], stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, env=self.tool_env)
        self.sms.append(sm)
        deadline = time.time() + 60
        seen = ""
        while time.time() < deadline:
            line = sm.stdout.readline()
            if not line:
                break
            seen += line
            if "SUBNET UP" in line:
                return sm
        self.fail(f"ibemu-sm did not come up:\n{seen}")

    def stop_sm(self, sm):
        sm.terminate()
        out, _ = sm.communicate(timeout=30)
        self.assertEqual(sm.returncode, 0, out)
        return out

    def setUp(self):
        super().setUp()
        self.sms = []

    def tearDown(self):
        for sm in self.sms:
            if sm.poll() is None:
                sm.kill()
                sm.communicate()
        super().tearDown()

    def saquery(self, fabric, *args, host="hca3"):
        p = self.ibemu("exec", "--fabric", fabric, "--host", host, "--",
                       "saquery", *args, env=self.tool_env, timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return p.stdout

    def lids(self, fabric):
        return {p["node"]: p["lid"] for p in
                self.json_of("ports", "--fabric", fabric)["ports"]
                if p["lid"]}

    def guid(self, fabric, node):
        for p in self.json_of("ports", node, "--fabric", fabric)["ports"]:
            return int(p["guid"], 16)

    def sa_call(self, fabric, host, method, attr, mask, rec, dlid=1,
                raw=None):
        """Sends one SA request from 'host' (an agent of its own) and
        returns (status, method, attribute offset, data) of the answer,
        or None if none came."""
        s = self.sess(fabric)
        s.send(hdr(OPEN, 72) + bind(host))
        type_, status, body = self.reply(s)
        self.assertEqual((type_, status), (OPEN, 0))
        session = struct.unpack_from("=Q", body, 64)[0]
        reg = struct.pack("=QQQIIIBBBB", session, 0, 0, 0, 0, 0, SA_CLASS,
                          SA_VERSION, 1, 0)
        r = self.sess(fabric)
        r.send(hdr(REGISTER, len(reg)) + reg)
        type_, status, body = self.reply(r)
        r.close()
        self.assertEqual((type_, status), (REGISTER, 0), body)
        agent = struct.unpack_from("=I", body, 24)[0]
        mad = raw
        if mad is None:
            mad = struct.pack(">BBBBHHQHHI", 1, SA_CLASS, SA_VERSION, method,
                              0, 0, 0x5a00 + method, attr, 0, 0)
            mad += bytes(12) + struct.pack(">QHHQ", 0, 0, 0, mask)
            mad += rec.ljust(200, b"\0")
        addr = struct.pack("=IIHHBBBBBBHI16s", 1, QP1_QKEY, dlid, 0, 0, 0, 0,
                           0, 0, 0, 0, 0, b"")
        body = struct.pack("=IIII", agent, 0, 2000, 0) + addr + \
            struct.pack("=IIQ", len(mad), 0, 0) + mad
        s.send(hdr(SEND, len(body)) + body)
        s.settimeout(10)
        type_, status, body = self.reply(s)
        s.close()
        self.assertEqual((type_, status), (RECV, 0))
        st = struct.unpack_from("=I", body, 4)[0]
        if st:
            return None  # timed out: no answer
        ans = body[72:]  # struct ibemu_sess_mad, then the MAD
        return (struct.unpack_from(">H", ans, 4)[0], ans[3],
                struct.unpack_from(">H", ans, 44)[0], ans[SA_HDR:])

    def port_gid(self, fabric, node):
        return bytes.fromhex("fe80000000000000") + \
            struct.pack(">Q", self.guid(fabric, node))

    def join(self, fabric, host, method=SET, state=1):
        rec = MGID + self.port_gid(fabric, host) + \
            struct.pack(">IHBBHBBIBB", 0x11111111, 0, 0, 0, 0xffff, 0, 0,
                        0, state, 0)
        mask = bits(MC_MGID, MC_PORT_GID, MC_QKEY, MC_TCLASS, MC_PKEY, MC_SL,
                    MC_FLOW, MC_JOIN_STATE)
        return self.sa_call(fabric, host, method, MCMEMBER_RECORD, mask, rec)

    def service(self, fabric, host, method=SET):
        rec = struct.pack(">Q", SERVICE_ID) + self.port_gid(fabric, host) + \
            struct.pack(">HHI", 0xffff, 0, 0xffffffff) + bytes(16) + \
            b"ibemu-test-service".ljust(64, b"\0")
        return self.sa_call(fabric, host, method, SERVICE_RECORD,
                            bits(SR_ID, SR_GID, SR_PKEY), rec)

    def mft(self, fabric, switch_lid):
        """ibroute -M of a switch: {MLID: set of ports}."""
        out = self.ibemu("exec", "--fabric", fabric, "--host", "hca3", "--",
                         "ibroute", "-M", str(switch_lid),
                         env=self.tool_env, timeout=60).stdout
        table = {}
        header = None
        for line in out.splitlines():
            if line.startswith("     Ports:"):
                header = line
            m = re.match(r"^(0x[0-9a-f]+)\s+(.*)$", line, re.I)
            if m and header:
                cols = [i for i, c in enumerate(line)
                        if c == "x" and i >= len(m.group(1))]
                ports = {int(header[i - 1:i + 1].strip() or -1)
                         for i in cols}
                table[int(m.group(1), 16)] = ports
        return table, out

    # --- what the SA answers, and what OpenSM answers -------------------

    def sa_snapshot(self, fabric, lid):
        """The records saquery gets, as comparable values; fields that
        legitimately differ between two SMs are left out (see below)."""
        snap = {}
        nr = records(self.saquery(fabric, "NR"), "NodeRecord dump")
        # NodeInfo's LocalPortNum of a switch is the port the SM's SMP
        # came in by: either SM may enter by another parallel link.
        snap["NR"] = sorted(tuple(sorted((k, v) for k, v in r.items()
                                         if k not in ("port_num",)
                                         or r["node_type"] != "Switch"))
                            for r in nr)
        pir = records(self.saquery(fabric, "PIR"), "PortInfoRecord dump")
        # What an SM programs alike: LIDs, the SM's LID, link state, the
        # link's width and speed, HOQLife (leaf and inter-switch ports
        # set apart) and VLStallCount. Not compared: what OpenSM sets and
        # ibemu-sm leaves at the port's default (M_KeyLeasePeriod,
        # VLHighLimit, ...).
        keep = ("EndPortLid", "PortNum", "Lid", "SMLid", "LMC",
                "LinkWidthActive", "LinkSpeedActive", "LinkState",
                "PhysLinkState", "LocalPort", "NeighborMTU", "MtuCap",
                "HoqLife", "VLStallCount", "SubnetTimeout")
        # The LID fields of a switch's external ports are not used (IBA
        # 14.2.5.6): ibemu-sm writes the switch's LID there, OpenSM not.
        switches = {str(lid[s]) for s in lid if s.startswith("sw")}
        # A port whose link is down: OpenSM keeps no PortInfo of it (its
        # record is zeros), ibemu-sm the one it read; only counted. The
        # LocalPort of a switch's port 0 is, as NodeInfo's, the port the
        # SM's SMP came in by (either SM may enter by another parallel
        # link, as the order its answers come back in decides).
        snap["PIR"] = sorted(
            tuple((k, r.get(k)) for k in keep
                  if (k not in ("Lid", "SMLid") or r["PortNum"] == "0"
                      or r["EndPortLid"] not in switches)
                  and (k != "LocalPort" or r["PortNum"] != "0"
                       or r["EndPortLid"] not in switches))
            for r in pir if r.get("LinkState") != "Down")
        snap["PIR down"] = len(pir)
        lr = records(self.saquery(fabric, "LR"), "LinkRecord dump")
        snap["LR"] = sorted(tuple(sorted(r.items())) for r in lr)
        swir = records(self.saquery(fabric, "SWIR"),
                       "SwitchInfoRecord dump")
        snap["SWIR"] = sorted((r["LID"], r["LinearFDBCap"],
                               r["MulticastFDBCap"], r["LinearFDBTop"])
                              for r in swir)
        smir = records(self.saquery(fabric, "SMIR"), "SMInfoRecord dump")
        # ActCount counts each SM's own sweeps; priority and state are
        # those this test gives both.
        snap["SMIR"] = sorted((r["LID"], r["GUID"], r["SMState"])
                              for r in smir)
        pr = records(self.saquery(fabric, "PR"), "PathRecord dump")
        snap["PR"] = sorted(tuple(sorted(r.items())) for r in pr)
        one = records(self.saquery(fabric, "PR", "--slid", str(lid["hca1"]),
                                   "--dlid", str(lid["hca4"])),
                      "PathRecord dump")
        self.assertEqual(len(one), 1)
        snap["PR1"] = one
        return snap

    maxDiff = None

    def test_saquery_against_opensm(self):
        """The same saquery questions to OpenSM, then to ibemu-sm (which
        keeps OpenSM's LIDs, as an SM that takes over does): the answers
        agree field by field."""
        fabric = "smsa"
        self.up(topology("two-switch.yaml"), fabric, "--sm", "none")
        osm, _ = self.resident_opensm(fabric, "hca1")
        lid = self.lids(fabric)
        theirs = self.sa_snapshot(fabric, lid)
        # The same service and group, registered with OpenSM.
        self.assertEqual(self.service(fabric, "hca3")[:2], (0, GET_RESP))
        self.assertEqual(self.join(fabric, "hca3")[:2], (0, GET_RESP))
        sr_theirs = records(self.saquery(fabric, "SR"),
                            "ServiceRecord dump")
        mc_theirs = self.saquery(fabric, "MCMR", "--mgid",
                                 "ff12:a01c:ffff::abcd")
        self.stop_opensm(osm)
        sm = self.start_sm(fabric)
        self.assertEqual(self.lids(fabric), lid)
        ours = self.sa_snapshot(fabric, lid)
        for key in theirs:
            with self.subTest(record=key):
                self.assertEqual(ours[key], theirs[key])
        self.assertEqual(len(ours["NR"]), 6)
        self.assertEqual(len(ours["LR"]), 12)  # 6 cables, both ways
        self.assertEqual(len(ours["PR"]), 36)  # 6 LIDs, every pair
        self.assertEqual(self.service(fabric, "hca3")[:2], (0, GET_RESP))
        self.assertEqual(self.join(fabric, "hca3")[:2], (0, GET_RESP))
        sr = records(self.saquery(fabric, "SR"), "ServiceRecord dump")
        # The lease: OpenSM counts it down, ibemu-sm keeps it.
        self.assertEqual([{k: v for k, v in r.items() if k != "ServiceLease"}
                          for r in sr],
                         [{k: v for k, v in r.items() if k != "ServiceLease"}
                          for r in sr_theirs])
        self.assertEqual(len(sr), 1)
        self.assertIn("ibemu-test-service", sr[0]["ServiceName"])
        # The group (MLID aside: OpenSM made the IPoIB broadcast group
        # first, so its MLID for this one differs).
        mc = self.saquery(fabric, "MCMR", "--mgid", "ff12:a01c:ffff::abcd")

        def group(out):
            return [{k: v for k, v in r.items() if k != "mlid"}
                    for r in records(out, "MCMember Record dump")]
        self.assertTrue(group(mc), mc)
        self.assertEqual(group(mc), group(mc_theirs))
        self.stop_sm(sm)
        self.down(fabric)

    def test_mcast_join_programs_mfts(self):
        """Joins from hca1 and hca4 (behind two switches and two parallel
        links) create the group at MLID 0xc000; every switch's MFT floods
        it to the members and across one cable; a leave takes the port out
        and the last one the group."""
        fabric = "smsm"
        self.up(topology("two-switch.yaml"), fabric, "--sm", "none")
        sm = self.start_sm(fabric)
        lid = self.lids(fabric)
        st, method, offset, data = self.join(fabric, "hca1")
        self.assertEqual((st, method, offset), (0, GET_RESP, 7))
        self.assertEqual(data[:16], MGID)
        mlid = struct.unpack_from(">H", data, 36)[0]
        self.assertEqual(mlid, 0xc000)
        self.assertEqual(data[48] & 0xf, 1)  # FullMember
        self.assertEqual(self.join(fabric, "hca4")[:2], (0, GET_RESP))
        # A join that does not say how is refused, not guessed.
        self.assertEqual(self.sa_call(
            fabric, "hca3", SET, MCMEMBER_RECORD, bits(MC_MGID),
            MGID)[0], 0x0600)  # ERR_INSUFFICIENT_COMPONENTS
        # The members as saquery sees them, and the MFTs.
        out = self.saquery(fabric, "MCMR", "--mgid", "ff12:a01c:ffff::abcd")
        self.assertEqual(out.count("MCMember Record dump"), 1, out)
        self.assertIn("0xc000", out)
        ports = self.json_of("ports", "--fabric", fabric)["ports"]
        peer = {(p["node"], p["port"]): (p.get("peer_node"),
                                         p.get("peer_port"))
                for p in ports}
        sw_of = {h: peer[(h, 1)] for h in ("hca1", "hca4")}

        def wait_mft(done):
            # The SM answers the join first, then writes the MFTs.
            end = time.time() + 20
            while True:
                got, outs = {}, ""
                for sw in ("sw1", "sw2"):
                    table, out = self.mft(fabric, lid[sw])
                    got[sw] = table.get(mlid, set())
                    outs += out
                if done(got) or time.time() > end:
                    return got, outs
                time.sleep(0.2)
        got, out = wait_mft(lambda g: all(len(v) >= 2 for v in g.values()))
        # Each switch: its member's port and exactly one cable between.
        for sw in ("sw1", "sw2"):
            members = {p for h, (s, p) in sw_of.items() if s == sw}
            self.assertTrue(members <= got[sw], (sw, got, out))
            cables = got[sw] - members
            self.assertEqual(len(cables), 1, (sw, got, out))
            (c,) = cables
            self.assertEqual(peer[(sw, c)][0],
                             "sw2" if sw == "sw1" else "sw1")
        # hca4 leaves: its port goes, and so does the cable of sw2 only
        # if nothing is left behind it.
        st, method, _, _ = self.join(fabric, "hca4", method=DELETE)
        self.assertEqual((st, method), (0, DELETE_RESP))
        sw4, p4 = sw_of["hca4"]
        got, out = wait_mft(lambda g: p4 not in g[sw4])
        self.assertNotIn(p4, got[sw4], out)
        self.assertEqual(self.join(fabric, "hca1", method=DELETE)[:2],
                         (0, DELETE_RESP))
        got, out = wait_mft(lambda g: not any(g.values()))
        self.assertEqual(got, {"sw1": set(), "sw2": set()}, out)
        out = self.saquery(fabric, "MCMR")
        self.assertEqual(out.count("MCMember Record dump"), 0, out)
        # A leave of what is not there: ERR_REQ_INVALID.
        self.assertEqual(self.join(fabric, "hca1", method=DELETE)[0], 0x0200)
        self.stop_sm(sm)
        self.down(fabric)

    def test_service_records_and_bad_mads(self):
        """A ServiceRecord registered is found by saquery and by a Get
        with its ServiceID; deleted, it is gone (ERR_NO_RECORDS). Short,
        truncated, versionless and unknown SA MADs get an error or
        nothing, and ibemu-sm answers on."""
        fabric = "smss"
        self.up(topology("two-switch.yaml"), fabric, "--sm", "none")
        sm = self.start_sm(fabric)
        self.assertEqual(self.service(fabric, "hca3")[:2], (0, GET_RESP))
        self.assertEqual(self.service(fabric, "hca4")[:2], (0, GET_RESP))
        out = self.saquery(fabric, "SR")
        self.assertEqual(out.count("ServiceRecord dump"), 2, out)
        get = struct.pack(">Q", SERVICE_ID) + self.port_gid(fabric, "hca4")
        st, method, offset, data = self.sa_call(
            fabric, "hca3", GET, SERVICE_RECORD, bits(SR_ID, SR_GID), get)
        self.assertEqual((st, method, offset), (0, GET_RESP, 22))
        self.assertEqual(data[8:24], self.port_gid(fabric, "hca4"))
        # Two match a Get by ServiceID alone: too many (IBA C15-0.1.30).
        self.assertEqual(self.sa_call(fabric, "hca3", GET, SERVICE_RECORD,
                                      bits(SR_ID), get)[0], 0x0400)
        self.assertEqual(self.service(fabric, "hca4", DELETE)[:2],
                         (0, DELETE_RESP))
        self.assertEqual(self.sa_call(fabric, "hca3", GET, SERVICE_RECORD,
                                      bits(SR_ID, SR_GID), get)[0], 0x0300)
        out = self.saquery(fabric, "SR")
        self.assertEqual(out.count("ServiceRecord dump"), 1, out)
        # Malformed: a bad class version, an unknown method and attribute,
        # a Set of a read-only record, a MAD cut short after its headers.
        head = struct.pack(">BBBBHHQHHI", 1, SA_CLASS, 1, GET_TABLE, 0, 0,
                           7, NODE_RECORD, 0, 0)
        # (The stack has no agent of class version 1: nothing answers.)
        self.assertIsNone(self.sa_call(fabric, "hca3", 0, 0, 0, b"",
                                       raw=head + bytes(232)))
        # (Nor for a method the SA did not register.)
        self.assertIsNone(self.sa_call(fabric, "hca3", 0x17, NODE_RECORD, 0,
                                       b""))
        self.assertEqual(self.sa_call(fabric, "hca3", GET_TABLE, 0x7777, 0,
                                      b"")[0], 0x000c)
        self.assertEqual(self.sa_call(fabric, "hca3", SET, NODE_RECORD, 0,
                                      b"")[0], 0x000c)
        short = struct.pack(">BBBBHHQHHI", 1, SA_CLASS, SA_VERSION,
                            GET_TABLE, 0, 0, 8, NODE_RECORD, 0, 0)
        # The stack hands it on zero-padded to 256 bytes, as the kernel
        # does: a GetTable of every NodeRecord.
        st, method, offset, data = self.sa_call(fabric, "hca3", 0, 0, 0,
                                                b"", raw=short + bytes(12))
        self.assertEqual((st, method, offset, len(data)),
                         (0, GET_TABLE_RESP, 14, 6 * 112))
        # Still there, and right.
        out = self.saquery(fabric, "NR")
        self.assertEqual(out.count("NodeRecord dump"), 6, out)
        self.assertIsNone(sm.poll())
        self.stop_sm(sm)
        self.down(fabric)


if __name__ == "__main__":
    main()
