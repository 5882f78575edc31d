#!/usr/bin/env bats
# The resolution index (versions/.index, manifest/index.h): install and
# uninstall keep it in step; use/env/exec/current resolve tf-X.Y through it
# without opening the manifest; a missing, corrupt or foreign index (another
# or an edited manifest) falls back to the manifest; results are identical.
load ../lib/common
load ../lib/mirror
bats_require_minimum_version 1.5.0

setup_file() { mirror_setup_file; }

setup() {
    common_setup
    mirror_manifest "file://$MIRROR"
    IDX=$CUDAENV_ROOT/versions/.index
}
teardown() { common_teardown; }

@test "install writes the index, keyed by the manifest's sha256: every installable TF row; uninstalling the last toolchain removes it" {
    run "$CUDAENV" -q install tf-2.14
    [ "$status" -eq 0 ]
    [ "$(head -1 "$IDX")" = "cudaenv-index 6" ]
    sha=$(sha256sum "$T/manifest.json" | cut -d' ' -f1)
    grep -qx "manifest $sha [0-9]*:$(stat -c '%i %s' "$T/manifest.json") [0-9.]* [0-9.]* $T/manifest.json" "$IDX"
    [ "$(grep '^tf ' "$IDX" | sort | tr '\n' ';')" = "tf 2.12 11.8.0 8.6.0.163;tf 2.14 11.8.0 8.7.0.84;tf 2.15 12.2.2 8.9.7.29;" ]
    "$CUDAENV" -q install tf-2.12
    "$CUDAENV" -q uninstall 11.8.0+cudnn8.7.0.84
    [ -e "$IDX" ]   # the index says what the manifest says, not what is installed
    "$CUDAENV" -q uninstall tf-2.12
    [ ! -e "$IDX" ]   # nothing left: no file, versions/ is empty
    [ -z "$(ls -A "$CUDAENV_ROOT/versions")" ]
}

@test "use/env/exec/current/prefix/global --system resolve an installed tf-X.Y without opening the manifest; same results" {
    command -v strace >/dev/null || skip "no strace"
    "$CUDAENV" -q install tf-2.14
    P=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    ! opens_manifest env tf-2.14 --shell bash || false
    ! opens_manifest use tf-2.14 --shell bash -q || false
    ! opens_manifest exec tf-2.14 -- true || false
    ! opens_manifest prefix tf-2.14 || false
    ! opens_manifest prefix tensorflow==2.14.1 || false
    ! opens_manifest prefix tf-2.14+cudnn8.7 || false
    ! opens_manifest global tf-2.14 --system --dry-run || false
    run "$CUDAENV" global tf-2.14 --system --dry-run
    [ "$status" -eq 0 ]
    [[ "$output" == *"11.8.0+cudnn8.7.0.84"* ]]
    echo tf-2.14 > "$T/.cuda-version"
    (cd "$T" && ! opens_manifest current || false)
    (cd "$T" && ! opens_manifest env --shell bash || false)
    # the same answers with and without the index
    for q in "env tf-2.14 --shell json" "prefix tf-2.14" "prefix tf-2.14+cudnn8.7"; do
        a=$("$CUDAENV" $q 2>&1); mv "$IDX" "$T/idx"
        b=$("$CUDAENV" $q 2>&1); mv "$T/idx" "$IDX"
        [ "$a" = "$b" ] || { echo "$q: '$a' vs '$b'"; false; }
    done
    [ "$("$CUDAENV" prefix tf-2.14)" = "$P" ]
    (cd "$T" && [ "$("$CUDAENV" current)" = "$("$CUDAENV" current)" ])
}

@test "specs the index does not hold read the manifest: not installed, unknown, other cuDNN" {
    command -v strace >/dev/null || skip "no strace"
    "$CUDAENV" -q install tf-2.14
    opens_manifest prefix tf-2.15
    run --separate-stderr "$CUDAENV" prefix tf-2.15
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"tf-2.15 is not installed"* ]]
    run --separate-stderr "$CUDAENV" prefix tf-2.99
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"TensorFlow 2.99 is not in the manifest"* ]]
    run --separate-stderr "$CUDAENV" prefix tf-2.14+cudnn8.6
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"not installed"* ]]
}

