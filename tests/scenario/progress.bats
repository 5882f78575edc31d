#!/usr/bin/env bats
# Progress for every long step, and what an install says at its end: the bar
# fits a 50-column terminal and names the file; without a terminal one line
# per file every 10 %; the runfile step shows the elapsed time; Ctrl-C says
# what was kept and the rerun resumes; network failures name the ways out;
# a finished install says how to use it.
load ../lib/common
load ../lib/server
load ../lib/mirror
bats_require_minimum_version 1.5.0

setup_file() {
    mirror_setup_file
    # a runfile of 3 MiB (makeself ignores what follows its archive): more than
    # the 1 MiB the downloader gathers before writing, for the Ctrl-C test
    mkdir -p "$MIRROR/big"
    cp "$MIRROR/compute/cuda/11.8.0/local_installers/cuda_11.8.0_520.61.05_linux.run" "$MIRROR/big/"
    head -c 3145728 /dev/urandom >> "$MIRROR/big/cuda_11.8.0_520.61.05_linux.run"
}

setup() {
    common_setup
    mirror_serve
}

teardown() { mirror_teardown; }

CUDNN87='m["cudnn"]["8.7.0.84"]["cuda11"]["linux-x86_64"]'
RUN118='m["cuda"]["11.8.0"]["runfile"]["linux-x86_64"]'
# the fixture runfile (~21 KB) is the larger download: throttle it
slow_runfile() { edit_manifest "a = $RUN118; a['url'] = a['url'].replace('/compute/', '/_/rate=$1/compute/')"; }

@test "a 50-column terminal: every bar line fits in 49 columns and names the file" {
    command -v script >/dev/null || skip "script (util-linux) not installed"
    slow_runfile 4000
    run script -qec "stty cols 50 rows 20; $CUDAENV install tf-2.14" /dev/null
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    # the bar: what follows each "\r ESC[K" up to the next \r or newline
    bars=$(printf '%s' "$output" | tr '\n' '\r' | tr '\r' '\n' | sed -n 's/^\x1b\[K//p' | grep '%' || true)
    [ -n "$bars" ]
    echo "$bars" | head -3
    while IFS= read -r b; do [ "${#b}" -le 49 ] || { echo "too wide (${#b}): $b"; false; }; done <<<"$bars"
    grep -q 'cuda_11.8.0' <<<"$bars"
    # a wide terminal gets the [####] bar too
    "$CUDAENV" uninstall -q tf-2.14; rm -rf "$CUDAENV_ROOT/cache" "$CUDAENV_ROOT/pkgs"
    run script -qec "stty cols 120 rows 20; $CUDAENV install tf-2.14" /dev/null
    [[ "$output" == *"[#"* && "$output" == *"cuda_11.8.0_520.61.05_linux.run"* ]]
}

@test "no terminal: one line per file at every 10 %, no carriage returns" {
    slow_runfile 4000
    run --separate-stderr "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    n=$(grep -cE 'cuda_11[^:]*: [0-9]+% \([0-9.]+ [KMG]?i?B of ' <<<"$stderr")
    echo "$stderr" | grep '%' | head -12
    [ "$n" -ge 3 ] && [ "$n" -le 12 ] || false
    [[ "$stderr" != *$'\r'* ]]
    # the percentages only go up
    grep -oE 'cuda_11[^:]*: [0-9]+%' <<<"$stderr" | grep -oE '[0-9]+%$' | tr -d % | sort -nc
}

@test "the runfile step shows the elapsed time" {
    command -v script >/dev/null || skip "script (util-linux) not installed"
    run script -qec "env FX_RUNFILE_SLEEP=3 $CUDAENV install tf-2.14" /dev/null
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"running cuda_11.8.0_520.61.05_linux.run: 0:0"[1-9]" elapsed"* ]]
}

# install tf-2.14 in the background as a terminal would start it (a script's
# background job ignores SIGINT), SIGINT it once the server log matches $1
# (then $2 seconds more): its stderr in $T/err, its status in $rc
interrupt_install() {
    python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
        "$CUDAENV" install tf-2.14 2>"$T/err" &
    local pid=$! i
    for i in $(seq 300); do
        grep -qE -- "$1" "$SERVER_LOG" "$T/err" && break
        sleep 0.1
    done
    sleep "$2"
    kill -INT "$pid"
    rc=0; wait "$pid" || rc=$?
    cat "$T/err"
}

