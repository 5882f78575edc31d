#!/usr/bin/env bats
# Disk and cache: list shows what each toolchain costs (own vs shared bytes),
# cache dir|list|clean|prune [--dry-run] manage downloads and unpacked trees.
load ../lib/common
load ../lib/server
load ../lib/mirror
bats_require_minimum_version 1.5.0

setup_file() {
    mirror_setup_file
    source "$BATS_TEST_DIRNAME/../lib/redist.sh"
    fx_redist "$MIRROR" 11.8.0   # pinned only by the component test
}

setup() {
    common_setup
    mirror_serve
    "$CUDAENV" -q install tf-2.14 tf-2.12 2>/dev/null
}

teardown() { mirror_teardown; }

@test "list: own and shared bytes per toolchain (tf-2.12 and tf-2.14 share CUDA 11.8's files)" {
    run --separate-stderr "$CUDAENV" list
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == *"11.8.0+cudnn8.6.0.163  ["*" own, "*" shared]"* ]]
    run "$CUDAENV" list --json
    python3 - "$output" <<'PY'
import json, sys
t = {x["name"]: x for x in json.loads(sys.argv[1])["toolchains"]}
a, b = t["11.8.0+cudnn8.6.0.163"], t["11.8.0+cudnn8.7.0.84"]
assert a["shared_bytes"] > 0 and a["shared_bytes"] == b["shared_bytes"], (a, b)
assert a["unique_bytes"] > 0 and b["unique_bytes"] > 0, (a, b)
PY
}

# sizes_json [ARGS]: "name unique shared" per toolchain of list --json
sizes_json() {
    "$CUDAENV" list --json "$@" | python3 -c 'import json,sys
for x in json.load(sys.stdin)["toolchains"]: print(x["name"], x["unique_bytes"], x["shared_bytes"])'
}

@test "list reads each toolchain's usage record (no walk of its files); --sizes walks; a copied tree is walked; du agrees" {
    A=$CUDAENV_ROOT/versions/11.8.0+cudnn8.6.0.163 B=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    [ -s "$A/.cudaenv-usage" ] && [ -s "$B/.cudaenv-usage" ] || false
    sizes_json > "$T/rec"
    sizes_json --sizes > "$T/walk"
    cmp "$T/rec" "$T/walk" || { cat "$T/rec" "$T/walk"; false; }
    # the bytes agree with du's count of the same files (apparent sizes, each inode once)
    own_a=$(awk '$1 == "11.8.0+cudnn8.6.0.163" {print $2}' "$T/rec")
    sh_a=$(awk '$1 == "11.8.0+cudnn8.6.0.163" {print $3}' "$T/rec")
    [ "$((own_a + sh_a))" -eq "$(find "$A" -type f -not -name .cudaenv-usage -printf '%i %s\n' | sort -u | awk '{s += $2} END {print s}')" ]
    # list opens no file under the trees (strace: no walk); the records were
    # summed by the first list, kept in versions/.cudaenv-sizes (below)
    if command -v strace >/dev/null; then
        rm -f "$CUDAENV_ROOT/versions/.cudaenv-sizes"
        ASAN_OPTIONS=detect_leaks=0 strace -f -e trace=openat,open,getdents64 -o "$T/st" "$CUDAENV" list >/dev/null   # LSan cannot run under ptrace
        ! grep -E "$A/(bin|lib64|include|targets)" "$T/st" || false
        grep -q "$A/.cudaenv-usage" "$T/st"
    fi
    # a file grown by hand: the record keeps the installed size, --sizes sees it
    f=$(find "$A" -type f -name 'libcudnn*' | head -1)
    rm -f "$f.tmp"; cp "$f" "$f.tmp"; head -c 1000 /dev/zero >> "$f.tmp"; mv "$f.tmp" "$f"
    cmp "$T/rec" <(sizes_json) || false
    ! cmp -s "$T/rec" <(sizes_json --sizes) || false
    # a tree restored by copy has other inodes: its record no longer names it, it is walked
    mv "$A" "$A.old"; cp -a "$A.old" "$A"; rm -rf "$A.old"
    sizes_json > "$T/copied"
    grep -q "^11.8.0+cudnn8.6.0.163 [0-9]* 0\$" "$T/copied" || { cat "$T/copied"; false; }   # shares nothing now
    cmp "$T/copied" <(sizes_json --sizes)
    # uninstalling one: what the other shared becomes its own, from its record
    "$CUDAENV" -q uninstall 11.8.0+cudnn8.6.0.163
    sizes_json > "$T/one"
    own_b=$(awk '{print $2}' "$T/one"); sh_b=$(awk '{print $3}' "$T/one")
    [ "$sh_b" -eq 0 ] && [ "$own_b" -gt 0 ] || false
    cmp "$T/one" <(sizes_json --sizes)
}

