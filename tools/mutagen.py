#!/usr/bin/env python3
"""Mutant generator for tools/mutate.sh --generate (python3 stdlib only).

  mutagen.py gen --out DIR --seed N --sample K|all [--equiv FILE] [--map MAP] FILE...
      Apply the operators below mechanically to each C FILE; keep K mutants
      per file (random.Random(f"{seed}:{file}"): the same sample every run),
      leave out those tools/mutants-equivalent.txt lists, and write one
      DIR/NAME.mut per mutant in tests/mutants/ format.  With --map (a
      coverage map, below) each mutant gets the tests that executed its line
      as test:/unit:/filter:; a mutant on a line no test executed gets
      "covered: no" (mutate.sh reports it "not covered": a survivor).
  mutagen.py covmap --tree S --build B --table T --cache JSON FILE...
      The coverage map: build S/B with --coverage (the caller did), run each
      candidate test of T for FILE once, every test in its own gcov prefix
      (a wrapper around B/bin/cudaenv picks the prefix from the BATS_TEST_NAME
      bats exports), and record source line -> tests that executed it.  Cached
      in JSON per file, valid while the file and its tests are unchanged.
  mutagen.py units --table T FILE...     the cmocka binaries T names for the FILEs
  mutagen.py list FILE...                every mutant of the FILEs, one a line
  mutagen.py report --dir DIR --results TSV
      The kill rate per file and the survivors.

Operators (the names in the ids and tools/mutants-equivalent.txt):
  cmp-flip   == <-> !=
  bound      < <-> <=, > <-> >= (off-by-one on a comparison), "+ 1"/"- 1" dropped
  negate     if (C) -> if (!(C))
  drop-call  a call whose result is checked answers 0 (success) without running
  drop-stmt  a call statement (fsync(fd); dl_invalidate(d); ...) removed
  drop-flag  O_NOFOLLOW, O_EXCL, AT_SYMLINK_NOFOLLOW removed from a flag set
  swap       two adjacent statements that write durably (rename, link, fsync,
             write, unlink, ftruncate, ...) in the other order
A mutant's id: FILE:OP:LINEHASH:K (LINEHASH: sha1 of the stripped line, K: the
how-many-th of that op on such a line) - stable while the line's text is.
"""
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time

KEYWORDS = {"if", "while", "for", "switch", "return", "sizeof", "else", "do", "case", "defined",
            "__attribute__", "__atomic_load_n", "__atomic_add_fetch", "__atomic_store_n"}
NODROP = re.compile(r"^(free|\w+_free|cJSON_Delete|ce_emit|ce_progress|fprintf|printf|va_start|va_end|"
                    r"assert|memset|ce_quiet_begin|ce_quiet_end)$")
DURABLE = re.compile(r"\b(fsync|fdatasync|rename|renameat2?|link|linkat|symlink|symlinkat|unlink|unlinkat|"
                     r"ftruncate|pwrite|write|mkdir|mkdirat|fchmod|fchown|ce_\w*(sync|rename|exchange|commit|"
                     r"write|link|unlink)\w*)\s*\(")
FLAGS = ("O_NOFOLLOW", "O_EXCL", "AT_SYMLINK_NOFOLLOW")


