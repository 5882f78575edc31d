# A real Slurm on loopback for bats scenarios (Debian's slurm-wlm and munge):
# one munged with a generated key, one slurmctld and one slurmd
# (NodeName=localhost NodeAddr=127.0.0.1), every file under $SLURM_DIR, the
# ports chosen free on 127.0.0.1.  Nothing of the host's Slurm or munge is used.
#   slurm_start DIR [slurm.conf lines...]  start them; exports SLURM_CONF,
#                                          SLURM_DIR; returns 77 with
#                                          SLURM_SKIP (why) when they cannot run
#   slurm_stop                             kill each daemon started (by pid)
#   slurm_logs                             the daemons' logs, for failures

slurm_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

slurm_start() {
    SLURM_DIR=$1
    shift
    SLURM_PIDS=()
    local bin
    for bin in munged slurmctld slurmd sbatch scontrol; do
        command -v "$bin" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin command -v "$bin" >/dev/null 2>&1 \
            || { SLURM_SKIP="$bin not installed (apt-get install slurm-wlm munge)"; return 77; }
    done
    export PATH=$PATH:/usr/sbin
    mkdir -p "$SLURM_DIR/munge" "$SLURM_DIR/state" "$SLURM_DIR/spool" "$SLURM_DIR/log"
    chmod 755 "$SLURM_DIR" "$SLURM_DIR/munge"
    head -c 1024 /dev/urandom > "$SLURM_DIR/munge/munge.key" && chmod 400 "$SLURM_DIR/munge/munge.key"
    local sock=$SLURM_DIR/munge/munge.sock
    munged -f --socket="$sock" --key-file="$SLURM_DIR/munge/munge.key" --log-file="$SLURM_DIR/log/munged.log" \
        --pid-file="$SLURM_DIR/munge/munged.pid" --seed-file="$SLURM_DIR/munge/munged.seed" 2>"$SLURM_DIR/log/munged.err" \
        || { SLURM_SKIP="munged does not start here: $(tail -n1 "$SLURM_DIR/log/munged.err")"; return 77; }
    SLURM_PIDS+=("$(cat "$SLURM_DIR/munge/munged.pid")")
    local ctl_port node_port
    ctl_port=$(slurm_free_port) node_port=$(slurm_free_port)
    export SLURM_CONF=$SLURM_DIR/slurm.conf
    {
        echo "ClusterName=cudaenvtest"
        echo "SlurmctldHost=$(hostname -s)(127.0.0.1)"
        echo "SlurmctldPort=$ctl_port"
        echo "SlurmdPort=$node_port"
        echo "AuthType=auth/munge"
        echo "CredType=cred/munge"
        echo "AuthInfo=socket=$sock"
        echo "SlurmUser=root"
        echo "SlurmdUser=root"
        echo "StateSaveLocation=$SLURM_DIR/state"
        echo "SlurmdSpoolDir=$SLURM_DIR/spool"
        echo "SlurmctldPidFile=$SLURM_DIR/slurmctld.pid"
        echo "SlurmdPidFile=$SLURM_DIR/slurmd.pid"
        echo "SlurmctldLogFile=$SLURM_DIR/log/slurmctld.log"
        echo "SlurmdLogFile=$SLURM_DIR/log/slurmd.log"
        echo "ProctrackType=proctrack/linuxproc"
        echo "TaskPlugin=task/none"
        echo "SelectType=select/linear"
        echo "SchedulerType=sched/builtin"
        echo "JobCompType=jobcomp/none"
        echo "JobAcctGatherType=jobacct_gather/none"
        echo "AccountingStorageType=accounting_storage/none"
        echo "MpiDefault=none"
        echo "ReturnToService=2"
        echo "MailProg=/bin/true"
        local l
        for l in "$@"; do echo "$l"; done
        echo "NodeName=localhost NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN"
        echo "PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP"
    } > "$SLURM_CONF"
    slurmctld -f "$SLURM_CONF" 2>"$SLURM_DIR/log/slurmctld.err" \
        || { SLURM_SKIP="slurmctld does not start here: $(tail -n1 "$SLURM_DIR/log/slurmctld.err")"; return 77; }
    slurm_wait_pid "$SLURM_DIR/slurmctld.pid" || { SLURM_SKIP="slurmctld wrote no pid: $(slurm_last_error)"; return 77; }
    slurmd -f "$SLURM_CONF" -N localhost 2>"$SLURM_DIR/log/slurmd.err" \
        || { SLURM_SKIP="slurmd does not start here: $(tail -n1 "$SLURM_DIR/log/slurmd.err")"; return 77; }
    slurm_wait_pid "$SLURM_DIR/slurmd.pid" || { SLURM_SKIP="slurmd wrote no pid: $(slurm_last_error)"; return 77; }
    local i
    for i in $(seq 100); do
        sinfo -h -N -o %T 2>/dev/null | grep -qx idle && return 0
        sleep 0.2
    done
    SLURM_SKIP="the node never became idle: $(sinfo -h -N -o '%T %E' 2>&1 | head -n1); $(slurm_last_error)"
    return 77
}

slurm_wait_pid() {
    local i
    for i in $(seq 50); do
        if [ -s "$1" ]; then SLURM_PIDS+=("$(cat "$1")"); return 0; fi
        sleep 0.1
    done
    return 1
}

slurm_last_error() {
    grep -h 'error\|fatal' "$SLURM_DIR"/log/*.log 2>/dev/null | grep -v 'pmix\|MPI\|state file\|NOTE: Trying' | tail -n1
}

slurm_stop() {
    local p i
    for p in "${SLURM_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    # slurmd and slurmctld take a moment to save state and go
    for p in "${SLURM_PIDS[@]}"; do
        for i in $(seq 50); do
            kill -0 "$p" 2>/dev/null || break
            [ -r "/proc/$p/stat" ] && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" = Z ] && break
            sleep 0.1
        done
        kill -9 "$p" 2>/dev/null || true
    done
    SLURM_PIDS=()
    return 0
}

slurm_logs() {
    local f
    for f in "$SLURM_DIR"/log/*; do echo "== $f"; tail -n 20 "$f"; done
}
