# SPDX-License-Identifier: MIT
"""Shared by the integration tests: run the real ibemu CLI against real
daemons, each test in its own runtime directory with unique fabric names
(safe under ctest -j), and prove that nothing was left behind: before a
daemon stops, it holds no more sockets, memfds, anonymous files or shared
mappings than it did when it started (what clients come and go with); at
teardown, no daemon process, no socket, no lock, no shared-memory segment."""

import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

IBEMU = os.environ.get("IBEMU_BIN", "build/bin/ibemu")
SRC = os.environ.get("IBEMU_SOURCE_DIR", os.getcwd())
# ibemu's client libraries, in lib/ next to the binary's directory.
LIB_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(IBEMU))),
                       "lib")
UMAD_LIB = os.path.join(LIB_DIR, "libibumad.so.3")
VERBS_LIB = os.path.join(LIB_DIR, "libibverbs.so.1")


def sanitizer_preload(lib):
    """An instrumented library (IBEMU_SANITIZE, IBEMU_TSAN) needs the
    sanitizer's runtime loaded first in programs that are not instrumented,
    such as the Debian tools: the runtime's name, or None."""
    out = subprocess.run(["objdump", "-p", lib], capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "NEEDED" and (
                "libasan" in parts[1] or "libtsan" in parts[1]):
            return parts[1]
    return None


# The client libraries are built with ThreadSanitizer (IBEMU_TSAN), whose
# runtime python3 does not survive preloaded: tests that load them into
# python3 skip.
TSAN = (sanitizer_preload(VERBS_LIB) or "").startswith("libtsan")


def tool_env(env):
    """'env' for a real tool run under 'ibemu exec' (see sanitizer_preload),
    whichever of ibemu's libraries (umad, verbs) it loads."""
    env = dict(env)
    preload = sanitizer_preload(UMAD_LIB) or sanitizer_preload(VERBS_LIB)
    if preload:
        env["LD_PRELOAD"] = preload
        env["ASAN_OPTIONS"] = "detect_leaks=0"
        # A race ends the program at once (exit status 66), so that a
        # resident tool (OpenSM) fails its test too.
        env["TSAN_OPTIONS"] = "halt_on_error=1"
    return env


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of 'pid' (fields 14 and 15 of /proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def cpu_share(pid, seconds):
    """The CPU time 'pid' used over 'seconds' of wall clock, a fraction."""
    c0, t0 = cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    return (cpu_seconds(pid) - c0) / (time.monotonic() - t0)


def held(pid):
    """What daemon 'pid' holds that a client could make it leak: counts of
    its sockets, memfds and anonymous-inode files (/proc/PID/fd), and of
    its shared mappings (/proc/PID/maps)."""
    out = {"socket": 0, "memfd": 0, "anon_inode": 0, "shared_mapping": 0}
    fd_dir = f"/proc/{pid}/fd"
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue  # closed meanwhile
        for kind, prefix in (("socket", "socket:"), ("memfd", "/memfd:"),
                             ("anon_inode", "anon_inode:")):
            if target.startswith(prefix):
                out[kind] += 1
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            if line.split()[1][3] == "s":
                out["shared_mapping"] += 1
    return out


class IbemuTestCase(unittest.TestCase):
    """Each test gets a private IBEMU_RUNTIME_DIR; tearDown stops what is
    still running (failing the test if anything leaked)."""

    def setUp(self):
        self.rundir = tempfile.mkdtemp(prefix="ibemu-it-")
        self.env = dict(os.environ, IBEMU_RUNTIME_DIR=self.rundir)
        self.env.pop("IBEMU_FABRIC", None)
        self.started = {}  # fabric name -> pid
        self.baseline = {}  # fabric name -> held() once it was up

    def tearDown(self):
        leaks = []
        for name, pid in self.started.items():
            if pid_alive(pid):
                # What it holds beyond its start: what clients left.
                try:
                    now, base = held(pid), self.baseline[name]
                    extra = {k: now[k] - base[k] for k in now
                             if now[k] > base[k]}
                except OSError:
                    extra = {}
                leaks.append(f"daemon of {name} (pid {pid}) still running"
                             + (f", holding more than at start: {extra}"
                                if extra else ""))
                os.kill(pid, signal.SIGKILL)
        # A resident ibemu-sm stops once its fabric is gone (its port
        # vanished) and takes its status file with it: give it the time.
        for status in glob.glob(os.path.join(self.rundir, "*", "sm.json")):
            try:
                with open(status) as f:
                    sm_pid = json.load(f)["pid"]
            except (OSError, ValueError, KeyError):
                continue
            end = time.time() + 10
            while pid_alive(sm_pid) and time.time() < end:
                time.sleep(0.05)
            if not pid_alive(sm_pid):
                time.sleep(0.05)
        for path in glob.glob(os.path.join(self.rundir, "*", "*")):
            if not path.endswith(("daemon.log", "daemon.log.1", "sm.log")):
                leaks.append(f"left behind: {path}")
                continue
            # Daemons write sanitizer reports to their log, not to a test.
            with open(path, errors="replace") as f:
                log = f.read()
            if "Sanitizer" in log or "runtime error:" in log:
                leaks.append(f"sanitizer report in {path}:\n{log}")
        if not os.environ.get("IBEMU_KEEP"):
            shutil.rmtree(self.rundir, ignore_errors=True)
        self.assertEqual(leaks, [], "teardown found leftovers")

    def ibemu(self, *args, check=None, env=None, timeout=120):
        """Runs the CLI; check=0 asserts success, check=N asserts status N."""
        p = subprocess.run([IBEMU, *args], capture_output=True, text=True,
                           errors="replace", env=env or self.env,
                           timeout=timeout)
        if check is not None:
            self.assertEqual(p.returncode, check,
                             f"ibemu {' '.join(args)}: status {p.returncode}\n"
                             f"stdout: {p.stdout}\nstderr: {p.stderr}")
        return p

    def run_watched(self, args, env, timeout, fabric):
        """Runs 'args' (a launcher such as 'ibemu run') in a session of its
        own; returns (status, output). Past 'timeout' seconds the status is
        'timeout' and the output ends with what a hang needs to be
        understood: the fabric's status (its virtual time and what holds
        it) and each process of the session with its state and the kernel
        function it sleeps in; then the whole session is killed, so no
        rank is left behind to hold the daemon."""
        p = subprocess.Popen(args, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True,
                             errors="replace", env=env,
                             start_new_session=True)
        try:
            out, _ = p.communicate(timeout=timeout)
            return p.returncode, out
        except subprocess.TimeoutExpired:
            pass
        status = self.ibemu("status", "--fabric", fabric, timeout=30)
        ps = subprocess.run(["ps", "-s", str(p.pid), "-o",
                             "pid,stat,wchan:24,time,args"],
                            capture_output=True, text=True).stdout
        # mpirun puts each rank in a process group of its own: each
        # process of the session is killed, not only the launcher's group.
        for line in ps.splitlines()[1:]:
            try:
                os.kill(int(line.split()[0]), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        out, _ = p.communicate()
        return "timeout", (f"{out}\n-- timed out after {timeout} s; "
                           f"ibemu status:\n{status.stdout}{status.stderr}"
                           f"-- its processes:\n{ps}")

    def up(self, topo_file, name, *extra):
        p = self.ibemu("up", topo_file, "--name", name, *extra, check=0)
        with open(self.paths(name)["pid"]) as f:
            pid = int(f.read())
        self.started[name] = pid
        self.baseline[name] = held(pid)
        return p

    def assert_nothing_held(self, name, seconds=10):
        """Fails unless the daemon of 'name' comes back to what it held
        when it started: clients that went away took their sockets,
        memfds and mappings with them."""
        pid = self.started[name]
        base = self.baseline[name]
        end = time.time() + seconds
        while True:
            now = held(pid)
            extra = {k: now[k] - base[k] for k in now if now[k] > base[k]}
            if not extra or time.time() > end:
                break
            time.sleep(0.05)  # the daemon may not have seen a close yet
        self.assertEqual(extra, {}, f"daemon of {name} still holds more "
                         f"than at start: {now} vs {base}")

    def down(self, name, clients_gone=True):
        """Stops fabric 'name'; with 'clients_gone', first asserts that
        the daemon holds no more than when it started."""
        if (clients_gone and name in self.baseline
                and pid_alive(self.started[name])):
            self.assert_nothing_held(name)
        p = self.ibemu("down", "--fabric", name, check=0)
        self.assertFalse(pid_alive(self.started[name]))
        return p

    def json_of(self, *args):
        p = self.ibemu(*args, "--json", check=0)
        return json.loads(p.stdout)

    def paths(self, name):
        d = os.path.join(self.rundir, name)
        return {"dir": d, "sock": os.path.join(d, "ctl.sock"),
                "lock": os.path.join(d, "lock"), "pid": os.path.join(d, "pid"),
                "log": os.path.join(d, "daemon.log"),
                "sm_status": os.path.join(d, "sm.json"),
                "sm_log": os.path.join(d, "sm.log")}

    def wait_until(self, what, check, seconds=20):
        """Polls check() until it is true: the resident SM acts in wall
        time (a trap, then a heavy sweep), so its effects are awaited."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            if check():
                return
            time.sleep(0.05)
        self.fail(f"waited {seconds} s for {what}")

    def wait_gone(self, pid, seconds=10):
        end = time.time() + seconds
        while pid_alive(pid) and time.time() < end:
            time.sleep(0.02)
        self.assertFalse(pid_alive(pid), f"pid {pid} did not exit")


def read(path):
    with open(path) as f:
        return f.read()


class OpenSMRunner:
    """For IbemuTestCase subclasses that run the real OpenSM under 'ibemu
    exec': its files (log, cache, dumps) go to a private directory outside
    the runtime directory (which the teardown wants empty), and fabrics a
    failed check left running are stopped before the leak check."""

    def setUp(self):
        super().setUp()
        self.residents = []  # OpenSMs left running (resident_opensm)
        self.osm_root = tempfile.mkdtemp(prefix="ibemu-opensm-")
        self.addCleanup(shutil.rmtree, self.osm_root, True)
        self.tool_env = tool_env(self.env)
        for key in ("IBEMU_SESSION_SOCKET", "IBEMU_HOST"):
            self.env.pop(key, None)
            self.tool_env.pop(key, None)

    def tearDown(self):
        # OpenSMs first: an OpenSM whose fabric went away would hang.
        for sm in self.residents:
            if sm.poll() is None:
                sm.terminate()
                try:
                    sm.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    sm.kill()
                    sm.wait()
        for name, pid in self.started.items():
            if name in self.baseline and pid_alive(pid):
                self.assert_nothing_held(name)
            self.ibemu("down", "--fabric", name)
        super().tearDown()

    def opensm_args(self, fabric, host, *extra):
        """(argv, env, log) of an OpenSM on 'host' of 'fabric'."""
        osm = os.path.join(self.osm_root, fabric)
        os.makedirs(osm, exist_ok=True)
        log = os.path.join(osm, "opensm.log")
        argv = [IBEMU, "exec", "--fabric", fabric]
        if host:
            argv += ["--host", host]
        argv += ["--", "opensm", "--config", "/dev/null", "--log_file", log,
                 "--dump_files_dir", osm, *extra]
        return argv, dict(self.tool_env, OSM_CACHE_DIR=osm), log

    def resident_opensm(self, fabric, host, *extra):
        """Starts an OpenSM that stays and waits for its first SUBNET UP;
        returns (process, log path). Stop it (stop_opensm) before taking
        its fabric down: an OpenSM whose port vanished spins on receive
        errors and then hangs in its own exit path (a lock its cancelled
        receiver thread held), as it would if a real HCA went away."""
        argv, env, log = self.opensm_args(fabric, host, "-d", "2", *extra)
        sm = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        self.residents.append(sm)
        self.wait_log(log, "SUBNET UP")
        return sm, log

    def stop_opensm(self, sm):
        sm.terminate()
        sm.wait(timeout=30)

    def wait_log(self, log, text, count=1, seconds=60):
        end = time.time() + seconds
        while time.time() < end:
            if os.path.exists(log) and read(log).count(text) >= count:
                return read(log)
            time.sleep(0.05)
        self.fail(f"{text!r} did not appear {count} times in {log}")


def topology(name):
    return os.path.join(SRC, "topologies", name)


def main():
    unittest.main(argv=[sys.argv[0], "-v", *sys.argv[1:]])