@test "cache dir and list: downloads named and marked used, unpacked trees too" {
    run "$CUDAENV" cache dir
    [ "$output" = "$CUDAENV_ROOT/cache" ]
    run --separate-stderr "$CUDAENV" cache list
    [ "$status" -eq 0 ]
    [[ "$output" == *"download"*"yes"*"cuda_11.8.0_520.61.05_linux.run"* ]]
    [[ "$output" == *"cudnn-linux-x86_64-8.6.0.163_cuda11-archive.tar.xz"* ]]
    [[ "$output" == *"unpacked"*"yes"*"cuda-11.8.0"* ]]
    [[ "${lines[-1]}" == "total "*"; 0 B not used by any toolchain"* ]]
}

@test "cache prune [--dry-run]: removes only what no toolchain uses; clean removes every download" {
    "$CUDAENV" -q uninstall 11.8.0+cudnn8.6.0.163
    touch "$CUDAENV_ROOT/cache/$(printf 'a%.0s' {1..64}).part"
    run --separate-stderr "$CUDAENV" cache prune --dry-run
    [ "$status" -eq 0 ]
    [[ "$output" == *"would remove download cudnn-linux-x86_64-8.6.0.163_cuda11-archive.tar.xz"* ]]
    [[ "$output" == *"would remove partial"* ]]
    [[ "$output" != *"cuda_11.8.0"* ]]
    [ -n "$(ls "$CUDAENV_ROOT"/cache/*.part)" ]
    before=$(ls "$CUDAENV_ROOT/cache" | wc -l)
    run --separate-stderr "$CUDAENV" cache prune
    [ "$status" -eq 0 ]
    [ "$(ls "$CUDAENV_ROOT/cache" | wc -l)" -eq $((before - 2)) ]
    [[ "$stderr" == *"freed 2 items"* ]]
    # what is used stays: the remaining toolchain reinstalls offline
    run "$CUDAENV" install tf-2.14 --force --offline
    [ "$status" -eq 0 ]
    # clean removes downloads only, and looks into no tree for it
    if command -v strace >/dev/null; then
        ASAN_OPTIONS=detect_leaks=0 strace -f -y -e trace=openat,getdents64 -o "$T/st" "$CUDAENV" cache clean --dry-run >/dev/null 2>&1
        grep -q 'getdents64(.*/cache>' "$T/st" || { cat "$T/st"; false; }
        ! grep -E 'pkgs/(cuda|cudnn)-[^">/]*[">/]|pkgs/\.cudaenv-sizes' "$T/st" || false
    fi
    run --separate-stderr "$CUDAENV" cache clean
    [ "$status" -eq 0 ]
    [[ "$output" == *"removed download cuda_11.8.0_520.61.05_linux.run"* && "$output" != *unpacked* ]] || { echo "$output"; false; }
    [ -z "$(ls "$CUDAENV_ROOT/cache")" ]
    [ -d "$CUDAENV_ROOT/pkgs/cuda-11.8.0" ]
    run "$CUDAENV" install tf-2.12 --offline
    [ "$status" -eq 3 ]
}

