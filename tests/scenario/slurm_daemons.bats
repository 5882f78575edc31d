#!/usr/bin/env bats
# contrib/slurm under a real Slurm (Debian's slurm-wlm + munge, tests/lib/slurm.bash):
# one slurmctld and one slurmd on 127.0.0.1 with Prolog, TaskProlog and Epilog
# set to the contrib scripts; jobs are submitted with sbatch --wait as a second
# user, from a directory whose .cuda-version names the toolchain.  Skipped, with
# the reason, where the daemons cannot start (not installed, not root, no munge).
bats_require_minimum_version 1.5.0
load ../lib/common
load ../lib/mirror
load ../lib/slurm

SL=$REPO/contrib/slurm
ATK=cudaenv-atk

setup_file() {
    mirror_setup_file
}

setup() {
    common_setup
    [ "$(id -u)" -eq 0 ] || skip "slurmd runs its Prolog as root: played as root"
    id "$ATK" >/dev/null 2>&1 || useradd -M -s /bin/sh "$ATK" 2>/dev/null || true
    id "$ATK" >/dev/null 2>&1 || skip "useradd $ATK failed"
    chmod 755 "$T"
    mirror_manifest "file://$MIRROR"
    mkdir -p "$T/job/run" "$T/bad"
    chown -R "$ATK" "$T/job" "$T/bad"
    cat > "$T/cudaenv-slurm.conf" <<EOF
export CUDAENV_ROOT=$CUDAENV_ROOT CUDAENV_SYSROOT=$CUDAENV_SYSROOT CUDAENV_MANIFEST=$CUDAENV_MANIFEST
export CUDAENV_TEST_LIBCUDA=$T/no-driver/libcuda.so.1 LD_PRELOAD=$SEAMS_SO ASAN_OPTIONS=$(fx_asan_preload_ok)
CUDAENV=$CUDAENV
CUDAENV_SLURM_STATE=$T/cudaenv-state
CUDAENV_SLURM_REPORTS=$T/reports
CUDAENV_SLURM_ALLOW_NO_GPU=1
EOF
    local s
    for s in prolog task-prolog epilog; do
        printf '#!/bin/sh\nCUDAENV_SLURM_CONF=%s exec %s "$@"\n' "$T/cudaenv-slurm.conf" "$SL/cudaenv-$s" > "$T/$s"
        chmod 755 "$T/$s"
    done
    slurm_start "$T/slurm" "Prolog=$T/prolog" "TaskProlog=$T/task-prolog" "Epilog=$T/epilog" \
        || { local why=$SLURM_SKIP; slurm_stop; skip "$why"; }
}

teardown() {
    slurm_stop
    common_teardown
}

# submit DIR SCRIPT [sbatch options]: as the second user, wait for the end
submit() {
    local dir=$1 script=$2
    shift 2
    run runuser -u "$ATK" -- env SLURM_CONF="$SLURM_CONF" PATH="$PATH" \
        timeout 120 sbatch --wait --chdir="$dir" --output="$dir/job.log" "$@" "$script"
}

