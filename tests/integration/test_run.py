# SPDX-License-Identifier: MIT
"""'ibemu run' and its bootstrap (issue 21, items 1, 2 and 8), through
tests/clients/run-probe.c: each rank joins the job, puts its LID and QP
numbers, fences, reads everyone's, passes a checked SEND round a ring of
RC QPs and meets the others at a barrier, printing its clock at each step.

- the same run on two fresh fabrics prints the same bytes (each rank's
  lines in their order; ranks interleave as the wall clock has it) and
  the same virtual time;
- each line is prefixed with its rank, or not (--no-prefix);
- the maps place ranks as documented, against the topology's leaves;
- a rank that exits 3 makes the run exit 3, one killed by SIGSEGV 139,
  SIGINT to 'ibemu run' 130, each with a message naming the rank and host,
  and no rank, socket or memfd left behind;
- the job stream refuses bad ranks, sizes, keys and lengths with errnos
  and stays up."""

import json
import os
import re
import signal
import socket
import struct
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET

from harness import IBEMU, IbemuTestCase, main, pid_alive, topology
from sessproto import SessionClient, hdr

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
PROBE = os.path.join(BUILD, "tests", "run-probe")
FT36 = topology("fat-tree-2l-36.yaml")
FT1152 = topology("fat-tree-2l-1152.yaml")

JOB_JOIN, JOB_PUT, JOB_GET, JOB_SYNC = 27, 28, 29, 30
EINVAL, ENOENT, EEXIST, EPIPE = 22, 2, 17, 32


def by_rank(out):
    """The lines of 'out' grouped by their '[rank] ' prefix, each rank's
    in its order (ranks interleave by wall clock)."""
    lines = out.splitlines()
    return sorted(lines, key=lambda l: int(re.match(r"\[(\d+)\] ", l)[1]))


def job_procs(job):
    """Pids of the processes whose environment names job 'job'."""
    pids = []
    want = f"IBEMU_JOB={job}".encode()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                if want in f.read().split(b"\0"):
                    pids.append(int(d))
        except OSError:
            continue
    return pids


