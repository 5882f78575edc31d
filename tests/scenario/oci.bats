#!/usr/bin/env bats
# Toolchains as OCI images (issue 41): cudaenv push to a real registry
# (Debian's docker-registry on loopback, tests/lib/registry.bash), skopeo as
# the independent client (inspect, copy to dir:, the layer unpacked with tar
# gives the toolchain tree), install/pull oci:// by tag and by digest, every
# blob verified (a tampered layer or manifest in the registry's storage:
# exit 5, nothing installed), a second push uploading nothing, htpasswd
# Basic auth (CUDAENV_REGISTRY_AUTH, ~/.docker/config.json), https with a
# private CA, http only with --insecure.
load ../lib/common
load ../lib/registry
bats_require_minimum_version 1.5.0

NAME=11.8.0+cudnn8.7.0.84

setup() {
    common_setup
    export PATH=$BUILD/bin:/usr/bin:/bin
    unset CURL_CA_BUNDLE CUDAENV_REGISTRY_AUTH
    registry_need
    P=$(fx_installed 11.8.0 8.7.0.84)
    fx_receipt "$P"
}

teardown() {
    registry_stop
    common_teardown
}

# a second store, as another node
other_node() { export CUDAENV_ROOT=$T/node/root HOME=$T/node/home; mkdir -p "$HOME"; }

# push "$@" and keep the printed reference (oci://REG/REPO:TAG@sha256:...) in $PUSHED
push() {
    run --separate-stderr cudaenv push "$@"
    [ "$status" -eq 0 ] || { echo "$stderr"; return 1; }
    PUSHED=$output
    DIGEST=${PUSHED##*@}
}

@test "push: an OCI image skopeo reads, annotated, whose one gzip layer unpacks to the toolchain tree" {
    registry_start
    push "$NAME" "oci://$REG/cuda/tc:11.8" --insecure
    [[ "$PUSHED" == "oci://$REG/cuda/tc:11.8@sha256:"* ]]
    [[ "$stderr" == *"2 blobs uploaded, 0 already there"* ]]
    command -v skopeo >/dev/null || skip "no skopeo: apt-get install skopeo (tools/deps-test.txt)"
    run skopeo inspect --tls-verify=false "docker://$REG/cuda/tc:11.8"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    echo "$output" > "$T/inspect.json"
    receipt=$(sha256sum "$P/.cudaenv-receipt.json" | cut -d' ' -f1)
    python3 - "$T/inspect.json" "$DIGEST" "$receipt" <<'PY'
import json, sys
i = json.load(open(sys.argv[1]))
assert i["Digest"] == sys.argv[2], i["Digest"]
l = i["Labels"]
assert l["io.cudaenv.toolchain"] == "11.8.0+cudnn8.7.0.84" and l["io.cudaenv.cuda"] == "11.8.0", l
assert l["io.cudaenv.cudnn"] == "8.7.0.84" and l["io.cudaenv.receipt.sha256"] == sys.argv[3], l
assert i["Architecture"] == "amd64" and i["Os"] == "linux" and len(i["Layers"]) == 1, i
PY
    run skopeo inspect --raw --tls-verify=false "docker://$REG/cuda/tc:11.8"
    [ "$(python3 -c 'import json,sys; m=json.load(sys.stdin); print(m["mediaType"], m["layers"][0]["mediaType"], m["annotations"]["io.cudaenv.spec"])' <<<"$output")" = \
      "application/vnd.oci.image.manifest.v1+json application/vnd.oci.image.layer.v1.tar+gzip $NAME" ]
    run skopeo copy --src-tls-verify=false "docker://$REG/cuda/tc:11.8" "dir:$T/copy"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    layer=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["layers"][0]["digest"][7:])' "$T/copy/manifest.json")
    mkdir "$T/unpacked"
    tar -xzf "$T/copy/$layer" -C "$T/unpacked"
    diff -r -x .cudaenv-usage "$P" "$T/unpacked"
    # fixed owners and times, no gzip timestamp
    [ "$(tar -tzvf "$T/copy/$layer" | awk '{print $2, $4, $5}' | sort -u)" = "0/0 2000-01-01 00:00" ]
    [ "$(od -An -tu4 -j4 -N4 "$T/copy/$layer" | tr -d ' ')" = 0 ]
}

