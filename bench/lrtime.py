#!/usr/bin/env python3
"""Run one command and measure it (bench/linerate.sh).

    lrtime.py RESULTS LABEL -- COMMAND...

Appends one line to RESULTS: LABEL wall_s cpu_pct maxrss_mib tree_mib threads
  wall_s      wall-clock seconds
  cpu_pct     user + system time of the command and all it waited for,
              over wall (100 = one core busy)
  maxrss_mib  the largest single process's peak RSS (getrusage children)
  tree_mib    the peak, over samples every 0.1 s, of the RSS summed over the
              whole process tree
  threads     the peak, over the same samples, of the threads in that tree
  treePSS     as tree_mib with proportional set sizes (pages shared by the
              forked unpackers counted once), the last column
LR_TRACE=FILE: one line per sample: seconds, threads, CPU seconds of the
tree so far, bytes under LR_WATCH (the download cache: the download's
progress).  Exits with the command's status.
"""
import os
import resource
import subprocess
import sys
import time


def tree(root):
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                s = f.read()
            ppid = int(s[s.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


TICK = os.sysconf("SC_CLK_TCK")


def sample(root):
    rss = thr = pss = 0
    cpu = 0.0
    for p in tree(root):
        try:
            with open("/proc/%d/status" % p) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Threads:"):
                        thr += int(line.split()[1])
            with open("/proc/%d/smaps_rollup" % p) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        pss += int(line.split()[1])
            with open("/proc/%d/stat" % p) as f:
                st = f.read()
            st = st[st.rindex(")") + 2:].split()
            cpu += (int(st[11]) + int(st[12])) / TICK
        except (OSError, ValueError, IndexError):
            pass
    return rss, thr, pss, cpu


def watched(d):
    n = 0
    try:
        for e in os.scandir(d):
            try:
                n += e.stat(follow_symlinks=False).st_size
            except OSError:
                pass
    except OSError:
        pass
    return n


def main():
    results, label = sys.argv[1], sys.argv[2]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.Popen(cmd)
    peak_rss = peak_thr = peak_pss = 0
    trace = open(os.environ["LR_TRACE"], "w") if os.environ.get("LR_TRACE") else None
    while p.poll() is None:
        rss, thr, pss, cpu = sample(p.pid)
        peak_rss, peak_thr, peak_pss = max(peak_rss, rss), max(peak_thr, thr), max(peak_pss, pss)
        if trace:
            trace.write("%.2f %d %.1f %d\n" % (time.monotonic() - t0, thr, cpu, watched(os.environ.get("LR_WATCH", ""))))
        time.sleep(0.1)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(results, "a") as f:
        f.write("%s %.2f %.0f %.0f %.0f %d %.0f\n" % (label, wall, 100 * cpu / wall if wall else 0,
                                                    after.ru_maxrss / 1024, peak_rss / 1024, peak_thr, peak_pss / 1024))
    sys.exit(p.returncode)


if __name__ == "__main__":
    main()