class RunTest(IbemuTestCase, SessionClient):
    def run_cmd(self, fabric, *args, timeout=300):
        return subprocess.run([IBEMU, "--fabric", fabric, "run", *args],
                              capture_output=True, text=True,
                              env=self.env, timeout=timeout)

    def leaves(self, fabric):
        """HCA name -> the switch its port 1 is cabled to."""
        ports = self.json_of("--fabric", fabric, "ports")["ports"]
        return {p["node"]: p["peer_node"] for p in ports
                if p["node"].startswith("hca") and p["port"] == 1}

    def test_deterministic_and_prefixed(self):
        """Two runs of 8 ranks on fresh fabrics: the same bytes, the same
        virtual time; every line prefixed; the ring's data checked."""
        outs = []
        for _ in range(2):
            self.up(FT36, "rdet")
            p = self.run_cmd("rdet", "-n", "8", "--", PROBE, "--pingpong",
                             "100")
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
            outs.append((by_rank(p.stdout), p.stderr))
            # Ranks held in a barrier wait: the grace period never had to
            # presume it (it would mark the run not deterministic).
            self.assertEqual(self.json_of("--fabric", "rdet", "status")
                             ["deterministic"], "yes")
            self.down("rdet")
        self.assertEqual(outs[0], outs[1])
        lines, err = outs[0]
        for r in range(8):
            mine = [l for l in lines if l.startswith(f"[{r}] ")]
            self.assertEqual(len(mine), 12 + (r < 2), mine)
            self.assertTrue(mine[0].startswith(f"[{r}] rank {r} of 8 on "))
            self.assertTrue(any(l.startswith(
                f"[{r}] got 'from rank {(r + 7) % 8}' at ") for l in mine),
                mine)
        self.assertEqual(len(lines), 8 * 12 + 2)
        # Every rank resumes from a collective at the same virtual time.
        self.assertEqual(len({l.split("] ")[1] for l in lines
                              if "barrier done" in l}), 1)
        self.assertRegex(err, r"^ibemu run: 8 ranks on fabric rdet, "
                         r"[0-9.]+ us of virtual time \([0-9.]+ us to "
                         r"[0-9.]+ us\)\n$")

    def test_no_prefix_and_partial_lines(self):
        self.up(FT36, "rpre")
        p = self.run_cmd("rpre", "-n", "3", "--no-prefix", "--", "sh", "-c",
                         "echo line $IBEMU_RANK; echo err >&2")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(p.stdout.splitlines()),
                         ["line 0", "line 1", "line 2"])
        self.assertEqual(p.stderr.splitlines()[:3], ["err"] * 3)
        # With the prefix, a partial line ends the rank's output as a line.
        p = self.run_cmd("rpre", "-n", "2", "--", "sh", "-c",
                         "printf 'a'; sleep 0.2; printf 'b\\nc'")
        self.assertEqual(sorted(p.stdout.splitlines()),
                         ["[0] ab", "[0] c", "[1] ab", "[1] c"])
        self.down("rpre")

    def hosts_of(self, fabric, *opts, n=8):
        p = self.run_cmd(fabric, "-n", str(n), *opts, "--", "sh", "-c",
                         "echo $IBEMU_RANK $IBEMU_SIZE $IBEMU_HOST")
        self.assertEqual(p.returncode, 0, p.stderr)
        got = {}
        for line in p.stdout.splitlines():
            rank, size, host = line.split("] ")[1].split()
            self.assertEqual(size, str(n))
            got[int(rank)] = host
        return [got[r] for r in range(n)]

    def test_maps(self):
        """spread: round robin over the leaves in name order; block: a
        leaf's HCAs first; cyclic: by name; --hosts as given."""
        self.up(FT36, "rmap")
        leaf = self.leaves("rmap")
        leaves = sorted(set(leaf.values()))
        self.assertEqual(len(leaves), 6)
        spread = self.hosts_of("rmap")
        self.assertEqual([leaf[h] for h in spread],
                         leaves + leaves[:2])
        self.assertEqual(len(set(spread)), 8)
        self.assertEqual(spread[:6], sorted(spread[:6]))
        self.assertEqual(spread, self.hosts_of("rmap", "--map", "spread"))
        block = self.hosts_of("rmap", "--map", "block")
        self.assertEqual([leaf[h] for h in block],
                         [leaves[0]] * 6 + [leaves[1]] * 2)
        self.assertEqual(self.hosts_of("rmap", "--map", "cyclic"),
                         [f"hca{i:02d}" for i in range(1, 9)])
        self.assertEqual(self.hosts_of("rmap", "--hosts", "hca30,hca02",
                                       n=2), ["hca30", "hca02"])
        # -n after an option's value, and -nN.
        p = self.run_cmd("rmap", "--map", "cyclic", "-n", "2", "--", "sh",
                         "-c", "echo $IBEMU_HOST")
        self.assertEqual(sorted(p.stdout.split()),
                         ["[0]", "[1]", "hca01", "hca02"], p.stderr)
        p = self.run_cmd("rmap", "-n3", "--", "true")
        self.assertEqual(p.returncode, 0, p.stderr)
        p = self.run_cmd("rmap", "-n", "37", "--", "true")
        self.assertEqual(p.returncode, 1)
        self.assertIn("37 ranks asked, but fabric rmap has 36 HCAs",
                      p.stderr)
        p = self.run_cmd("rmap", "--hosts", "hca01,nope", "--", "true")
        self.assertEqual(p.returncode, 1)
        self.assertIn("no HCA named nope", p.stderr)
        p = self.run_cmd("rmap", "-n", "2", "--hosts", "hca01", "--",
                         "true")
        self.assertEqual(p.returncode, 2)
        self.down("rmap")

    def failing_run(self, fabric, *probe_args, sig=None):
        """Runs 4 probe ranks; returns (status, stdout, stderr) once every
        rank is gone, with SIGINT sent to 'ibemu run' when 'sig'."""
        p = subprocess.Popen([IBEMU, "--fabric", fabric, "run", "-n", "4",
                              "--", PROBE, *probe_args],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=self.env)
        out = ""
        if sig:
            while "sleeping" not in out:
                line = p.stdout.readline()
                self.assertTrue(line, "the run ended before the rank slept")
                out += line
            self.assertTrue(job_procs(f"run.{p.pid}"))
            p.send_signal(sig)
        more, err = p.communicate(timeout=60)
        self.assertEqual(job_procs(f"run.{p.pid}"), [])
        return p.returncode, out + more, err

    def test_failures_end_the_run(self):
        self.up(FT36, "rfail")
        status, out, err = self.failing_run("rfail", "--exit-rank", "2",
                                            "--exit-code", "3")
        self.assertEqual(status, 3, out + err)
        self.assertIn("[2] exiting with 3 on purpose", out)
        self.assertRegex(err, r"ibemu: run: rank 2 \(hca13, pid \d+\) "
                         r"exited with status 3\n")
        self.assert_nothing_held("rfail")

        status, out, err = self.failing_run("rfail", "--segv-rank", "1")
        self.assertEqual(status, 139, out + err)
        self.assertRegex(err, r"ibemu: run: rank 1 \(hca07, pid \d+\) was "
                         r"killed by signal 11 \(Segmentation fault\)")
        self.assert_nothing_held("rfail")

        status, out, err = self.failing_run("rfail", "--sleep-rank", "0",
                                            sig=signal.SIGINT)
        self.assertEqual(status, 130, out + err)
        self.assertIn("ibemu: run: Interrupt; ending the ranks", err)
        self.assert_nothing_held("rfail")
        self.down("rfail")

    def plot(self, name):
        """The SVG of 'run --plot' of four probe ranks (0 and 1 ping-pong
        10 times, each rank declares 5 us of compute) on a fresh fabric,
        with the fabric's name taken out; asserts that the ranks' traces
        were removed."""
        self.up(FT36, name)
        tmp = tempfile.mkdtemp(dir=self.rundir)
        path = os.path.join(tmp, "plot.svg")
        env = dict(self.env, TMPDIR=tmp)
        p = subprocess.run([IBEMU, "--fabric", name, "run", "-n", "4",
                            "--plot", path, "--", PROBE, "--pingpong", "10",
                            "--compute-us", "5"], capture_output=True,
                           text=True, env=env, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(path) as f:
            svg = f.read()
        os.unlink(path)
        self.assertEqual(os.listdir(tmp), [])  # no trace left behind
        os.rmdir(tmp)
        self.down(name)
        us = re.search(r", ([0-9.]+) us of virtual time", p.stderr)[1]
        self.assertIn(f"4 ranks, {us} us of virtual time", svg)
        return svg.replace(name, "FABRIC")

    def test_plot(self):
        """--plot: an SVG timeline, a row per rank naming its host: every
        rank waited (in the barriers) and computed, ranks 0 and 1 sent and
        received (their ping-pong), every interval inside the plot; the
        same file from two fresh fabrics."""
        svgs = [self.plot(f"rplot{i}") for i in range(2)]
        self.assertEqual(svgs[0], svgs[1])
        ns = "{http://www.w3.org/2000/svg}"
        colors = {"#d0d0d0": "waiting", "#4a7fc1": "compute",
                  "#2e9e44": "send", "#e08a1e": "receive"}
        groups = ET.fromstring(svgs[0]).findall(f"{ns}g")
        self.assertEqual([g.get("data-rank") for g in groups],
                         ["0", "1", "2", "3"])
        for g in groups:
            rank = int(g.get("data-rank"))
            self.assertRegex(g.find(f"{ns}text").text,
                             rf"^rank {rank} hca\d+$")
            rects = g.findall(f"{ns}rect")
            kinds = {colors[r.get("fill")] for r in rects}
            want = {"waiting", "compute"}
            if rank < 2:
                want |= {"send", "receive"}
            self.assertLessEqual(want, kinds, (rank, kinds))
            for r in rects:
                x, w = float(r.get("x")), float(r.get("width"))
                self.assertGreaterEqual(x, 130)
                self.assertLessEqual(x + w, 1130.01)

    def test_report(self):
        """--report: per rank the virtual time waiting, in declared
        compute and the rest, adding up to the run's; per link the bytes
        each way, from the PMA counters before and after."""
        self.up(FT36, "rrep")
        path = os.path.join(self.rundir, "report.json")
        p = self.run_cmd("rrep", "-n", "4", "--report", path, "--", PROBE,
                         "--pingpong", "10", "--compute-us", "5")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(path) as f:
            rep = json.load(f)
        os.unlink(path)
        self.assertEqual((rep["fabric"], rep["size"], rep["status"]),
                         ("rrep", 4, 0))
        self.assertEqual(rep["virtual_time_ps"],
                         rep["end_ps"] - rep["start_ps"])
        us = float(re.search(r", ([0-9.]+) us of virtual time",
                             p.stderr)[1])
        self.assertAlmostEqual(rep["virtual_time_ps"] / 1e6, us, places=3)
        hosts = []
        for r, x in enumerate(rep["ranks"]):
            self.assertEqual((x["rank"], x["reported"]), (r, True))
            self.assertEqual(x["total_ps"], x["end_ps"] - rep["start_ps"])
            self.assertEqual(x["waiting_ps"] + x["compute_ps"]
                             + x["other_ps"], x["total_ps"])
            self.assertEqual(x["compute_ps"], 5_000_000)
            self.assertGreater(x["waiting_ps"], 0)
            hosts.append(x["host"])
        # The last barrier ends every rank at the same time; ranks 2 and
        # 3 waited in it while 0 and 1 ping-ponged.
        self.assertEqual(len({x["end_ps"] for x in rep["ranks"]}), 1)
        self.assertEqual(max(x["end_ps"] for x in rep["ranks"]),
                         rep["end_ps"])
        self.assertGreater(rep["ranks"][2]["waiting_ps"],
                           rep["ranks"][0]["waiting_ps"])
        links = {(l["a"], l["b"]): (l["bytes_a_to_b"], l["bytes_b_to_a"])
                 for l in rep["links"]}
        self.assertEqual(len(links), len(self.json_of(
            "--fabric", "rrep", "links")["links"]))
        leaf = self.leaves("rrep")
        for h in leaf:
            ab = next(v for k, v in links.items() if k[1] == f"{h}:1")
            if h in hosts:
                self.assertTrue(ab[0] > 0 and ab[1] > 0, (h, ab))
            else:
                self.assertEqual(ab, (0, 0), h)
        # Ranks 0 and 1 sent 10 more round trips than 2 and 3.
        sent = {h: next(v for k, v in links.items() if k[1] == f"{h}:1")[1]
                for h in hosts}
        self.assertGreater(sent[hosts[0]], sent[hosts[2]])
        # Bytes crossed spines (ranks on different leaves).
        self.assertTrue(any(sum(v) for k, v in links.items()
                            if "spine" in k[1]))
        self.down("rrep")

    def test_outside_run(self):
        """ibemu_init outside 'ibemu run': ENOENT, as the header says."""
        self.up(FT36, "rout")
        p = subprocess.run([IBEMU, "--fabric", "rout", "exec", "--", PROBE],
                           capture_output=True, text=True, env=self.env,
                           timeout=60)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("ibemu_init: No such file or directory", p.stdout)
        self.down("rout")

    def join(self, fabric, job, rank, size):
        s = self.sess(fabric)
        self.addCleanup(s.close)
        msg = struct.pack("=64sIIQ", job.encode(), rank, size, 0)
        s.send(hdr(JOB_JOIN, len(msg)) + msg)
        return s, self.reply(s)

    def kv(self, s, type_, key, val=b"", rank=0, length=None):
        msg = struct.pack("=II64sQ", rank,
                          len(val) if length is None else length, key, 0)
        s.send(hdr(type_, len(msg) + len(val)) + msg + val)
        return self.reply(s)

    def test_job_stream_checks(self):
        """What a client sends is checked: errors with errnos, the daemon
        stays up, and a job is freed with its last rank."""
        self.up(FT36, "rjob")
        _, r = self.join("rjob", "j", 2, 2)
        self.assertEqual(r[:2], (1, -EINVAL))  # rank not below size
        _, r = self.join("rjob", "j", 0, 0)
        self.assertEqual(r[:2], (1, -EINVAL))
        s0, r = self.join("rjob", "j", 0, 2)
        self.assertEqual(r[:2], (JOB_JOIN, 0))
        _, r = self.join("rjob", "j", 0, 2)
        self.assertEqual(r[:2], (1, -EEXIST))  # rank joined twice
        _, r = self.join("rjob", "j", 1, 3)
        self.assertEqual(r[:2], (1, -EINVAL))  # size disagrees
        s1, r = self.join("rjob", "j", 1, 2)
        self.assertEqual(r[:2], (JOB_JOIN, 0))
        # Keys and lengths.
        self.assertEqual(self.kv(s0, JOB_PUT, b"k", b"v" * 1025)[:2],
                         (1, -EINVAL))
        self.assertEqual(self.kv(s0, JOB_PUT, b"x" * 64, b"v")[:2],
                         (1, -EINVAL))
        self.assertEqual(self.kv(s0, JOB_PUT, b"", b"v")[:2], (1, -EINVAL))
        self.assertEqual(self.kv(s0, JOB_PUT, b"k", b"v", length=9)[:2],
                         (1, -EINVAL))
        self.assertEqual(self.kv(s0, JOB_PUT, b"k", b"v" * 1024)[:2],
                         (JOB_PUT, 0))
        self.assertEqual(self.kv(s1, JOB_GET, b"k", rank=0)[:2],
                         (1, -ENOENT))  # not before the fence
        self.assertEqual(self.kv(s1, JOB_GET, b"k", rank=2)[:2],
                         (1, -EINVAL))
        # A fence: both resume at the later clock plus one round.
        sync = struct.pack("=IIQQ", 1, 0, 5_000_000, 0)
        s0.send(hdr(JOB_SYNC, len(sync)) + sync)
        sync = struct.pack("=IIQQ", 1, 0, 7_000_000, 0)
        s1.send(hdr(JOB_SYNC, len(sync)) + sync)
        for s in (s0, s1):
            t, st, body = self.reply(s)
            self.assertEqual((t, st), (JOB_SYNC, 0))
            # 7 us + 1 round of 2 us + 1024 bytes at 80 ps.
            self.assertEqual(struct.unpack("=IIQQ", body)[2:],
                             (7_000_000 + 2_000_000 + 1024 * 80, 1))
        t, st, body = self.kv(s1, JOB_GET, b"k", rank=0)
        self.assertEqual((t, st, body[80:]), (JOB_GET, 0, b"v" * 1024))
        # A barrier after a rank left fails with EPIPE.
        s0.close()
        sync = struct.pack("=IIQQ", 2, 0, 0, 0)
        time.sleep(0.2)
        s1.send(hdr(JOB_SYNC, len(sync)) + sync)
        self.assertEqual(self.reply(s1)[:2], (1, -EPIPE))
        s1.close()
        self.assertTrue(pid_alive(self.started["rjob"]))
        self.down("rjob")

    def test_scale_64(self):
        """64 ranks over the leaves of fat-tree-2l-1152: the ring passes."""
        self.up(FT1152, "rbig")
        start = time.time()
        p = self.run_cmd("rbig", "-n", "64", "--", PROBE, timeout=500)
        wall = time.time() - start
        self.assertEqual(p.returncode, 0, p.stdout[-3000:] + p.stderr)
        self.assertEqual(len(p.stdout.splitlines()), 64 * (64 + 4))
        print(f"64 ranks: {wall:.1f} s wall; {p.stderr.strip()}")
        self.down("rbig")


if __name__ == "__main__":
    main()
