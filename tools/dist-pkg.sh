#!/usr/bin/env bash
# The .deb and the wheel of make dist (tools/dist.sh), from one relocatable tree.
#   tools/dist-pkg.sh TREE VER ARCH DEBARCH OUTDIR
# .deb: the tree under /usr/lib/cudaenv, /usr/bin/cudaenv a link into it, man pages
#   and completions where Debian keeps them; share/cudaenv/INSTALLER says "deb", so
#   `cudaenv self update` names apt instead of replacing what dpkg owns.
# wheel: the tree inside the package cudaenv/_tree, a console script that execs
#   its bin/cudaenv (pipx install, uvx, pip install --user); INSTALLER says "pip".
set -euo pipefail
tree=$1 ver=$2 arch=$3 debarch=$4 out=$5
work=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-pkg.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ---- .deb
d=$work/deb
mkdir -p "$d/DEBIAN" "$d/usr/lib" "$d/usr/bin" "$d/usr/share/doc/cudaenv" "$d/usr/share/man/man1" "$d/usr/share/man/man5" \
    "$d/usr/share/bash-completion/completions" "$d/usr/share/zsh/vendor-completions" "$d/usr/share/fish/vendor_completions.d"
cp -a "$tree" "$d/usr/lib/cudaenv"
rm -rf "$d/usr/lib/cudaenv/share/man" "$d/usr/lib/cudaenv/share/bash-completion" "$d/usr/lib/cudaenv/share/zsh" "$d/usr/lib/cudaenv/share/fish"
echo deb > "$d/usr/lib/cudaenv/share/cudaenv/INSTALLER"
ln -s ../lib/cudaenv/bin/cudaenv "$d/usr/bin/cudaenv"
gzip -9n < "$tree/share/man/man1/cudaenv.1" > "$d/usr/share/man/man1/cudaenv.1.gz"
gzip -9n < "$tree/share/man/man5/cudaenv-manifest.5" > "$d/usr/share/man/man5/cudaenv-manifest.5.gz"
cp "$tree/share/bash-completion/completions/cudaenv" "$d/usr/share/bash-completion/completions/cudaenv"
cp "$tree/share/zsh/site-functions/_cudaenv" "$d/usr/share/zsh/vendor-completions/_cudaenv"
cp "$tree/share/fish/vendor_completions.d/cudaenv.fish" "$d/usr/share/fish/vendor_completions.d/cudaenv.fish"
cat > "$d/usr/share/doc/cudaenv/copyright" <<CP
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: cudaenv

Files: *
Copyright: the cudaenv authors
License: MIT
 The bundled libraries under /usr/lib/cudaenv/lib keep their own licences
 (libcurl: curl; libarchive: BSD-2-Clause; OpenSSL: Apache-2.0; cJSON: MIT).
CP
gzip -9n > "$d/usr/share/doc/cudaenv/changelog.gz" <<CL
cudaenv ($ver) stable; urgency=medium

  * Release $ver.

 -- cudaenv maintainers <cudaenv@users.noreply.github.com>  $(date -u -R -d "@${SOURCE_DATE_EPOCH:-0}")
CL
# lintian: the release carries its libraries on purpose (one .deb for Debian 11+ and Ubuntu
# 20.04+, whose libssl, libcurl and libarchive sonames differ: the binaries cannot depend on
# the system's), in its own directory, found through its binaries' $ORIGIN RPATH only
mkdir -p "$d/usr/share/lintian/overrides"
cat > "$d/usr/share/lintian/overrides/cudaenv" <<'OV'
# the release bundles every library but glibc's under /usr/lib/cudaenv/lib (one package for
# Debian 11+ and Ubuntu 20.04+, whose library sonames differ); only its own binaries load them
cudaenv: embedded-library * [usr/lib/cudaenv/lib/*]
OV
size=$(du -sk "$d/usr" | cut -f1)
cat > "$d/DEBIAN/control" <<CTL
Package: cudaenv
Version: $ver
Architecture: $debarch
Maintainer: cudaenv maintainers <cudaenv@users.noreply.github.com>
Installed-Size: $size
Depends: libc6 (>= 2.31)
Section: devel
Priority: optional
Homepage: https://github.com/cudaenv/cudaenv
Description: installer and version manager for CUDA toolkits and cuDNN
 Installs NVIDIA CUDA toolkits, cuDNN and NCCL side by side without root,
 switches them per shell, project or system, and verifies the result on
 the GPU (a real kernel and a cuDNN convolution).
CTL
find "$d" -type d -exec chmod 755 {} +
(cd "$d" && find usr -type f -print0 | sort -z | xargs -0 md5sum > DEBIAN/md5sums)
find "$d" -exec touch -h -d "@${SOURCE_DATE_EPOCH:-0}" {} +
dpkg-deb --root-owner-group -Zxz --build "$d" "$out/cudaenv_${ver}_${debarch}.deb" >/dev/null

# ---- wheel
python3 - "$tree" "$ver" "$arch" "$out" <<'PY'
import base64, hashlib, os, sys, zipfile, time
tree, ver, arch, out = sys.argv[1:]
tag = "py3-none-manylinux_2_31_%s" % arch
name = "cudaenv-%s-%s.whl" % (ver, tag)
epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
dt = time.gmtime(max(epoch, 315532800))[:6]
records = []
def add(zf, arc, data, mode=0o644):
    zi = zipfile.ZipInfo(arc, dt)
    zi.external_attr = (0o100000 | mode) << 16
    zi.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(zi, data)
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    records.append("%s,sha256=%s,%d" % (arc, h, len(data)))
main = '''"""cudaenv as a Python console script: runs the bundled binary (pipx install cudaenv, uvx cudaenv)."""
import os, sys

def main():
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_tree", "bin", "cudaenv")
    os.execv(exe, [exe] + sys.argv[1:])

if __name__ == "__main__":
    main()
'''
dist = "cudaenv-%s.dist-info" % ver
with zipfile.ZipFile(os.path.join(out, name), "w") as zf:
    add(zf, "cudaenv/__init__.py", b'"""cudaenv: the binary is in _tree/bin/cudaenv."""\n')
    add(zf, "cudaenv/__main__.py", main.encode())
    for dp, dns, fns in os.walk(tree):
        dns.sort()
        for fn in sorted(fns):
            p = os.path.join(dp, fn)
            rel = os.path.relpath(p, tree)
            if os.path.islink(p):
                continue
            mode = os.stat(p).st_mode & 0o777
            add(zf, "cudaenv/_tree/" + rel, open(p, "rb").read(), mode)
    add(zf, "cudaenv/_tree/share/cudaenv/INSTALLER", b"pip\n")
    add(zf, dist + "/METADATA", ("Metadata-Version: 2.1\nName: cudaenv\nVersion: %s\n"
        "Summary: Installer and version manager for NVIDIA CUDA toolkits and cuDNN\n"
        "Requires-Python: >=3.7\n" % ver).encode())
    add(zf, dist + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: cudaenv tools/dist-pkg.sh\n"
        "Root-Is-Purelib: false\nTag: %s\n" % tag).encode())
    add(zf, dist + "/entry_points.txt", b"[console_scripts]\ncudaenv = cudaenv.__main__:main\n")
    records.append(dist + "/RECORD,,")
    zi = zipfile.ZipInfo(dist + "/RECORD", dt); zi.external_attr = (0o100644) << 16
    zf.writestr(zi, "\n".join(records) + "\n")
PY
