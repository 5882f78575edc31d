#!/usr/bin/env bats
# Jobs gated on the node (issue 41 item 2): contrib/slurm's prolog, TaskProlog
# and epilog run directly with the SLURM_* variables slurmd gives them, against
# a temp store and the generated mirror; `cudaenv verify --report` lines; and
# contrib/slurm/cudaenv-report merging many nodes' lines (agreeing, one node
# with another tree, one failing).  slurm_daemons.bats runs them under a real
# slurmctld + slurmd.
bats_require_minimum_version 1.5.0
load ../lib/common
load ../lib/mirror

SL=$REPO/contrib/slurm

setup_file() {
    mirror_setup_file
}

setup() {
    common_setup
    mirror_manifest "file://$MIRROR"
    export CUDAENV_TEST_LIBCUDA=$T/no-driver/libcuda.so.1; seams_on   # the libcuda verify loads: the seams double
    unset LD_LIBRARY_PATH SLURM_JOB_COMMENT SLURM_JOB_WORK_DIR CUDAENV_SPEC SLURM_CUDAENV
    mkdir -p "$T/job/sub" "$T/bin"
    # the site's file, root's as the prolog requires
    cat > "$T/slurm.conf" <<EOF
export CUDAENV_ROOT=$CUDAENV_ROOT CUDAENV_SYSROOT=$CUDAENV_SYSROOT CUDAENV_MANIFEST=$CUDAENV_MANIFEST
export CUDAENV_TEST_LIBCUDA=$CUDAENV_TEST_LIBCUDA LD_PRELOAD=$SEAMS_SO
CUDAENV=$CUDAENV
CUDAENV_SLURM_STATE=$T/state
CUDAENV_SLURM_REPORTS=$T/reports
CUDAENV_SLURM_ALLOW_NO_GPU=1
EOF
    chmod 644 "$T/slurm.conf"
    export CUDAENV_SLURM_CONF=$T/slurm.conf
    export SLURM_JOB_ID=41 SLURM_JOB_USER=$(id -un) SLURMD_NODENAME=n1 SLURM_JOB_WORK_DIR=$T/job/sub
}
teardown() { common_teardown; }

prolog() { run --separate-stderr "$SL/cudaenv-prolog"; }
task_prolog() { run --separate-stderr "$SL/cudaenv-task-prolog"; }
field() { sed -n "s/^$1=//p" "$T/state/job-41"; }

# node_line HOST DIGEST EXIT [FAILED_STEP [LIB]]: a `verify --report` line
node_line() {
    python3 - "$@" <<'PY'
import json, sys
host, digest, code = sys.argv[1], sys.argv[2], int(sys.argv[3])
failed = sys.argv[4] if len(sys.argv) > 4 else ""
lib = sys.argv[5] if len(sys.argv) > 5 else "libcudnn.so.8.7.0"
prefix = "/opt/cudaenv/versions/11.8.0+cudnn8.7.0.84"
steps = {s: "passed" for s in ("files", "versions", "loader", "driver", "device", "kernel", "nvcc", "cudnn")}
steps["nccl"] = "skipped"
fl = []
if failed:
    steps[failed] = "failed"
    fl = [{"id": failed, "summary": "launch failed: CUDA_ERROR_ECC_UNCORRECTABLE"}]
print(json.dumps({"report": 1, "host": host, "toolchain": "11.8.0+cudnn8.7.0.84", "prefix": prefix,
                  "tree_sha256": digest * 64, "libraries": [prefix + "/lib64/libcudart.so.11.8.89", prefix + "/lib64/" + lib],
                  "steps": steps, "failed": fl, "exit_code": code}))
PY
}

