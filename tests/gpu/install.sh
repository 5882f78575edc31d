# Sourced by tests/gpu/run.sh (GPU_MODE=install): packs the toolkit and
# cuDNN found on this machine the way NVIDIA ships them, serves them on
# 127.0.0.1 and installs them with `cudaenv install` into $CUDAENV_ROOT.
# Uses run.sh's W, BIN, NAME, cuda_ver, cudnn_ver, t/ok/bad, lay_toolkit,
# lay_cudnn; leaves P (the installed prefix) for the verify checks.
# Returns non-zero when there is no toolchain to verify.

M=$W/mirror
RUN_REL=compute/cuda/$cuda_ver/local_installers/cuda_${cuda_ver}_580.65.06_linux.run
CUDNN_TOP=cudnn-linux-x86_64-${cudnn_ver}_cuda${cuda_ver%%.*}-archive
CUDNN_REL=compute/cudnn/redist/cudnn/linux-x86_64/$CUDNN_TOP.tar.xz
mkdir -p "$M/$(dirname "$RUN_REL")" "$M/$(dirname "$CUDNN_REL")"

echo "== pack: runfile (makeself, silent toolkit mode) and cuDNN tarball from $CUDA_SRC + $cudnn_lib"
t lay_toolkit "$W/tk"
FX_RUNFILE_TREE=$W/tk FX_RUNFILE_COMP=--nocomp t fx_runfile "$M/$RUN_REL" "$cuda_ver" \
    || { bad "fx_runfile failed"; return 1; }
rm -rf "$W/tk"
t lay_cudnn "$W/pack/$CUDNN_TOP"
pack_cudnn() { tar -C "$W/pack" --owner=0 --group=0 --numeric-owner -cf - "$CUDNN_TOP" | xz ${GPU_XZ:--T0 -1} > "$M/$CUDNN_REL"; }
t pack_cudnn || { bad "cuDNN tarball failed"; return 1; }
rm -rf "$W/pack"
ls -l "$M/$RUN_REL" "$M/$CUDNN_REL" | awk '{printf "  %6d MiB  %s\n", $5 / 1048576, $NF}'

mk_manifest() {
    python3 - "$M" "$cuda_ver" "$cudnn_ver" "$RUN_REL" "$CUDNN_REL" "cuda${cuda_ver%%.*}" > "$M/manifest.json" <<'PY'
import hashlib, json, os, sys
m, cuda, cudnn, run_rel, cudnn_rel, cmaj = sys.argv[1:]
def art(rel):
    h = hashlib.sha256()
    with open(os.path.join(m, rel), "rb") as f:
        for b in iter(lambda: f.read(1 << 22), b""):
            h.update(b)
    return {"url": rel, "sha256": h.hexdigest(), "size": os.path.getsize(os.path.join(m, rel))}
src = "tests/gpu/run.sh: packed from this machine's toolkit"
json.dump({"schema": 1, "updated": "2026-11-29", "tensorflow": {},
           "cuda": {cuda: {"min_driver": "580.65.06", "max_gcc": 15, "sm": {"min": "7.5", "max": "12.1"},
                           "source": src, "runfile": {"linux-x86_64": art(run_rel)}}},
           "cudnn": {cudnn: {"source": src, cmaj: {"linux-x86_64": art(cudnn_rel)}}}},
          sys.stdout, indent=1)
PY
}
t mk_manifest || { bad "manifest"; return 1; }
server_start "$M" >/dev/null || { bad "loopback server did not start"; return 1; }
export CUDAENV_MANIFEST=$SERVER_URL/manifest.json CUDAENV_MANIFEST_UNSIGNED=1   # made here, served on loopback: nothing to sign
echo "serving $M on $SERVER_URL"

echo "== install from the loopback server: cudaenv install --insecure $NAME"
s=$(date +%s%N)
"$BIN" install --insecure "$NAME" > "$OUT/install.log" 2>&1; rc=$?
e=$(date +%s%N)
sed 's/^/  | /' "$OUT/install.log"
echo "  install wall time: $(( (e - s) / 1000000 )) ms (exit $rc)"
sed 's/^/  server: /' "$SERVER_LOG"
if [ "$rc" -eq 0 ]; then ok "install $NAME from 127.0.0.1: exit 0"; else bad "install $NAME: exit $rc"; return 1; fi
[ "$(server_requests "GET /$RUN_REL")" -ge 1 ] && [ "$(server_requests "GET /$CUDNN_REL")" -ge 1 ] \
    && ok "runfile and cuDNN tarball came from the loopback server" || bad "artifacts not fetched from the server"
