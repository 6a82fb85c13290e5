# SPDX-License-Identifier: MIT
"""ibemu's libibumad.so.3 and the daemon's session socket: real programs
under 'ibemu exec' (tests/clients/umad-client.c, linked against the system
libibumad like any tool, and ibstat), CA and port queries, SMPs answered by
the fabric, timeouts, binding of processes to HCAs, and clients that die or
speak garbage. The exported symbols and their versions are compared with
rdma-core's by the ctest entry abi.ibumad (cmake/abi-check)."""

import json
import os
import select
import signal
import socket
import struct
import subprocess
import time

from harness import (IBEMU, UMAD_LIB, IbemuTestCase, main, pid_alive,
                     tool_env, topology)
from sessproto import (CA_QUERY, ERROR, MAGIC, OPEN, PACK, RECV, REGISTER,
                       SEND, UNREGISTER, VERSION, WAIT, SessionClient, bind,
                       hdr)

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
CLIENT = os.path.join(BUILD, "tests", "umad-client")
OURS = UMAD_LIB
TWO = topology("two-switch.yaml")

ETIMEDOUT, ENOSPC, EINVAL = 110, 28, 22


def fields(text):
    """key=value pairs of every line, the last value of a key winning."""
    out = {}
    for line in text.splitlines():
        for word in line.split():
            if "=" in word:
                key, value = word.split("=", 1)
                out[key] = value
    return out


def register(session, mgmt_class=0x81, version=1, mask=(0, 0)):
    return struct.pack("=QQQIIIBBBB", session, mask[0], mask[1], 0, 0, 0,
                       mgmt_class, version, 0, 0)


def unregister(session, agent):
    return struct.pack("=QII", session, agent, 0)


def send_mad(agent, mad, declared=None, timeout_ms=0):
    addr = struct.pack("=IIHHBBBBBBHI16s", 0, 0, 0xffff, 0, 0, 0, 0, 0, 0, 0,
                       0, 0, b"")
    head = struct.pack("=IIII", agent, 0, timeout_ms, 0) + addr + \
        struct.pack("=IIQ", len(mad) if declared is None else declared, 0, 0)
    return head + mad


def wait_forever(seen=0, wait_id=1):
    """A WAIT without a timeout (struct ibemu_sess_wait)."""
    return hdr(WAIT, 24) + struct.pack("=QQII", seen, wait_id, 0xffffffff, 0)


def pack(*messages):
    """A PACK of whole stream messages (proto/sess_proto.h)."""
    body = b"".join(messages)
    return hdr(PACK, len(body)) + body


def unpack(data):
    """The messages of a PACK's payload."""
    out = []
    while data:
        length = struct.unpack_from("=I", data, 8)[0]
        out.append(data[:16 + length])
        data = data[16 + length:]
    return out


def dr_nodeinfo(tid):
    """A directed-route Get(NodeInfo) with hop count 0 (IBA 14.2.1.2)."""
    mad = bytearray(256)
    mad[0:4] = bytes([1, 0x81, 1, 1])
    mad[8:16] = tid.to_bytes(8, "big")
    mad[16:18] = (0x11).to_bytes(2, "big")
    mad[32:36] = b"\xff" * 4  # DrSLID, DrDLID permissive
    return bytes(mad)


