#!/usr/bin/env python3
"""Print the include graph of src/ by folder and by file: levels, circles, upward arrows.

Layers, lowest first (an include may point to its own layer or a lower one):
    core < fetch, machine, manifest < store, selftest < archive, system < doctor, install
    < mirror, oci < cli
A private header (<stem>_int.h) is included only from its own folder; a
closed component's (CLOSED) only from the files named there, in src/ and
tests/ alike: everything else goes through its public header.
Usage: tools/incgraph.py [--check]   (--check: exit 1 on a circle, an upward
arrow, or a private or closed header included from outside)
"""
import os, re, sys

LAYER = {"core": 0, "fetch": 1, "machine": 1, "manifest": 1, "store": 2, "selftest": 2, "archive": 3, "system": 3, "doctor": 4, "install": 4, "mirror": 5, "oci": 5, "cli": 6}
# closed components: header -> the only files that may include it
CLOSED = {
    # the block decoder (issue 40 item 5): everything else includes archive/xzmt.h
    "archive/xzmt_int.h": {"archive/xzmt.c", "archive/xzblk.c", "archive/xzparse.c", "archive/xzsink.c"},
}
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
tests = os.path.join(root, "..", "tests")
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

# file graph: module = folder/stem (foo.c and foo.h are one module)
def module(path):
    """folder/stem; a private header <stem>_int.h belongs to module <stem>
    (the internal interface between the files of one module)."""
    m = os.path.splitext(path)[0]
    return m[:-4] if m.endswith("_int") and os.path.exists(os.path.join(root, m[:-4] + ".c")) else m

def sources():
    """(folder, file name, text) of every .c/.h under src/, in order"""
    for d in sorted(os.listdir(root)):
        p = os.path.join(root, d)
        if os.path.isdir(p):
            for f in sorted(os.listdir(p)):
                if f.endswith((".c", ".h")):
                    yield d, f, open(os.path.join(p, f), errors="replace").read()

edges, folders = {}, {}
for d, f, text in sources():
    mod = module(d + "/" + f)
    folders[mod] = d
    deps = edges.setdefault(mod, set())
    for h in inc.findall(text):
        target = h if "/" in h else d + "/" + h
        tmod = module(target)
        if tmod != mod:
            deps.add(tmod)

edges = {m: {t for t in ds if t in edges} for m, ds in edges.items()}

# private and closed headers included from outside: (including file, header)
outside = []
for d, f, text in sources():
    for h in inc.findall(text):
        target = h if "/" in h else d + "/" + h
        if target.endswith("_int.h") and target.split("/")[0] != d:
            outside.append((d + "/" + f, target))
        elif target in CLOSED and d + "/" + f not in CLOSED[target] and target != d + "/" + f:
            outside.append((d + "/" + f, target))
for dirpath, _, files in os.walk(tests):
    for f in sorted(files):
        if f.endswith((".c", ".h")):
            path = os.path.join(dirpath, f)
            for h in inc.findall(open(path, errors="replace").read()):
                if h in CLOSED:   # tests include src/ headers by their folder (-iquote src)
                    outside.append((os.path.relpath(path, os.path.join(root, "..")), h))

# strongly connected components (Tarjan)
index, low, stack, on, sccs, n = {}, {}, [], set(), [], [0]
def strong(v):
    index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
    for w in edges[v]:
        if w not in index:
            strong(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v:
                break
        sccs.append(comp)
sys.setrecursionlimit(10000)
for v in edges:
    if v not in index:
        strong(v)
circles = [sorted(c) for c in sccs if len(c) > 1]
comp_of = {m: i for i, c in enumerate(sccs) for m in c}

# levels over the condensed graph: a leaf is level 1
level = {}
def lev(ci):
    if ci not in level:
        level[ci] = 0
        deps = {comp_of[w] for m in sccs[ci] for w in edges[m]} - {ci}
        level[ci] = 1 + max((lev(d) for d in deps), default=0)
    return level[ci]
levels = max(lev(i) for i in range(len(sccs)))

upward = sorted((m, t) for m, ds in edges.items() for t in ds
                if LAYER.get(folders[t], 9) > LAYER.get(folders[m], 9))

lines = {}
for d in set(folders.values()):
    for f in os.listdir(os.path.join(root, d)):
        if f.endswith((".c", ".h")):
            lines[d] = lines.get(d, 0) + sum(1 for _ in open(os.path.join(root, d, f), errors="replace"))
# the same by folder: folder levels (a folder's own includes do not count)
fedges = {}
for m, ds in edges.items():
    fedges.setdefault(folders[m], set()).update(folders[t] for t in ds if folders[t] != folders[m])
flevel = {}
def flev(f, seen=()):
    if f in seen:
        return 0  # a circle between folders: counted as an upward arrow above
    if f not in flevel:
        flevel[f] = 1 + max((flev(t, seen + (f,)) for t in fedges.get(f, ())), default=0)
    return flevel[f]
flevels = max(flev(f) for f in fedges)

print("modules %d  levels %d  folder levels %d  circles %d  upward arrows %d  closed %d  from outside %d"
      % (len(edges), levels, flevels, len(circles), len(upward), len(CLOSED), len(outside)))
for d in sorted(lines, key=lambda x: (LAYER.get(x, 9), x)):
    print("  %-9s layer %d  %6d lines  includes %s" % (d, LAYER.get(d, 9), lines[d],
                                                       " ".join(sorted(fedges.get(d, ()))) or "-"))
# one longest chain of includes (what the level count measures)
top = max(range(len(sccs)), key=lev)
chain = [top]
while level[chain[-1]] > 1:
    deps = {comp_of[w] for m in sccs[chain[-1]] for w in edges[m]} - {chain[-1]}
    chain.append(next(d for d in sorted(deps, key=lambda d: min(sccs[d])) if level[d] == level[chain[-1]] - 1))
print("longest chain: " + " -> ".join("/".join(sorted(sccs[c])) for c in chain))
for c in circles:
    print("circle: " + " <-> ".join(c))
for m, t in upward:
    print("upward: %s -> %s" % (m, t))
for f, h in outside:
    print("outside: %s includes %s" % (f, h))
if "--check" in sys.argv and (circles or upward or outside):
    sys.exit(1)