@test "a second push of the unchanged toolchain uploads no blob and gives the same digest, new mtimes or not" {
    registry_start
    push "$NAME" "oci://$REG/cuda/tc:11.8" --insecure
    first=$DIGEST
    [ "$(registry_requests '"POST /v2/cuda/tc/blobs/uploads/')" -eq 2 ]
    touch -d '2030-01-01' "$P/bin/nvcc" "$P/lib64"
    push 11.8 "oci://$REG/cuda/tc:11.8" --insecure
    [ "$DIGEST" = "$first" ]
    [[ "$stderr" == *"0 blobs uploaded, 2 already there"* ]]
    [ "$(registry_requests '"POST /v2/cuda/tc/blobs/uploads/')" -eq 2 ]
    [ "$(registry_requests '"PUT /v2/cuda/tc/blobs/uploads/')" -eq 2 ]
    # a changed file: a new layer (one upload), a new digest
    echo changed >> "$P/bin/nvcc"
    fx_receipt "$P"
    push "$NAME" "oci://$REG/cuda/tc:11.8" --insecure
    [ "$DIGEST" != "$first" ]
    [[ "$stderr" == *"2 blobs uploaded"* ]]
}

@test "cross-repository mount: a push to another repository of the registry mounts the blobs this store pushed or pulled there, uploads nothing; a registry that declines gets them uploaded" {
    registry_start
    push "$NAME" "oci://$REG/cuda/tc:11.8" --insecure
    first=$DIGEST
    push "$NAME" "oci://$REG/team/tc:11.8" --insecure
    [ "$DIGEST" = "$first" ]
    [[ "$stderr" == *"0 blobs uploaded, 0 already there, 2 mounted from another repository"* ]]
    [ "$(registry_requests '"POST /v2/team/tc/blobs/uploads/?mount=sha256:')" -eq 2 ]
    [ "$(registry_requests '"PUT /v2/team/tc/blobs/uploads/')" -eq 0 ]
    # another node that installed from team/tc pushes to a third repository: mounted from team/tc
    other_node
    run --separate-stderr cudaenv install "oci://$REG/team/tc:11.8" --insecure
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    grep -q " $REG team/tc\$" "$CUDAENV_ROOT/cache/oci-blobs"
    push "$NAME" "oci://$REG/site/tc:11.8" --insecure
    [[ "$stderr" == *"2 mounted from another repository"* ]]
    [ "$(registry_requests '"POST /v2/site/tc/blobs/uploads/?mount=sha256:')" -eq 2 ]
    command -v skopeo >/dev/null && skopeo inspect --tls-verify=false "docker://$REG/site/tc:11.8" >/dev/null
    # a record naming a repository that lacks the blob: the registry declines (202), the blob is uploaded
    sed -i "s# $REG [^ ]*\$# $REG nowhere/else#" "$CUDAENV_ROOT/cache/oci-blobs"
    push "$NAME" "oci://$REG/fourth/tc:11.8" --insecure
    [ "$DIGEST" = "$first" ]
    [[ "$stderr" == *"2 blobs uploaded, 0 already there"* ]]
    [[ "$stderr" != *"mounted"* ]]
    [ "$(registry_requests '"POST /v2/fourth/tc/blobs/uploads/?mount=sha256:')" -eq 2 ]
    [ "$(registry_requests '"PUT /v2/fourth/tc/blobs/uploads/')" -eq 2 ]
}

@test "install oci:// by tag, pull by digest: list, prefix and verify see it; the origin recorded; cached layers not fetched again" {
    registry_start
    push "$NAME" "oci://$REG/cuda/tc:11.8" --insecure
    other_node
    run --separate-stderr cudaenv install "oci://$REG/cuda/tc:11.8" --insecure
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"installed $NAME in $CUDAENV_ROOT/versions/$NAME from oci://$REG/cuda/tc:11.8 (image $DIGEST"* ]]
    run cudaenv list
    [[ "$output" == *"$NAME"* ]]
    [ "$(cudaenv prefix "$NAME")" = "$CUDAENV_ROOT/versions/$NAME" ]
    diff -r -x .cudaenv-usage -x .cudaenv-oci.json "$P" "$CUDAENV_ROOT/versions/$NAME"
    python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); assert o["digest"] == sys.argv[2] and o["reference"] == sys.argv[3], o' \
        "$CUDAENV_ROOT/versions/$NAME/.cudaenv-oci.json" "$DIGEST" "oci://$REG/cuda/tc:11.8"
    run --separate-stderr cudaenv verify "$NAME" --json
    python3 -c 'import json,sys; d=json.load(sys.stdin); s=[x for x in d["steps"] if x["id"]=="files"][0]; assert s["status"]=="passed", s' <<<"$output"
    no_staging
    gets=$(registry_requests '"GET /v2/cuda/tc/blobs/sha256:')
    run --separate-stderr cudaenv pull "oci://$REG/cuda/tc@$DIGEST" --insecure
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"$NAME is installed already, from the same receipt"* ]]
    # reinstalled: the layer comes from the download cache
    run --separate-stderr cudaenv pull --force "oci://$REG/cuda/tc@$DIGEST" --insecure
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ "$(registry_requests '"GET /v2/cuda/tc/blobs/sha256:')" -eq $((gets + 2)) ]   # the config each time, the layer never
    diff -r -x .cudaenv-usage -x .cudaenv-oci.json "$P" "$CUDAENV_ROOT/versions/$NAME"
}

@test "a tampered layer in the registry's storage: exit 5, nothing installed, no staging, nothing cached" {
    registry_start
    push "$NAME" "oci://$REG/cuda/tc:11.8" --insecure
    layer=$(curl -s -H 'Accept: application/vnd.oci.image.manifest.v1+json' "http://$REG/v2/cuda/tc/manifests/11.8" |
            python3 -c 'import json,sys; print(json.load(sys.stdin)["layers"][0]["digest"])')
    python3 - "$(registry_blob "$layer")" <<'PY'
import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[len(b) // 2] ^= 0xFF; open(p, "wb").write(b)
PY
    other_node
    run --separate-stderr cudaenv install "oci://$REG/cuda/tc:11.8" --insecure
    [ "$status" -eq 5 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"sha256 mismatch"*"${layer#sha256:}"* ]]
    [ -z "$(ls -A "$CUDAENV_ROOT/versions")" ]
    no_staging
    [ -z "$(ls -A "$CUDAENV_ROOT/cache" | grep -vx .cudaenv-names)" ]   # (the names the downloads were fetched as: labels only)
}

@test "a manifest changed in the registry's storage: exit 5 by digest, and by tag (the registry's Docker-Content-Digest)" {
    registry_start
    push "$NAME" "oci://$REG/cuda/tc:11.8" --insecure
    f=$(registry_blob "$DIGEST")
    python3 - "$f" <<'PY'
import sys
p = sys.argv[1]; t = open(p).read()
import json; m = json.loads(t); m["annotations"]["io.cudaenv.receipt.sha256"] = "0" * 64
open(p, "w").write(json.dumps(m, separators=(",", ":")))
PY
    other_node
    run --separate-stderr cudaenv install "oci://$REG/cuda/tc@$DIGEST" --insecure
    [ "$status" -eq 5 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"hashes to sha256:"*"not to the $DIGEST asked for"* ]]
    run --separate-stderr cudaenv install "oci://$REG/cuda/tc:11.8" --insecure
    [ "$status" -eq 5 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"not to the $DIGEST the registry names it by (Docker-Content-Digest)"* ]]
    [ -z "$(ls -A "$CUDAENV_ROOT/versions")" ]
    no_staging
}

@test "htpasswd registry: no credentials and wrong ones are exit 4 naming CUDAENV_REGISTRY_AUTH; right ones push and pull, also from ~/.docker/config.json" {
    registry_start --auth
    run --separate-stderr cudaenv push "$NAME" "oci://$REG/cuda/tc:11.8" --insecure
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"registry $REG asks for credentials: set CUDAENV_REGISTRY_AUTH=USER:PASSWORD"* ]]
    CUDAENV_REGISTRY_AUTH=alice:wrong run --separate-stderr cudaenv push "$NAME" "oci://$REG/cuda/tc:11.8" --insecure
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"registry $REG refused the credentials (CUDAENV_REGISTRY_AUTH)"* && "$stderr" != *wrong* ]]
    CUDAENV_REGISTRY_AUTH=alice:s3cret push "$NAME" "oci://$REG/cuda/tc:11.8" --insecure
    other_node
    run --separate-stderr cudaenv pull "oci://$REG/cuda/tc:11.8" --insecure
    [ "$status" -eq 4 ]
    mkdir -p "$HOME/.docker"
    printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$REG" "$(printf alice:s3cret | base64)" > "$HOME/.docker/config.json"
    run --separate-stderr cudaenv pull "oci://$REG/cuda/tc:11.8" --insecure
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ -f "$CUDAENV_ROOT/versions/$NAME/.cudaenv-receipt.json" ]
}

