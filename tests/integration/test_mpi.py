# SPDX-License-Identifier: MIT
"""Debian's Open MPI, unmodified and as installed, runs on emulated hosts
through 'ibemu run --mpi' with nothing made by the test and no root:
tests/clients/mpi-ring.c, built here with the system's mpicc, passes
checked 64 KiB messages round a ring, then makes an MPI_Allreduce and an
MPI_Alltoall of checked values, over UCX (pml ucx: UD and RC verbs, the
default) and over the openib BTL (OMPI_MCA_pml=ob1
OMPI_MCA_btl=self,openib from the environment), on 2, 4 and 16 ranks
spread over the leaves of a fat tree. The switches' PMA counters show the
ring's bytes crossed the spines: no shared memory, no TCP.

What Open MPI needs of the host, ibemu gives (docs/mpi.md): UCX's
/dev/infiniband/uverbs-HCA (libibemu-devnode.so), the sysfs tree openib
and UCX read (SYSFS_PATH, the daemon's tree of the bound HCA, checked here
against the fabric and a link taken down), and the MCA settings Debian's
openmpi-mca-params.conf excludes."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET

from harness import IBEMU, SRC, IbemuTestCase, main, tool_env, topology

MPICC = shutil.which("mpicc")
MPIRUN = shutil.which("mpirun")
RING_SRC = os.path.join(SRC, "tests", "clients", "mpi-ring.c")
TSC_SRC = os.path.join(SRC, "tests", "clients", "mpi-tsc.c")
FAT_TREE = topology("fat-tree-2l-36.yaml")  # 6 leaves of 6 HCAs, 3 spines
# mpi-ring.c: ROUNDS messages of LEN bytes from each rank to the next.
ROUNDS, LEN = 4, 64 * 1024

OPENIB = {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "self,openib"}


@unittest.skipUnless(MPICC and MPIRUN,
                     "Open MPI is not installed (./ibemu.sh deps)")
class MpiTest(IbemuTestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ibemu-mpi-")
        cls.ring = os.path.join(cls.tmp, "mpi-ring")
        subprocess.run([MPICC, "-O2", "-o", cls.ring, RING_SRC], check=True)
        cls.tsc = os.path.join(cls.tmp, "mpi-tsc")
        subprocess.run([MPICC, "-O2", "-o", cls.tsc, TSC_SRC], check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def spine_words(self, fabric):
        """The data the spines sent (PMA PortXmitData: 4-byte words)."""
        rows = self.json_of("counters", "--fabric", fabric)["counters"]
        return sum(r["xmit_data"] for r in rows
                   if r["node"].startswith("spine"))

    def run_ring(self, fabric, n, mca, extra=()):
        env = tool_env(dict(self.env, **mca))
        if mca is OPENIB and env.get("LD_PRELOAD"):
            # With a sanitizer's runtime preloaded (its malloc in place of
            # the one Open MPI hooks), MPI_Finalize empties Open MPI's
            # registration cache (leave_pinned) through the openib BTL it
            # has unloaded already, and crashes: no cache then.
            env["OMPI_MCA_mpi_leave_pinned"] = "0"
        before = self.spine_words(fabric)
        rc, out = self.run_watched(
            [IBEMU, "run", "--fabric", fabric, "--mpi", "-n", str(n),
             *extra, "--", self.ring], env, 240 if n <= 4 else 420, fabric)
        lines = sorted((line for line in out.splitlines()
                        if line.startswith("rank=")),
                       key=lambda s: int(s.split()[0][5:]))
        want = [f"rank={r} bad=0 sum={n * (n + 1) // 2}" for r in range(n)]
        with open(self.paths(fabric)["log"]) as f:
            log = f.read()[-3000:]
        self.assertEqual((rc, lines), (0, want),
                         f"{out[-6000:]}\ndaemon log:\n{log}")
        self.assertIn(f"ibemu run: {n} ranks on fabric {fabric}", out)
        # Spread over the leaves, each rank's neighbour in the ring is on
        # another leaf: every ring message crossed a spine.
        crossed = (self.spine_words(fabric) - before) * 4
        self.assertGreaterEqual(crossed, n * ROUNDS * LEN)
        return out

    def ring_case(self, n, mca):
        name = f"mp{n}{'ib' if mca else 'ucx'}"
        self.up(FAT_TREE, name)
        self.run_ring(name, n, mca)
        self.down(name)

    def test_ucx_2(self):
        """pml ucx (the default) over UD (wireup) and RC verbs, 2 ranks
        on two leaves."""
        self.ring_case(2, {})

    def test_ucx_4(self):
        """The quick case: 4 ranks on four leaves, pml ucx."""
        self.ring_case(4, {})

    def test_ucx_16(self):
        """16 ranks on all six leaves, pml ucx: UD wireup between every
        pair, while the fabric's time runs far behind UCX's wall-clock
        timers (run_mpi.c's UCX_UD_TIMER_TICK)."""
        self.ring_case(16, {})

    def test_openib_2(self):
        """The openib BTL: connections over its UD connection manager,
        then eager RDMA and RC sends; 2 ranks."""
        self.ring_case(2, OPENIB)

    def test_openib_4(self):
        self.ring_case(4, OPENIB)

    def test_openib_16(self):
        """16 ranks over openib: udcm connects every pair in the
        alltoall at once, its receive thread waiting on its completion
        channel in Open MPI's event loop (docs/mpi.md)."""
        self.ring_case(16, OPENIB)

    def test_report(self):
        """--report and --plot with --mpi: each rank's libibverbs,
        started by mpirun through 'exec --rank-hosts', tells the run its
        final clock, the time it waited and its declared compute, and
        traces its clock; per link the bytes each way. The ring's ranks
        each sent ROUNDS x 64 KiB."""
        self.up(FAT_TREE, "mprep")
        path = os.path.join(self.tmp, "report.json")
        svg = os.path.join(self.tmp, "plot.svg")
        out = self.run_ring("mprep", 4, {},
                            ("--report", path, "--plot", svg))
        with open(path) as f:
            rep = json.load(f)
        self.assertEqual((rep["fabric"], rep["size"], rep["status"]),
                         ("mprep", 4, 0))
        self.assertEqual(rep["virtual_time_ps"],
                         rep["end_ps"] - rep["start_ps"])
        us = float(re.search(r", ([0-9.]+) us of virtual time", out)[1])
        self.assertAlmostEqual(rep["virtual_time_ps"] / 1e6, us, places=3)
        hosts = []
        for r, x in enumerate(rep["ranks"]):
            self.assertEqual((x["rank"], x["reported"]), (r, True), x)
            self.assertEqual(x["total_ps"], x["end_ps"] - rep["start_ps"])
            self.assertEqual(x["waiting_ps"] + x["compute_ps"]
                             + x["other_ps"], x["total_ps"])
            self.assertGreater(x["waiting_ps"], 0)
            self.assertLessEqual(x["end_ps"], rep["end_ps"])
            hosts.append(x["host"])
        self.assertEqual(max(x["end_ps"] for x in rep["ranks"]),
                         rep["end_ps"])
        # One rank a leaf (spread): four different leaves' HCAs.
        self.assertEqual(len(set(hosts)), 4)
        links = {l["b"]: (l["bytes_a_to_b"], l["bytes_b_to_a"])
                 for l in rep["links"] if l["b"].startswith("hca")}
        for h, (down, up) in links.items():
            if h[:-2] in hosts:
                self.assertGreaterEqual(min(down, up), ROUNDS * LEN,
                                        (h, down, up))
            else:
                # The SM's sweeps only (MADs), if one came in the run.
                self.assertLess(max(down, up), LEN, h)
        # The timeline: a row per rank, naming its host, each with
        # waiting and send intervals.
        ns = "{http://www.w3.org/2000/svg}"
        with open(svg) as f:
            groups = ET.fromstring(f.read()).findall(f"{ns}g")
        self.assertEqual([g.get("data-rank") for g in groups],
                         ["0", "1", "2", "3"])
        for g, host in zip(groups, hosts):
            self.assertEqual(g.find(f"{ns}text").text,
                             f"rank {g.get('data-rank')} {host}")
            fills = {r.get("fill") for r in g.findall(f"{ns}rect")}
            self.assertLessEqual({"#d0d0d0", "#2e9e44"}, fills)
        self.down("mprep")

    def tsc_latency(self, fabric, mca):
        """mpi-tsc's one-way latency (ns) by rdtsc and by MPI_Wtime."""
        p = subprocess.run(
            [IBEMU, "run", "--fabric", fabric, "--mpi", "-n", "2", "--",
             self.tsc], capture_output=True, text=True, errors="replace",
            env=tool_env(dict(self.env, **mca)), timeout=240)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        got = dict(re.findall(r"(rdtsc_ns|wtime_ns) (\d+)", p.stdout))
        return int(got["rdtsc_ns"]), int(got["wtime_ns"])

    def test_rdtsc(self):
        """An MPI program timing a ping-pong with rdtsc reads the virtual
        time, as MPI_Wtime does (to the TSC's rounding, a tick of /proc/
        cpuinfo's "cpu MHz" per 200 one-way trips): its libibverbs came in
        MPI_Init, and every thread's TSC was trapped then (vtime/
        threads.c), over UCX and over openib."""
        self.up(FAT_TREE, "mptsc")
        for mca in ({}, OPENIB):
            tsc, wtime = self.tsc_latency("mptsc", mca)
            self.assertGreater(wtime, 0, mca)
            print("mpi-tsc", mca, tsc, wtime)
            self.assertLessEqual(abs(tsc - wtime), 1, (mca, tsc, wtime))
        self.down("mptsc")

    def exec_out(self, fabric, host, script, check=0):
        return self.ibemu("exec", "--fabric", fabric, "--host", host, "--",
                          "sh", "-c", script, check=check)

    def test_host_view(self):
        """What a rank sees of its host: the sysfs tree of its HCA (what
        the daemon says of it; a link taken down reads DOWN), and the
        /dev/infiniband node UCX wants, without root; UCX lists the HCA."""
        self.up(FAT_TREE, "mpview")
        port = [p for p in self.json_of("ports", "hca07", "--fabric",
                                        "mpview")["ports"]
                if p["port"] == 1][0]
        files = ("node_type", "node_guid", "ports/1/state",
                 "ports/1/phys_state", "ports/1/lid", "ports/1/rate",
                 "ports/1/link_layer", "ports/1/pkeys/0")
        script = ("cd $SYSFS_PATH/class/infiniband/hca07 && "
                  f"for f in {' '.join(files)}; do cat $f; done; "
                  "cat ../../infiniband_verbs/uverbs-hca07/ibdev; "
                  "stat -c %F /dev/infiniband/uverbs-hca07; "
                  "test -r /dev/infiniband/uverbs-hca07 -a "
                  "-w /dev/infiniband/uverbs-hca07 && echo rw")
        got = self.exec_out("mpview", "hca07", script).stdout.splitlines()
        self.assertEqual(got[0], "1: CA")
        self.assertEqual(got[2:], [
            "4: ACTIVE", "5: LinkUp", hex(port["lid"]),
            "100 Gb/sec (4X EDR)", "InfiniBand", "0xffff", "hca07",
            "character special file", "rw"])
        # The node is the process's HCA's only; outside, nothing changes.
        self.exec_out("mpview", "hca07", "stat /dev/infiniband/uverbs-hca08",
                      check=1)
        self.assertFalse(os.path.exists("/dev/infiniband/uverbs-hca07"))
        # UCX opens the HCA (its memory domain is listed).
        p = self.exec_out("mpview", "hca07", "ucx_info -d")
        self.assertIn("# Memory domain: hca07", p.stdout)
        # A link taken down: the bound HCA's state files follow.
        proc = subprocess.Popen(
            [IBEMU, "exec", "--fabric", "mpview", "--host", "hca08", "--",
             "sh", "-c", "read x; cat $SYSFS_PATH/class/infiniband/hca08/"
             "ports/1/state"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, env=self.env)
        self.ibemu("link", "down", "hca08:1", "--fabric", "mpview", check=0)
        out, _ = proc.communicate("\n", timeout=60)
        self.assertEqual(out, "1: DOWN\n")
        self.down("mpview")


if __name__ == "__main__":
    main()
