#!/usr/bin/env bats
# A remote manifest (CUDAENV_MANIFEST=https://...) lives as a local copy in
# the store (manifest/source.h, copy.h): install fetches it, env/use/exec and
# the cd hook read the copy offline; update refreshes it with a conditional
# request, checks the signature and the date, says what changed, and keeps
# the old copy on any failure.  Served over loopback HTTPS (a throwaway CA
# through CURL_CA_BUNDLE), signed with a throwaway ed25519 site key.
load ../lib/common
load ../lib/mirror
load ../lib/server
load ../lib/signed
bats_require_minimum_version 1.5.0

setup_file() { mirror_setup_file; }

setup() {
    common_setup
    signed_setup
    P=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
}
teardown() { rm -rf "$MIRROR/cudaenv.json" "$MIRROR/cudaenv.json.sig" "$MIRROR/site"; server_stop; common_teardown; }

@test "install from a remote manifest; then use/env/exec tf-X and the cd hook work offline from the local copy" {
    run "$CUDAENV" -q install tf-2.14
    [ "$status" -eq 0 ]
    cmp "$(copy)" "$SERVED"
    grep -q "\"url\":\"$CUDAENV_MANIFEST\"" "$(copy).meta"
    grep -q '"signed_by":".*site.pem"' "$(copy).meta"
    server_stop   # offline from here
    run "$CUDAENV" env tf-2.14 --shell bash
    [ "$status" -eq 0 ]
    [[ "$output" == *"CUDA_HOME='$P'"* || "$output" == *"CUDA_HOME=\"$P\""* || "$output" == *"CUDA_HOME=$P"* ]]
    run "$CUDAENV" use tf-2.14 --shell bash -q
    [ "$status" -eq 0 ]
    [[ "$output" == *"$P"* ]]
    run --separate-stderr "$CUDAENV" exec tf-2.14 -- sh -c 'echo "$CUDA_HOME"'
    [ "$status" -eq 0 ]
    [ "$output" = "$P" ]
    # the cd hook: a .cuda-version naming tf-2.14
    mkdir -p "$T/proj" && echo tf-2.14 > "$T/proj/.cuda-version"
    out=$(cd "$T/proj" && PATH="$(dirname "$CUDAENV"):$PATH" timeout -s KILL 20 bash --norc -i 2>&1 <<'EOS'
eval "$(cudaenv init bash)"
__cudaenv_hook
echo "home=${CUDA_HOME-unset}"
EOS
)
    [[ "$out" == *"home=$P"* ]] || { echo "$out"; false; }
    # through the index, without the full binary or any socket
    if command -v strace >/dev/null; then
        # LeakSanitizer cannot run under ptrace (make check-asan)
        export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
        strace -f -qq -e trace=execve,connect -o "$T/st" "$CUDAENV" env tf-2.14 --shell bash >/dev/null
        [ "$(grep -c execve "$T/st")" -eq 1 ]
        ! grep -q connect "$T/st" || false
    fi
}

@test "without a local copy, a tf- spec says to run cudaenv update (exit 3), naming the URL; exact names need none" {
    fx_installed 11.8.0 8.7.0.84 >/dev/null
    run --separate-stderr "$CUDAENV" env tf-2.14 --shell bash
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"no local copy of the manifest $CUDAENV_MANIFEST"*"cudaenv update"* ]]
    [ "$(server_requests 'cudaenv.json')" -eq 0 ]   # a prompt never asks the network
    "$CUDAENV" env 11.8.0+cudnn8.7.0.84 --shell bash >/dev/null
    "$CUDAENV" -q update
    run "$CUDAENV" prefix tf-2.14
    [ "$status" -eq 0 ]
    [ "$output" = "$P" ]
}

