# SPDX-License-Identifier: MIT
"""Hardening of the CLI and the daemon's life cycle (issue 9): fabric names
that cannot leave the runtime directory, timeouts on a daemon that does not
answer and 'down' falling back to signals, 'topo check' refusing what 'up'
refuses, escaped output, signals, a removed runtime directory and the
messages users get in the corner cases."""

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from harness import IBEMU, IbemuTestCase, main, pid_alive, read, topology

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "hostile"))
import wire  # noqa: E402  (tests/hostile/wire.py)

TWO = topology("two-switch.yaml")
NAME_ERRORS = {
    "..": "'.' and '..' name directories",
    ".": "'.' and '..' name directories",
    "": "it is empty",
    "a/b": "it holds '/'",
    "-x": "it starts with '-'",
    ".hidden": "it starts with '.'",
    "bell\x07": "it holds a control character",
    "n" * 64: "longer than 63 bytes",
}


class CliHardeningTest(IbemuTestCase):

    def write(self, name, text):
        path = f"{self.rundir}-{name}"
        with open(path, "w") as f:
            f.write(text)
        self.addCleanup(os.unlink, path)
        return path

    def assert_rundir_untouched(self):
        parent = os.path.dirname(self.rundir)
        for leftover in ("ctl.sock", "sess.sock", "lock", "pid", "issm"):
            self.assertFalse(os.path.exists(os.path.join(parent, leftover)))
        self.assertEqual(os.listdir(self.rundir), [])

    # --- item 1: names --------------------------------------------------

    def test_bad_names_everywhere(self):
        for name, why in NAME_ERRORS.items():
            p = self.ibemu("up", TWO, "--name", name, check=2)
            self.assertIn(why, p.stderr)
            self.assertNotIn("\x07", p.stderr)
            p = self.ibemu("status", "--fabric", name, check=2)
            self.assertIn(why, p.stderr)
            p = self.ibemu("ports", env=dict(self.env, IBEMU_FABRIC=name or "x/"),
                           check=2)
            self.assertIn("IBEMU_FABRIC", p.stderr)
        p = self.ibemu("down", "--fabric", "", check=2)
        self.assertIn("it is empty", p.stderr)
        # The file's 'name:', reported where it is written.
        yaml = self.write("dotdot.yaml", "name: ..\nswitches: [{name: s, ports: 2}]\n")
        for cmd in (["up", yaml], ["topo", "check", yaml]):
            p = self.ibemu(*cmd, check=2)
            self.assertIn(f"{yaml}:1:7: error: bad fabric name '..'", p.stderr)
        self.assert_rundir_untouched()

    def test_base_name_fallback_is_safe(self):
        yaml = os.path.join(self.rundir + "-names", "-dash.yaml")
        os.makedirs(os.path.dirname(yaml))
        self.addCleanup(lambda: (os.unlink(yaml), os.rmdir(os.path.dirname(yaml))))
        with open(yaml, "w") as f:
            f.write("switches: [{name: s, ports: 2}]\n")
        p = self.ibemu("up", yaml, check=0)
        self.assertIn("fabric _dash:", p.stdout)
        self.started["_dash"] = int(read(self.paths("_dash")["pid"]))
        self.down("_dash")

    def test_relative_runtime_dir_refused(self):
        env = dict(self.env, IBEMU_RUNTIME_DIR="relative/dir")
        p = self.ibemu("up", TWO, "--name", "rel", env=env, check=1)
        self.assertIn("IBEMU_RUNTIME_DIR must be an absolute path", p.stderr)
        p = self.ibemu("status", env=env, check=1)
        self.assertIn("IBEMU_RUNTIME_DIR must be an absolute path", p.stderr)
        self.assertFalse(os.path.exists("relative"))

    # --- item 2: timeouts and down's fallback ---------------------------

    def test_stopped_daemon_times_out_and_down_stops_it(self):
        self.up(TWO, "frozen")
        pid = self.started["frozen"]
        os.kill(pid, signal.SIGSTOP)
        env = dict(self.env, IBEMU_TIMEOUT="0.5")
        try:
            t0 = time.time()
            p = self.ibemu("status", "--fabric", "frozen", env=env, check=1, timeout=30)
            self.assertLess(time.time() - t0, 5)
            self.assertIn(f"its daemon (pid {pid}) did not answer within 0.500 s",
                          p.stderr)
            p = self.ibemu("nodes", "--fabric", "frozen", env=env, check=1, timeout=30)
            self.assertIn("did not answer", p.stderr)
            # down: no answer, so SIGTERM (and SIGCONT) to the verified pid.
            p = self.ibemu("down", "--fabric", "frozen", env=env, check=0, timeout=60)
            self.assertIn(f"sending SIGTERM to pid {pid}", p.stderr)
            self.assertIn("fabric frozen: stopped", p.stdout)
        finally:
            if pid_alive(pid):
                os.kill(pid, signal.SIGCONT)
        self.wait_gone(pid)
        self.assertFalse(os.path.exists(self.paths("frozen")["sock"]))

    def test_bad_timeout_value(self):
        for cmd in (["status"], ["nodes", "--fabric", "x"], ["down", "--fabric", "x"]):
            p = self.ibemu(*cmd, env=dict(self.env, IBEMU_TIMEOUT="soon"), check=2)
            self.assertIn("IBEMU_TIMEOUT: 'soon' is not a number of seconds", p.stderr)

    def test_down_signals_only_the_lock_holder(self):
        self.up(TWO, "liar")
        pid = self.started["liar"]
        bystander = subprocess.Popen(["sleep", "60"])
        self.addCleanup(bystander.wait)
        self.addCleanup(bystander.kill)
        os.kill(pid, signal.SIGSTOP)
        try:
            with open(self.paths("liar")["pid"], "w") as f:
                f.write(f"{bystander.pid}\n")
            p = self.ibemu("down", "--fabric", "liar",
                           env=dict(self.env, IBEMU_TIMEOUT="0.3"), check=1, timeout=30)
            self.assertIn("none was signalled", p.stderr)
            self.assertIsNone(bystander.poll())
        finally:
            os.kill(pid, signal.SIGCONT)
        with open(self.paths("liar")["pid"], "w") as f:
            f.write(f"{pid}\n")
        self.down("liar")

    def test_down_kills_a_daemon_deaf_to_sigterm(self):
        """A daemon wedged in a signal handler-free loop: simulated by a
        fake daemon that holds the lock, ignores SIGTERM and never
        answers. down must SIGKILL it and remove what it left."""
        d = self.paths("deaf")["dir"]
        os.makedirs(d, mode=0o700)
        code = ("import fcntl, os, signal, socket, sys, time\n"
                "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                f"lock = open({self.paths('deaf')['lock']!r}, 'w')\n"
                "fcntl.flock(lock, fcntl.LOCK_EX)\n"
                "s = socket.socket(socket.AF_UNIX)\n"
                f"s.bind({self.paths('deaf')['sock']!r}); s.listen(8)\n"
                f"os.makedirs({d!r} + '/issm'); open({d!r} + '/issm/h1.1', 'w')\n"
                f"open({self.paths('deaf')['pid']!r}, 'w').write(str(os.getpid()))\n"
                "print('ready', flush=True)\n"
                "time.sleep(120)\n")
        fake = subprocess.Popen(["python3", "-c", code], stdout=subprocess.PIPE, text=True)
        self.addCleanup(fake.stdout.close)
        self.addCleanup(fake.wait)
        self.assertEqual(fake.stdout.readline().strip(), "ready")
        t0 = time.time()
        p = self.ibemu("down", "--fabric", "deaf", env=dict(self.env, IBEMU_TIMEOUT="0.3"),
                       check=0, timeout=60)
        self.assertLess(time.time() - t0, 20)
        self.assertIn("sending SIGKILL", p.stderr)
        self.assertEqual(fake.wait(timeout=10), -signal.SIGKILL)
        self.assertEqual(sorted(os.listdir(d)), [])
        os.rmdir(d)

    # --- item 7: check and up agree -------------------------------------

    def test_check_refuses_what_up_refuses(self):
        # 5462 HCAs of 9 ports need 49158 LIDs: more than 49151.
        lines = ["hcas:"] + [f"  - {{name: h{i}, ports: 9}}" for i in range(5462)]
        yaml = self.write("lids.yaml", "\n".join(lines) + "\n")
        check = self.ibemu("topo", "check", yaml, check=2)
        up = self.ibemu("up", yaml, "--name", "lids", check=2)
        want = (f"{yaml}:5463:12: error: the fabric needs 49158 LIDs (one per switch and "
                "one per HCA port), more than the 49151 unicast LIDs (IBA 4.1.3); node "
                "'h5461' is the first without one")
        self.assertIn(want, check.stderr)
        self.assertIn(want, up.stderr)
        self.assert_rundir_untouched()

    # --- item 9: the small things ---------------------------------------

    def test_terminal_bytes_escaped(self):
        yaml = self.write("esc.yaml",
                          "switches: [{name: s, ports: 2, description: \"\\e[31mred\\a\"}]\n")
        self.up(yaml, "esc")
        p = self.ibemu("nodes", "--fabric", "esc", check=0)
        self.assertNotIn("\x1b", p.stdout)
        self.assertNotIn("\x07", p.stdout)
        self.assertIn("\\x1b[31mred\\x07", p.stdout)
        self.down("esc")
        huge = self.write("huge.yaml", "switches: [{name: \"\\e" + "x" * 1000000
                          + "\", ports: 2}]\n")
        p = self.ibemu("topo", "check", huge, check=2)
        self.assertNotIn("\x1b", p.stderr)
        self.assertLess(len(p.stderr), 5000)
        self.assertIn("bytes)", p.stderr)

    def test_bidi_and_plot_path_escaped(self):
        # U+202E (right-to-left override) reorders the rest of a line on
        # a terminal; text output escapes it, JSON carries the real string.
        yaml = self.write("bidi.yaml",
                          "switches: [{name: s, ports: 2, "
                          "description: \"ab\u202Ecd\"}]\n"
                          "hcas: [{name: h1}, {name: h2}]\n"
                          "links: [[s:1, h1:1], [s:2, h2:1]]\n")
        self.up(yaml, "bidi")
        p = self.ibemu("nodes", "--fabric", "bidi", check=0)
        self.assertNotIn("\u202e", p.stdout)
        self.assertIn("ab\\u202ecd", p.stdout)
        p = self.ibemu("nodes", "--fabric", "bidi", "--json", check=0)
        self.assertNotIn("\u202e", p.stdout)
        self.assertIn("ab\u202ecd", json.dumps(json.loads(p.stdout),
                                                 ensure_ascii=False))
        # A plot's path is the user's: ESC and a byte that is not UTF-8
        # are escaped on the Plot: line ("\udcff" is the byte 0xff).
        d = tempfile.mkdtemp(prefix="ibemu-esc-")
        self.addCleanup(shutil.rmtree, d, True)
        plot = os.path.join(d, "a\x1b[31m\udcff.svg")
        p = self.ibemu("traffic", "shift", "--duration", "1us", "--plot",
                       plot, "--fabric", "bidi", check=0)
        self.assertTrue(os.path.exists(plot))
        self.assertNotIn("\x1b", p.stdout)
        self.assertNotIn("\ufffd", p.stdout)
        self.assertIn("a\\x1b[31m\\xff.svg", p.stdout)
        self.down("bidi")

    def test_traffic_error_not_doubled(self):
        self.up(TWO, "tr")
        p = self.ibemu("traffic", "shift", "--shift", "1000", "--fabric", "tr", check=2)
        self.assertNotIn("error:", p.stderr)
        self.assertIn("traffic: shift 1000 maps", p.stderr)
        self.down("tr")

    def test_other_uid_is_permission_denied(self):
        d = self.paths("theirs")["dir"]
        os.makedirs(d, mode=0o700)
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(self.paths("theirs")["sock"])
        srv.listen(4)
        os.chown(self.paths("theirs")["sock"], 65534, 65534)

        def refuse():
            # What the daemon does to a peer of another uid: close at once.
            conn, _ = srv.accept()
            conn.close()

        t = threading.Thread(target=refuse)
        t.start()
        p = self.ibemu("status", "--fabric", "theirs", check=1)
        t.join()
        srv.close()
        os.unlink(self.paths("theirs")["sock"])
        os.rmdir(d)
        self.assertIn("permission denied: fabric 'theirs' belongs to uid 65534", p.stderr)

    def as_nobody(self, *argv):
        """Runs argv as uid nobody (util-linux's setpriv)."""
        return subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup",
                               "--clear-groups", "--", *argv],
                              env=self.env, capture_output=True, text=True,
                              timeout=60)

    def test_exec_of_another_uid_is_permission_denied(self):
        self.up(TWO, "mine", "--sm", "none")
        # The runtime directory is closed to others (0700): nothing of the
        # fabric can be seen, and both commands say why.
        for cmd in (("status",), ("exec", "--host", "hca1", "--", "true")):
            p = self.as_nobody(IBEMU, "--fabric", "mine", *cmd)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("permission denied: fabric 'mine' cannot be "
                          "reached", p.stderr)
        # Open to pass through: the fabric's directory is root's.
        os.chmod(self.rundir, 0o711)
        for cmd in (("status",), ("exec", "--host", "hca1", "--", "true"),
                    ("exec", "--", "true")):
            p = self.as_nobody(IBEMU, "--fabric", "mine", *cmd)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("permission denied: fabric 'mine' belongs to uid 0",
                          p.stderr)
        # A peer that reaches the sockets (here opened to all, as root
        # reaches any) is told why before the daemon closes.
        d = self.paths("mine")["dir"]
        os.chmod(d, 0o711)
        for sock in ("ctl.sock", "sess.sock"):
            os.chmod(os.path.join(d, sock), 0o666)
        probe = ("import socket, struct, sys\n"
                 "kind = socket.SOCK_STREAM if sys.argv[1].endswith('ctl.sock')"
                 " else socket.SOCK_SEQPACKET\n"
                 "s = socket.socket(socket.AF_UNIX, kind)\n"
                 "s.settimeout(10)\n"
                 "s.connect(sys.argv[1])\n"
                 "data = b''\n"
                 "while True:\n"
                 "    chunk = s.recv(4096)\n"
                 "    if not chunk: break\n"
                 "    data += chunk\n"
                 "print(struct.unpack('=IHHIi', data[:16])[2], data[16:].decode())\n")
        for sock, error in (("ctl.sock", wire.CTL_ERROR),
                            ("sess.sock", wire.SESS_ERROR)):
            p = self.as_nobody(sys.executable, "-c", probe,
                               os.path.join(d, sock))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout, f"{error} permission denied: fabric "
                             "'mine' belongs to uid 0; uid 65534 may not use "
                             "it\n")
        with open(self.paths("mine")["log"]) as f:
            self.assertIn("refused a control client of uid 65534", f.read())
        self.down("mine")

    def test_silent_control_client_closed(self):
        """A control client that sends nothing (not even HELLO), and one
        that is greeted and then says nothing, are closed after 10 s of
        silence (IBEMU_CTL_SILENT_MS); the daemon serves others."""
        self.up(TWO, "hush", "--sm", "none")
        mute = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        mute.connect(self.paths("hush")["sock"])
        greeted = wire.ctl_connect(self.paths("hush")["sock"])
        for s in (mute, greeted):
            s.settimeout(40)
            self.assertEqual(s.recv(1), b"")  # EOF: closed by the daemon
            s.close()
        with open(self.paths("hush")["log"]) as f:
            self.assertIn("closed a control client silent for 10 s", f.read())
        self.ibemu("status", "--fabric", "hush", check=0)
        self.down("hush")

    def test_study_ended_by_down(self):
        self.up(topology("fat-tree-2l-36.yaml"), "study")
        study = subprocess.Popen([IBEMU, "traffic", "uniform", "--duration", "500ms", "--load", "0.3",
                                  "--fabric", "study"], env=self.env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(1.5)
        self.down("study", clients_gone=False)  # the study's CLI is one
        _, err = study.communicate(timeout=60)
        self.assertEqual(study.returncode, 1, err)
        self.assertIn("fabric 'study' was stopped", err)
        self.assertNotIn("Connection reset", err)

    def test_signals_stop_cleanly(self):
        for signum, name in ((signal.SIGHUP, "Hangup"), (signal.SIGQUIT, "Quit")):
            fab = f"sig{signum}"
            self.up(TWO, fab)
            pid = self.started[fab]
            if signum == signal.SIGHUP:
                os.kill(pid, signal.SIGUSR1)
                end = time.time() + 10
                while "User defined signal 1" not in read(self.paths(fab)["log"]) \
                        and time.time() < end:
                    time.sleep(0.05)
                self.assertIn("received User defined signal 1: running",
                              read(self.paths(fab)["log"]))
                self.assertTrue(pid_alive(pid))
            os.kill(pid, signum)
            self.wait_gone(pid)
            self.assertIn(f"received {name}", read(self.paths(fab)["log"]))
            for what in ("sock", "lock", "pid"):
                self.assertFalse(os.path.exists(self.paths(fab)[what]))

    def test_removed_runtime_dir_stops_the_daemon(self):
        self.up(TWO, "gone")
        pid = self.started["gone"]
        # The SM may be writing its dump files (a temporary file renamed
        # into place) meanwhile: remove until nothing is left.
        d = self.paths("gone")["dir"]
        for _ in range(100):
            shutil.rmtree(d, ignore_errors=True)
            if not os.path.exists(d):
                break
            time.sleep(0.02)
        self.assertFalse(os.path.exists(d))
        self.wait_gone(pid, seconds=10)

    def test_second_up_while_starting(self):
        d = self.paths("busy")["dir"]
        os.makedirs(d, mode=0o700)
        with open(self.paths("busy")["lock"], "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            p = self.ibemu("up", TWO, "--name", "busy", check=1)
        os.unlink(self.paths("busy")["lock"])
        os.rmdir(d)
        self.assertIn("fabric 'busy' is starting", p.stderr)
        self.assertNotIn("pid 0", p.stderr)


if __name__ == "__main__":
    main()