@test "https by default: a registry with a private CA works through CURL_CA_BUNDLE; plain http needs --insecure" {
    registry_start --tls
    push "$NAME" "oci://$REG/cuda/tc:11.8"
    ca=$CURL_CA_BUNDLE
    unset CURL_CA_BUNDLE
    other_node
    run --separate-stderr cudaenv install "oci://$REG/cuda/tc:11.8"
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"https://$REG/v2/"* ]]
    CURL_CA_BUNDLE=$ca run --separate-stderr cudaenv install "oci://$REG/cuda/tc@$DIGEST"
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    registry_stop
    registry_start
    run --separate-stderr cudaenv push "$NAME" "oci://$REG/cuda/tc:11.8"
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"https://$REG/v2/"*"add --insecure"* ]]
}

@test "bad references and mixed arguments are usage errors (exit 2); an unknown tag is exit 3" {
    registry_start
    run cudaenv push "$NAME" "oci://$REG/Cuda/tc:11.8"
    [ "$status" -eq 2 ]
    [[ "$output" == *"repository 'Cuda/tc' must be lowercase"* ]]
    run cudaenv push "$NAME" "oci://$REG/cuda/tc@sha256:$(printf '%064d' 0)" --insecure
    [ "$status" -eq 2 ]
    [[ "$output" == *"push writes a tag"* ]]
    run cudaenv push "$NAME" "registry/cuda:11.8"
    [ "$status" -eq 2 ]
    [[ "$output" == *"not an OCI reference"* ]]
    run cudaenv install "oci://$REG/cuda/tc:11.8" 11.8
    [ "$status" -eq 2 ]
    [[ "$output" == *"not both in one command"* ]]
    run cudaenv pull 11.8
    [ "$status" -eq 2 ]
    [[ "$output" == *"not an oci:// reference"* ]]
    run cudaenv install "oci://$REG/cuda/tc@sha256:abc"
    [ "$status" -eq 2 ]
    [[ "$output" == *"64 lowercase hex"* ]]
    run --separate-stderr cudaenv install "oci://$REG/cuda/tc:nope" --insecure
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"MANIFEST_UNKNOWN"* ]]
}

