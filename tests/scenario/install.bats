#!/usr/bin/env bats
# cudaenv install / uninstall end to end against the loopback server and a
# generated mirror (fx_mirror: CUDA 11.8.0 + 12.2.2 runfiles, cuDNN 8.6/8.7/8.9
# tarballs): the composed prefix file by file, shared inodes, mirror, offline,
# integrity and download failures, free space, lying runfiles, kill -9 at
# three points, concurrent installs, uninstall.
load ../lib/common
load ../lib/server
load ../lib/mirror
bats_require_minimum_version 1.5.0

setup_file() { mirror_setup_file; }

setup() {
    common_setup
    mirror_serve
}

teardown() { mirror_teardown; }

V=$BATS_TEST_DIRNAME # silence shellcheck about unused

# every directory under versions/ is a complete toolchain with a receipt
only_complete() {
    local d
    for d in "$CUDAENV_ROOT"/versions/*; do
        [ -e "$d" ] || continue
        [ -f "$d/.cudaenv-receipt.json" ] && [ -x "$d/bin/nvcc" ] || { echo "incomplete: $d"; return 1; }
    done
}

CUDNN87='m["cudnn"]["8.7.0.84"]["cuda11"]["linux-x86_64"]'
RUN118='m["cuda"]["11.8.0"]["runfile"]["linux-x86_64"]'

@test "install tf-2.14 from the loopback server: the composed prefix, file by file" {
    DISPLAY=:0 SUDO_USER=bob run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    p=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    [ -x "$p/bin/nvcc" ]
    [[ "$("$p/bin/nvcc" --version)" == *"release 11.8, V11.8.89"* ]]
    grep -q 'CUDNN_MAJOR 8' "$p/include/cudnn_version.h"
    grep -q 'CUDNN_MINOR 7' "$p/include/cudnn_version.h"
    grep -q 'CUDART_VERSION 11080' "$p/include/cuda_runtime_api.h"
    real=$(readlink -f "$p/lib64/libcudart.so.11.0")
    [[ "$real" == "$p/"* ]]
    [ "$(head -c4 "$real" | od -An -c | tr -d ' ')" = '177ELF' ]
    readelf -d "$real" | grep -q 'SONAME.*\[libcudart.so.11.0\]'
    readelf -d "$(readlink -f "$p/lib64/libcudnn.so.8")" | grep -q 'SONAME.*\[libcudnn.so.8\]'
    [ -e "$p/lib64/libcudnn_ops_infer.so.8" ]
    [ -f "$p/share/cudnn/LICENSE" ]
    # the receipt
    python3 - "$p/.cudaenv-receipt.json" "$SERVER_URL" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["schema"] == 1 and r["name"] == "11.8.0+cudnn8.7.0.84", r
assert r["cuda"] == "11.8.0" and r["cudnn"] == "8.7.0.84" and r["platform"] == "linux-x86_64"
assert r["tensorflow"] == ["2.14"] and r["min_driver"] == "520.61.05" and r["max_gcc"] == 11
assert r["min_driver_compat"] == "450.80.02", r   # doctor judges the tree by the release's own floor
assert r["sm"] == {"min": "3.5", "max": "9.0"}
kinds = {s["kind"]: s for s in r["sources"]}
assert kinds["runfile"]["url"].startswith(sys.argv[2] + "/compute/cuda/11.8.0/"), kinds
assert len(kinds["cudnn"]["sha256"]) == 64 and kinds["cudnn"]["size"] > 0
paths = {f["path"]: f["size"] for f in r["files"]}
assert "bin/nvcc" in paths and "targets/x86_64-linux/lib/libcudart.so.11.8.89" in paths, paths
assert any(p.endswith("libcudnn.so.8.7.0") for p in paths)
assert ".cudaenv-receipt.json" not in paths
PY
    # the loader picks the toolchain's libcudart
    fx_probe "$T/probe" "$p"
    run env LD_LIBRARY_PATH="$p/lib64" "$T/probe"
    [ "${lines[0]}" = 11080 ]
    [[ "${lines[1]}" == "$p/lib64/"* ]]
    # the installer ran with a private HOME/TMPDIR, LANG=C, no DISPLAY/SUDO_USER
    log=$CUDAENV_ROOT/logs/cuda-11.8.0-runfile.log
    grep -q "HOME=$CUDAENV_ROOT/pkgs/.staging-" "$log"
    grep -q "TMPDIR=$CUDAENV_ROOT/pkgs/.staging-" "$log"
    grep -q 'LANG=C DISPLAY=<unset> SUDO_USER=<unset>' "$log"
    no_staging
    [ "$(server_requests 'cuda_11.8.0_520.61.05_linux.run')" -eq 1 ]
}

@test "install with no spec installs the pin in effect: .cuda-version from here up, else the global; none is exit 2" {
    mkdir -p "$T/proj/sub" "$T/none"
    echo tf-2.14 > "$T/proj/.cuda-version"
    cd "$T/proj/sub"
    run --separate-stderr "$CUDAENV" install
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"installing tf-2.14, pinned by $T/proj/.cuda-version"* ]]
    [ -f "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/.cudaenv-receipt.json" ]
    cd "$T/none"
    run --separate-stderr "$CUDAENV" install
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"nothing is pinned here (no .cuda-version in this directory or above, no global default)"* ]]
    "$CUDAENV" global 11.8
    run --separate-stderr "$CUDAENV" install
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"installing "*", pinned by $CUDAENV_ROOT/global"* ]]
    [[ "$stderr$output" == *"already installed"* ]]
}

@test "an installed toolchain is not installed again; --force reinstalls it atomically" {
    "$CUDAENV" install tf-2.14
    n=$(wc -l < "$SERVER_LOG")
    run "$CUDAENV" install tensorflow-2.14.1
    [ "$status" -eq 0 ]
    [[ "$output" == *"already installed"* ]]
    [ "$(wc -l < "$SERVER_LOG")" -eq "$n" ]
    old=$(stat -c %Y%i "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84")
    # a reader watches the toolchain while the commit is slowed down (each
    # rename onto it waits 1.5 s): it must find it complete at every look
    p=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    fx_slowpath "$T/slowpath.so"
    : > "$T/bad"
    ( n=0; while [ ! -e "$T/stop" ]; do
          [ -x "$p/bin/nvcc" ] && [ -f "$p/.cudaenv-receipt.json" ] || echo "incomplete at look $n" >> "$T/bad"
          n=$((n + 1))
      done; echo "$n" > "$T/looks" ) & reader=$!
    LD_PRELOAD=$T/slowpath.so CUDAENV_TEST_SLOW_PATH=/versions/11.8.0+cudnn8.7.0.84 ASAN_OPTIONS=$(fx_asan_preload_ok) \
        run "$CUDAENV" install --force tf-2.14
    touch "$T/stop"; wait "$reader"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ ! -s "$T/bad" ] || { head -3 "$T/bad"; echo "of $(cat "$T/looks") looks"; false; }
    [ "$(cat "$T/looks")" -gt 10 ]
    [ -x "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/bin/nvcc" ]
    [ "$(stat -c %Y%i "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84")" != "$old" ]
    # from the cache: nothing downloaded again
    [ "$(server_requests 'linux.run')" -eq 1 ]
    no_staging
}

@test "tf-2.12 and tf-2.14 share the toolkit's inodes; the runfile is fetched once" {
    run "$CUDAENV" install tf-2.14 tf-2.12
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    a=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84 b=$CUDAENV_ROOT/versions/11.8.0+cudnn8.6.0.163
    for f in bin/nvcc lib64/libcudart.so.11.8.89 include/cuda_runtime_api.h version.json; do
        [ "$(stat -c %i "$a/$f")" = "$(stat -c %i "$b/$f")" ] || { echo "not shared: $f"; false; }
        [ "$(stat -c %i "$a/$f")" = "$(stat -c %i "$CUDAENV_ROOT/pkgs/cuda-11.8.0/$f")" ]
    done
    grep -q 'CUDNN_MINOR 6' "$b/include/cudnn_version.h"
    grep -q 'CUDNN_MINOR 7' "$a/include/cudnn_version.h"
    [ "$(server_requests 'linux.run')" -eq 1 ]
    # a third toolchain later composes from the unpacked tree: no runfile at all
    "$CUDAENV" install 11.8.0 --no-cudnn
    [ -x "$CUDAENV_ROOT/versions/11.8.0/bin/nvcc" ]
    [ ! -e "$CUDAENV_ROOT/versions/11.8.0/include/cudnn_version.h" ]
    [ "$(server_requests 'linux.run')" -eq 1 ]
}

@test "compose falls back to copies where hardlinks are impossible" {
    # sysfail (tests/doubles/sysfail.c): link and linkat fail with EXDEV, as across filesystems
    cc -o "$T/sysfail" "$TESTS_DIR/doubles/sysfail.c"
    run "$T/sysfail" link,linkat EXDEV "$CUDAENV" -v install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"0 hardlinked"* ]]
    a=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    [ "$(stat -c %i "$a/bin/nvcc")" != "$(stat -c %i "$CUDAENV_ROOT/pkgs/cuda-11.8.0/bin/nvcc")" ]
    cmp "$a/bin/nvcc" "$CUDAENV_ROOT/pkgs/cuda-11.8.0/bin/nvcc"
    [ -L "$a/lib64/libcudnn.so.8" ]
}

@test "the copy fallback works where copy_file_range is refused, and a read error fails the install" {
    # sysfail (tests/doubles/sysfail.c): a seccomp filter that makes copy_file_range fail with
    # an errno, as on an old kernel (ENOSYS), across filesystems before 5.3 (EXDEV) or on a
    # filesystem without it (EINVAL, EOPNOTSUPP: FUSE, some NFS): the composed files are then
    # copied with read/write, byte for byte.  A real I/O error (EIO) is not such a refusal.
    cc -o "$T/sysfail" "$TESTS_DIR/doubles/sysfail.c"
    a=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84 p=$CUDAENV_ROOT/pkgs/cuda-11.8.0
    for e in EXDEV ENOSYS EINVAL EOPNOTSUPP; do
        run "$T/sysfail" link,linkat EXDEV "$T/sysfail" copy_file_range "$e" "$CUDAENV" -v install tf-2.14
        [ "$status" -eq 0 ] || { echo "$e: $output"; false; }
        [[ "$output" == *"0 hardlinked"* ]]
        [ "$(stat -c %i "$a/bin/nvcc")" != "$(stat -c %i "$p/bin/nvcc")" ]
        cmp "$a/bin/nvcc" "$p/bin/nvcc"
        [ "$(stat -c %a "$a/bin/nvcc")" = "$(stat -c %a "$p/bin/nvcc")" ]
        "$CUDAENV" uninstall 11.8.0+cudnn8.7.0.84
    done
    run "$T/sysfail" link,linkat EXDEV "$T/sysfail" copy_file_range EIO "$CUDAENV" install tf-2.14
    [ "$status" -ne 0 ]
    [[ "$output" == *"Input/output error"* ]] || { echo "$output"; false; }
    [ ! -e "$a" ]
    no_staging
}

@test "CUDAENV_MIRROR serves a manifest with NVIDIA's URLs" {
    export CUDAENV_MANIFEST=$MIRROR/manifest-nvidia.json CUDAENV_MIRROR=$SERVER_URL
    run "$CUDAENV" install tf-2.15
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ -x "$CUDAENV_ROOT/versions/12.2.2+cudnn8.9.7.29/bin/nvcc" ]
    [ -e "$CUDAENV_ROOT/versions/12.2.2+cudnn8.9.7.29/lib64/libcudart.so.12" ]
    [ "$(server_requests 'GET /compute/cuda/12.2.2/local_installers/cuda_12.2.2_535.104.05_linux.run')" -eq 1 ]
    grep -q "\"url\":.*$SERVER_URL/compute/cudnn" "$CUDAENV_ROOT/versions/12.2.2+cudnn8.9.7.29/.cudaenv-receipt.json"
}

@test "--offline installs from the cache alone, and fails with exit 3 without it" {
    run "$CUDAENV" install --offline tf-2.14
    [ "$status" -eq 3 ] || { echo "$output"; false; }
    [ "$(wc -l < "$SERVER_LOG")" -eq 0 ]
    [ -z "$(ls -A "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
    "$CUDAENV" install tf-2.14
    mkdir -p "$T/root2"
    cp -a "$CUDAENV_ROOT/cache" "$T/root2/"
    n=$(wc -l < "$SERVER_LOG")
    CUDAENV_ROOT=$T/root2 run "$CUDAENV" install --offline tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ -x "$T/root2/versions/11.8.0+cudnn8.7.0.84/bin/nvcc" ]
    [ "$(wc -l < "$SERVER_LOG")" -eq "$n" ]
}

@test "sha256 off by one, of the cuDNN archive or of the runfile: exit 5, nothing installed or cached" {
    # the archive is checked while it unpacks, the runfile only by the download itself
    for a in "$CUDNN87" "$RUN118"; do
        rm -rf "$CUDAENV_ROOT"
        fx_mirror_manifest "$MIRROR" "$SERVER_URL" > "$CUDAENV_MANIFEST"
        edit_manifest "a = $a; s = a['sha256']; a['sha256'] = s[:-1] + ('0' if s[-1] != '0' else '1')"
        bad=$(python3 -c "import json; m = json.load(open('$CUDAENV_MANIFEST')); print($a['sha256'])")
        run "$CUDAENV" install tf-2.14
        [ "$status" -eq 5 ] || { echo "$a: $output"; false; }
        [[ "$output" == *"sha256"*"$bad"* ]] || { echo "$output"; false; }
        [ -z "$(ls -A "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
        [ ! -e "$CUDAENV_ROOT/pkgs/cudnn-8.7.0.84-cuda11" ] && [ ! -e "$CUDAENV_ROOT/pkgs/cuda-11.8.0" ] || false
        # nothing kept under the name it does not have
        [ ! -e "$CUDAENV_ROOT/cache/$bad" ] && [ ! -e "$CUDAENV_ROOT/cache/$bad.part" ] || false
        no_staging
    done
}

@test "a multi-block .tar.xz (xz -T2) installs, decoded on several threads; a corrupt block is refused" {
    # cuDNN plus 4.6 MB of text in 256 KiB blocks: each block takes a while to decode
    local top=cudnn-linux-x86_64-8.7.0.84_cuda11-archive
    fx_cudnn "$T/mb/$top" 8.7.0.84 11
    seq 1 700000 > "$T/mb/$top/LICENSE.text"
    tar -C "$T/mb" --owner=0 --group=0 --numeric-owner -cf - "$top" | xz -T2 --block-size=256KiB > "$T/multi.tar.xz"
    [ "$(xz -lv "$T/multi.tar.xz" | awk '/^ *Blocks:/ {print $2; exit}')" -gt 1 ]
    cp "$T/multi.tar.xz" "$MIRROR/multi.tar.xz"
    edit_manifest "import hashlib, os; a = $CUDNN87; f = '$MIRROR/multi.tar.xz'; a['url'] = '$SERVER_URL/multi.tar.xz'; a['sha256'] = hashlib.sha256(open(f, 'rb').read()).hexdigest(); a['size'] = os.path.getsize(f)"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    grep -q 'CUDNN_MINOR 7' "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/include/cudnn_version.h"
    cmp "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/include/cudnn_version.h" <(tar -xJOf "$T/multi.tar.xz" --wildcards '*/include/cudnn_version.h')
    # reinstalled from the cache: the decoder's threads are observed (test hook), not assumed
    CUDAENV_TEST_XZ_THREADS=$T/threads run seams "$CUDAENV" install --force tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    cmp "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/share/cudnn/LICENSE.text" "$T/mb/$top/LICENSE.text"
    [ "$(wc -l < "$T/threads")" -eq 1 ]
    if [ "$(nproc)" -ge 2 ]; then
        [ "$(cat "$T/threads")" -ge 2 ] || { echo "decoded on $(cat "$T/threads") thread(s) with $(nproc) CPUs"; false; }
        # blocks of the 4.6 MB LICENSE.text were decoded straight into it (file blocks, xzsink.c)
        [ "$(cat "$T/threads.files")" -ge 1 ] || { echo "$(cat "$T/threads.files") file blocks"; false; }
    fi
    # one byte flipped inside the second block, with the manifest's digest of the result
    export CUDAENV_ROOT=$T/root2
    python3 - "$MIRROR/multi.tar.xz" <<'PY'
import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[len(b) // 2] ^= 0x55; open(p, "wb").write(b)
PY
    edit_manifest "import hashlib, os; a = $CUDNN87; f = '$MIRROR/multi.tar.xz'; a['sha256'] = hashlib.sha256(open(f, 'rb').read()).hexdigest()"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 5 ] || { echo "$output"; false; }
    [[ "$output" == *"multi.tar.xz is not a readable archive"* ]] || { echo "$output"; false; }
    [ ! -e "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84" ]
    no_staging
    rm -f "$MIRROR/multi.tar.xz"
}

