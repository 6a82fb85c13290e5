# SPDX-License-Identifier: MIT
"""The program's own clocks under 'ibemu exec' (vtime/, docs/design.md §3).

tests/clients/vtime-client.c reads clock_gettime (MONOTONIC,
MONOTONIC_RAW, BOOTTIME, REALTIME), gettimeofday, time, rdtsc and rdtscp
around 20 SEND ping-pongs and checks that each moved exactly as
ibemu_now_ps() did; the test asserts that it passed, and that its output
(the durations) is the same on two fresh daemons, in a thread created
after start, in a fork()ed child and in an exec()ed child. A program with
its own SIGSEGV handler still gets its NULL dereference (and rdtsc stays
virtual); without one it dies of SIGSEGV. '--wall-clock' leaves the
clocks real.

A program whose libibverbs comes late, with dlopen() as in Open MPI's
MPI_Init (tests/clients/vtime-late.c), gets a virtual TSC in the threads
that ran before, in those created after, in a fork()ed and an exec()ed
child, beside its own SIGSEGV handlers; a runtime's rdtsc stays real, and
so does that of a thread that blocks every signal.

Unmodified perftest (Debian's) on bench-verbs' fabric (two HCAs on one 4x
EDR switch): ib_send_lat's and ib_read_lat's t_typical (the median of
the iterations -H prints) equal the model's latencies (vtime-client's
'latency', by ibemu_now_ps() alone) within 1%, identical in two runs
(their averages: plus at most the receives ib_send_lat posts in its
loop); ib_write_lat's is bench-verbs' RDMA WRITE latency plus
ibv_post_send's cost within 1%; ib_write_bw's and ib_read_bw's average
bandwidth is within 1% of bench-verbs' 64 KiB figure."""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from harness import (IBEMU, SRC, VERBS_LIB, IbemuTestCase, main,
                     sanitizer_preload, tool_env, topology)

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
CLIENT = os.path.join(BUILD, "tests", "vtime-client")
BENCH = os.path.join(BUILD, "bench", "bench-verbs")
SANITIZED = sanitizer_preload(VERBS_LIB) is not None

# bench/verbs.c's fabric.
# hca_model: wire: the model the "latency" client prints is a wire HCA's
# (test-transport.c's arithmetic); integration.hca_model checks perftest
# against the ConnectX presets.
BENCH_FABRIC = """name: bench-verbs
defaults: {width: 4x, speed: EDR, cable_length: 2m, hca_model: wire}
switches:
  - {name: sw, ports: 36}
hcas:
  - {name: hca1}
  - {name: hca2}
links:
  - [sw:1, hca1:1]
  - [sw:2, hca2:1]
"""


class VtimeCase(IbemuTestCase):
    def setUp(self):
        super().setUp()
        for key in ("IBEMU_SESSION_SOCKET", "IBEMU_HOST",
                    "IBEMU_VTIME_START_PS"):
            self.env.pop(key, None)
        self.tool_env = tool_env(self.env)

    def client(self, fabric, mode, *opts, check=True):
        p = subprocess.run(
            [IBEMU, "exec", "--fabric", fabric, "--host", "hca1", *opts,
             "--", CLIENT, mode], capture_output=True, text=True,
            env=self.tool_env, timeout=120)
        if check:
            self.assertEqual(p.returncode, 0,
                             f"vtime-client {mode}: {p.stdout}{p.stderr}")
            self.assertNotIn("FAIL", p.stdout)
        return p


