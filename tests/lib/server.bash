# Loopback test server for bats scenarios (tests/server/httpd.py).
#   server_start DIR [--tls]  serve DIR on 127.0.0.1; exports SERVER_URL
#                             (http://127.0.0.1:PORT), SERVER_LOG, SERVER_PID;
#                             with --tls also SERVER_TLS_URL (https://...) and
#                             CURL_CA_BUNDLE (a self-signed cert for 127.0.0.1)
#   server_stop               stop it (call from teardown)
#   server_requests PATTERN   count logged requests whose line matches PATTERN
#   upstream_setup_file       (from setup_file) build the fixture "NVIDIA" tree
#                             once per file in $UPSTREAM, for server_start
#   upstream_serve            (from setup, after common_setup) serve $UPSTREAM,
#                             its manifest in $T/manifest.json (not exported),
#                             CUDAENV_RETRY_DELAY_MS=10
# Misbehaviour is chosen per URL: $SERVER_URL/_/drop=1000/file, see httpd.py.
# Log lines: "GET /_/drop=1000/a.bin range=bytes=1000- status=206 tls=0".

server_start() {
    local dir=$1 tls=${2:-}
    local state
    state=$(mktemp -d "${BATS_TMPDIR:-/tmp}/cudaenv-httpd.XXXXXX")
    SERVER_STATE=$state
    export SERVER_LOG=$state/requests.log
    : >"$SERVER_LOG"
    local extra=()
    if [ "$tls" = --tls ]; then
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -keyout "$state/key.pem" -out "$state/cert.pem" -days 2 -subj /CN=127.0.0.1 \
            -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 || return 1
        extra=(--tls-cert "$state/cert.pem" --tls-key "$state/key.pem" --tls-port-file "$state/tls-port")
        export CURL_CA_BUNDLE=$state/cert.pem
    fi
    python3 "$TESTS_DIR/server/httpd.py" --root "$dir" --port-file "$state/port" \
        --log "$SERVER_LOG" "${extra[@]}" >"$state/stderr" 2>&1 &
    export SERVER_PID=$!
    local i
    for i in $(seq 100); do
        [ -s "$state/port" ] && break
        kill -0 "$SERVER_PID" 2>/dev/null || { cat "$state/stderr" >&2; return 1; }
        sleep 0.05
    done
    [ -s "$state/port" ] || { echo "test server did not start" >&2; return 1; }
    export SERVER_URL=http://127.0.0.1:$(cat "$state/port")
    [ -n "${extra[*]}" ] && export SERVER_TLS_URL=https://127.0.0.1:$(cat "$state/tls-port")
    return 0
}

server_stop() {
    if [ -n "${SERVER_PID:-}" ]; then
        # the server dies of SIGTERM (status 143): not an error of the caller,
        # which may run under set -e (make demo, make bench)
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if [ -n "${SERVER_STATE:-}" ]; then rm -rf "$SERVER_STATE"; fi
    unset SERVER_PID SERVER_STATE SERVER_URL SERVER_TLS_URL SERVER_LOG
    return 0
}

server_requests() {
    grep -c -- "$1" "$SERVER_LOG"
}

upstream_serve() {
    server_start "$UPSTREAM" || return 1
    fx_mirror_manifest "$UPSTREAM" "$SERVER_URL" > "$T/manifest.json"
    export CUDAENV_RETRY_DELAY_MS=10
}

upstream_setup_file() {
    export UPSTREAM=$BATS_FILE_TMPDIR/nvidia
    source "$BATS_TEST_DIRNAME/../lib/fixtures.sh"
    fx_mirror "$UPSTREAM"
}
