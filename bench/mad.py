#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""bench/mad.py: real OpenSM and a libibumad SMP load on ibemu, next to the
same programs on ibsim (Debian's ibsim-utils) in the same run.

For each topology it measures, on both simulators:
  - OpenSM 3.3.23 (/usr/sbin/opensm) run once (-o): wall time from its start
    to the "SUBNET UP" line of its log;
  - bench-mad-smp: directed-route SMP Get(NodeInfo) answered per wall second.
On ibsim the programs run with LD_PRELOAD=libumad2sim.so, on ibemu under
`ibemu exec`, which loads ibemu's libibumad.so.3. Every run gets a fresh
simulator, private sockets, runtime and cache directories, all removed at
the end, even on failure. See bench/README.md.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DEFAULT_TOPOLOGIES = [
    "topologies/single-switch-8.yaml",
    "topologies/fat-tree-2l-36.yaml",
    "topologies/fat-tree-3l-k8.yaml",
    "topologies/fat-tree-2l-1152.yaml",
]
QUICK_TOPOLOGIES = DEFAULT_TOPOLOGIES[:2]

# How `ibemu up` is told to leave the subnet to another SM (OpenSM here).
# Before the daemon had --sm, ("--routes", "none") came closest.
IBEMU_UP_NO_SM = ("--sm", "none")

OPENSM = "/usr/sbin/opensm"
IBSIM = "/usr/bin/ibsim"
UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"

# OpenSM's log lines start "Nov 22 04:15:47 616424 [43F516C0] 0x02 -> ":
# local time to the microsecond, month names always English.
LOG_TIME = re.compile(
    r"^([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{6}) \[")
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun",
          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


class RunError(Exception):
    """A step failed; the message says which and why."""


def log_time(line, near):
    """Wall-clock seconds of an OpenSM log line; 'near' gives the year."""
    m = LOG_TIME.match(line)
    if not m or m.group(1) not in MONTHS:
        return None
    mon = MONTHS.index(m.group(1)) + 1
    year = time.localtime(near).tm_year
    best = None
    # The log has no year: take the one that lands nearest 'near'.
    for y in (year - 1, year, year + 1):
        t = time.mktime((y, mon, int(m.group(2)), int(m.group(3)),
                         int(m.group(4)), int(m.group(5)), 0, 0, -1))
        t += int(m.group(6)) / 1e6
        if best is None or abs(t - near) < abs(best - near):
            best = t
    return best


# --- the fabric, as ibnetdiscover text ---------------------------------

NODE_RE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([^"]+)"')
PORT_RE = re.compile(
    r'^\[(\d+)\](?:\(([0-9a-fA-F]+)\))?\s+"([^"]+)"\[(\d+)\]')


class Fabric:
    """Nodes and cables of an ibnetdiscover file, enough to pick the SM's
    host, its port GUID and directed routes."""

    def __init__(self, text):
        self.order = []     # node names in file order
        self.kind = {}      # name -> "Switch" | "Ca" | "Rt"
        self.nports = {}
        self.links = {}     # name -> {port: (peer, peer_port)}
        self.guid = {}      # CA name -> {port: port GUID}
        cur = None
        for line in text.splitlines():
            m = NODE_RE.match(line)
            if m:
                cur = m.group(3)
                self.order.append(cur)
                self.kind[cur] = m.group(1)
                self.nports[cur] = int(m.group(2))
                self.links[cur] = {}
                self.guid[cur] = {}
                continue
            m = PORT_RE.match(line)
            if m and cur is not None:
                port = int(m.group(1))
                self.links[cur][port] = (m.group(3), int(m.group(4)))
                if m.group(2):
                    self.guid[cur][port] = int(m.group(2), 16)
            elif not line.strip():
                cur = None
        if not any(self.kind[n] == "Ca" for n in self.order):
            raise RunError("the exported fabric has no CA to run OpenSM on")

    def count(self, kind):
        return sum(1 for n in self.order if self.kind[n] == kind)

    def total_ports(self):
        return sum(self.nports.values()) + len(self.order)

    def sm_host(self):
        """The first CA of the file with a cable: where OpenSM runs."""
        for n in self.order:
            if self.kind[n] == "Ca" and self.links[n]:
                port = min(self.links[n])
                guid = self.guid[n].get(port)
                if guid is None:
                    raise RunError(f"no port GUID for {n}:{port}")
                return n, port, guid
        raise RunError("no CA has a cable")

    def dr_path(self, src, src_port, hops):
        """The directed route (smpquery -D style, "0,p1,p2...") to the
        farthest node from 'src', or to the first one 'hops' away if
        that is nearer. Only switches forward SMPs (IBA 14.2.2)."""
        first = self.links[src].get(src_port)
        if first is None:
            raise RunError(f"{src}:{src_port} has no cable")
        seen = {src: [], first[0]: [src_port]}
        queue = deque([first[0]])
        best = first[0]
        while queue:
            node = queue.popleft()
            if len(seen[node]) > len(seen[best]):
                best = node
            if hops is not None and len(seen[node]) >= hops:
                best = node
                break
            if self.kind[node] != "Switch":
                continue
            for port in sorted(self.links[node]):
                peer = self.links[node][port][0]
                if peer not in seen:
                    seen[peer] = seen[node] + [port]
                    queue.append(peer)
        path = seen[best]
        return best, len(path), ",".join(["0"] + [str(p) for p in path])


# --- processes ---------------------------------------------------------

class Runner:
    """Starts every child in its own session and ends only those, by
    process group, on the way out."""

    def __init__(self, verbose):
        self.verbose = verbose
        self.children = []

    def start(self, argv, env, cwd, out, stdin=subprocess.DEVNULL):
        if self.verbose:
            print("  $", " ".join(argv), file=sys.stderr)
        p = subprocess.Popen(argv, env=env, cwd=cwd, stdin=stdin,
                             stdout=out, stderr=subprocess.STDOUT,
                             start_new_session=True)
        self.children.append(p)
        return p

    def run(self, argv, env, cwd, timeout):
        """Runs to completion; returns (exit code, output)."""
        if self.verbose:
            print("  $", " ".join(argv), file=sys.stderr)
        p = subprocess.Popen(argv, env=env, cwd=cwd,
                             stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT,
                             start_new_session=True)
        self.children.append(p)
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop(p)
            out, _ = p.communicate()
            text = out.decode(errors="replace")
            raise RunError(f"{os.path.basename(argv[0])} ran over "
                           f"{timeout} s:\n{tail(text)}")
        finally:
            self.forget(p)
        return p.returncode, out.decode(errors="replace")

    def forget(self, p):
        if p in self.children:
            self.children.remove(p)

    def stop(self, p, grace=2.0):
        """Ends the process group of one child we started."""
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                p.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
        self.forget(p)

    def stop_all(self):
        for p in list(self.children):
            self.stop(p)


def tail(*texts, n=8):
    """The last lines of each text, indented, empty texts left out."""
    out = []
    for text in texts:
        lines = [l for l in text.splitlines() if l.strip()]
        out += ["    " + l for l in lines[-n:]]
    return "\n".join(out)


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


# --- the two programs measured ------------------------------------------

def opensm_argv(opts, guid, logfile):
    # -o: one sweep, then exit. -F /dev/null: no config file (the default
    # /etc/opensm/opensm.conf would apply if present). -f: our log, not
    # /var/log/opensm.log. -d 2: flush every log line, so SUBNET UP shows
    # while OpenSM still runs. -g: bind the port by GUID.
    argv = [OPENSM, "-o", "-F", "/dev/null", "-f", logfile, "-d", "2",
            "-g", f"0x{guid:016x}"]
    if opts.routing:
        argv += ["-R", opts.routing]
    return argv


def opensm_env(base, rundir):
    env = dict(base)
    # Cache (guid2lid, guid2mkey, neighbors) and dumps (opensm-subnet.lst,
    # routing dumps): private, not /var/cache/opensm and /var/log.
    env["OSM_CACHE_DIR"] = os.path.join(rundir, "cache")
    env["OSM_TMP_DIR"] = os.path.join(rundir, "tmp")
    os.makedirs(env["OSM_CACHE_DIR"], exist_ok=True)
    os.makedirs(env["OSM_TMP_DIR"], exist_ok=True)
    return env


def run_opensm(runner, prefix, env, rundir, opts, guid, limit):
    """OpenSM once, for at most 'limit' seconds; returns seconds from its
    start to SUBNET UP."""
    what = "ibemu exec -- opensm" if prefix else "OpenSM"
    logfile = os.path.join(rundir, "opensm.log")
    outfile = os.path.join(rundir, "opensm.out")
    argv = prefix + opensm_argv(opts, guid, logfile)
    with open(outfile, "wb") as out:
        t0 = time.time()
        p = runner.start(argv, env, rundir, out)
        up = None
        deadline = t0 + limit
        # The figure comes from the log line's own timestamp: looking at
        # the log seldom costs no precision and leaves the CPUs to OpenSM.
        while True:
            try:
                p.wait(timeout=0.1)
            except subprocess.TimeoutExpired:
                pass
            if up is None:
                for line in read(logfile).splitlines():
                    if line.endswith("-> SUBNET UP"):
                        up = log_time(line, t0)
                        if up is None:  # unparsable: when we saw it
                            up = time.time()
                        # -o: it exits right after; give it a moment.
                        deadline = min(deadline, time.time() + 10)
                        break
            if p.poll() is not None:
                break
            if time.time() > deadline:
                runner.stop(p)
                if up is None:
                    raise RunError(
                        f"{what}: no SUBNET UP in {limit:.0f} s\n"
                        + tail(read(outfile), read(logfile)))
                print(f"  warning: {what} reached SUBNET UP but did "
                      f"not exit; stopped it", file=sys.stderr)
                break
    runner.forget(p)
    if up is None:
        # It exits 0 even when it could not bind: the log tells.
        for line in read(logfile).splitlines():
            if line.endswith("-> SUBNET UP"):
                up = log_time(line, t0) or time.time()
        if up is None:
            raise RunError(f"{what} exited ({p.returncode}) without "
                           f"SUBNET UP:\n"
                           f"{tail(read(outfile), read(logfile))}")
    return up - t0


RESULT_RE = re.compile(r"^result: (.*)$", re.M)


def run_smp(runner, prefix, env, rundir, opts, path):
    argv = prefix + [opts.smp_bin, "-p", path, "-n", str(opts.count),
                     "-w", str(opts.window), "-t", str(opts.timeout)]
    rc, out = runner.run(argv, env, rundir, opts.smp_run_timeout)
    m = RESULT_RE.search(out)
    if rc or not m:
        raise RunError(f"bench-mad-smp exited {rc}:\n{tail(out)}")
    res = {}
    for kv in m.group(1).split():
        k, v = kv.split("=", 1)
        res[k] = float(v)
    if res["timeouts"] or res["errors"]:
        print(f"  warning: bench-mad-smp: {int(res['timeouts'])} timeouts, "
              f"{int(res['errors'])} errors", file=sys.stderr)
    return res["smps_per_s"]


# --- ibsim ---------------------------------------------------------------

def unix_socket_bound(name):
    """Is the abstract Unix socket 'name' bound (ibsim is listening)?
    /proc/net/unix shows its NUL bytes as '@': ibsim binds the name with
    a NUL before and after it."""
    for line in read("/proc/net/unix").splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 8 and parts[7].strip("@") == name:
            return True
    return False


class Ibsim:
    """One ibsim process with its own socket names (IBSIM_SOCKNAME): its
    Unix sockets live in the abstract namespace, so runs never clash."""

    def __init__(self, runner, fab, netfile, rundir, sockname):
        self.runner = runner
        self.sockname = sockname
        # Table sizes above ibsim's defaults for large fabrics.
        argv = [IBSIM, "-s", "-n",
                "-N", str(max(2048, len(fab.order) + 16)),
                "-S", str(max(256, fab.count("Switch") + 16)),
                "-P", str(max(13312, fab.total_ports() + 64)),
                netfile]
        env = dict(os.environ, IBSIM_SOCKNAME=sockname)
        self.outfile = os.path.join(rundir, "ibsim.out")
        with open(self.outfile, "wb") as out:
            self.p = runner.start(argv, env, rundir, out)
        # Clients retry a refused connection only every 2 s: wait until
        # ibsim listens, or that sleep would land in OpenSM's time.
        deadline = time.time() + 30
        while not unix_socket_bound(sockname + ":ctl"):
            if self.p.poll() is not None or time.time() > deadline:
                self.stop()
                raise RunError("ibsim did not start:\n"
                               + tail(read(self.outfile)))
            time.sleep(0.01)

    def client_env(self, host):
        env = dict(os.environ)
        env["LD_PRELOAD"] = UMAD2SIM
        env["IBSIM_SOCKNAME"] = self.sockname
        env["SIM_HOST"] = host  # the node the client attaches to
        return env

    def stop(self):
        self.runner.stop(self.p)


def step(errors, fn):
    """fn()'s value, or None with its error noted: a failed OpenSM run
    does not keep the SMP benchmark from running."""
    try:
        return fn()
    except RunError as e:
        errors.append(str(e))
        return None


def ibsim_once(runner, fab, netfile, workdir, tag, host, guid, path, opts,
               limit):
    """One fresh ibsim: OpenSM (unless 'limit' is None), then
    bench-mad-smp. Returns (seconds to SUBNET UP, SMPs/s, errors); a value
    is None if its step failed or did not run."""
    rundir = os.path.join(workdir, "ibsim-" + tag)
    os.makedirs(rundir)
    sockname = f"ibemu-bench-{os.getpid()}-{os.path.basename(workdir)}-{tag}"
    sim = Ibsim(runner, fab, netfile, rundir, sockname)
    errors = []
    try:
        # umad2sim makes a fake sysfs in ./sys-PID: cwd is our rundir.
        env = opensm_env(sim.client_env(host), rundir)
        up = None
        if limit:
            up = step(errors, lambda: run_opensm(runner, [], env, rundir,
                                                 opts, guid, limit))
        rate = None
        if opts.count:
            rate = step(errors, lambda: run_smp(
                runner, [], sim.client_env(host), rundir, opts, path))
        return up, rate, errors
    finally:
        sim.stop()


# --- ibemu ---------------------------------------------------------------

def ibemu_once(runner, topo, workdir, tag, host, guid, path, opts, limit):
    """As ibsim_once, on a fresh ibemu fabric."""
    rundir = os.path.join(workdir, "ibemu-" + tag)
    os.makedirs(rundir)
    env = dict(os.environ)
    env["IBEMU_RUNTIME_DIR"] = os.path.join(workdir, "runtime")
    env.pop("IBEMU_FABRIC", None)
    # Unique per process, topology and run: a fabric left behind by a
    # failed 'down' cannot take the next one's name.
    name = f"bench-mad-{os.getpid()}-{os.path.basename(workdir)}-{tag}"
    ibemu = opts.ibemu_bin
    errors = []
    try:
        rc, out = runner.run([ibemu, "up", topo, "--name", name,
                              *IBEMU_UP_NO_SM], env, rundir, 300)
        if rc:
            raise RunError(f"ibemu up exited {rc}:\n{tail(out)}")
        prefix = [ibemu, "--fabric", name, "exec", "--host", host, "--"]
        up = None
        if limit:
            up = step(errors, lambda: run_opensm(
                runner, prefix, opensm_env(env, rundir), rundir, opts, guid,
                limit))
        rate = None
        if opts.count:
            rate = step(errors, lambda: run_smp(runner, prefix, env, rundir,
                                                opts, path))
        return up, rate, errors
    finally:
        ibemu_down(runner, ibemu, name, env, rundir)


def ibemu_down(runner, ibemu, name, env, rundir):
    fabdir = os.path.join(env["IBEMU_RUNTIME_DIR"], name)
    if not os.path.isdir(fabdir):
        return  # 'ibemu up' failed before making it
    pidfile = os.path.join(fabdir, "pid")
    pid = None
    try:
        pid = int(read(pidfile).strip())
    except ValueError:
        pass
    try:
        rc, out = runner.run([ibemu, "--fabric", name, "down"], env, rundir,
                             30)
        if rc:
            print(f"  warning: ibemu down exited {rc}:\n{tail(out)}",
                  file=sys.stderr)
    except RunError as e:
        print(f"  warning: {e}", file=sys.stderr)
    # The daemon we started must not outlive us.
    if pid and pid_alive(pid):
        os.kill(pid, signal.SIGTERM)
        for _ in range(200):
            if not pid_alive(pid):
                break
            time.sleep(0.01)
        else:
            os.kill(pid, signal.SIGKILL)


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours counts as gone.
    return " Z " not in read(f"/proc/{pid}/stat")


# --- the benchmark -------------------------------------------------------

def best_of(fn, repeat, limit):
    """Runs fn(i, limit) 'repeat' times: the shortest time to SUBNET UP and
    the highest SMP rate over the runs that gave them, and the errors. An
    OpenSM that failed once is not run again (limit None): it would only
    wait out its time limit again. A simulator that does not start ends
    it."""
    ups, rates, errors = [], [], []
    for i in range(repeat):
        try:
            up, rate, errs = fn(i, limit)
        except RunError as e:
            errors.append(str(e))
            break
        if up is not None:
            ups.append(up)
        elif limit:
            limit = None
        if rate is not None:
            rates.append(rate)
        errors += errs
    return {"up": min(ups) if ups else None,
            "rate": max(rates) if rates else None,
            "errors": errors}


def measure(runner, topo, idx, workdir, opts):
    """Both sides for one topology; returns a result dict for the table."""
    res = {"topo": os.path.basename(topo)}
    tdir = os.path.join(workdir, f"t{idx}")
    os.makedirs(tdir)
    rc, text = runner.run([opts.ibemu_bin, "topo", "export", topo],
                          dict(os.environ), tdir, 120)
    if rc:
        raise RunError(f"ibemu topo export exited {rc}:\n{tail(text)}")
    netfile = os.path.join(tdir, "fabric.net")
    with open(netfile, "w") as f:
        f.write(text)
    fab = Fabric(text)
    host, port, guid = fab.sm_host()
    target, hops, path = fab.dr_path(host, port, opts.hops)
    res.update(switches=fab.count("Switch"), hcas=fab.count("Ca"),
               host=host, target=target, hops=hops, path=path)
    print(f"{res['topo']}: {res['switches']} switches, {res['hcas']} HCAs; "
          f"OpenSM on {host} (port GUID 0x{guid:016x}); SMPs to {target}, "
          f"{hops} hops (path {path})", flush=True)

    for side in ("ibsim", "ibemu"):
        if opts.only not in (None, side):
            continue
        limit = opts.osm_timeout
        ref = res.get("ibsim", {}).get("up")
        if limit is None:
            # A stuck OpenSM retries for ever: bound it by the reference.
            limit = max(20.0, 30 * ref) if ref else 120.0
        if side == "ibsim":
            def fn(i, lim):
                return ibsim_once(runner, fab, netfile, tdir, f"{i}", host,
                                  guid, path, opts, lim)
        else:
            def fn(i, lim):
                return ibemu_once(runner, topo, tdir, f"{i}", host, guid,
                                  path, opts, lim)
        r = best_of(fn, opts.repeat, limit)
        res[side] = r
        up = f"{r['up'] * 1000:.1f} ms" if r["up"] is not None else "FAILED"
        rate = (f"{r['rate']:,.0f}" if r["rate"] is not None
                else "FAILED" if opts.count else "-")
        print(f"  {side}: SUBNET UP after {up}; SMPs/s {rate}", flush=True)
        # The same failure in every run is printed once.
        for e in dict.fromkeys(r["errors"]):
            n = r["errors"].count(e)
            runs = f" ({n} runs)" if n > 1 else ""
            print(f"  {side} FAILED{runs}: {e}", flush=True)
    return res


def fmt_ms(v):
    return f"{v * 1000:.1f}" if v is not None else "FAILED"


def fmt_rate(v):
    return f"{v:,.0f}" if v is not None else "FAILED"


def fmt_ratio(a, b):
    return f"{a / b:.2f}x" if a is not None and b else "-"


def print_table(results, opts):
    """The summary; returns True if any run failed."""
    print()
    print("OpenSM 3.3.23 run once (-o) to SUBNET UP, wall ms from its start"
          + (f", routing {opts.routing}" if opts.routing else "")
          + f"; best of {opts.repeat}")
    if opts.count:
        print(f"SMPs/s: DR Get(NodeInfo) answered per wall second, window "
              f"{opts.window}, {opts.count} SMPs")
    head = (f"{'topology':24} {'hops':>4} | {'ibsim ms':>9} {'ibemu ms':>9} "
            f"{'ibemu/ibsim':>11} | {'ibsim SMP/s':>11} {'ibemu SMP/s':>11} "
            f"{'ibemu/ibsim':>11} | target")
    print(head)
    print("-" * len(head))
    failed = False
    for r in results:
        if "error" in r:
            print(f"{r['topo']:24} FAILED: {r['error'].splitlines()[0]}")
            failed = True
            continue
        cols = {}
        for side in ("ibsim", "ibemu"):
            v = r.get(side)
            if v is None:
                cols[side] = ("-", "-", None, None)
                continue
            if v["errors"]:
                failed = True
            cols[side] = (fmt_ms(v["up"]),
                          fmt_rate(v["rate"]) if opts.count else "-",
                          v["up"], v["rate"])
        up_i, up_e = cols["ibsim"][2], cols["ibemu"][2]
        if "ibsim" not in r or "ibemu" not in r:
            verdict = "-"
        elif up_i is None or up_e is None:
            verdict = "n/a"
        else:
            # The target: no slower than ibsim.
            verdict = "PASS" if up_e <= up_i else "MISS"
        print(f"{r['topo']:24} {r['hops']:>4} | {cols['ibsim'][0]:>9} "
              f"{cols['ibemu'][0]:>9} {fmt_ratio(up_e, up_i):>11} | "
              f"{cols['ibsim'][1]:>11} {cols['ibemu'][1]:>11} "
              f"{fmt_ratio(cols['ibemu'][3], cols['ibsim'][3]):>11} | "
              f"{verdict}")
    print()
    print("Target: OpenSM reaches SUBNET UP on ibemu no slower than on ibsim "
          "(time ratio <= 1).")
    for side in ("ibsim", "ibemu"):
        bad = [r for r in results if r.get(side) and r[side]["errors"]]
        if bad:
            print(f"The {side} side FAILED on {len(bad)} of {len(results)} "
                  f"topologies (" + ", ".join(r["topo"] for r in bad)
                  + "): its figures there are missing or partial; the "
                  "errors are above.")
    return failed


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="OpenSM time to SUBNET UP and SMPs per second on ibemu, "
        "against ibsim on the same topology in the same run.")
    ap.add_argument("topologies", nargs="*", metavar="TOPOLOGY",
                    help="YAML fabrics (default: the four shipped ones; "
                    "--quick: the two small ones)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: the two small fabrics, 5000 SMPs, "
                    "one run per side")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="build directory holding bin/ibemu and "
                    "bench/bench-mad-smp (default: %(default)s)")
    ap.add_argument("--count", type=int,
                    help="SMPs per bench-mad-smp run (default 50000; "
                    "--quick 5000; 0 skips it)")
    # OpenSM keeps at most max_wire_smps (4 by default, -n) SMPs on the
    # wire: the same window makes the rate the one OpenSM lives with.
    ap.add_argument("--window", type=int, default=4,
                    help="SMPs kept in flight (default %(default)s, as "
                    "OpenSM's max_wire_smps)")
    ap.add_argument("--timeout", type=int, default=1000,
                    help="ms before an SMP counts as lost "
                    "(default %(default)s)")
    ap.add_argument("--hops", type=int,
                    help="send the SMPs to a node this many hops away "
                    "(default: the farthest node from OpenSM's port)")
    ap.add_argument("--routing", metavar="ENGINE",
                    help="OpenSM routing engine (-R), e.g. updn, ftree; "
                    "default OpenSM's (minhop)")
    ap.add_argument("--repeat", type=int,
                    help="runs per side, a fresh simulator each; the best "
                    "counts (default 3; --quick 1)")
    ap.add_argument("--only", choices=["ibsim", "ibemu"],
                    help="run one side only")
    ap.add_argument("--osm-timeout", type=float,
                    help="seconds OpenSM may take to SUBNET UP (default: "
                    "20, or 30 times ibsim's time if longer; 120 without "
                    "ibsim)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the work directory (logs) and print it")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print every command")
    opts = ap.parse_args(argv)
    if not opts.topologies:
        opts.topologies = QUICK_TOPOLOGIES if opts.quick else \
            DEFAULT_TOPOLOGIES
    # Children run in their own directories: every path absolute.
    opts.topologies = [os.path.abspath(t) if os.path.exists(t)
                       else os.path.join(ROOT, t) for t in opts.topologies]
    opts.build = os.path.abspath(opts.build)
    if opts.count is None:
        opts.count = 5000 if opts.quick else 50000
    if opts.repeat is None:
        opts.repeat = 1 if opts.quick else 3
    if opts.repeat < 1 or opts.window < 1 or opts.count < 0:
        ap.error("--repeat and --window must be >= 1, --count >= 0")
    opts.ibemu_bin = os.path.join(opts.build, "bin", "ibemu")
    opts.smp_bin = os.path.join(opts.build, "bench", "bench-mad-smp")
    # Generous: a slow side should show as a low rate, not a failure.
    opts.smp_run_timeout = 60 + opts.count * opts.timeout / 1000.0 / \
        max(1, opts.window)
    return opts


def check_tools(opts):
    missing = [p for p in (OPENSM, IBSIM, UMAD2SIM, opts.ibemu_bin,
                           opts.smp_bin) if not os.path.exists(p)]
    if missing:
        hint = ""
        if opts.ibemu_bin in missing or opts.smp_bin in missing:
            hint = (f"\n  build them: cmake --build {opts.build} "
                    "--target ibemu ibumad bench-mad-smp")
        if OPENSM in missing or IBSIM in missing or UMAD2SIM in missing:
            hint += "\n  apt-get install opensm ibsim-utils"
        sys.exit("mad.py: missing " + ", ".join(missing) + hint)


def main(argv):
    opts = parse_args(argv)
    check_tools(opts)

    # SIGTERM (timeout(1), CI) unwinds like Ctrl-C: through the finally.
    def on_term(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_term)

    runner = Runner(opts.verbose)
    workdir = tempfile.mkdtemp(prefix="ibemu-bench-mad-")
    results = []
    try:
        print(f"bench/mad.py: {len(opts.topologies)} topologies, "
              f"build {opts.build}")
        for idx, topo in enumerate(opts.topologies):
            try:
                results.append(measure(runner, topo, idx, workdir, opts))
            except RunError as e:
                results.append({"topo": os.path.basename(topo),
                                "error": str(e)})
                print(f"{os.path.basename(topo)}: FAILED: {e}", flush=True)
        failed = print_table(results, opts)
    except KeyboardInterrupt:
        print("\nmad.py: interrupted", file=sys.stderr)
        failed = True
    finally:
        runner.stop_all()
        if opts.keep:
            print(f"work directory kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