@test "update picks up a new TF row served later, says what changed, and use follows it" {
    "$CUDAENV" -q install tf-2.14
    "$CUDAENV" -q install 12.2.2 --cudnn 8.9.7.29
    serve_edit 'm["updated"] = "2026-12-24"; m["tensorflow"]["2.16"] = {"cuda": "12.2.2", "cudnn": "8.9.7.29", "python": "3.10-3.12", "source": "test"}; m["tensorflow"]["2.12"]["python"] = "3.8-3.11"'
    run "$CUDAENV" update
    [ "$status" -eq 0 ]
    [[ "$output" == *"2026-11-29 -> 2026-12-24"* ]]
    [[ "$output" == *"new      tf 2.16: CUDA 12.2.2 + cuDNN 8.9.7.29"* ]]
    [[ "$output" == *"changed  tf 2.12: python 3.9-3.11 -> 3.8-3.11"* ]]
    [[ "$output" == *"site.pem"* ]]
    cmp "$(copy)" "$SERVED"
    [ "$("$CUDAENV" prefix tf-2.16)" = "$CUDAENV_ROOT/versions/12.2.2+cudnn8.9.7.29" ]
    grep -qx 'tf 2.16 12.2.2 8.9.7.29' "$CUDAENV_ROOT/versions/.index"
    # asked again: a conditional request, 304, nothing rewritten
    run "$CUDAENV" update
    [ "$status" -eq 0 ]
    [[ "$output" == *"is current (dated 2026-12-24)"* ]]
    [ "$(server_requests 'cudaenv.json .*status=304')" -eq 1 ]
}

@test "update refuses a tampered, an unsigned, a badly signed or an older manifest (exit 5) and keeps the copy" {
    "$CUDAENV" -q install tf-2.14
    cp "$(copy)" "$T/before"
    cp "$SERVED.sig" "$T/good.sig"
    # tampered: the bytes changed after signing
    serve_edit 'm["tensorflow"]["2.14"]["cudnn"] = "8.6.0.163"' unsigned
    run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"does not match the manifest $CUDAENV_MANIFEST"* ]]
    cmp "$(copy)" "$T/before"
    [ "$("$CUDAENV" prefix tf-2.14)" = "$P" ]
    # unsigned
    rm "$SERVED.sig"
    run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"is not signed"*"CUDAENV_MANIFEST_UNSIGNED=1"* ]]
    cmp "$(copy)" "$T/before"
    # signed by a key nobody trusts
    openssl genpkey -algorithm ed25519 -out "$T/other.key" 2>/dev/null
    sign "$SERVED" "$T/other.key"
    run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 5 ]
    cmp "$(copy)" "$T/before"
    # not a signature at all
    echo garbage > "$SERVED.sig"
    run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"no ed25519 signature"* ]]
    # older than the copy (an old manifest served again), validly signed
    cp "$MIRROR/manifest.json" "$SERVED"
    serve_edit 'm["updated"] = "2026-12-24"'
    "$CUDAENV" -q update
    cp "$(copy)" "$T/before"
    serve_edit 'm["updated"] = "2026-12-01"'
    run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"dated 2026-12-01, before the copy it would replace (2026-12-24)"* ]]
    cmp "$(copy)" "$T/before"
    # older than the built-in manifest too: a site's manifest gets a warning, and the copy rule refuses
    serve_edit 'm["updated"] = "2001-01-01"'
    run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"dated 2001-01-01, before the built-in manifest"*"releases added since are not in it"* ]]
    [[ "$stderr" == *"before the copy it would replace"* ]]
    # invalid
    echo '{"schema": 2}' > "$SERVED"; sign "$SERVED"
    run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 5 ]
    cmp "$(copy)" "$T/before"
    # the server gone: update fails (exit 4), the copy stays and still serves
    server_stop
    run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 4 ]
    cmp "$(copy)" "$T/before"
    [ "$("$CUDAENV" prefix tf-2.14)" = "$P" ]
}

@test "an unsigned manifest is accepted only with CUDAENV_MANIFEST_UNSIGNED=1, with a warning" {
    rm "$SERVED.sig"
    run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 5 ]
    [ ! -e "$CUDAENV_ROOT/manifests" -o -z "$(ls "$CUDAENV_ROOT/manifests" 2>/dev/null)" ]
    CUDAENV_MANIFEST_UNSIGNED=1 run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"is not signed"*"accepted because CUDAENV_MANIFEST_UNSIGNED=1"* ]]
    grep -q '"signed_by":null' "$(copy).meta"
    # the opt-out never accepts a bad signature
    serve_edit 'm["updated"] = "2026-12-24"' unsigned
    echo garbage > "$SERVED.sig"
    CUDAENV_MANIFEST_UNSIGNED=1 run "$CUDAENV" update
    [ "$status" -eq 5 ]
}