class ProgramClockTest(VtimeCase):
    def fresh(self, name, mode):
        """'mode' on a fresh two-switch fabric; the durations it printed
        in nanoseconds. (Those in coarser units, microseconds, seconds and
        TSC ticks, are checked exact by the client; they depend on where
        the start fell within a unit: ibemu-sm's sweeps move the fabric's
        time before the program starts, by as much as the wall clock let
        them run.)"""
        self.up(topology("two-switch.yaml"), name)
        out = self.client(name, mode).stdout
        self.down(name)
        return [line for line in out.splitlines()
                if line.endswith(" ns")]

    def test_clocks_follow_virtual_time(self):
        """Every clock moved exactly as the virtual clock (the client
        checks), by the same amounts on two fresh daemons."""
        a, b = self.fresh("vc0", "measure"), self.fresh("vc1", "measure")
        self.assertEqual(a, b)
        self.assertEqual(len(a), 4, a)
        self.assertRegex(a[0], r"^monotonic [1-9]\d* ns$")

    def test_thread_created_after_start(self):
        self.assertEqual(self.fresh("vct", "thread"),
                         self.fresh("vcm", "measure"))

    def test_fork(self):
        self.assertEqual(self.fresh("vcf", "fork"),
                         self.fresh("vcm", "measure"))

    def test_exec_of_a_child(self):
        """The exec'd image is virtual too (the loader reads the TSC
        before the library is back: the exec wrapper releases it)."""
        self.assertEqual(self.fresh("vce", "exec"),
                         self.fresh("vcm", "measure"))

    def test_own_sigsegv_handler(self):
        self.up(topology("two-switch.yaml"), "vcs")
        env = dict(self.tool_env)
        if SANITIZED:  # ASan keeps SIGSEGV to itself unless told
            env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") +
                                   ":allow_user_segv_handler=1")
        p = subprocess.run(
            [IBEMU, "exec", "--fabric", "vcs", "--host", "hca1", "--",
             CLIENT, "segv"], capture_output=True, text=True, env=env,
            timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("handler got the fault at (nil)", p.stdout)
        self.down("vcs")

    def test_default_action_still_kills(self):
        self.up(topology("two-switch.yaml"), "vcd")
        p = self.client("vcd", "segv-dfl", check=False)
        self.assertIn("tsc checked", p.stdout)
        self.assertNotIn("FAIL", p.stdout)
        if SANITIZED:  # ASan's handler reports it and exits
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("SEGV", p.stderr)
        else:
            self.assertEqual(p.returncode, -signal.SIGSEGV, p.stderr)
        self.down("vcd")

    def test_wall_clock_opts_out(self):
        self.up(topology("two-switch.yaml"), "vcw")
        p = self.client("vcw", "measure", "--wall-clock", check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("FAIL", p.stdout)
        self.down("vcw")


LATE = os.path.join(BUILD, "tests", "vtime-late")


class LateStartTest(VtimeCase):
    """A program whose libibverbs comes with dlopen(), as Open MPI's does
    (tests/clients/vtime-late.c): the threads that ran before, one
    created after and the main thread all read a virtual TSC, at the same
    offset and never behind the real one read before; a runtime's rdtsc
    stays real, and so does that of a thread that blocks every signal."""

    def late(self, name, mode):
        self.up(topology("two-switch.yaml"), name)
        env = dict(self.tool_env)
        if SANITIZED and mode == "segv":
            env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") +
                                   ":allow_user_segv_handler=1")
        p = subprocess.run(
            [IBEMU, "exec", "--fabric", name, "--host", "hca1", "--", LATE,
             mode], capture_output=True, text=True, env=env, timeout=120)
        self.down(name)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertNotIn("FAIL", p.stdout)
        return p.stdout.splitlines()

    def want(self, *whos):
        """Each check declares 1 us of computation between its reads, and
        its clock_gettime after the first rdtsc costs 20 ns (vtime/
        vtime_int.h); in a sanitized program the sanitizer's interceptor
        makes that read, from its own code: free."""
        ns = 1000 if SANITIZED else 1020
        return [f"{who} rdtsc {ns} ns monotonic {ns} ns" for who in whos]

    def threads_part(self):
        """What the 'threads' part prints: a thread that blocks every
        signal is left untrapped (vtime/threads.c)."""
        return (self.want("thread0", "thread1", "thread2", "thread3") +
                ["blocked rdtsc real"] + self.want("main") +
                ["runtime rdtsc real"])

    def test_threads_before_and_after(self):
        self.assertEqual(self.late("vl0", "threads"), self.threads_part())

    def test_fork(self):
        self.assertEqual(self.late("vl1", "fork"),
                         self.threads_part() + self.want("child"))

    def test_exec_of_a_child(self):
        """The child, a program of its own, turns virtual when it loads
        libibverbs in turn."""
        once = self.threads_part()
        self.assertEqual(self.late("vl2", "exec"), once + once)

    def test_own_sigsegv_handler(self):
        """A handler installed before the switch (as UCX's and Open MPI's
        are) and one after both get their faults."""
        self.assertEqual(self.late("vl3", "segv"),
                         self.want("before", "after-fault", "after-second")
                         + ["handlers got the faults"])


def post_send_cost_us():
    """ibv_post_send's cost per WQE in verbs/cost.h's table (us)."""
    with open(os.path.join(SRC, "verbs", "cost.h")) as f:
        m = re.search(r'\[IBEMU_VCOST_POST_SEND\] = \{"ibv_post_send", 0, '
                      r'(\d+) \* IBEMU_NS\}', f.read())
    return int(m.group(1)) / 1e3


def cpu_mhz():
    """The TSC's frequency as perftest and vtime/ read it."""
    with open("/proc/cpuinfo") as f:
        for line in f:
            m = re.match(r"cpu MHz\s*:\s*([\d.]+)", line)
            if m:
                return float(m.group(1))
    return 1000.0


def listening(port):
    """Whether a TCP socket listens on 'port' (perftest's server)."""
    want = f":{port:04X} "
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as f:
                for line in f:
                    cols = line.split()
                    if len(cols) > 3 and want in cols[1] + " " and \
                            cols[3] == "0A":
                        return True
        except OSError:
            pass
    return False


@unittest.skipUnless(shutil.which("ib_send_lat"),
                     "perftest is not installed (./ibemu.sh deps)")
class PerftestTest(VtimeCase):
    def setUp(self):
        super().setUp()
        self.topo_dir = tempfile.mkdtemp(prefix="ibemu-vtime-")
        self.addCleanup(shutil.rmtree, self.topo_dir, True)
        self.topo = os.path.join(self.topo_dir, "bench-verbs.yaml")
        with open(self.topo, "w") as f:
            f.write(BENCH_FABRIC)
        self.port = 20000 + os.getpid() % 20000

    def perftest(self, fabric, tool, *args):
        """Runs 'tool' on hca1 (server) and hca2 (client); the client's
        output."""
        cmd = [tool, "-p", str(self.port), *args]
        srv = subprocess.Popen(
            [IBEMU, "exec", "--fabric", fabric, "--host", "hca1", "--",
             *cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env=self.tool_env)
        try:
            end = time.time() + 30
            while not listening(self.port) and time.time() < end:
                time.sleep(0.02)
            cli = subprocess.run(
                [IBEMU, "exec", "--fabric", fabric, "--host", "hca2", "--",
                 *cmd, "127.0.0.1"], capture_output=True, text=True,
                env=self.tool_env, timeout=300)
            out, _ = srv.communicate(timeout=60)
        finally:
            if srv.poll() is None:
                srv.kill()
                srv.communicate()
        self.assertEqual(cli.returncode, 0, cli.stdout + cli.stderr)
        self.assertEqual(srv.returncode, 0, out)
        return cli.stdout

    def figure(self, fabric, tool, *args):
        """The client's last line: the figure --output= asks for."""
        out = self.perftest(fabric, tool, *args)
        return float(out.strip().splitlines()[-1])

    def one_way(self, fabric, tool, *args):
        """'tool' with -H (every iteration's one-way time, to the ps):
        the median of those, as perftest's t_typical is, and the table's
        t_typical and t_avg (to 10 ns)."""
        out = self.perftest(fabric, tool, "-H", *args)
        each = sorted(float(m) for m in
                      re.findall(r"^ *\d+, ([\d.]+)$", out, re.M))
        row = re.search(r"^ *\d+ +\d+ +([\d.]+) +([\d.]+) +([\d.]+)"
                        r"\s+([\d.]+)", out, re.M)
        self.assertTrue(each and row, out)
        n = len(each)
        median = (each[n // 2] if n % 2 else
                  (each[n // 2 - 1] + each[n // 2]) / 2)
        return median, float(row.group(3)), float(row.group(4))

    def assert_typical(self, got, model, what):
        """A one-way figure from one_way() is the model's within 1%,
        perftest's own t_typical too (to its 10 ns)."""
        median, typical, _ = got
        self.assert_within(median, model, 0.01, what)
        self.assertLessEqual(abs(typical - median), 0.005 + 1e-9,
                             f"{what}: t_typical {typical}, median {median}")

    def assert_within(self, got, want, frac, what):
        self.assertLessEqual(abs(got - want), frac * want,
                             f"{what}: {got}, model {want}")

    def latencies(self, name):
        """On a fresh fabric: the model's latencies (us), then
        ib_send_lat's and ib_read_lat's one_way()."""
        self.up(self.topo, name)
        model = dict(line.split() for line in
                     self.client(name, "latency").stdout.splitlines())
        out = (int(model["send_oneway_ps"]) / 1e6,
               int(model["read_ps"]) / 1e6,
               self.one_way(name, "ib_send_lat"),
               self.one_way(name, "ib_read_lat"))
        self.down(name)
        return out

    def assert_model_plus_calls(self, got, model, what):
        """perftest's average is the model's post-to-completion time plus
        its loop's other calls (verbs/cost.h: once the receives it posted
        first are used, ib_send_lat posts one each round), 0.2 us at
        most, never less (to the table's 10 ns)."""
        self.assertGreaterEqual(got, model - 0.005 - 1e-6, f"{what}: {got}, "
                                f"model {model}")
        self.assertLessEqual(got, model + 0.2 + 0.005 + 1e-6,
                             f"{what}: {got}, model {model}")

    def test_latency(self):
        """t_typical is the model's one-way latency within 1% (it is
        closer: the TSC's rounding), the average at most the calls
        above it; identical in two runs, to the TSC's rounding:
        perftest's figures are ticks, which fall differently with the
        time the programs start at (one tick apart at most)."""
        runs = [self.latencies(f"vpl{i}") for i in range(2)]
        send, read, send_lat, read_lat = runs[0]
        print(f"\nmodel: send {send} us, read {read} us; ib_send_lat "
              f"{send_lat}, ib_read_lat {read_lat} (median, t_typical, "
              f"t_avg); again {runs[1]}")
        self.assert_typical(send_lat, send, "ib_send_lat")
        self.assert_typical(read_lat, read, "ib_read_lat")
        self.assert_model_plus_calls(send_lat[2], send, "ib_send_lat")
        self.assert_model_plus_calls(read_lat[2], read, "ib_read_lat")
        self.assertEqual(runs[0][:2], runs[1][:2])
        tick_us = 1 / cpu_mhz()
        for a, b in zip(runs[0][2:], runs[1][2:]):
            self.assertLessEqual(abs(a[0] - b[0]), tick_us + 1e-9, runs)

    def test_write_latency(self):
        """ib_write_lat's ends wait by reading the buffer the peer
        writes, so its one-way figure is the model's: bench-verbs' 8-byte
        RDMA WRITE latency (the transport driven directly) plus what the
        one call in its path costs (ibv_post_send, verbs/cost.h), within
        1%; the same on two fresh daemons, to the TSC's tick."""
        bench = subprocess.run([BENCH], capture_output=True, text=True,
                               timeout=300)
        self.assertEqual(bench.returncode, 0, bench.stderr)
        model_us = float(re.search(
            r"8-byte RDMA WRITE latency.*\n +model: +([\d.]+) ns",
            bench.stdout).group(1)) / 1e3 + post_send_cost_us()
        runs = []
        for i in range(2):
            self.up(self.topo, f"vpw{i}")
            runs.append(self.one_way(f"vpw{i}", "ib_write_lat", "-s", "8"))
            self.down(f"vpw{i}")
        print(f"\nmodel {model_us:.5f} us; ib_write_lat -s 8 (median, "
              f"t_typical, t_avg): {runs}")
        self.assert_typical(runs[0], model_us, "ib_write_lat")
        self.assertLessEqual(abs(runs[0][0] - runs[1][0]),
                             1 / cpu_mhz() + 1e-9, runs)

    def test_bandwidth(self):
        bench = subprocess.run([BENCH], capture_output=True, text=True,
                               timeout=300)
        self.assertEqual(bench.returncode, 0, bench.stderr)
        gbps = float(re.search(r"model: +([\d.]+) Gb/s",
                               bench.stdout).group(1))
        self.up(self.topo, "vpb")
        for tool in ("ib_write_bw", "ib_read_bw"):
            got = self.figure("vpb", tool, "--report_gbits",
                              "--output=bandwidth")
            print(f"\n{tool}: {got} Gb/s, bench-verbs {gbps}")
            self.assert_within(got, gbps, 0.01, tool)
        self.down("vpb")


if __name__ == "__main__":
    main()
