#!/usr/bin/env bats
# contrib/ansible/roles/cudaenv with Debian's ansible (ansible-core),
# `ansible-playbook -c local` inside a private mount namespace whose /etc and
# /usr/local are overlays (tests/lib/sysns.sh): cudaenv from a release tarball
# (make install DESTDIR, tarred) into /usr/local, two specs from a loopback
# mirror, the system default (/usr/local/cuda, real ldconfig), module files,
# /etc/profile.d.  The first run changes things, the second reports changed=0.
# Skips when ansible-playbook is not installed (tools/deps.txt: ansible-core).
load ../lib/common
load ../lib/server
bats_require_minimum_version 1.5.0

setup_file() { upstream_setup_file; }

setup() {
    command -v ansible-playbook >/dev/null || skip "ansible-playbook not installed (apt-get install ansible-core)"
    common_setup
    upstream_serve
    make -s -C "$REPO" install BUILD="${BUILD#$REPO/}" DESTDIR="$T/stage" PREFIX=/usr/local >/dev/null
    tar -C "$T/stage/usr/local" -czf "$T/cudaenv.tar.gz" bin libexec share
    mkdir -p "$T/ansible-tmp"
    cat > "$T/play.yml" <<YML
- hosts: localhost
  connection: local
  gather_facts: false
  vars:
    ansible_python_interpreter: /usr/bin/python3
    cudaenv_tarball: $T/cudaenv.tar.gz
    cudaenv_root: $T/store
    cudaenv_manifest: $T/manifest.json
    cudaenv_specs: [tf-2.14, "12.2"]
    cudaenv_system_default: tf-2.14
    cudaenv_modulefiles_dir: $T/modulefiles
  roles: [cudaenv]
YML
    unset CUDAENV_ROOT CUDAENV_SYSROOT CUDAENV_FULL
    chmod -R go-w "$T"
}

teardown() {
    server_stop
    common_teardown
}

@test "ansible role: first run installs and changes, second run changed=0, state as asked" {
    run "$REPO/tests/lib/sysns.sh" "$T" -c '
        set -- "$0" "$1"   # bash -c: $0 is T, $1 the repository
        export HOME=$1/home ANSIBLE_ROLES_PATH=$2/contrib/ansible/roles ANSIBLE_LOCAL_TEMP=$1/ansible-tmp \
               ANSIBLE_REMOTE_TEMP=$1/ansible-tmp ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_STDOUT_CALLBACK=default
        cd "$1"
        ansible-playbook -i localhost, -c local play.yml > run1.log 2>&1; echo "run1=$?"
        ansible-playbook -i localhost, -c local play.yml > run2.log 2>&1; echo "run2=$?"
        echo "bin=$(/usr/local/bin/cudaenv --version | head -1)"
        echo "link=$(readlink /usr/local/cuda)"
        echo "conf=$(grep -v "^#" /etc/ld.so.conf.d/cudaenv.conf)"
        echo "cache=$(ldconfig -p | awk "\$1 == \"libcudart.so.11.0\" { print \$NF; exit }")"
        echo "profile=$(. /etc/profile.d/cudaenv.sh; echo "$CUDAENV_ROOT|$CUDAENV_MANIFEST|$MODULEPATH")"
        echo "list=$(CUDAENV_ROOT=$1/store /usr/local/bin/cudaenv list --names | tr "\n" " ")"
        ' "$T" "$REPO"
    [ "$status" -ne 77 ] || skip "no mount namespace / overlayfs here"
    [ "$status" -eq 0 ] || { echo "$output"; cat "$T/run1.log"; false; }
    echo "$output"
    [ "${lines[0]}" = "run1=0" ] || { cat "$T/run1.log"; false; }
    [ "${lines[1]}" = "run2=0" ] || { cat "$T/run2.log"; false; }
    grep -Eq "localhost +: ok=[0-9]+ +changed=([1-9][0-9]*) " "$T/run1.log"
    grep -Eq "localhost +: ok=[0-9]+ +changed=0 " "$T/run2.log" || { cat "$T/run2.log"; false; }
    [ "${lines[2]}" = "bin=cudaenv 0.1.0" ]
    [ "${lines[3]}" = "link=$T/store/versions/11.8.0+cudnn8.7.0.84" ]
    # the system switch records the fully resolved library directory (a component
    # install's lib64 is a link to targets/x86_64-linux/lib)
    lib=$(readlink -f "$T/store/versions/11.8.0+cudnn8.7.0.84/lib64")
    [ "${lines[4]}" = "conf=$lib" ]
    [ "${lines[5]}" = "cache=$lib/libcudart.so.11.0" ]
    [ "${lines[6]}" = "profile=$T/store|$T/manifest.json|$T/modulefiles" ]
    [ "${lines[7]}" = "list=11.8.0+cudnn8.7.0.84 12.2.2+cudnn8.9.7.29 " ]
    [ -f "$T/modulefiles/cuda/11.8.0-cudnn8.7.0.84.lua" ]
    [ -f "$T/modulefiles/cuda/12.2.2-cudnn8.9.7.29.lua" ]
    # nothing leaked out of the namespace
    [ ! -e /usr/local/bin/cudaenv ] || [ "$(readlink -f /usr/local/bin/cudaenv)" != "$T"* ]
    [ ! -e /etc/profile.d/cudaenv.sh ]
}

@test "ansible role: cudaenv copied from a path, Tcl module files, no system default; idempotent" {
    sed -i -e '/cudaenv_tarball:/d' -e '/cudaenv_system_default:/d' "$T/play.yml"
    sed -i "s|  vars:|  vars:\n    cudaenv_install_from: path\n    cudaenv_src_path: $T/stage/usr/local\n    cudaenv_modulefile_format: tcl\n    cudaenv_specs: [tf-2.14]|" "$T/play.yml"
    sed -i '/cudaenv_specs: \[tf-2.14, "12.2"\]/d' "$T/play.yml"
    run "$REPO/tests/lib/sysns.sh" "$T" -c '
        set -- "$0" "$1"
        export HOME=$1/home ANSIBLE_ROLES_PATH=$2/contrib/ansible/roles ANSIBLE_LOCAL_TEMP=$1/ansible-tmp \
               ANSIBLE_REMOTE_TEMP=$1/ansible-tmp ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0
        cd "$1"
        ansible-playbook -i localhost, -c local play.yml > run1.log 2>&1; echo "run1=$?"
        ansible-playbook -i localhost, -c local play.yml > run2.log 2>&1; echo "run2=$?"
        echo "link=$(readlink /usr/local/cuda)"
        /usr/local/bin/cudaenv --version
        ' "$T" "$REPO"
    [ "$status" -ne 77 ] || skip "no mount namespace / overlayfs here"
    [ "${lines[0]}" = "run1=0" ] || { cat "$T/run1.log"; false; }
    [ "${lines[1]}" = "run2=0" ] || { cat "$T/run2.log"; false; }
    grep -Eq "localhost +: ok=[0-9]+ +changed=[1-9][0-9]* " "$T/run1.log"
    grep -Eq "localhost +: ok=[0-9]+ +changed=0 " "$T/run2.log" || { cat "$T/run2.log"; false; }
    [ "${lines[2]}" != "link=$T/store/versions/11.8.0+cudnn8.7.0.84" ]
    [ "${lines[3]}" = "cudaenv 0.1.0" ]
    [ -f "$T/modulefiles/cuda/11.8.0-cudnn8.7.0.84" ]
    [ ! -e "$T/modulefiles/cuda/12.2.2-cudnn8.9.7.29" ]
}
