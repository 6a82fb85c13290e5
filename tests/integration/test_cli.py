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
        for cmd in ("up", "down", "status", "topo", "nodes", "ports", "links"):
            self.assertIn("\n  %-8s " % cmd, out)
        self.assertIn("usage: ibemu ports [NODE] [--json]",
                      self.ibemu("ports", "--help", check=0).stdout)
        self.assertIn("usage: ibemu up FILE",
                      self.ibemu("help", "up", check=0).stdout)
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
            (["--fabric"], 2, "--fabric needs a fabric name"),
        ]:
            p = self.ibemu(*args)
            self.assertEqual(p.returncode, status, (args, p.stderr))
            self.assertEqual(p.stderr.count("\n"), 1, (args, p.stderr))
            self.assertIn(text, p.stderr, args)

    def test_bad_corpus_through_the_cli(self):
        files = sorted(glob.glob(os.path.join(SRC, "tests", "bad-yaml", "*.yaml")))
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
