# SPDX-License-Identifier: MIT
"""The quiescence time rule of docs/design.md §3: tests/clients/verbs-det.c (100
RC ping-pongs of varying sizes, RDMA WRITEs and READs between hca01 and
hca36 of a two-level fat tree) prints the virtual time of every completion
it takes; three fresh daemons, and one daemon twice, must give
byte-identical outputs, and 'ibemu status' must say the run stayed
deterministic. Under '--clock free' the program still completes, and
status says the run is not deterministic. Its threads scenario (one thread
blocked in ibv_get_cq_event while another of the same context runs) must
give the virtual times of a process that never waited."""

import os
import re
import subprocess

from harness import IBEMU, IbemuTestCase, main, tool_env, topology

BUILD = os.environ.get("IBEMU_BUILD_DIR", "build")
DET = os.path.join(BUILD, "tests", "verbs-det")
HOLD = os.path.join(BUILD, "tests", "verbs-hold")
LOCK = os.path.join(BUILD, "tests", "verbs-lock")
TIMER = os.path.join(BUILD, "tests", "verbs-timer")
FAT = topology("fat-tree-2l-36.yaml")


class TimeRuleTest(IbemuTestCase):
    def setUp(self):
        super().setUp()
        for key in ("IBEMU_SESSION_SOCKET", "IBEMU_HOST"):
            self.env.pop(key, None)
        self.tool_env = tool_env(self.env)

    def exchange(self, fabric, roles=("server", "client"), lines=212):
        """Runs both ends once; returns (server output, client output)."""
        a = os.path.join(self.rundir, "a")
        b = os.path.join(self.rundir, "b")
        for f in (a, b, a + ".ready", b + ".ready"):
            if os.path.exists(f):
                os.unlink(f)
        procs = [subprocess.Popen(
            [IBEMU, "exec", "--fabric", fabric, "--host", host, "--",
             DET, role, out, inp],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=self.tool_env)
            for host, role, out, inp in (("hca01", roles[0], a, b),
                                         ("hca36", roles[1], b, a))]
        outs = []
        for p in procs:
            try:
                out, err = p.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
            self.assertEqual(p.returncode, 0, f"verbs-det: {out}{err}")
            outs.append(out)
        self.assertEqual(len(outs[1].splitlines()), lines)
        return tuple(outs)

    def status(self, fabric):
        return self.json_of("status", "--fabric", fabric)

    def assert_deterministic(self, fabric):
        """'Deterministic: yes', else the failure quotes the daemon's
        reason (its log line)."""
        with open(self.paths(fabric)["log"]) as f:
            why = [ln for ln in f if "not deterministic" in ln]
        self.assertEqual(self.status(fabric)["deterministic"], "yes",
                         "".join(why))

    def test_status_names_who_holds_time(self):
        """A process that posted an RDMA WRITE and keeps running without
        waiting holds virtual time: 'ibemu status' names it (pid, HCA,
        since when), in text and JSON; once it waited and left, nobody."""
        self.up(topology("two-switch.yaml"), "thold")
        p = subprocess.Popen([IBEMU, "exec", "--fabric", "thold", "--host",
                              "hca2", "--", HOLD, "3"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             env=self.tool_env)
        try:
            self.assertEqual(p.stdout.readline(), "posted\n")
            self.wait_until("the hold to show", lambda: self.status(
                "thold").get("time_held_by_pid") == p.pid, seconds=2.5)
            s = {}
            self.wait_until("the hold in JSON", lambda: s.update(
                self.status("thold")) or (s.get("time_held_by") or
                                          "").startswith(f"pid {p.pid} "),
                seconds=2.5)
            self.assertRegex(s["time_held_by"], rf"^pid {p.pid} \(hca2\) "
                             r"since \d\d:\d\d:\d\d \([\d.]+ s\)$")
            self.assertRegex(s["time_held_since"],
                             r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
            # Each receive moves the holder's clock by its cost: the
            # engine catches up and the hold is noted again, so a look
            # may fall between the two.
            self.wait_until("the hold in the text", lambda: re.search(
                rf"Virtual time held by: +pid {p.pid} \(hca2\) since ",
                self.ibemu("status", "--fabric", "thold", check=0).stdout),
                seconds=2.5)
            out, err = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        self.assertEqual(p.returncode, 0, out + err)
        self.assertIn("done 0", out)
        s = self.status("thold")
        self.assertIsNone(s["time_held_by"])
        self.assertIsNone(s["time_held_by_pid"])
        self.down("thold")

    def spine_stream(self, name):
        """verbs-det's stream (sserver on hca01, sclient on hca36: 1000
        ping-pongs 100 us apart, RC timeout 14, retry_cnt 7), with the
        spine on their route taken down 50 ms of virtual time after the
        client's start ('ibemu node down --at'). Returns the outputs and
        the SM's counts."""
        self.up(FAT, name)
        f = ("--fabric", name)
        route = self.json_of("route", "hca01", "hca36", *f)["route"]
        spine = [h["node"] for h in route if h["node"].startswith("spine")]
        self.assertEqual(len(spine), 1, route)
        a = os.path.join(self.rundir, "sa")
        b = os.path.join(self.rundir, "sb")
        for x in (a, b, a + ".ready", b + ".ready", a + ".go"):
            if os.path.exists(x):
                os.unlink(x)
        # Their outputs (2,000 lines each) go to files: a full pipe
        # would stop a side in write(), outside the library.
        logs = [open(os.path.join(self.rundir, f"{role}.out"), "w+")
                for role in ("sserver", "sclient")]
        procs = [subprocess.Popen(
            [IBEMU, "exec", "--fabric", name, "--host", host, "--", DET,
             role, out, inp],
            stdout=log, stderr=subprocess.STDOUT, text=True,
            env=self.tool_env)
            for host, role, out, inp, log in (
                ("hca01", "sserver", a, b, logs[0]),
                ("hca36", "sclient", b, a, logs[1]))]
        outs = []
        try:
            self.wait_until("the client to start", lambda: os.path.getsize(
                logs[1].name) > 0)
            logs[1].seek(0)
            first = logs[1].readline()
            self.assertRegex(first, r"^t0 \d+\n$")
            t0 = int(first.split()[1])
            self.ibemu("node", "down", spine[0], "--at",
                       f"{(t0 + 50 * 10**9) / 10**6:.6f}", *f)
            open(a + ".go", "w").close()
            for p, log in zip(procs, logs):
                p.wait(timeout=300)
                log.seek(0)
                outs.append(log.read())
                self.assertEqual(p.returncode, 0, f"verbs-det: {outs[-1]}")
        finally:
            for p, log in zip(procs, logs):
                if p.poll() is None:
                    p.kill()
                    p.wait()
                log.close()
        sm = self.json_of("sm", "status", *f)
        self.assert_deterministic(name)
        self.down(name)
        return outs[1], outs[0], sm

    def test_spine_down_mid_stream(self):
        """An RC stream survives its spine taken down mid-stream: the
        switches' Trap 128 reaches ibemu-sm in virtual time, its heavy
        sweep routes around the spine long before the QP's retries run
        out (7 of 67 ms), the lost message is sent again on the new
        route, and two runs give the same virtual times to the
        picosecond."""
        runs = [self.spine_stream(f"spine{i}") for i in range(2)]
        client, server, sm = runs[0]
        # t0, two completions a ping, and the end.
        self.assertEqual(len(client.splitlines()), 1 + 2 * 1000 + 1)
        times = [int(line.rsplit(" ", 1)[1])
                 for line in client.splitlines()[1:-1]]
        gaps = [y - x for x, y in zip(times, times[1:])]
        # One ping waited for its retransmission: 67 ms (4.096 us x 2^14).
        self.assertGreater(max(gaps), 67 * 10**9)
        self.assertLess(max(gaps), 2 * 68 * 10**9)
        self.assertGreaterEqual(sm["heavy_sweeps"], 2)
        self.assertEqual(sm["smps_timed_out"], 0)
        self.assertEqual(runs[1][0], runs[0][0])
        self.assertEqual(runs[1][1], runs[0][1])

    def test_three_daemons_and_one_twice(self):
        """With ibemu-sm resident, whose waits and MADs follow the rule
        too (docs/design.md §3)."""
        runs = []
        for i in range(3):
            name = f"det{i}"
            self.up(FAT, name)
            self.assertEqual(self.status(name)["clock"], "quiesce")
            runs.append(self.exchange(name))
            if i == 0:
                runs.append(self.exchange(name))
            self.assert_deterministic(name)
            self.down(name)
        for r in runs[1:]:
            self.assertEqual(r, runs[0])

    def test_umad_tools_on_a_quiet_fabric(self):
        """Debian's ibnetdiscover and smpquery through libibumad, on three
        fresh daemons: the fabric's virtual time when they are done is
        the same each time (each SMP enters the engine at the time of the
        answer that let the tool go on; nothing else runs)."""
        times = []
        for i in range(3):
            name = f"umt{i}"
            self.up(FAT, name)
            for cmd in (["ibnetdiscover"],
                        ["smpquery", "-D", "nodeinfo", "0,1,3"]):
                p = subprocess.run(
                    [IBEMU, "exec", "--fabric", name, "--host", "hca05",
                     "--", *cmd], capture_output=True, text=True,
                    env=self.tool_env, timeout=60)
                self.assertEqual(p.returncode, 0, p.stderr)
            st = self.status(name)
            self.assertEqual(st["deterministic"], "yes")
            times.append(st["virtual_time_ps"])
            self.down(name)
        self.assertGreater(times[0], 0)
        self.assertEqual(times, [times[0]] * 3)

    def test_threads(self):
        """The client's waiter blocks in ibv_get_cq_event while its sender
        sleeps 5 ms of wall time between two SENDs, then declares 10 us of
        compute: the process never waited, so the server's SEND is handed
        to it only after the second SEND was posted, 10 us of compute
        after the first. Had the context been taken as waiting (its last
        call said so), the waiter would have woken at the SEND's arrival
        and the second SEND left 10 us after that.

        The client's clock also moves by its calls' costs (verbs/cost.h):
        after its first query of the port (t = 0), a PD 5 us, two
        channels 10, two CQs 100, a 1 MiB MR over 257 pages 30 + 64.25,
        a QP 150, INIT, RTR, RTS 180; a receive 0.1, two SENDs 0.4, the
        compute 10, the event 1 and the poll that takes the receive 0.1:
        550.85 us (arming a CQ costs nothing: it begins a wait), less
        what the sender's own wake-up has not yet added when the waiter
        reads the clock. The second SEND leaves 10.2 us after the first
        (the compute, and its own post's cost)."""
        runs = []
        for i in range(2):
            name = f"dethr{i}"
            self.up(FAT, name)
            runs.append(self.exchange(name, ("tserver", "tclient"), 3))
            self.assert_deterministic(name)
            self.down(name)
        # The server is one thread: its times are the same every run. The
        # client's two threads wake at once (the waiter with the server's
        # SEND, the sender with its own completion), and the costs of
        # their wake-ups (the event 1 us, the poll 0.1 us) reach the one
        # process clock in the order the threads run: a thread's reading
        # may or may not include the other's (verbs/README.md).
        self.assertEqual(runs[1][0], runs[0][0])
        server, client = runs[0]
        times = {" ".join(line.split()[:3]): int(line.split()[-1])
                 for line in (server + client).splitlines()
                 if not line.startswith("end")}
        self.assertGreaterEqual(times["waiter recv 0"], 550_600_000, client)
        # ... and it may include the sender's wake-up too (its event 1 us
        # and poll 0.1 us: seen in CI under load).
        self.assertLessEqual(times["waiter recv 0"], 551_950_000, client)
        self.assertGreater(times["sender send 1"], 550_600_000, client)
        # Both SENDs cross the same idle path, the second 10.2 us later.
        self.assertEqual(times["server 2 wr"] - times["server 0 wr"],
                         10_200_000, server)

    def test_timer_while_spinning(self):
        """verbs-timer spins on an empty CQ until its own clock has moved
        1.5 s, as a retransmission timer waits in a progress loop. Nothing
        in the fabric ends that wait: the daemon hands the spinning
        process the passing of time, 1 s of virtual time after its wait
        began and every second after, so the program sees its timer
        expire at the second tick, the same in every run. Before, its
        clock stood still (a wait holds a clock until a hand-off) and it
        spun forever: how 16 ranks of openib hung when a UD connection
        request was lost."""
        self.up(topology("two-switch.yaml"), "ttick")
        for _ in range(2):
            p = subprocess.run([IBEMU, "exec", "--fabric", "ttick",
                                "--host", "hca2", "--", TIMER, "1500"],
                               capture_output=True, text=True,
                               env=self.tool_env, timeout=120)
            self.assertEqual((p.returncode, p.stdout),
                             (0, "waited 2000 ms\n"), p.stderr)
        st = self.ibemu("status", "--fabric", "ttick", check=0).stdout
        self.assertRegex(st, r"Deterministic:\s+yes")
        with open(self.paths("ttick")["log"]) as f:
            self.assertIn("spun in its waits for 1000 ms of virtual time",
                          f.read())
        self.down("ttick")

    def test_ticks_while_peer_computes(self):
        """verbs-det's ping-pongs with a pause: the client declares 2.5 s
        of compute before its first SEND while the server spins on its CQ
        and never reads its clock. Each tick after the first is earned by the
        server's polls alone, and the fabric waits at it meanwhile: the run
        ends, the SEND finds the server at the same virtual time twice, and
        every ping time is the plain exchange's shifted by the pause."""
        name = "tpause"
        self.up(FAT, name)
        # The pings (200 lines), 'done' and 'end': no RDMA phase.
        paused = [self.exchange(name, roles=("lserver", "lclient"),
                                lines=202)
                  for _ in range(2)]
        self.assert_deterministic(name)
        with open(self.paths(name)["log"]) as f:
            self.assertIn("spun in its waits for 1000 ms of virtual time",
                          f.read())
        self.down(name)
        self.assertEqual(paused[0], paused[1])
        # The reference, on a fabric of its own: its server's memory is
        # open to the exchange's RDMA, and may be taken for polled.
        self.up(FAT, "tplain")
        plain = self.exchange("tplain")
        self.down("tplain")

        def times(out):
            return [int(ln.rsplit(" ", 1)[1]) for ln in out.splitlines()
                    if ln.rsplit(" ", 1)[-1].isdigit()]
        # The server's first completion (the first SEND) came after the
        # pause; the client's ping times moved by the pause exactly.
        first = times(paused[0][0])[0]
        self.assertGreater(first, 2500 * 10**9)
        self.assertEqual(
            [t - 2500 * 10**9 for t in times(paused[0][1])[:200]],
            times(plain[1])[:200])

    def test_thread_asleep_on_a_lock(self):
        """verbs-lock: one thread holds a mutex while it spins on its
        send's completion, the other took a completion last and sleeps on
        the mutex (Open MPI's openib connection manager does this). The
        library takes the sleeper for a thread that waits, so each round
        ends as soon as virtual time brings the completion, not after the
        daemon's grace period (twice 10 ms of wall time, seconds on a
        loaded host: how 16 ranks of openib crawled past the test's
        timeout). The daemon says so, once, and marks the run not
        deterministic, as a condition might be signalled from a socket."""
        self.up(topology("two-switch.yaml"), "tlock")
        p = subprocess.run([IBEMU, "exec", "--fabric", "tlock", "--host",
                            "hca2", "--", LOCK, "40"], capture_output=True,
                           text=True, env=self.tool_env, timeout=120)
        self.assertEqual((p.returncode, p.stdout), (0, "rounds 40\n"),
                         p.stderr)
        with open(self.paths("tlock")["log"]) as f:
            log = f.read()
        self.assertEqual(log.count("slept on a lock or a condition"), 1,
                         log)
        self.assertEqual(self.status("tlock")["deterministic"], "no")
        self.down("tlock")

    def test_memory_polling(self):
        """A WRITE ping-pong by memory polling (verbs-det's mserver and
        mclient, 200 rounds, no verbs call while a side spins): each
        landing is handed to the spinning side as a completion, so two
        fresh daemons give the same virtual times and the runs stay
        deterministic. Before, each spin lasted the grace period (twice
        10 ms), the run was marked non-deterministic, and a post was
        stamped with a clock that had not seen the landing. ibemu-sm
        stays resident: its waits follow the rule too."""
        runs = []
        for i in range(2):
            name = f"detmem{i}"
            self.up(FAT, name)
            runs.append(self.exchange(name, ("mserver", "mclient"), 4))
            self.assert_deterministic(name)
            self.down(name)
        self.assertEqual(runs[1], runs[0])
        self.assertRegex(runs[0][1], r"(?m)^mclient 200 t \d+$")

    def test_free_clock(self):
        self.up(FAT, "detfree", "--clock", "free")
        self.exchange("detfree")
        st = self.status("detfree")
        self.assertEqual((st["clock"], st["deterministic"]), ("free", "no"))
        self.down("detfree")


if __name__ == "__main__":
    main()