@test "site keys are trusted only in a root-owned directory no one else can write" {
    [ "$(id -u)" -eq 0 ] || skip "needs root to own the site keys"
    chmod 777 "$KEYS"
    run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"ignoring the site keys in $KEYS"* ]]
    chmod 755 "$KEYS"; chmod 666 "$KEYS/site.pem"
    run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"ignoring the key $KEYS/site.pem"* ]]
    chmod 644 "$KEYS/site.pem"
    # as root the key directory of HOME is no trust anchor, even root's own
    mv "$KEYS/site.pem" "$T/site.pem"
    mkdir -p "$HOME/.config/cudaenv/keys" && cp "$T/site.pem" "$HOME/.config/cudaenv/keys/"
    run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"as root a user's keys (~/.config/cudaenv/keys, XDG_CONFIG_HOME) are never trusted: put the key in $KEYS"* ]] || { echo "$stderr"; false; }
    # a root-owned key named by the site's config serves
    mkdir -p "$T/rootkeys" && cp "$T/site.pem" "$T/rootkeys/k.pem"
    printf '{"keys": ["%s"]}\n' "$T/rootkeys/k.pem" > "$CUDAENV_SYSROOT/etc/cudaenv/config.json"
    run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
}

# ---- the trust anchors against a second user (issue 36 item 2, issue 42) ----

ATK=cudaenv-atk
atk_setup() {
    [ "$(id -u)" -eq 0 ] || skip "played as root against a second user"
    id "$ATK" >/dev/null 2>&1 || useradd -M -s /bin/sh "$ATK" 2>/dev/null || true
    id "$ATK" >/dev/null 2>&1 || skip "useradd $ATK failed"
    command -v runuser >/dev/null || skip "no runuser"
    chmod 755 "$T" "$(dirname "$CURL_CA_BUNDLE")"
    chmod 644 "$CURL_CA_BUNDLE"
    mv "$KEYS/site.pem" "$T/site.pem"
}
as_atk() { runuser -u "$ATK" -- env CURL_CA_BUNDLE="$CURL_CA_BUNDLE" CUDAENV_MANIFEST="$CUDAENV_MANIFEST" "$@"; }

