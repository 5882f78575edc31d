#!/usr/bin/env python3
"""Per-thread CPU of a command's process tree, every 0.1 s (issue 25).

  THR_OUT=FILE python3 bench/lrthreads.py CMD...
  LR_WRAP="python3 bench/lrthreads.py" THR_OUT=FILE bench/linerate.sh

One line per sample: seconds since the start, then for each thread that ran
or was runnable: pid/tid:name:state:share of the 0.1 s it ran (1.0 = a whole
core).  Shows which thread waits: e.g. two liblzma workers busy, then one
(docs/PERFORMANCE.md).  At the end, "# PID: FILES" names the archives
each process had open (which unpacker is which).  Exits with the command's
status.
"""
import os, sys, time, subprocess
cmd = sys.argv[1:]
out = open(os.environ.get("THR_OUT", "/dev/stderr"), "w")
p = subprocess.Popen(cmd)
t0 = time.time(); prev = {}
hz = os.sysconf('SC_CLK_TCK')
files = {}   # pid -> the archives it has open (an unpacker: which one it is)
def archives(pid):
    if pid in files and files[pid]: return
    names = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try: t = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError: continue
            if ".tar." in t or t.endswith(".part"): names.add(os.path.basename(t))
    except OSError: pass
    if names or pid not in files: files[pid] = sorted(names)
def kids(root):
    out = [root]
    try:
        for t in os.listdir(f"/proc/{root}/task"):
            try: out += [int(c) for c in open(f"/proc/{root}/task/{t}/children").read().split()]
            except OSError: pass
    except OSError: pass
    res = []
    for k in out:
        res += [k] if k == root else kids(k)
    return res
while p.poll() is None:
    time.sleep(0.1)
    line = []
    for pid in kids(p.pid):
        archives(pid)
        try: tasks = os.listdir(f"/proc/{pid}/task")
        except OSError: continue
        for t in tasks:
            try:
                st = open(f"/proc/{pid}/task/{t}/stat").read()
                name = st[st.index('(')+1:st.rindex(')')]
                f = st[st.rindex(')')+2:].split()
                cpu = int(f[11]) + int(f[12]); state = f[0]
            except (OSError, ValueError): continue
            key = (pid, int(t))
            d = cpu - prev.get(key, 0); prev[key] = cpu
            if d or state == 'R': line.append(f"{pid}/{t}:{name[:15]}:{state}:{d*100//hz/10:.1f}")
    print(f"{time.time()-t0:5.2f} " + " ".join(line), file=out, flush=True)
for pid, names in sorted(files.items()):
    if names: print(f"# {pid}: {' '.join(names)[:200]}", file=out)
sys.exit(p.returncode)
