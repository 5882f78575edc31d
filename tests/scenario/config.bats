#!/usr/bin/env bats
# The config files (core/config.h): cudaenv config list/get/set/unset, the
# user's file over the site's, the environment over both, and the settings
# taking effect (manifest, mirror, cudnn policy).
load ../lib/common
load ../lib/mirror
bats_require_minimum_version 1.5.0

setup_file() { mirror_setup_file; }
setup() {
    common_setup
    unset XDG_CONFIG_HOME CUDAENV_UPDATE_INTERVAL CUDAENV_MANIFEST_UNSIGNED
    USERCONF=$HOME/.config/cudaenv/config.json
    SITECONF=$CUDAENV_SYSROOT/etc/cudaenv/config.json
    fx_mirror_manifest "$MIRROR" "file://$MIRROR" > "$T/manifest.json"
}
teardown() { common_teardown; }

@test "config set/get/unset write the user's JSON file; list shows value and origin; bad keys and values exit 2" {
    run "$CUDAENV" config get update_interval
    [ "$status" -eq 0 ]
    [ "$output" = 86400 ]
    "$CUDAENV" -q config set update_interval 3600
    "$CUDAENV" -q config set manifest_unsigned true
    "$CUDAENV" -q config set keys /etc/a.pem,/etc/b.pem
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d == {"update_interval": 3600, "manifest_unsigned": True, "keys": ["/etc/a.pem", "/etc/b.pem"]}, d' "$USERCONF"
    [ "$("$CUDAENV" config get update_interval)" = 3600 ]
    [ "$("$CUDAENV" config get keys)" = "/etc/a.pem,/etc/b.pem" ]
    run "$CUDAENV" config list
    [[ "$output" == *"update_interval    3600 ($USERCONF)"* ]]
    [[ "$output" == *"cudnn              newest (default)"* ]]
    # the environment wins, and set says so
    CUDAENV_UPDATE_INTERVAL=5 run "$CUDAENV" config get update_interval
    [ "$output" = 5 ]
    CUDAENV_UPDATE_INTERVAL=5 run --separate-stderr "$CUDAENV" config set update_interval 7
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"CUDAENV_UPDATE_INTERVAL is set in the environment and wins"* ]]
    "$CUDAENV" -q config unset update_interval
    [ "$("$CUDAENV" config get update_interval)" = 86400 ]
    for bad in "nokey 1" "update_interval -1" "update_interval soon" "manifest_unsigned yes" "cudnn newer" \
               "manifest relative/m.json" "keys rel.pem"; do
        run --separate-stderr "$CUDAENV" config set $bad
        [ "$status" -eq 2 ] || { echo "$bad: $status"; false; }
    done
    run --separate-stderr "$CUDAENV" config get mirror
    [ "$status" -eq 3 ]
    cp "$USERCONF" "$T/before"
    echo '[1, 2]' > "$USERCONF"
    run --separate-stderr "$CUDAENV" config set cudnn none
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"is not a JSON object"* ]]
}

@test "the manifest and the mirror from the config: the site's, the user's over it, the environment over both" {
    mkdir -p "$(dirname "$SITECONF")"
    printf '{"manifest": "%s", "mirror": "https://site.example/m"}\n' "$T/manifest.json" > "$SITECONF"
    run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 0 ]
    [[ "$output" == *"manifest      $T/manifest.json, dated 2026-11-29"* ]]
    # the user's file wins over the site's
    cp "$T/manifest.json" "$T/mine.json"
    "$CUDAENV" -q config set manifest "$T/mine.json"
    [[ "$("$CUDAENV" info tf-2.14 2>/dev/null)" == *"manifest      $T/mine.json,"* ]]
    # the environment wins over both
    CUDAENV_MANIFEST=$T/manifest.json run --separate-stderr "$CUDAENV" info tf-2.14
    [[ "$output" == *"manifest      $T/manifest.json,"* ]]
    # the site's mirror rewrites NVIDIA's URLs of the built-in manifest
    "$CUDAENV" -q config unset manifest
    printf '{"mirror": "https://site.example/m"}\n' > "$SITECONF"
    run --separate-stderr "$CUDAENV" info 11.8 --json
    python3 -c 'import json,sys; d=json.load(sys.stdin); u=d["cuda"]["runfile"]["url"]; assert u.startswith("https://site.example/m/compute/cuda/11.8.0/"), u' <<<"$output"
}

@test "as root, a config file someone else can write is ignored, with a warning" {
    [ "$(id -u)" -eq 0 ] || skip "the rule is root's"
    mkdir -p "$(dirname "$SITECONF")"
    printf '{"manifest": "%s"}\n' "$T/manifest.json" > "$SITECONF"
    chmod 666 "$SITECONF"
    run --separate-stderr "$CUDAENV" info tf-2.14
    [[ "$stderr" == *"ignoring the config file $SITECONF: $SITECONF is writable by group or others"* ]]
    [[ "$output" != *"manifest      $T/manifest.json"* ]]
    chmod 644 "$SITECONF"
    [[ "$("$CUDAENV" info tf-2.14 2>/dev/null)" == *"manifest      $T/manifest.json,"* ]]
}