@test "as root, a user's key directory (XDG_CONFIG_HOME left by su, or HOME) never verifies a manifest: exit 5, nothing fetched is kept" {
    atk_setup
    U=$T/uxdg
    mkdir -p "$U/cudaenv/keys" && cp "$T/site.pem" "$U/cudaenv/keys/" && chown -R "$ATK" "$U"
    XDG_CONFIG_HOME=$U run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 5 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"as root a user's keys"*"are never trusted"* ]] || { echo "$stderr"; false; }
    run ls "$CUDAENV_ROOT"/manifests/*.json
    [ "$status" -ne 0 ]
    # the same through HOME (sudo -E)
    mkdir -p "$T/uhome/.config" && mv "$U/cudaenv" "$T/uhome/.config/" && chown -R "$ATK" "$T/uhome"
    HOME=$T/uhome run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 5 ]
    # and the user themselves: their key verifies for them
    mkdir -p "$T/ustore" && chown "$ATK" "$T/ustore"
    run as_atk HOME="$T/uhome" CUDAENV_ROOT="$T/ustore" "$CUDAENV" info tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "as root, a key the site's config names that a user owns, or that sits in a user's directory, or a site key that links to a user's file, is ignored: exit 5" {
    atk_setup
    mkdir -p "$T/u" && cp "$T/site.pem" "$T/u/k.pem" && chown -R "$ATK" "$T/u"
    printf '{"keys": ["%s"]}\n' "$T/u/k.pem" > "$CUDAENV_SYSROOT/etc/cudaenv/config.json"
    run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"ignoring the key $T/u/k.pem (config keys): $T/u is owned by uid $(id -u "$ATK"), not root"* ]] || { echo "$stderr"; false; }
    chown root "$T/u/k.pem"    # root's file in the user's directory: the user can swap it
    run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"$T/u is owned by uid"* ]] || { echo "$stderr"; false; }
    chown -R "$ATK" "$T/u"
    rm "$CUDAENV_SYSROOT/etc/cudaenv/config.json"
    ln -s "$T/u/k.pem" "$KEYS/site.pem"
    run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"ignoring the key $KEYS/site.pem: $T/u is owned by uid"* ]] || { echo "$stderr"; false; }
    # a root-owned link to a root-owned key is the site's own choice
    rm "$KEYS/site.pem" && mkdir -p "$T/r" && cp "$T/site.pem" "$T/r/k.pem" && ln -s "$T/r/k.pem" "$KEYS/site.pem"
    run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
}

@test "as a user, a world-writable key file or key directory of their own is refused with a warning: exit 5" {
    atk_setup
    mkdir -p "$T/uhome/.config/cudaenv/keys" "$T/ustore"
    cp "$T/site.pem" "$T/uhome/.config/cudaenv/keys/"
    chown -R "$ATK" "$T/uhome" "$T/ustore"
    chmod 666 "$T/uhome/.config/cudaenv/keys/site.pem"
    run as_atk HOME="$T/uhome" CUDAENV_ROOT="$T/ustore" "$CUDAENV" info tf-2.14
    [ "$status" -eq 5 ] || { echo "$output"; false; }
    [[ "$output" == *"ignoring the key $T/uhome/.config/cudaenv/keys/site.pem: $T/uhome/.config/cudaenv/keys/site.pem is writable by group or others"* ]] || { echo "$output"; false; }
    chmod 644 "$T/uhome/.config/cudaenv/keys/site.pem"
    chmod 777 "$T/uhome/.config/cudaenv/keys"
    run as_atk HOME="$T/uhome" CUDAENV_ROOT="$T/ustore" "$CUDAENV" info tf-2.14
    [ "$status" -eq 5 ]
    [[ "$output" == *"ignoring the keys in $T/uhome/.config/cudaenv/keys: the directory is writable by group or others"* ]] || { echo "$output"; false; }
    chmod 755 "$T/uhome/.config/cudaenv/keys"
    run as_atk HOME="$T/uhome" CUDAENV_ROOT="$T/ustore" "$CUDAENV" info tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "within CUDAENV_UPDATE_INTERVAL nothing asks the source; after it, a conditional request; unreachable: the copy with a warning" {
    "$CUDAENV" -q info tf-2.14 >/dev/null
    [ "$(server_requests 'GET /cudaenv.json ')" -eq 1 ]
    "$CUDAENV" -q info tf-2.14 >/dev/null
    "$CUDAENV" -q list-remote >/dev/null
    [ "$(server_requests 'GET /cudaenv.json ')" -eq 1 ]
    CUDAENV_UPDATE_INTERVAL=0 "$CUDAENV" -q info tf-2.14 >/dev/null
    [ "$(server_requests 'GET /cudaenv.json ')" -eq 2 ]
    [ "$(server_requests 'cudaenv.json .*status=304')" -eq 1 ]
    server_stop
    CUDAENV_UPDATE_INTERVAL=0 run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"using the local copy of the manifest"* ]]
}

@test "a manifest answered 500 is asked again after the backoff (CUDAENV_RETRY_DELAY_MS), not at once" {
    export CUDAENV_MANIFEST=$SERVER_TLS_URL/_/500=1/cudaenv.json   # and its .sig: each answered 500 once
    serve_edit pass   # signed for this URL
    local t0 t1
    t0=$(date +%s%N)
    CUDAENV_RETRY_DELAY_MS=1500 run "$CUDAENV" update
    t1=$(date +%s%N)
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ "$(server_requests 'GET /_/500=1/cudaenv.json ')" -eq 2 ]
    [ "$(server_requests 'GET /_/500=1/cudaenv.json.sig ')" -eq 2 ]
    [ $(( (t1 - t0) / 1000000 )) -ge 3000 ] || { echo "$(( (t1 - t0) / 1000000 )) ms"; false; }   # two waits of 1.5 s
}

@test "the project's keys beside the built-in manifest (<prefix>/share/cudaenv/keys) are trusted; info, list-remote and --version name the copy and its date" {
    # an installed layout of our own: bin/, libexec/cudaenv/, share/cudaenv/{manifests,keys}
    pfx=$T/prefix
    mkdir -p "$pfx/bin" "$pfx/libexec/cudaenv" "$pfx/share/cudaenv/manifests" "$pfx/share/cudaenv/keys"
    cp "$CUDAENV" "$pfx/bin/"; cp "$CUDAENV_FULL" "$pfx/libexec/cudaenv/"
    cp "$REPO/share/manifests/cudaenv.json" "$pfx/share/cudaenv/manifests/"
    mv "$KEYS/site.pem" "$pfx/share/cudaenv/keys/project.pem"
    export CUDAENV_FULL=$pfx/libexec/cudaenv/cudaenv-full
    # the project's manifest never goes back behind the built-in one
    serve_edit 'm["updated"] = "2001-01-01"'
    run --separate-stderr "$pfx/bin/cudaenv" info tf-2.14
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"before the built-in manifest"*"the project's manifest never goes back in time"* ]]
    serve_edit 'm["updated"] = "2099-01-01"' 
    run --separate-stderr "$pfx/bin/cudaenv" info tf-2.14
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$output" == *"manifest      $CUDAENV_MANIFEST, dated 2099-01-01 (local copy: $CUDAENV_ROOT/manifests/"*".json)"* ]]
    grep -q '"signed_by":".*/share/cudaenv/\(manifests/\.\./\)\?keys/project.pem"' "$CUDAENV_ROOT"/manifests/*.meta || { cat "$CUDAENV_ROOT"/manifests/*.meta; false; }
    run "$pfx/bin/cudaenv" list-remote
    [[ "${lines[-1]}" == "manifest $CUDAENV_MANIFEST, dated 2099-01-01 (local copy: "* ]]
    run "$pfx/bin/cudaenv" --version
    [[ "${lines[1]}" == "manifest $CUDAENV_MANIFEST, dated 2099-01-01 (local copy: "* ]]
}

