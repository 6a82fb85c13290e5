#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/sm_routes: routing quality of ibemu-sm next to the real OpenSM's,
each engine against its OpenSM counterpart, on the same ibemu fabric (a
fresh one per run, started with --sm none), both scored by one yardstick:
bench/lft_quality.py on the opensm-lfts.dump and opensm-subnet.lst each SM
writes (ibemu-sm with --dump-dir). Virtual-time figures are deterministic:
the table is the same on any machine.

usage: bench/sm_routes.py [--build DIR] [TOPOLOGY.yaml ...]
default: torus-2d-4x4 and dragonfly-small (dfsssp, updown, minhop) and
fat-tree-2l-36, fat-tree-3l-k8 (ftree, updown, minhop)."""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lft_quality  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# ibemu-sm's engine: OpenSM's name for the same rules.
ENGINES = {"loops": [("dfsssp", "dfsssp"), ("updown", "updn"),
                     ("minhop", "minhop")],
           "trees": [("ftree", "ftree"), ("updown", "updn"),
                     ("minhop", "minhop")]}
LOOPS = {"torus-2d-4x4", "dragonfly-small"}


def run(argv, env):
    p = subprocess.run(argv, capture_output=True, text=True, env=env,
                       timeout=600)
    if p.returncode:
        sys.exit(f"{' '.join(argv)} exited {p.returncode}:\n{p.stdout}"
                 f"{p.stderr}")
    return p.stdout


def score(ibemu, topo, env, sm_argv, workdir):
    """Brings 'topo' up with the SM 'sm_argv' (run under ibemu exec on the
    first HCA, its dumps in 'workdir') and scores its routes."""
    name = "bench-routes"
    run([ibemu, "up", topo, "--name", name, "--sm", "none"], env)
    try:
        run([ibemu, "exec", "--fabric", name, "--", *sm_argv], env)
    finally:
        run([ibemu, "down", "--fabric", name], env)
    return lft_quality.quality(workdir)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("topologies", nargs="*")
    args = ap.parse_args()
    ibemu = os.path.join(args.build, "bin", "ibemu")
    sm = os.path.join(args.build, "bin", "ibemu-sm")
    topos = args.topologies or [
        os.path.join(ROOT, "topologies", t + ".yaml")
        for t in ("torus-2d-4x4", "dragonfly-small", "fat-tree-2l-36",
                  "fat-tree-3l-k8")]
    env = dict(os.environ)
    env.pop("IBEMU_FABRIC", None)
    print(f"{'fabric':<17} {'engine':<8} {'SM':<9} {'shift max':>9} "
          f"{'a2a max':>8} {'a2a mean':>9} {'ideal':>7} {'unrouted':>8}")
    for topo in topos:
        base = os.path.basename(topo)[:-5]
        kind = "loops" if base in LOOPS else "trees"
        for ours, theirs in ENGINES[kind]:
            rows = []
            with tempfile.TemporaryDirectory(prefix="bench-routes-") as d:
                env["OSM_CACHE_DIR"] = d
                rows.append(("OpenSM", score(
                    ibemu, topo, env,
                    ["opensm", "--once", "--config", "/dev/null", "-R",
                     theirs, "-D", "0x41", "--log_file",
                     os.path.join(d, "log"), "--dump_files_dir", d], d)))
            with tempfile.TemporaryDirectory(prefix="bench-routes-") as d:
                rows.append(("ibemu-sm", score(
                    ibemu, topo, env,
                    [sm, "--routing", ours, "--dump-dir", d], d)))
            for who, q in rows:
                print(f"{base:<17} {ours:<8} {who:<9} {q['shift_max']:>9} "
                      f"{q['a2a_max']:>8} {q['a2a_mean']:>9.1f} "
                      f"{q['a2a_ideal']:>7.1f} {q['unrouted']:>8}")
            (_, osm), (_, mine) = rows
            print(f"{'':<17} {'':<8} {'ratio':<9} "
                  f"{mine['shift_max'] / max(osm['shift_max'], 1):>9.2f} "
                  f"{mine['a2a_max'] / max(osm['a2a_max'], 1):>8.2f}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