# an image written without cudaenv (tests/lib/ociimage.py) copied into the registry by skopeo
skopeo_image() {
    command -v skopeo >/dev/null || skip "no skopeo: apt-get install skopeo (tools/deps-test.txt)"
    local tag=$1; shift
    rm -rf "$T/img"
    python3 "$TESTS_DIR/lib/ociimage.py" "$P" "$T/img" "$NAME" "$@"
    run skopeo copy --dest-tls-verify=false "dir:$T/img" "docker://$REG/cuda/tc:$tag"
    [ "$status" -eq 0 ] || { echo "$output"; return 1; }
}

@test "images from another writer: installed when sound; a receipt unlike its annotation or an entry outside the tree is exit 5, nothing installed" {
    registry_start
    skopeo_image good
    skopeo_image wrong-receipt --receipt-sha256 "$(printf '%064d' 0)"
    skopeo_image escape --extra-entry ../escape
    other_node
    run --separate-stderr cudaenv install "oci://$REG/cuda/tc:wrong-receipt" --insecure
    [ "$status" -eq 5 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"the receipt in the layers hashes to"*"io.cudaenv.receipt.sha256 says 0000"* ]]
    run --separate-stderr cudaenv install "oci://$REG/cuda/tc:escape" --insecure
    [ "$status" -eq 5 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"../escape"* ]]
    [ ! -e "$CUDAENV_ROOT/escape" ]
    [ ! -e "$CUDAENV_ROOT/versions/escape" ]
    [ -z "$(ls -A "$CUDAENV_ROOT/versions")" ]
    no_staging
    run --separate-stderr cudaenv install "oci://$REG/cuda/tc:good" --insecure
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    diff -r -x .cudaenv-usage -x .cudaenv-oci.json "$P" "$CUDAENV_ROOT/versions/$NAME"
}