@test "outdated: after an update, a CUDA patch release, a newer cuDNN of the same X.Y, a TF release whose tested pair moved" {
    "$CUDAENV" -q install tf-2.14
    run "$CUDAENV" outdated
    [ "$status" -eq 0 ]
    [ "$output" = "every installed toolchain is current with the manifest" ]
    serve_edit 'import copy; m["updated"] = "2026-12-24"; m["cuda"]["11.8.1"] = copy.deepcopy(m["cuda"]["11.8.0"]); m["cudnn"]["8.7.1.5"] = copy.deepcopy(m["cudnn"]["8.7.0.84"]); m["tensorflow"]["2.14"]["cudnn"] = "8.7.1.5"'
    "$CUDAENV" -q update
    run --separate-stderr "$CUDAENV" outdated
    [ "$status" -eq 0 ]
    [[ "$output" == *"11.8.0+cudnn8.7.0.84     CUDA 11.8.0 -> CUDA 11.8.1 (patch release): cudaenv install 11.8.1 --cudnn 8.7.0.84"* ]]
    [[ "$output" == *"cuDNN 8.7.0.84 -> cuDNN 8.7.1.5: cudaenv install 11.8.0 --cudnn 8.7.1.5"* ]]
    [[ "$output" == *"tf-2.14: CUDA 11.8.0 + cuDNN 8.7.0.84 -> CUDA 11.8.0 + cuDNN 8.7.1.5 (tested pair now): cudaenv install tf-2.14"* ]]
    run --separate-stderr "$CUDAENV" outdated --json
    python3 -c 'import json,sys; d=json.load(sys.stdin); k=sorted(e["kind"] for e in d["outdated"]); assert k == ["cuda", "cudnn", "tf"], k; assert d["manifest_updated"] == "2026-12-24"' <<<"$output"
}