@test "cache list names a download no receipt names by what it was fetched as (cache/.cudaenv-names), with no manifest; a forged name is escaped; the file starts over past its bound" {
    local names=$CUDAENV_ROOT/cache/.cudaenv-names cudnn=cudnn-linux-x86_64-8.6.0.163_cuda11-archive.tar.xz
    grep -q " cuda_11.8.0_520.61.05_linux.run$" "$names" && grep -q " $cudnn$" "$names" || { cat "$names"; false; }
    while read -r sha name; do   # each line: a download's sha256 and its URL's file name
        [ "$(sha256sum < "$CUDAENV_ROOT/cache/$sha" | cut -c1-64)" = "$sha" ] && [[ "$name" == *.* ]] || { echo "bad line: $sha $name"; false; }
    done < "$names"
    "$CUDAENV" -q uninstall 11.8.0+cudnn8.6.0.163
    local sha evil
    sha=$(awk -v n="$cudnn" '$2 == n {print $1}' "$names")
    : > "$CUDAENV_ROOT/cache/$sha.part"
    evil=$(printf 'c%.0s' {1..64})
    printf x > "$CUDAENV_ROOT/cache/$evil"
    printf '%s evil\e[2J\n' "$evil" >> "$names"
    # no manifest to read: the names come from the file alone
    CUDAENV_MANIFEST=$T/none.json run --separate-stderr "$CUDAENV" cache list
    [ "$status" -eq 0 ]
    [[ "$output" == *"download"*"no     $cudnn (${sha:0:16}...)"* && "$output" == *"partial"*"no     $cudnn ("* ]] || { echo "$output"; false; }
    [[ "$output" == *'no     evil\x1b[2J (cccc'* && "$output" != *$'\e'* ]] || { echo "$output" | od -c | head; false; }
    # without the file, the manifest names what it lists
    mv "$names" "$T/names"
    run --separate-stderr "$CUDAENV" cache list
    [[ "$output" == *"download"*"no     $cudnn ("* && "$output" == *"no     $evil"* ]] || { echo "$output"; false; }
    # past its bound the file starts over with the next download's line
    head -c 300000 /dev/zero | tr '\0' x > "$names"
    rm "$CUDAENV_ROOT/cache/$sha" "$CUDAENV_ROOT/cache/$sha.part"
    "$CUDAENV" -q install tf-2.12 2>/dev/null
    [ "$(cat "$names")" = "$sha $cudnn" ] || { head -c 300 "$names"; false; }
}

@test "components: the cache knows every file a receipt names; prune keeps them, frees only unlinked blocks; install --offline after prune" {
    source "$TESTS_DIR/lib/redist.sh"
    export CUDAENV_ROOT=$T/croot
    fx_redist_manifest "$CUDAENV_MANIFEST" "$MIRROR" 11.8.0 "$SERVER_URL"
    "$CUDAENV" -q install tf-2.14
    P=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert len(r["components"]) == 8, r' "$P/.cudaenv-receipt.json"
    run "$CUDAENV" cache list --json
    [ "$status" -eq 0 ]
    python3 - "$output" <<'PY'
import json, sys
items = json.loads(sys.argv[1])["items"]
unused = [i["name"] for i in items if not i["used"]]
assert not unused, unused
assert sum(i["kind"] == "download" for i in items) == 10, items          # JSON + 8 components + cuDNN
assert sum(i["kind"] == "unpacked" for i in items) == 9, items           # 8 component trees + cuDNN's
assert any(i["file"].startswith("libcublas-linux-x86_64") for i in items), items
PY
    run --separate-stderr "$CUDAENV" cache prune
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"freed 0 items"* ]] || { echo "$output $stderr"; false; }
    [ "$(ls "$CUDAENV_ROOT/cache" | wc -l)" -eq 10 ]
    # the CI job's reinstall: nothing to download, nothing missing
    : > "$SERVER_LOG"
    run "$CUDAENV" install tf-2.14 --force --offline
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ "$(server_requests GET)" -eq 0 ]

    # unused now; one download also hard-linked elsewhere: removing it frees nothing
    "$CUDAENV" -q uninstall 11.8.0+cudnn8.7.0.84
    linked=$(ls "$CUDAENV_ROOT/cache" | head -1)
    ln "$CUDAENV_ROOT/cache/$linked" "$T/kept-elsewhere"
    run "$CUDAENV" cache list --json
    python3 - "$output" "$linked" "$CUDAENV_ROOT/cache" <<'PY'
