#!/usr/bin/env python3
"""Find bats assertions that can never fail a test (docs/TESTING.md: "Inert assertions").

bats runs each test (and setup, teardown, and the helpers they call) under
`set -e`, and bash's errexit ignores two shapes, so a check written in them
passes whatever happens unless it is the function's last command:
  - a negated pipeline, `! cmd` (errexit never fires on a `!`), unless a
    later `|| ...` in its list catches it (`! cmd || false`);
  - the left side of `&&`: in `[ a ] && [ b ]` a false `[ a ]` just ends the
    list; flagged where every part of the list is a check ([ ], [[ ]],
    test, (( )), grep, cmp, diff or a negation), not `[ -e f ] && rm f`.
`[[ ... ]]` and `(( ... ))` alone are effective on bash >= 4.1 and not flagged.
Fix: append `|| false` to the list (or `run ! cmd`).

Usage: tools/lint-bats.py [--self-test] [--fix] [FILE...]
  no FILE: tests/scenario/*.bats tests/journeys/*.bats tests/lib/*.bash
  prints FILE:LINE: what, for each one; exit 1 if any
  --self-test: check the lint itself on built-in good and bad snippets
  --fix: append ` || false` to each flagged list in place
"""
import glob, os, re, sys

RESERVED_END = {"then", "fi", "do", "done", "elif", "else", "esac", "}"}
CHECKS = {"[", "[[", "test", "((", "grep", "cmp", "diff"}


class Tok:
    __slots__ = ("kind", "val", "start", "end")

    def __init__(self, kind, val, start, end):
        self.kind, self.val, self.start, self.end = kind, val, start, end


def skip_quoted(s, i):
    """s[i] is ' or ": index after the closing quote."""
    q = s[i]
    i += 1
    while i < len(s):
        c = s[i]
        if q == '"' and c == "\\":
            i += 2
            continue
        if q == '"' and c == "$" and s.startswith("$(", i):
            i = skip_paren(s, i + 1)
            continue
        if q == '"' and c == "`":
            i = skip_backtick(s, i)
            continue
        if c == q:
            return i + 1
        i += 1
    return i


def skip_ansi(s, i):
    """s[i] is the ' of $'...': index after its closing quote (\\' does not close)."""
    i += 1
    while i < len(s) and s[i] != "'":
        i += 2 if s[i] == "\\" else 1
    return i + 1


def skip_backtick(s, i):
    i += 1
    while i < len(s) and s[i] != "`":
        i += 2 if s[i] == "\\" else 1
    return i + 1


def skip_paren(s, i):
    """s[i] is '(': index after its matching ')' (quotes and nesting respected)."""
    depth = 0
    while i < len(s):
        c = s[i]
        if c == "$" and s.startswith("$'", i):
            i = skip_ansi(s, i + 1)
            continue
        if c in "'\"":
            i = skip_quoted(s, i)
            continue
        if c == "\\":
            i += 2
            continue
        if c == "`":
            i = skip_backtick(s, i)
            continue
        if c == "#" and (i == 0 or s[i - 1] in " \t\n"):
            while i < len(s) and s[i] != "\n":
                i += 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def skip_brace(s, i):
    """s[i] is '{' of ${...}: index after the matching '}'."""
    depth = 0
    while i < len(s):
        c = s[i]
        if c in "'\"":
            i = skip_quoted(s, i)
            continue
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


OPS = ["&&", "||", ";;", "|&", "((", "))", ";", "&", "|", "(", ")", "\n"]


