#!/usr/bin/env bats
# cudaenv jupyter install: the kernelspec's content, where it goes, that
# running its argv with its env loads the toolchain's libraries, and that a
# kernel name can never become a path.
bats_require_minimum_version 1.5.0
load ../lib/common

PY=/usr/bin/python3

setup() {
    common_setup
    export PATH=$BUILD/bin:/usr/bin:/bin
    unset LD_LIBRARY_PATH CUDA_HOME CUDA_PATH CUDNN_PATH CUDAENV_WARNED XDG_DATA_HOME
    export JUPYTER_DATA_DIR=$T/jd
    P=$(fx_installed 11.8.0 8.7.0.84)
    K=$T/jd/kernels/cudaenv-11.8.0-cudnn8.7.0.84/kernel.json
}
teardown() { common_teardown; }

# k EXPR: a Python expression on the kernel.json in $1 (d)
k() { "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

@test "jupyter install: kernel.json with the Python's argv and the env of 'cudaenv env --shell json'" {
    run --separate-stderr "$CUDAENV" jupyter install 11.8 --python "$PY"
    [ "$status" -eq 0 ]
    [ "$output" = "$K" ]
    [[ "$stderr" == *"kernel 'cudaenv-11.8.0-cudnn8.7.0.84'"* ]]
    # Debian's Python refuses pip (PEP 668): the fix makes a venv first
    if [ "$("$PY" -c 'import os, sys, sysconfig; print(sys.prefix == sys.base_prefix and os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))')" = True ]; then
        [[ "$stderr" == *"$PY cannot import ipykernel, which the kernel runs: python3 -m venv ~/.venvs/cuda && ~/.venvs/cuda/bin/python -m pip install ipykernel"* ]]
    fi
    # a venv's Python takes pip itself
    "$PY" -m venv --without-pip "$T/venv"
    run --separate-stderr "$CUDAENV" jupyter install 11.8 --python "$T/venv/bin/python" --name v
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"$T/venv/bin/python cannot import ipykernel, which the kernel runs: $T/venv/bin/python -m pip install ipykernel"* ]]
    # a script's tool: no warning about the shell's other CUDA
    LD_LIBRARY_PATH=/usr/local/cuda-12.1/lib64 run --separate-stderr "$CUDAENV" jupyter install 11.8 --python "$PY"
    [[ "$stderr" != *"also has"* ]]
    # a Python with ipykernel: no warning
    mkdir -p "$T/ipk/ipykernel" && : > "$T/ipk/ipykernel/__init__.py"
    PYTHONPATH=$T/ipk run --separate-stderr "$CUDAENV" jupyter install 11.8 --python "$PY"
    [ "$status" -eq 0 ]
    [[ "$stderr" != *ipykernel* ]]
    [ "$(k "$K" 'd["argv"]')" = "['$PY', '-m', 'ipykernel_launcher', '-f', '{connection_file}']" ]
    [ "$(k "$K" 'd["display_name"]')" = "Python 3 (cudaenv 11.8.0+cudnn8.7.0.84)" ]
    [ "$(k "$K" 'd["language"]')" = python ]
    [ "$(k "$K" 'd["metadata"]["cudaenv"]["prefix"]')" = "$P" ]
    [ "$(k "$K" 'd["env"]["CUDA_HOME"]')" = "$P" ]
    [ "$(k "$K" 'd["env"]["CUDNN_PATH"]')" = "$P" ]
    [ "$(k "$K" 'd["env"]["LD_LIBRARY_PATH"].split(":")[0]')" = "$P/lib64" ]
    [ "$(k "$K" 'd["env"]["PATH"].split(":")[0]')" = "$P/bin" ]
    "$CUDAENV" env 11.8 --shell json > "$T/env.json"
    [ "$(k "$K" 'd["env"]')" = "$(k "$T/env.json" 'd["env"]')" ]
}

@test "jupyter install: running the kernel's argv[0] with its env loads the toolchain's libcudart and libcudnn" {
    "$CUDAENV" jupyter install 11.8 --python "$PY" >/dev/null
    run "$PY" - "$K" <<'PY'
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
code = ("import ctypes\nctypes.CDLL('libcudart.so.11.0'); ctypes.CDLL('libcudnn.so.8')\n"
        "print('\\n'.join(sorted({l.split()[-1] for l in open('/proc/self/maps') if 'libcud' in l})))")
print(subprocess.run([d["argv"][0], "-c", code], env=d["env"], capture_output=True, text=True, check=True).stdout, end="")
PY
    [ "$status" -eq 0 ]
    [ "$output" = "$P/lib64/libcudart.so.11.8.89"$'\n'"$P/lib64/libcudnn.so.8.7.0" ]
}