pre=$("$BIN" prefix "$NAME")
[ "$pre" = "$P" ] && [ -x "$P/bin/nvcc" ] && [ -e "$P/include/cudnn_version.h" ] && ls "$P"/lib64/libcudnn.so.9* >/dev/null 2>&1 \
    && ls "$P"/lib64/libcudart.so.* >/dev/null 2>&1 \
    && ok "composed prefix $pre (bin/nvcc, include/cudnn_version.h, lib64/libcudart + libcudnn)" \
    || bad "composed prefix: '$pre', want $P with nvcc, cudnn_version.h, libcudart, libcudnn"
if python3 - "$P" "$NAME" "$M/manifest.json" <<'PY'
import json, os, sys
p, name, man = sys.argv[1:]
r = json.load(open(os.path.join(p, ".cudaenv-receipt.json")))
m = json.load(open(man))
errs = []
if r.get("name") != name: errs.append(f"name {r.get('name')} != {name}")
text = json.dumps(r.get("sources"))
for sec in ("cuda", "cudnn"):
    for v in m[sec].values():
        for a in (v.get("runfile") or {}).values() if sec == "cuda" else [x for k, e in v.items() if k != "source" for x in e.values()]:
            if a["sha256"] not in text: errs.append(f"{sec} sha256 {a['sha256'][:12]} not in the receipt's sources")
bad = [f["path"] for f in r["files"] if not os.path.isfile(os.path.join(p, f["path"])) or os.path.getsize(os.path.join(p, f["path"])) != f["size"]]
if bad: errs.append(f"{len(bad)} receipt files missing or of another size: {bad[:3]}")
print(f"  receipt: {len(r['files'])} files, {sum(f['size'] for f in r['files']) >> 20} MiB, min_driver {r.get('min_driver')}, "
      f"max_gcc {r.get('max_gcc')}, sm {r.get('sm')}, sources {text[:300]}")
if errs: print("  " + "\n  ".join(errs)); sys.exit(1)
PY
then ok "receipt names $NAME, both sources' sha256 and every file with its size"; else bad "receipt"; fi
"$BIN" list

echo "== switching: cudaenv env / exec"
"$BIN" env "$NAME" | sed 's/^/  | /'
"$BIN" exec "$NAME" -- nvcc --version | tail -2 | sed 's/^/  | /'
cat > "$W/hello.cu" <<'CU'
#include <cstdio>
#include <cstring>
#include <link.h>
#include <cuda_runtime.h>
#include <cudnn.h>
static int cb(struct dl_phdr_info *i, size_t, void *) {
    if (strstr(i->dlpi_name, "libcudart") || strstr(i->dlpi_name, "libcudnn.so")) printf("loaded %s\n", i->dlpi_name);
    return 0;
}
__global__ void twice(int *o) { o[threadIdx.x] = 2 * threadIdx.x; }
int main() {
    int rt = 0;
    cudaRuntimeGetVersion(&rt);
    printf("cudart %d, cudnn %zu\n", rt, cudnnGetVersion());
    dl_iterate_phdr(cb, 0);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) { printf("no device: %s\n", cudaGetErrorString(e)); return 0; }
    int *d, h[32] = {0};
    cudaMalloc(&d, sizeof h);
    twice<<<1, 32>>>(d);
    e = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("kernel: %s, h[31] = %d (want 62)\n", cudaGetErrorString(e), h[31]);
    return h[31] == 62 ? 0 : 1;
}
CU
( cd "$W" && t "$BIN" exec "$NAME" -- nvcc -cudart shared -o hello hello.cu -lcudnn ) 2>&1 | sed 's/^/  | /'
"$BIN" exec "$NAME" -- "$W/hello" > "$OUT/hello.txt" 2>&1; rc=$?
sed 's/^/  | /' "$OUT/hello.txt"
want_kernel="h\[31\] = 62"; [ "$GPU" = 0 ] && want_kernel="no device"
[ "$rc" -eq 0 ] && grep -q "loaded $P/lib64/libcudart" "$OUT/hello.txt" && grep -q "loaded $P/lib64/libcudnn" "$OUT/hello.txt" \
    && grep -q "$want_kernel" "$OUT/hello.txt" \
    && ok "cudaenv exec: an nvcc-built program loads libcudart + libcudnn from $NAME and runs" \
    || bad "cudaenv exec: the program (exit $rc) did not load the toolchain's libraries or did not run"
server_stop >/dev/null 2>&1
unset CUDAENV_MANIFEST
[ -n "${GPU_KEEP_MIRROR:-}" ] || rm -rf "$M"   # tests/gpu/journeys.sh installs from it again
return 0
