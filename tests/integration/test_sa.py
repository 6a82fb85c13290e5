# SPDX-License-Identifier: MIT
"""RMPP (IBA 13.6) between attached processes: the daemon segments what an
RMPP agent writes and reassembles what reaches one, as the kernel's ib_mad
does. The real saquery asks a resident OpenSM for tables that take many
segments; crafted transfers check the segments on the wire byte by byte
(and in the PMA counters), and malformed ones never hurt the daemon."""

import os
import re
import struct
import time
import traceback

from harness import IbemuTestCase, OpenSMRunner, main, read, topology
from sessproto import OPEN, RECV, REGISTER, SEND, SessionClient, bind, hdr


SA_CLASS, SA_VERSION = 0x03, 2
# struct ibemu_sess_mad, before the MAD (proto/sess_proto.h)
MAD_HEAD = 72
GET_TABLE, GET_MULTI, GET_TABLE_RESP = 0x12, 0x14, 0x92
SA_HDR = 56  # MAD (24), RMPP (12) and SA (20) headers
SEG_DATA = 256 - SA_HDR  # data bytes per segment
RMPP_DATA = 220  # what PayloadLength counts per segment
ACTIVE, FIRST, LAST = 1, 2, 4
QP1_QKEY = 0x80010000
# IBA 15.2.5.2: a NodeRecord is 108 bytes; AttributeOffset pads it to 112.
NODE_RECORD = 112
# These tests register SA agents of their own: ibemu-sm brings the subnet
# up and leaves, as its own SA would hold the class on its port.
SM_GONE = ("--sweep", "0")