@test "a missing, corrupt or foreign index is rebuilt by the first command that finds it so; the next ones skip the manifest" {
    command -v strace >/dev/null || skip "no strace"
    "$CUDAENV" -q install tf-2.14
    P=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    cp "$IDX" "$T/good"
    rm "$IDX"
    opens_manifest prefix tf-2.14          # rebuilt here ...
    cmp "$IDX" "$T/good"
    ! opens_manifest prefix tf-2.14 || false        # ... so not read again
    [ "$("$CUDAENV" prefix tf-2.14)" = "$P" ]
    printf 'garbage\n\x01\x02\n' > "$IDX"
    [ "$("$CUDAENV" prefix tf-2.14)" = "$P" ]
    cmp "$IDX" "$T/good"
    # a good header but a bad record: none of it is trusted
    { head -3 "$T/good"; echo "tf 2.14 12.2.2"; } > "$IDX"
    [ "$("$CUDAENV" prefix tf-2.14)" = "$P" ]
    cmp "$IDX" "$T/good"
    # an index of other content (another sha256) under the manifest's stat key
    # is used (the key is the fast check; cudaenv never writes one) ...
    "$CUDAENV" -q install 12.2.2 --no-cudnn
    # a lookup reads only the rows it can use (issue 43: use/env cost the same at any manifest
    # size): a bad record of another kind does not send tf-2.14 to the manifest, a bad tf 2.14 does
    { cat "$T/good"; echo "cuda 99.x"; echo "fw torch broken"; } > "$IDX"
    run ! opens_manifest prefix tf-2.14
    [ "$("$CUDAENV" prefix tf-2.14)" = "$P" ]
    sed 's/^tf 2.14 .*/tf 2.14 11.8.0 8.7.x/' "$T/good" > "$IDX"
    opens_manifest prefix tf-2.14
    cmp "$IDX" "$T/good"
    # another version of the index format (cudaenv-index 1: a header of the same length): not ours, not used
    { echo "cudaenv-index 1"; sed -n 2p "$T/good"; echo "tf 2.14 12.2.2 -"; } > "$IDX"
    opens_manifest prefix tf-2.14
    [ "$("$CUDAENV" prefix tf-2.14)" = "$P" ]
    sed 's/^tf 2.14 .*/tf 2.14 12.2.2 -/; s/^manifest [0-9a-f]* /manifest '"$(printf '0%.0s' {1..64})"' /' "$T/good" > "$IDX"
    [ "$("$CUDAENV" prefix tf-2.14)" = "$CUDAENV_ROOT/versions/12.2.2" ]
    # ... until the stat key moves: then the content decides, and it differs
    touch -d '1 minute ago' "$T/manifest.json"
    [ "$("$CUDAENV" prefix tf-2.14)" = "$P" ]
    grep -qx 'tf 2.14 11.8.0 8.7.0.84' "$IDX"
    # another manifest file: its own index
    cp "$T/manifest.json" "$T/other.json"
    CUDAENV_MANIFEST=$T/other.json opens_manifest prefix tf-2.14
    grep -q "^manifest $(sha256sum "$T/manifest.json" | cut -d' ' -f1) .* $T/other.json\$" "$IDX"
    CUDAENV_MANIFEST=$T/other.json run ! opens_manifest prefix tf-2.14
}