# the .part of the runfile the manifest names now
runfile_part() {
    python3 -c "import json, sys; m = json.load(open(sys.argv[1])); print(sys.argv[2] + '/cache/' + $RUN118['sha256'] + '.part')" \
        "$CUDAENV_MANIFEST" "$CUDAENV_ROOT"
}

@test "Ctrl-C in a throttled download: says exactly what was kept; the rerun resumes there" {
    f=$MIRROR/big/cuda_11.8.0_520.61.05_linux.run
    edit_manifest "import hashlib, os; a = $RUN118; a['url'] = '$SERVER_URL/_/rate=400000/big/cuda_11.8.0_520.61.05_linux.run'; a['sha256'] = hashlib.sha256(open('$f', 'rb').read()).hexdigest(); a['size'] = os.path.getsize('$f')"
    interrupt_install 'cuda_11[^:]*: ([5-9][0-9])%' 0
    [ "$rc" -eq 130 ]
    # the bytes the .part holds, to the byte, and where the next run starts
    n=$(sed -nE 's/.*interrupted; kept ([0-9]+) bytes \([0-9.]+ MiB\) of cuda_11\.8\.0_520\.61\.05_linux\.run in .*/\1/p' "$T/err")
    [ "${n:-0}" -gt 1048576 ]
    [ "$(stat -c %s "$(runfile_part)")" -eq "$n" ]
    grep -q "in $CUDAENV_ROOT/cache; run the same command again to resume it at byte $n$" "$T/err"
    edit_manifest "a = $RUN118; a['url'] = a['url'].replace('/_/rate=400000', '')"
    # (the padded runfile then fails makeself's own size check: only the download matters here)
    run "$CUDAENV" install tf-2.14
    [[ "$output" == *"resuming cuda_11.8.0_520.61.05_linux.run at byte $n"* ]]
    [[ "$output" =~ "downloaded cuda_11.8.0_520.61.05_linux.run ("[0-9]+\.[0-9]" MiB, sha256 ok)" ]] || { echo "$output"; false; }
    [ "$(server_requests "GET /big/cuda_11.8.0.*range=bytes=$n- status=206")" -eq 1 ]
}

@test "Ctrl-C in a small download (under the 1 MiB write buffer): its bytes are written and resumed" {
    # 1 KiB arrives, then nothing for a minute: the bytes are only in memory
    edit_manifest "a = $RUN118; a['url'] = a['url'].replace('/compute/', '/_/stall=60/compute/')"
    CUDAENV_STALL_TIMEOUT=120 interrupt_install 'GET /_/stall=60/compute/cuda/11.8.0/.*status=200' 1
    [ "$rc" -eq 130 ]
    part=$(runfile_part)
    [ "$(stat -c %s "$part")" -eq 1024 ]
    grep -q "interrupted; kept 1024 bytes (1.0 KiB) of cuda_11.8.0_520.61.05_linux.run in $CUDAENV_ROOT/cache; run the same command again to resume it at byte 1024$" "$T/err"
    [[ "$(cat "$T/err")" != *"about"* ]]
    edit_manifest "a = $RUN118; a['url'] = a['url'].replace('/_/stall=60', '')"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"resuming cuda_11.8.0_520.61.05_linux.run at byte 1024"* ]]
    [ "$(server_requests 'GET /compute/cuda/11.8.0/.* range=bytes=1024- status=206')" -eq 1 ]
    [ "$(server_requests 'GET /compute/cuda/11.8.0/.* range=- ')" -eq 0 ]
}

@test "Ctrl-C before a download's first byte: it starts over, and the rerun asks for no Range" {
    # the headers, then no byte for a minute
    edit_manifest "a = $RUN118; a['url'] = a['url'].replace('/compute/', '/_/hold=60/compute/')"
    interrupt_install 'GET /_/hold=60/compute/cuda/11.8.0/.*status=200' 1
    [ "$rc" -eq 130 ]
    grep -q "interrupted; cuda_11.8.0_520.61.05_linux.run kept no byte: it starts over when the same command runs again (finished downloads are kept in $CUDAENV_ROOT/cache)$" "$T/err"
    run grep -E 'kept [0-9]|about|resume' "$T/err"
    [ "$status" -eq 1 ]
    part=$(runfile_part)
    [ ! -e "$part" ] || [ "$(stat -c %s "$part")" -eq 0 ]
    edit_manifest "a = $RUN118; a['url'] = a['url'].replace('/_/hold=60', '')"
    run "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" != *"resuming cuda_11.8.0"* ]]
    [ "$(server_requests 'GET /compute/cuda/11.8.0/.* range=- status=200')" -eq 1 ]
    [ "$(server_requests 'GET /compute/cuda/11.8.0/.* range=bytes')" -eq 0 ]
}

