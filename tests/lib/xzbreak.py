#!/usr/bin/env python3
"""xzbreak.py IN OUT HOW: IN (one .xz stream) with its container broken
after the data, so that every block still decodes and only the index, the
footer or what follows them is wrong (what `xz -t` rejects):

  record      the last index record one plain byte larger (index CRC32,
              footer and backward size right)
  unpadded    the last index record's unpadded size 4 bytes larger (the same)
  extra-block the last block twice, the index naming it once
  index-crc   the index's CRC32 zeroed
  footer-crc  the footer's CRC32 flipped
  backward    the footer's backward size 4 bytes larger (its CRC32 right)
  flags       the footer's flags another check type than the header's
              (its CRC32 right)
  garbage     four bytes that are not stream padding after the footer

Written for the tests (xz.bats, archive fixtures); standard library only."""
import struct
import sys
import zlib


def vli(buf, i):
    v, k = 0, 0
    while True:
        b = buf[i]
        v |= (b & 0x7F) << (7 * k)
        i += 1
        k += 1
        if not b & 0x80:
            return v, i


def enc_vli(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def crc(b):
    return struct.pack("<I", zlib.crc32(b) & 0xFFFFFFFF)


def index_bytes(records):
    body = b"\x00" + enc_vli(len(records))
    for unpadded, plain in records:
        body += enc_vli(unpadded) + enc_vli(plain)
    body += b"\x00" * (-len(body) % 4)
    return body + crc(body)


def footer(backward_words, flags):
    tail = struct.pack("<I", backward_words) + flags
    return crc(tail) + tail + b"YZ"


def main():
    src, dst, how = sys.argv[1:4]
    x = open(src, "rb").read()
    assert x[:6] == b"\xfd7zXZ\x00" and x[-2:] == b"YZ", "not one .xz stream"
    flags = x[6:8]
    foot = x[-12:]
    backward = (struct.unpack("<I", foot[4:8])[0] + 1) * 4
    istart = len(x) - 12 - backward
    assert x[istart] == 0, "no index where the footer says"
    n, i = vli(x, istart + 1)
    records = []
    for _ in range(n):
        u, i = vli(x, i)
        p, i = vli(x, i)
        records.append((u, p))
    blocks = x[:istart]
    if how in ("record", "unpadded"):
        u, p = records[-1]
        records[-1] = (u, p + 1) if how == "record" else (u + 4, p)
        idx = index_bytes(records)
        out = blocks + idx + footer(len(idx) // 4 - 1, flags)
    elif how == "extra-block":
        u, _ = records[-1]
        last = u + (-u % 4)                       # the block with its padding
        out = blocks + blocks[-last:] + x[istart:]
    elif how == "index-crc":
        out = x[:-16] + b"\x00\x00\x00\x00" + x[-12:]
    elif how == "footer-crc":
        out = x[:-12] + bytes([x[-12] ^ 0xFF]) + x[-11:]
    elif how == "backward":
        out = x[:-12] + footer(backward // 4, flags)
    elif how == "flags":
        other = b"\x00" + bytes([0x01 if flags[1] != 0x01 else 0x04])
        out = x[:-12] + footer(backward // 4 - 1, other)
    elif how == "garbage":
        out = x + b"JUNK"
    else:
        sys.exit("xzbreak: unknown HOW " + how)
    open(dst, "wb").write(out)


if __name__ == "__main__":
    main()
