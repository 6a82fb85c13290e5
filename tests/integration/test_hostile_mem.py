# SPDX-License-Identifier: MIT
"""A careless or hostile target of RDMA (issue 18, items 3 and 4;
tests/hostile/mem_barrier.c) against a real daemon: giving memory back
is a barrier (after ibv_dereg_mr returns, the daemon neither reads nor
writes the region again, and the work under way on it fails with the
access error an HCA gives), and registered means those pages (a file
mapped over a registered one is not reached; memory the process cannot
access is not registered: EFAULT)."""

import os

from harness import IbemuTestCase, main, tool_env, topology

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
PROG = os.path.join(BUILD, "tests", "hostile", "mem_barrier")
TWO = topology("two-switch.yaml")
US = 1000000  # picoseconds
# What mem_barrier's own calls between the dereg and the completion cost
# its clock (verbs/cost.h): the dereg 20 us, a query_qp (5 us) at every
# MiB of the 8 MiB it copies, the poll that takes the completion 0.1 us;
# twice the copy for 'local'.
CALLS = 20 * US + 8 * 5 * US + US // 10
COPY = 8 * 5 * US


def fields(text):
    out = {}
    for line in text.splitlines():
        if "=" in line:
            key, value = line.split("=", 1)
            out[key.strip()] = value.strip()
    return out


class HostileMemTest(IbemuTestCase):
    def setUp(self):
        super().setUp()
        for key in ("IBEMU_SESSION_SOCKET", "IBEMU_HOST"):
            self.env.pop(key, None)
        self.tool_env = tool_env(self.env)

    def run_case(self, fabric, case):
        p = self.ibemu("exec", "--fabric", fabric, "--host", "hca3", "--",
                       PROG, case, env=self.tool_env, timeout=240)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        f = fields(p.stdout)
        self.assertEqual(f.get("failures"), "0", p.stdout + p.stderr)
        return f

    def daemon_files(self, fabric, prefix):
        fd_dir = f"/proc/{self.started[fabric]}/fd"
        out = []
        for fd in os.listdir(fd_dir):
            try:
                target = os.readlink(os.path.join(fd_dir, fd))
            except OSError:
                continue
            if target.startswith(prefix):
                out.append(target)
        return out

    def test_read_of_a_deregistered_region(self):
        """A 7 MiB READ under way when its source is deregistered (at the
        first READ's completion, in virtual time) and then overwritten:
        it completes with IBV_WC_REM_ACCESS_ERR, and no byte written
        after ibv_dereg_mr reaches the requester."""
        self.up(TWO, "mread")
        f = self.run_case("mread", "read")
        self.assertEqual(f["read_status"], "remote access error")
        self.assertEqual(f["read_marker_bytes"], "0")
        # The responder NAKs its next response, a round trip after the
        # dereg, not after the 7 MiB (about 300 us on this fabric).
        self.assertLess(int(f["read_ended_after_ps"]) - CALLS, 20 * US)
        self.down("mread")

    def test_write_into_a_deregistered_region(self):
        """A 7 MiB WRITE under way when its target is deregistered: the
        target's bytes do not change after ibv_dereg_mr returns, and the
        WRITE completes with IBV_WC_REM_ACCESS_ERR."""
        self.up(TWO, "mwrite")
        f = self.run_case("mwrite", "write")
        self.assertEqual(f["write_status"], "remote access error")
        self.assertEqual(f["write_changed_after"], "0")
        self.assertLess(int(f["write_ended_after_ps"]) - CALLS, 20 * US)
        self.down("mwrite")

    def test_write_from_a_deregistered_region(self):
        """A 7 MiB WRITE under way when its own source is deregistered:
        it completes with IBV_WC_LOC_PROT_ERR, and what the process
        writes into the source after does not reach the target."""
        self.up(TWO, "mlocal")
        f = self.run_case("mlocal", "local")
        self.assertEqual(f["local_status"], "local protection error")
        self.assertLess(int(f["local_ended_after_ps"]) - CALLS - COPY,
                        20 * US)
        self.down("mlocal")

    def test_target_exits_with_a_write_under_way(self):
        """The target process exits with a WRITE into its region under
        way: the region (shared with the requester) does not change after,
        and the WRITE fails (the peer's QP went with it: retries, then
        IBV_WC_RETRY_EXC_ERR, as on hardware)."""
        self.up(TWO, "mexit")
        f = self.run_case("mexit", "exit")
        self.assertEqual(f["exit_status"], "transport retry counter exceeded")
        self.assertEqual(f["exit_changed_after"], "0")
        self.down("mexit")

    def test_file_mapped_over_a_registered_one(self):
        """A WRITE to a region whose file mapping was replaced by another
        file after registration reaches the registered file, never the
        one mapped later; the daemon lets go of the file when the
        region goes."""
        self.up(TWO, "mremap")
        f = self.run_case("mremap", "remap")
        self.assertEqual(f["remap_status"], "success")
        self.assertEqual(f["remap_first_file"], "65536")
        self.assertEqual(f["remap_second_file"], "0")
        self.assertEqual(self.daemon_files("mremap", "/tmp/ibemu-mem-"), [])
        self.down("mremap")

    def test_file_mapped_over_a_private_mapping(self):
        """The same over a private mapping of the first file, whose pages
        no file holds: the WRITE fails with IBV_WC_REM_ACCESS_ERR and
        the second file is untouched."""
        self.up(TWO, "mpriv")
        f = self.run_case("mpriv", "private")
        self.assertEqual(f["private_status"], "remote access error")
        self.assertEqual(f["private_second_file"], "0")
        self.down("mpriv")

    def test_inaccessible_memory_is_not_registered(self):
        """8 GiB of PROT_NONE, and a read-only mapping registered for
        writing, are refused with EFAULT, as ib_umem_get() refuses them."""
        self.up(TWO, "mnone")
        f = self.run_case("mnone", "protnone")
        self.assertEqual(f["protnone_errno"], "14")
        self.assertEqual(f["readonly_write_errno"], "14")
        self.down("mnone")


if __name__ == "__main__":
    main()
