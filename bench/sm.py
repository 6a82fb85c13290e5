#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/sm: time to SUBNET UP of ibemu-sm against the real OpenSM, both on
the same ibemu fabric (started with --sm none, fresh for each run) in the
same run, so the ratio holds on any machine. OpenSM runs once ('-o'), its
time read from its log's SUBNET UP line (bench/mad.py's run_opensm);
ibemu-sm runs once and exits after SUBNET UP. Also printed: the virtual
time the fabric stands at afterwards ('ibemu status'), which for ibemu-sm
is the subnet's bring-up in virtual time.

usage: bench/sm.py [--build DIR] [--quick | --big] [--repeat N] [TOPOLOGY.yaml ...]
       bench/sm.py --up [--hosts N] [--ref-build DIR] [--repeat N]
The default fabrics: the shipped fat trees and, with up/down on both SMs,
the torus and the dragonfly; a generated two-level fat tree of 648 HCAs
(36-port switches); --quick: the 36-HCA fat tree and the torus; --big:
generated fat trees of 648 (two levels), 1,782 and 10,000 HCAs (three
levels, 36-port switches), then 'ibemu up' (daemon and ibemu-sm) of the
10,000-HCA tree, timed whole (OpenSM takes about 25 s there).

--up: 'ibemu up' of the generated three-level fat tree of --hosts HCAs
(default 10,000, 36-port switches) alone, timed whole to SUBNET UP, with
the CPU time the daemon and ibemu-sm spent by then, next to two
references measured in the same run: the same bring-up with the binaries
of --ref-build (another build, e.g. main's; runs interleaved, so the
ratio holds on a loaded machine), and the MAD path's speed right now:
bench-mad-smp's one-hop SMPs per second on the same fabric without an
SM, from which the bring-up's SMPs (sm.json) would take a time printed
as 'SMP-path time' (the bring-up over it says how much beyond the MADs'
own round trips it costs). The target is under 3 s."""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mad  # noqa: E402  (bench/mad.py: OpenSM's run and its log)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UPDOWN = {"torus-2d-4x4", "dragonfly-small"}
# OpenSM's names of the same engines.
OSM_ENGINE = {"minhop": "minhop", "updown": "updn"}


def sh(argv, env, timeout=600):
    p = subprocess.run(argv, capture_output=True, text=True, env=env,
                       timeout=timeout)
    if p.returncode:
        raise mad.RunError(f"{' '.join(argv)} exited {p.returncode}:\n"
                           f"{p.stdout}{p.stderr}")
    return p.stdout


class Fabric:
    """One fresh ibemu fabric without an SM, stopped on exit."""

    def __init__(self, ibemu, topo, env, name):
        self.ibemu, self.env, self.name = ibemu, env, name
        sh([ibemu, "up", topo, "--name", name, "--sm", "none"], env)

    def status(self):
        return json.loads(sh([self.ibemu, "status", "--fabric", self.name,
                              "--json"], self.env))

    def first_hca(self):
        nodes = json.loads(sh([self.ibemu, "nodes", "--type", "hca",
                               "--fabric", self.name, "--json"], self.env))
        return nodes["nodes"][0]["name"]

    def port_guid(self, host):
        ports = json.loads(sh([self.ibemu, "ports", host, "--fabric",
                               self.name, "--json"], self.env))["ports"]
        return int(ports[0]["guid"], 16)

    def down(self):
        subprocess.run([self.ibemu, "down", "--fabric", self.name],
                       capture_output=True, env=self.env, timeout=120)


def run_ibemu_sm(fab, host, sm_bin, engine):
    argv = [fab.ibemu, "--fabric", fab.name, "exec", "--host", host, "--",
            sm_bin, "--routing", engine]
    t0 = time.time()
    out = sh(argv, fab.env)
    secs = time.time() - t0
    if "SUBNET UP" not in out:
        raise mad.RunError(f"ibemu-sm did not bring the subnet up:\n{out}")
    return secs


def run_osm(fab, host, engine, workdir):
    class Opts:
        routing = OSM_ENGINE[engine]
    rundir = tempfile.mkdtemp(dir=workdir)
    prefix = [fab.ibemu, "--fabric", fab.name, "exec", "--host", host, "--"]
    runner = mad.Runner(False)
    try:
        return mad.run_opensm(runner, prefix, mad.opensm_env(fab.env, rundir),
                              rundir, Opts(), fab.port_guid(host), 300)
    finally:
        runner.stop_all()


def measure(topo, args, env, workdir, engine):
    """Best of --repeat runs of each SM: (osm s, osm ps, sm s, sm ps)."""
    best = [None, None, None, None]
    base = os.path.splitext(os.path.basename(topo))[0]
    for i in range(args.repeat):
        for k, which in ((0, "osm"), (2, "sm")):
            fab = Fabric(args.ibemu, topo, env, f"bsm-{os.getpid()}-{i}-{which}")
            try:
                host = fab.first_hca()
                secs = (run_osm(fab, host, engine, workdir) if which == "osm"
                        else run_ibemu_sm(fab, host, args.sm, engine))
                ps = fab.status()["virtual_time_ps"]
            finally:
                fab.down()
            if best[k] is None or secs < best[k]:
                best[k], best[k + 1] = secs, ps
    print(f"{base:22s} {engine:7s} {best[0]:9.3f} s {best[2]:9.3f} s "
          f"{best[0] / best[2]:8.1f}x  {best[1] / 1e6:10.1f} us "
          f"{best[3] / 1e6:10.1f} us  "
          f"{'PASS' if best[0] >= 5 * best[2] else 'MISS'}", flush=True)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--up", action="store_true")
    ap.add_argument("--hosts", type=int, default=10000)
    ap.add_argument("--ref-build")
    ap.add_argument("topologies", nargs="*")
    args = ap.parse_args()
    args.ibemu = os.path.join(args.build, "bin", "ibemu")
    args.sm = os.path.join(args.build, "bin", "ibemu-sm")
    need = [args.ibemu, args.sm]
    if args.up:
        need.append(os.path.join(args.build, "bench", "bench-mad-smp"))
        if args.ref_build:
            need += [os.path.join(args.ref_build, "bin", b)
                     for b in ("ibemu", "ibemu-sm")]
    else:
        need.append(mad.OPENSM)
    for f in need:
        if not os.path.exists(f):
            sys.exit(f"bench/sm.py: {f} is missing (build, or ./ibemu.sh deps)")
    workdir = tempfile.mkdtemp(prefix="bench-sm.")
    env = dict(os.environ, IBEMU_RUNTIME_DIR=os.path.join(workdir, "rt"))
    env.pop("IBEMU_FABRIC", None)
    if args.up:
        return bench_up(args, env, workdir)
    topos = args.topologies
    if args.big and not topos:
        for kind, hosts in (("fat-tree-2l", 648), ("fat-tree-3l", 1782),
                            ("fat-tree-3l", 10000)):
            name = f"{kind}-{hosts}"
            gen = os.path.join(workdir, name + ".yaml")
            with open(gen, "w") as f:
                f.write(sh([args.ibemu, "topo", "gen", kind, "--hosts",
                            str(hosts), "--radix", "36", "--name", name],
                           env))
            topos.append(gen)
    if not topos:
        names = (["fat-tree-2l-36", "torus-2d-4x4"] if args.quick else
                 ["fat-tree-2l-36", "fat-tree-3l-k8", "fat-tree-2l-1152",
                  "torus-2d-4x4", "dragonfly-small"])
        topos = [os.path.join(ROOT, "topologies", n + ".yaml") for n in names]
        if not args.quick:
            gen = os.path.join(workdir, "fat-tree-2l-648.yaml")
            with open(gen, "w") as f:
                f.write(sh([args.ibemu, "topo", "gen", "fat-tree-2l",
                            "--hosts", "648", "--radix", "36",
                            "--name", "fat-tree-2l-648"], env))
            topos.insert(2, gen)
    print("time to SUBNET UP on the same ibemu fabric (wall, best of "
          f"{args.repeat}), and the virtual time after")
    print(f"{'fabric':22s} {'routing':7s} {'OpenSM':>11s} {'ibemu-sm':>11s} "
          f"{'ratio':>9s}  {'OpenSM virt':>13s} {'sm virt':>13s}  "
          "target >= 5x")
    failed = 0
    for topo in topos:
        base = os.path.splitext(os.path.basename(topo))[0]
        engine = "updown" if base in UPDOWN else "minhop"
        try:
            measure(topo, args, env, workdir, engine)
        except mad.RunError as e:
            failed = 1
            print(f"{base}: {e}", file=sys.stderr)
    if args.big:
        failed |= measure_up(topos[-1], args, env)
    return failed


def measure_up(topo, args, env):
    """'ibemu up' of 'topo' whole (daemon start, then ibemu-sm resident
    until SUBNET UP), best of --repeat; the target is under 3 s."""
    best = None
    for i in range(args.repeat):
        name = f"bsm-{os.getpid()}-up{i}"
        t0 = time.time()
        try:
            out = sh([args.ibemu, "up", topo, "--name", name], env)
        except mad.RunError as e:
            print(f"ibemu up: {e}", file=sys.stderr)
            return 1
        finally:
            secs = time.time() - t0
            subprocess.run([args.ibemu, "down", "--fabric", name],
                           capture_output=True, env=env, timeout=120)
        m = re.search(r"in ([\d.]+) s", out)
        sm_s = float(m.group(1)) if m else float("nan")
        if best is None or secs < best[0]:
            best = (secs, sm_s)
    base = os.path.splitext(os.path.basename(topo))[0]
    print(f"ibemu up {base}: {best[0]:.3f} s wall (daemon start "
          f"{best[0] - best[1]:.3f} s, ibemu-sm to SUBNET UP "
          f"{best[1]:.3f} s), best of {args.repeat}  "
          f"{'PASS' if best[0] < 3 else 'MISS'} (target < 3 s)", flush=True)
    return 0


def proc_cpu(pid):
    """User and system CPU seconds of a live process (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick


def up_once(ibemu, topo, env, name):
    """One 'ibemu up' to SUBNET UP: wall s, the SM's s, the daemon's and
    the SM's CPU s at that moment, SMPs, virtual ps; the fabric is
    stopped after."""
    rundir = os.path.join(env["IBEMU_RUNTIME_DIR"], name)
    load = os.getloadavg()[0]
    t0 = time.time()
    try:
        out = sh([ibemu, "up", topo, "--name", name], env)
        wall = time.time() - t0
        m = re.search(r"ibemu-sm \(pid (\d+).* in ([\d.]+) s", out)
        if not m:
            raise mad.RunError(f"ibemu up: no SUBNET UP in:\n{out}")
        with open(os.path.join(rundir, "pid")) as f:
            dpid = int(f.read().split()[0])
        cpu_sm, cpu_d = proc_cpu(int(m.group(1))), proc_cpu(dpid)
        ps = json.loads(sh([ibemu, "status", "--fabric", name, "--json"],
                           env))["virtual_time_ps"]
        # sm.json is written at the end of the sweep, before SUBNET UP.
        with open(os.path.join(rundir, "sm.json")) as f:
            smps = json.load(f)["last_sweep"]["smps"]
    finally:
        subprocess.run([ibemu, "down", "--fabric", name],
                       capture_output=True, env=env, timeout=120)
    return {"wall": wall, "sm": float(m.group(2)), "cpu_sm": cpu_sm,
            "cpu_d": cpu_d, "smps": smps, "ps": ps,
            "load": (load + os.getloadavg()[0]) / 2}


def smp_rate(args, topo, env, name):
    """bench-mad-smp's one-hop Get(NodeInfo)s per wall second (window 64)
    on 'topo' without an SM: the MAD path's speed on this machine now."""
    fab = Fabric(args.ibemu, topo, env, name)
    try:
        out = sh([args.ibemu, "--fabric", name, "exec", "--host",
                  fab.first_hca(), "--",
                  os.path.join(args.build, "bench", "bench-mad-smp"),
                  "-p", "0,1", "-n", "100000", "-w", "64"], env)
    finally:
        fab.down()
    m = re.search(r"smps_per_s=([\d.]+)", out)
    if not m:
        raise mad.RunError(f"bench-mad-smp: no result in:\n{out}")
    return float(m.group(1))


def median(xs):
    xs = sorted(xs)
    return (xs[(len(xs) - 1) // 2] + xs[len(xs) // 2]) / 2


def bench_up(args, env, workdir):
    """--up: see the module's docstring. On a loaded machine single runs
    say little: the summary is medians over the runs, and this build's
    figures over the reference build's of the same round."""
    name = f"fat-tree-3l-{args.hosts}"
    topo = os.path.join(workdir, name + ".yaml")
    with open(topo, "w") as f:
        f.write(sh([args.ibemu, "topo", "gen", "fat-tree-3l", "--hosts",
                    str(args.hosts), "--radix", "36", "--name", name], env))
    builds = [("this", args.ibemu)]
    if args.ref_build:
        builds.append(("ref", os.path.join(args.ref_build, "bin", "ibemu")))
    print(f"ibemu up {name} to SUBNET UP: wall, the SM's own figure, CPU "
          "of the daemon and of ibemu-sm at that moment; then the MAD path "
          "(bench-mad-smp, one hop, window 64) right after")
    runs = {tag: [] for tag, _ in builds}
    try:
        for i in range(args.repeat):
            for tag, ibemu in builds:
                r = up_once(ibemu, topo, env, f"bsm-{os.getpid()}-{tag}{i}")
                r["rate"] = smp_rate(args, topo, env,
                                     f"bsm-{os.getpid()}-r{tag}{i}")
                r["cpu"] = r["cpu_d"] + r["cpu_sm"]
                # What the bring-up's SMPs cost at the MAD path's speed.
                r["ref"] = r["smps"] / r["rate"]
                runs[tag].append(r)
                print(f"  {tag:4s} run {i + 1}: {r['wall']:6.3f} s wall "
                      f"(ibemu-sm {r['sm']:.3f} s), CPU daemon "
                      f"{r['cpu_d']:.2f} s + ibemu-sm {r['cpu_sm']:.2f} s, "
                      f"{r['smps']} SMPs, {r['ps'] / 1e6:.1f} us virtual; "
                      f"MAD path {r['rate'] / 1e3:.0f} k SMPs/s: "
                      f"{r['ref']:.3f} s for those SMPs; load "
                      f"{r['load']:.1f}", flush=True)
    except mad.RunError as e:
        print(f"bench/sm.py --up: {e}", file=sys.stderr)
        return 1
    for tag, rs in runs.items():
        wall = median([r["wall"] for r in rs])
        print(f"{tag:4s} median of {len(rs)}: {wall:.3f} s wall (best "
              f"{min(r['wall'] for r in rs):.3f}), CPU "
              f"{median([r['cpu'] for r in rs]):.2f} s, bring-up / MAD "
              f"path {median([r['wall'] / r['ref'] for r in rs]):.2f}, "
              f"load {median([r['load'] for r in rs]):.1f} (1-minute "
              f"average, {os.cpu_count()} CPUs)  "
              f"{'PASS' if wall < 3 else 'MISS'} (target < 3 s)")
    if args.ref_build:
        pairs = list(zip(runs["this"], runs["ref"]))
        same = all(a["ps"] == b["ps"] for a, b in pairs)
        print(f"this / ref, median of {len(pairs)} rounds: wall "
              f"{median([a['wall'] / b['wall'] for a, b in pairs]):.2f}, "
              f"CPU {median([a['cpu'] / b['cpu'] for a, b in pairs]):.2f}; "
              f"virtual time {'equal' if same else 'DIFFERS'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
