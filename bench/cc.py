#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/cc: the congestion control experiments (IBA Annex A10) and what
congestion control costs the engine.

On a fresh fabric brought up by ibemu-sm with ibemu's default CC policy,
it runs 'ibemu traffic incast --victims' and 'ibemu traffic
congestion-tree' with --cc off and --cc on and prints, per run, the
hotspot's utilization, the contributors' Jain index, the victims' min and
mean throughput over their max-min fair share, the virtual end of the
study and its engine events. Those figures are virtual-time results: the
same on any machine. Then the wall time of the engine's work: each study
is timed three times, and the table gives events per second with CC on
over the same with CC off (a ratio, measured in the same run, so it reads
the same on a loaded machine); the on runs also take more events (CNPs,
wake-ups of throttled sources).

With --plot DIR it also writes the incast's two plots there
(incast-cc-off.png, incast-cc-on.png), docs/congestion-control.md's figures.

usage: bench/cc.py [--build DIR] [--topology FILE] [--duration T]
                   [--backlog N] [--plot DIR]"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--topology", default=os.path.join(
        ROOT, "topologies", "fat-tree-2l-36.yaml"))
    ap.add_argument("--duration", default="5ms")
    ap.add_argument("--backlog", default="4")
    ap.add_argument("--plot", metavar="DIR")
    a = ap.parse_args()
    ibemu = os.path.join(a.build, "bin", "ibemu")
    env = dict(os.environ, IBEMU_RUNTIME_DIR=tempfile.mkdtemp(
        prefix="ibemu-bench-cc-"))

    def cli(*args):
        p = subprocess.run([ibemu, *args], capture_output=True, text=True,
                           env=env, timeout=1200)
        if p.returncode:
            sys.exit(f"ibemu {' '.join(args)}: {p.stderr.strip()}")
        return p.stdout

    cli("up", a.topology, "--name", "benchcc")
    try:
        print(f"fabric {os.path.basename(a.topology)}, --duration "
              f"{a.duration} --backlog {a.backlog}, ibemu-sm's default "
              "CC policy")
        print(f"{'study':<28} {'cc':<4} {'hotspot':>8} {'jain':>6} "
              f"{'victims min':>11} {'mean':>6} {'end us':>9} "
              f"{'events':>9} {'Mev/s':>6}")
        rates = {}
        for pattern, extra in (("incast --victims", ["--victims"]),
                               ("congestion-tree", [])):
            name = pattern.split()[0]
            for cc in ("off", "on"):
                walls = []
                for _ in range(3):
                    t0 = time.perf_counter()
                    out = cli("--fabric", "benchcc", "traffic", name,
                              *extra, "--duration", a.duration, "--backlog",
                              a.backlog, "--cc", cc, "--json", "--top", "0")
                    walls.append(time.perf_counter() - t0)
                s = json.loads(out)["summary"]
                rate = s["events"] / min(walls) / 1e6
                rates[(name, cc)] = rate
                print(f"{pattern:<28} {cc:<4} "
                      f"{s['hotspot_utilization']:>8.3f} "
                      f"{s['jain_contributors']:>6.3f} "
                      f"{s['victims_min_fair_ratio']:>11.3f} "
                      f"{s['victims_mean_fair_ratio']:>6.3f} "
                      f"{s['end_ns'] / 1000:>9.1f} {s['events']:>9} "
                      f"{rate:>6.2f}")
        for name in ("incast", "congestion-tree"):
            print(f"{name}: events/s with CC on / off = "
                  f"{rates[(name, 'on')] / rates[(name, 'off')]:.2f}")
        if a.plot:
            os.makedirs(a.plot, exist_ok=True)
            for cc in ("off", "on"):
                path = os.path.abspath(
                    os.path.join(a.plot, f"incast-cc-{cc}.png"))
                cli("--fabric", "benchcc", "traffic", "incast", "--victims",
                    "--duration", a.duration, "--backlog", a.backlog,
                    "--cc", cc, "--plot", path)
                print(f"wrote {path}")
    finally:
        cli("down", "--fabric", "benchcc")


if __name__ == "__main__":
    main()
