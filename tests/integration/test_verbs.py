# SPDX-License-Identifier: MIT
"""ibemu's libibverbs.so.1: Debian's unmodified ibv_devices and ibv_devinfo
under 'ibemu exec' see the process's HCA as the fabric describes it (name,
GUIDs, port state, LID, width, speed, GID); tests/clients/verbs-client.c, linked
against the system libibverbs like any program, checks the rules of the
local objects (PD, MR, CQ, completion channel, AH); outside 'ibemu exec' a
program sees a host without HCAs; Debian's librdmacm loads against ours.
The exported symbols and versions are compared with rdma-core's by the
ctest entry abi.ibverbs (cmake/abi-check)."""

import os
import subprocess
import unittest

from harness import (TSAN, VERBS_LIB, IbemuTestCase, main, tool_env,
                     topology)
from sessproto import ERROR, PORT_QUERY, SessionClient, bind, hdr

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
CLIENT = os.path.join(BUILD, "tests", "verbs-client")
EX = os.path.join(BUILD, "tests", "verbs-ex")
MEM = os.path.join(BUILD, "tests", "verbs-mem")
PLUGIN = os.path.join(BUILD, "tests", "verbs-plugin")
HOOKED = os.path.join(BUILD, "tests", "verbs-hooked")
TWO = topology("two-switch.yaml")
SYSTEM_VERBS = "/usr/lib/x86_64-linux-gnu/libibverbs.so.1"

# ibv_devinfo's words for PortInfo widths and the kernel's speed codes.
WIDTH = {"1x": "1X (1)", "4x": "4X (2)", "8x": "8X (4)", "12x": "12X (8)",
         "2x": "2X (16)"}
SPEED = {"SDR": "2.5 Gbps (1)", "DDR": "5.0 Gbps (2)", "QDR": "10.0 Gbps (4)",
         "FDR10": "10.0 Gbps (8)", "FDR": "14.0 Gbps (16)",
         "EDR": "25.0 Gbps (32)", "HDR": "50.0 Gbps (64)",
         "NDR": "100.0 Gbps (128)"}

# A switch and three HCAs on links of different widths and speeds.
MIXED = """\
name: mixed
defaults: {width: 4x, speed: EDR}
switches:
  - {name: sw, ports: 4}
hcas:
  - {name: hedr}
  - {name: hfdr10}
  - {name: hqdr}
links:
  - [sw:1, hedr:1]
  - {a: sw:2, b: hfdr10:1, width: 1x, speed: FDR10}
  - {a: sw:3, b: hqdr:1, width: 12x, speed: QDR}
"""


# Prints what the string and rate helpers of the library argv[1] answer.
STRINGS = """\
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
for name in ("ibv_node_type_str", "ibv_port_state_str",
             "ibv_event_type_str", "ibv_wc_status_str"):
    getattr(lib, name).restype = ctypes.c_char_p
    for v in range(-2, 40):
        print(name, v, getattr(lib, name)(v))
for name in ("ibv_rate_to_mult", "mult_to_ibv_rate", "ibv_rate_to_mbps"):
    for v in list(range(-1, 30)) + [160, 240, 320, 480]:
        print(name, v, getattr(lib, name)(v))
for v in (0, 7, 2500, 14062, 25781, 103125, 206250, 425000, 1275000):
    print("mbps_to_ibv_rate", v, lib.mbps_to_ibv_rate(v))
"""


def fields(text):
    """key=value lines, the last value of a key winning."""
    out = {}
    for line in text.splitlines():
        if "=" in line:
            key, value = line.split("=", 1)
            out[key.strip()] = value.strip()
    return out


def devinfo_port(text):
    """'key: value' of ibv_devinfo -v's port section, tabs folded."""
    out = {}
    for line in text.split("\n\t\tport:\t", 1)[1].splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            out[key.strip()] = " ".join(value.split())
    return out