@test "verify --report: one JSON line with the host, the tree digest, the libraries mapped and each step; --json carries the same" {
    P=$(fx_installed 12.3.0)
    rm "$P/bin/nvcc"
    fx_fake_gpu "$P" "$T/drv"
    fx_receipt "$P"
    export CUDAENV_TEST_LIBCUDA=$T/drv/libcuda.so.1; seams_on
    SLURMD_NODENAME= run --separate-stderr "$CUDAENV" verify 12.3 --report   # not started by slurmd: the hostname
    [ "$status" -eq 0 ]
    [ "$(printf '%s\n' "$output" | wc -l)" -eq 1 ]
    want=$(python3 -c 'import hashlib, json, sys
r = json.load(open(sys.argv[1]))
print(hashlib.sha256("".join(sorted("%s %d %s\n" % (f["path"], f["size"], f["sha256"]) for f in r["files"])).encode()).hexdigest())' "$P/.cudaenv-receipt.json")
    python3 - "$output" "$want" "$P" "$(hostname)" <<'PY'
import json, sys
r, want, prefix, host = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
assert r["host"] == host and r["toolchain"] == "12.3.0" and r["tree_sha256"] == want, r
assert r["libraries"] == [prefix + "/lib64/libcudart.so.12.3.89", prefix + "/lib64/libnvrtc.so.12.3.89"], r["libraries"]
assert [r["steps"][s] for s in ("files", "driver", "device", "kernel")] == ["passed"] * 4, r["steps"]
assert r["failed"] == [] and r["exit_code"] == 0 and r["gpus"][0]["name"] == "cudaenv fake GPU"
PY
    run --separate-stderr "$CUDAENV" verify 12.3 --json
    python3 -c 'import json, sys; d = json.loads(sys.argv[1]); assert d["toolchain"]["tree_sha256"] == sys.argv[2] and d["host"] and len(d["libraries"]) == 2' "$output" "$want"
    # where slurmd started it, the node's name in Slurm (sinfo's, the epilog's NODE.jsonl), the hostname beside
    SLURMD_NODENAME=gpu-node-07 run --separate-stderr "$CUDAENV" verify 12.3 --report
    python3 -c 'import json, sys; d = json.loads(sys.argv[1]); assert (d["host"], d["hostname"]) == ("gpu-node-07", sys.argv[2]), d' "$output" "$(hostname)"
    # the digest names the files, not when or from where they came: a new receipt date keeps it
    sed -i 's/"installed_at": "[^"]*"/"installed_at": "2030-01-01T00:00:00Z"/' "$P/.cudaenv-receipt.json"
    run --separate-stderr "$CUDAENV" verify 12.3 --report
    [[ "$output" == *"\"tree_sha256\":\"$want\""* ]]
    run "$CUDAENV" verify 12.3 --report --json
    [ "$status" -eq 2 ]
    [[ "$output" == *"--json and --report are two formats"* ]]
}

@test "cudaenv-report: nodes that agree and pass make one table, exit 0" {
    for h in n1 n2 n3; do node_line "$h" a 0; done > "$T/all.jsonl"
    run "$SL/cudaenv-report" "$T/all.jsonl"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "NODE  TOOLCHAIN             DIGEST        LIBS  GPU STEPS   RESULT" ]
    [ "${lines[1]}" = "n1    11.8.0+cudnn8.7.0.84  aaaaaaaaaaaa  same  5/6 passed  ok" ]
    [ "${lines[3]}" = "n3    11.8.0+cudnn8.7.0.84  aaaaaaaaaaaa  same  5/6 passed  ok" ]
    [ "${lines[4]}" = "11.8.0+cudnn8.7.0.84: 3 nodes, 3 ok" ]
}

@test "cudaenv-report: a node with another tree digest, one with other libraries and one failing are flagged, exit 1" {
    mkdir "$T/reports"
    node_line n1 a 0 > "$T/reports/n1.jsonl"
    node_line n2 a 0 >> "$T/reports/n2.jsonl"
    node_line n3 b 0 > "$T/reports/n3.jsonl"
    node_line n4 a 7 kernel > "$T/reports/n4.jsonl"
    node_line n5 a 0 "" libcudnn.so.8.6.0 > "$T/reports/n5.jsonl"
    # n2's earlier failure is superseded by its last line
    { node_line n2 a 7 kernel; node_line n2 a 0; } > "$T/reports/n2.jsonl"
    run "$SL/cudaenv-report" "$T/reports"
    echo "$output"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "NODE  TOOLCHAIN             DIGEST        LIBS    GPU STEPS                   RESULT" ]
    [ "${lines[2]}" = "n2    11.8.0+cudnn8.7.0.84  aaaaaaaaaaaa  same    5/6 passed                  ok" ]
    [ "${lines[3]}" = "n3    11.8.0+cudnn8.7.0.84  bbbbbbbbbbbb  same    5/6 passed                  OUTLIER: tree digest differs from 4 of 5 nodes (aaaaaaaaaaaa)" ]
    [ "${lines[4]}" = "n4    11.8.0+cudnn8.7.0.84  aaaaaaaaaaaa  same    4/6 passed, failed: kernel  FAIL: kernel: launch failed: CUDA_ERROR_ECC_UNCORRECTABLE" ]
    [ "${lines[5]}" = "n5    11.8.0+cudnn8.7.0.84  aaaaaaaaaaaa  DIFFER  5/6 passed                  OUTLIER: mapped libraries differ (lib64/libcudnn.so.8.6.0, lib64/libcudnn.so.8.7.0)" ]
    [ "${lines[6]}" = "11.8.0+cudnn8.7.0.84: 5 nodes, 1 fail, 2 ok, 2 outlier" ]
    # no GPU: a failure unless the site says so
    node_line n6 a 8 > "$T/nogpu.jsonl"
    run "$SL/cudaenv-report" "$T/nogpu.jsonl"
    [ "$status" -eq 1 ]
    [[ "${lines[1]}" == *"no GPU"*"NO GPU: no usable GPU/driver (exit 8)" ]]
    run "$SL/cudaenv-report" --allow-no-gpu "$T/nogpu.jsonl"
    [ "$status" -eq 0 ]
}

