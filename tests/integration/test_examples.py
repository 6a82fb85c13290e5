# SPDX-License-Identifier: MIT
"""The shipped examples (examples/README.md) on emulated fabrics, their
data checked by themselves (a wrong byte is a non-zero exit and a
message) and their output by the test.

The verbs examples (pingpong, allreduce, alltoall, incast) under 'ibemu
run -n 2/4/8' on a two-level fat tree (ranks spread over the leaves, so
through the spines): their tables complete, their virtual times where
the model fixes them (the 4x EDR wire bounds bandwidth), and the same
figures in two runs.

examples/mpi: the OSU-style MPI benchmarks, built with the system's mpicc
(skipped without it), on 2 ranks on different leaves, over Open MPI's
openib BTL, launched by 'ibemu run --mpi' (docs/mpi.md). Their MPI_Wtime
is virtual (vtime/: the clocks turn virtual when MPI_Init brings
libibverbs), so a small message's latency is the fabric's."""

import os
import re
import shutil
import subprocess
import unittest

from harness import IBEMU, IbemuTestCase, main, tool_env, topology

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
EXAMPLES = os.path.join(BUILD, "examples")
MPIRUN = shutil.which("mpirun")
FAT = topology("fat-tree-2l-36.yaml")

OPENIB = {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "self,openib",
          "OMPI_MCA_btl_openib_allow_ib": "1",
          "OMPI_MCA_btl_openib_warn_no_device_params_found": "0",
          "OMPI_MCA_osc": "^ucx"}


def example(name):
    return os.path.join(EXAMPLES, name)


def rank_lines(out):
    """What the ranks printed ('[R] ...' lines), without 'ibemu run''s
    own summary."""
    return [line for line in out.splitlines() if line.startswith("[")]


def sections(out):
    """perftest-style tables of rank 0's output: {title: {bytes: (t_min,
    t_typical, t_max, gbps)}}, a title being a '# ...' line."""
    tables, rows = {}, None
    for line in out.splitlines():
        line = re.sub(r"^\[0\] ?", "", line)
        if line.startswith("# "):
            rows = tables.setdefault(line[2:], {})
            continue
        parts = line.split()
        if rows is not None and len(parts) == 6 and parts[0].isdigit():
            rows[int(parts[0])] = tuple(float(p) for p in parts[2:])
            assert int(parts[1]) > 0, line
    return tables


def table(out, columns):
    """The rows of an OSU-style table: {size: [figures]}, each row
    'columns' numbers after the size."""
    rows = {}
    for line in out.splitlines():
        parts = line.split()
        if (len(parts) == columns + 1 and parts[0].isdigit()
                and all(re.fullmatch(r"[\d.]+", p) for p in parts[1:])):
            rows[int(parts[0])] = [float(p) for p in parts[1:]]
    return rows


