#!/usr/bin/env bats
# cudaenv mirror against a hostile directory (issue 21), played as root
# against a second local account (useradd + runuser) and as a bundle's
# author: root writes a mirror only into a directory only root can change
# (DIR and its parents: exit 6 naming the path), follows no symlink under DIR
# (compute/, .cudaenv-mirror/cache), and mirror --check reads only regular
# files inside the bundle (no '..', absolute path, symlink, FIFO or device;
# a missing size never makes it hang, nor lets a tampered file pass).
load ../lib/common
load ../lib/server
bats_require_minimum_version 1.5.0

ATK=cudaenv-atk
RUN118=compute/cuda/11.8.0/local_installers/cuda_11.8.0_520.61.05_linux.run

setup_file() {
    if [ "$(id -u)" -eq 0 ]; then id "$ATK" >/dev/null 2>&1 || useradd -M -s /bin/sh "$ATK" 2>/dev/null || true; fi
    upstream_setup_file
}

setup() {
    common_setup
    upstream_serve
    export CUDAENV_MANIFEST=$T/manifest.json
    chmod 755 "$T"
    VICTIM=$T/victim
    mkdir -p "$VICTIM"
    echo 'root:secret' > "$VICTIM/shadow"
    chmod 600 "$VICTIM/shadow"
}

teardown() {
    server_stop
    common_teardown
}

need_atk() {
    [ "$(id -u)" -eq 0 ] || skip "played as root against a second user"
    id "$ATK" >/dev/null 2>&1 || skip "useradd $ATK failed"
    command -v runuser >/dev/null || skip "no runuser"
}

victim_untouched() {
    [ "$(cat "$VICTIM/shadow")" = "root:secret" ]
    [ "$(ls -A "$VICTIM")" = "shadow" ] || { ls -la "$VICTIM"; false; }
}

# a bundle whose cudaenv.json names one file: URL, sha256 and size of the
# file at PATH (size "" leaves it out)
bundle() {
    local url=$1 path=$2 size=${3-x}
    mkdir -p "$T/b"
    python3 - "$T/b/cudaenv.json" "$url" "$path" "$size" <<'PY'
import hashlib, json, os, sys
out, url, path, size = sys.argv[1:5]
a = {"url": url, "sha256": hashlib.sha256(open(path, "rb").read()).hexdigest() if os.path.isfile(path) else "0" * 64}
if size == "x": a["size"] = os.path.getsize(path) if os.path.isfile(path) else 0
json.dump({"schema": 1, "cuda": {"11.8.0": {"runfile": {"linux-x86_64": a}}}}, open(out, "w"))
PY
}

@test "mirror as root into a directory a user owns: exit 6 naming it, nothing fetched, nothing written" {
    need_atk
    M=$T/site
    mkdir -p "$M"
    chown "$ATK" "$M"
    # what the user planted: compute -> the victim directory, the cache -> it too
    runuser -u "$ATK" -- ln -s "$VICTIM" "$M/compute"
    run --separate-stderr "$CUDAENV" mirror tf-2.14 --to "$M"
    [ "$status" -eq 6 ] || { echo "$output $stderr"; false; }
    [[ "$stderr" == *"$M"*"owned by uid"* ]] || { echo "$stderr"; false; }
    [ "$(server_requests GET)" -eq 0 ]
    [ ! -e "$M/cudaenv.json" ]
    [ ! -e "$M/.cudaenv-mirror" ]
    victim_untouched
}

@test "mirror as root under a group/other-writable parent: exit 6 naming the parent" {
    need_atk
    mkdir -p "$T/shared"
    chmod 0777 "$T/shared"
    run --separate-stderr "$CUDAENV" mirror tf-2.14 --to "$T/shared/site"
    [ "$status" -eq 6 ] || { echo "$output $stderr"; false; }
    [[ "$stderr" == *"$T/shared is writable by group or others"* ]] || { echo "$stderr"; false; }
    [ ! -e "$T/shared/site" ]
    # the same with DIR already there, root's own: its parent is still the way in
    mkdir "$T/shared/site"
    run --separate-stderr "$CUDAENV" mirror tf-2.14 --to "$T/shared/site"
    [ "$status" -eq 6 ] || { echo "$output $stderr"; false; }
    [[ "$stderr" == *"$T/shared is writable by group or others"* ]] || { echo "$stderr"; false; }
    [ -z "$(ls -A "$T/shared/site")" ]
    [ "$(server_requests GET)" -eq 0 ]
}

@test "a symlinked DIR/compute or .cudaenv-mirror/cache is refused, never written through" {
    M=$T/site
    mkdir -p "$M"
    ln -s "$VICTIM" "$M/compute"
    run --separate-stderr "$CUDAENV" mirror 11.8 --no-cudnn --to "$M"
    [ "$status" -eq 6 ] || { echo "$output $stderr"; false; }
    [[ "$stderr" == *"$M/compute is a symlink"* ]] || { echo "$stderr"; false; }
    victim_untouched
    rm "$M/compute"
    rm -rf "$M/.cudaenv-mirror"
    mkdir -p "$M/.cudaenv-mirror"
    ln -s "$VICTIM" "$M/.cudaenv-mirror/cache"
    run --separate-stderr "$CUDAENV" mirror 11.8 --no-cudnn --to "$M"
    [ "$status" -eq 6 ] || { echo "$output $stderr"; false; }
    [[ "$stderr" == *".cudaenv-mirror/cache is a symlink"* ]] || { echo "$stderr"; false; }
    victim_untouched
    [ "$(server_requests GET)" -eq 0 ]
}