@test "slurm: a job whose directory has .cuda-version gets the toolchain from the prolog, verified; its log shows it; the epilog keeps the node's line" {
    echo tf-2.14 > "$T/job/.cuda-version"
    cat > "$T/job/job.sh" <<'EOF'
#!/bin/sh
echo "job: CUDA_HOME=$CUDA_HOME"
nvcc --version | tail -n1
EOF
    chmod 755 "$T/job/job.sh"
    submit "$T/job/run" "$T/job/job.sh"
    echo "sbatch: $output"
    cat "$T/job/run/job.log" || slurm_logs
    cat "$T"/cudaenv-state/*.log 2>/dev/null || true
    [ "$status" -eq 0 ]
    P=$CUDAENV_ROOT/versions/11.8.0+cudnn8.7.0.84
    [ -x "$P/bin/nvcc" ]
    log=$(cat "$T/job/run/job.log")
    [[ "$log" == *"cudaenv: 11.8.0+cudnn8.7.0.84 (tf-2.14) on localhost, verified by the prolog: CUDA_HOME=$P"* ]]
    [[ "$log" == *"job: CUDA_HOME=$P"* ]]
    [[ "$log" == *"Cuda compilation tools, release 11.8, V11.8.89"* ]]
    # the epilog ran after the job: the node's line is kept, the job's state gone
    for i in $(seq 50); do [ -s "$T/reports/localhost.jsonl" ] && break; sleep 0.1; done
    run "$SL/cudaenv-report" --allow-no-gpu "$T/reports"
    echo "$output"
    [ "$status" -eq 0 ]
    # the node as Slurm names it (NodeName=localhost, the file's name too), the machine's name beside
    [[ "${lines[1]}" == "localhost "*"11.8.0+cudnn8.7.0.84"*"no GPU"*"ok" ]]
    python3 -c 'import json, sys; d = json.loads(open(sys.argv[1]).read().splitlines()[-1]); assert (d["host"], d["hostname"]) == ("localhost", sys.argv[2]), d' \
        "$T/reports/localhost.jsonl" "$(hostname)"
    [ -z "$(ls "$T/cudaenv-state")" ]
    [ "$(sinfo -h -N -o %T)" = idle ]
}

@test "slurm: a job naming a spec the manifest lacks fails with the reason in its log; the node stays up" {
    printf '#!/bin/sh\necho "job body ran"\n' > "$T/bad/job.sh"
    chmod 755 "$T/bad/job.sh"
    submit "$T/bad" "$T/bad/job.sh" --comment=cudaenv=tf-9.99
    echo "sbatch: $output"
    cat "$T/bad/job.log" || slurm_logs
    [ "$status" -ne 0 ]
    log=$(cat "$T/bad/job.log")
    [[ "$log" == *"cudaenv: job "*" on localhost: cudaenv install tf-9.99 (from --comment) failed (exit 3): cudaenv: error: no TensorFlow release tf-9.99 in the manifest"* ]]
    [[ "$log" == *"TaskProlog failed status=1"* ]]
    [[ "$log" != *"job body ran"* ]]
    [ -z "$(ls "$CUDAENV_ROOT/versions" 2>/dev/null)" ]
    [ "$(sinfo -h -N -o %T)" = idle ]
}

@test "slurm: a node fault (verify fails) in the default mode exits the prolog 1: Slurm drains the node and holds the job; ON_FAIL=drain names cudaenv's reason" {
    P=$(fx_installed 11.8.0 8.7.0.84)
    fx_receipt "$P"
    echo tampered >> "$P/lib64/libcudnn.so.8.7.0"
    echo tf-2.14 > "$T/job/.cuda-version"
    printf '#!/bin/sh\necho "job body ran"\n' > "$T/job/job.sh"
    chmod 755 "$T/job/job.sh"
    run runuser -u "$ATK" -- env SLURM_CONF="$SLURM_CONF" PATH="$PATH" sbatch --parsable --chdir="$T/job/run" \
        --output="$T/job/run/job.log" "$T/job/job.sh"
    [ "$status" -eq 0 ]
    job=$output
    for i in $(seq 100); do sinfo -h -N -o %T | grep -q drain && break; sleep 0.2; done
    sinfo -h -N -o '%T %E'
    [[ "$(sinfo -h -N -o '%T %E')" == drain*"Prolog error"* ]]
    # the node drains first; the job passes through REQUEUED/COMPLETING on its way back to the queue, held
    for i in $(seq 100); do scontrol show job "$job" | grep -q "JobState=PENDING" && break; sleep 0.2; done
    scontrol show job "$job" | grep -E "JobState|Reason" || true
    [[ "$(scontrol show job "$job")" == *"JobState=PENDING"* ]]
    grep -q "cudaenv-prolog: job $job on localhost: cudaenv verify 11.8.0+cudnn8.7.0.84 failed (exit 7): files:" "$T/slurm/log/slurmd.log" \
        || grep -rq "cudaenv verify 11.8.0+cudnn8.7.0.84 failed (exit 7): files:" "$T/cudaenv-state"
    scancel "$job"
    scontrol update nodename=localhost state=resume
    # drain mode: the prolog drains with cudaenv's reason, the job fails in its TaskProlog
    echo 'CUDAENV_SLURM_ON_FAIL=drain' >> "$T/cudaenv-slurm.conf"
    submit "$T/job/run" "$T/job/job.sh"
    [ "$status" -ne 0 ]
    [[ "$(cat "$T/job/run/job.log")" == *"cudaenv verify 11.8.0+cudnn8.7.0.84 failed (exit 7): files:"* ]]
    [[ "$(cat "$T/job/run/job.log")" != *"job body ran"* ]]
    [[ "$(sinfo -h -N -o '%T %E')" == drain*"cudaenv: cudaenv verify 11.8.0+cudnn8.7.0.84 failed (exit 7)"* ]]
}
