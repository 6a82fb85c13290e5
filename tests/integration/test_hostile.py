# SPDX-License-Identifier: MIT
"""Hostile same-user clients (tests/hostile/) against a real daemon: a
control client that never reads its answers, one that eats the daemon's
file descriptors, a MAD flood the daemon must log, and tiny-message
traffic studies whose client leaves. Each checks that the daemon's memory
(VmRSS), CPU time (utime + stime) and log stay within the limits listed
in docs/security.md, "Limits", and that it still answers after."""

import os
import resource
import signal
import subprocess
import sys
import time

from harness import (IBEMU, SRC, UMAD_LIB, IbemuTestCase, cpu_share, main,
                     sanitizer_preload, tool_env, topology)

HOSTILE = os.path.join(SRC, "tests", "hostile")
BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
CLIENT = os.path.join(BUILD, "tests", "umad-client")
FT = topology("fat-tree-2l-36.yaml")
# Instrumented daemons are slower and bigger: smaller floods there.
ASAN = sanitizer_preload(UMAD_LIB) is not None
MiB = 1 << 20


def rss(pid):
    """VmRSS of 'pid' in bytes."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for pid {pid}")


def hostile(script, *args):
    return [sys.executable, os.path.join(HOSTILE, script), *map(str, args)]


class HostileTest(IbemuTestCase):
    def start(self, name):
        self.up(FT, name)
        return self.started[name]

    def sock(self, name, which):
        return os.path.join(self.paths(name)["dir"], which)

    def assert_answers(self, name):
        p = self.ibemu("status", "--fabric", name, check=0)
        self.assertIn(name, p.stdout)

    def test_control_client_that_never_reads(self):
        # Each 'ports --json' answer is about 30 KB on this fabric: 3,000
        # unread would queue 90 MB; the daemon stops serving the client
        # once 4 MiB wait (CTL_QUEUE_SOFT), one answer more at most.
        pid = self.start("hctl")
        base = rss(pid)
        flood = subprocess.Popen(
            hostile("ctl_flood.py", self.sock("hctl", "ctl.sock"), 3000, 3),
            stdout=subprocess.PIPE, text=True)
        peak = base
        try:
            time.sleep(1)
            # Others are served meanwhile.
            self.assert_answers("hctl")
            while flood.poll() is None:
                peak = max(peak, rss(pid))
                time.sleep(0.1)
        finally:
            out = flood.communicate(timeout=30)[0]
        self.assertEqual(flood.returncode, 0, out)
        # ASan's quarantine keeps freed answers resident a while.
        self.assertLess(peak - base, (80 if ASAN else 24) * MiB,
                        f"RSS {base} -> {peak} bytes ({out.strip()})")
        self.assertLess(cpu_share(pid, 1.0), 0.5)
        self.assert_answers("hctl")
        self.down("hctl")

    def eat(self, path, kind, most):
        """Starts fd_eater on 'path'; returns (proc, its report line)."""
        p = subprocess.Popen(hostile("fd_eater.py", path, kind, most),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
        line = p.stdout.readline()
        return p, line

    def release(self, eater):
        eater.stdin.close()
        eater.wait(timeout=30)

    def test_file_descriptor_exhaustion(self):
        pid = self.start("hfd")
        # The daemon's limit a few fds above what it holds: the eater
        # reaches it quickly, whatever the machine's limit.
        held = len(os.listdir(f"/proc/{pid}/fd"))
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (held + 8, held + 8))
        sess = self.sock("hfd", "sess.sock")
        eater, line = self.eat(sess, "seqpacket", 40)
        try:
            self.assertIn("too many open files", line)
            self.assertNotIn("refused=0", line)
            # Refusing costs nothing more: the daemon does not spin on a
            # listening socket it cannot accept from.
            self.assertLess(cpu_share(pid, 1.5), 0.5)
            p = subprocess.run([IBEMU, "exec", "--fabric", "hfd", CLIENT,
                                "ca"], capture_output=True, text=True,
                               env=tool_env(self.env), timeout=60)
            self.assertIn("the daemon has too many open files", p.stderr,
                          f"stdout: {p.stdout}\nstderr: {p.stderr}")
            self.assertNotIn("is gone", p.stderr)
            # The control socket is refused alike, with the reason.
            p = self.ibemu("status", "--fabric", "hfd", check=1)
            self.assertIn("too many open files", p.stderr)
        finally:
            self.release(eater)
        time.sleep(0.3)
        self.assert_answers("hfd")
        p = subprocess.run([IBEMU, "exec", "--fabric", "hfd", CLIENT, "ca"],
                           capture_output=True, text=True,
                           env=tool_env(self.env), timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        # Control connections that eat the fds leave sess.sock refused.
        ctl, line = self.eat(self.sock("hfd", "ctl.sock"), "stream", 40)
        try:
            self.assertIn("too many open files", line)
            self.assertLess(cpu_share(pid, 1.0), 0.5)
        finally:
            self.release(ctl)
        time.sleep(0.3)
        self.assert_answers("hfd")
        with open(self.paths("hfd")["log"]) as f:
            self.assertIn("refused a session client: the daemon has too "
                          "many open files", f.read())
        self.down("hfd")

    def test_mad_flood_log_is_bounded(self):
        pid = self.start("hmad")
        log = self.paths("hmad")["log"]
        before = os.path.getsize(log)
        count = 20000
        for how in ("unregistered", "pkey"):
            p = subprocess.run(hostile("mad_flood.py",
                                       self.sock("hmad", "sess.sock"),
                                       count, how),
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
        time.sleep(0.5)  # the daemon reads what is queued
        grown = os.path.getsize(log) - before
        # A line is about 130 bytes: 40,000 unthrottled would be 5 MB.
        # Throttled: 5 a reason, then one a second, and the detach lines.
        self.assertLess(grown, 16 * 1024, f"daemon.log grew {grown} bytes")
        with open(log) as f:
            text = f.read()
        self.assertIn("which it has not registered", text)
        self.assertIn("names no P_Key", text)
        self.assertIn("log lines about it were suppressed", text)
        self.assertLess(cpu_share(pid, 1.0), 0.5)
        self.assert_answers("hmad")
        self.down("hmad")

    def test_log_rotates(self):
        # A log left nearly full by earlier daemons of the name: the new
        # daemon's first lines push it past 8 MiB; it starts daemon.log
        # anew and keeps one old file.
        d = self.paths("hrot")["dir"]
        os.makedirs(d, mode=0o700)
        filler = b"x" * 99 + b"\n"
        with open(self.paths("hrot")["log"], "wb") as f:
            f.write(filler * ((8 * MiB - 100) // len(filler)))
        self.start("hrot")
        old = self.paths("hrot")["log"] + ".1"
        self.assertTrue(os.path.exists(old))
        self.assertGreaterEqual(os.path.getsize(old), 8 * MiB - 200)
        self.assertLess(os.path.getsize(self.paths("hrot")["log"]), 4096)
        with open(self.paths("hrot")["log"]) as f:
            self.assertIn("log rotated", f.read())
        self.assert_answers("hrot")
        self.down("hrot")

    def test_job_flood(self):
        """Jobs of 'ibemu run' (attach/sess_job.c): 4 x 65,536 ranks at
        most, 4,096 keys a rank, 64 MiB of values in all; the daemon
        answers meanwhile and frees everything when the streams close."""
        pid = self.start("hjob")
        base = rss(pid)
        flood = subprocess.Popen(
            hostile("job_flood.py", self.sock("hjob", "sess.sock")),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = flood.stdout.readline()
        self.assertEqual(line.split(), [
            "joins=4", "refused=-28", "streams=67", "puts=65536",
            "key_limit=16", "byte_limit=51"], line)
        self.assertLess(rss(pid) - base, 128 * MiB)
        self.assert_answers("hjob")
        flood.communicate(timeout=30)
        self.assertEqual(flood.returncode, 0)
        self.assert_answers("hjob")
        self.down("hjob")

    def test_tiny_message_studies(self):
        pid = self.start("htiny")
        for size in ("0", "3GiB"):
            p = self.ibemu("traffic", "uniform", "--size", size,
                           "--fabric", "htiny", check=2)
            self.assertIn("--size", p.stderr)
        # 1-byte messages, one per 20 ns per host for 10 ms: 18 million,
        # past the 4,194,304 a study may hold; refused before it starts.
        p = self.ibemu("traffic", "uniform", "--size", "1", "--duration",
                       "10ms", "--fabric", "htiny", check=2)
        self.assertIn("4194304", p.stderr)
        p = self.ibemu("traffic", "--stop", "--fabric", "htiny", check=1)
        self.assertIn("no study is running", p.stderr)

        # A client that leaves half way stops its study (2 ms of 1-byte
        # messages: 3.6 million, seconds of work).
        base = rss(pid)
        p = subprocess.run(hostile("tiny_study.py",
                                   self.sock("htiny", "ctl.sock"), 1.2,
                                   "uniform", "--size", "1", "--duration",
                                   "2ms"),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("progress=0", p.stdout)
        self.assertIn("answer=None", p.stdout)
        time.sleep(0.3)
        self.assertLess(cpu_share(pid, 1.0), 0.5)
        self.assertLess(rss(pid) - base, 256 * MiB)
        self.ibemu("traffic", "uniform", "--duration", "2us", "--fabric",
                   "htiny", check=0)

        # 'ibemu traffic --stop' stops a study; its client says so.
        cli = subprocess.Popen([IBEMU, "traffic", "uniform", "--size", "1",
                                "--duration", "2ms", "--fabric", "htiny"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=self.env)
        time.sleep(1)
        self.ibemu("traffic", "--stop", "--fabric", "htiny", check=0)
        out, err = cli.communicate(timeout=30)
        self.assertEqual(cli.returncode, 1, err)
        self.assertIn("stopped by 'ibemu traffic --stop'", err)

        # Ctrl-C on the CLI stops it too.
        cli = subprocess.Popen([IBEMU, "traffic", "uniform", "--size", "1",
                                "--duration", "2ms", "--fabric", "htiny"],
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=self.env)
        time.sleep(1)
        cli.send_signal(signal.SIGINT)
        cli.wait(timeout=30)
        time.sleep(0.3)
        self.assertLess(cpu_share(pid, 1.0), 0.5)
        self.ibemu("traffic", "uniform", "--duration", "2us", "--fabric",
                   "htiny", check=0)
        with open(self.paths("htiny")["log"]) as f:
            self.assertEqual(f.read().count("its client went away"), 2)
        self.assert_answers("htiny")
        self.down("htiny")


if __name__ == "__main__":
    main()