import json, os, sys
items, linked, cache = json.loads(sys.argv[1])["items"], sys.argv[2], sys.argv[3]
for i in items:
    if i["kind"] != "download":
        continue
    st = os.stat(os.path.join(cache, i["name"]))
    want = 0 if i["name"] == linked else st.st_blocks * 512
    assert i["freeable"] == want and i["size"] > 0, (i, want)
    assert not i["used"], i
PY
    run --separate-stderr "$CUDAENV" cache prune
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"freed 10 items"* ]] || { echo "$stderr"; false; }
    [ "$(ls "$CUDAENV_ROOT/cache" | wc -l)" -eq 0 ]
    cmp "$T/kept-elsewhere" "$MIRROR/$(cd "$MIRROR" && ls compute/cuda/redist/*/linux-x86_64/* compute/cudnn/redist/cudnn/linux-x86_64/* compute/cuda/redist/*.json | while read -r f; do [ "$(sha256sum < "$MIRROR/$f" | cut -c1-64)" = "$linked" ] && echo "$f"; done)"
}

@test "cache list/prune print names with a newline or ESC escaped, on their own line (no forged row, nothing sent to the terminal)" {
    local evil=$'evil\n\e[2Jdownload 9.9 GiB  yes    forged' tree=$'cuda-evil\e]52;c;Zm9v\a'
    printf x > "$CUDAENV_ROOT/cache/$evil"
    mkdir "$CUDAENV_ROOT/pkgs/$tree"
    local esc='evil\x0a\x1b[2Jdownload 9.9 GiB  yes    forged' tesc='cuda-evil\x1b]52;c;Zm9v\x07'
    run --separate-stderr "$CUDAENV" cache list
    [ "$status" -eq 0 ]
    [[ "$output" == *"download"*"no     $esc"* && "$output" == *"unpacked"*"no     $tesc"* ]] || { echo "$output" | od -c | head -40; false; }
    [[ "$output" != *$'\e'* && "$output" != *$'\a'* ]] || false
    run ! grep -q '^download 9.9 GiB' <<<"$output"
    run --separate-stderr "$CUDAENV" cache list --json
    [ "$status" -eq 0 ]
    python3 -c 'import json, sys; n = {i["name"] for i in json.load(sys.stdin)["items"]}; assert set(sys.argv[1:]) <= n, n' \
        "$evil" "$tree" <<<"$output"
    for dry in --dry-run ""; do
        run --separate-stderr "$CUDAENV" cache prune $dry
        [ "$status" -eq 0 ] || { echo "$stderr"; false; }
        [[ "$output" == *"remove"*" download $esc (1 B)"* && "$output" == *"remove"*" unpacked $tesc ("* ]] || { echo "$output" | od -c | head -40; false; }
        [[ "$output" != *$'\e'* && "$output" != *$'\a'* ]] || false
    done
    [ ! -e "$CUDAENV_ROOT/cache/$evil" ] && [ ! -e "$CUDAENV_ROOT/pkgs/$tree" ]
}

@test "cache: an unknown action is a usage error naming the four" {
    run --separate-stderr "$CUDAENV" cache purge
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"dir, list, clean or prune"* ]]
}

