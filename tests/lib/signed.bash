# A signed remote manifest for bats scenarios (remote.bats, remote_trust.bats):
# $MIRROR's manifest served over loopback HTTPS as cudaenv.json, signed with a
# throwaway ed25519 site key trusted in the test's sysroot.
#   signed_setup            (from setup, after common_setup) start the server,
#                           make the key, serve $SERVED for CUDAENV_MANIFEST
#   sign FILE [KEY]         write FILE.sig
#   serve_edit EXPR [unsigned]
#                           change $SERVED with a python expression on m; then
#                           its signed claims (docs/MANIFEST.md): "source" is
#                           $CUDAENV_MANIFEST (or $SERVED_URL) and "serial" one more than the
#                           last served, unless EXPR set them; then sign it
#                           (unless told "unsigned")
#   copy                    the local copy of the manifest in the store
signed_setup() {
    server_start "$MIRROR" --tls
    export CUDAENV_RETRY_DELAY_MS=10
    KEYS=$CUDAENV_SYSROOT/etc/cudaenv/keys
    mkdir -p "$KEYS"
    openssl genpkey -algorithm ed25519 -out "$T/site.key" 2>/dev/null
    openssl pkey -in "$T/site.key" -pubout -out "$KEYS/site.pem"
    SERVED=$MIRROR/cudaenv.json
    export SERVED_URL=$SERVER_TLS_URL/cudaenv.json CUDAENV_MANIFEST=$SERVER_TLS_URL/cudaenv.json
    cp "$MIRROR/manifest.json" "$SERVED"
    serve_edit 'pass'
}

sign() { openssl pkeyutl -sign -rawin -inkey "${2:-$T/site.key}" -in "$1" | base64 -w0 > "$1.sig"; }

serve_edit() {
    python3 - "$SERVED" "$1" "$T/serial" <<'PY'
import json, os, sys
p, expr, counter = sys.argv[1:4]
m = json.load(open(p))
exec(expr)
serial = int(open(counter).read()) + 1 if os.path.exists(counter) else 1
if "serial" not in expr:
    m["serial"] = serial
if "source" not in expr:
    m["source"] = os.environ.get("CUDAENV_MANIFEST") or os.environ["SERVED_URL"]
open(counter, "w").write(str(max(serial, m.get("serial") or 0)))
json.dump(m, open(p, "w"), indent=1)
PY
    [ "${2:-}" = unsigned ] || sign "$SERVED"
}

copy() { ls "$CUDAENV_ROOT"/manifests/*.json; }
