# SPDX-License-Identifier: MIT
"""Careless processes and daemons (issue 18, items 5 and 6), through
tests/clients/verbs-gone.c, a verbs program linked against the system libibverbs:

- a process whose daemon went away ('ibemu down', or kill -9) and was
  replaced by a new one under the same fabric name learns it as a program
  learns that its device was removed: IBV_EVENT_DEVICE_FATAL on the async
  fd, then EIO from every call, and never a word with the new daemon (its
  ibv_query_port() does not say Active);
- an RDMA WRITE, READ and WRITE with immediate of length 0 with R_Key 0
  between two processes complete successfully (IBA C9-88)."""

import os
import signal
import subprocess
import tempfile
import time

from harness import IBEMU, IbemuTestCase, main, pid_alive, tool_env, topology

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
GONE = os.path.join(BUILD, "tests", "verbs-gone")
TWO = topology("two-switch.yaml")


class GoneTest(IbemuTestCase):
    def setUp(self):
        super().setUp()
        for key in ("IBEMU_SESSION_SOCKET", "IBEMU_HOST"):
            self.env.pop(key, None)
        self.tool_env = tool_env(self.env)

    def exec_popen(self, fabric, host, *cmd, stdin=None):
        return subprocess.Popen(
            [IBEMU, "exec", "--fabric", fabric, "--host", host, "--", *cmd],
            stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env=self.tool_env)

    def tearDown(self):
        # Fabrics a failed check left running, before the leak check.
        for name, pid in self.started.items():
            if pid_alive(pid):
                self.ibemu("down", "--fabric", name)
        super().tearDown()

    def replaced_under(self, name, stop):
        """Runs 'verbs-gone fatal' on fabric 'name', then stop(name) and
        a new daemon under the same name; returns its output and status.
        The new daemon holds nothing for the process when it is done."""
        self.up(TWO, name)
        p = self.exec_popen(name, "hca3", GONE, "fatal",
                            stdin=subprocess.PIPE)
        try:
            ready = p.stdout.readline()
            self.assertTrue(ready.startswith("ready"), ready)
            self.assertIn("state=active", ready.lower())
            stop(name)
            self.up(TWO, name)
            p.stdin.write("go\n")
            p.stdin.flush()
            out, _ = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.down(name)
        return ready + out, p.returncode

    def assert_fatal(self, out, status):
        self.assertEqual(status, 0, out)
        self.assertNotIn("FAIL", out)
        self.assertIn("event=DEVICE_FATAL", out)
        self.assertIn("done", out)

    def test_down_and_up(self):
        out, status = self.replaced_under(
            "gdown", lambda name: self.down(name, clients_gone=False))
        self.assert_fatal(out, status)

    def test_kill_9(self):
        def kill(name):
            pid = self.started[name]
            os.kill(pid, signal.SIGKILL)
            end = time.time() + 10
            while pid_alive(pid) and time.time() < end:
                time.sleep(0.01)
            self.assertFalse(pid_alive(pid))
        out, status = self.replaced_under("gkill", kill)
        self.assert_fatal(out, status)

    def test_zero_length_rdma(self):
        self.up(TWO, "gzero")
        with tempfile.TemporaryDirectory() as tmp:
            a_out, b_out = os.path.join(tmp, "a"), os.path.join(tmp, "b")
            a = self.exec_popen("gzero", "hca1", GONE, "zero", a_out, b_out)
            b = self.exec_popen("gzero", "hca3", GONE, "zero", b_out, a_out)
            outs = []
            for p in (a, b):
                try:
                    outs.append(p.communicate(timeout=90)[0])
                finally:
                    if p.poll() is None:
                        p.kill()
                        p.wait()
        for p, out in zip((a, b), outs):
            self.assertEqual(p.returncode, 0, out)
            self.assertNotIn("FAIL", out)
            for i in range(3):
                self.assertIn(f"send{i}=success", out)
            self.assertIn("recv=success byte_len=0", out)
        self.down("gzero")


if __name__ == "__main__":
    main()