@test "cudaenv-report: whole verify --json documents and stdin are read; bad input is exit 2 naming the file and line" {
    good_line=$(node_line n1 a 0)
    run "$SL/cudaenv-report" - <<<"$good_line"
    [ "$status" -eq 0 ]
    python3 -c 'import json, sys
r = json.loads(sys.argv[1])
d = {"host": "n9", "toolchain": {"name": r["toolchain"], "prefix": r["prefix"], "tree_sha256": r["tree_sha256"]},
     "libraries": r["libraries"], "exit_code": 0,
     "steps": [{"id": k, "status": v, "summary": ""} for k, v in r["steps"].items()]}
print(json.dumps(d, indent=2))' "$good_line" > "$T/n9.json"
    run "$SL/cudaenv-report" "$T/n9.json" <(echo "$good_line")
    [ "$status" -eq 0 ]
    [[ "$output" == *"n9 "*"ok"* ]]
    printf '%s\nnot json\n' "$good_line" > "$T/bad.jsonl"
    run "$SL/cudaenv-report" "$T/bad.jsonl"
    [ "$status" -eq 2 ]
    [[ "$output" == *"$T/bad.jsonl line 2 is not JSON"* ]]
    run "$SL/cudaenv-report" "$T/missing"
    [ "$status" -eq 2 ]
}

@test "prolog: the job's .cuda-version puts the toolchain in place, verified; the TaskProlog exports its environment; the epilog keeps the report line" {
    echo tf-2.14 > "$T/job/.cuda-version"
    prolog
    echo "$stderr"
    [ "$status" -eq 0 ]
    P=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    [ -x "$P/bin/nvcc" ]
    [ "$(field status)" = ok ] && [ "$(field spec)" = tf-2.14 ] && [ "$(field prefix)" = "$P" ] || false
    [[ "$stderr" == *"cudaenv-prolog: job 41 on n1: toolchain tf-2.14 (from $T/job/sub/.cuda-version (or a directory above it))"* ]]
    [[ "$stderr" == *"11.8.0+cudnn8.7.0.84 in place at $P, verified (exit 8)"* ]]
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["toolchain"] == "11.8.0+cudnn8.7.0.84" and r["exit_code"] == 8 and r["steps"]["files"] == "passed"' "$T/state/job-41.report"
    task_prolog
    [ "$status" -eq 0 ]
    [[ "$output" == *"export CUDA_HOME=$P"* ]]
    [[ "$output" == *"export LD_LIBRARY_PATH=$P/lib64"* ]]
    [[ "$output" == *"print cudaenv: 11.8.0+cudnn8.7.0.84 (tf-2.14) on n1, verified by the prolog: CUDA_HOME=$P"* ]]
    run "$SL/cudaenv-epilog"
    [ "$status" -eq 0 ]
    [ ! -e "$T/state/job-41" ] && [ ! -e "$T/state/job-41.log" ] || false
    run "$SL/cudaenv-report" --allow-no-gpu "$T/reports"
    [ "$status" -eq 0 ]
    [[ "${lines[1]}" == "n1 "*"11.8.0+cudnn8.7.0.84"*"no GPU"*"ok" ]]   # Slurm's node name, as the file n1.jsonl
    # a later job naming it only in its environment gets it from the site store
    CUDAENV_SPEC=tf-2.14 task_prolog
    [ "$status" -eq 0 ]
    [[ "$output" == *"export CUDA_HOME=$P"* ]]
    [[ "$output" == *"print cudaenv: 11.8.0+cudnn8.7.0.84 (tf-2.14) on n1, from CUDAENV_SPEC, installed in the site store: CUDA_HOME=$P"* ]]
}

