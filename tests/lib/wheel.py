#!/usr/bin/env python3
"""Write a wheel (a zip with a *.dist-info/RECORD) in the shapes real producers
write, for tests/lib/nccl.sh and tests/gpu/components.sh.

wheel.py OUT DIST [--shape S,...] MEMBER... [FAULT...]
  DIST       the dist-info directory ("nvidia_nccl_cu11-2.21.5.dist-info");
             METADATA, WHEEL and RECORD are written under it
  MEMBER     --file NAME=PATH (mode from PATH), --text NAME=TEXT,
             --tree PREFIX=DIR (every file under DIR as PREFIX/relative path),
             --symlink NAME=TARGET (a zip entry marked as a symlink),
             --zeros NAME=N (N zero bytes)
  --shape    streamed: written to a pipe, so every entry has a data
             descriptor (general purpose bit 3) and no sizes or CRC in its
             local header; zip64: zip64 extra fields on every entry; stored:
             no compression (else deflated); record-hashed: RECORD's own line
             carries a hash and a size (else "RECORD,,")
  FAULT      --tamper NAME (a byte of NAME changed after RECORD was written),
             --unlisted NAME (NAME left out of RECORD), --size NAME (RECORD's
             size of NAME one more), --hashless NAME (NAME listed without a
             hash or size), --ghost NAME (RECORD names NAME, the zip lacks
             it), --no-record (no RECORD at all)
RECORD: "path,sha256=<urlsafe base64 without padding>,size" per member.
"""
import argparse, base64, hashlib, io, os, stat, sys, zipfile


class Pipe(io.RawIOBase):
    """What a zip written to a pipe sees: no seek, no tell."""

    def __init__(self, f):
        self.f = f

    def writable(self):
        return True

    def write(self, b):
        return self.f.write(b)


def b64(data):
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("dist")
    ap.add_argument("--shape", default="")
    for o in ("file", "text", "tree", "symlink", "zeros", "tamper", "unlisted", "size", "hashless", "ghost"):
        ap.add_argument("--" + o, action="append", default=[])
    ap.add_argument("--no-record", action="store_true")
    a = ap.parse_args()
    shape = set(filter(None, a.shape.split(",")))
    bad = shape - {"streamed", "zip64", "stored", "record-hashed"}
    if bad:
        sys.exit("wheel.py: unknown shape %s" % ",".join(sorted(bad)))

    members = []  # [name, data, mode, kind]

    def add(name, data, mode=0o644, kind=stat.S_IFREG):
        members.append([name, data, mode, kind])

    for kv in a.file:
        n, p = kv.split("=", 1)
        add(n, open(p, "rb").read(), os.stat(p).st_mode & 0o777)
    for kv in a.text:
        n, t = kv.split("=", 1)
        add(n, t.encode())
    for kv in a.tree:
        prefix, d = kv.split("=", 1)
        for root, dirs, names in os.walk(d):
            dirs.sort()
            for n in sorted(names):
                p = os.path.join(root, n)
                if os.path.islink(p) or not os.path.isfile(p):
                    continue
                add(prefix + "/" + os.path.relpath(p, d), open(p, "rb").read(), os.stat(p).st_mode & 0o777)
    for kv in a.symlink:
        n, t = kv.split("=", 1)
        add(n, t.encode(), 0o777, stat.S_IFLNK)
    for kv in a.zeros:
        n, k = kv.split("=", 1)
        add(n, bytes(int(k)))
    name, _, ver = a.dist[: -len(".dist-info")].partition("-")
    add(a.dist + "/METADATA", "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, ver))
    add(a.dist + "/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-manylinux2014_x86_64\n")
    for m in members:
        if isinstance(m[1], str):
            m[1] = m[1].encode()

    record = {m[0]: [m[0], "sha256=" + b64(m[1]), str(len(m[1]))] for m in members}
    for n in a.unlisted:
        del record[n]
    for n in a.size:
        record[n][2] = str(int(record[n][2]) + 1)
    for n in a.hashless:
        record[n][1] = record[n][2] = ""
    for n in a.ghost:
        record[n] = [n, "sha256=" + b64(b"ghost"), "5"]
    for m in members:
        if m[0] in a.tamper:
            b = bytearray(m[1])
            b[len(b) // 2] ^= 1
            m[1] = bytes(b)
    own = [a.dist + "/RECORD", "", ""]
    if "record-hashed" in shape:
        own = [a.dist + "/RECORD", "sha256=" + b64(b""), "0"]
    if not a.no_record:
        text = "".join(",".join(r) + "\n" for r in list(record.values()) + [own])
        add(a.dist + "/RECORD", text.encode())

    f = open(a.out, "wb")
    with zipfile.ZipFile(Pipe(f) if "streamed" in shape else f, "w") as z:
        for name, data, mode, kind in members:
            zi = zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0))
            zi.external_attr = (kind | mode) << 16
            zi.compress_type = zipfile.ZIP_STORED if "stored" in shape else zipfile.ZIP_DEFLATED
            with z.open(zi, "w", force_zip64="zip64" in shape) as w:
                w.write(data)
    f.close()


if __name__ == "__main__":
    main()
