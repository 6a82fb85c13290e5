# SPDX-License-Identifier: MIT
"""Debian's Open MPI runs on attached HCAs under the default clock (the
quiescence rule): tests/clients/mpi-ring.c, built here with the system's
mpicc, passes checked 64 KiB messages round a ring of 4 ranks and makes an
MPI_Allreduce, over the openib BTL (its UD connection manager, then RC)
and over UCX (pml ucx, UD and RC verbs transports). Each rank is an
'ibemu exec' process on its own HCA: mpirun starts a wrapper that execs
'ibemu exec --host hcaN'.

What the test builds for itself, until ibemu has it (issue 21): the openib
BTL looks for <sysfs>/class/infiniband, so SYSFS_PATH (which ibemu's
libibverbs honours) names an empty tree made here; UCX opens only devices
whose /dev/infiniband/uverbs-NAME is a character device, so its run goes
in a mount namespace (root only) where /dev is an overlay holding such
nodes (those of /dev/null: nothing opens them). Debian's
openmpi-mca-params.conf excludes both transports; the environment brings
them back."""

import os
import shutil
import subprocess
import tempfile
import unittest

from harness import IBEMU, SRC, IbemuTestCase, main, tool_env, topology

MPICC = shutil.which("mpicc")
MPIRUN = shutil.which("mpirun")
RING_SRC = os.path.join(SRC, "tests", "clients", "mpi-ring.c")
EIGHT = topology("single-switch-8.yaml")
NP = 4

OPENIB = {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "self,openib",
          "OMPI_MCA_btl_openib_allow_ib": "1",
          "OMPI_MCA_btl_openib_warn_no_device_params_found": "0",
          "OMPI_MCA_osc": "^ucx"}
UCX = {"OMPI_MCA_pml": "ucx", "OMPI_MCA_btl": "^openib,uct",
       "UCX_TLS": "self,ud_v,rc_v", "UCX_WARN_UNUSED_ENV_VARS": "n"}

# Runs its arguments with /dev overlaid by one where /dev/infiniband
# holds the uverbs nodes UCX looks for ($1: a scratch directory).
IN_DEV_OVERLAY = """\
d=$1; shift
mkdir -p $d/up $d/work
mount -t overlay overlay -o lowerdir=/dev,upperdir=$d/up,workdir=$d/work /dev
mount --bind /proc/1/root/dev/shm /dev/shm
mount --bind /proc/1/root/dev/pts /dev/pts
mkdir -p /dev/infiniband
for i in $(seq 1 8); do mknod -m 666 /dev/infiniband/uverbs-hca$i c 1 3; done
exec "$@"
"""


@unittest.skipUnless(MPICC and MPIRUN,
                     "Open MPI is not installed (./ibemu.sh deps)")
class MpiTest(IbemuTestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ibemu-mpi-")
        cls.ring = os.path.join(cls.tmp, "mpi-ring")
        subprocess.run([MPICC, "-O2", "-o", cls.ring, RING_SRC], check=True)
        os.makedirs(os.path.join(cls.tmp, "sys", "class", "infiniband"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def rank_script(self, fabric, env):
        """A wrapper mpirun starts for each rank: rank N runs on hcaN+1
        with 'env' (the sanitizer's runtime, if any, comes with it)."""
        path = os.path.join(self.tmp, f"rank-{fabric}.sh")
        lines = ["#!/bin/sh"]
        for k, v in sorted(tool_env(env).items()):
            if k.startswith(("OMPI_MCA_", "UCX_", "IBEMU_")) or k in (
                    "SYSFS_PATH", "LD_PRELOAD", "ASAN_OPTIONS",
                    "TSAN_OPTIONS"):
                lines.append(f"export {k}='{v}'")
        lines.append(f"exec {IBEMU} exec --fabric {fabric} "
                     "--host hca$((OMPI_COMM_WORLD_RANK + 1)) -- \"$@\"")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(path, 0o755)
        return path

    def run_ring(self, fabric, mca, prefix=()):
        env = dict(self.env, **mca)
        cmd = [*prefix, MPIRUN, "--allow-run-as-root", "--oversubscribe",
               "-np", str(NP), self.rank_script(fabric, env), self.ring]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True,
                               errors="replace", env=env, timeout=300)
            out, rc = p.stdout + p.stderr, p.returncode
        except subprocess.TimeoutExpired as e:
            out, rc = f"timed out: {e.stdout}{e.stderr}", "timeout"
        lines = sorted(line for line in out.splitlines()
                       if line.startswith("rank="))
        want = [f"rank={r} bad=0 sum={NP * (NP + 1) // 2}"
                for r in range(NP)]
        with open(self.paths(fabric)["log"]) as f:
            log = f.read()[-3000:]
        self.assertEqual((rc, lines), (0, want),
                         f"{out[-6000:]}\ndaemon log:\n{log}")

    def test_openib(self):
        """The openib BTL: connections over its UD connection manager,
        which sends every message from one buffer, reused as each send
        completes; then eager RDMA and RC sends."""
        mca = dict(OPENIB, SYSFS_PATH=os.path.join(self.tmp, "sys"))
        if tool_env({}).get("LD_PRELOAD"):
            # With a sanitizer's runtime preloaded (its malloc in place of
            # the one Open MPI hooks), ibemu's library instrumented or
            # not, MPI_Finalize empties Open MPI's registration cache
            # (leave_pinned) through the openib BTL it has unloaded
            # already, and crashes: no cache then.
            mca["OMPI_MCA_mpi_leave_pinned"] = "0"
        self.up(EIGHT, "mpib")
        self.run_ring("mpib", mca)
        self.down("mpib")

    @unittest.skipUnless(os.geteuid() == 0, "UCX needs /dev/infiniband "
                         "nodes, made in a mount namespace: root only")
    def test_ucx(self):
        """pml ucx over UD (wireup) and RC verbs, memory registered by
        UCX, whose hooks catch mremap."""
        self.up(EIGHT, "mpucx")
        self.run_ring("mpucx", UCX, prefix=(
            "unshare", "-m", "sh", "-c", IN_DEV_OVERLAY, "sh",
            os.path.join(self.tmp, "dev")))
        self.down("mpucx")


if __name__ == "__main__":
    main()