@test "Bearer-token registry: the token asked from the challenge's realm with the credentials, for the challenge's scope; refused without them" {
    registry_start --token
    run --separate-stderr cudaenv push "$NAME" "oci://$REG/cuda/tc:11.8" --insecure
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"token service http://127.0.0.1:"*"answered HTTP 401 without a token: set CUDAENV_REGISTRY_AUTH"* ]]
    export CUDAENV_REGISTRY_AUTH=alice:s3cret
    push "$NAME" "oci://$REG/cuda/tc:11.8" --insecure
    grep -Eq "GET /token user=alice:s3cret scope=repository:cuda/tc:(pull,push|push,pull)$" "$TOKEN_LOG" || { cat "$TOKEN_LOG"; false; }
    other_node
    run --separate-stderr cudaenv install "oci://$REG/cuda/tc@$DIGEST" --insecure
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    grep -q "GET /token user=alice:s3cret scope=repository:cuda/tc:pull$" "$TOKEN_LOG" || { cat "$TOKEN_LOG"; false; }
    diff -r -x .cudaenv-usage -x .cudaenv-oci.json "$P" "$CUDAENV_ROOT/versions/$NAME"
}

@test "an adopted toolkit is pushed as its tree (not as links into the machine's directory) and installs elsewhere as a toolchain" {
    registry_start
    TK=$CUDAENV_SYSROOT/usr/local/cuda-12.4
    fx_toolkit "$TK" 12.4.1 >/dev/null
    ln -s lib64 "$TK/lib"
    run --separate-stderr cudaenv adopt "$TK" --name 12.4.1@site
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    push 12.4.1@site "oci://$REG/cuda/tc:12.4" --insecure
    other_node
    run --separate-stderr cudaenv install "oci://$REG/cuda/tc:12.4" --insecure
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    got=$CUDAENV_ROOT/versions/12.4.1@site
    [ -d "$got/bin" ] && [ ! -L "$got/bin" ] || false
    [ "$(readlink "$got/lib")" = lib64 ]
    diff -r "$TK" "$got" -x .cudaenv-receipt.json -x .cudaenv-usage -x .cudaenv-oci.json
    run --separate-stderr cudaenv verify 12.4.1@site --json
    python3 -c 'import json,sys; d=json.load(sys.stdin); s=[x for x in d["steps"] if x["id"]=="files"][0]; assert s["status"]=="passed", s' <<<"$output"
}

@test "a toolchain installed from an image pushes back to the same digest (its origin record and inode record are not in the layer)" {
    registry_start
    push "$NAME" "oci://$REG/cuda/tc:11.8" --insecure
    first=$DIGEST
    other_node
    run --separate-stderr cudaenv install "oci://$REG/cuda/tc:11.8" --insecure
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ -f "$CUDAENV_ROOT/versions/$NAME/.cudaenv-oci.json" ]
    push "$NAME" "oci://$REG/cuda/copy:11.8" --insecure
    [ "$DIGEST" = "$first" ]
}

# the receipt's tree digest, computed here as verify documents it (sorted "path size sha256" lines)
tree_of() {
    python3 -c 'import hashlib, json, sys
r = json.load(open(sys.argv[1]))
print(hashlib.sha256("".join(sorted("%s %d %s\n" % (f["path"], f["size"], f["sha256"]) for f in r["files"])).encode()).hexdigest())' "$1/.cudaenv-receipt.json"
}

