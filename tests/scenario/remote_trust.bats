#!/usr/bin/env bats
# The manifest's own trust (issue 36, item 3; docs/MANIFEST.md "Signed
# claims"): a signed remote manifest names the URL it is served at
# ("source") and its turn in the publisher's sequence ("serial"), inside the
# signed bytes; "expires" ends it; the fetch is bounded as a download is;
# size and signature are checked over the raw bytes before any parse.
# Served over loopback HTTPS (tests/lib/signed.bash).
load ../lib/common
load ../lib/mirror
load ../lib/server
load ../lib/signed
bats_require_minimum_version 1.5.0

setup_file() { mirror_setup_file; }

setup() {
    common_setup
    signed_setup
}
teardown() { rm -f "$MIRROR/cudaenv.json" "$MIRROR/cudaenv.json.sig"; server_stop; common_teardown; }

serial_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["serial"])' "$1"; }

@test "a signed manifest names its source and serial: one signed for another URL, or served at one it does not name, is exit 5" {
    serve_edit 'del m["source"]'
    run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"the manifest $CUDAENV_MANIFEST is signed but names no \"source\": refused"* ]] || { echo "$stderr"; false; }
    run ! ls "$CUDAENV_ROOT"/manifests/*.json
    serve_edit 'del m["serial"]'
    run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"names no \"serial\""* ]]
    # signed for A (another site), served by B (us)
    serve_edit 'm["source"] = "https://a.example/cuda/cudaenv.json"'
    run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"the manifest served at $CUDAENV_MANIFEST is the manifest of https://a.example/cuda/cudaenv.json (its \"source\"): refused"* ]]
    # the right one: taken, and its serial remembered
    serve_edit pass
    run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    grep -q "\"serial\":$(serial_of "$SERVED")" "$(copy).meta"
    # the same bytes and signature, fetched from another URL of the same server
    export CUDAENV_MANIFEST=$SERVER_TLS_URL/_/norange/cudaenv.json
    run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"the manifest served at $CUDAENV_MANIFEST is the manifest of $SERVER_TLS_URL/cudaenv.json"* ]]
}

@test "the serial only grows: the same serial with other bytes, or a lower one, is exit 5 and the copy is kept" {
    "$CUDAENV" -q update
    n=$(serial_of "$SERVED")
    cp "$(copy)" "$T/before"
    # a replay: the same serial (and date), other bytes, validly signed
    serve_edit "m['serial'] = $n; m['tensorflow']['2.14']['cudnn'] = '8.6.0.163'"
    run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"has serial $n, as the copy it would replace, but other bytes: refused"* ]] || { echo "$stderr"; false; }
    cmp "$(copy)" "$T/before"
    # lower, though dated later
    serve_edit "m['serial'] = $((n - 1)); m['updated'] = '2027-01-01'"
    run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"has serial $((n - 1)), lower than the copy it would replace (serial $n): refused"* ]]
    cmp "$(copy)" "$T/before"
    # none at all (unsigned, opted out): still not below the copy's
    serve_edit 'del m["serial"]' unsigned
    rm "$SERVED.sig"
    CUDAENV_MANIFEST_UNSIGNED=1 run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"has no serial, lower than the copy it would replace (serial $n)"* ]]
    cmp "$(copy)" "$T/before"
    # the same bytes again: current; a higher serial: taken
    cp "$T/before" "$SERVED"; sign "$SERVED"
    run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 0 ]
    [[ "$output" == *"is current"* ]]
    serve_edit "m['serial'] = $((n + 5)); m['updated'] = '2027-01-01'"
    run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$output" == *"updated the manifest"* ]]
    grep -q "\"serial\":$((n + 5))" "$(copy).meta"
}

@test "expires: past it install warns and uses the copy; update fails (exit 5), also when the source answers 304 forever" {
    # a server that keeps answering 304 to every conditional request
    export CUDAENV_MANIFEST=$SERVER_TLS_URL/_/frozen/cudaenv.json
    serve_edit 'm["expires"] = "2020-01-31"'
    run --separate-stderr "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"the manifest $CUDAENV_MANIFEST expired on 2020-01-31 (its \"expires\"): using the copy anyway"* ]] || { echo "$stderr"; false; }
    grep -q '"expires":"2020-01-31"' "$(copy).meta"
    # the publisher has published again, but the source answers 304
    serve_edit 'm["expires"] = "2999-01-01"'
    run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 5 ]
    [ "$(server_requests 'frozen/cudaenv.json .*status=304')" -eq 1 ]
    [[ "$output" != *"is current"* ]] || false
    [[ "$stderr" == *"expired on 2020-01-31 (its \"expires\") and its source answers that it has not changed (304): it is not current"* ]] || { echo "$stderr"; false; }
    CUDAENV_UPDATE_INTERVAL=0 run --separate-stderr "$CUDAENV" info tf-2.14
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"expired on 2020-01-31"* ]]
    # served expired (a 200): update refuses it, the copy stays
    export CUDAENV_MANIFEST=$SERVER_TLS_URL/cudaenv.json
    serve_edit 'm["expires"] = "2020-01-31"'
    run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"the manifest $CUDAENV_MANIFEST expired on 2020-01-31 (its \"expires\"): refused as current"* ]]
    run ! grep -l "\"url\":\"$CUDAENV_MANIFEST\"" "$CUDAENV_ROOT"/manifests/*.meta
    # not a date: invalid
    serve_edit 'm["expires"] = "2026-02-30"'
    run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"expires: '2026-02-30' is not a date (YYYY-MM-DD)"* ]]
}

@test "a source too slow (2 bytes/s): update fails within the deadline; install falls back to the local copy naming the URL" {
    # fast for the first request of each URL, 2 bytes/s from the second on
    export CUDAENV_MANIFEST=$SERVER_TLS_URL/_/rate=2,ratefrom=2/cudaenv.json CUDAENV_RATE_WINDOW=2
    serve_edit pass
    "$CUDAENV" -q install tf-2.14
    cp "$(copy)" "$T/before"
    serve_edit 'm["updated"] = "2027-01-01"'   # a 200 from now on, at 2 bytes/s
    local t0 t1
    t0=$(date +%s)
    run --separate-stderr timeout 60 "$CUDAENV" update
    t1=$(date +%s)
    [ "$status" -eq 4 ] || { echo "status $status: $stderr"; false; }
    [[ "$stderr" == *"$CUDAENV_MANIFEST is too slow: "*" bytes in the last 2 s"*"at least 4096 needed"* ]] || { echo "$stderr"; false; }
    [ $((t1 - t0)) -lt 20 ] || { echo "$((t1 - t0)) s"; false; }
    cmp "$(copy)" "$T/before"
    t0=$(date +%s)
    CUDAENV_UPDATE_INTERVAL=0 run --separate-stderr timeout 60 "$CUDAENV" install tf-2.14
    t1=$(date +%s)
    [ "$status" -eq 0 ] || { echo "status $status: $stderr"; false; }
    [[ "$stderr" == *"$CUDAENV_MANIFEST is too slow"*"; using the local copy of the manifest"* ]] || { echo "$stderr"; false; }
    [ $((t1 - t0)) -lt 20 ]
    # the deadline bounds a source that stays just above the minimum rate
    CUDAENV_MIN_RATE=1 CUDAENV_DEADLINE_BASE=3 run --separate-stderr timeout 60 "$CUDAENV" update
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"$CUDAENV_MANIFEST did not arrive in time (3 s;"* ]] || { echo "$stderr"; false; }
}

@test "a 15 MiB unsigned manifest is refused before it is parsed (max RSS stays small); over 16 MiB is refused while it arrives" {
    # 15 MiB of valid JSON that would cost cJSON hundreds of MB to parse
    python3 -c 'import sys; sys.stdout.write("{\"schema\": 1, \"x\": [" + "0," * (15 * 1024 * 512 - 1) + "0]}")' > "$SERVED"
    rm -f "$SERVED.sig"
    # 50 MB; a sanitizer build (make check-asan) pays its shadow and quarantine: 160 MB (parsed: GBs)
    local bound=51200
    readelf -d "$CUDAENV_FULL" | grep -q libasan && bound=163840
    run --separate-stderr /usr/bin/time -f 'maxrss=%M' "$CUDAENV" update
    [ "$status" -eq 5 ]
    [[ "$stderr" == *"the manifest $CUDAENV_MANIFEST is not signed"* ]] || { echo "$stderr"; false; }
    rss=$(grep -o 'maxrss=[0-9]*' <<<"$stderr" | cut -d= -f2)
    echo "max RSS ${rss} KiB"
    [ "$rss" -lt "$bound" ] || { echo "max RSS ${rss} KiB"; false; }
    # badly signed: refused before the parse too
    echo garbage > "$SERVED.sig"
    run --separate-stderr /usr/bin/time -f 'maxrss=%M' "$CUDAENV" update
    [ "$status" -eq 5 ]
    rss=$(grep -o 'maxrss=[0-9]*' <<<"$stderr" | cut -d= -f2)
    [ "$rss" -lt "$bound" ] || { echo "max RSS ${rss} KiB"; false; }
    # over the bound: the fetch stops
    head -c $((17 << 20)) /dev/zero > "$SERVED"
    run --separate-stderr "$CUDAENV" update
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"is larger than 16777216 bytes"* ]] || { echo "$stderr"; false; }
    run ! ls "$CUDAENV_ROOT"/manifests/*.json
}