def mask(line):
    """The line with string/char literal contents and comments blanked (same length)."""
    out, i, n = list(line), 0, len(line)
    while i < n:
        c = line[i]
        if c in "\"'":
            q, j = c, i + 1
            while j < n and line[j] != q:
                j += 2 if line[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                out[k] = "_"
            i = j + 1
        elif line.startswith("//", i):
            for k in range(i, n):
                out[k] = " "
            break
        elif line.startswith("/*", i):
            j = line.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                out[k] = " "
            i = j
        else:
            i += 1
    return "".join(out)


def match_paren(m, i):
    """Index of the ')' closing the '(' at m[i], or -1."""
    depth = 0
    for j in range(i, len(m)):
        if m[j] == "(":
            depth += 1
        elif m[j] == ")":
            depth -= 1
            if depth == 0:
                return j
    return -1


def code_lines(text):
    """Per line: True when it is code (not inside a block comment, not a preprocessor line)."""
    res, in_comment = [], False
    for line in text.split("\n"):
        s = line.strip()
        if in_comment:
            res.append(False)
            if "*/" in s:
                in_comment = False
            continue
        if s.startswith("/*") and "*/" not in s:
            in_comment = True
            res.append(False)
            continue
        res.append(bool(s) and not s.startswith(("#", "//", "*", "/*")))
    return res


def line_mutants(line, m):
    """(op, new_line) for one line of code; m is its mask."""
    out = []
    for mo in re.finditer(r"(?<![<>=!&|+\-*/%^-])(==|!=|<=|>=|<|>)(?![<>=])", m):
        tok, a, b = mo.group(1), mo.start(1), mo.end(1)
        if tok in "<>" and (m[a - 1:a] == "-" or m[b:b + 1] == ">"):
            continue
        new = {"==": "!=", "!=": "==", "<": "<=", "<=": "<", ">": ">=", ">=": ">"}[tok]
        out.append(("cmp-flip" if tok in ("==", "!=") else "bound", line[:a] + new + line[b:]))
    for mo in re.finditer(r" ([+-]) 1\b(?![.\w])", m):
        out.append(("bound", line[:mo.start()] + line[mo.end():]))
    for mo in re.finditer(r"\b(if|while) \(", m):
        o = mo.end() - 1
        c = match_paren(m, o)
        if c > o + 1:
            out.append(("negate", line[:o + 1] + "!(" + line[o + 1:c] + ")" + line[c:]))
            cond = m[o + 1:c]
            for co in re.finditer(r"(!\s*)?\b([A-Za-z_]\w*)\s*\(", cond):
                name = co.group(2)
                if name in KEYWORDS or name.isupper():
                    continue
                s = o + 1 + co.start(2)
                e = match_paren(m, o + 1 + co.end() - 1)
                if e < 0 or e > c:
                    continue
                out.append(("drop-call", line[:s] + "0" + line[e + 1:]))
    st = re.match(r"^(\s*)(?:\(void\)\s*)?([A-Za-z_]\w*)\s*\(", m)
    if st and m.rstrip().endswith(");") and st.group(2) not in KEYWORDS and not NODROP.match(st.group(2)):
        e = match_paren(m, st.end() - 1)
        if e == len(m.rstrip()) - 2:
            out.append(("drop-stmt", st.group(1) + "(void)0;"))
    for f in FLAGS:
        for pat in (r"\s*\|\s*" + f + r"\b", r"\b" + f + r"\s*\|\s*"):
            mo = re.search(pat, m)
            if mo:
                out.append(("drop-flag", line[:mo.start()] + line[mo.end():]))
                break
    return out


def statement(m):
    """A one-line statement: balanced parentheses, ends with ';'."""
    s = m.strip()
    return s.endswith(";") and s.count("(") == s.count(")") and not s.startswith(("}", "else", "case"))


def enumerate_mutants(path, text):
    lines = text.split("\n")
    is_code = code_lines(text)
    masks = [mask(l) if c else "" for l, c in zip(lines, is_code)]
    muts, seen = [], {}

    def add(op, i, j, new_lines):
        key_text = "\n".join(l.strip() for l in lines[i:j])
        h = hashlib.sha1(key_text.encode()).hexdigest()[:8]
        k = seen.get((op, h), 0)
        seen[(op, h)] = k + 1
        muts.append({"id": f"{path}:{op}:{h}:{k}", "file": path, "op": op, "line": i + 1,
                     "lines": list(range(i + 1, j + 1)), "orig": lines[i:j], "new": new_lines})

    for i, (line, c) in enumerate(zip(lines, is_code)):
        if not c:
            continue
        for op, new in line_mutants(line, masks[i]):
            if new != line:
                add(op, i, i + 1, [new])
    for i in range(len(lines) - 1):
        a, b = masks[i], masks[i + 1]
        if not (is_code[i] and is_code[i + 1] and statement(a) and statement(b)):
            continue
        ind = lambda s: len(s) - len(s.lstrip())
        if ind(lines[i]) == ind(lines[i + 1]) and DURABLE.search(a) and DURABLE.search(b):
            add("swap", i, i + 2, [lines[i + 1], lines[i]])
    return muts


def unique_block(lines, i, j, text):
    """Grow lines[i:j] by context until it occurs exactly once in text: (a, b)."""
    a, b = i, j
    while True:
        if text.count("\n".join(lines[a:b])) == 1:
            return a, b
        if a == 0 and b == len(lines):
            return None
        if a > 0:
            a -= 1
        if b < len(lines):
            b += 1


def ere_escape(desc):
    """A bats -f regex matching exactly the test whose source description is desc."""
    desc = re.sub(r'\\(["$`\\])', r"\1", desc)
    out = []
    for ch in desc:
        if ch.isalnum() or ch in " _-,:;/=@%'<>!":
            out.append(ch)
        elif ch in ".[](){}*+?|^":
            out.append("\\" + ch)
        else:
            out.append(".")
    return "".join(out)


def load_equiv(path):
    eq = {}
    if path and os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line and not line.startswith("#"):
                mid, _, why = line.partition(" ")
                eq[mid] = why.strip()
    return eq


def cmd_gen(args):
    out, seed, sample, equiv, cmap, files = args["out"], args["seed"], args["sample"], args["equiv"], \
        args["map"], args["files"]
    os.makedirs(out, exist_ok=True)
    eq = load_equiv(equiv)
    cov = json.load(open(cmap)) if cmap and os.path.exists(cmap) else None
    index = []
    for path in files:
        text = open(path).read()
        lines = text.split("\n")
        muts = enumerate_mutants(path, text)
        n_all = len(muts)
        n_eq = sum(1 for m in muts if m["id"] in eq)
        # sampled from all of them, so that listing an equivalent one does not change the sample
        if sample != "all" and len(muts) > int(sample):
            rnd = random.Random(f"{seed}:{path}")
            muts = sorted(rnd.sample(muts, int(sample)), key=lambda m: m["line"])
        print(f"mutagen: {path}: {n_all} mutants ({n_eq} listed equivalent), {len(muts)} taken, "
              f"{sum(1 for m in muts if m['id'] in eq)} of them equivalent", file=sys.stderr)
        only = os.environ.get("MUTATE_ONLY", "").split()
        if only:
            muts = [m for m in muts if m["id"] in only]
        fcov = cov["files"].get(path) if cov else None
        for m in muts:
            i, j = m["lines"][0] - 1, m["lines"][-1]
            blk = unique_block(lines, i, j, text)
            if not blk:
                continue
            a, b = blk
            new = lines[a:i] + m["new"] + lines[j:b]
            name = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{os.path.basename(path)}-{m['op']}-L{m['line']}-{m['id'][-10:]}")
            tests = set()
            if fcov is not None:
                for L in m["lines"]:
                    tests.update(fcov["lines"].get(str(L), []))
            bats, units, filt = {}, set(), []
            for t in sorted(tests):
                kind, _, rest = t.partition(":")
                if kind == "unit":
                    units.add(rest)
                else:
                    f, _, desc = rest.partition(":")
                    bats.setdefault(f, []).append(desc)
            with open(os.path.join(out, name + ".mut"), "w") as fh:
                fh.write(f"# generated: {m['id']} ({m['op']}, line {m['line']})\n")
                fh.write(f"id: {m['id']}\nfile: {path}\nop: {m['op']}\nline: {m['line']}\n")
                if m["id"] in eq:
                    fh.write(f"equivalent: {eq[m['id']]}\n")
                if fcov is None:
                    fh.write("covered: unknown\n")
                elif not tests:
                    fh.write("covered: no\n")
                for f in sorted(bats):
                    fh.write(f"test: {f}\n")
                for u in sorted(units):
                    fh.write(f"unit: {u}\n")
                descs = sorted({d for ds in bats.values() for d in ds})
                if descs:
                    fh.write("filter: ^(" + "|".join(ere_escape(d) for d in descs) + ")$\n")
                fh.write("--- search\n" + "\n".join(lines[a:b]) + "\n--- replace\n" + "\n".join(new) + "\n--- end\n")
            index.append({"name": name, "id": m["id"], "file": path, "op": m["op"], "line": m["line"],
                          "orig": m["orig"][0].strip(), "new": m["new"][0].strip(), "tests": len(tests)})
    json.dump(index, open(os.path.join(out, "index.json"), "w"), indent=1)


# ---- coverage map ----

def bats_tests(path):
    """The @test descriptions of a bats file, as written in the source."""
    res = []
    for line in open(path):
        mo = re.match(r'\s*@test\s+"((?:[^"\\]|\\.)*)"', line)
        if mo:
            res.append(mo.group(1))
    return res


def bats_encode(desc):
    """BATS_TEST_NAME of a description (bats-core 1.x): test_ + name, ' ' -> '_', others -HH."""
    out = ["test_"]
    for ch in desc:
        if ch.isascii() and ch.isalnum():
            out.append(ch)
        elif ch == " ":
            out.append("_")
        else:
            out.append("".join(f"-{b:02x}" for b in ch.encode()))
    return "".join(out)


def sha_file(p):
    return hashlib.sha1(open(p, "rb").read()).hexdigest() if os.path.exists(p) else "-"


def read_table(path):
    """FILE-GLOB: TEST... lines -> list of (regex, [tests])."""
    rows = []
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        pat, _, tests = line.partition(":")
        rx = re.compile("^" + re.escape(pat.strip()).replace(r"\*", "[^/]*") + "$")
        rows.append((rx, tests.split()))
    return rows


def tests_for(table, f):
    res = []
    for rx, tests in table:
        if rx.match(f):
            res += [t for t in tests if t not in res]
    return res


def gcov_lines(tree, build, prefix_dir, src):
    """Executed line numbers of src in the run whose gcov prefix is prefix_dir."""
    obj = os.path.join(tree, build, "obj", src[:-2])
    gcda = prefix_dir + obj + ".gcda"
    if not os.path.exists(gcda):
        return set()
    d = os.path.dirname(gcda)
    gcno = obj + ".gcno"
    link = os.path.join(d, os.path.basename(gcno))
    if not os.path.exists(link):
        os.symlink(gcno, link)
    r = subprocess.run(["gcov", "-t", "-j", "-o", d, src], cwd=tree, capture_output=True, text=True)
    got = set()
    for chunk in r.stdout.split("\n"):
        chunk = chunk.strip()
        if not chunk.startswith("{"):
            continue
        try:
            doc = json.loads(chunk)
        except ValueError:
            continue
        for f in doc.get("files", []):
            if f.get("file", "").endswith(src):
                got.update(l["line_number"] for l in f.get("lines", []) if l.get("count", 0) > 0)
    return got


def cmd_covmap(args):
    tree, build, table, cache, files = args["tree"], args["build"], read_table(args["table"]), \
        args["cache"], args["files"]
    cov = json.load(open(cache)) if os.path.exists(cache) else {"files": {}, "tests": {}}
    todo = []
    for f in files:
        tests = tests_for(table, f)
        ent = cov["files"].get(f)
        shas = {t: sha_file(os.path.join(tree, t if not t.startswith("test_") else f"tests/unit/{t}.c"))
                for t in tests}
        if ent and ent.get("sha") == sha_file(os.path.join(tree, f)) and ent.get("test_shas") == shas \
                and ent.get("tests") == tests:
            continue
        todo.append((f, tests, shas))
    if not todo:
        print("mutagen: coverage map from the cache", file=sys.stderr)
        return 0
    if args.get("fresh-only"):
        return 3
    runs = sorted({t for _, tests, _ in todo for t in tests})
    out = os.path.join(tree, ".cov")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    # the wrapper: every test's processes write their .gcda under .cov/<bats file>/<test name>/
    binp = os.path.join(tree, build, "bin")
    if not os.path.exists(os.path.join(binp, "cudaenv.real")):
        os.rename(os.path.join(binp, "cudaenv"), os.path.join(binp, "cudaenv.real"))
    with open(os.path.join(binp, "cudaenv"), "w") as w:
        # another user (trust.bats runs some as one) cannot write there: its counts go to a
        # directory of its own and are lost, and libgcov's complaints do not reach the test's stderr
        w.write('#!/bin/sh\nGCOV_PREFIX="%s/${BATS_TEST_FILENAME##*/}/${BATS_TEST_NAME:-none}"\n'
                '[ -w "%s" ] || GCOV_PREFIX=/tmp/cudaenv-cov-other\n'
                'GCOV_ERROR_FILE=/dev/null\nexport GCOV_PREFIX GCOV_ERROR_FILE\n'
                'exec "${0%%/*}/cudaenv.real" "$@"\n' % (out, out))
    os.chmod(os.path.join(binp, "cudaenv"), 0o755)
    env = dict(os.environ, CUDAENV_TEST_BUILD=os.path.join(tree, build))
    results = {}
    for t in runs:
        t0 = time.time()
        if t.startswith("test_"):
            e = dict(env, GCOV_PREFIX=os.path.join(out, "unit", t))
            r = subprocess.run([os.path.join(tree, build, "tests", t)], cwd=tree, env=e, capture_output=True,
                               text=True, timeout=int(args.get("timeout", 1800)))
            results[t] = {"secs": round(time.time() - t0, 1), "failed": [] if r.returncode == 0 else ["*"]}
        else:
            r = subprocess.run(["bats", t], cwd=tree, env=env, capture_output=True, text=True,
                               timeout=int(args.get("timeout", 1800)))
            failed = [mo.group(1) for mo in re.finditer(r"^not ok \d+ (.*?)(?: # .*)?$", r.stdout, re.M)]
            results[t] = {"secs": round(time.time() - t0, 1), "failed": failed}
        print(f"mutagen: coverage of {t}: {results[t]['secs']} s, {len(results[t]['failed'])} failed",
              file=sys.stderr)
    for f, tests, shas in todo:
        lines = {}
        for t in tests:
            if t not in results:
                continue
            if t.startswith("test_"):
                if results[t]["failed"]:
                    continue
                for L in gcov_lines(tree, build, os.path.join(out, "unit", t), f):
                    lines.setdefault(str(L), []).append("unit:" + t)
                continue
            failed = set(results[t]["failed"])
            for desc in bats_tests(os.path.join(tree, t)):
                shown = re.sub(r'\\(["$`\\])', r"\1", desc)
                if shown in failed:
                    continue
                pdir = os.path.join(out, os.path.basename(t), bats_encode(desc))
                for L in gcov_lines(tree, build, pdir, f):
                    lines.setdefault(str(L), []).append(f"bats:{t}:{desc}")
        cov["files"][f] = {"sha": sha_file(os.path.join(tree, f)), "tests": tests, "test_shas": shas,
                           "lines": lines, "runs": {t: results.get(t) for t in tests}}
        print(f"mutagen: {f}: {len(lines)} lines executed by {len(tests)} test files", file=sys.stderr)
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    json.dump(cov, open(cache, "w"))
    return 0


def cmd_report(args):
    index = {m["name"]: m for m in json.load(open(os.path.join(args["dir"], "index.json")))}
    res = {}
    for line in open(args["results"]):
        p = line.rstrip("\n").split("\t")
        if len(p) >= 3:
            res[p[0]] = (p[1], p[2])
    per = {}
    surv, eqs = [], []
    for name, m in index.items():
        r = res.get(name, ("not run", "0"))[0]
        s = per.setdefault(m["file"], {"n": 0, "killed": 0, "survived": 0, "uncovered": 0, "other": 0,
                                       "equivalent": 0})
        s["n"] += 1
        if r == "equivalent":
            s["equivalent"] += 1
            eqs.append(m)
        elif r.startswith("killed"):
            s["killed"] += 1
        elif r == "SURVIVED":
            s["survived"] += 1
            surv.append((m, "survived"))
        elif r == "not covered":
            s["uncovered"] += 1
            surv.append((m, "not covered"))
        else:
            s["other"] += 1
            surv.append((m, r))
    print("\n| file | mutants | equivalent | killed | survived | not covered | other | kill rate |")
    print("|---|---|---|---|---|---|---|---|")
    for f in sorted(per):
        s = per[f]
        judged = s["n"] - s["other"] - s["equivalent"]
        rate = f"{100.0 * s['killed'] / judged:.0f} %" if judged else "-"
        print(f"| {f} | {s['n']} | {s['equivalent']} | {s['killed']} | {s['survived']} | {s['uncovered']} | "
              f"{s['other']} | {rate} |")
    print("\n(kill rate: killed / (mutants - equivalent - other); other: did not build, or not run in the budget)")
    if eqs:
        print("\nequivalent (tools/mutants-equivalent.txt):")
        for m in eqs:
            print(f"  {m['id']}  line {m['line']}: {m['orig']}  ->  {m['new']}")
    if surv:
        print("\nsurvivors (add a test, or list the id in tools/mutants-equivalent.txt with the reason):")
        for m, why in surv:
            print(f"  {m['id']}  [{why}] line {m['line']}: {m['orig']}  ->  {m['new']}")
    bad = any(why != "equivalent" for _, why in surv)
    return 1 if bad else 0


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    cmd, rest = sys.argv[1], sys.argv[2:]
    args, files = {}, []
    i = 0
    while i < len(rest):
        a = rest[i]
        if a.startswith("--"):
            args[a[2:]] = rest[i + 1]
            i += 2
        else:
            files.append(a)
            i += 1
    args["files"] = files
    if cmd == "gen":
        args.setdefault("seed", "1")
        args.setdefault("sample", "10")
        args.setdefault("equiv", None)
        args.setdefault("map", None)
        cmd_gen(args)
        return 0
    if cmd == "covmap":
        return cmd_covmap(args)
    if cmd == "units":
        table = read_table(args["table"])
        print(" ".join(sorted({t for f in files for t in tests_for(table, f) if t.startswith("test_")})))
        return 0
    if cmd == "report":
        return cmd_report(args)
    if cmd == "list":
        for f in files:
            for m in enumerate_mutants(f, open(f).read()):
                print(f"{m['id']}\tL{m['line']}\t{m['orig'][0].strip()}\t->\t{m['new'][0].strip()}")
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