def lex(s):
    toks, i, heredocs = [], 0, []
    n = len(s)
    while i < n:
        c = s[i]
        if c in " \t":
            i += 1
            continue
        if c == "\\" and i + 1 < n and s[i + 1] == "\n":
            i += 2
            continue
        if c == "#":
            while i < n and s[i] != "\n":
                i += 1
            continue
        if c == "\n":
            toks.append(Tok("op", "\n", i, i + 1))
            i += 1
            for delim, strip in heredocs:   # heredoc bodies: skipped whole
                while i < n:
                    j = s.find("\n", i)
                    j = n if j < 0 else j
                    line = s[i:j]
                    i = j + 1
                    if (line.lstrip("\t") if strip else line) == delim:
                        break
            heredocs = []
            continue
        if c in "<>":
            j = i
            while j < n and s[j] in "<>&-|":
                j += 1
            op = s[i:j]
            if c == "<" and j < n and s[j] == "(" and op == "<":   # <(...) process substitution
                e = skip_paren(s, j)
                toks.append(Tok("word", s[i:e], i, e))
                i = e
                continue
            if c == ">" and j < n and s[j] == "(" and op == ">":
                e = skip_paren(s, j)
                toks.append(Tok("word", s[i:e], i, e))
                i = e
                continue
            toks.append(Tok("redir", op, i, j))
            i = j
            if op in ("<<", "<<-"):
                while i < n and s[i] in " \t":
                    i += 1
                k = i
                while k < n and s[k] not in " \t\n;&|<>()":
                    k = skip_quoted(s, k) if s[k] in "'\"" else k + 1
                word = s[i:k]
                heredocs.append((re.sub(r"[\"'\\]", "", word), op == "<<-"))
                toks.append(Tok("word", word, i, k))
                i = k
            continue
        op = next((o for o in OPS if s.startswith(o, i)), None)
        if op:
            toks.append(Tok("op", op, i, i + len(op)))
            i += len(op)
            continue
        # a word (fd numbers before a redirection are words: harmless here)
        j = i
        while j < n and s[j] not in " \t\n;&|()<>":
            cj = s[j]
            if cj == "$" and s.startswith("$'", j):
                j = skip_ansi(s, j + 1)
            elif cj in "'\"":
                j = skip_quoted(s, j)
            elif cj == "\\":
                j += 2
            elif cj == "`":
                j = skip_backtick(s, j)
            elif cj == "$" and s.startswith("$(", j):
                j = skip_paren(s, j + 1)
            elif cj == "$" and s.startswith("${", j):
                j = skip_brace(s, j + 1)
            elif cj in "@!*?+" and s.startswith("(", j + 1):   # extglob @(...)
                j = skip_paren(s, j + 1)
            elif cj == "=" and s.startswith("(", j + 1):        # a=(array)
                j = skip_paren(s, j + 1)
            else:
                j += 1
        toks.append(Tok("word", s[i:j], i, j))
        i = j
    toks.append(Tok("eof", "", n, n))
    return toks


class AndOr:
    """One and-or list: its pipelines (negated?, first word) and operators."""

    def __init__(self):
        self.parts, self.ops, self.start, self.end = [], [], None, None