@test "24 MiB blocks (those of xz -T0 -6) decode on two threads on two cores: the budget scales with the machine (issue 25)" {
    # 48 MiB of text in two 24 MiB blocks: one thread of them needs ~30 MiB, so
    # the old fixed 48 MiB for all threads decoded them on one worker thread
    [ "$(nproc)" -ge 2 ] || skip "needs two cores"
    local top=cudnn-linux-x86_64-8.7.0.84_cuda11-archive
    fx_cudnn "$T/big/$top" 8.7.0.84 11
    seq 1 6200000 > "$T/big/$top/LICENSE.text"
    tar -C "$T/big" --owner=0 --group=0 --numeric-owner -cf - "$top" | xz -T2 -0 --block-size=24MiB > "$MIRROR/big.tar.xz"
    [ "$(xz -lv "$MIRROR/big.tar.xz" | awk '/^ *Blocks:/ {print $2; exit}')" -ge 2 ]
    edit_manifest "import hashlib, os; a = $CUDNN87; f = '$MIRROR/big.tar.xz'; a['url'] = '$SERVER_URL/big.tar.xz'; a['sha256'] = hashlib.sha256(open(f, 'rb').read()).hexdigest(); a['size'] = os.path.getsize(f)"
    CUDAENV_TEST_XZ_THREADS=$T/threads run seams taskset -c 0,1 "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    cmp "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/share/cudnn/LICENSE.text" "$T/big/$top/LICENSE.text"
    # two threads decoded (the hook counts the block workers and the decoding thread)
    [ "$(cat "$T/threads")" -ge 2 ] || { echo "decoded on $(cat "$T/threads") worker thread(s)"; false; }
    # one core in the affinity mask: one worker, whatever the memory
    export CUDAENV_ROOT=$T/root1
    CUDAENV_TEST_XZ_THREADS=$T/threads1 run seams taskset -c 0 "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ "$(cat "$T/threads1")" -le 1 ] || { echo "$(cat "$T/threads1") worker threads on one core"; false; }
    rm -f "$MIRROR/big.tar.xz"
}