@test "mirror --check stays in the bundle: '..', absolute and symlinked paths are refused, not hashed" {
    for url in "../../../../../../../../etc/passwd" "/etc/passwd" "compute/../../victim/shadow"; do
        bundle "$url" /etc/passwd
        run --separate-stderr "$CUDAENV" mirror --check "$T/b"
        [ "$status" -eq 5 ] || { echo "$url: $status $output $stderr"; false; }
        [[ "$stderr" == *"refused"* ]] || { echo "$url: $stderr"; false; }
        [[ "$stderr" != *"ok:"* ]]
    done
    # a symlink inside the bundle to a file a user cannot read: no hash oracle
    bundle compute/x.run "$VICTIM/shadow"
    mkdir -p "$T/b/compute"
    ln -s "$VICTIM/shadow" "$T/b/compute/x.run"
    run --separate-stderr "$CUDAENV" mirror --check "$T/b"
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"refused"*"symlink"* ]] || { echo "$stderr"; false; }
    ln -s "$VICTIM" "$T/b/dir"
    bundle dir/shadow "$VICTIM/shadow"
    run --separate-stderr "$CUDAENV" mirror --check "$T/b"
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"refused"*"symlink"* ]] || { echo "$stderr"; false; }
}

@test "mirror --check never hangs: a FIFO or a device without a size is refused at once" {
    mkdir -p "$T/b"
    mkfifo "$T/b/fifo.run"
    bundle fifo.run /nonexistent ""
    run --separate-stderr timeout 20 "$CUDAENV" mirror --check "$T/b"
    [ "$status" -eq 5 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"$T/b/fifo.run is not a regular file"* ]] || { echo "$stderr"; false; }
    if mknod "$T/b/zero" c 1 5 2>/dev/null && head -c1 "$T/b/zero" >/dev/null 2>&1; then
        bundle zero /nonexistent ""
        run --separate-stderr timeout 20 "$CUDAENV" mirror --check "$T/b"
        [ "$status" -eq 5 ] || { echo "$status $stderr"; false; }
        [[ "$stderr" == *"not a regular file"* ]]
    fi
}

@test "mirror --check: a tampered file whose entry has no size fails; the untampered one passes" {
    mkdir -p "$T/b/compute"
    cp "$UPSTREAM/$RUN118" "$T/b/compute/x.run"
    bundle compute/x.run "$T/b/compute/x.run" ""
    run "$CUDAENV" mirror --check "$T/b"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"1 files"* ]]
    printf 'X' | dd of="$T/b/compute/x.run" bs=1 seek=10 conv=notrunc 2>/dev/null
    run --separate-stderr "$CUDAENV" mirror --check "$T/b"
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"sha256 mismatch: $T/b/compute/x.run"* ]] || { echo "$stderr"; false; }
    echo more >> "$T/b/compute/x.run"   # and of another size
    run --separate-stderr "$CUDAENV" mirror --check "$T/b"
    [ "$status" -eq 5 ]
}

@test "root copying a cached file into the mirror never writes through a planted <sha>.tmp-<pid> symlink" {
    [ "$(id -u)" -eq 0 ] || skip "needs root (a mount and a pid namespace)"
    command -v unshare >/dev/null || skip "no unshare"
    "$CUDAENV" -q install 11.8 --no-cudnn 2>/dev/null
    sha=$(sha256sum "$UPSTREAM/$RUN118" | cut -c1-64)
    [ -f "$CUDAENV_ROOT/cache/$sha" ]
    mkdir -p "$T/mnt"
    # DIR on another filesystem (a tmpfs), so the cached file is copied, not
    # hard-linked; in a pid namespace cudaenv is pid 3 (bash 1, python 2), so
    # a name made from the pid is known in advance: <sha>.tmp-1 ... -64 point
    # at the victim.  Root refuses the planted links (exit 6) or steps around
    # them; it never writes through one.
    run unshare -m -p -f --mount-proc bash -c '
        mount -t tmpfs -o mode=0755 tmpfs "$1" || exit 77
        python3 -c "
import os, sys
d = sys.argv[1] + \"/site/.cudaenv-mirror/cache\"
os.makedirs(d)
for i in range(1, 65): os.symlink(sys.argv[2], \"%s/%s.tmp-%d\" % (d, sys.argv[3], i))
" "$1" "$2" "$3"
        "$4" mirror 11.8 --no-cudnn --to "$1/site"; echo "rc=$?"' _ "$T/mnt" "$VICTIM/shadow" "$sha" "$CUDAENV"
    [ "$status" -ne 77 ] || skip "cannot mount a tmpfs here"
    [[ "$output" == *"rc=0"* || "$output" == *"rc=6"* ]] || { echo "$output"; false; }
    victim_untouched
}