class UmadTest(SessionClient, IbemuTestCase):
    def setUp(self):
        super().setUp()
        # Tests attach their programs themselves.
        for key in ("IBEMU_SESSION_SOCKET", "IBEMU_HOST"):
            self.env.pop(key, None)
        self.tool_env = tool_env(self.env)

    def exec_(self, fabric, *cmd, host=None, check=0, env=None, timeout=60):
        args = ["exec", "--fabric", fabric]
        if host:
            args += ["--host", host]
        return self.ibemu(*args, "--", *cmd, check=check, env=env,
                          timeout=timeout)

    def client(self, fabric, *args, host=None, check=0):
        return fields(self.exec_(fabric, CLIENT, *args, host=host,
                                 check=check).stdout)

    def guid(self, fabric, node):
        for n in self.json_of("nodes", "--fabric", fabric)["nodes"]:
            if n["name"] == node:
                return int(n["guid"], 16)
        self.fail(f"no node {node}")

    def hold(self, fabric, seconds, *extra, host=None):
        """Starts a client that attaches and waits; returns (proc, fields)
        once it is ready."""
        args = [IBEMU, "exec", "--fabric", fabric]
        if host:
            args += ["--host", host]
        proc = subprocess.Popen(args + ["--", CLIENT, "hold", str(seconds),
                                        *extra],
                                stdout=subprocess.PIPE, text=True,
                                env=self.env)
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("ready"):
                break
        self.assertIn("ready\n", lines, "hold client did not get ready")
        return proc, fields("".join(lines))

    def stop(self, proc):
        proc.kill()
        proc.wait()
        proc.stdout.close()

    def call(self, fabric, message):
        s = self.sess(fabric)
        s.send(message)
        r = self.reply(s)
        s.close()
        return r

    def assertError(self, r, status, text):
        self.assertIsNotNone(r, "expected an ERROR, the daemon hung up")
        type_, st, body = r
        self.assertEqual(type_, ERROR, body)
        self.assertEqual(st, status, body)
        self.assertIn(text, body.decode())

    def assertDropped(self, s):
        """The daemon closed the connection (a stream gets no ERROR)."""
        self.assertEqual(s.recv(8192), b"")

    def test_strings_match_rdma_core(self):
        """umad_str.h and the device list sort: the same client, once on
        the system library and once on ours, prints the same."""
        theirs = subprocess.run([CLIENT, "strings"], capture_output=True,
                                text=True, env=self.env, check=True)
        env = dict(self.env, LD_LIBRARY_PATH=os.path.dirname(OURS))
        ours = subprocess.run([CLIENT, "strings"], capture_output=True,
                              text=True, env=env, check=True)
        self.assertGreater(len(theirs.stdout.splitlines()), 4000)
        self.assertEqual(ours.stdout, theirs.stdout)

    def test_ca_and_port_queries(self):
        self.up(TWO, "uca")
        f = self.client("uca", "ca")
        port = self.json_of("ports", "hca1", "--fabric", "uca")["ports"][0]
        self.assertEqual(f["cas"], "1")
        # The HCA's topology name, as libibverbs names the device.
        self.assertEqual((f["ca_name"], f["device"], f["ca_ca_name"]),
                         ("hca1", "hca1", "hca1"))
        self.assertEqual(int(f["node_guid"], 16), self.guid("uca", "hca1"))
        self.assertEqual((f["node_type"], f["numports"], f["port0"]),
                         ("1", "1", "absent"))
        self.assertEqual(int(f["guid"], 16), int(port["guid"], 16))
        self.assertEqual(int(f["lid"]), port["lid"])
        self.assertEqual((f["state"], f["phys_state"]), ("4", "5"))
        self.assertEqual(f["rate"], "200")  # 4x HDR, as sysfs says it
        self.assertEqual(f["prefix"], "0xfe80000000000000")
        self.assertEqual((f["pkey0"], f["link_layer"]), ("0xffff", "InfiniBand"))
        self.assertEqual((f["portguids"], f["portguid0"]),
                         ("2", "0x0000000000000000"))
        self.assertEqual(int(f["portguid1"], 16), int(port["guid"], 16))
        self.assertEqual(f["portguids_small"], "-12")  # -ENOMEM
        self.assertEqual((f["best_port"], f["port_ca_name"]), ("1", "hca1"))
        # "" and the old name "ibemu0" stand for the one CA, as NULL does.
        self.assertEqual((f["get_ca_empty"], f["get_ca_old"]), ("0", "hca1"))
        self.assertEqual(f["get_port_missing"], "-5")  # -EIO
        self.assertEqual(f["get_ca_wrong"], "-19")  # -ENODEV
        self.assertEqual(f["issm_open"], "ok")
        self.down("uca")

    def test_ibstat(self):
        self.up(TWO, "ustat", "--sm", "none")
        p = self.exec_("ustat", "ibstat", env=self.tool_env)
        self.assertIn("CA 'hca1'", p.stdout)
        self.assertIn("Port 1:", p.stdout)
        self.assertIn("State: Initializing", p.stdout)  # no SM, no routes
        self.assertIn("Physical state: LinkUp", p.stdout)
        self.assertIn("Node GUID: 0x%016x" % self.guid("ustat", "hca1"),
                      p.stdout)
        self.assertEqual(self.exec_("ustat", "ibstat", "-l",
                                    env=self.tool_env).stdout, "hca1\n")
        # One name for the HCA, whichever library a tool asks (ibv_devices
        # and ibstat both say mlx5_0 on a real host); a CA by name and port.
        self.assertIn("hca2", self.exec_("ustat", "ibv_devices", host="hca2",
                                         env=self.tool_env).stdout)
        self.assertEqual(self.exec_("ustat", "ibstat", "-l", host="hca2",
                                    env=self.tool_env).stdout, "hca2\n")
        p = self.exec_("ustat", "ibstat", "hca2", "1", host="hca2",
                       env=self.tool_env)
        self.assertIn("Port GUID:", p.stdout)
        self.assertIn("State: Initializing", p.stdout)
        p = self.exec_("ustat", "ibstat", "-s", "hca2", host="hca2",
                       env=self.tool_env)
        self.assertIn("CA 'hca2'", p.stdout)
        p = self.exec_("ustat", "ibstat", "hca1", host="hca2", check=255,
                       env=self.tool_env)
        self.assertIn("hca1", p.stderr)
        # Not attached: a host without devices, and one line on how to attach.
        env = dict(self.tool_env, LD_LIBRARY_PATH=os.path.dirname(OURS))
        p = subprocess.run(["ibstat"], capture_output=True, text=True, env=env,
                           timeout=60)
        self.assertEqual((p.returncode, p.stdout), (0, ""))
        self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
        self.assertIn("ibemu exec", p.stderr)
        self.down("ustat")

    def test_smp_answered_by_local_hca(self):
        self.up(TWO, "uhop0")
        f = self.client("uhop0", "smp", "0")
        self.assertEqual((f["agent"], f["send"], f["poll"]), ("0", "0", "1"))
        self.assertEqual((f["recv"], f["len"], f["status"]), ("0", "256", "0"))
        self.assertEqual((f["method"], f["mad_status"]), ("0x81", "0x0000"))
        self.assertEqual(f["tid_low"], "0x00001234")
        self.assertEqual((f["node_type"], f["local_port"]), ("1", "1"))
        self.assertEqual(int(f["node_guid"], 16), self.guid("uhop0", "hca1"))
        self.down("uhop0")

    def test_smp_hop0_before_any_lid(self):
        """What OpenSM sends first: hop 0 from a port no SM has given a LID
        (the engine must use the permissive SLID, IBA 14.2.2)."""
        self.up(TWO, "unolid", "--sm", "none")
        f = self.client("unolid", "smp", "0")
        self.assertEqual((f["recv"], f["status"]), ("0", "0"))
        self.assertEqual(int(f["node_guid"], 16), self.guid("unolid", "hca1"))
        self.down("unolid")

    def test_smp_through_a_switch(self):
        self.up(TWO, "uhop1", "--sm", "none")
        f = self.client("uhop1", "smp", "1")
        self.assertEqual((f["recv"], f["status"]), ("0", "0"))
        self.assertEqual((f["method"], f["mad_status"]), ("0x81", "0x0000"))
        self.assertEqual((f["node_type"], f["local_port"]), ("2", "1"))
        self.assertEqual(int(f["node_guid"], 16), self.guid("uhop1", "sw1"))
        # Two hops, across the inter-switch cable, to the other switch.
        f = self.client("uhop1", "smp", "1,7")
        self.assertEqual(f["status"], "0")
        self.assertEqual(int(f["node_guid"], 16), self.guid("uhop1", "sw2"))
        self.assertEqual(f["local_port"], "7")
        self.down("uhop1")

    def test_burst_of_answers(self):
        """100 SMPs in flight, answered together: the library reads them
        in batches yet the fd polls readable while one waits, and each
        answer comes once; again with the SENDs queued by the library
        (IBEMU_UMAD_DEFER_SENDS, as ibemu-sm asks)."""
        self.up(TWO, "uburst", "--sm", "none")
        for defer in ("0", "1"):
            env = dict(self.env, IBEMU_UMAD_DEFER_SENDS=defer)
            f = fields(self.exec_("uburst", CLIENT, "burst", "100",
                                  env=env).stdout)
            self.assertEqual((f["answers"], f["readable_while_waiting"],
                              f["poll_after"]), ("100", "100", "-110"),
                             defer)
        self.down("uburst")

    def test_request_through_missing_port_times_out(self):
        self.up(TWO, "utime")
        f = self.client("utime", "smp", "1,3")  # sw1 port 3 has no cable
        # ib_umad returns the request, its header only, with ETIMEDOUT.
        self.assertEqual((f["recv"], f["status"]), ("0", str(ETIMEDOUT)))
        self.assertEqual(f["len"], "24")
        self.assertEqual((f["method"], f["tid_low"]), ("0x01", "0x00001234"))
        self.down("utime")

    def test_short_buffer_keeps_the_mad(self):
        self.up(TWO, "ushort")
        f = self.client("ushort", "short")
        self.assertEqual(f["short_recv"], str(-ENOSPC))
        self.assertEqual((f["errno"], f["len"]), (str(ENOSPC), "256"))
        self.assertEqual(f["full_recv"], "0")
        self.assertEqual(f["status"], "0")
        self.down("ushort")

    def test_rmpp_transfer_through_the_library(self):
        """An RMPP agent sends 5,096 bytes to its own port: read back whole
        (after ENOSPC with the length for a short buffer, the MAD kept),
        with the first segment's RMPP header; a long MAD that is not
        RMPP-active is refused as the kernel refuses it."""
        self.up(TWO, "urmpp", "--sweep", "0")  # no SA agent of an SM
        f = self.client("urmpp", "rmpp")
        self.assertEqual((f["taker"], f["sender"], f["plain"], f["send"]),
                         ("0", "1", "2", "0"))
        self.assertEqual((f["short_recv"], f["short_errno"], f["need"]),
                         (str(-ENOSPC), str(ENOSPC), "5096"))
        self.assertEqual((f["full_recv"], f["len"], f["status"], f["same"]),
                         ("0", "5096", "0", "1"))
        # 26 segments of 200 bytes, 160 of padding (IBA 13.6.2.1).
        self.assertEqual((f["rmpp_flags"], f["segment"], f["paylen"]),
                         ("0x03", "1", str(26 * 220 - 160)))
        self.assertEqual((f["send_not_active"], f["not_active_errno"]),
                         ("-5", str(EINVAL)))
        self.assertEqual((f["send_no_rmpp"], f["no_rmpp_errno"]),
                         ("-5", str(EINVAL)))
        self.assertEqual(f["poll_after"], "-110")
        self.down("urmpp")

    def test_error_conventions(self):
        self.up(TWO, "uerr")
        p = self.exec_("uerr", CLIENT, "errors")
        f = {}
        for line in p.stdout.splitlines():
            key, _, rest = line.partition("=")
            f[key] = rest
        expect = {
            "open_wrong_ca": "-22", "open_wrong_ca0": "-19",
            "open_missing_port": "-22",
            "register_bad_class": "-1 errno=22", "register_get": "1",
            "register_conflict": "-1 errno=22", "register2_bad_flags": "22",
            "register2": "0 id=2", "unregister_unused": "-1 errno=22",
            "registered_more": "29 then=-1 errno=12",
            "send_bad_agent": "-5 errno=22", "send_unregistered": "-5 errno=5",
            "send_short": "-5 errno=22", "recv_empty": "-11 errno=11",
            "poll_empty": "-110", "recv_null": "-22",
        }
        for key, value in expect.items():
            self.assertEqual(f.get(key), value, key)
        self.down("uerr")

    def test_binding_processes_to_hcas(self):
        self.up(TWO, "ubind")
        guid = {h: self.guid("ubind", h) for h in ("hca1", "hca2", "hca4")}
        first, f = self.hold("ubind", 60)
        self.assertEqual(int(f["node_guid"], 16), guid["hca1"])
        # A second process gets the next HCA no live process holds ...
        f = self.client("ubind", "ca")
        self.assertEqual(int(f["node_guid"], 16), guid["hca2"])
        # ... unless it names one, shared or not.
        f = self.client("ubind", "ca", host="hca4")
        self.assertEqual(int(f["node_guid"], 16), guid["hca4"])
        f = self.client("ubind", "ca", host="hca1")
        self.assertEqual(int(f["node_guid"], 16), guid["hca1"])
        env = dict(self.env, IBEMU_HOST="hca4")
        f = fields(self.ibemu("exec", "--fabric", "ubind", "--", CLIENT, "ca",
                              env=env, check=0).stdout)
        self.assertEqual(int(f["node_guid"], 16), guid["hca4"])
        # When the holder dies its HCA is free again.
        self.stop(first)
        f = self.client("ubind", "ca")
        self.assertEqual(int(f["node_guid"], 16), guid["hca1"])
        self.down("ubind")

    def test_study_and_process_share_a_fabric(self):
        """A traffic study takes the HCAs no process holds, and borrows
        those held for MADs only (the SM's, a umad tool's): their MADs
        still work meanwhile; a process cannot take an HCA a running
        study holds; both use one fabric."""
        self.up(topology("fat-tree-2l-36.yaml"), "ushare")
        holder, _ = self.hold("ushare", 120, host="hca01")
        self.addCleanup(self.stop, holder)
        p = self.ibemu("--fabric", "ushare", "traffic", "shift",
                       "--duration", "10us", "--top", "0", "--json", check=0)
        report = json.loads(p.stdout)
        self.assertEqual(report["summary"]["hosts"], 36)
        ends = {f[k].split(":")[0] for f in report["flows"]
                for k in ("src", "dst")}
        self.assertIn("hca01", ends)
        self.assertEqual(len(ends), 36)
        # A long study holds the HCAs nobody holds when it starts: a process
        # asking for one of them while it runs is told why (each probe asks
        # for another HCA: one that won the race with the study's start
        # stays its own), and the holder's MADs still work.
        study = subprocess.Popen(
            [IBEMU, "--fabric", "ushare", "traffic", "uniform",
             "--duration", "20ms"], env=self.env, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True)
        refused = None
        for n in range(5, 37):
            if study.poll() is not None:
                break
            r = self.exec_("ushare", CLIENT, "ca", host=f"hca{n:02d}",
                           check=None)
            if r.returncode != 0:
                refused = (n, r)
                break
        if refused is not None:
            n, r = refused
            self.assertEqual(r.returncode, 1)
            self.assertIn(f"hca{n:02d} is in use by a traffic study",
                          r.stderr)
            f = self.client("ushare", "smp", "1", host="hca01")
            self.assertEqual((f["recv"], f["status"]), ("0", "0"))
            self.assertEqual(f["node_type"], "2")  # leaf01 answered
        _, err = study.communicate(timeout=600)
        self.assertEqual(study.returncode, 0, err)
        self.assertIsNotNone(refused, "the study ended before a process "
                             "could ask for its HCA")
        # Once the study is over its HCAs are free again.
        self.client("ushare", "ca", host=f"hca{n:02d}")
        holder.kill()
        holder.wait()
        self.down("ushare")

    def test_bad_host_and_command(self):
        self.up(TWO, "ubad")
        for host in ("nosuch", "sw1"):
            p = self.exec_("ubad", CLIENT, "ca", host=host, check=1)
            self.assertEqual(p.stderr,
                             f"ibemu: exec: no HCA named {host} in "
                             "fabric ubad\n")
        env = dict(self.env, IBEMU_HOST="nosuch")
        p = self.ibemu("exec", "--fabric", "ubad", "--", CLIENT, "ca",
                       env=env, check=1)
        self.assertIn("no HCA named nosuch", p.stderr)
        p = self.exec_("ubad", "/nonexistent/program", check=127)
        self.assertIn("cannot run '/nonexistent/program'", p.stderr)
        p = self.ibemu("exec", "--fabric", "ubad", check=2)
        self.assertIn("which program", p.stderr)
        self.down("ubad")
        p = self.ibemu("exec", "--fabric", "ubad", "--", "true", check=1)
        self.assertIn("not running", p.stderr)

    def test_client_killed_mid_conversation(self):
        self.up(TWO, "ukill")
        other, _ = self.hold("ukill", 60)
        # A request to nowhere is outstanding (60 s, 5 retries) when it dies.
        proc, f = self.hold("ukill", 60, "1,3")
        self.assertEqual(f["send"], "0")
        os.kill(proc.pid, signal.SIGKILL)
        self.stop(proc)
        self.assertEqual(self.json_of("status", "--fabric", "ukill")["fabric"],
                         "ukill")
        f = self.client("ukill", "smp", "0")
        self.assertEqual(f["status"], "0")
        with open(self.paths("ukill")["log"]) as log:
            text = log.read()
        self.assertIn(f"process {proc.pid} detached from hca2 port 1", text)
        # The other client kept its port.
        self.assertTrue(pid_alive(other.pid))
        self.assertNotIn(f"process {other.pid} detached", text)
        self.stop(other)
        self.down("ukill")

    def test_unread_stream_is_bounded(self):
        self.up(TWO, "uflood")
        stream = self.sess("uflood")
        ca = bind()
        stream.send(hdr(OPEN, len(ca)) + ca)
        session = struct.unpack_from("=Q", self.reply(stream)[2], 64)[0]
        reg = register(session)
        self.assertEqual(self.call("uflood", hdr(REGISTER, len(reg)) + reg)[:2],
                         (REGISTER, 0))
        # Requests the local HCA answers, and a process that never reads.
        sent = 2500
        for tid in range(1, sent + 1):
            stream.send(hdr(SEND, 72 + 256) +
                        send_mad(0, dr_nodeinfo(tid), timeout_ms=30000))
        log_path = self.paths("uflood")["log"]
        end = time.time() + 30
        while time.time() < end:
            with open(log_path) as log:
                if "does not read its MADs" in log.read():
                    break
            time.sleep(0.05)
        else:
            self.fail("the daemon never dropped an unread MAD")
        got = 0
        stream.settimeout(2)
        try:
            while True:
                r = self.reply(stream)
                self.assertIsNotNone(r)
                self.assertEqual((r[0], r[1]), (RECV, 0))
                got += 1
        except TimeoutError:
            pass
        self.assertGreaterEqual(got, 1024)  # the queue, and the socket's
        self.assertLess(got, sent)
        stream.close()
        self.assertEqual(self.client("uflood", "smp", "0")["status"], "0")
        self.down("uflood")

    def raw_stream(self, fabric):
        """A raw port stream with agent 0 registered (class 0x81)."""
        stream = self.sess(fabric)
        ca = bind()
        stream.send(hdr(OPEN, len(ca)) + ca)
        type_, status, body = self.reply(stream)
        self.assertEqual((type_, status), (OPEN, 0))
        session = struct.unpack_from("=Q", body, 64)[0]
        reg = register(session)
        self.assertEqual(self.call(fabric, hdr(REGISTER, len(reg)) + reg)[:2],
                         (REGISTER, 0))
        return stream

    def test_packs(self):
        """A PACK of SENDs and a WAIT (what ibemu-sm's library writes) is
        taken as its messages one by one, and the stream's answers come
        back packed: every SMP answered once, in RECVs inside PACKs."""
        self.up(TWO, "upack", "--sm", "none")
        stream = self.raw_stream("upack")
        tids = list(range(1, 9))
        stream.send(pack(*[hdr(SEND, 72 + 256) +
                           send_mad(0, dr_nodeinfo(t), timeout_ms=30000)
                           for t in tids], wait_forever()))
        got, packs = [], 0
        while len(got) < len(tids):
            r = self.reply(stream)
            self.assertIsNotNone(r, "the daemon dropped the stream")
            type_, status, body = r
            inner = [body] if type_ == RECV else []
            if type_ == PACK:
                packs += 1
                inner = [m[16:] for m in unpack(body)
                         if struct.unpack_from("=H", m, 6)[0] == RECV]
                self.assertEqual(len(inner), len(unpack(body)))
            self.assertIn(type_, (RECV, PACK))
            for m in inner:
                self.assertEqual(struct.unpack_from("=I", m, 4)[0], 0)
                # The kernel keeps the TID's upper 32 bits for the agent.
                got.append(int.from_bytes(m[72 + 12:72 + 16], "big"))
        self.assertEqual(sorted(got), tids)
        self.assertGreaterEqual(packs, 1)
        stream.close()
        self.down("upack")

    def test_malformed_packs(self):
        """PACKs that break the rules close their stream, none of their
        messages run, and the daemon serves the others."""
        self.up(TWO, "ubadpack", "--sm", "none")
        send = hdr(SEND, 72 + 256) + send_mad(0, dr_nodeinfo(1), 30000)
        ca = bind()

        def relabel(message):
            """The PACK's header made to announce what follows it."""
            return hdr(PACK, len(message) - 16) + message[16:]

        cases = [
            ("fewer than two messages", pack(send)),
            ("a message other than SEND or WAIT", pack(send, pack(send,
                                                                  send))),
            ("a message other than SEND or WAIT",
             pack(send, hdr(CA_QUERY, len(ca)) + ca)),
            ("a message longer than what is left",
             relabel(pack(send, send)[:-8])),
            ("a message of a length not a multiple of 8",
             pack(send, hdr(SEND, 72 + 252) +
                  send_mad(0, dr_nodeinfo(2)[:252]))),
            ("a message cut short", relabel(pack(send, send) + bytes(8))),
        ]
        for why, message in cases:
            s = self.raw_stream("ubadpack")
            s.send(message)
            self.assertDropped(s)
            s.close()
        with open(self.paths("ubadpack")["log"]) as log:
            text = log.read()
        for why, _ in cases:
            self.assertIn(f"bytes with {why}", text)
        f = self.client("ubadpack", "smp", "0")
        self.assertEqual(f["status"], "0")
        self.assertTrue(pid_alive(self.started["ubadpack"]))
        self.down("ubadpack")

    def test_malformed_messages(self):
        self.up(TWO, "ugarbage")
        path = "ugarbage"
        ca = bind()
        self.assertError(self.call(path, hdr(CA_QUERY, len(ca), magic=1) + ca),
                         -71, "bad magic")
        other = VERSION + 1
        r = self.call(path, hdr(CA_QUERY, len(ca), version=other) + ca)
        self.assertError(r, -93, f"daemon speaks version {VERSION}, the "
                         f"client {other}")
        self.assertError(self.call(path, hdr(CA_QUERY, 10) + b"x" * 10), -71,
                         "CA_QUERY with 10 payload bytes; it takes 72")
        self.assertError(self.call(path, hdr(CA_QUERY, 100) + ca), -71,
                         "announces 100 payload bytes")
        self.assertError(self.call(path, hdr(CA_QUERY, 72) + b"a" * 72), -22,
                         "not NUL-terminated")
        self.assertError(self.call(path, hdr(CA_QUERY, 72) +
                                   bind(b"nosuch")), -19,
                         "no HCA named nosuch in fabric ugarbage")
        self.assertError(self.call(path, hdr(RECV, 0)), -71,
                         "unexpected message type 7")
        self.assertError(self.call(path, hdr(99, 0)), -71,
                         "unexpected message type 99")
        self.assertError(self.call(path, b"x" * 5000), -90, "5000 bytes")
        self.assertError(self.call(path, b"x" * 3), -71, "shorter than")
        reg = register(0x1234)
        self.assertError(self.call(path, hdr(REGISTER, len(reg)) + reg), -2,
                         "no port stream with session 0x0000000000001234")
        un = unregister(0x1234, 0)
        self.assertError(self.call(path, hdr(UNREGISTER, len(un)) + un), -2,
                         "no port stream")
        # A session of another process is not this one's to use.
        rfd, wfd = os.pipe()
        child = os.fork()
        if child == 0:
            try:
                c = self.sess(path)
                c.send(hdr(OPEN, len(ca)) + ca)
                os.write(wfd, self.reply(c)[2][64:72])
                time.sleep(30)
            finally:
                os._exit(0)
        theirs = struct.unpack("=Q", os.read(rfd, 8))[0]
        reg = register(theirs)
        self.assertError(self.call(path, hdr(REGISTER, len(reg)) + reg), -2,
                         "no port stream with session")
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        os.close(rfd)
        os.close(wfd)
        s = self.sess(path)
        s.send(b"")  # an empty message reads as a hang-up
        self.assertDropped(s)
        s.close()

        # A port stream of this process: register, unregister, then abuse.
        stream = self.sess(path)
        stream.send(hdr(OPEN, len(ca)) + ca)
        type_, status, body = self.reply(stream)
        self.assertEqual((type_, status), (OPEN, 0))
        host, session, port = struct.unpack("=64sQI4xQ", body)[:3]
        self.assertEqual(port, 1)
        reg = register(session)
        type_, status, body = self.call(path, hdr(REGISTER, len(reg)) + reg)
        self.assertEqual((type_, status), (REGISTER, 0))
        agent = struct.unpack_from("=I", body, 24)[0]
        self.assertEqual(agent, 0)
        for bad in (40, 5):
            un = unregister(session, bad)
            self.assertError(self.call(path, hdr(UNREGISTER, len(un)) + un),
                             -EINVAL, f"no agent {bad}")
        reg = register(session, mgmt_class=0x99)
        self.assertError(self.call(path, hdr(REGISTER, len(reg)) + reg),
                         -EINVAL, "class 0x99 is invalid")
        un = unregister(session, 0)
        self.assertEqual(self.call(path, hdr(UNREGISTER, len(un)) + un)[:2],
                         (UNREGISTER, 0))
        mad = bytes(256)
        for message in (hdr(SEND, 72 + 256) + send_mad(99, mad),
                        hdr(SEND, 72 + 256) + send_mad(0, mad, declared=200),
                        hdr(SEND, 72 + 10) + send_mad(0, mad[:10]),
                        hdr(CA_QUERY, len(ca)) + ca):
            s = self.sess(path)
            s.send(hdr(OPEN, len(ca)) + ca)
            self.assertEqual(self.reply(s)[0], OPEN)
            s.send(message)
            self.assertDropped(s)
            s.close()
        # The first stream was not disturbed (open, nothing to read), and
        # the daemon still serves.
        self.assertEqual(select.select([stream], [], [], 0.2)[0], [])
        stream.close()
        f = self.client(path, "smp", "0")
        self.assertEqual(f["status"], "0")
        self.assertTrue(pid_alive(self.started[path]))
        with open(self.paths(path)["log"]) as log:
            text = log.read()
        self.assertIn("SEND as agent 99 (agents are 0-31)", text)
        self.assertIn("message type 2 of 72 bytes on a port stream", text)
        self.down(path)


if __name__ == "__main__":
    main()