@test "jupyter install: a kernel Python that brings its own CUDA libraries (a venv's nvidia-* wheels) keeps them: no toolchain lib64 in the kernel's LD_LIBRARY_PATH (issue 37)" {
    "$PY" -m venv --without-pip "$T/venv"
    site=$("$T/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
    mkdir -p "$site/nvidia/cudnn/lib" && cp -a "$P"/lib64/libcudnn.so* "$site/nvidia/cudnn/lib/"
    run --separate-stderr "$CUDAENV" jupyter install 11.8 --python "$T/venv/bin/python" --name v
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [[ "$stderr" == *"$T/venv/bin/python brings its own cudnn"*"lib64 is kept off LD_LIBRARY_PATH"* ]] || { echo "$stderr"; false; }
    kv=$T/jd/kernels/v/kernel.json
    [ "$(k "$kv" 'd["env"].get("LD_LIBRARY_PATH", "unset") + " " + d["env"]["CUDA_HOME"] + " " + d["env"]["CUDAENV_LIBS"]')" = "unset $P framework" ]
}

@test "jupyter install: default data dir, --name, a relative --python made absolute, reinstall replaces" {
    unset JUPYTER_DATA_DIR
    mkdir -p "$T/venv/bin" && ln -s "$PY" "$T/venv/bin/python"
    cd "$T"
    run "$CUDAENV" jupyter install 11.8 --python venv/bin/python --name cuda118
    [ "$status" -eq 0 ]
    f=$HOME/.local/share/jupyter/kernels/cuda118/kernel.json
    [ "$(k "$f" 'd["argv"][0]')" = "$T/venv/bin/python" ]
    XDG_DATA_HOME=$T/xdg run "$CUDAENV" jupyter install 11.8 --python "$PY" --name cuda118
    [ "$status" -eq 0 ]
    [ -f "$T/xdg/jupyter/kernels/cuda118/kernel.json" ]
    run "$CUDAENV" jupyter install 11.8 --python "$PY" --name cuda118
    [ "$status" -eq 0 ]
    [ "$(k "$f" 'd["argv"][0]')" = "$PY" ]
}

@test "jupyter install: a kernel name is never a path (attacker names refused, nothing written)" {
    for n in ../../evil a/b .. "" 'x y' '$(id)'; do
        run "$CUDAENV" jupyter install 11.8 --python "$PY" --name "$n"
        [ "$status" -eq 2 ]
        [[ "$output" == *"bad kernel name"* ]]
    done
    [ ! -e "$T/jd" ]
    [ ! -e "$T/evil" ]
}

@test "jupyter: not installed exit 3, no such Python exit 3, usage exit 2" {
    run "$CUDAENV" jupyter install 12.4 --python "$PY"
    [ "$status" -eq 3 ]
    run "$CUDAENV" jupyter install 11.8 --python "$T/none/python"
    [ "$status" -eq 3 ]
    [[ "$output" == *"$T/none/python: no such executable"* ]]
    run "$CUDAENV" jupyter
    [ "$status" -eq 2 ]
    run "$CUDAENV" jupyter install
    [ "$status" -eq 2 ]
    run "$CUDAENV" jupyter install system --python "$PY"
    [ "$status" -eq 2 ]
    run "$CUDAENV" jupyter --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"usage: cudaenv jupyter install VERSION [--python PATH] [--name NAME]"* ]]
}

@test "as root, a user's JUPYTER_DATA_DIR whose kernels/ links to root's directory: exit 6, root writes nothing through it; root's own is written" {
    [ "$(id -u)" -eq 0 ] || skip "played as root against a second user"
    ATK=cudaenv-atk
    id "$ATK" >/dev/null 2>&1 || useradd -M -s /bin/sh "$ATK" 2>/dev/null || true
    id "$ATK" >/dev/null 2>&1 || skip "useradd $ATK failed"
    mkdir -p "$T/victim" "$T/ujd"
    ln -s "$T/victim" "$T/ujd/kernels"
    chown -R -h "$ATK" "$T/ujd"
    JUPYTER_DATA_DIR=$T/ujd run --separate-stderr "$CUDAENV" jupyter install 11.8 --python "$PY"
    [ "$status" -eq 6 ] || { echo "$status $stderr"; false; }
    [[ "$stderr" == *"$T/ujd is owned by uid $(id -u "$ATK"), not root"* ]] || { echo "$stderr"; false; }
    [[ "$stderr" == *"sudo -H, or run jupyter install as that user"* ]]
    [ -z "$(ls -A "$T/victim")" ]
    # HOME left pointing at the user's (sudo -E): the same
    unset JUPYTER_DATA_DIR
    mkdir -p "$T/uh/.local/share" && ln -s "$T/victim" "$T/uh/.local/share/jupyter" && chown -R -h "$ATK" "$T/uh"
    HOME=$T/uh run --separate-stderr "$CUDAENV" jupyter install 11.8 --python "$PY"
    [ "$status" -eq 6 ]
    [ -z "$(ls -A "$T/victim")" ]
    # root's own directory with a link root made: root's choice, written
    ln -s "$T/victim" "$T/jd"
    JUPYTER_DATA_DIR=$T/jd run --separate-stderr "$CUDAENV" jupyter install 11.8 --python "$PY"
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    [ -f "$T/victim/kernels/cudaenv-11.8.0-cudnn8.7.0.84/kernel.json" ]
}