@test "the config file: the manifest URL, keys, update_interval and manifest_unsigned" {
    unset CUDAENV_MANIFEST
    mv "$KEYS/site.pem" "$T/k.pem"
    "$CUDAENV" -q config set manifest "$SERVER_TLS_URL/cudaenv.json"
    run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 5 ]   # no trusted key yet
    "$CUDAENV" -q config set keys "$T/k.pem"
    run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 0 ]
    grep -q "\"signed_by\":\"$T/k.pem\"" "$CUDAENV_ROOT"/manifests/*.meta
    "$CUDAENV" -q info tf-2.14 >/dev/null
    [ "$(server_requests 'GET /cudaenv.json ')" -eq 2 ]   # the refused one and the first good one
    "$CUDAENV" -q config set update_interval 0
    "$CUDAENV" -q info tf-2.14 >/dev/null
    [ "$(server_requests 'GET /cudaenv.json ')" -eq 3 ]
    serve_edit 'm["updated"] = "2026-12-24"' unsigned
    rm "$SERVED.sig"
    run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 5 ]
    "$CUDAENV" -q config set manifest_unsigned true
    run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"accepted because the config says manifest_unsigned"* ]]
}

@test "mirror --sign-key --url signs the mirror's cudaenv.json for its URL; nodes install from it over https; a bad key exits 2" {
    "$CUDAENV" -q info tf-2.14 >/dev/null   # the source's copy, checked
    M=$MIRROR/site   # served by the same server: its URL is known before the mirror is made
    run --separate-stderr "$CUDAENV" mirror tf-2.14 --to "$M" --sign-key "$T/site.key"
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"--sign-key signs the place the mirror is served at into its manifest: add --url URL"* ]]
    run --separate-stderr "$CUDAENV" mirror tf-2.14 --to "$M" --sign-key "$T/site.key" --url "$SERVER_TLS_URL/site/cudaenv.json"
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"signed $M/cudaenv.json.sig with $T/site.key"* ]]
    openssl pkeyutl -verify -rawin -pubin -inkey "$KEYS/site.pem" -in "$M/cudaenv.json" \
        -sigfile <(base64 -d "$M/cudaenv.json.sig") >/dev/null
    python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["source"] == sys.argv[2] and m["serial"] > 1700000000, m.get("source")' \
        "$M/cudaenv.json" "$SERVER_TLS_URL/site/cudaenv.json"
    CUDAENV_ROOT=$T/node CUDAENV_MANIFEST=$SERVER_TLS_URL/site/cudaenv.json run --separate-stderr "$CUDAENV" -q install tf-2.14
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    grep -q '"signed_by":".*site.pem"' "$T/node"/manifests/*.meta
    # a second run raises the serial: the node takes it
    serial=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["serial"])' "$M/cudaenv.json")
    "$CUDAENV" -q mirror tf-2.12 --to "$M" --sign-key "$T/site.key" --url "$SERVER_TLS_URL/site/cudaenv.json"
    python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["serial"] > int(sys.argv[2])' "$M/cudaenv.json" "$serial"
    CUDAENV_ROOT=$T/node CUDAENV_MANIFEST=$SERVER_TLS_URL/site/cudaenv.json run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$output" == *"updated the manifest"* ]]
    echo 'not a key' > "$T/bad.key"
    cp "$M/cudaenv.json" "$T/mirror-before"
    run --separate-stderr "$CUDAENV" mirror tf-2.12 --to "$M" --sign-key "$T/bad.key" --url "$SERVER_TLS_URL/site/cudaenv.json"
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"is no ed25519 private key"* ]]
    cmp "$M/cudaenv.json" "$T/mirror-before"   # refused before anything changed
}

@test "TLS: without CURL_CA_BUNDLE, SSL_CERT_FILE names the CA bundle (a release's libcurl knows only its build machine's path)" {
    run --separate-stderr env -u CURL_CA_BUNDLE -u SSL_CERT_FILE "$CUDAENV" update
    [ "$status" -eq 4 ] || { echo "exit $status: $stderr"; false; }
    [[ "$stderr" == *"CURL_CA_BUNDLE"* ]] || { echo "$stderr"; false; }
    run --separate-stderr env -u CURL_CA_BUNDLE SSL_CERT_FILE="$CURL_CA_BUNDLE" "$CUDAENV" update
    [ "$status" -eq 0 ] || { echo "exit $status: $stderr"; false; }
    [[ "$output" == *"updated the manifest"* ]] || { echo "$output"; false; }
}

@test "update names an artifact whose sha256 changed (old -> new), never silent about what it would now download" {
    "$CUDAENV" -q update
    serve_edit 'r = m["cuda"]["11.8.0"]["runfile"]["linux-x86_64"]; r["sha256"] = "ab" * 32'
    run "$CUDAENV" update
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    grep -E "^  changed +cuda 11\.8\.0.*sha256.*-> (ab){32}" <<< "$output" || { echo "$output"; false; }
}

@test "a local copy checked 'in the future' (a clock set back, a copied store) is not fresh: the next read asks the source again" {
    "$CUDAENV" -q update
    run "$CUDAENV" info tf-2.14
    [ "$status" -eq 0 ] || false
    before=$(server_requests 'cudaenv.json ')
    touch -d '+10 days' "$CUDAENV_ROOT"/manifests/*.meta
    run "$CUDAENV" info tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ "$(server_requests 'cudaenv.json ')" -gt "$before" ] || { cat "$SERVER_LOG"; false; }
}