class ExamplesTest(IbemuTestCase):
    FABRIC = "exv"

    def setUp(self):
        super().setUp()
        for key in ("IBEMU_SESSION_SOCKET", "IBEMU_HOST"):
            self.env.pop(key, None)
        self.up(FAT, self.FABRIC)

    def tearDown(self):
        self.down(self.FABRIC)
        super().tearDown()

    def run_example(self, n, *argv, check=0):
        """'ibemu run -n N' of an example; returns its output."""
        p = self.ibemu("--fabric", self.FABRIC, "run", "-n", str(n), "--",
                       example(argv[0]), *argv[1:], check=check,
                       env=tool_env(self.env), timeout=300)
        return p.stdout + p.stderr

    def assert_again_on_fresh_fabric(self, out, n, *argv):
        """The same run on a new fabric prints the same, to the
        picosecond, 'ibemu run''s virtual time included. (On the same
        fabric a second run may differ where messages contend: the
        switches' arbiters are where the first left them.)"""
        self.down(self.FABRIC)
        self.up(FAT, self.FABRIC)
        self.assertEqual(self.run_example(n, *argv), out)

    def assert_rows(self, tables, title, sizes):
        """Table 'title' has a row per size of 'sizes', each with
        t_min <= t_typical <= t_max; returns it."""
        self.assertIn(title, tables, tables)
        rows = tables[title]
        self.assertEqual(sorted(rows), sizes, rows)
        for t_min, t_typ, t_max, _ in rows.values():
            self.assertTrue(0 < t_min <= t_typ <= t_max, rows)
        return rows

    def test_pingpong(self):
        """SEND, RDMA WRITE and RDMA READ between two HCAs on different
        leaves, 8 B to 1 MiB: latency grows with size, a 1 MiB message
        goes at nearly the 4x EDR wire's rate (never above it); two
        runs print the same figures."""
        argv = ("pingpong", "-s", "8:1048576", "-n", "5", "-x", "1")
        out = self.run_example(2, *argv)
        tables = sections(out)
        sizes = [8 << i for i in range(18)]
        for title in ("SEND latency, ranks 0 and 1, one way (half a "
                      "round trip)",
                      "RDMA WRITE latency, ranks 0 and 1, one way (half a "
                      "round trip)",
                      "RDMA READ latency, ranks 0 and 1, the whole round "
                      "trip"):
            rows = self.assert_rows(tables, title, sizes)
            typical = [rows[s][1] for s in sizes]
            self.assertEqual(typical, sorted(typical), title)
            self.assertTrue(90 < rows[1048576][3] < 100.1, rows[1048576])
        self.assert_again_on_fresh_fabric(out, 2, *argv)

    def test_allreduce(self):
        """Ring and recursive doubling on 4 and 8 ranks, 64 B to 1 MiB,
        the sums checked by every rank: recursive doubling is faster for
        small vectors (log2 N steps against 2(N - 1)), the ring for large
        ones (it sends 2(N - 1)/N of the vector, not log2 N of it); two
        runs of the 8-rank ring print the same figures."""
        sizes = [64 << i for i in range(15)]
        ring8 = ("allreduce", "-a", "ring", "-s", "64:1048576", "-n", "3",
                 "-x", "1")
        first = out = self.run_example(8, *ring8)
        ring = self.assert_rows(sections(out), "allreduce (ring) of 64-bit "
                                "integers over 8 ranks, rank 0's times",
                                sizes)
        rd = self.assert_rows(sections(self.run_example(
            8, "allreduce", "-a", "rd", "-s", "64:1048576", "-n", "3",
            "-x", "1")), "allreduce (recursive doubling) of 64-bit "
            "integers over 8 ranks, rank 0's times", sizes)
        self.assertLess(rd[64][1], ring[64][1])
        self.assertLess(ring[1048576][1], rd[1048576][1])
        self.assert_again_on_fresh_fabric(first, 8, *ring8)
        self.assert_rows(sections(self.run_example(
            4, "allreduce", "-a", "rd", "-s", "8:4096", "-n", "3")),
            "allreduce (recursive doubling) of 64-bit integers over 4 "
            "ranks, rank 0's times", [8 << i for i in range(10)])
        out = self.run_example(3, "allreduce", "-a", "rd", check=1)
        self.assertIn("recursive doubling needs a power-of-two number of "
                      "ranks, not 3", out)

    def test_alltoall(self):
        """Pairwise exchange on 4 and 8 ranks, every block checked by
        its receiver; two runs print the same figures."""
        argv = ("alltoall", "-s", "8:65536", "-n", "3", "-x", "1")
        out = self.run_example(8, *argv)
        self.assert_rows(sections(out), "alltoall (pairwise exchange) over "
                         "8 ranks, bytes per block, rank 0's times",
                         [8 << i for i in range(14)])
        self.assert_again_on_fresh_fabric(out, 8, *argv)
        self.assert_rows(sections(self.run_example(4, *argv)),
                         "alltoall (pairwise exchange) over 4 ranks, bytes "
                         "per block, rank 0's times",
                         [8 << i for i in range(14)])

    def test_incast(self):
        """7 senders WRITE to rank 0 at once: each gets about a seventh
        of the link into rank 0, and together they fill it (4x EDR:
        under 100 Gb/s of payload); every region checked by rank 0."""
        out = self.run_example(8, "incast", "-s", "65536", "-m", "30")
        rows = {}
        for line in rank_lines(out):
            parts = line.split()
            if len(parts) == 6 and parts[1].isdigit():
                rows[int(parts[1])] = float(parts[5])
            if len(parts) == 5 and parts[1] == "all":
                total = float(parts[4])
        self.assertEqual(sorted(rows), list(range(1, 8)), out)
        self.assertTrue(90 < total < 100.1, out)
        for gbps in rows.values():
            self.assertTrue(0.8 * total / 7 < gbps < 1.2 * total / 7, out)

    def test_wrong_data_fails(self):
        """A rank whose data is not what its peer expects (rank 1 fills
        and checks another pattern): the receiver names the sender and
        the first wrong byte, and the run fails."""
        p = self.ibemu("--fabric", self.FABRIC, "run", "-n", "2", "--",
                       "sh", "-c", '[ "$IBEMU_RANK" = 1 ] && '
                       "export EX_PATTERN_SEED=1; exec \"$0\" \"$@\"",
                       example("pingpong"), "-t", "send", "-s", "64:64",
                       "-n", "2", env=tool_env(self.env), timeout=120)
        self.assertNotEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout + p.stderr, r"pingpong: rank [01]: SEND: "
                         r"wrong data from rank [01] \(64 bytes, round 64\):"
                         r" byte 0 is 0x[0-9a-f]{2}, not 0x[0-9a-f]{2}")

    def test_outside_run(self):
        """Under 'ibemu exec' alone there is no job: the example says so
        and exits 1."""
        p = self.ibemu("--fabric", self.FABRIC, "exec", "--host", "hca01",
                       "--", example("pingpong"), env=tool_env(self.env))
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("pingpong: ibemu_init: No such file or directory "
                      "(not under 'ibemu run')", p.stderr)