@test "list keeps its sums in versions/.cudaenv-sizes: read back while nothing changed (no record opened, the receipts read only up to their file list); summed again when a record changes or a toolchain goes; a line that does not match is never used; a directory at its name changes nothing" {
    A=$CUDAENV_ROOT/versions/11.8.0+cudnn8.6.0.163 B=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    M=$CUDAENV_ROOT/versions/.cudaenv-sizes
    sizes_json --sizes > "$T/walk"
    [ ! -e "$M" ]   # a walk keeps nothing
    sizes_json > "$T/first"
    cmp "$T/walk" "$T/first" && [ -s "$M" ] || { cat "$T/walk" "$T/first"; false; }
    # the magic, the two toolchains' record keys, the end of them, each toolchain's sums
    [ "$(head -1 "$M")" = "cudaenv-sizes 2" ] && [ "$(wc -l < "$M")" -eq 6 ] && [ "$(sed -n 4p "$M")" = . ] || { cat "$M"; false; }
    if command -v strace >/dev/null; then
        # a receipt with thousands of files: read up to its list, not through it
        python3 - "$B/.cudaenv-receipt.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["files"] += [{"path": "pad/f%d" % i, "size": 1, "sha256": "0" * 64} for i in range(4000)]
json.dump(r, open(sys.argv[1], "w"), indent="\t")
PY
        [ "$(stat -c %s "$B/.cudaenv-receipt.json")" -gt 400000 ]
        ASAN_OPTIONS=detect_leaks=0 strace -f -y -e trace=openat,read,pread64 -o "$T/st" "$CUDAENV" list >/dev/null
        grep -q "openat(.*\.cudaenv-sizes" "$T/st" || { cat "$T/st"; false; }
        ! grep -q "openat(.*\.cudaenv-usage" "$T/st" || { grep usage "$T/st"; false; }
        got=$(grep -F "<$B/.cudaenv-receipt.json>" "$T/st" | grep -E '^[0-9]+ +(read|pread64)\(' | sed -E 's/.*= ([0-9]+)$/\1/' | paste -sd+ | bc)
        echo "# bytes read of a $(stat -c %s "$B/.cudaenv-receipt.json")-byte receipt: $got" >&3
        [ "$got" -lt 65536 ] || { grep receipt "$T/st"; false; }
        cmp "$T/first" <(sizes_json) || false
    fi
    # a header whose key does not match (another record's inode): its sums never used, summed again, rewritten
    sed -i '2s/^\([^ ]* [0-9]* [0-9]*\) [0-9]*/\1 1/' "$M"
    sed -i '5s/[0-9]* [0-9]*$/1 2/' "$M"
    grep -q ' 1 2$' "$M" || { cat "$M"; false; }
    cmp "$T/first" <(sizes_json) || false
    ! grep -q ' 1 2$' "$M" || { cat "$M"; false; }
    # a record rewritten (install and adopt write them): summed again
    cp "$A/.cudaenv-usage" "$T/u" && mv "$T/u" "$A/.cudaenv-usage"
    cmp "$T/first" <(sizes_json) || false
    # a directory at the sums' name: nothing kept, nothing said, the same sums
    rm -f "$M" && mkdir "$M"
    run --separate-stderr "$CUDAENV" list --json
    [ "$status" -eq 0 ] && [ -z "$stderr" ] || { echo "$stderr"; false; }
    cmp "$T/first" <(sizes_json) && [ -d "$M" ] || false
    rmdir "$M"
    # one toolchain goes: the other's shared bytes become its own
    sizes_json > /dev/null && [ -s "$M" ]
    "$CUDAENV" -q uninstall 11.8.0+cudnn8.6.0.163
    sizes_json > "$T/one"
    # (B's receipt grew by hand above: its record, and so list, keep the installed size)
    want=$(awk '$1 == "11.8.0+cudnn8.7.0.84" {print $1, $2 + $3, 0}' "$T/first")
    [ "$(cat "$T/one")" = "$want" ] || { cat "$T/one"; echo "want $want"; false; }
}

# cache list --json as "kind name size freeable used" lines
cache_json() {
    "$CUDAENV" cache list --json "$@" | python3 -c 'import json,sys
for i in json.load(sys.stdin)["items"]: print(i["kind"], i["name"], i["size"], i["freeable"], i["used"])'
}

