# SPDX-License-Identifier: MIT
"""The CLI as a user meets it: help from the command table, one-line errors
with the right exit status, every bad file of the corpus rejected with its
exact message and status 2, and the topo subcommands end to end."""

import glob
import json
import os

import yaml

from harness import IbemuTestCase, SRC, main, topology

NET_EXAMPLES = "/usr/share/doc/ibsim-utils/net-examples"


class CliTest(IbemuTestCase):
    def test_help_lists_every_command(self):
        out = self.ibemu("--help", check=0).stdout
        for cmd in ("up", "down", "status", "exec", "sm", "topo", "help",
                    "nodes", "ports", "links", "route", "counters", "cc",
                    "traffic", "link", "node"):
            self.assertIn("\n  %-8s " % cmd, out)
        self.assertIn("usage: ibemu ports [NODE] [--json]",
                      self.ibemu("ports", "--help", check=0).stdout)
        self.assertIn("usage: ibemu up FILE",
                      self.ibemu("help", "up", check=0).stdout)
        # 'sm' has subcommands, each with its help from its table.
        sm_help = self.ibemu("help", "sm", check=0).stdout
        self.assertIn("usage: ibemu sm status|report [--json]", sm_help)
        self.assertIn("ibemu sm status [--json]", sm_help)
        self.assertIn("ibemu sm report [--json]", sm_help)
        self.assertEqual(sm_help.split("\n", 2)[2],
                         self.ibemu("sm", "--help", check=0).stdout)
        for sub, words in (("status", "state (master, standby, discovering)"),
                           ("report", "mean routes per directed")):
            out = self.ibemu("sm", sub, "--help", check=0).stdout
            self.assertIn(f"usage: ibemu sm {sub} [--json]", out)
            self.assertIn(words, out)
            self.assertIn("--json", out.split("options:")[1])
            self.assertEqual(out, self.ibemu("sm", sub, "-h", check=0).stdout)
        gen_help = self.ibemu("topo", "gen", "--help", check=0).stdout
        for kind in ("single-switch", "ring", "fat-tree-2l", "fat-tree-3l",
                     "kary-ntree", "torus", "mesh", "dragonfly"):
            self.assertIn(kind, gen_help)

    def test_errors_are_one_line(self):
        for args, status, text in [
            (["frobnicate"], 2, "unknown command 'frobnicate'"),
            (["up"], 2, "up: which fabric?"),
            (["up", "/nonexistent.yaml"], 2, "/nonexistent.yaml: error: cannot read"),
            (["up", topology("two-switch.yaml"), "--name", "a/b"], 2,
             "'a/b' is not a valid fabric name"),
            (["topo", "gen", "nosuch"], 2, "unknown kind 'nosuch'"),
            (["topo", "gen", "fat-tree-2l", "--radix", "12", "--hosts", "100"], 2,
             "hosts"),
            (["topo", "bogus"], 2, "unknown subcommand 'bogus'"),
            (["sm"], 2, "sm: which subcommand? usage: ibemu sm status|report"),
            (["sm", "bogus"], 2, "sm: unknown subcommand 'bogus'"),
            (["sm", "status", "--frob"], 2, "sm status: unknown option '--frob'"),
            (["--fabric"], 2, "option '--fabric' needs a value"),
        ]:
            p = self.ibemu(*args)
            self.assertEqual(p.returncode, status, (args, p.stderr))
            self.assertEqual(p.stderr.count("\n"), 1, (args, p.stderr))
            self.assertIn(text, p.stderr, args)

    def test_option_errors(self):
        two = topology("two-switch.yaml")
        for args, text in [
            (["up", two, "--name"], "ibemu: up: option '--name' needs a value"),
            (["up", two, "--name", "--foreground"],
             "ibemu: up: option '--name' needs a value"),
            (["up", two, "--name", "a", "--name=b"],
             "ibemu: up: option '--name' is given twice"),
            (["up", two, "--frobnicate"],
             "ibemu: up: unknown option '--frobnicate' (see 'ibemu up --help')"),
            (["up", two, "--foreground=1"],
             "ibemu: up: option '--foreground' takes no value"),
            (["up", two, "--routing", "bogus"],
             "ibemu: up: option '--routing' takes minhop, updown, ftree, dor or dfsssp, not 'bogus'"),
            (["up", two, "--sm", "none", "--routing", "minhop"],
             "ibemu: up: option '--routing' is ibemu-sm's; it does not go with '--sm none'"),
            (["up", two, "--sm", "none", "--sweep", "100"],
             "ibemu: up: option '--sweep' is ibemu-sm's; it does not go with '--sm none'"),
            (["traffic", "uniform", "--victims"],
             "ibemu: traffic: option '--victims' does not apply to pattern "
             "'uniform' (only to incast)"),
            (["traffic", "--shift", "2", "incast"],
             "ibemu: traffic: option '--shift' does not apply to pattern "
             "'incast' (only to shift)"),
            (["traffic", "uniform", "--seed", "-1"],
             "ibemu: traffic: option '--seed' takes an integer "
             "(0..18446744073709551615), not '-1'"),
            (["traffic", "uniform", "--seed", "99999999999999999999"],
             "(0..18446744073709551615), not '99999999999999999999'"),
            (["traffic", "uniform", "--sl", "16"],
             "option '--sl' takes an integer (0..15), not '16'"),
            (["traffic", "uniform", "--mtu", "1000"],
             "option '--mtu' takes an integer (256, 512, 1024, 2048 or 4096), "
             "not '1000'"),
            (["traffic", "uniform", "--load", "2"],
             "option '--load' takes a number (0.001..1), not '2'"),
            (["traffic", "uniform", "--size", "12parsecs"],
             "option '--size' takes a size such as 4096 or 64KiB"),
            (["traffic", "uniform", "--duration", "5"],
             "option '--duration' takes a duration such as 50us or 2ms"),
            (["traffic", "uniform", "--hotspot", "x"], "does not apply"),
            (["traffic", "congestion-tree", "--victims"],
             "ibemu: traffic: option '--victims' does not apply to pattern "
             "'congestion-tree' (only to incast)"),
            (["traffic", "incast", "--hotspot", "hca1:999"],
             "option '--hotspot' takes NODE or NODE:PORT (a port 0..255)"),
            (["traffic"], "ibemu: traffic: which pattern?"),
            (["traffic", "sideways"], "ibemu: traffic: unknown pattern 'sideways'"),
            (["traffic", "uniform", "--foo"],
             "ibemu: traffic: unknown option '--foo' (see 'ibemu traffic --help')"),
            (["ports", "--foo"],
             "ibemu: ports: unknown option '--foo' (see 'ibemu ports --help')"),
            (["ports", "a", "b"], "ibemu: ports: unexpected argument 'b'"),
            (["nodes", "--type", "router"],
             "ibemu: nodes: option '--type' takes switch or hca, not 'router'"),
            (["counters", "--top", "0"],
             "ibemu: counters: option '--top' takes an integer (1..1000000)"),
            (["counters", "--top"], "ibemu: counters: option '--top' needs a value"),
            (["status", "--json", "--json"],
             "ibemu: status: option '--json' is given twice"),
            (["down", "now"], "ibemu: down: unexpected argument 'now'"),
            (["exec", "--host"], "ibemu: exec: option '--host' needs a value"),
            (["exec", "--bogus", "--", "true"],
             "ibemu: exec: unknown option '--bogus'"),
            (["topo", "gen", "fat-tree-2l", "--dims", "4x4"],
             "ibemu: topo gen: option '--dims' does not apply to kind "
             "'fat-tree-2l' (only to torus, mesh)"),
            (["topo", "gen", "torus", "--dims"],
             "ibemu: topo gen: option '--dims' needs a value"),
            (["topo", "gen", "ring", "--switches", "3", "switches=4"],
             "ibemu: topo gen: option '--switches' is given twice"),
            (["topo", "gen", "ring", "--switches", "3", "--speed", "warp"],
             "ibemu: topo gen: option '--speed' takes a value (SDR, DDR"),
            (["topo", "check"], "ibemu: topo check: which file?"),
            (["topo", "check", "a", "b"], "ibemu: topo check: unexpected argument 'b'"),
            (["help", "up", "down"], "ibemu: help: unexpected argument 'down'"),
        ]:
            # No fabric runs: usage errors are found before one is needed.
            p = self.ibemu(*args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertEqual(p.stderr.count("\n"), 1, (args, p.stderr))
            self.assertIn(text, p.stderr, args)
        self.assertEqual(os.listdir(self.rundir), [])

    def test_old_spellings_still_work(self):
        # --opt=value, --opt value and bare key=value / key value for topo gen.
        a = self.ibemu("topo", "gen", "ring", "--switches=3", "--name", "r",
                       check=0).stdout
        b = self.ibemu("topo", "gen", "ring", "switches=3", "name", "r",
                       check=0).stdout
        c = self.ibemu("topo", "gen", "ring", "--switches", "3", "--name=r",
                       check=0).stdout
        self.assertEqual(a, b)
        self.assertEqual(a, c)
        self.assertEqual(yaml.safe_load(a)["name"], "r")
        self.assertIn("hosts_per_switch",
                      self.ibemu("topo", "gen", "ring", "--help", check=0).stdout)

    def test_missing_names_fail_alike(self):
        self.up(topology("two-switch.yaml"), "names")
        for args in (["ports", "nonexistent"], ["route", "nonexistent"],
                     ["route", "hca1", "nonexistent"],
                     ["counters", "nonexistent"],
                     ["traffic", "incast", "--hotspot", "nonexistent"]):
            p = self.ibemu(*args)
            self.assertEqual(p.returncode, 1, (args, p.stderr))
            self.assertEqual(p.stderr.count("\n"), 1, (args, p.stderr))
            self.assertIn("nonexistent", p.stderr)
        # The daemon applies the same table to a client that skips the CLI's
        # check (here the CLI itself, with the check passing and the value
        # failing only against the fabric).
        p = self.ibemu("route", "hca1", check=2)
        self.assertIn("route: which ports?", p.stderr)
        self.down("names")

    def test_help_from_tables(self):
        out = self.ibemu("help", "traffic", check=0).stdout
        self.assertIn("--seed N", out)
        self.assertIn("(integer 0..18446744073709551615; default 1)", out)
        self.assertIn("(integer 1..4294967295; default 1; pattern shift only)", out)
        self.assertIn("(integer 256, 512, 1024, 2048 or 4096;", out)
        self.assertIn("(duration 1ps..2^62ps; default 100us)", out)
        self.assertIn("[--top N] [--backlog N] [--cc on|off] [--plot FILE] [--stop]", out)
        self.assertIn("default the first host; pattern incast, congestion-tree only)",
                      out)
        self.assertIn("bisection, incast, congestion-tree) in virtual time", out)
        self.assertEqual(out, self.ibemu("traffic", "--help", check=0).stdout)
        out = self.ibemu("up", "--help", check=0).stdout
        self.assertIn("usage: ibemu up FILE [--name NAME] [--sm ibemu|none] [--routing minhop|updown|ftree|dor|dfsssp]", out)
        self.assertIn("(one of ibemu or none; default ibemu)", out)
        self.assertIn("(one of minhop, updown, ftree, dor or dfsssp; default minhop)", out)
        out = self.ibemu("help", "counters", check=0).stdout
        self.assertIn("usage: ibemu counters [NODE[:PORT]] [--json] [--top N] [--reset]", out)
        out = self.ibemu("help", "cc", check=0).stdout
        self.assertIn("usage: ibemu cc [NODE[:PORT]] [--json]", out)
        self.assertIn("congestion control", out)

    def test_bad_corpus_through_the_cli(self):
        files = sorted(glob.glob(os.path.join(SRC, "tests", "data", "bad-yaml", "*.yaml")))
        self.assertGreaterEqual(len(files), 25)
        for path in files:
            with open(path, errors="replace") as f:
                first = f.readline()
            self.assertTrue(first.startswith("# expect: "), path)
            expected = path + ":" + first[len("# expect: "):].rstrip("\n")
            for cmd in (["topo", "check", path], ["up", path, "--name", "bad"]):
                p = self.ibemu(*cmd)
                self.assertEqual(p.returncode, 2, (cmd, p.stderr))
                self.assertEqual(p.stderr.rstrip("\n").splitlines()[-1], expected)
        self.assertEqual(os.listdir(self.rundir) if os.path.isdir(self.rundir) else [],
                         [], "a rejected file must not start anything")

    def test_topo_gen_check_roundtrip(self):
        out = self.ibemu("topo", "gen", "fat-tree-2l", "--radix", "12",
                         "--hosts", "36", "--speed", "HDR", check=0).stdout
        doc = yaml.safe_load(out)
        self.assertEqual(len(doc["switches"]), 9)
        self.assertEqual(len(doc["hcas"]), 36)
        self.assertEqual(len(doc["links"]), 72)
        self.assertEqual(doc["defaults"]["speed"], "HDR")
        path = os.path.join(self.rundir, "gen.yaml")
        with open(path, "w") as f:
            f.write(out)
        p = self.ibemu("topo", "check", path, check=0)
        self.assertEqual(p.stdout, path + ": fabric fat-tree-2l: 9 switches, "
                         "36 HCAs, 72 links\n")

    def test_ibsim_examples_import_export(self):
        nets = sorted(glob.glob(os.path.join(NET_EXAMPLES, "net*")))
        self.assertGreaterEqual(len(nets), 5, "ibsim-utils examples missing")
        for net in nets:
            y1 = self.ibemu("topo", "import", net, check=0).stdout
            path = os.path.join(self.rundir, os.path.basename(net) + ".yaml")
            with open(path, "w") as f:
                f.write(y1)
            exported = self.ibemu("topo", "export", path, check=0).stdout
            npath = os.path.join(self.rundir, os.path.basename(net) + ".out")
            with open(npath, "w") as f:
                f.write(exported)
            y2 = self.ibemu("topo", "import", npath, check=0).stdout
            # Names differ (file names); everything else must not.
            self.assertEqual(y1.split("\n", 1)[1], y2.split("\n", 1)[1], net)

    def test_up_from_ibnetdiscover_file(self):
        self.up(os.path.join(NET_EXAMPLES, "net.2sw2path4hca"), "fromnet")
        nodes = self.json_of("nodes")["nodes"]
        self.assertEqual(sorted(n["name"] for n in nodes),
                         ["Hca1", "Hca2", "Hca3", "Hca4", "Switch1", "Switch2"])
        self.down("fromnet")


if __name__ == "__main__":
    main()
