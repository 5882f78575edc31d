# The system-switch scenarios' common ground (system.bats, transaction.bats,
# restore.bats): an image-like CUDAENV_SYSROOT with the store inside it
# (ldconfig -r reads its ld.so.conf), two installed fixture toolchains, and a
# teardown that fails the test if this machine's own /usr/local/cuda,
# /etc/ld.so.conf.d or ld.so.cache changed.

# sysroot_setup [DIR...]: root only (skips otherwise); DIRs are created inside
# the sysroot too.  Sets S, P118/P117 (host paths), I118/I117 (image paths).
sysroot_setup() {
    common_setup
    sysguard_record
    [ "$(id -u)" -eq 0 ] || skip "the system switch tests run as root"
    S=$CUDAENV_SYSROOT
    export CUDAENV_ROOT=$S/opt/cudaenv
    mkdir -p "$S/etc/ld.so.conf.d" "$S/usr/local"
    local d
    for d in "$@"; do mkdir -p "$S/$d"; done
    echo 'include /etc/ld.so.conf.d/*.conf' > "$S/etc/ld.so.conf"
    P118=$(fx_installed 11.8.0 8.7.0.84)
    P117=$(fx_installed 11.7.0)
    I118=/opt/cudaenv/versions/11.8.0+cudnn8.7.0.84
    I117=/opt/cudaenv/versions/11.7.0
    chmod -R go-w "$T"   # root's rules: nothing on the way may be group/other-writable
}

# sysguard_record: what the machine's own /usr/local/cuda and ld.so.cache are now,
# for sysroot_teardown to compare with.  First in setup, before any skip: a test
# that skipped before recording has nothing to compare, and teardown says nothing.
sysguard_record() {
    REAL_CUDA=$(readlink /usr/local/cuda || true)
    REAL_CACHE=$(sha256sum /etc/ld.so.cache 2>/dev/null || true)
    REAL_RECORDED=1
}

sysroot_teardown() {
    local bad=0
    if [ "$(id -u)" -eq 0 ] && [ -n "${REAL_RECORDED-}" ]; then
        [ "$(readlink /usr/local/cuda || true)" = "${REAL_CUDA-}" ] || { echo "FATAL: /usr/local/cuda changed" >&2; bad=1; }
        [ ! -e /etc/ld.so.conf.d/cudaenv.conf ] || { echo "FATAL: /etc/ld.so.conf.d/cudaenv.conf written" >&2; bad=1; }
        [ "$(sha256sum /etc/ld.so.cache 2>/dev/null || true)" = "${REAL_CACHE-}" ] || { echo "FATAL: ld.so.cache changed" >&2; bad=1; }
    fi
    common_teardown
    return $bad
}

# the file the sysroot's loader cache (ldconfig -r) resolves the soname $1 to
cache_lib() { ldconfig -r "$S" -p | awk -v s="$1" '$1 == s { print $NF; exit }'; }

# the "gen" of a system.json record (cJSON_Print: one "key": value a line);
# no python per call, some tests read records hundreds of times
gen_of() { sed -n 's/^[[:space:]]*"gen":[[:space:]]*\([0-9]*\),\{0,1\}$/\1/p' "$1" 2>/dev/null; }
