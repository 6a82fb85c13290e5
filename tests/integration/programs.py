# SPDX-License-Identifier: MIT
"""Real verbs programs between two attached processes: Debian's
ibv_*_pingpong (and any program of that shape) run under 'ibemu exec' on
two HCAs, their TCP exchange awaited, their figures checked."""

import re
import socket
import subprocess
import time

from harness import IBEMU

FIGURES = re.compile(r"^\d+ bytes in [\d.]+ seconds = .*\n"
                     r"\d+ iters in [\d.]+ seconds = [\d.]+ usec/iter$",
                     re.M)


def free_port():
    """A TCP port nobody listens on, for the pingpongs' exchange."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port):
    """Whether a TCP socket listens on 'port' (any address)."""
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as f:
                for line in f.readlines()[1:]:
                    parts = line.split()
                    if (parts[3] == "0A" and
                            int(parts[1].rsplit(":", 1)[1], 16) == port):
                        return True
        except FileNotFoundError:
            pass
    return False


class PingpongRunner:
    """For IbemuTestCase subclasses that set self.tool_env."""

    def exec_popen(self, fabric, host, *cmd):
        return subprocess.Popen(
            [IBEMU, "exec", "--fabric", fabric,
             "--host", host, "--", *cmd],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=self.tool_env)

    def pingpong(self, fabric, prog, a, b, *args):
        """Runs 'prog args' as server on HCA a and client on HCA b;
        returns both outputs, asserting success."""
        port = str(free_port())
        srv = self.exec_popen(fabric, a, prog, "-p", port, *args)
        end = time.time() + 20
        while not listening(int(port)) and time.time() < end:
            self.assertIsNone(srv.poll(), srv.stdout.read()
                              if srv.poll() is not None else "")
            time.sleep(0.02)
        cli = self.exec_popen(fabric, b, prog, "-p", port, *args,
                              "localhost")
        outs = []
        for p in (cli, srv):
            try:
                out, _ = p.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                out, _ = p.communicate()
            outs.append(out)
            self.assertEqual(p.returncode, 0,
                             f"{prog} {' '.join(args)} on {a}/{b}: {out}")
        for out in outs:
            self.assertRegex(out, FIGURES)
        return outs
