#!/usr/bin/env python3
"""Summary of a bench/lrthreads.py trace: per sample, the threads that ran,
the cores they used and the busiest threads by name; then the CPU seconds of
each thread.  python3 bench/lrthrsum.py TRACE [FROM_SECONDS]"""
import sys, collections
tot = collections.Counter()
since = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
for l in open(sys.argv[1]):
    if l.startswith('#'):
        continue
    f = l.split(); t = float(f[0]); s = 0; n = 0; who = collections.Counter()
    for x in f[1:]:
        idn, v = x.rsplit(':', 1)
        pid_tid, name, _state = idn.rsplit(':', 2) if idn.count(':') >= 2 else (idn, '?', '?')
        v = float(v); s += v; n += v > 0.05
        tot[f"{pid_tid}:{name}"] += v * 0.1
        if v > 0.05: who[f"{pid_tid.split('/')[0]}:{name}"] += v
    if t >= since:
        print(f"{t:5.2f} {n:3d} {s:5.1f}  " + " ".join(f"{k}={v:.1f}" for k, v in who.most_common(6)))
print("threads by CPU seconds:")
for k, v in tot.most_common(30): print(f"  {v:6.2f} {k}")