class VerbsTest(SessionClient, IbemuTestCase):
    def setUp(self):
        super().setUp()
        for key in ("IBEMU_SESSION_SOCKET", "IBEMU_HOST"):
            self.env.pop(key, None)
        self.tool_env = tool_env(self.env)

    def exec_(self, fabric, *cmd, host=None, check=0):
        args = ["exec", "--fabric", fabric]
        if host:
            args += ["--host", host]
        return self.ibemu(*args, "--", *cmd, check=check, env=self.tool_env,
                          timeout=120)

    def node(self, fabric, name):
        for n in self.json_of("nodes", "--fabric", fabric)["nodes"]:
            if n["name"] == name:
                return n
        self.fail(f"no node {name} in {fabric}")

    def port(self, fabric, name, num=1):
        for p in self.json_of("ports", "--fabric", fabric)["ports"]:
            if p["node"] == name and p["port"] == num:
                return p
        self.fail(f"no port {name}:{num} in {fabric}")

    def test_devices_and_devinfo(self):
        self.up(TWO, "vdev")
        guid = int(self.node("vdev", "hca3")["guid"], 16)
        port = self.port("vdev", "hca3")
        self.assertEqual(port["state"], "Active")
        self.assertNotEqual(port["lid"], 0)

        out = self.exec_("vdev", "ibv_devices", host="hca3").stdout
        rows = [line.split() for line in out.splitlines()[2:]]
        self.assertEqual(rows, [["hca3", "%016x" % guid]], out)

        out = self.exec_("vdev", "ibv_devinfo", "-v", host="hca3").stdout
        self.assertIn("hca_id:\thca3\n", out)
        dev = {k.strip(): " ".join(v.split()) for k, v in
               (line.split(":", 1) for line in
                out.split("\n\t\tport:\t", 1)[0].splitlines() if ":" in line)}
        self.assertEqual(dev["transport"], "InfiniBand (0)")
        g = "%016x" % guid
        self.assertEqual(dev["node_guid"],
                         ":".join(g[i:i + 4] for i in range(0, 16, 4)))
        self.assertEqual(dev["phys_port_cnt"], "1")
        p = devinfo_port(out)
        self.assertEqual(p["state"], "PORT_ACTIVE (4)")
        self.assertEqual(p["port_lid"], str(port["lid"]))
        self.assertEqual(p["link_layer"], "InfiniBand")
        self.assertEqual(p["active_width"], WIDTH[port["width"]])
        self.assertEqual(p["active_speed"], SPEED[port["speed"]])
        self.assertEqual(p["phys_state"], "LINK_UP (5)")
        self.assertEqual(p["active_mtu"], "4096 (5)")
        self.assertEqual(p["pkey_tbl_len"], "128")
        pg = "%016x" % int(port["guid"], 16)
        self.assertEqual(p["GID[  0]"], "fe80:0000:0000:0000:" +
                         ":".join(pg[i:i + 4] for i in range(0, 16, 4)))
        self.down("vdev")

    def test_no_routes(self):
        """Without an SM or test routes the port is up but not configured."""
        self.up(TWO, "vnone", "--sm", "none")
        p = devinfo_port(self.exec_("vnone", "ibv_devinfo", "-v",
                                    host="hca1").stdout)
        self.assertEqual(p["state"], "PORT_INIT (2)")
        self.assertEqual(p["port_lid"], "0")
        self.assertEqual(p["phys_state"], "LINK_UP (5)")
        self.down("vnone")

    def test_widths_and_speeds(self):
        """PortInfo encodings become the verbs ones, link by link."""
        path = os.path.join(self.rundir, "mixed.yaml")
        with open(path, "w") as f:
            f.write(MIXED)
        self.up(path, "vmix")
        for host in ("hedr", "hfdr10", "hqdr"):
            port = self.port("vmix", host)
            p = devinfo_port(self.exec_("vmix", "ibv_devinfo", "-v",
                                        host=host).stdout)
            self.assertEqual((p["active_width"], p["active_speed"]),
                             (WIDTH[port["width"]], SPEED[port["speed"]]),
                             host)
        self.down("vmix")

    def test_outside_exec(self):
        """Not attached: a host without HCAs, quietly."""
        env = dict(self.tool_env, LD_LIBRARY_PATH=os.path.dirname(VERBS_LIB))
        p = subprocess.run(["ibv_devices"], capture_output=True, text=True,
                           env=env, timeout=60)
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        self.assertEqual(p.stdout.split(),
                         ["device", "node", "GUID", "------",
                          "----------------"])
        p = subprocess.run(["ibv_devinfo"], capture_output=True, text=True,
                           env=env, timeout=60)
        self.assertEqual((p.returncode, p.stderr),
                         (255, "No IB devices found\n"))
        p = subprocess.run([CLIENT], capture_output=True, text=True, env=env,
                           timeout=60)
        self.assertEqual((p.returncode, fields(p.stdout)),
                         (0, {"num_devices": "0"}))

    def test_client_rules(self):
        self.up(TWO, "vobj")
        port = self.port("vobj", "hca3")
        p = self.exec_("vobj", CLIENT, host="hca3", check=None)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        f = fields(p.stdout)
        self.assertEqual(f["failures"], "0")
        self.assertEqual(f["device"], "hca3")
        self.assertEqual(f["device_name_after_free"], "hca3")
        guid = int(self.node("vobj", "hca3")["guid"], 16)
        self.assertEqual(int(f["guid"], 16), guid)
        self.assertEqual(int(f["node_guid"], 16), guid)
        self.assertEqual(f["node_type"], "InfiniBand channel adapter")
        self.assertEqual(f["port_state"], "active")
        self.assertEqual(int(f["lid"]), port["lid"])
        self.assertEqual(f["link_layer"], "1")
        self.assertEqual(f["gid0"], "fe80000000000000:%016x" %
                         int(port["guid"], 16))
        self.assertEqual(f["pkey0"], "0xffff")
        self.assertEqual(f["mr_key_dups"], "0")
        self.assertEqual(f["mr_keys"], str(6 + 4 * 64))
        self.assertEqual(f["comp_channel"], "ok")
        self.assertEqual((f["qp"], f["loopback_send"], f["bad_lkey"]),
                         ("ok", "ok", "local protection error"))
        self.assertEqual(f["arm_pending"], "ok")
        self.assertEqual(f["wc_status"], "transport retry counter exceeded")
        self.assertEqual(f["event"], "port active")
        # The limits of the HCA's hca_model (auto: HDR, connectx-6), as
        # the library and the daemon enforce them (proto/verbs_proto.h;
        # integration.hca_model checks every preset and wire).
        self.assertEqual((f["max_qp"], f["max_qp_wr"], f["max_sge"],
                          f["max_cqe"], f["max_qp_rd_atom"]),
                         ("262144", "32768", "30", "4194303", "16"))
        self.down("vobj")

    def test_threads(self):
        """Issue 10: as thread-safe as the real library. Four threads post
        and poll at once, each on its own loopback RC QP pair and CQs of
        one context: 200 SENDs of 1 to 8192 bytes with their RECVs and 50
        RDMA WRITEs each, every completion in order and every byte right;
        afterwards the daemon holds nothing (down)."""
        self.up(TWO, "vthr")
        p = self.exec_("vthr", CLIENT, "threads", "4", host="hca3",
                       check=None)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        f = fields(p.stdout)
        self.assertEqual((f["failures"], f["threads_ok"]), ("0", "4"),
                         p.stdout)
        self.assertEqual((f["sends"], f["recvs"], f["writes"]),
                         ("800", "800", "200"))
        self.assertGreater(int(f["inline"]), 0)
        self.down("vthr")

    def test_late_receive(self):
        """A receive is posted without waking the daemon: one posted
        after an RNR NAK, while the daemon sleeps until the RNR timer
        (the wall clock's, on a free clock), is in the transport when the
        one retry allowed comes. (Under the rule the engine waits for the
        process instead, until the grace period counts its sleep as
        waiting.)"""
        self.up(TWO, "vrnr", "--clock", "free")
        p = self.exec_("vrnr", CLIENT, "late-recv", host="hca3", check=None)
        self.down("vrnr")
        f = fields(p.stdout)
        self.assertEqual((p.returncode, f.get("late_recv")), (0, "ok"),
                         p.stdout + p.stderr)

    def test_uc_ud_buffer_reused_at_completion(self):
        """A UC or UD send completes as its last packet leaves, so the
        program may write over its buffer at once, as Open MPI's UD
        connection manager does with every message: the bytes that land
        are those of the send, taken as it left, not those the buffer
        holds when the packet arrives (4 KiB take longer on the wire than
        the 300 ns the engine runs past a completion under the rule)."""
        self.up(TWO, "vreuse")
        for qp_type in ("ud", "uc"):
            p = self.exec_("vreuse", CLIENT, "reuse-buffer", qp_type,
                           host="hca3", check=None)
            f = fields(p.stdout)
            self.assertEqual((p.returncode, f.get("reuse_buffer")),
                             (0, "ok"), qp_type + ": " + p.stdout + p.stderr)
        self.down("vreuse")

    def test_unloaded_while_a_thread_lives(self):
        """A program that loads the library with dlopen() and closes it
        while a thread that polled a CQ lives on (Open MPI's openib BTL
        and its progress thread, at MPI_Finalize): the thread ends
        cleanly after the dlclose() (tests/clients/verbs-plugin.c)."""
        self.up(TWO, "vplug")
        p = self.exec_("vplug", PLUGIN, host="hca3", check=None)
        self.down("vplug")
        self.assertEqual((p.returncode, p.stdout), (0, "plugin=ok\n"),
                         p.stdout + p.stderr)

    def test_registration_under_a_mremap_hook(self):
        """A program whose mremap() drops the fifth argument, as UCX
        1.13's hooks do (tests/clients/verbs-hooked.c): registration moves
        the pages onto shared memory with the system call itself, so the
        bytes the program writes after ibv_reg_mr are those the HCA
        sends. (Through libc's mremap the move went to address 0, which
        only root may map; the HCA then sent what was there at
        registration.)"""
        self.up(TWO, "vhook")
        p = self.exec_("vhook", HOOKED, host="hca3", check=None)
        self.down("vhook")
        f = fields(p.stdout)
        self.assertEqual((p.returncode, f.get("hooked")), (0, "ok"),
                         p.stdout + p.stderr)

    def test_extended_cq_and_builders(self):
        """ibv_create_cq_ex with completion timestamps and the ibv_wr_*
        builders of ibv_create_qp_ex, through the real API
        (tests/clients/verbs-ex.c): SEND with immediate from an inline list,
        WRITE, READ and both atomics in one batch, a batch with a bad
        request that posts nothing, ibv_wr_abort, the refusals; and a CQ
        armed for solicited completions only: no event at a plain SEND's
        receive, one at a solicited SEND's (BTH SE)."""
        self.up(TWO, "vex")
        p = self.exec_("vex", EX, host="hca3", check=None)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        f = fields(p.stdout)
        self.assertEqual(f["failures"], "0", p.stdout)
        for key in ("send_imm", "rdma_atomics", "batch_errors", "refusals",
                    "solicited_only"):
            self.assertEqual(f[key], "ok", key)
        self.assertGreater(int(f["recv_ts_ns"]), 0)
        self.down("vex")

    def test_registered_memory_of_every_kind(self):
        """docs/design.md §6's fast path (tests/clients/verbs-mem.c): malloc'd
        and mmap'd regions move onto shared memory with their bytes
        intact, again when registered twice or remapped; the stack and
        a file mapping stay on the process_vm path; WRITE, READ and
        fetch-and-add move the right bytes on all of them; after fork()
        the child's writes do not reach the parent."""
        self.up(TWO, "vmem")
        p = self.exec_("vmem", MEM, host="hca3", check=None)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        f = fields(p.stdout)
        self.assertEqual(f["failures"], "0", p.stdout)
        self.assertEqual({k: f["shared_" + k] for k in (
            "malloc", "malloc_again", "mmap", "mmap_again", "stack",
            "file")}, {"malloc": "1", "malloc_again": "1", "mmap": "1",
                       "mmap_again": "1", "stack": "0", "file": "0"})
        self.assertEqual(f["fork_private"], "1")
        self.down("vmem")

    def test_port_query_protocol(self):
        """PORT_QUERY names a port of the process's HCA; others are
        refused with EINVAL and the reason."""
        self.up(TWO, "vproto")
        path = "vproto"
        s = self.sess(path)
        req = bind("hca2", 1)
        s.send(hdr(PORT_QUERY, len(req)) + req)
        type_, status, body = self.reply(s)
        s.close()
        self.assertEqual((type_, status, len(body)), (PORT_QUERY, 0, 304))
        self.assertEqual(body[32], 1)  # port_num
        s = self.sess(path)
        req = bind("hca2", 2)
        s.send(hdr(PORT_QUERY, len(req)) + req)
        type_, status, body = self.reply(s)
        s.close()
        self.assertEqual((type_, status), (ERROR, -22))
        self.assertIn("hca2 has no port 2", body.decode())
        self.down("vproto")

    @unittest.skipIf(TSAN, "python3 crashes with libtsan preloaded")
    def test_strings_match_rdma_core(self):
        """The names tools print, value by value, and the rate tables: the
        same script on the system library and on ours prints the same."""
        outs = []
        for lib in (SYSTEM_VERBS, VERBS_LIB):
            p = subprocess.run(["python3", "-c", STRINGS, lib],
                               capture_output=True, text=True,
                               env=self.tool_env, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            outs.append(p.stdout.splitlines())
        self.assertGreater(len(outs[0]), 200)
        self.assertEqual(outs[1], outs[0])

    @unittest.skipIf(TSAN, "python3 crashes with libtsan preloaded")
    def test_librdmacm_loads(self):
        """Debian's librdmacm binds every symbol it imports (IBVERBS_1.0
        up to 1.10) to our library, and a real rdmacm tool runs."""
        lib = "/usr/lib/x86_64-linux-gnu/librdmacm.so.1"
        if not os.path.exists(lib):
            self.skipTest("librdmacm1 is not installed (./ibemu.sh deps)")
        env = dict(self.tool_env, LD_LIBRARY_PATH=os.path.dirname(VERBS_LIB),
                   LD_BIND_NOW="1")
        # By its path: build/lib has ibemu's own librdmacm.so.1 too.
        code = ("import ctypes, os\n"
                f"ctypes.CDLL('{lib}', mode=os.RTLD_NOW)\n"
                "print(sorted({l.split()[-1] for l in open('/proc/self/maps')"
                " if 'libibverbs' in l}))\n")
        p = subprocess.run(["python3", "-c", code], capture_output=True,
                           text=True, env=env, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(eval(p.stdout), [os.path.realpath(VERBS_LIB)])
        p = subprocess.run(["ldd", lib], capture_output=True, text=True,
                           env=env, timeout=60)
        self.assertIn(f"libibverbs.so.1 => {VERBS_LIB}", p.stdout)
        self.assertNotIn("not found", p.stdout)


if __name__ == "__main__":
    main()