@test "a 404 with an HTML body: exit 4 naming the URL, nothing installed" {
    edit_manifest "a = $CUDNN87; a['url'] = a['url'].replace('/compute/', '/_/404/compute/')"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 4 ] || { echo "$output"; false; }
    [[ "$output" == *"_/404/compute/cudnn"* ]]
    [ -z "$(ls -A "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
    no_staging
}

@test "a dropped connection while the archive unpacks as it downloads: resumed, verified, installed" {
    edit_manifest "a = $CUDNN87; a['url'] = a['url'].replace('/compute/', '/_/drop=1000/compute/')"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    grep -q 'CUDNN_MINOR 7' "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/include/cudnn_version.h"
    grep -q 'cudnn.*range=bytes=1000-' "$SERVER_LOG"
    no_staging
}

# the free space the install of tf-2.14 needs: downloads + unpacked estimates
# (install.h: runfile x 2.5, archive x 2.0), in bytes (a float) and as printed
tf214_need() {
    python3 - "$CUDAENV_MANIFEST" "${1:-}" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
r = m["cuda"]["11.8.0"]["runfile"]["linux-x86_64"]["size"]
c = m["cudnn"]["8.7.0.84"]["cuda11"]["linux-x86_64"]["size"]
need = r + r * 2.5 + c + c * 2.0
if sys.argv[2] == "printed":
    b, u = need, 0
    while b >= 1024 and u < 4: b /= 1024; u += 1
    print("%.1f %s" % (b, ["B", "KiB", "MiB", "GiB", "TiB"][u]))
else:
    print(repr(need))
PY
}

