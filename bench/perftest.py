#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/perftest: how long Debian's perftest latency programs take on the
wall clock under ibemu's time rule, next to ib_send_lat measured in the
same run (the reference: both its ends block in the library, so it runs
as fast as the daemon's hand-offs go). ib_write_lat's ends spin on
memory instead (docs/design.md §3, "Memory polling"): its ratio to
ib_send_lat is what the memory-polling rule costs (issue 20's target: at
most 2). Each program also prints its virtual one-way latency
(t_typical), which is the model's and the same on every machine, and
the host's load average before and after (on a loaded host a spinner
waits for its time slices: the ratio is meant for a quiet one).

usage: bench/perftest.py [--build DIR] [--iters N] [--repeat N]
The fabric is topologies/two-switch.yaml with its resident ibemu-sm; the
programs run between hca1 and hca2."""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = ("ib_send_lat", "ib_write_lat", "ib_read_lat")


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port):
    """Whether a socket listens on 'port' (read from /proc: connecting to
    see would be the server's one connection)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                cols = line.split()
                if int(cols[1].split(":")[1], 16) == port and \
                        cols[3] == "0A":
                    return True
    return False


def loadavg():
    """The host's 1-minute load average, as /proc/loadavg says it."""
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def run_pair(ibemu, fabric, prog, iters, env):
    """(wall s, client's t_typical us) of one run of 'prog'."""
    port = free_port()
    args = [prog, "-n", str(iters), "-p", str(port), "--output=latency"]
    exec_on = [ibemu, "exec", "--fabric", fabric, "--host"]
    t0 = time.monotonic()
    srv = subprocess.Popen(exec_on + ["hca1", "--"] + args, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    end = time.time() + 30
    while not listening(port) and time.time() < end:
        time.sleep(0.01)
    cli = subprocess.run(exec_on + ["hca2", "--"] + args + ["127.0.0.1"],
                         env=env, capture_output=True, text=True, timeout=600)
    if srv.wait(timeout=60) or cli.returncode:
        sys.exit(f"{prog} failed:\n{cli.stdout}{cli.stderr}")
    return time.monotonic() - t0, float(cli.stdout.split()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--iters", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("up_args", nargs="*", help="more arguments of ibemu up")
    a = ap.parse_args()
    if not shutil.which("ib_write_lat"):
        sys.exit("perftest is not installed (./ibemu.sh deps)")
    ibemu = os.path.join(os.path.abspath(a.build), "bin", "ibemu")
    env = dict(os.environ, IBEMU_RUNTIME_DIR=tempfile.mkdtemp(
        prefix="ibemu-bench-perftest-"))
    fabric = "benchperftest"
    subprocess.run([ibemu, "up", os.path.join(ROOT, "topologies",
                                              "two-switch.yaml"),
                    "--name", fabric, *a.up_args], env=env, check=True,
                   capture_output=True)
    load_before = loadavg()
    try:
        best = {}
        for _ in range(a.repeat):  # interleaved: the ratio holds on a load
            for prog in PROGRAMS:
                wall, lat = run_pair(ibemu, fabric, prog, a.iters, env)
                if prog not in best or wall < best[prog][0]:
                    best[prog] = (wall, lat)
    finally:
        subprocess.run([ibemu, "down", "--fabric", fabric], env=env,
                       capture_output=True)
    load_after = loadavg()
    ref = best["ib_send_lat"][0]
    print(f"{'program':<14}{'wall s':>9}{'x send':>9}{'virtual us':>12}"
          f"   (-n {a.iters}, best of {a.repeat})")
    for prog in PROGRAMS:
        wall, lat = best[prog]
        print(f"{prog:<14}{wall:>9.2f}{wall / ref:>9.2f}{lat:>12.2f}")
    print(f"load average (1 min): {load_before} before, {load_after} after,"
          f" {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
