# SPDX-License-Identifier: MIT
"""The daemon's life cycle through the real CLI: up, lock, stale socket,
signals, several fabrics at once, fabric selection, protocol versioning and
misbehaving control clients."""

import json
import os
import signal
import socket
import struct
import time

from harness import IbemuTestCase, main, pid_alive, topology

TWO = topology("two-switch.yaml")
MAGIC = 0x49424354


def hdr(type_, length=0, version=1, magic=MAGIC):
    return struct.pack("=IHHIi", magic, version, type_, length, 0)


def recv_msg(s):
    head = b""
    while len(head) < 16:
        chunk = s.recv(16 - len(head))
        if not chunk:
            return None
        head += chunk
    magic, version, type_, length, status = struct.unpack("=IHHIi", head)
    body = b""
    while len(body) < length:
        chunk = s.recv(length - len(body))
        if not chunk:
            break
        body += chunk
    return type_, status, body.decode()


class DaemonTest(IbemuTestCase):
    def test_up_status_down(self):
        out = self.up(TWO, "life").stdout
        self.assertIn("fabric life: 2 switches, 4 HCAs, 6 links", out)
        paths = self.paths("life")
        st = os.stat(paths["sock"])
        self.assertEqual(st.st_mode & 0o777, 0o600, "socket must be owner-only")
        self.assertEqual(os.stat(paths["dir"]).st_mode & 0o777, 0o700)
        status = self.json_of("status", "--fabric", "life")
        self.assertEqual(status["fabric"], "life")
        self.assertEqual(status["pid"], self.started["life"])
        self.assertEqual((status["switches"], status["hcas"], status["links"]),
                         (2, 4, 6))
        self.assertEqual(status["protocol"], 1)
        text = self.ibemu("status", "--fabric", "life", check=0).stdout
        self.assertIn("Fabric:", text)
        self.assertIn("life", text)
        self.assertIn("stopped", self.down("life").stdout)
        for key in ("sock", "lock", "pid"):
            self.assertFalse(os.path.exists(paths[key]), f"{key} left behind")
        with open(paths["log"]) as f:
            log = f.read()
        self.assertIn("listening on", log)
        self.assertIn("stop requested", log)

    def test_start_failure_closes_everything(self):
        # A directory where the pid file goes: the write fails even as
        # root, after the loop's handles exist, so the start unwinds
        # through the same close path as a stop.
        for fg in ([], ["--foreground"]):
            name = "nopid" + ("fg" if fg else "")
            paths = self.paths(name)
            os.makedirs(paths["pid"])
            p = self.ibemu("up", TWO, "--name", name, *fg, check=1)
            # In the foreground, a banner line comes before the error.
            self.assertEqual(p.stderr.count("\n"), 2 if fg else 1, p.stderr)
            self.assertRegex(p.stderr.splitlines()[-1],
                             r"^ibemu: up: cannot write .*/pid: Is a directory$")
            self.assertNotIn("Assertion", p.stderr)
            self.assertFalse(os.path.exists(paths["sock"]), "socket left behind")
            self.assertFalse(os.path.exists(paths["lock"]), "lock left behind")
            self.assertFalse(os.path.exists(os.path.join(paths["dir"], "sess.sock")))
            self.assertFalse(os.path.exists(os.path.join(paths["dir"], "core")))
            self.assertFalse(self.ibemu("status", "--fabric", name).returncode == 0)
            if not fg:
                with open(paths["log"]) as f:
                    log = f.read()
                self.assertIn("cannot start: cannot write", log)
                self.assertNotIn("Assertion", log)
            os.rmdir(paths["pid"])
        # The name is free again: a start now succeeds.
        self.up(TWO, "nopid")
        self.down("nopid")

    def test_name_is_locked(self):
        self.up(TWO, "locked")
        p = self.ibemu("up", TWO, "--name", "locked", check=1)
        self.assertEqual(p.stderr.count("\n"), 1, "one line of error")
        self.assertIn("fabric 'locked' is already running (pid %d)"
                      % self.started["locked"], p.stderr)
        self.down("locked")

    def test_stale_socket_is_replaced(self):
        self.up(TWO, "stale")
        pid = self.started["stale"]
        os.kill(pid, signal.SIGKILL)
        self.wait_gone(pid)
        paths = self.paths("stale")
        self.assertTrue(os.path.exists(paths["sock"]), "kill -9 leaves a socket")
        self.assertEqual(self.ibemu("status", "--json", check=0).stdout.strip(),
                         '{"fabrics": []}', "a dead daemon is not running")
        self.up(TWO, "stale")
        with open(paths["log"]) as f:
            self.assertIn("replaced the stale socket", f.read())
        self.assertEqual(self.json_of("status", "--fabric", "stale")["pid"],
                         self.started["stale"])
        self.down("stale")

    def test_signals_clean_up(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            name = "sig%d" % sig
            self.up(TWO, name)
            os.kill(self.started[name], sig)
            self.wait_gone(self.started[name])
            for key in ("sock", "lock", "pid"):
                self.assertFalse(os.path.exists(self.paths(name)[key]),
                                 f"{key} left after signal {sig}")
            with open(self.paths(name)["log"]) as f:
                self.assertIn("stopping", f.read())

    def test_several_fabrics_and_selection(self):
        self.up(TWO, "fa")
        # With one fabric running, it is selected without naming it.
        self.assertEqual(self.json_of("status")["fabric"], "fa")
        self.up(topology("single-switch-8.yaml"), "fb")
        p = self.ibemu("nodes", check=1)
        self.assertIn("2 fabrics are running (fa, fb)", p.stderr)
        listing = json.loads(self.ibemu("status", "--json", check=0).stdout)
        self.assertEqual([f["fabric"] for f in listing["fabrics"]], ["fa", "fb"])
        self.assertEqual(len(self.json_of("nodes", "--fabric", "fb")["nodes"]), 9)
        env = dict(self.env, IBEMU_FABRIC="fa")
        p = self.ibemu("nodes", "--json", env=env, check=0)
        self.assertEqual(len(json.loads(p.stdout)["nodes"]), 6)
        p = self.ibemu("nodes", "--fabric", "nosuch", check=1)
        self.assertIn("fabric 'nosuch' is not running", p.stderr)
        self.down("fa")
        self.down("fb")
        p = self.ibemu("nodes", check=1)
        self.assertIn("no fabric is running", p.stderr)

    def connect(self, name):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(self.paths(name)["sock"])
        return s

    def test_protocol_version_mismatch(self):
        self.up(TWO, "proto")
        s = self.connect("proto")
        s.sendall(hdr(1, version=99))
        type_, status, text = recv_msg(s)
        self.assertEqual(type_, 4)
        self.assertEqual(text, "control protocol version mismatch: the daemon "
                         "speaks version 1, the client 99; use the ibemu that "
                         "started this fabric")
        self.assertIsNone(recv_msg(s), "the daemon closes the connection")
        s.close()
        self.assertEqual(self.json_of("status", "--fabric", "proto")["fabric"],
                         "proto")
        self.down("proto")

    def test_bad_clients_do_not_hurt(self):
        self.up(TWO, "robust")
        cases = [
            b"\x00" * 3,                                  # short, then hang up
            hdr(1, magic=0xdeadbeef),                     # not our protocol
            hdr(2, 4) + b"abcd",                          # request before HELLO
            hdr(1) + hdr(2, 3) + b"abc",                  # argv not terminated
            hdr(1) + hdr(2, 0x7fffffff),                  # huge length
            hdr(1) + hdr(2, 8) + b"nosuch\x00\x00",       # unknown command
            hdr(1) + hdr(9),                              # unknown type
            hdr(1) + hdr(2, 6) + b"ports\x00"[:5],        # truncated, hang up
        ]
        for data in cases:
            s = self.connect("robust")
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            while recv_msg(s):
                pass
            s.close()
        # Many clients that connect and vanish.
        for _ in range(50):
            self.connect("robust").close()
        self.assertTrue(pid_alive(self.started["robust"]))
        self.assertEqual(len(self.json_of("ports", "--fabric", "robust")["ports"]),
                         2 * 8 + 4)
        self.down("robust")

    def test_other_users_are_refused(self):
        if os.getuid() != 0:
            self.skipTest("needs root to act as another user")
        self.up(TWO, "owner")
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.setgid(65534)
                os.setuid(65534)
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(self.paths("owner")["sock"])
            except PermissionError:
                code = 0
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0,
                         "another user could connect to the control socket")
        self.down("owner")

    def test_foreground(self):
        import subprocess
        p = subprocess.Popen([os.environ.get("IBEMU_BIN"), "up", TWO, "--name",
                              "fg", "--foreground"], env=self.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        self.started["fg"] = p.pid
        end = time.time() + 20
        while not os.path.exists(self.paths("fg")["sock"]) and time.time() < end:
            time.sleep(0.02)
        self.assertEqual(self.json_of("status", "--fabric", "fg")["pid"], p.pid)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=20)
        self.assertEqual(p.returncode, 0, err)
        self.assertIn("running in the foreground", err)
        self.assertIn("stopped", err)


if __name__ == "__main__":
    main()