@test "prolog: --comment=cudaenv=SPEC wins; a spec the manifest lacks fails only the job, in its TaskProlog, with the reason" {
    echo tf-2.14 > "$T/job/.cuda-version"
    export SLURM_JOB_COMMENT="nightly cudaenv=tf-9.99"
    prolog
    [ "$status" -eq 0 ]
    [ "$(field status)" = failed ]
    [[ "$(field reason)" == "cudaenv install tf-9.99 (from --comment) failed (exit 3): cudaenv: error: no TensorFlow release tf-9.99 in the manifest"* ]]
    [ -z "$(ls "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
    task_prolog
    [ "$status" -eq 1 ]
    [[ "$output" == "print cudaenv: job 41 on n1: cudaenv install tf-9.99 (from --comment) failed (exit 3): cudaenv: error: no TensorFlow release tf-9.99"* ]]
    # the epilog keeps a failed job's log for the admin
    "$SL/cudaenv-epilog"
    [ -s "$T/state/job-41.log" ] && [ ! -e "$T/state/job-41" ] || false
}

@test "prolog: a malformed spec never reaches cudaenv; a job naming nothing passes untouched" {
    printf -- '--force\n' > "$T/job/.cuda-version"
    prolog
    [ "$status" -eq 0 ]
    [ "$(field status)" = failed ]
    [[ "$(field reason)" == *".cuda-version (or a directory above it) names no valid toolchain spec (expected one such as tf-2.14 or 12.4)" ]]
    [ ! -s "$T/state/job-41.log" ]
    export SLURM_JOB_COMMENT='cudaenv=../../etc'
    prolog
    [[ "$(field reason)" == "--comment names no valid toolchain spec"* ]]
    rm "$T/job/.cuda-version"
    unset SLURM_JOB_COMMENT
    prolog
    [ "$status" -eq 0 ]
    [ "$(field status)" = none ]
    task_prolog
    [ "$status" -eq 0 ] && [ -z "$output" ] || false
    # ... unless the job exports CUDAENV_SPEC: looked up in the site store
    CUDAENV_SPEC=tf-2.14 task_prolog
    [ "$status" -eq 1 ]
    [[ "$output" == *"tf-2.14 is not installed in $CUDAENV_ROOT; submit with --comment=cudaenv=tf-2.14"* ]]
}

@test "prolog: the job's .cuda-version is read as the job's user: a link to a file only root reads is refused" {
    [ "$(id -u)" -eq 0 ] || skip "played as root against a second user"
    ATK=cudaenv-atk
    id "$ATK" >/dev/null 2>&1 || useradd -M -s /bin/sh "$ATK" 2>/dev/null || true
    id "$ATK" >/dev/null 2>&1 || skip "useradd $ATK failed"
    chmod 755 "$T" "$T/job" "$T/job/sub"
    echo tf-2.14 > "$T/secret" && chmod 600 "$T/secret"
    ln -s "$T/secret" "$T/job/.cuda-version"
    export SLURM_JOB_USER=$ATK
    prolog
    [ "$status" -eq 0 ]
    [ "$(field status)" = failed ]
    [ "$(field reason)" = "the job's .cuda-version above $T/job/sub cannot be read as $ATK" ]
    [ -z "$(ls "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
    # the same file readable by the user is taken
    chmod 644 "$T/secret"
    prolog
    [ "$(field status)" = ok ]
}

@test "prolog: a node fault (verify fails) exits 1 with the reason (Slurm drains); ON_FAIL=job fails only the job; ON_FAIL=drain drains through scontrol" {
    P=$(fx_installed 11.8.0 8.7.0.84)
    fx_receipt "$P"
    echo tampered >> "$P/lib64/libcudnn.so.8.7.0"
    echo tf-2.14 > "$T/job/.cuda-version"
    prolog
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"cudaenv-prolog: job 41 on n1: cudaenv verify 11.8.0+cudnn8.7.0.84 failed (exit 7): files: 1 of "*" files differ from the receipt"* ]]
    [ "$(field status)" = failed ]
    echo 'CUDAENV_SLURM_ON_FAIL=job' >> "$T/slurm.conf"
    prolog
    [ "$status" -eq 0 ]
    task_prolog
    [ "$status" -eq 1 ]
    [[ "$output" == *"cudaenv verify 11.8.0+cudnn8.7.0.84 failed (exit 7): files:"* ]]
    printf '#!/bin/sh\necho "$@" > %s/scontrol.args\n' "$T" > "$T/bin/scontrol" && chmod 755 "$T/bin/scontrol"
    echo 'CUDAENV_SLURM_ON_FAIL=drain' >> "$T/slurm.conf"
    PATH=$T/bin:$PATH prolog
    [ "$status" -eq 0 ]
    [[ "$(cat "$T/scontrol.args")" == "update nodename=n1 state=drain reason=cudaenv: cudaenv verify 11.8.0+cudnn8.7.0.84 failed (exit 7): files:"* ]]
    # no usable GPU is a node fault too, unless the site allows it
    sed -i -e '/ALLOW_NO_GPU/d' -e '/ON_FAIL/d' "$T/slurm.conf"
    fx_receipt "$P"
    prolog
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"cudaenv verify 11.8.0+cudnn8.7.0.84: no usable GPU/driver on this node (exit 8)"* ]]
}

@test "prolog: a site file a user can change is not sourced" {
    chmod 666 "$T/slurm.conf"
    echo tf-2.14 > "$T/job/.cuda-version"
    prolog
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"$T/slurm.conf can be changed by others (uid $(id -u), mode 666): not read"* ]]
}