@unittest.skipUnless(MPIRUN and os.path.exists(example("mpi-latency")),
                     "Open MPI is not installed (./ibemu.sh deps), so "
                     "examples/mpi was not built")
class MpiBenchmarkTest(IbemuTestCase):
    HOSTS = ("hca01", "hca36")  # different leaves: through a spine

    def setUp(self):
        super().setUp()
        for key in ("IBEMU_SESSION_SOCKET", "IBEMU_HOST"):
            self.env.pop(key, None)
        self.up(FAT, "exmpi")

    def tearDown(self):
        self.down("exmpi")
        super().tearDown()

    def mpi_launch(self, fabric, argv, hosts=HOSTS):
        """Runs MPI program 'argv' with one rank per host of 'hosts' on
        'fabric' over openib; returns its output, asserting success."""
        env = dict(self.env, **OPENIB)
        if tool_env({}).get("LD_PRELOAD"):
            env["OMPI_MCA_mpi_leave_pinned"] = "0"  # see test_mpi.py
        cmd = [IBEMU, "run", "--mpi", "--fabric", fabric, "--hosts",
               ",".join(hosts), "--no-prefix", "--", *argv]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True,
                               errors="replace", env=tool_env(env),
                               timeout=240)
            out, rc = p.stdout + p.stderr, p.returncode
        except subprocess.TimeoutExpired as e:
            out, rc = f"timed out: {e.stdout}{e.stderr}", "timeout"
        self.assertEqual(rc, 0, f"{' '.join(argv)}:\n{out[-6000:]}")
        return out

    def assert_table(self, out, header, columns, sizes):
        """'out' has the OSU-style 'header' and one row per size of
        'sizes', each of 'columns' positive figures; returns the rows."""
        self.assertIn(header, out)
        rows = table(out, columns)
        self.assertEqual(sorted(rows), sizes, out)
        for row in rows.values():
            self.assertTrue(all(v > 0 for v in row), out)
        return rows

    def test_latency_and_bandwidth(self):
        """mpi-latency and mpi-bw, a few sizes, few iterations: each
        table complete, the data checked by the programs."""
        out = self.mpi_launch("exmpi", [example("mpi-latency"), "-m",
                                        "1:1024", "-i", "3", "-x", "1"])
        rows = self.assert_table(out, "# Size          Latency (us)", 1,
                                 [1 << i for i in range(11)])
        # MPI_Wtime is virtual (vtime/: libibverbs came with MPI_Init):
        # a small message crosses the two leaves and a spine in about a
        # microsecond. On the wall clock it read tens of milliseconds.
        for size, (lat,) in rows.items():
            self.assertGreater(lat, 0.5, out)
            self.assertLess(lat, 5, out)
        out = self.mpi_launch("exmpi", [example("mpi-bw"), "-m",
                                        "4096:65536", "-i", "2", "-x", "1",
                                        "-W", "4"])
        self.assert_table(out, "# Size      Bandwidth (MB/s)", 1,
                          [1 << i for i in range(12, 17)])

    @unittest.skipUnless(os.path.exists(example("pingpong-pmix")),
                         "PMIx is not installed, so the shim was not built")
    def test_pmix_shim(self):
        """examples/shim: pingpong-pmix takes its rank, size and peers'
        QPs from Open MPI's PMIx server (mpirun), its verbs from ibemu:
        the same figures as under 'ibemu run' (ranks on different
        leaves)."""
        out = self.mpi_launch("exmpi", [example("pingpong-pmix"), "-t",
                                        "send", "-s", "8:64", "-n", "5",
                                        "-x", "1"])
        rows = sections(out)["SEND latency, ranks 0 and 1, one way (half "
                             "a round trip)"]
        # The fabric's HCAs are connectx-5 (hca_model auto, EDR): the
        # host interface's DMA and pipelines, docs/hca-model.md (each of
        # the two DMA reads, WQE and payload, starts with its 26-byte read
        # request: 1.65 ns at Gen3 x16; 1.63 us before). With
        # hca_model: wire the row read (0.92, 0.97, 0.97, 0.07).
        self.assertEqual(rows[8], (1.64, 1.69, 1.69, 0.04), out)

    def test_collectives(self):
        """mpi-allreduce and mpi-alltoall: every size printed with its
        iterations; min <= avg <= max."""
        for prog, lo in (("mpi-allreduce", 4), ("mpi-alltoall", 1)):
            out = self.mpi_launch("exmpi", [example(prog), "-m",
                                            f"{lo}:1024", "-i", "2",
                                            "-x", "1"])
            rows = self.assert_table(
                out, "Avg Latency(us)      Min Latency(us)", 4,
                [s for s in (1 << i for i in range(11)) if s >= lo])
            for avg, mn, mx, iters in rows.values():
                self.assertLessEqual(mn, avg, out)
                self.assertLessEqual(avg, mx, out)
                self.assertEqual(iters, 2, out)


if __name__ == "__main__":
    main()