class Parser:
    def __init__(self, toks):
        self.t, self.i = toks, 0
        self.found = []   # (AndOr, in_function, in_condition, is_last_of_function)
        self.functions = 0
        self.tests = 0    # bats tests (@test) read as functions
        self.stray = []   # offsets of tokens no rule took (the lint misread the file)

    def peek(self):
        return self.t[min(self.i, len(self.t) - 1)]

    def at_word(self, *vals):
        k = self.peek()
        return k.kind == "word" and k.val in vals

    def at_op(self, *vals):
        k = self.peek()
        return k.kind == "op" and k.val in vals

    def skip_newlines(self):
        while self.at_op("\n"):
            self.i += 1

    # compound_list: and-or lists until a closing word/op; returns the lists made at this level
    def compound_list(self, fn, cond, stop_words=(), stop_ops=()):
        made = []
        while True:
            while self.at_op("\n", ";", "&"):
                self.i += 1
            k = self.peek()
            if k.kind == "eof" or (k.kind == "word" and k.val in stop_words) or \
               (k.kind == "op" and k.val in stop_ops):
                return made
            before = self.i
            ao = self.and_or(fn, cond)
            made.append(ao)
            if self.i == before:   # no progress: a stray token
                self.stray.append(self.peek().start)
                self.i += 1

    def and_or(self, fn, cond):
        ao = AndOr()
        ao.start = self.peek().start
        entry = [ao, fn, cond, False]
        self.found.append(entry)
        while True:
            neg = False
            while self.at_word("!"):
                neg = True
                self.i += 1
            first = self.pipeline(fn, cond)
            ao.parts.append((neg, first))
            ao.end = self.t[self.i - 1].end if self.i > 0 else ao.start
            if self.at_op("&&", "||"):
                ao.ops.append(self.peek().val)
                self.i += 1
                self.skip_newlines()
                continue
            return entry

    def pipeline(self, fn, cond):
        first = self.command(fn, cond)
        while self.at_op("|", "|&"):
            self.i += 1
            self.skip_newlines()
            self.command(fn, cond)
        return first

    def redirs(self):
        while self.peek().kind == "redir":
            self.i += 1
            if self.peek().kind == "word":
                self.i += 1

    def body_of_function(self):
        """After `name()` or `function name`: the compound body, parsed as a function."""
        self.functions += 1
        self.skip_newlines()
        if self.at_word("{"):
            self.i += 1
            made = self.compound_list(True, False, stop_words=("}",))
            if self.at_word("}"):
                self.i += 1
        elif self.at_op("("):
            self.i += 1
            made = self.compound_list(True, False, stop_ops=(")",))
            if self.at_op(")"):
                self.i += 1
        else:
            self.command(True, False)
            return
        if made:
            made[-1][3] = True   # the function's last list: its status is returned
        self.redirs()

    def command(self, fn, cond):
        k = self.peek()
        if k.kind == "op" and k.val == "((":
            depth = 1
            self.i += 1
            while self.peek().kind != "eof" and depth:
                v = self.peek()
                if v.kind == "op" and v.val == "((":
                    depth += 1
                elif v.kind == "op" and v.val == "))":
                    depth -= 1
                self.i += 1
            self.redirs()
            return "(("
        if k.kind == "op" and k.val == "(":
            self.i += 1
            self.compound_list(fn, cond, stop_ops=(")", "))"))
            if self.at_op(")"):
                self.i += 1
            elif self.at_op("))"):   # "( (a) )" lexed as ))
                self.t[self.i].val = ")"
            self.redirs()
            return "("
        if k.kind != "word":
            return ""
        w = k.val
        if w == "[[":
            self.i += 1
            while self.peek().kind != "eof" and not self.at_word("]]"):
                self.i += 1
            self.i += 1
            self.redirs()
            return "[["
        if w == "{":
            self.i += 1
            self.compound_list(fn, cond, stop_words=("}",))
            if self.at_word("}"):
                self.i += 1
            self.redirs()
            return "{"
        if w in ("if", "while", "until"):
            self.i += 1
            self.compound_list(fn, True, stop_words=("then", "do"))
            while True:
                if self.at_word("then", "do"):
                    self.i += 1
                    self.compound_list(fn, cond, stop_words=("elif", "else", "fi", "done"))
                if self.at_word("elif"):
                    self.i += 1
                    self.compound_list(fn, True, stop_words=("then",))
                    continue
                if self.at_word("else"):
                    self.i += 1
                    self.compound_list(fn, cond, stop_words=("fi",))
                if self.at_word("fi", "done"):
                    self.i += 1
                break
            self.redirs()
            return w
        if w in ("for", "select"):
            self.i += 1
            while self.peek().kind != "eof" and not self.at_word("do"):
                self.i += 1
            self.i += 1
            self.compound_list(fn, cond, stop_words=("done",))
            if self.at_word("done"):
                self.i += 1
            self.redirs()
            return w
        if w == "case":
            self.i += 1
            while self.peek().kind != "eof" and not self.at_word("in"):
                self.i += 1
            self.i += 1
            while True:
                self.skip_newlines()
                if self.at_word("esac") or self.peek().kind == "eof":
                    self.i += 1
                    break
                if self.at_op("("):
                    self.i += 1
                while self.peek().kind != "eof" and not self.at_op(")"):   # the pattern
                    self.i += 1
                self.i += 1
                self.compound_list(fn, cond, stop_words=("esac",), stop_ops=(";;",))
                if self.at_op(";;"):
                    self.i += 1
                while self.at_op(";", "&"):   # ;& ;;&
                    self.i += 1
            self.redirs()
            return "case"
        if w == "function":
            self.i += 1
            if self.peek().kind == "word":
                self.i += 1
            if self.at_op("(") and self.i + 1 < len(self.t) and self.t[self.i + 1].kind == "op" and self.t[self.i + 1].val == ")":
                self.i += 2
            self.body_of_function()
            return "function"
        # name() body
        if re.match(r"^[A-Za-z_][\w:.-]*$", w) and self.i + 2 < len(self.t) and self.t[self.i + 1].kind == "op" and \
           self.t[self.i + 1].val == "(" and self.t[self.i + 2].kind == "op" and self.t[self.i + 2].val == ")":
            self.i += 3
            self.tests += w == "__bt"
            self.body_of_function()
            return "function"
        # a simple command: words and redirections until an operator
        first = None
        while True:
            k = self.peek()
            if k.kind == "word":
                if first is None and not re.match(r"^[A-Za-z_]\w*(\[[^]]*\])?\+?=", k.val):
                    first = k.val
                self.i += 1
            elif k.kind == "redir":
                self.redirs()
            else:
                break
        return first or "="