@test "network failure: exit 4, retries shown without -v, and the ways out named" {
    edit_manifest "a = $RUN118; a['url'] = a['url'].replace('$SERVER_URL', 'http://127.0.0.1:1')"
    run --separate-stderr "$CUDAENV" install tf-2.14
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"retrying"* ]]
    [[ "$stderr" == *"https_proxy"* && "$stderr" == *"CUDAENV_MIRROR"* && "$stderr" == *"--offline"* ]]
}

@test "an unreachable mirror: one line per attempt, not per file, and no advice to set the mirror that failed" {
    CUDAENV_RETRY_DELAY_MS=10 CUDAENV_MIRROR=http://127.0.0.1:1 run --separate-stderr "$CUDAENV" install tf-2.14 --insecure \
        --manifest "$REPO/share/manifests/cudaenv.json"   # NVIDIA URLs: the mirror serves them
    [ "$status" -eq 4 ]
    [ "$(grep -c 'cannot reach 127.0.0.1:1 (' <<<"$stderr")" -le 6 ] || { echo "$stderr"; false; }
    [ "$(wc -l <<<"$stderr")" -le 16 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"giving up after 5 attempts: cannot reach 127.0.0.1:1"* ]]
    [[ "$stderr" == *"the mirror failed (CUDAENV_MIRROR=http://127.0.0.1:1)"*"unset CUDAENV_MIRROR"* ]]
    [[ "$stderr" != *"export CUDAENV_MIRROR=URL"* ]]
    # one core: one transfer thread, whose items' retries interleave too (no
    # backoff: an item's next try comes before the next item's first; 20
    # lines when only the line before was compared)
    CUDAENV_RETRY_DELAY_MS=0 CUDAENV_MIRROR=http://127.0.0.1:1 run --separate-stderr taskset -c 0 "$CUDAENV" install \
        tf-2.14 --insecure --manifest "$REPO/share/manifests/cudaenv.json"
    [ "$status" -eq 4 ]
    [ "$(grep -c 'cannot reach 127.0.0.1:1 (' <<<"$stderr")" -le 6 ] || { echo "$stderr"; false; }
}

@test "a finished install says how to use it" {
    run --separate-stderr "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"use it: cudaenv use 11.8.0+cudnn8.7.0.84"* && "$stderr" == *"cudaenv exec 11.8.0+cudnn8.7.0.84 -- CMD"* ]]
    run --separate-stderr "$CUDAENV" -q install tf-2.14 --force
    [[ "$stderr" != *"use it"* ]]
}

@test "a stalled download shows in a CI log: a line after 15 s saying no data came, then the retry" {
    edit_manifest "a = $RUN118; a['url'] = a['url'].replace('/compute/', '/_/stall=18/compute/')"
    run --separate-stderr env CUDAENV_STALL_TIMEOUT=60 "$CUDAENV" install tf-2.14
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    echo "$stderr" | grep -E 'no data|retrying|resuming'
    grep -qE 'cuda_11.8.0_520.61.05_linux.run: [0-9]+% \(.*; no data for 1[0-9] s\)' <<<"$stderr"
    grep -q 'retrying\|resuming' <<<"$stderr"
}

@test "Ctrl-C on a terminal: the bar's line is cleared before the message (no half line)" {
    command -v script >/dev/null || skip "script (util-linux) not installed"
    slow_runfile 3000
    cat > "$T/run.sh" <<SH
python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' $CUDAENV install tf-2.14 &
pid=\$!
sleep 3
kill -INT \$pid
wait \$pid
echo "rc=\$?"
SH
    run script -qec "sh $T/run.sh" /dev/null
    [[ "$output" == *"% "*"cuda_11.8.0"* ]]                       # the bar was drawn
    [[ "$output" == *$'\r\e[Kcudaenv: interrupted; kept '[0-9]*' bytes ('* ]]  # then cleared
    [[ "$output" == *"rc=130"* ]]
}