@test "the index is current for what located its manifest (issue 43): another config file, CUDAENV_MANIFEST or none makes it stale, never a wrong answer" {
    command -v strace >/dev/null || skip "no strace"
    "$CUDAENV" -q install tf-2.14
    "$CUDAENV" -q install tf-2.12
    P14=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84 P12=$CUDAENV_ROOT/versions/11.8.0+cudnn8.6.0.163
    # m2: the same releases, the rows of 2.12 and 2.14 swapped
    sed 's/"2\.14"/"2.XX"/g; s/"2\.12"/"2.14"/g; s/"2\.XX"/"2.12"/g' "$T/manifest.json" > "$T/m2.json"
    M1=$T/manifest.json
    unset CUDAENV_MANIFEST
    mkdir -p "$HOME/.config/cudaenv"
    printf '{"manifest": "%s"}\n' "$M1" > "$HOME/.config/cudaenv/config.json"
    [ "$("$CUDAENV" prefix tf-2.14)" = "$P14" ]
    grep -q "^manifest .* $M1\$" "$IDX"
    # answered from the index: neither the manifest nor the config file is opened
    # (|| true: LeakSanitizer exits non-zero under ptrace in make check-asan, as opens_manifest knows)
    strace -f -qq -e trace=open,openat -o "$T/st" "$CUDAENV" prefix tf-2.14 >/dev/null 2>&1 || true
    grep -q "versions/.index" "$T/st"   # it ran and read the index ...
    run ! grep -qe "$M1" -e config.json "$T/st"   # ... and opened neither the manifest nor a config file
    # the config file now names m2 (the manifest the index records is unchanged): m2 answers
    printf '{"manifest": "%s"}\n' "$T/m2.json" > "$HOME/.config/cudaenv/config.json"
    [ "$("$CUDAENV" prefix tf-2.14)" = "$P12" ]
    grep -q "^manifest .* $T/m2.json\$" "$IDX"
    # the environment over the config file, and back
    [ "$(CUDAENV_MANIFEST=$M1 "$CUDAENV" prefix tf-2.14)" = "$P14" ]
    [ "$("$CUDAENV" prefix tf-2.14)" = "$P12" ]
    # a site config file appearing (below the user's: the user's still decides), then the user's going
    mkdir -p "$CUDAENV_SYSROOT/etc/cudaenv"
    printf '{"manifest": "%s"}\n' "$M1" > "$CUDAENV_SYSROOT/etc/cudaenv/config.json"
    [ "$("$CUDAENV" prefix tf-2.14)" = "$P12" ]
    rm "$HOME/.config/cudaenv/config.json"
    [ "$("$CUDAENV" prefix tf-2.14)" = "$P14" ]
    # the answers agree with the manifest's own: info
    run "$CUDAENV" info tf-2.14 --json
    [[ "$output" == *'"8.7.0.84"'* ]]
}

@test "an in-place edit that keeps size, mtime and inode is noticed: use agrees with info" {
    "$CUDAENV" -q install tf-2.14
    "$CUDAENV" -q install tf-2.12
    [ "$("$CUDAENV" prefix tf-2.14)" = "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84" ]
    ino=$(stat -c '%i %s' "$T/manifest.json"); mt=$(stat -c %y "$T/manifest.json")
    # swap the rows of 2.12 and 2.14 (same bytes count), written in place, mtime put back
    python3 - "$T/manifest.json" <<'PY'
import sys
p = sys.argv[1]
b = open(p, "rb").read().replace(b'"2.14"', b'"2.XX"').replace(b'"2.12"', b'"2.14"').replace(b'"2.XX"', b'"2.12"')
with open(p, "r+b") as f:
    f.write(b)
PY
    touch -m -d "$mt" "$T/manifest.json"
    [ "$(stat -c '%i %s' "$T/manifest.json")" = "$ino" ]
    [ "$(stat -c %y "$T/manifest.json")" = "$mt" ]
    run "$CUDAENV" info tf-2.14 --json
    [[ "$output" == *'"8.6.0.163"'* ]]
    [ "$("$CUDAENV" prefix tf-2.14)" = "$CUDAENV_ROOT/versions/11.8.0+cudnn8.6.0.163" ]
    grep -qx 'tf 2.14 11.8.0 8.6.0.163' "$IDX"
    [ "$("$CUDAENV" env tf-2.12 --shell json | grep -o 'cudnn8[0-9.]*' | head -1)" = "cudnn8.7.0.84" ]
}

