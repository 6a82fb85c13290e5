# SPDX-License-Identifier: MIT
"""The shipped examples (examples/README.md) on emulated fabrics, their
data checked by themselves (a wrong byte is a non-zero exit and a
message) and their output by the test.

examples/mpi: the OSU-style MPI benchmarks, built with the system's mpicc
(skipped without it), on 2 ranks on different leaves, over Open MPI's
openib BTL. mpi_launch() starts them the way test_mpi.py starts Debian's
Open MPI today: mpirun runs a wrapper that execs 'ibemu exec --host H'
per rank, with SYSFS_PATH naming an empty sysfs tree (openib looks for
<sysfs>/class/infiniband). Once 'ibemu run --mpi' exists it is used
instead (the one place to change)."""

import os
import re
import shutil
import subprocess
import tempfile
import unittest

from harness import IBEMU, IbemuTestCase, main, tool_env, topology
from test_mpi import IN_DEV_OVERLAY

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
EXAMPLES = os.path.join(BUILD, "examples")
MPIRUN = shutil.which("mpirun")
FAT = topology("fat-tree-2l-36.yaml")

UCX = {"OMPI_MCA_pml": "ucx", "OMPI_MCA_btl": "^openib,uct",
       "UCX_TLS": "self,ud_v,rc_v", "UCX_WARN_UNUSED_ENV_VARS": "n"}
OPENIB = {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "self,openib",
          "OMPI_MCA_btl_openib_allow_ib": "1",
          "OMPI_MCA_btl_openib_warn_no_device_params_found": "0",
          "OMPI_MCA_osc": "^ucx"}


def example(name):
    return os.path.join(EXAMPLES, name)


def has_run_mpi():
    """Whether this ibemu has 'ibemu run --mpi' (issue 21, item 4)."""
    p = subprocess.run([IBEMU, "run", "--help"], capture_output=True,
                       text=True)
    return p.returncode == 0 and "--mpi" in p.stdout + p.stderr


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


@unittest.skipUnless(MPIRUN and os.path.exists(example("mpi-latency")),
                     "Open MPI is not installed (./ibemu.sh deps), so "
                     "examples/mpi was not built")
class MpiBenchmarkTest(IbemuTestCase):
    HOSTS = ("hca01", "hca36")  # different leaves: through a spine

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ibemu-ex-mpi-")
        os.makedirs(os.path.join(cls.tmp, "sys", "class", "infiniband"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        super().setUp()
        for key in ("IBEMU_SESSION_SOCKET", "IBEMU_HOST"):
            self.env.pop(key, None)
        self.up(FAT, "exmpi")

    def tearDown(self):
        self.down("exmpi")
        super().tearDown()

    def rank_script(self, fabric, env, hosts):
        """The wrapper mpirun starts for each rank: rank R runs on
        hosts[R] under 'ibemu exec' with 'env'."""
        path = os.path.join(self.tmp, f"rank-{fabric}.sh")
        lines = ["#!/bin/sh"]
        for k, v in sorted(tool_env(env).items()):
            if k.startswith(("OMPI_MCA_", "UCX_", "IBEMU_")) or k in (
                    "SYSFS_PATH", "LD_PRELOAD", "ASAN_OPTIONS"):
                lines.append(f"export {k}='{v}'")
        lines.append("set -- $OMPI_COMM_WORLD_RANK \"$@\"")
        lines.append("case $1 in")
        for r, h in enumerate(hosts):
            lines.append(f"{r}) host={h} ;;")
        lines.append("esac")
        lines.append("shift")
        lines.append(f"exec {IBEMU} exec --fabric {fabric} --host $host "
                     "-- \"$@\"")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(path, 0o755)
        return path

    def mpi_launch(self, fabric, argv, hosts=HOSTS, ucx=False):
        """Runs MPI program 'argv' with one rank per host of 'hosts' on
        'fabric', over openib (or UCX: root only, see test_mpi.py);
        returns its output, asserting success."""
        mca = dict(UCX if ucx else OPENIB,
                   SYSFS_PATH=os.path.join(self.tmp, "sys"))
        prefix = []
        if ucx:
            overlay = IN_DEV_OVERLAY.replace(
                "$(seq 1 8)", " ".join(h[3:] for h in hosts))
            prefix = ["unshare", "-m", "sh", "-c", overlay, "sh",
                      os.path.join(self.tmp, "dev")]
        if tool_env({}).get("LD_PRELOAD"):
            mca["OMPI_MCA_mpi_leave_pinned"] = "0"  # see test_mpi.py
        env = dict(self.env, **mca)
        if has_run_mpi():
            cmd = [IBEMU, "run", "--mpi", "--fabric", fabric, "--hosts",
                   ",".join(hosts), "--no-prefix", "--", *argv]
        else:
            cmd = [*prefix, MPIRUN, "--allow-run-as-root", "--oversubscribe",
                   "-np", str(len(hosts)),
                   self.rank_script(fabric, env, hosts), *argv]
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
                                        "1:4096", "-i", "4", "-x", "1"])
        self.assert_table(out, "# Size          Latency (us)", 1,
                          [1 << i for i in range(13)])
        out = self.mpi_launch("exmpi", [example("mpi-bw"), "-m",
                                        "1024:65536", "-i", "2", "-x", "1",
                                        "-W", "8"])
        self.assert_table(out, "# Size      Bandwidth (MB/s)", 1,
                          [1 << i for i in range(10, 17)])

    def test_collectives(self):
        """mpi-allreduce and mpi-alltoall: every size printed with its
        iterations; min <= avg <= max."""
        for prog, lo in (("mpi-allreduce", 4), ("mpi-alltoall", 1)):
            out = self.mpi_launch("exmpi", [example(prog), "-m",
                                            f"{lo}:4096", "-i", "3",
                                            "-x", "1"])
            rows = self.assert_table(
                out, "Avg Latency(us)      Min Latency(us)", 4,
                [s for s in (1 << i for i in range(13)) if s >= lo])
            for avg, mn, mx, iters in rows.values():
                self.assertLessEqual(mn, avg, out)
                self.assertLessEqual(avg, mx, out)
                self.assertEqual(iters, 3, out)


if __name__ == "__main__":
    main()