@test "a server that cuts every response short: each attempt resumes where the last stopped, the install completes" {
    size=$(python3 -c "import json; m = json.load(open('$CUDAENV_MANIFEST')); print($RUN118['size'])")
    cut=$((size / 8))
    edit_manifest "for a in ($RUN118, $CUDNN87): a['url'] = a['url'].replace('/compute/', '/_/cut=$cut/compute/')"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ -x "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/bin/nvcc" ]
    grep -q 'CUDNN_MINOR 7' "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/include/cudnn_version.h"
    # more cut attempts in a row than CE_FETCH_ATTEMPTS (5): only progress kept it going
    [ "$(server_requests "cut=$cut/compute/cuda/11.8.0/.*status=20")" -ge 8 ]
    [ "$(server_requests "cut=$cut/compute/cuda/11.8.0/.*range=bytes=$((cut * 7))-")" -eq 1 ]
    no_staging
}

@test "a symlink planted at the runfile's .part is not followed: refused, its target untouched" {
    sha=$(python3 -c "import json; m = json.load(open('$CUDAENV_MANIFEST')); print($RUN118['sha256'])")
    mkdir -p "$CUDAENV_ROOT/cache"
    echo precious > "$T/victim"
    ln -s "$T/victim" "$CUDAENV_ROOT/cache/$sha.part"
    run "$CUDAENV" install tf-2.14
    if [ "$(id -u)" -eq 0 ]; then   # root: the trust rule refuses any symlink inside the store (exit 6)
        [ "$status" -eq 6 ] || { echo "$output"; false; }
        [[ "$output" == *"$CUDAENV_ROOT/cache/$sha.part is a symlink"* ]] || { echo "$output"; false; }
    else                            # a user's own store: O_NOFOLLOW refuses it (exit 1)
        [ "$status" -eq 1 ] || { echo "$output"; false; }
        [[ "$output" == *"cannot open $CUDAENV_ROOT/cache/$sha.part"* ]] || { echo "$output"; false; }
    fi
    [ "$(cat "$T/victim")" = precious ]
    [ -z "$(ls -A "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
}

@test "a user's own store (run as uid 65534 when the suite runs as root): the planted .part symlink is refused by O_NOFOLLOW" {
    # as root the store's trust rule refuses the symlink before the open
    # (above), so this is what tests the open itself on a root-run suite
    [ "$(id -u)" -eq 0 ] || skip "the test above runs as a user already"
    command -v setpriv >/dev/null || skip "no setpriv"
    sha=$(python3 -c "import json; m = json.load(open('$CUDAENV_MANIFEST')); print($RUN118['sha256'])")
    U=$(mktemp -d /tmp/cudaenv-user.XXXXXX)
    chmod 755 "$U"
    mkdir -p "$U/root/cache"
    cp "$CUDAENV_MANIFEST" "$U/manifest.json"
    echo precious > "$U/victim"   # a file the user can write: what the planted link aims at
    ln -s "$U/victim" "$U/root/cache/$sha.part"
    # the binaries where that user can run them (the checkout may sit under /root)
    mkdir -p "$U/bin" "$U/libexec"
    cp "$CUDAENV" "$U/bin/" && cp -r "$(dirname "$CUDAENV")/../libexec/cudaenv" "$U/libexec/"
    chown -R 65534:65534 "$U"
    run setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/bin:/bin HOME="$U" \
        CUDAENV_ROOT="$U/root" CUDAENV_MANIFEST="$U/manifest.json" NO_COLOR=1 "$U/bin/cudaenv" install tf-2.14
    victim=$(cat "$U/victim") versions=$(ls -A "$U/root/versions" 2>/dev/null || true)
    rm -rf "$U"
    [ "$status" -eq 1 ] || { echo "$output"; false; }
    [[ "$output" == *"cannot open $U/root/cache/$sha.part"* ]] || { echo "$output"; false; }
    [ "$victim" = precious ]
    [ -z "$versions" ]
}

@test "a file of the wrong size under a cache name is not trusted: downloaded again, then installed" {
    sha=$(python3 -c "import json; m = json.load(open('$CUDAENV_MANIFEST')); print($RUN118['sha256'])")
    run_file=$MIRROR/compute/cuda/11.8.0/local_installers/cuda_11.8.0_520.61.05_linux.run
    mkdir -p "$CUDAENV_ROOT/cache"
    head -c $(($(stat -c %s "$run_file") / 2)) "$run_file" > "$CUDAENV_ROOT/cache/$sha"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ "$(server_requests 'linux.run')" -eq 1 ]
    cmp "$CUDAENV_ROOT/cache/$sha" "$run_file"
}