def register(session, rmpp, methods=()):
    mask = [0, 0]
    for m in methods:
        mask[m // 64] |= 1 << (m % 64)
    return struct.pack("=QQQIIIBBBB", session, mask[0], mask[1], 0, 0, 0,
                       SA_CLASS, SA_VERSION, rmpp, 0)


def send(agent, mad, dlid, timeout_ms=0):
    addr = struct.pack("=IIHHBBBBBBHI16s", 1, QP1_QKEY, dlid, 0, 0, 0, 0, 0,
                       0, 0, 0, 0, b"")
    body = struct.pack("=IIII", agent, 0, timeout_ms, 0) + addr + \
        struct.pack("=IIQ", len(mad), 0, 0) + mad
    return hdr(SEND, len(body)) + body


def sa_mad(tid, method=GET_TABLE, data=b"", rmpp=(0,) * 6):
    """An SA MAD: headers, then 'data'. 'rmpp' is the RMPP header:
    (version, type, flags, status, SegmentNumber, PayloadLength)."""
    head = struct.pack(">BBBBHHQHHI", 1, SA_CLASS, SA_VERSION, method, 0, 0,
                       tid, 0x11, 0, 0)  # NodeRecord
    return head + struct.pack(">BBBBII", *rmpp) + bytes(20) + data


def segment(tid, num, flags, paylen, data=b"", version=1, type_=1, status=0):
    """One crafted 256-byte DATA segment (or another RMPP type)."""
    mad = sa_mad(tid, data=data.ljust(SEG_DATA, b"\0"),
                 rmpp=(version, type_, flags, status, num, paylen))
    assert len(mad) == 256
    return mad


def pattern(n, seed=0):
    return bytes((i * 7 + seed) & 0xff for i in range(n))


class SaTest(OpenSMRunner, SessionClient, IbemuTestCase):
    # --- raw session clients ------------------------------------------

    def stream(self, fabric, host):
        """A port stream of this process on 'host'; (socket, session)."""
        s = self.sess(fabric)
        s.send(hdr(OPEN, 72) + bind(host))
        type_, status, body = self.reply(s)
        self.assertEqual((type_, status), (OPEN, 0))
        return s, struct.unpack_from("=Q", body, 64)[0]

    def register(self, fabric, session, rmpp, methods=()):
        s = self.sess(fabric)
        reg = register(session, rmpp, methods)
        s.send(hdr(REGISTER, len(reg)) + reg)
        type_, status, body = self.reply(s)
        s.close()
        self.assertEqual((type_, status), (REGISTER, 0), body)
        return struct.unpack_from("=I", body, 24)[0]

    def from_host(self, fabric, host, messages):
        """Sends 'messages' from another process attached to 'host', with
        two agents: 0 reassembles (RMPP version 1), 1 does not (0).
        Returns once that process has sent them all and exited."""
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                s, session = self.stream(fabric, host)
                ids = [self.register(fabric, session, 1),
                       self.register(fabric, session, 0)]
                s.settimeout(None)
                for agent, mad, dlid in messages:
                    s.send(send(ids[agent], mad, dlid))
                s.close()
                code = 0
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)

    def recvs(self, s, count, quiet=0.5):
        """'count' RECVs as (agent, length, mad), then nothing more."""
        out = []
        s.settimeout(10)
        while len(out) < count:
            type_, status, body = self.reply(s)
            self.assertEqual((type_, status), (RECV, 0))
            agent, st = struct.unpack_from("=II", body, 0)
            length = struct.unpack_from("=I", body, 56)[0]
            self.assertEqual((st, length), (0, len(body) - MAD_HEAD))
            out.append((agent, length, body[MAD_HEAD:]))
        s.settimeout(quiet)
        try:
            extra = s.recv(1 << 19)
            self.fail(f"one RECV too many: {len(extra)} bytes")
        except TimeoutError:
            pass
        return out

    def lids(self, fabric):
        return {p["node"]: p["lid"] for p in
                self.json_of("ports", "--fabric", fabric)["ports"]
                if p["lid"]}

    def counter(self, fabric, node, name):
        c = self.json_of("counters", node, "--fabric", fabric)["counters"]
        return c[0][name]

    def log(self, fabric):
        return read(self.paths(fabric)["log"])

    # --- tests --------------------------------------------------------

    def test_segments_cross_the_fabric(self):
        """What hca3 writes as an RMPP agent leaves as the kernel's
        segments, one 256-byte packet each; hca1 gets the whole message
        (RMPP agent) or every segment (agent without RMPP)."""
        self.up(topology("two-switch.yaml"), "sseg", *SM_GONE)
        lid = self.lids("sseg")
        s, session = self.stream("sseg", "hca1")
        whole = self.register("sseg", session, 1, [GET_TABLE])
        parts = self.register("sseg", session, 0, [GET_MULTI])
        data = pattern(5040)  # 45 NodeRecords: 26 segments, 160 bytes pad
        big = sa_mad(0x1234, GET_TABLE, data, (1, 1, ACTIVE, 0, 0, 0))
        small = sa_mad(0x1235, GET_TABLE, pattern(100, 1),
                       (1, 1, ACTIVE, 0, 0, 0))
        # Not RMPP-active: one MAD, its RMPP header zeroed by the kernel.
        plain = sa_mad(0x1236, GET_TABLE, pattern(200, 2),
                       (1, 1, 0, 0, 7, 7))
        multi = sa_mad(0x1237, GET_MULTI, data, (1, 1, ACTIVE, 0, 0, 0))
        sent = self.counter("sseg", "hca3", "xmit_pkts")
        got = self.counter("sseg", "hca1", "rcv_pkts")
        self.from_host("sseg", "hca3", [(0, big, lid["hca1"]),
                                        (0, small, lid["hca1"]),
                                        (0, plain, lid["hca1"]),
                                        (0, multi, lid["hca1"])])
        r = self.recvs(s, 3 + 26)
        # Reassembled: the first segment whole, then each one's data, the
        # length as the sender wrote it (get_mad_len).
        agent, length, mad = r[0]
        self.assertEqual((agent, length), (whole, len(big)))
        self.assertEqual(mad[:8], big[:8])
        self.assertEqual(mad[12:16], big[12:16])  # low TID bits kept
        self.assertEqual(struct.unpack(">BBBBII", mad[24:36]),
                         (1, 1, ACTIVE | FIRST, 0, 1, 26 * RMPP_DATA - 160))
        self.assertEqual(mad[36:], big[36:])
        agent, length, mad = r[1]
        self.assertEqual((agent, length), (whole, len(small)))
        self.assertEqual(struct.unpack(">BBBBII", mad[24:36]),
                         (1, 1, ACTIVE | FIRST | LAST, 0, 1, 20 + 100))
        self.assertEqual(mad[36:], small[36:])
        agent, length, mad = r[2]
        self.assertEqual((agent, length), (whole, 256))
        self.assertEqual(mad[24:36], bytes(12))
        self.assertEqual(mad[36:len(plain)], plain[36:])
        # The agent without RMPP sees the segments themselves.
        joined = b""
        for i, (agent, length, mad) in enumerate(r[3:], 1):
            self.assertEqual((agent, length), (parts, 256))
            flags = ACTIVE | (FIRST if i == 1 else 0) | (LAST if i == 26
                                                         else 0)
            paylen = {1: 26 * RMPP_DATA - 160, 26: RMPP_DATA - 160}.get(i, 0)
            self.assertEqual(struct.unpack(">BBBBII", mad[24:36]),
                             (1, 1, flags, 0, i, paylen), f"segment {i}")
            self.assertEqual(mad[36:SA_HDR], multi[36:SA_HDR])
            joined += mad[SA_HDR:]
        self.assertEqual(joined, data + bytes(160))
        # Every segment was a packet on the wire, nothing else moved.
        self.assertEqual(self.counter("sseg", "hca3", "xmit_pkts") - sent,
                         26 + 1 + 1 + 26)
        self.assertEqual(self.counter("sseg", "hca1", "rcv_pkts") - got,
                         26 + 1 + 1 + 26)
        s.close()
        self.down("sseg")

    def test_a_response_completes_its_request_whole(self):
        """A multi-segment response completes the request of an RMPP agent
        once whole; an agent without RMPP gets every segment, the first
        completing its request (ib_mad_complete_recv)."""
        self.up(topology("two-switch.yaml"), "sresp", *SM_GONE)
        lid = self.lids("sresp")["hca1"]
        s, session = self.stream("sresp", "hca1")
        plain = self.register("sresp", session, 0)
        rmpp = self.register("sresp", session, 1)
        server = self.register("sresp", session, 1, [GET_TABLE])
        data = pattern(5040, 6)
        for asker, tid, count in ((plain, 0x21, 26), (rmpp, 0x22, 1)):
            # To this port's own LID: the server is on the same port.
            s.send(send(asker, sa_mad(tid), lid, timeout_ms=1000))
            (agent, _, request), = self.recvs(s, 1)
            self.assertEqual(agent, server)
            answer = sa_mad(struct.unpack_from(">Q", request, 8)[0],
                            GET_TABLE_RESP, data, (1, 1, ACTIVE, 0, 0, 0))
            s.send(send(server, answer, lid))
            # Nothing more, no ETIMEDOUT either: the request completed.
            r = self.recvs(s, count, quiet=1.5)
            self.assertEqual({a for a, _, _ in r}, {asker})
            if count == 1:
                self.assertEqual(r[0][1], len(answer))
                self.assertEqual(r[0][2][36:], answer[36:])
            else:
                self.assertEqual(
                    [struct.unpack_from(">I", m, 28)[0] for _, _, m in r],
                    list(range(1, 27)))
        s.close()
        self.down("sresp")

    def test_malformed_rmpp_is_dropped(self):
        """Crafted segments (sent verbatim by an agent without RMPP) that
        break IBA 13.6 are dropped and counted, the daemon stays up, and
        transfers around them complete."""
        self.up(topology("two-switch.yaml"), "sbad", *SM_GONE)
        dst = self.lids("sbad")["hca1"]
        s, session = self.stream("sbad", "hca1")
        whole = self.register("sbad", session, 1, [GET_TABLE])
        d1, d2 = pattern(SEG_DATA, 3), pattern(SEG_DATA, 4)
        raw = [
            segment(1, 2, ACTIVE, 0),  # a segment of no transfer
            segment(2, 1, ACTIVE, 0),  # segment 1 without First
            segment(3, 3, ACTIVE | FIRST, 0),  # First on segment 3
            segment(4, 1, ACTIVE | FIRST, 0xffffffff),  # 4 GiB announced
            segment(4, 2, ACTIVE | LAST, 20),  # ... so no transfer
            segment(5, 1, ACTIVE | FIRST, 2 * RMPP_DATA),
            segment(5, 3, ACTIVE, 0),  # a gap ends the transfer
            segment(5, 2, ACTIVE | LAST, RMPP_DATA),  # ... gone
            segment(6, 1, ACTIVE | FIRST | LAST, 20, version=2),
            segment(6, 1, ACTIVE, 0, type_=2),  # an ACK
            segment(6, 1, ACTIVE | FIRST | LAST, 20, type_=9),
            segment(6, 1, ACTIVE | FIRST | LAST, 20, status=1),
            segment(7, 1, ACTIVE | FIRST, 2 * RMPP_DATA, d1),
            segment(7, 1, ACTIVE | FIRST, 2 * RMPP_DATA, d1),  # again
            segment(7, 2, ACTIVE | LAST, RMPP_DATA, d2),  # complete
            segment(7, 2, ACTIVE | LAST, RMPP_DATA, d2),  # after it
        ]
        # A transfer that grows past 256 KiB (1310 segments of SA data).
        raw.append(segment(8, 1, ACTIVE | FIRST, 0))
        raw += [segment(8, n, ACTIVE, 0) for n in range(2, 1312)]
        raw.append(segment(8, 1312, ACTIVE | LAST, RMPP_DATA))
        # 33 transfers at once: the oldest is pushed out.
        raw += [segment(100 + n, 1, ACTIVE | FIRST, 0) for n in range(33)]
        raw.append(segment(100, 2, ACTIVE | LAST, RMPP_DATA))
        raw.append(segment(132, 2, ACTIVE | LAST, RMPP_DATA, d2))
        drops = 17  # all of the above but the three that complete
        # Longer than a MAD and not RMPP-active: refused like EINVAL.
        long = sa_mad(9, data=bytes(300))
        good = sa_mad(10, GET_TABLE, pattern(20000, 5),
                      (1, 1, ACTIVE, 0, 0, 0))
        self.from_host("sbad", "hca3", [(1, m, dst) for m in raw] +
                       [(1, long, dst), (0, good, dst)])
        r = self.recvs(s, 3)
        self.assertEqual([(a, n) for a, n, _ in r],
                         [(whole, SA_HDR + 2 * SEG_DATA)] * 2 +
                         [(whole, len(good))])
        self.assertEqual(r[0][2][SA_HDR:], d1 + d2)
        self.assertEqual(r[1][2][SA_HDR:], bytes(SEG_DATA) + d2)
        self.assertEqual(r[2][2][36:], good[36:])
        # Every drop counted: one more, a second later, is logged with
        # the count (the log says it at most once a second).
        time.sleep(1.1)
        self.from_host("sbad", "hca3", [(1, segment(11, 2, ACTIVE, 0), dst)])
        end = time.time() + 10
        while f"{drops + 1} dropped so far" not in self.log("sbad") and \
                time.time() < end:
            time.sleep(0.05)
        log = self.log("sbad")
        self.assertIn(f"a segment of no transfer in progress; {drops + 1} "
                      "dropped so far", log)
        self.assertIn("sent a MAD of 356 bytes (class 0x03)", log)
        self.assertIn("the kernel refuses it (EINVAL)", log)
        # The daemon serves on: the stream, with 31 transfers pending,
        # closes cleanly, and a new transfer completes.
        s.close()
        s, session = self.stream("sbad", "hca1")
        whole = self.register("sbad", session, 1, [GET_TABLE])
        self.from_host("sbad", "hca3", [(0, good, dst)])
        self.assertEqual(self.recvs(s, 1)[0][:2], (whole, len(good)))
        s.close()
        self.down("sbad")

    def test_saquery_tables_from_a_resident_opensm(self):
        """saquery on hca05 asks OpenSM (resident on hca01) for tables of
        many segments: NodeRecords (26), every PathRecord (648, more than
        128 KB), and records of one segment."""
        fabric = "ssa"
        self.up(topology("fat-tree-2l-36.yaml"), fabric, "--sm", "none")
        # No sweeps after the first: the counters below see saquery only.
        sm, _ = self.resident_opensm(fabric, "hca01", "--sweep", "0")
        try:
            self.saquery_checks(fabric)
        finally:
            self.stop_opensm(sm)
        self.down(fabric)

    def saquery(self, fabric, *args):
        p = self.ibemu("exec", "--fabric", fabric, "--host", "hca05", "--",
                       "saquery", *args, env=self.tool_env, check=0,
                       timeout=60)
        return p.stdout

    def saquery_checks(self, fabric):
        nodes = self.json_of("nodes", "--fabric", fabric)["nodes"]
        lid = self.lids(fabric)

        # One NodeRecord per node, as declared.
        got = self.counter(fabric, "hca05", "rcv_pkts")
        out = self.saquery(fabric, "NR")
        records = re.findall(r"node_guid\.+(0x[0-9a-f]+)\n(?:.*\n)*?"
                             r"\s*NodeDescription\.+(.*)", out)
        self.assertEqual(sorted((int(g, 16), d) for g, d in records),
                         sorted((int(n["guid"], 16), n["description"])
                                for n in nodes))
        self.assertEqual(len(records), 45)
        segs = -(-45 * NODE_RECORD // SEG_DATA)
        self.assertEqual(self.counter(fabric, "hca05", "rcv_pkts") - got,
                         segs)

        # Every PathRecord between the 45 ports: 129,656 bytes.
        got = self.counter(fabric, "hca05", "rcv_pkts")
        out = self.saquery(fabric, "PR")
        self.assertEqual(out.count("PathRecord dump"), 45 * 45)
        self.assertEqual(self.counter(fabric, "hca05", "rcv_pkts") - got,
                         45 * 45 * 64 // SEG_DATA)

        # One PathRecord, by LIDs and by names (which takes NodeRecords).
        for args in (["PR", "--slid", str(lid["hca02"]), "--dlid",
                      str(lid["hca30"])], ["--src-to-dst", "hca02:hca30"]):
            out = self.saquery(fabric, *args)
            self.assertEqual(out.count("PathRecord dump"), 1, out)
            self.assertRegex(out, rf"dlid\.+{lid['hca30']}\n")
            self.assertRegex(out, rf"slid\.+{lid['hca02']}\n")

        # One record, one segment: its length is the record's, not 256.
        out = self.saquery(fabric, "-s")
        self.assertEqual(out.count("PortInfoRecord dump"), 1, out)
        self.assertRegex(out, rf"base_lid\.+{lid['hca01']}\n")


if __name__ == "__main__":
    main()