def bats_to_shell(text):
    """bats' `@test "name" {` heads as function heads `__bt() {` (padded: offsets stay)."""
    def head(m):
        return "__bt() {".ljust(len(m.group(0)))
    return re.sub(r"""^[ \t]*@test[ \t]+("(?:[^"\\]|\\.)*"|'[^']*'|\S+)[ \t]*\{""", head, text, flags=re.M)


TEST_HEAD = re.compile(r"^[ \t]*@test[ \t]", re.M)


def inert(text):
    """[(offset of the list's start, offset of its end, what)] for each inert list."""
    p = Parser(lex(bats_to_shell(text)))
    p.compound_list(False, False)
    out = []
    heads = len(TEST_HEAD.findall(text))
    if p.stray or p.tests != heads:
        at = p.stray[0] if p.stray else len(text)
        out.append((at, None, "the lint cannot read this file (%d of %d tests found): "
                    "fix tools/lint-bats.py or the shell here" % (p.tests, heads)))
    for ao, fn, cond, last in p.found:
        if not fn or cond or last or not ao.parts:
            continue
        why = None
        for k, (neg, _) in enumerate(ao.parts):
            if neg and "||" not in ao.ops[k:]:
                why = "`!` never fails a bats test here (errexit ignores it): append `|| false` or use `run !`"
                break
        if why is None and "&&" in ao.ops and "||" not in ao.ops and \
           all(neg or first in CHECKS for neg, first in ao.parts):
            why = "the left side of `&&` never fails a bats test: append `|| false`"
        if why:
            out.append((ao.start, ao.end, why))
    return out


def line_of(text, off):
    return text.count("\n", 0, off) + 1


def lint_file(path, fix=False):
    text = open(path, encoding="utf-8", errors="replace").read()
    found = inert(text)
    if fix and found:
        for _, end, _ in sorted((f for f in found if f[1] is not None), key=lambda f: -f[1]):
            text = text[:end] + " || false" + text[end:]
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return [(line_of(text, s), why) for s, _, why in found]


