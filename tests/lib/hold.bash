# Shared by follow.bats and hold.bats: a store with CUDA 11.8.0 already
# installed (each test then adds one cuDNN archive to a copy of it), and a
# manifest for tf 2.14 = CUDA 11.8.0 + cuDNN 8.7.0.84 whose cuDNN entry is
# any archive under $FM, with or without its size.
#   hold_setup_file      the setup_file of both: the fixture and server
#                        libraries, then hold_base
#   hold_base            in setup_file: $FM (mirror: the runfile), $BASE (store)
#   hold_manifest URL yes|no [RUNFILE_URL] > FILE
#                        the file is found under $FM by the URL's last two
#                        components (DIR/NAME), whatever prefix the URL has

hold_setup_file() {
    source "$BATS_TEST_DIRNAME/../lib/fixtures.sh"
    source "$BATS_TEST_DIRNAME/../lib/server.bash"
    hold_base
}

hold_base() {
    export FM=$BATS_FILE_TMPDIR/mirror BASE=$BATS_FILE_TMPDIR/base
    mkdir -p "$FM"
    fx_runfile "$FM/cuda_11.8.0_520.61.05_linux.run" 11.8.0 || return 1
    mkdir -p "$FM/plain"
    fx_cudnn_tarball "$FM/plain/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz" 8.7.0.84 11
    local home=$BATS_FILE_TMPDIR/home log=$BATS_FILE_TMPDIR/base.log
    mkdir -p "$home"
    server_start "$FM" || return 1
    hold_manifest "$SERVER_URL/plain/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz" yes > "$BATS_FILE_TMPDIR/base.json"
    CUDAENV_ROOT=$BASE CUDAENV_MANIFEST=$BATS_FILE_TMPDIR/base.json HOME=$home \
        "$CUDAENV" install 11.8.0 --no-cudnn >"$log" 2>&1 || { cat "$log"; server_stop; return 1; }
    server_stop
}

hold_manifest() {
    python3 - "$FM" "$1" "$2" "${3:-$SERVER_URL/cuda_11.8.0_520.61.05_linux.run}" <<'PY'
import hashlib, json, os, sys
fm, url, sized, run_url = sys.argv[1:]
def art(path, url, sized):
    a = {"url": url, "sha256": hashlib.sha256(open(path, "rb").read()).hexdigest()}
    if sized == "yes":
        a["size"] = os.path.getsize(path)
    return a
local = os.path.join(fm, *url.rsplit("/", 2)[-2:])
run = os.path.join(fm, "cuda_11.8.0_520.61.05_linux.run")
m = {"schema": 1, "tensorflow": {"2.14": {"cuda": "11.8.0", "cudnn": "8.7.0.84"}},
     "cuda": {"11.8.0": {"min_driver": "520.61.05", "max_gcc": 11, "sm": {"min": "3.5", "max": "9.0"},
                         "runfile": {"linux-x86_64": art(run, run_url, "yes")}}},
     "cudnn": {"8.7.0.84": {"cuda11": {"linux-x86_64": art(local, url, sized)}}}}
json.dump(m, sys.stdout)
PY
}
