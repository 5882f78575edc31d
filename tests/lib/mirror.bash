# The generated mirror (tests/lib/fixtures.sh fx_mirror: CUDA 11.8.0 and
# 12.2.2 runfiles, cuDNN 8.6/8.7/8.9 tarballs) as the scenarios use it.
#   mirror_setup_file     (from setup_file) build it once per file in $MIRROR
#   mirror_manifest URL   $T/manifest.json for $MIRROR served at URL
#                         ($SERVER_URL, or file://$MIRROR), exported as
#                         CUDAENV_MANIFEST
#   mirror_serve          (from setup, after common_setup; load ../lib/server)
#                         serve $MIRROR on the loopback server, mirror_manifest
#                         $SERVER_URL, CUDAENV_RETRY_DELAY_MS=10
#   mirror_teardown       server_stop, then common_teardown
#   edit_manifest EXPR    change $CUDAENV_MANIFEST with a python expression on m

mirror_setup_file() {
    export MIRROR=$BATS_FILE_TMPDIR/mirror
    source "$BATS_TEST_DIRNAME/../lib/fixtures.sh"
    fx_mirror "$MIRROR"
}

mirror_manifest() {
    fx_mirror_manifest "$MIRROR" "$1" > "$T/manifest.json"
    export CUDAENV_MANIFEST=$T/manifest.json
}

mirror_serve() {
    server_start "$MIRROR"
    # absolute loopback URLs in a local manifest: http is allowed for it
    mirror_manifest "$SERVER_URL"
    export CUDAENV_RETRY_DELAY_MS=10
}

mirror_teardown() {
    server_stop
    common_teardown
}

edit_manifest() {
    python3 - "$CUDAENV_MANIFEST" "$1" <<'PY'
import json, sys
p, expr = sys.argv[1], sys.argv[2]
m = json.load(open(p))
exec(expr)
json.dump(m, open(p, "w"))
PY
}