@test "a stale index while an install holds the store lock: the prompt does not wait, resolves through the manifest" {
    "$CUDAENV" -q install tf-2.14
    rm "$IDX"
    python3 -c 'import fcntl,sys,time; f=open(sys.argv[1],"r+"); fcntl.lockf(f, fcntl.LOCK_EX); open(sys.argv[2],"w").close(); time.sleep(30)' \
        "$CUDAENV_ROOT/.lock" "$T/locked" &
    pid=$!
    while [ ! -e "$T/locked" ]; do sleep 0.05; done
    run timeout 10 "$CUDAENV" prefix tf-2.14
    kill "$pid"; wait "$pid" || true
    [ "$status" -eq 0 ]
    [ "$output" = "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84" ]
    [ ! -e "$IDX" ]   # not rebuilt without the lock
    "$CUDAENV" prefix tf-2.14 >/dev/null
    [ -e "$IDX" ]
}

@test "aliases: tf-latest and tf-MAJOR (newest installable row), latest (newest CUDA the driver runs), through the index for use" {
    run --separate-stderr "$CUDAENV" info tf-latest
    [[ "${lines[0]}" == "tf-latest -> 12.2.2+cudnn8.9.7.29" ]]
    run --separate-stderr "$CUDAENV" info tf-2
    [[ "${lines[0]}" == "tf-2 -> 12.2.2+cudnn8.9.7.29" ]]
    run --separate-stderr "$CUDAENV" info tf-3
    [ "$status" -eq 3 ]
    # latest: the driver decides (no driver: the newest release)
    mkdir -p "$CUDAENV_SYSROOT/proc/driver/nvidia"
    echo 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  530.30.02  Wed Feb 22 04:11:39 UTC 2023' \
        > "$CUDAENV_SYSROOT/proc/driver/nvidia/version"
    run --separate-stderr "$CUDAENV" info latest
    [[ "${lines[0]}" == "latest -> 11.8.0+cudnn8."* ]] || { echo "$output"; false; }
    sed -i 's/530.30.02/550.54.14/' "$CUDAENV_SYSROOT/proc/driver/nvidia/version"
    run --separate-stderr "$CUDAENV" info latest
    [[ "${lines[0]}" == "latest -> 12.2.2+cudnn8.9.7.29" ]]
    "$CUDAENV" -q install tf-2.14
    "$CUDAENV" -q install tf-latest
    P=$CUDAENV_ROOT/versions/12.2.2+cudnn8.9.7.29
    [ "$("$CUDAENV" prefix tf-latest)" = "$P" ]
    [ "$("$CUDAENV" prefix tf-2)" = "$P" ]
    [ "$("$CUDAENV" prefix latest)" = "$P" ]
    if command -v strace >/dev/null; then
        ! opens_manifest prefix tf-latest || false
        ! opens_manifest env tf-2 --shell bash || false
        ! opens_manifest prefix latest || false
    fi
    grep -qx 'cuda 12.2.2 535.104.05 linux-x86_64' "$IDX"
    # the driver moves: latest follows it without the manifest
    sed -i 's/550.54.14/530.30.02/' "$CUDAENV_SYSROOT/proc/driver/nvidia/version"
    "$CUDAENV" -q install latest
    [[ "$("$CUDAENV" prefix latest)" == "$CUDAENV_ROOT/versions/11.8.0+cudnn8."* ]]
}