@test "cudnn policy: none installs and shows a CUDA spec without cuDNN; --cudnn and +cudnn win; TF specs keep their pair" {
    export CUDAENV_MANIFEST=$T/manifest.json
    [[ "$("$CUDAENV" info 11.8 2>/dev/null)" == "11.8 -> 11.8.0+cudnn8."* ]]   # the default: newest cuDNN
    "$CUDAENV" -q config set cudnn none
    run --separate-stderr "$CUDAENV" info 11.8
    [[ "$output" == "11.8 -> 11.8.0"$'\n'* ]]
    [[ "$output" == *"cuDNN         none"* ]]
    [[ "$("$CUDAENV" info 11.8 --cudnn 8.6 2>/dev/null)" == "11.8 -> 11.8.0+cudnn8.6.0.163"* ]]
    [[ "$("$CUDAENV" info 11.8+cudnn8.6 2>/dev/null)" == "11.8+cudnn8.6 -> 11.8.0+cudnn8.6.0.163"* ]]
    [[ "$("$CUDAENV" info tf-2.14 2>/dev/null)" == "tf-2.14 -> 11.8.0+cudnn8.7.0.84"* ]]
    "$CUDAENV" -q config set cudnn 8.6
    [[ "$("$CUDAENV" info 11.8 2>/dev/null)" == "11.8 -> 11.8.0+cudnn8.6.0.163"* ]]
    run "$CUDAENV" -q install 11.8
    [ "$status" -eq 0 ]
    [ -d "$CUDAENV_ROOT/versions/11.8.0+cudnn8.6.0.163" ]
}

# ---- root and a second user (issue 36 item 2) ----

atk_setup() {
    [ "$(id -u)" -eq 0 ] || skip "played as root against a second user"
    ATK=cudaenv-atk
    id "$ATK" >/dev/null 2>&1 || useradd -M -s /bin/sh "$ATK" 2>/dev/null || true
    id "$ATK" >/dev/null 2>&1 || skip "useradd $ATK failed"
    chmod 755 "$T"
    cp "$T/manifest.json" "$T/other.json"    # root's own: only the config that names it is the user's
}

@test "as root, a user's config (HOME or XDG_CONFIG_HOME left at a user's by su or sudo -E) is ignored with a warning; root's own is read" {
    atk_setup
    mkdir -p "$T/uh/.config/cudaenv"
    printf '{"manifest": "%s"}\n' "$T/other.json" > "$T/uh/.config/cudaenv/config.json"
    chown -R "$ATK" "$T/uh"
    HOME=$T/uh run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"ignoring the config file $T/uh/.config/cudaenv/config.json: $T/uh is owned by uid $(id -u "$ATK"), not root"* ]] || { echo "$stderr"; false; }
    [[ "$output" != *"manifest      $T/other.json"* ]]
    # root's file in the user's directory: the user can swap it, so not read either
    chown root "$T/uh/.config/cudaenv/config.json"
    XDG_CONFIG_HOME=$T/uh/.config run --separate-stderr "$CUDAENV" info tf-2.14
    [[ "$stderr" == *"ignoring the config file $T/uh/.config/cudaenv/config.json: $T/uh is owned by uid"* ]] || { echo "$stderr"; false; }
    [[ "$output" != *"manifest      $T/other.json"* ]]
    # root's own, all the way: read
    chown -R root "$T/uh"
    HOME=$T/uh run --separate-stderr "$CUDAENV" info tf-2.14
    [[ "$output" == *"manifest      $T/other.json"* ]] || { echo "$output $stderr"; false; }
}

@test "a config swapped for a symlink is never read through it: ignored with a warning, as root and as a user" {
    atk_setup
    mkdir -p "$HOME/.config/cudaenv" "$T/u"
    printf '{"manifest": "%s"}\n' "$T/other.json" > "$T/u/config.json"
    chown -R "$ATK" "$T/u"
    ln -s "$T/u/config.json" "$USERCONF"
    run --separate-stderr "$CUDAENV" info tf-2.14
    [[ "$stderr" == *"ignoring the config file $USERCONF: $USERCONF is a symlink"* ]] || { echo "$stderr"; false; }
    [[ "$output" != *"manifest      $T/other.json"* ]]
    # the site's, to a root-owned file: still a symlink, still ignored
    mkdir -p "$(dirname "$SITECONF")"
    cp "$T/u/config.json" "$T/rootconf.json"
    ln -s "$T/rootconf.json" "$SITECONF"
    run --separate-stderr "$CUDAENV" info tf-2.14
    [[ "$stderr" == *"ignoring the config file $SITECONF: $SITECONF is a symlink"* ]] || { echo "$stderr"; false; }
    [[ "$output" != *"manifest      $T/other.json"* ]]
}

@test "as root, config set into a user's HOME whose .config links to root's directory: exit 6, nothing written through it" {
    atk_setup
    mkdir -p "$T/victim" "$T/uh"
    ln -s "$T/victim" "$T/uh/.config"
    chown -R -h "$ATK" "$T/uh"
    HOME=$T/uh run --separate-stderr "$CUDAENV" config set mirror https://evil.example/m
    [ "$status" -eq 6 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"$T/uh is owned by uid $(id -u "$ATK"), not root"* ]] || { echo "$stderr"; false; }
    [[ "$stderr" == *"use sudo -H, or --system"* ]]
    [ -z "$(ls -A "$T/victim")" ]
    # root's own HOME: written
    run --separate-stderr "$CUDAENV" config set mirror https://site.example/m
    [ "$status" -eq 0 ]
    grep -q site.example "$USERCONF"
}