BAD = [
    '@test "x" {\n    ! grep -q a f\n    true\n}\n',
    '@test "x" {\n    [ "$status" -eq 2 ] && [[ "$output" == *x* ]]\n    true\n}\n',
    '@test "x" {\n    for f in a b; do\n        ! test -e "$f"\n    done\n}\n',
    'helper() {\n    ! ls x | grep -q .\n    echo done\n}\n',
    '@test "x" {\n    a && ! b\n    c\n}\n',
    '@test "x" {\n    [ -e a ] && [ -e b ] && grep -q x f\n    c\n}\n',
    '@test "x" {\n    ! cmd <<EOF\nbody ! not code\nEOF\n    c\n}\n',
    '@test "x" {\n    ! cmp -s <(tar -xOf "$w" \'*/x\') \\\n        "$f"\n    c\n}\n',
    '@test "x" {\n    x=$(echo "a)" )\n    ! grep -q "$x" f   # a comment ) {\n    c\n}\n',
    '@test "x" {\n    case $a in\n        b) ! grep -q b f ;;\n    esac\n    c\n}\n',
    '@test "x" {\n    ( cd d; ! grep -q b f; c )\n    c\n}\n',
    '@test "x { y" { ! grep -q b f; c; }\n',
    '@test "x" {\n    [[ "$e" == *$\'\\\'a\'* ]]\n    ! grep -q b f\n    c\n}\n',
]
GOOD = [
    '@test "x" {\n    ! grep -q a f || false\n    true\n}\n',
    '@test "x" {\n    run ! grep -q a f\n    true\n}\n',
    '@test "x" {\n    true\n    ! grep -q a f\n}\n',
    '@test "x" {\n    [[ "$output" == *a* && "$output" != *b* ]]\n    true\n}\n',
    '@test "x" {\n    [ -e a ] && rm a\n    true\n}\n',
    '@test "x" {\n    if ! grep -q a f; then false; fi\n    while ! test -e f; do sleep 1; done\n}\n',
    '@test "x" {\n    [ "$a" = 1 ] && [ "$b" = 2 ] || false\n    c\n}\n',
    '@test "x" {\n    ! ls x | grep -q . || { echo bad; return 1; }\n    c\n}\n',
    'no_staging() {\n    ! ls -d x/.staging-* 2>/dev/null | grep -q .\n}\n',
    '! top-level-not-in-a-test\ntrue\n',
    '@test "x" {\n    cat <<EOF\n! not a command\n[ a ] && [ b ]\nEOF\n    c\n}\n',
    '@test "x" {\n    run bash -c \'\n        ! grep a f\n        echo\'\n    c\n}\n',
    '@test "x" {\n    [ $p = during ] && base=$URL/x\n    c\n}\n',
    '@test "x" {\n    f=$(! grep -q a f; echo $?)\n    c\n}\n',
]


def self_test():
    bad = 0
    for s in BAD:
        if len(inert(s)) != 1:
            print("self-test: not flagged once: %r -> %r" % (s, inert(s)))
            bad += 1
    for s in GOOD:
        if inert(s):
            print("self-test: flagged: %r" % s)
            bad += 1
    # --fix makes every bad snippet pass
    for s in BAD:
        fixed = s
        for _, end, _ in sorted(inert(s), key=lambda f: -f[1]):
            fixed = fixed[:end] + " || false" + fixed[end:]
        if inert(fixed):
            print("self-test: still flagged after the fix: %r" % fixed)
            bad += 1
    print("lint-bats self-test: %d good, %d bad snippets, %s" %
          (len(GOOD), len(BAD), "ok" if not bad else "%d wrong" % bad))
    return bad == 0


def main(argv):
    fix = "--fix" in argv
    if "--self-test" in argv:
        return 0 if self_test() else 1
    files = [a for a in argv if not a.startswith("--")]
    if not files:
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
        files = []
        for g in ("tests/scenario/*.bats", "tests/journeys/*.bats", "tests/lib/*.bash"):
            files += sorted(glob.glob(os.path.join(root, g)))
        files = [os.path.relpath(f) for f in files]
    n = 0
    for f in files:
        for line, why in lint_file(f, fix):
            print("%s:%d: %s%s" % (f, line, why, " (fixed)" if fix else ""))
            n += 1
    return 1 if n and not fix else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