@test "one digest of the toolchain: the image's io.cudaenv.tree_sha256 is verify --report's tree_sha256 on the node that pushed it and on one that installed it; cudaenv-report shows the image" {
    command -v skopeo >/dev/null || skip "no skopeo: apt-get install skopeo (tools/deps-test.txt)"
    registry_start
    want=$(tree_of "$P")
    push "$NAME" "oci://$REG/cuda/tc:11.8" --insecure
    [[ "$stderr" == *"tree digest $want (io.cudaenv.tree_sha256"* ]] || { echo "$stderr"; false; }
    run skopeo inspect --tls-verify=false "docker://$REG/cuda/tc:11.8"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    ann=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["Labels"]["io.cudaenv.tree_sha256"])' <<<"$output")
    [ "$ann" = "$want" ]
    run skopeo inspect --raw --tls-verify=false "docker://$REG/cuda/tc:11.8"
    [ "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["annotations"]["io.cudaenv.tree_sha256"])' <<<"$output")" = "$ann" ]
    export CUDAENV_TEST_LIBCUDA=$T/no-driver/libcuda.so.1; seams_on   # no GPU here: exit 8, the digest all the same
    run --separate-stderr cudaenv verify "$NAME" --report
    [ "$status" -eq 8 ] || { echo "$status $stderr"; false; }
    printf '%s\n' "$output" | python3 -c 'import json, sys; l = json.loads(sys.stdin.read()); l["host"] = "n1"; print(json.dumps(l))' > "$T/n1.jsonl"
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["tree_sha256"] == sys.argv[2] and "image" not in r, r' "$T/n1.jsonl" "$ann"
    other_node
    run --separate-stderr cudaenv install "oci://$REG/cuda/tc:11.8" --insecure
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    run --separate-stderr cudaenv verify "$NAME" --report
    [ "$status" -eq 8 ] || { echo "$status $stderr"; false; }
    printf '%s\n' "$output" | python3 -c 'import json, sys; l = json.loads(sys.stdin.read()); l["host"] = "n2"; print(json.dumps(l))' > "$T/n2.jsonl"
    python3 - "$T/n2.jsonl" "$ann" "$DIGEST" "oci://$REG/cuda/tc:11.8" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["tree_sha256"] == sys.argv[2], r
assert r["image"] == {"reference": sys.argv[4], "digest": sys.argv[3]}, r
PY
    run --separate-stderr cudaenv verify "$NAME" --json
    python3 -c 'import json,sys; t = json.loads(sys.argv[1])["toolchain"]; assert t["tree_sha256"] == sys.argv[2] and t["image"]["digest"] == sys.argv[3], t' "$output" "$ann" "$DIGEST"
    # the merge: both nodes, one digest, the image named where the toolchain came from one
    run "$REPO/contrib/slurm/cudaenv-report" --allow-no-gpu --digest "$ann" "$T/n1.jsonl" "$T/n2.jsonl"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "NODE  TOOLCHAIN "*"  DIGEST        IMAGE                LIBS  GPU STEPS  RESULT" ]]
    [[ "${lines[1]}" == "n1    $NAME  ${ann:0:12}  -                    same  no GPU     ok" ]]
    [[ "${lines[2]}" == "n2    $NAME  ${ann:0:12}  ${DIGEST:0:19}  same  no GPU     ok" ]]
    # a node with another tree than the image's: an outlier by --digest, even alone
    run "$REPO/contrib/slurm/cudaenv-report" --allow-no-gpu --digest "$(printf '%064d' 0)" "$T/n2.jsonl"
    [ "$status" -eq 1 ]
    [[ "${lines[1]}" == *"OUTLIER: tree digest is not 000000000000 (--digest)" ]]
}

@test "an image whose io.cudaenv.tree_sha256 is not its receipt's tree digest: exit 5, nothing installed; the right one installs" {
    command -v skopeo >/dev/null || skip "no skopeo: apt-get install skopeo (tools/deps-test.txt)"
    registry_start
    skopeo_image wrong-tree --tree-sha256 "$(printf '%064d' 1)"
    skopeo_image right-tree --tree-sha256 "$(tree_of "$P")"
    skopeo_image not-hex --tree-sha256 "not-a-digest"
    other_node
    run --separate-stderr cudaenv install "oci://$REG/cuda/tc:wrong-tree" --insecure
    [ "$status" -eq 5 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"the receipt's tree digest is $(tree_of "$P"), the annotation io.cudaenv.tree_sha256 says 0000"*"nothing installed"* ]]
    run --separate-stderr cudaenv install "oci://$REG/cuda/tc:not-hex" --insecure
    [ "$status" -eq 5 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"the annotation io.cudaenv.tree_sha256 is not a sha256 digest"* ]]
    [ -z "$(ls -A "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
    no_staging
    run --separate-stderr cudaenv install "oci://$REG/cuda/tc:right-tree" --insecure
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
}