@test "cache list keeps the trees' sums in pkgs/.cudaenv-sizes: no tree walked while nothing changed; summed again when a toolchain goes or a tree is replaced; a line that does not match is never used; --sizes and prune walk and keep nothing" {
    K=$CUDAENV_ROOT/pkgs/.cudaenv-sizes
    run --separate-stderr "$CUDAENV" cache prune --sizes
    [ "$status" -eq 2 ] && [[ "$stderr" == *"--sizes goes with list"* ]] || { echo "$stderr"; false; }
    cache_json --sizes > "$T/walk"
    [ ! -e "$K" ]   # a walk keeps nothing
    cache_json > "$T/first"
    cmp "$T/walk" "$T/first" && [ -s "$K" ] || { cat "$T/walk" "$T/first"; false; }
    # the magic, the two toolchains' record keys, the end of them, the three trees
    [ "$(head -1 "$K")" = "cudaenv-pkgs-sizes 2" ] && [ "$(wc -l < "$K")" -eq 7 ] || { cat "$K"; false; }
    grep -q '^cuda-11\.8\.0 ' "$K" || { cat "$K"; false; }
    if command -v strace >/dev/null; then
        ASAN_OPTIONS=detect_leaks=0 strace -f -y -e trace=openat,getdents64 -o "$T/st" "$CUDAENV" cache list >/dev/null
        grep -q "openat(.*pkgs/\.cudaenv-sizes" "$T/st" || { cat "$T/st"; false; }
        ! grep -E 'pkgs/(cuda|cudnn)-[^">/]*[">/]' "$T/st" | grep -v '\.sha256\.json' || { grep pkgs "$T/st"; false; }
        cmp "$T/first" <(cache_json) || false
    fi
    # a line whose key does not match (another inode): never used, the tree walked, the line rewritten
    sed -i -E 's/^(cuda-11\.8\.0 [0-9]+) [0-9]+ (.*) [0-9]+ [0-9]+$/\1 1 \2 1 2/' "$K"
    grep -q ' 1 2$' "$K" || { cat "$K"; false; }
    cmp "$T/first" <(cache_json) || false
    ! grep -q ' 1 2$' "$K" || { cat "$K"; false; }
    # one toolchain goes by hand (uninstall would take its unused tree along): the cuDNN tree's
    # files lose their links, and removing the tree now frees them
    f0=$(awk '$1 == "unpacked" && $2 ~ /^cudnn-8\.6/ {print $4}' "$T/first")
    [ "$f0" = 0 ] || { cat "$T/first"; false; }
    rm -rf "$CUDAENV_ROOT/versions/11.8.0+cudnn8.6.0.163"
    cache_json > "$T/one"
    cmp "$T/one" <(cache_json --sizes) || { diff "$T/one" <(cache_json --sizes); false; }
    f1=$(awk '$1 == "unpacked" && $2 ~ /^cudnn-8\.6/ {print $4}' "$T/one")
    [ -n "$f1" ] && [ "$f1" -gt 0 ] || { cat "$T/one"; false; }
    # a tree replaced by a copy (another directory, unlinked files): walked again
    mv "$CUDAENV_ROOT/pkgs/cuda-11.8.0" "$T/old-tree" && cp -a "$T/old-tree" "$CUDAENV_ROOT/pkgs/cuda-11.8.0"
    cache_json > "$T/copy"
    cmp "$T/copy" <(cache_json --sizes) || { diff "$T/copy" <(cache_json --sizes); false; }
    ! cmp -s "$T/copy" "$T/one" || false
    # prune walks (what it says it freed counts links made anywhere) and removes the unused tree's line
    run --separate-stderr "$CUDAENV" cache prune
    [ "$status" -eq 0 ]
    cache_json > /dev/null
    ! grep -q '^cudnn-8\.6' "$K" || { cat "$K"; false; }
    # a directory at the sums' name: nothing kept, nothing said, the same items
    cache_json --sizes > "$T/after"
    rm -f "$K" && mkdir "$K"
    run --separate-stderr "$CUDAENV" cache list --json
    [ "$status" -eq 0 ] && [ -z "$stderr" ] || { echo "$stderr"; false; }
    cmp "$T/after" <(cache_json) && [ -d "$K" ] || false
}