@test "not enough free space: exit 1 before any download, naming need and free; one byte more is enough" {
    CUDAENV_TEST_FREE_BYTES=1000 run seams "$CUDAENV" install tf-2.14
    [ "$status" -eq 1 ]
    [[ "$output" == *"needs about $(tf214_need printed) (downloads plus unpacked trees) and 1000 B is free"* ]] \
        || { echo "want $(tf214_need printed): $output"; false; }
    [ "$(wc -l < "$SERVER_LOG")" -eq 0 ]
    [ -z "$(ls -A "$CUDAENV_ROOT/cache" 2>/dev/null)" ]
    # the boundary: one byte short is refused, exactly enough installs
    need=$(tf214_need)
    short=$(python3 -c "import math; print(math.ceil($need) - 1)")
    CUDAENV_TEST_FREE_BYTES=$short run seams "$CUDAENV" install tf-2.14
    [ "$status" -eq 1 ] || { echo "$short bytes for $need: $output"; false; }
    [ "$(wc -l < "$SERVER_LOG")" -eq 0 ]
    # exactly enough passes the preflight: the downloads start.  (The unpack
    # then checks the archive's declared sizes against the same fake free
    # space; the fixture's cuDNN compresses 38x where NVIDIA's does ~2.6x,
    # so it may still stop there, but never with the preflight's message.)
    CUDAENV_TEST_FREE_BYTES=$((short + 1)) run seams "$CUDAENV" install tf-2.14
    [[ "$output" != *"needs about"* ]] || { echo "$((short + 1)) bytes for $need: $output"; false; }
    [ "$(wc -l < "$SERVER_LOG")" -gt 0 ]
}