@test "--driver VER and CUDAENV_DRIVER_VERSION: latest is the newest CUDA the planned driver runs, not this machine's" {
    # this machine (a login node) has no driver: latest would be the newest release
    run --separate-stderr "$CUDAENV" --driver 530.30.02 info latest
    [[ "${lines[0]}" == "latest -> 11.8.0+cudnn8."* ]] || { echo "$output"; false; }
    run --separate-stderr "$CUDAENV" info latest --driver=550.54.14
    [[ "${lines[0]}" == "latest -> 12.2.2+cudnn8.9.7.29" ]] || { echo "$output"; false; }
    CUDAENV_DRIVER_VERSION=530.30.02 run --separate-stderr "$CUDAENV" info latest
    [[ "${lines[0]}" == "latest -> 11.8.0+cudnn8."* ]] || { echo "$output"; false; }
    # the plan wins over the machine's own driver, for install and the index alike
    mkdir -p "$CUDAENV_SYSROOT/proc/driver/nvidia"
    echo 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Wed Feb 22 04:11:39 UTC 2023' \
        > "$CUDAENV_SYSROOT/proc/driver/nvidia/version"
    CUDAENV_DRIVER_VERSION=530.30.02 "$CUDAENV" -q install latest
    [[ "$(CUDAENV_DRIVER_VERSION=530.30.02 "$CUDAENV" prefix latest)" == "$CUDAENV_ROOT/versions/11.8.0+cudnn8."* ]]
    run "$CUDAENV" prefix latest
    [ "$status" -ne 0 ]   # this machine's latest (12.2.2) is not installed
    # a value that is no driver version: a usage error naming it, nothing resolved
    CUDAENV_DRIVER_VERSION=latest run --separate-stderr "$CUDAENV" info 12.2
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"CUDAENV_DRIVER_VERSION 'latest' is not an NVIDIA driver version"* ]]
    run --separate-stderr "$CUDAENV" info 12.2 --driver 550.x
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"--driver '550.x' is not an NVIDIA driver version"* ]]
}

@test "a manifest edited in place within the same second, to the same size: the index is not used; prefix/env agree with info" {
    "$CUDAENV" -q install tf-2.14
    "$CUDAENV" -q install tf-2.15
    [ "$("$CUDAENV" prefix tf-2.14)" = "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84" ]
    local sec nsec ino
    sec=$(stat -c %Y "$CUDAENV_MANIFEST"); nsec=$(stat -c %y "$CUDAENV_MANIFEST" | sed 's/.*\.\([0-9]*\) .*/\1/')
    ino=$(stat -c '%i %s' "$CUDAENV_MANIFEST")
    # tf 2.14 and 2.15 swap their toolchains: the same bytes, reordered, in the same inode
    python3 - "$CUDAENV_MANIFEST" <<'PY'
import sys
p = sys.argv[1]
t = open(p).read()
t = t.replace('"2.14": {', '"@@@@": {').replace('"2.15": {', '"2.14": {').replace('"@@@@": {', '"2.15": {')
with open(p, "r+") as f:
    f.write(t)
PY
    [ "$nsec" = 500000000 ] && other=250000000 || other=500000000
    touch -d "@$sec.$other" "$CUDAENV_MANIFEST"
    [ "$(stat -c '%i %s' "$CUDAENV_MANIFEST")" = "$ino" ] && [ "$(stat -c %Y "$CUDAENV_MANIFEST")" = "$sec" ] || false
    "$CUDAENV" info tf-2.14 | grep -q '12\.2\.2'
    [ "$("$CUDAENV" prefix tf-2.14)" = "$CUDAENV_ROOT/versions/12.2.2+cudnn8.9.7.29" ]
    "$CUDAENV" env tf-2.14 --shell dotenv | grep -q "versions/12.2.2+cudnn8.9.7.29/bin"
    [ "$("$CUDAENV" prefix tf-2.15)" = "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84" ]
}

@test "the index is kept quietly: no warning when it is written or removed; one naming it when it cannot be written (the install still succeeds)" {
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] && [ -f "$IDX" ] || false
    [[ "$output" != *"resolution index"* ]] || { echo "$output"; false; }
    run "$CUDAENV" uninstall tf-2.14
    [ "$status" -eq 0 ] && [ ! -e "$IDX" ] || false
    [[ "$output" != *"resolution index"* ]] || { echo "$output"; false; }
    # a directory where the index goes: the rename over it fails, the install does not
    mkdir -p "$IDX/x"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"warning: cannot update the resolution index (specs resolve through the manifest instead)"* ]] || { echo "$output"; false; }
    [ "$("$CUDAENV" prefix tf-2.14)" = "$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84" ]
}

