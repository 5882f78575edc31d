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

# does running the light binary with "$@" open the manifest?
opens_manifest() {
    strace -f -qq -e trace=open,openat -o "$T/st" "$CUDAENV" "$@" >/dev/null 2>&1 || true
    grep -qF "\"$CUDAENV_MANIFEST\"" "$T/st"
}

@test "install writes the index; uninstall drops what no installed toolchain satisfies" {
    run "$CUDAENV" -q install tf-2.14
    [ "$status" -eq 0 ]
    [ "$(head -1 "$IDX")" = "cudaenv-index 1" ]
    grep -qx "manifest [0-9]*:$(stat -c '%i %s' "$T/manifest.json") [0-9.]* $T/manifest.json" "$IDX"
    [ "$(grep '^tf ' "$IDX")" = "tf 2.14 11.8.0 8.7.0.84" ]
    "$CUDAENV" -q install tf-2.12
    [ "$(grep '^tf ' "$IDX" | sort | tr '\n' ';')" = "tf 2.12 11.8.0 8.6.0.163;tf 2.14 11.8.0 8.7.0.84;" ]
    "$CUDAENV" -q uninstall 11.8.0+cudnn8.7.0.84
    [ "$(grep '^tf ' "$IDX")" = "tf 2.12 11.8.0 8.6.0.163" ]
    "$CUDAENV" -q uninstall tf-2.12
    [ ! -e "$IDX" ]   # nothing left to index: no file, versions/ is empty
    [ -z "$(ls -A "$CUDAENV_ROOT/versions")" ]
}

@test "use/env/exec/current/prefix/global --system resolve an installed tf-X.Y without opening the manifest; same results" {
    command -v strace >/dev/null || skip "no strace"
    "$CUDAENV" -q install tf-2.14
    P=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    ! opens_manifest env tf-2.14 --shell bash
    ! opens_manifest use tf-2.14 --shell bash -q
    ! opens_manifest exec tf-2.14 -- true
    ! opens_manifest prefix tf-2.14
    ! opens_manifest prefix tensorflow==2.14.1
    ! opens_manifest prefix tf-2.14+cudnn8.7
    ! opens_manifest global tf-2.14 --system --dry-run
    run "$CUDAENV" global tf-2.14 --system --dry-run
    [ "$status" -eq 0 ] && [[ "$output" == *"11.8.0+cudnn8.7.0.84"* ]]
    echo tf-2.14 > "$T/.cuda-version"
    (cd "$T" && ! opens_manifest current)
    (cd "$T" && ! opens_manifest env --shell bash)
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
    [ "$status" -eq 3 ] && [[ "$stderr" == *"tf-2.15 is not installed"* ]]
    run --separate-stderr "$CUDAENV" prefix tf-2.99
    [ "$status" -eq 3 ] && [[ "$stderr" == *"TensorFlow 2.99 is not in the manifest"* ]]
    run --separate-stderr "$CUDAENV" prefix tf-2.14+cudnn8.6
    [ "$status" -eq 3 ] && [[ "$stderr" == *"not installed"* ]]
}

@test "a missing, corrupt or foreign index, or an edited manifest, falls back to the manifest" {
    command -v strace >/dev/null || skip "no strace"
    "$CUDAENV" -q install tf-2.14
    P=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    cp "$IDX" "$T/good"
    rm "$IDX"
    opens_manifest prefix tf-2.14
    [ "$("$CUDAENV" prefix tf-2.14)" = "$P" ]
    printf 'garbage\n\x01\x02\n' > "$IDX"
    opens_manifest prefix tf-2.14
    [ "$("$CUDAENV" prefix tf-2.14)" = "$P" ]
    # a good header but a bad record: none of it is trusted
    { head -2 "$T/good"; echo "tf 2.14 12.2.2"; } > "$IDX"
    opens_manifest prefix tf-2.14
    [ "$("$CUDAENV" prefix tf-2.14)" = "$P" ]
    # an index built for another manifest (or the manifest edited since) is not used,
    # even when it would give another answer
    "$CUDAENV" -q install 12.2.2 --no-cudnn
    sed 's/^tf 2.14 .*/tf 2.14 12.2.2 -/' "$T/good" > "$IDX"
    ! opens_manifest prefix tf-2.14
    [ "$("$CUDAENV" prefix tf-2.14)" = "$CUDAENV_ROOT/versions/12.2.2" ]   # the index is used while its manifest is unchanged ...
    touch -d '1 minute ago' "$T/manifest.json"
    opens_manifest prefix tf-2.14
    [ "$("$CUDAENV" prefix tf-2.14)" = "$P" ]                              # ... and ignored once it changed
    cp "$T/manifest.json" "$T/other.json"
    cp "$T/good" "$IDX"
    CUDAENV_MANIFEST=$T/other.json opens_manifest prefix tf-2.14
}
