#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How the routes an SM programmed spread traffic, from the files it dumps
in OpenSM's formats (opensm-lfts.dump, opensm-subnet.lst: OpenSM writes
them, and so does ibemu-sm with --dump-dir), so that two SMs' routes on one
fabric are scored by one yardstick. The measures are routing/quality.c's:
hosts are the CA ports in LID order; for a shift permutation by k (host i
to host i + k, every k), the most routes one directed switch-to-switch
cable carries; for all-to-all, the most and the mean per cable used, next
to the ideal (every cable carrying the same share of all the hops); the
path lengths in switch-to-switch hops; pairs with no route.

usage: bench/lft_quality.py DIR [--json]   (DIR holds both files)"""

import argparse
import json
import os
import re
import sys
from collections import Counter

# A cable: both ends, each "{ CA|SW[-SM] Ports:.. NodeGUID:.. {desc} LID:..
# PN:.. }" (the SM's own node is marked "-SM").
LINK = re.compile(
    r"\{ (CA|SW)(?:-SM)? Ports:\w+ SystemGUID:\w+ NodeGUID:(\w+) "
    r"PortGUID:(\w+) .*?\{(.*?)\} LID:(\w+) PN:(\w+) \} "
    r"\{ (CA|SW)(?:-SM)? Ports:\w+ SystemGUID:\w+ NodeGUID:(\w+) "
    r"PortGUID:(\w+) .*?\{(.*?)\} LID:(\w+) PN:(\w+) \}")
LFT_HEAD = re.compile(r"^Unicast lids \[.*\] of switch Lid (\d+) guid (0x\w+)")
LFT_ROW = re.compile(r"^(0x[0-9a-fA-F]+) (\d+)")


def load(directory):
    """The subnet's cables and the switches' LFTs: (peer, hosts, lfts,
    switch_of_lid) with peer[(node, port)] = (node, port), hosts a list of
    (lid, node, port) of CA ports, lfts[node] = {lid: port}."""
    peer, kind, hosts = {}, {}, {}
    with open(os.path.join(directory, "opensm-subnet.lst")) as f:
        for line in f:
            m = LINK.search(line)
            if not m:
                continue
            a = (m.group(1), int(m.group(2), 16), int(m.group(5), 16),
                 int(m.group(6), 16))
            b = (m.group(7), int(m.group(8), 16), int(m.group(11), 16),
                 int(m.group(12), 16))
            for (t, node, lid, port), (_, onode, _, oport) in ((a, b),
                                                                (b, a)):
                kind[node] = t
                peer[(node, port)] = (onode, oport)
                if t == "CA":
                    hosts[lid] = (node, port)
    lfts, node_of = {}, {}
    cur = None
    with open(os.path.join(directory, "opensm-lfts.dump")) as f:
        for line in f:
            m = LFT_HEAD.match(line)
            if m:
                cur = int(m.group(2), 16)
                lfts[cur] = {}
                node_of[int(m.group(1))] = cur
                continue
            m = LFT_ROW.match(line)
            if m and cur is not None:
                lfts[cur][int(m.group(1), 16)] = int(m.group(2))
    ordered = [(lid,) + hosts[lid] for lid in sorted(hosts)]
    return peer, kind, ordered, lfts


def path(peer, kind, lfts, src, dst_lid, limit=64):
    """The directed switch-to-switch cables from CA port 'src' to the CA
    port of 'dst_lid', or None where the LFTs lead nowhere."""
    node, port = peer.get(src, (None, None))
    if node is None or kind.get(node) != "SW":
        return None
    cables = []
    for _ in range(limit):
        out = lfts.get(node, {}).get(dst_lid)
        if out is None or out in (0, 255):
            return None
        nxt = peer.get((node, out))
        if nxt is None:
            return None
        if kind.get(nxt[0]) == "CA":
            return cables
        cables.append((node, out))
        node = nxt[0]
    return None


def quality(directory):
    peer, kind, hosts, lfts = load(directory)
    n = len(hosts)
    paths, unrouted = {}, 0
    for i, (_, snode, sport) in enumerate(hosts):
        for j, (dlid, _, _) in enumerate(hosts):
            if i == j:
                continue
            p = path(peer, kind, lfts, (snode, sport), dlid)
            if p is None:
                unrouted += 1
            paths[(i, j)] = p or []
    cables = sum(1 for (node, _), (other, _) in peer.items()
                 if kind.get(node) == "SW" and kind.get(other) == "SW")
    a2a = Counter()
    hops = Counter()
    for p in paths.values():
        a2a.update(p)
        hops[len(p)] += 1
    shift_max = 0
    for k in range(1, n):
        load_k = Counter()
        for i in range(n):
            load_k.update(paths[(i, (i + k) % n)])
        shift_max = max(shift_max, max(load_k.values(), default=0))
    total = sum(a2a.values())
    return {
        "hosts": n,
        "links": cables,
        "shift_max": shift_max,
        "a2a_max": max(a2a.values(), default=0),
        "a2a_mean": total / len(a2a) if a2a else 0.0,
        "a2a_ideal": total / cables if cables else 0.0,
        "hops": dict(sorted(hops.items())),
        "unrouted": unrouted,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    q = quality(args.dir)
    if args.json:
        json.dump(q, sys.stdout)
        print()
        return
    print(f"{q['hosts']} hosts, {q['links']} directed switch cables: shift "
          f"at most {q['shift_max']}, all-to-all at most {q['a2a_max']} "
          f"(mean {q['a2a_mean']:.1f}, ideal {q['a2a_ideal']:.1f}), "
          f"{q['unrouted']} pairs unrouted; hops {q['hops']}")


if __name__ == "__main__":
    main()