# info SPEC with the index current, then with the index out of use (a
# directory: neither read nor rebuilt; the slice is then cut from the whole
# text) into $T/out.index and $T/out.whole, text and --json for each spec
info_one() {
    local rc=0
    "$CUDAENV" info "$1" 2>&1 || rc=$?
    echo "rc=$rc"; rc=0
    "$CUDAENV" info "$1" --json 2>&1 || rc=$?
    echo "rc=$rc"
}
info_both() {
    : > "$T/out.index"; : > "$T/out.whole"
    for s in "$@"; do
        info_one "$s" >> "$T/out.index"
    done
    rm -f "$IDX"; mkdir "$IDX"
    for s in "$@"; do
        info_one "$s" >> "$T/out.whole"
    done
    rmdir "$IDX"
}

@test "info reads only the manifest's pieces the index says where they are (issue 43): the output of the whole text for every release, at 1x and 10x; an edit that moves them is noticed" {
    command -v strace >/dev/null || skip "no strace"
    "$CUDAENV" -q install tf-2.14
    grep -q '^at - cuda [0-9]* [0-9]*$' "$IDX"
    grep -q '^at cudnn 8.7.0.84 [0-9]* [0-9]* cuda11$' "$IDX"
    # every TensorFlow row, CUDA release (and its minor), PyTorch and JAX release, and specs that are not sliced
    mapfile -t specs < <(python3 - "$T/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for k in m.get("tensorflow", {}): print("tf-" + k)
for k in m.get("cuda", {}): print(k); print(k.rsplit(".", 1)[0])
for f in ("torch", "jax"):
    for k in m.get(f, {}): print(f + "-" + k)
PY
)
    specs+=(tf-9.99 12 latest torch-2 jax-0.4)
    [ "${#specs[@]}" -gt 8 ]
    "$CUDAENV" -q prefix tf-2.14
    # with the index current the manifest is never read whole: only its pieces, by offset
    strace -f -qq -y -e trace=read,pread64 -o "$T/st" "$CUDAENV" info 12.2 >/dev/null 2>&1 || true
    grep -q "pread64([0-9]*<$T/manifest.json>, \"\\\\\"12.2.2\\\\\"" "$T/st" || { grep manifest.json "$T/st" | head; false; }
    run ! grep -q "^[0-9]* *read([0-9]*<$T/manifest.json>" "$T/st"
    info_both "${specs[@]}"
    diff "$T/out.whole" "$T/out.index"
    grep -q $'"toolchain":\t"12.2.2+cudnn8.9.7.29"' "$T/out.index"
    # ten times the manifest (bench/bigmanifest.py): the same answers
    python3 "$REPO/bench/bigmanifest.py" "$T/manifest.json" 10 > "$T/m10.json"
    export CUDAENV_MANIFEST=$T/m10.json
    "$CUDAENV" -q prefix tf-2.14
    grep -q '^at cuda 912.2.2 ' "$IDX"
    info_both tf-2.14 tf-902.14 12.2 912.2 11.8.0 "${specs[@]: -5}"
    diff "$T/out.whole" "$T/out.index"
    # an edit that shifts every offset (a member added in front): the index is stale, refreshed, not misread
    export CUDAENV_MANIFEST=$T/manifest.json
    "$CUDAENV" -q prefix tf-2.14
    python3 - "$T/manifest.json" <<'PY'
import json, sys
p = sys.argv[1]
m = json.load(open(p))
m = {"zz_note": "x" * 100, **m}
m["cuda"]["12.2.2"]["min_driver"] = "999.1"
json.dump(m, open(p, "w"), indent=1)
PY
    run "$CUDAENV" info 12.2 --json
    [ "$status" -eq 0 ]
    [[ "$output" == *$'"min_driver":\t"999.1"'* ]] || { echo "$output"; false; }
    grep -q '^at - zz_note ' "$IDX"
}