@test "a runfile that installs another CUDA, none, or one without libcudart: exit 5 naming what is wrong" {
    fx_runfile "$MIRROR/liar.run" 11.8.0 12.2.2
    fx_runfile "$MIRROR/empty.run" 11.8.0 empty
    fx_runfile "$MIRROR/nocudart.run" 11.8.0 nocudart
    for kind in liar empty nocudart; do
        fx_mirror_manifest "$MIRROR" "$SERVER_URL" > "$CUDAENV_MANIFEST"
        edit_manifest "import hashlib, os; a = $RUN118; f = '$MIRROR/$kind.run'; a['url'] = '$SERVER_URL/$kind.run'; a['sha256'] = hashlib.sha256(open(f, 'rb').read()).hexdigest(); a['size'] = os.path.getsize(f)"
        run "$CUDAENV" install tf-2.14
        [ "$status" -eq 5 ] || { echo "$kind: $output"; false; }
        if [ $kind = liar ]; then [[ "$output" == *"installed CUDA 12.2"*"promised 11.8.0"* ]]; fi
        if [ $kind = empty ]; then [[ "$output" == *"bin/nvcc"* ]]; fi
        if [ $kind = nocudart ]; then [[ "$output" == *"did not install lib64/libcudart.so.*"* ]]; fi
        [ -z "$(ls -A "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
        [ ! -e "$CUDAENV_ROOT/pkgs/cuda-11.8.0" ]
        no_staging
    done
}

@test "kill -9 during download, after unpack, before commit: nothing half-installed, the rerun completes" {
    for point in during-download after-unpack before-commit; do
        rm -rf "$CUDAENV_ROOT"
        if [ $point = during-download ]; then
            edit_manifest "a = $RUN118; a['url'] = a['url'].replace('/compute/', '/_/rate=20000/compute/')"
        else
            fx_mirror_manifest "$MIRROR" "$SERVER_URL" > "$CUDAENV_MANIFEST"
        fi
        CUDAENV_TEST_FAULT=$point run seams "$CUDAENV" install tf-2.14
        [ "$status" -eq 137 ] || { echo "$point: $status $output"; false; }
        only_complete
        [ -z "$(ls "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
        case $point in
            during-download) ls "$CUDAENV_ROOT"/cache/*.part ;;
            after-unpack) ls -d "$CUDAENV_ROOT"/pkgs/.staging-* ;;
            before-commit) ls -d "$CUDAENV_ROOT"/versions/.staging-* ;;
        esac
        run "$CUDAENV" list
        [[ "$output" != *"11.8.0+cudnn8.7.0.84"* ]]
        run "$CUDAENV" install tf-2.14
        [ "$status" -eq 0 ] || { echo "rerun after $point: $output"; false; }
        only_complete
        [ -x "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/bin/nvcc" ]
        no_staging
    done
}

@test "the runfile and the cuDNN archive under one scheduler: the installer runs while cuDNN still downloads" {
    # cuDNN's download takes about 3 s; the runfile's is verified at once
    edit_manifest "import os; a = $CUDNN87; f = '$MIRROR' + a['url'].split('$SERVER_URL')[-1]; \
a['url'] = a['url'].replace('/compute/', '/_/rate=%d/compute/' % max(1000, os.path.getsize(f) // 3))"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    only_complete
    no_staging
    # the installer's step is said before the cuDNN download ends (one pipeline:
    # a runfile part starts as soon as its own download verified, not after all)
    ran=$(grep -n 'running the CUDA 11.8.0 installer' <<< "$output" | cut -d: -f1)
    got=$(grep -n 'downloaded cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz' <<< "$output" | cut -d: -f1)
    [ -n "$ran" ] && [ -n "$got" ] && [ "$ran" -lt "$got" ] || { echo "$output"; false; }
    [ -f "$CUDAENV_ROOT/logs/cuda-11.8.0-runfile.log" ]
}

@test "a cuDNN download that fails while the runfile's installer runs stops the installer with everything it started: exit 5 at once, nothing installed" {
    # cuDNN arrives over ~2 s with bytes its manifest entry does not name; the installer would take 60 s
    edit_manifest "import os; a = $CUDNN87; f = '$MIRROR' + a['url'].split('$SERVER_URL')[-1]; \
a['url'] = a['url'].replace('/compute/', '/_/rate=%d/compute/' % max(1000, os.path.getsize(f) // 2)); a['sha256'] = 'ab' * 32"
    SECONDS=0
    FX_RUNFILE_SLEEP=60 FX_RUNFILE_PIDS=$T/pids run --separate-stderr "$CUDAENV" install tf-2.14
    [ "$status" -eq 5 ] || { echo "$status $stderr"; false; }
    [ "$SECONDS" -lt 30 ] || { echo "took $SECONDS s: the installer ran on"; false; }
    [[ "$stderr" == *"sha256 mismatch for "*"cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz"* ]] || { echo "$stderr"; false; }
    [[ "$stderr" != *"installer"*"was stopped"* ]] || { echo "$stderr"; false; }   # the install's own failure is the one said
    [ -s "$T/pids" ]   # it was running
    pids_gone "$T/pids"
    [ -z "$(ls -A "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
    [ ! -e "$CUDAENV_ROOT/pkgs/cuda-11.8.0" ]
    no_staging
}

@test "four concurrent installs of the same spec: one does the work, all succeed, one toolchain" {
    local pids=()
    for i in 1 2 3 4; do
        ( "$CUDAENV" install tf-2.14 > "$T/out.$i" 2>&1; echo $? > "$T/rc.$i" ) &
        pids+=($!)
    done
    wait "${pids[@]}"   # not a bare wait: the test server runs in the background too
    for i in 1 2 3 4; do [ "$(cat "$T/rc.$i")" -eq 0 ] || { cat "$T/out.$i"; false; }; done
    [ "$(ls "$CUDAENV_ROOT/versions" | wc -l)" -eq 1 ]
    [ "$(grep -l 'already installed' "$T"/out.* | wc -l)" -eq 3 ]
    [ "$(server_requests 'linux.run')" -eq 1 ]
    only_complete
    no_staging
}

@test "unknown spec: exit 3 with a suggestion; no lock holder left behind" {
    run "$CUDAENV" install tf-9.99
    [ "$status" -eq 3 ]
    run "$CUDAENV" install
    [ "$status" -eq 2 ]
    run "$CUDAENV" install tf-2.14 --cudnn 8.7 --no-cudnn
    [ "$status" -eq 2 ]
}

@test "a CUDAENV_ROOT too long for its cache paths (4040 bytes): exit 1 naming it, nothing asked of the server" {
    local p=$T/long
    while [ $(( ${#p} + 201 )) -lt 4030 ]; do p=$p/$(printf 'd%.0s' $(seq 200)); done
    p=$p/$(printf 'e%.0s' $(seq $(( 4040 - ${#p} - 1 ))))
    [ ${#p} -eq 4040 ]
    mkdir -p "$p"
    CUDAENV_ROOT=$p run --separate-stderr "$CUDAENV" install tf-2.14
    [ "$status" -eq 1 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"CUDAENV_ROOT is too long: $p"* ]] || { echo "$stderr"; false; }
    [ "$(server_requests GET)" -eq 0 ]
    [ -z "$(ls -A "$p/cache" 2>/dev/null)" ]
}

@test "uninstall: removes the toolchain atomically and unused pkgs; refuses the system one; exit 3 when absent" {
    "$CUDAENV" install tf-2.14 tf-2.12
    run "$CUDAENV" uninstall 11.8.0+cudnn8.6.0.163
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ ! -e "$CUDAENV_ROOT/versions/11.8.0+cudnn8.6.0.163" ]
    [ ! -e "$CUDAENV_ROOT/pkgs/cudnn-8.6.0.163-cuda11" ]
    [ -d "$CUDAENV_ROOT/pkgs/cuda-11.8.0" ]
    # still complete: the toolkit's inodes live on in the other toolchain
    [ -x "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84/bin/nvcc" ]
    run "$CUDAENV" uninstall 11.8.0+cudnn8.6.0.163
    [ "$status" -eq 3 ]
    # the system switch points at it: refused without --force
    mkdir -p "$CUDAENV_SYSROOT/usr/local"
    ln -s "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84" "$CUDAENV_SYSROOT/usr/local/cuda"
    run "$CUDAENV" uninstall tf-2.14
    [ "$status" -eq 1 ]
    [[ "$output" == *"system-wide"*"--force"* ]]
    [ -d "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84" ]
    run "$CUDAENV" uninstall --force 11.8.0+cudnn8.7.0.84
    [ "$status" -eq 0 ]
    [ -z "$(ls -A "$CUDAENV_ROOT/versions")" ]
    [ -z "$(ls -A "$CUDAENV_ROOT/pkgs")" ]
    no_staging
}

@test "uninstall begins a store transaction like install: the staging a crashed run left goes first" {
    "$CUDAENV" install tf-2.14
    mkdir -p "$CUDAENV_ROOT/versions/.staging-crashed/bin" "$CUDAENV_ROOT/pkgs/.staging-crashed"
    touch "$CUDAENV_ROOT/versions/.staging-crashed/bin/nvcc"
    run "$CUDAENV" uninstall -v tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"removed $CUDAENV_ROOT/versions/.staging-crashed, left by an interrupted run"* ]]
    no_staging
    [ -z "$(ls -A "$CUDAENV_ROOT/versions")" ]
}

@test "a progress bar with rate and ETA on a terminal only; piped output has none" {
    command -v script >/dev/null || skip "script (util-linux) not installed"
    # slow the cuDNN tarball down so the bar is drawn several times
    edit_manifest "a = $CUDNN87; a['url'] = a['url'].replace('/compute/', '/_/rate=400000/compute/')"
    run script -qec "$CUDAENV install tf-2.14" /dev/null
    [ "$status" -eq 0 ]
    [[ "$output" == *"ETA "* ]]
    [[ "$output" == *"/s"* ]]
    [[ "$output" == *$'\r'* ]]
    # the same download again, piped: notes only
    "$CUDAENV" uninstall tf-2.14
    rm -rf "$CUDAENV_ROOT/cache"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ]
    [[ "$output" == *"downloaded"* ]]
    [[ "$output" != *"ETA "* ]]
    [[ "$output" != *$'\r'* ]]
}

@test "the receipt has a sha256 per file, shared by composition, and verify --deep catches a same-size tamper" {
    run "$CUDAENV" install tf-2.14 tf-2.12
    [ "$status" -eq 0 ]
    for name in 11.8.0+cudnn8.7.0.84 11.8.0+cudnn8.6.0.163; do
        p=$CUDAENV_ROOT/versions/$name
        python3 - "$p" <<'PY'
import hashlib, json, os, sys
p = sys.argv[1]
r = json.load(open(os.path.join(p, ".cudaenv-receipt.json")))
assert r["files"], r
for f in r["files"]:
    want = hashlib.sha256(open(os.path.join(p, f["path"]), "rb").read()).hexdigest()
    assert f.get("sha256") == want, (f, want)
PY
    done
    # the toolkit was hashed once: its index sits beside the pristine tree
    [ -f "$CUDAENV_ROOT/pkgs/cuda-11.8.0.sha256.json" ]
    p=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    run "$CUDAENV" verify 11.8.0+cudnn8.7.0.84 --deep --json
    python3 -c 'import json,sys; d=json.load(sys.stdin); s=[x for x in d["steps"] if x["id"]=="files"][0]; assert s["status"]=="passed", s' <<<"$output"
    # same size, other bytes: only --deep sees it (break the hardlink first: copy, flip, move)
    f=$p/include/cudnn_version.h
    cp "$f" "$T/h"; sed -i 's/CUDNN_MAJOR 8/CUDNN_MAJOR 7/' "$T/h"; mv "$T/h" "$f"
    run "$CUDAENV" verify 11.8.0+cudnn8.7.0.84 --deep --json
    [ "$status" -eq 7 ]
    [[ "$output" == *"sha256 differs: include/cudnn_version.h"* ]]
}
