# A real OCI registry on loopback for bats scenarios: Debian's docker-registry
# (the CNCF distribution server) with a filesystem storage under $T.
#   registry_start [--auth|--token] [--tls]   start one; exports REG (127.0.0.1:PORT),
#       REG_DATA (its storage), REG_LOG (its log: one access line per
#       request); --auth: htpasswd Basic auth, user alice, password s3cret
#       (htpasswd -Bbn); --token: Bearer tokens from tests/lib/tokenserver.py
#       (granted to alice:s3cret only; its requests in $TOKEN_LOG); --tls: https with a self-signed certificate for
#       127.0.0.1 in CURL_CA_BUNDLE (else plain http: cudaenv needs --insecure)
#   registry_stop                     (from teardown)
#   registry_requests PATTERN         count the access lines matching PATTERN
#   registry_blob DIGEST              the file the registry stores a blob in
# Tests skip (with the reason) when /usr/bin/docker-registry is not installed.
REGISTRY_BIN=${REGISTRY_BIN:-/usr/bin/docker-registry}

registry_need() {
    [ -x "$REGISTRY_BIN" ] || skip "no $REGISTRY_BIN: apt-get install docker-registry (tools/deps-test.txt)"
}

registry_start() {
    registry_need
    local auth="" tls="" token="" a
    for a in "$@"; do
        case $a in --auth) auth=1 ;; --tls) tls=1 ;; --token) token=1 ;; esac
    done
    local dir=$T/registry port
    mkdir -p "$dir/data"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    {
        printf 'version: 0.1\nlog:\n  level: info\nstorage:\n  filesystem:\n    rootdirectory: %s\n' "$dir/data"
        printf 'http:\n  addr: 127.0.0.1:%s\n' "$port"
        if [ -n "$tls" ]; then
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
                -keyout "$dir/key.pem" -out "$dir/cert.pem" -days 2 -subj /CN=127.0.0.1 \
                -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 || return 1
            printf '  tls:\n    certificate: %s\n    key: %s\n' "$dir/cert.pem" "$dir/key.pem"
        fi
        if [ -n "$auth" ]; then
            htpasswd -Bbn alice s3cret > "$dir/htpasswd" || return 1
            printf 'auth:\n  htpasswd:\n    realm: cudaenv-test\n    path: %s\n' "$dir/htpasswd"
        fi
        if [ -n "$token" ]; then
            openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/token-key.pem" -out "$dir/token-cert.pem" \
                -days 2 -subj /CN=cudaenv-test-token >/dev/null 2>&1 || return 1
            export TOKEN_LOG=$dir/token.log
            : > "$TOKEN_LOG"
            python3 "$TESTS_DIR/lib/tokenserver.py" --key "$dir/token-key.pem" --cert "$dir/token-cert.pem" \
                --port-file "$dir/token-port" --log "$TOKEN_LOG" --user alice:s3cret > "$dir/token.err" 2>&1 &
            TOKEN_PID=$!
            for i in $(seq 100); do [ -s "$dir/token-port" ] && break; sleep 0.05; done
            [ -s "$dir/token-port" ] || { cat "$dir/token.err" >&2; return 1; }
            printf 'auth:\n  token:\n    realm: http://127.0.0.1:%s/token\n    service: cudaenv-registry\n' "$(cat "$dir/token-port")"
            printf '    issuer: cudaenv-test-issuer\n    rootcertbundle: %s\n' "$dir/token-cert.pem"
        fi
    } > "$dir/config.yml"
    export REG=127.0.0.1:$port REG_DATA=$dir/data REG_LOG=$dir/registry.log
    "$REGISTRY_BIN" serve "$dir/config.yml" > "$REG_LOG" 2>&1 &
    REG_PID=$!
    local scheme=http i
    [ -n "$tls" ] && scheme=https
    for i in $(seq 100); do
        curl -sk -o /dev/null "$scheme://$REG/v2/" && break
        kill -0 "$REG_PID" 2>/dev/null || { cat "$REG_LOG" >&2; return 1; }
        sleep 0.05
    done
    curl -sk -o /dev/null "$scheme://$REG/v2/" || { echo "docker-registry did not start" >&2; cat "$REG_LOG" >&2; return 1; }
    [ -n "$tls" ] && export CURL_CA_BUNDLE=$dir/cert.pem
    return 0
}

registry_stop() {
    if [ -n "${REG_PID:-}" ]; then
        kill "$REG_PID" 2>/dev/null || true
        wait "$REG_PID" 2>/dev/null || true
    fi
    if [ -n "${TOKEN_PID:-}" ]; then
        kill "$TOKEN_PID" 2>/dev/null || true
        wait "$TOKEN_PID" 2>/dev/null || true
    fi
    unset REG_PID TOKEN_PID
    return 0
}

registry_requests() {
    grep -c -- "$1" "$REG_LOG" || true
}

registry_blob() {
    local hex=${1#sha256:}
    echo "$REG_DATA/docker/registry/v2/blobs/sha256/${hex:0:2}/$hex/data"
}
