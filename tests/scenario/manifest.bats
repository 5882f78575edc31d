#!/usr/bin/env bats
# The manifest as users meet it: the built-in one (every TensorFlow row
# resolves to sha256-pinned files), info and list-remote in text and JSON,
# did-you-mean, CUDAENV_MANIFEST / --manifest with invalid manifests (exit 5
# naming the JSON path), CUDAENV_MIRROR, relative URLs, platforms.
bats_require_minimum_version 1.5.0
load ../lib/common
bats_require_minimum_version 1.5.0
load ../lib/server

setup() { common_setup; }
teardown() { server_stop; common_teardown; }

SHA_A=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
SHA_B=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb

# A small manifest in $T/mirror: relative URLs, one not-installable row.
small_manifest() {
    mkdir -p "$T/mirror"
    cat > "$T/mirror/cudaenv.json" <<JSON
{ "schema": 1, "updated": "2026-01-01",
  "tensorflow": {
    "2.14": { "cuda": "11.8.0", "cudnn": "8.7.0.84", "python": "3.9-3.11", "source": "test" },
    "1.12": { "cuda": "9.0.176", "cudnn": "7.6.5.32", "not_installable": "no verified sha256 for cuDNN 7.6.5.32" } },
  "cuda": { "11.8.0": { "min_driver": "520.61.05", "max_gcc": 11, "sm": { "min": "3.5", "max": "9.0" },
      "runfile": { "linux-x86_64": { "url": "cuda/cuda_11.8.0_linux.run", "sha256": "$SHA_A", "size": 1234 } } } },
  "cudnn": { "8.7.0.84": { "cuda11": { "linux-x86_64": {
      "url": "https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz",
      "sha256": "$SHA_B" } } } } }
JSON
    echo "$T/mirror/cudaenv.json"
}

# py EXPR: evaluate a Python expression over the JSON document on stdin (d)
py() { python3 -c "import json,sys; d=json.load(sys.stdin); r=($1); sys.exit(0 if r else 1)"; }

@test "the built-in manifest validates and lists TensorFlow 1.12 through 2.21" {
    run "$CUDAENV" list-remote --json
    [ "$status" -eq 0 ]
    py 'len(d["tensorflow"]) == 26 and d["tensorflow"][0]["version"] == "2.21" and d["tensorflow"][-1]["version"] == "1.12"' <<<"$output"
    py '[t["version"] for t in d["tensorflow"]] == ["2.%d" % i for i in range(21, -1, -1)] + ["1.15", "1.14", "1.13", "1.12"]' <<<"$output"
}

@test "the built-in manifest is the generator's output: cuDNN sized by file name, releases from NVIDIA's JSONs, renamed components, row notes" {
    # a clone regenerates exactly what is committed, and make manifest prints its coverage
    run --separate-stderr python3 "$REPO/tools/gen-manifest.py"
    [ "$status" -eq 0 ]
    cmp <(printf '%s\n' "$output") "$REPO/share/manifests/cudaenv.json"
    [[ "$stderr" =~ gen-manifest:\ ([0-9]+)\ pinned\ files:\ ([0-9]+)\ with\ a\ size ]]
    [ "${BASH_REMATCH[2]}" -ge 174 ]
    m="$REPO/share/manifests/cudaenv.json"
    # 9.15.0's cuda13 build is 9.15.0.58 though its JSON's version is 9.15.0.57: sized by file name
    py 'd["cudnn"]["9.15.0.58"]["cuda13"]["linux-x86_64"]["size"] == 646565556' < "$m"
    # releases only NVIDIA's verified JSONs list, pinned by them
    py 'all(v in d["cudnn"] for v in ("9.1.1.17", "9.2.1.18", "9.4.0.58", "9.5.0.50", "9.7.0.66"))' < "$m"
    py 'd["cudnn"]["9.7.0.66"]["cuda12"]["linux-x86_64"]["sha256_sources"] == ["nvidia-redist-json"] and "nvidia-redist-json" in d["sources"]' < "$m"
    # every cuDNN tarball NVIDIA's JSONs cover now has a size
    py 'sum(1 for e in d["cudnn"].values() for k, b in e.items() if k.startswith("cuda") for a in b.values() if "size" in a) >= 125' < "$m"
    # CUDA 13.3 renamed cuda_cccl to cccl: the tf profile takes both names
    py '"cccl" in d["profiles"]["tf"]["components"] and "cuda_cccl" in d["profiles"]["tf"]["components"]' < "$m"
    # rows say what their pair does not: TF 2.15's pip pin, tf-2.4 on aarch64
    py '"8.9.4.25" in d["tensorflow"]["2.15"]["notes"][0] and "linux-sbsa" in d["tensorflow"]["2.4"]["notes"][0]' < "$m"
    py 'd["tensorflow"]["2.15"]["notes"][0].startswith("pip `and-cuda` pinned cuDNN 8.9.4.25; 8.9.7.29 chosen (same 8.9 minor, compatible, digest verified)")' < "$m"
    py 'd["updated"] >= "2026-12-01"' < "$m"
}

@test "the generator: cuDNN coverage printed; 9.27.0.42 on aarch64 from the copy its x86_64 builds came from, checked; updated not before a JSON used" {
    run --separate-stderr python3 "$REPO/tools/gen-manifest.py"
    [ "$status" -eq 0 ]
    # 61 cuDNN tarballs had a size at aab3196 (the 2026-12 audit); NVIDIA's JSONs matched by file name fill the rest they cover
    [[ "$stderr" =~ cuDNN\ tarballs:\ ([0-9]+)\ of\ ([0-9]+)\ with\ a\ size ]]
    [ "${BASH_REMATCH[1]}" -ge 127 ] && [ "${BASH_REMATCH[2]}" -ge 185 ] || false
    m="$REPO/share/manifests/cudaenv.json"
    py 'd["cudnn"]["9.27.0.42"]["cuda12"]["linux-sbsa"] == {"url": "https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/linux-sbsa/cudnn-linux-sbsa-9.27.0.42_cuda12-archive.tar.xz",
        "sha256": "397efa8eb25285ee289ef10274e643218edb7cbe6088cdb453afca1030e149c9", "size": 1012822668,
        "sha256_sources": d["cudnn"]["9.27.0.42"]["cuda12"]["linux-x86_64"]["sha256_sources"]}
        and d["cudnn"]["9.27.0.42"]["cuda13"]["linux-sbsa"]["size"] == 1075252712' < "$m"
    # but a bare CUDA 13 install, on aarch64 as on x86_64, passes it over: one sha256 source (issue 39)
    CUDAENV_PLATFORM=linux-sbsa run "$CUDAENV" info 13.0 --json
    [ "$status" -eq 0 ]
    py 'd["toolchain"] == "13.0.3+cudnn9.20.0.48" and d["cudnn_choice"]["passed_over"].startswith("9.27.0.42")' <<<"$output"
    CUDAENV_PLATFORM=linux-sbsa run "$CUDAENV" info 13.0 --cudnn 9.27 --json   # named: the user's choice
    py 'd["toolchain"] == "13.0.3+cudnn9.27.0.42" and d["cudnn"]["archive"]["sha256"].startswith("74912c0c6182") and "cudnn_choice" not in d' <<<"$output"
    # the copy is checked: a changed byte (its sha256 no longer SOURCES.md's) stops the generator
    cp -r "$REPO/data/redist" "$T/redist"
    sed -i 's/"size": "1012822668"/"size": "1012822669"/' "$T/redist/cudnn/unverified/redistrib_9.27.0.json"
    run --separate-stderr python3 "$REPO/tools/gen-manifest.py" "$REPO/data/manifest-draft.json" "$REPO/data/sizes.md" "$T/redist"
    [ "$status" -eq 1 ] && [[ "$stderr" == *"unverified/redistrib_9.27.0.json"*"SOURCES.md"* ]] || false
    # relist: the copy's new sha256 and size into the temp SOURCES.md (as one would list a new copy)
    relist() { python3 - "$T/redist" <<'PY'
import hashlib, re, sys
d = sys.argv[1]
raw = open(d + "/cudnn/unverified/redistrib_9.27.0.json", "rb").read()
s = open(d + "/SOURCES.md").read()
s = re.sub(r"(\| unverified/redistrib_9\.27\.0\.json \|.*?\| )[0-9a-f]{64}( \| )\d+", lambda m: m.group(1) + hashlib.sha256(raw).hexdigest() + m.group(2) + str(len(raw)), s)
open(d + "/SOURCES.md", "w").write(s)
PY
    }
    # ... and so is the pairing: a listed copy whose x86_64 build is not the draft's is refused
    cp "$REPO/data/redist/cudnn/unverified/redistrib_9.27.0.json" "$T/redist/cudnn/unverified/"
    sed -i 's/dc45f8c5fd44955c6e950c690ea92c28ea848ffb1fefbaabf3a9d175d961263a/'"$SHA_A"'/' "$T/redist/cudnn/unverified/redistrib_9.27.0.json"
    relist
    run --separate-stderr python3 "$REPO/tools/gen-manifest.py" "$REPO/data/manifest-draft.json" "$REPO/data/sizes.md" "$T/redist"
    [ "$status" -eq 1 ] && [[ "$stderr" == *"cuDNN 9.27.0.42 cuda12 linux-x86_64: the manifest's build differs from unverified/redistrib_9.27.0.json"* ]] || false
    # a JSON dated after "updated" makes the generator ask for a newer date (2026-07-01 sat beside 9.27.0's 2026-09-29)
    cp "$REPO/data/redist/cudnn/unverified/redistrib_9.27.0.json" "$T/redist/cudnn/unverified/"
    sed -i 's/"release_date": "2026-09-29"/"release_date": "2099-01-01"/' "$T/redist/cudnn/unverified/redistrib_9.27.0.json"
    relist
    run --separate-stderr python3 "$REPO/tools/gen-manifest.py" "$REPO/data/manifest-draft.json" "$REPO/data/sizes.md" "$T/redist"
    [ "$status" -eq 1 ] && [[ "$stderr" == *'"updated" 2026-12-04 is before 2099-01-01'* ]] || false
    py 'd["updated"] >= "2026-09-29"' < "$m"
}

@test "the resolution rule (issue 39): bare CUDA and JAX take the newest cuDNN on firm ground; info says why and what it passed over" {
    run "$CUDAENV" info 13.3
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "13.3 -> 13.3.0+cudnn9.20.0.48" ]]
    [[ "$output" == *"chosen      the newest cuDNN on firm ground (sha256 in NVIDIA's redistrib JSON, which XLA pins); passed over 9.27.0.42 (one sha256 source: "* ]]
    [[ "$output" == *"passed over 9.27.0.42, 9.21.0.82"* ]]
    run "$CUDAENV" info jax-0.9.2 --json
    py 'd["toolchain"] == "13.3.0+cudnn9.20.0.48" and d["cudnn_choice"]["cudnn"] == "9.20.0.48" and "9.27.0.42" in d["cudnn_choice"]["passed_over"]' <<<"$output"
    # an exact pin is no implicit choice: nothing to explain
    run "$CUDAENV" info torch-2.3+cu118 --json
    py 'd["toolchain"] == "11.8.0+cudnn8.7.0.84" and "cudnn_choice" not in d' <<<"$output"
    # CUDA 9's cuDNN builds rest on one source (spack): the bare spec takes none, and says so
    run "$CUDAENV" info 9.0 --json
    py 'd["toolchain"] == "9.0.176" and d["cudnn"] is None and d["cudnn_choice"]["cudnn"] is None and "one sha256 source" in d["cudnn_choice"]["why"]' <<<"$output"
    run "$CUDAENV" info 9.0 --cudnn 7.6 --json
    py 'd["toolchain"] == "9.0.176+cudnn7.6.5.32"' <<<"$output"
    # the manifest says the same per row
    m="$REPO/share/manifests/cudaenv.json"
    py 'all(e["cudnn_default"][p]["cudnn"] == "9.20.0.48" for v, e in d["cuda"].items() if v.startswith(("12.", "13.")) for p in e.get("cudnn_default", {}))' < "$m"
    py 'all("9.27.0.42" not in (b["cudnn"], b["cuda"]) for r in d["jax"].values() for b in r["builds"].values())' < "$m"
}

@test "the generator refuses a single-source implicit cuDNN and a redistrib JSON whose bytes differ from XLA's pin" {
    mkdir -p "$T/g/tools" && cp "$REPO"/tools/gen-manifest.py "$REPO"/tools/gen_frameworks.py "$REPO"/tools/gen_pick.py "$T/g/tools/"
    cp -r "$REPO/data" "$T/g/data"
    run --separate-stderr python3 "$T/g/tools/gen-manifest.py"
    [ "$status" -eq 0 ]
    cmp <(printf '%s\n' "$output") "$REPO/share/manifests/cudaenv.json"
    # a JAX range whose every candidate rests on one source: make manifest names the row
    python3 - "$T/g/data/frameworks.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["jax"]["0.9.2"]["builds"]["cuda13"]["cudnn_min"] = "9.21"; json.dump(d, open(sys.argv[1], "w"))
PY
    run --separate-stderr python3 "$T/g/tools/gen-manifest.py"
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"jax 0.9.2 cuda13 (cuDNN >= 9.21, < 10.0): every cuDNN candidate (9.27.0.42: one sha256 source: "*"9.21.0.82: one sha256 source: spack) rests on one sha256 source"* ]]
    cp "$REPO/data/frameworks.json" "$T/g/data/"
    # a bare CUDA row likewise, unless the data says it takes no implicit cuDNN
    sed -i 's/^    "9.2.88": (/    "9.2.88-not": (/' "$T/g/tools/gen-manifest.py"
    run --separate-stderr python3 "$T/g/tools/gen-manifest.py"
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"cuda 9.2.88 linux-x86_64 (a bare CUDA spec's cuDNN): every cuDNN candidate (7.6.4.38: one sha256 source: spack)"* ]]
    cp "$REPO/tools/gen-manifest.py" "$T/g/tools/"
    # nixpkgs' copy of 13.1.1 (a trailing newline NVIDIA's file lacks), even listed in SOURCES.md: XLA's pin refuses it
    printf '\n' >> "$T/g/data/redist/cuda/redistrib_13.1.1.json"
    new=$(sha256sum "$T/g/data/redist/cuda/redistrib_13.1.1.json" | cut -c1-64)
    sed -i "s/97cf605ccc4751825b1865f4af571c9b50dd29ffd13e9a38b296a9ecb1f0d422 | 50852/$new | 50853/" "$T/g/data/redist/SOURCES.md"
    run --separate-stderr python3 "$T/g/tools/gen-manifest.py"
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"redistrib_13.1.1.json: sha256 $new differs from XLA's pin 97cf605ccc4751825b1865f4af571c9b50dd29ffd13e9a38b296a9ecb1f0d422"*"the trailing newline"* ]]
    # ... and a JSON XLA does not pin at all
    cp "$REPO/data/redist/cuda/redistrib_13.1.1.json" "$REPO/data/redist/SOURCES.md" "$T/g/data/redist/"
    mv "$T/g/data/redist/redistrib_13.1.1.json" "$T/g/data/redist/cuda/redistrib_13.4.1.json"
    cp "$REPO/data/redist/cuda/redistrib_13.1.1.json" "$T/g/data/redist/cuda/"
    run --separate-stderr python3 "$T/g/tools/gen-manifest.py"
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"redistrib_13.4.1.json: XLA pins no sha256"* ]]
}

@test "make manifest prints the coverage and the single-source list; runfile sizes by exact file name (sbsa, 13.4's driver-less names)" {
    run --separate-stderr python3 "$REPO/tools/gen-manifest.py"
    [ "$status" -eq 0 ]
    [[ "$stderr" =~ gen-manifest:\ ([0-9]+)\ pinned\ files:\ ([0-9]+)\ with\ a\ size,\ ([0-9]+)\ with\ two\ sha256\ sources ]]
    [ "${BASH_REMATCH[2]}" -ge 222 ] || false   # 185 before the 37 sizes of the rwgk catalogue (13.1.0-13.3.0 x86_64, 12.x/13.x sbsa)
    [[ "$stderr" == *"gen-manifest: single-source sha256 ("*"; a cuDNN among them is never an implicit choice): runfile ("*"cuDNN ("*"9.27.0.42 cuda13 x86_64"* ]]
    m="$REPO/share/manifests/cudaenv.json"
    py 'd["cuda"]["13.3.0"]["runfile"]["linux-sbsa"]["size"] == 4172818258 and d["cuda"]["13.1.0"]["runfile"]["linux-x86_64"]["size"] == 4345889047' < "$m"
    py 'all("size" in a for v, e in d["cuda"].items() if v.startswith(("12.", "13.")) for a in e.get("runfile", {}).values())' < "$m"
    # every sha256_sources label is a key of the top-level "sources"
    py 'all(s in d["sources"] for sec in ("cuda", "cudnn", "nccl") for e in d[sec].values() for k, b in e.items() if k == "runfile" or k.startswith("cuda") for a in b.values() for s in a["sha256_sources"])' < "$m"
    py 'd["cudnn"]["8.9.7.29"]["cuda12"]["linux-x86_64"]["sha256_sources"] == ["spack_cudnn", "nvidia-redist-json-copy", "nixpkgs", "easybuild"] and d["cuda"]["13.3.0"]["runfile"]["linux-x86_64"]["sha256_sources"] == ["spack_cuda", "easybuild"]' < "$m"
    # 13.4.1's runfiles name no driver: matched by file name all the same; 5.1 and 5.1b must agree
    cd "$REPO/tools"
    run python3 -c 'import importlib.util as u; s = u.spec_from_file_location("g", "gen-manifest.py"); g = u.module_from_spec(s); s.loader.exec_module(g)
rows, _ = g.parse_sizes("../data/sizes.md")
assert g.runfile_size(rows, "13.4.1", "cuda_13.4.1_linux.run") == 4214651928
assert g.runfile_size(rows, "13.4.1", "cuda_13.4.1_linux_sbsa.run") == 4149643845
assert g.runfile_size(rows, "11.8.0", "cuda_11.8.0_520.61.05_linux.run") == 4336730777
assert g.runfile_size(rows, "13.4.1", "cuda_13.4.1_610.0_linux.run") is None
rows.byname["cuda_12.8.1_570.124.06_linux.run"] += 1
g.runfile_size(rows, "12.8.1", "cuda_12.8.1_570.124.06_linux.run")'
    [ "$status" -eq 1 ]
    [[ "$output" == *"cuda_12.8.1_570.124.06_linux.run is 5382238770 bytes in 5.1 but 5382238771 in 5.1b"* ]]
}

@test "CUDA 12.8.2, 12.9.2 and 13.0.3: redist-only releases install from NVIDIA's components; 13.1+ JSON shapes through the profiles" {
    m="$REPO/share/manifests/cudaenv.json"
    py 'all("runfile" not in d["cuda"][v] and d["cuda"][v]["redist"]["url"].endswith("redistrib_%s.json" % v) for v in ("12.8.2", "12.9.2", "13.0.3"))' < "$m"
    py 'd["cuda"]["13.0.3"]["min_driver"] == "580.126.20" and d["cuda"]["12.9.2"]["min_driver_compat"] == "525.60.13"' < "$m"
    py 'all("redist" in d["cuda"][v] for v in ("13.1.0", "13.1.1", "13.1.2", "13.2.0", "13.2.1", "13.3.0"))' < "$m"
    for spec in 13.0.3 13.1 13.2 13.3.0 12.9.2; do
        run "$CUDAENV" info "$spec" --json
        [ "$status" -eq 0 ] || { echo "$spec: $output"; false; }
        # the components listed (NVIDIA's pinned JSON, bundled): CCCL under its name of the release, nothing driver-side
        py 'len(c := [x["name"] for x in d["cuda"]["components"]["list"]]) >= 20 and ("cccl" in c) != ("cuda_cccl" in c)
            and not any(n.startswith(("cuda_compat", "mft", "nvidia_", "imex", "fabricmanager", "libnvidia_nscq", "libnvsdm", "nvlsm", "driver_assistant", "collectx")) for n in c)' <<<"$output" || { echo "$spec"; false; }
    done
    run "$CUDAENV" info 13.3.0 --json
    py '"cccl" in [x["name"] for x in d["cuda"]["components"]["list"]] and "libnvptxcompiler" in [x["name"] for x in d["cuda"]["components"]["list"]]' <<<"$output"
    CUDAENV_PLATFORM=linux-sbsa run "$CUDAENV" info 13.2.0 --json
    py '"cuda_compat_orin" not in [x["name"] for x in d["cuda"]["components"]["list"]]' <<<"$output"
    # a framework build that lands on a redist-only release: PyTorch cu130 -> 13.0.3
    run "$CUDAENV" info torch-2.13 --json
    py 'd["toolchain"] == "13.0.3+cudnn9.20.0.48"' <<<"$output"
}

@test "every TensorFlow row on linux-sbsa: what info says it cannot install is exactly what the manifest's notes mark (tf-2.4: cuDNN 8.0.5.39's aarch64 build is for CUDA 11.1)" {
    export CUDAENV_PLATFORM=linux-sbsa
    m="$REPO/share/manifests/cudaenv.json"
    marked=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(sorted("tf-" + k for k, t in d["tensorflow"].items() if not t.get("not_installable") and any(n.startswith("not installable on linux-sbsa") for n in t.get("notes", [])))))' "$m")
    [[ " $marked " == *" tf-2.4 "* ]]
    refused=
    for s in $("$CUDAENV" list-remote --json | python3 -c 'import json,sys; print(" ".join(t["spec"] for t in json.load(sys.stdin)["tensorflow"] if t["installable"]))'); do
        run "$CUDAENV" info "$s" --json
        [ "$status" -eq 0 ] || { echo "$s: $output"; false; }
        if py 'not d["installable"]' <<<"$output"; then refused="$refused $s"; fi
    done
    [ "$(tr ' ' '\n' <<<"$refused" | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//')" = "$(tr ' ' '\n' <<<"$marked" | sort | tr '\n' ' ' | sed 's/ $//')" ]
    py '"the listed cuDNN 8.0.5.39 build is for CUDA 11.1, not 11.0.2" in d["tensorflow"]["2.4"]["notes"][0]' < "$m"
    CUDAENV_PLATFORM=linux-sbsa run "$CUDAENV" info tf-2.4 --json
    py 'not d["installable"] and "linux-sbsa" in d["reason"]' <<<"$output"
}

@test "every TensorFlow row resolves to a runfile and a cuDNN tarball with a sha256 on linux-x86_64, or says why not" {
    export CUDAENV_PLATFORM=linux-x86_64
    specs=$("$CUDAENV" list-remote --json | python3 -c 'import json,sys; print(" ".join(t["spec"] for t in json.load(sys.stdin)["tensorflow"]))')
    [ -n "$specs" ]
    for s in $specs; do
        run "$CUDAENV" info "$s" --json
        [ "$status" -eq 0 ] || { echo "$s: $output"; false; }
        py '(d["installable"] and len(d["cuda"]["runfile"]["sha256"]) == 64 and len(d["cudnn"]["archive"]["sha256"]) == 64
             and d["cuda"]["runfile"]["url"].startswith("https://") and d["cudnn"]["archive"]["url"].startswith("https://"))
            or (not d["installable"] and len(d["tensorflow"]["not_installable"] or "") > 10)' <<<"$output" || { echo "$s: $output"; false; }
    done
}

@test "info tf-2.14: CUDA 11.8.0 + cuDNN 8.7.0.84 with NVIDIA's URLs, sizes and sha256s" {
    run "$CUDAENV" info tf-2.14
    [ "$status" -eq 0 ]
    [[ "$output" == *"tf-2.14 -> 11.8.0+cudnn8.7.0.84"* ]]
    [[ "$output" == *"https://developer.download.nvidia.com/compute/cuda/11.8.0/local_installers/cuda_11.8.0_520.61.05_linux.run"* ]]
    [[ "$output" == *"9223c4af3aebe4a7bbed9abd9b163b03a1b34b855fbc2b4a0d1b706ac09a5a16"* ]]
    [[ "$output" == *"cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz"* ]]
    [[ "$output" == *"976c4cba7233c97ae74006afab5172976300ba40f5b250a21f8cf71f59c9f76d"* ]]
    [[ "$output" == *"min driver  520.61.05"* ]]
    [[ "$output" == *"max gcc     11"* ]]
    [[ "$output" == *"python      3.9-3.11"* ]]
    [[ "$output" == *"4336730777 bytes"* ]]
    run "$CUDAENV" info tensorflow==2.14.1 --json
    [ "$status" -eq 0 ]
    py 'd["toolchain"] == "11.8.0+cudnn8.7.0.84" and d["cuda"]["version"] == "11.8.0" and d["cudnn"]["version"] == "8.7.0.84"
        and d["cuda"]["runfile"]["size"] == 4336730777 and d["cudnn"]["archive"]["size"] == 886423308
        and d["cuda"]["min_driver"] == "520.61.05" and d["cuda"]["max_gcc"] == 11 and d["cuda"]["sm"] == {"min": "3.5", "max": "9.0"}
        and d["tensorflow"]["python"] == "3.9-3.11" and "tensorflow/docs" in d["tensorflow"]["source"]
        and "spack" in d["cuda"]["source"] and d["cudnn"]["source"]' <<<"$output"
}

@test "TensorFlow's table, not the blog posts: 2.13 = 11.8 + 8.6, 2.15 = 12.2 + 8.9, 2.18 = 12.5 + 9.3" {
    run "$CUDAENV" info tf-2.13 --json
    py 'd["cuda"]["version"] == "11.8.0" and d["cudnn"]["version"].startswith("8.6.")' <<<"$output"
    run "$CUDAENV" info tf-2.15 --json
    py 'd["cuda"]["version"].startswith("12.2.") and d["cudnn"]["version"].startswith("8.9.")' <<<"$output"
    run "$CUDAENV" info tf-2.18 --json
    py 'd["cuda"]["version"].startswith("12.5.") and d["cudnn"]["version"].startswith("9.3.")' <<<"$output"
}

@test "info for CUDA specs, --cudnn and --no-cudnn" {
    run "$CUDAENV" info 11.8 --json
    [ "$status" -eq 0 ]
    py 'd["tensorflow"] is None and d["cuda"]["version"] == "11.8.0" and d["cudnn"]["cuda_major"] == 11' <<<"$output"
    run "$CUDAENV" info cuda-11.8 --cudnn 8.6 --json
    py 'd["toolchain"].startswith("11.8.0+cudnn8.6.")' <<<"$output"
    run "$CUDAENV" info 11.8.0+cudnn8.7 --json
    py 'd["toolchain"] == "11.8.0+cudnn8.7.0.84"' <<<"$output"
    run --separate-stderr "$CUDAENV" info tf-2.14 --no-cudnn --json   # stderr: leaves the tested pair
    py 'd["toolchain"] == "11.8.0" and d["cudnn"] is None' <<<"$output"
    [[ "$stderr" == *"TensorFlow 2.14 was tested with CUDA 11.8.0 + cuDNN 8.7.0.84"* ]]
    run "$CUDAENV" info 11.8 --cudnn 9.13
    [ "$status" -eq 3 ]
    [[ "$output" == *"cuDNN 9.13 has no linux-x86_64 build for CUDA 11.8.0"* ]]
    run "$CUDAENV" info 11.8 --cudnn 8.6 --no-cudnn
    [ "$status" -eq 2 ]
}

@test "unknown specs exit 3 and name the nearest valid ones" {
    run "$CUDAENV" info tf-2.99
    [ "$status" -eq 3 ]
    [[ "$output" == *"no TensorFlow release tf-2.99"* && "$output" == *"did you mean tf-2."* ]]
    run "$CUDAENV" info 2.14
    [ "$status" -eq 3 ]
    [[ "$output" == *"did you mean tf-2.14"* ]]
    run "$CUDAENV" info 11.9
    [ "$status" -eq 3 ]
    [[ "$output" == *"did you mean 11.8"* ]]
    run "$CUDAENV" info banana
    [ "$status" -eq 3 ]
    run "$CUDAENV" info
    [ "$status" -eq 2 ]
}

@test "list-remote: tf (default), cuda, cudnn, ls-remote alias, bad argument" {
    run "$CUDAENV" list-remote
    [ "$status" -eq 0 ]
    [[ "$output" =~ tf-2\.14\ +11\.8\.0\ +8\.7\.0\.84\ +3\.9-3\.11 ]]
    [[ "$output" =~ tf-2\.21\ +12\.5\.1\ +9\.3\.0\.75 ]]
    run "$CUDAENV" ls-remote cuda
    [ "$status" -eq 0 ]
    # the HERE column: whether it runs on this machine (no driver on CI: ?)
    [[ "$output" =~ 11\.8\.0\ +520\.61\.05\ +11\ +3\.5-9\.0\ +(yes|compat|jit|driver|gpu|\?)\ +linux-x86_64,linux-sbsa ]]
    [[ "$output" =~ 9\.0\.176\ .*linux-x86_64 ]]
    run "$CUDAENV" list-remote cudnn
    [ "$status" -eq 0 ]
    [[ "$output" =~ 8\.7\.0\.84\ +cuda11:\ linux-x86_64,linux-sbsa ]]
    run "$CUDAENV" list-remote cudnn --json
    py 'any(c["version"] == "9.3.0.75" and {"cuda_major": 12, "platforms": ["linux-x86_64", "linux-sbsa"]} in c["builds"] for c in d["cudnn"])' <<<"$output"
    run "$CUDAENV" list-remote cuda --json
    py 'd["cuda"][0]["version"] == "13.3.0" and any(c["version"] == "11.8.0" and c["max_gcc"] == 11 for c in d["cuda"])' <<<"$output"
    "$CUDAENV" list-remote --json | python3 -m json.tool >/dev/null
    run "$CUDAENV" list-remote keras
    [ "$status" -eq 2 ]
    [[ "$output" == *"list tf, torch, jax, cuda or cudnn"* ]]
}

@test "CUDAENV_MANIFEST and --manifest: relative URLs resolve next to the manifest; not-installable rows are shown with the reason" {
    m=$(small_manifest)
    export CUDAENV_MANIFEST=$m
    run "$CUDAENV" info tf-2.14 --json
    [ "$status" -eq 0 ]
    py 'd["cuda"]["runfile"]["url"] == "file://'"$T"'/mirror/cuda/cuda_11.8.0_linux.run" and d["cuda"]["runfile"]["size"] == 1234 and d["manifest"] == "'"$m"'"' <<<"$output"
    run "$CUDAENV" info tf-1.12
    [ "$status" -eq 0 ]
    [[ "$output" == *"no verified sha256 for cuDNN 7.6.5.32"* ]]
    [[ "$output" == *"CUDA 9.0.176 + cuDNN 7.6.5.32"* ]]
    run "$CUDAENV" info tf-1.12 --json
    py 'd["installable"] is False and d["tensorflow"]["not_installable"].startswith("no verified")' <<<"$output"
    run "$CUDAENV" list-remote
    [[ "$output" =~ tf-1\.12\ .*not\ installable:\ no\ verified ]]
    [ "$(grep -c '^tf-' <<<"$output")" -eq 2 ]
    # --manifest wins over the environment
    unset CUDAENV_MANIFEST
    run "$CUDAENV" list-remote --manifest "$m" --json
    py 'len(d["tensorflow"]) == 2' <<<"$output"
    run "$CUDAENV" list-remote --manifest "file://$m" --json
    py 'len(d["tensorflow"]) == 2' <<<"$output"
    CUDAENV_MANIFEST=$T/nope.json run "$CUDAENV" list-remote
    [ "$status" -eq 3 ]
    [[ "$output" == *"$T/nope.json"* ]]
}

@test "CUDAENV_MIRROR rewrites NVIDIA's download host (trailing slash or not)" {
    CUDAENV_MIRROR=https://mirror.example.org/nv/ run "$CUDAENV" info tf-2.14 --json
    [ "$status" -eq 0 ]
    py 'd["cuda"]["runfile"]["url"] == "https://mirror.example.org/nv/compute/cuda/11.8.0/local_installers/cuda_11.8.0_520.61.05_linux.run"
        and d["cudnn"]["archive"]["url"].startswith("https://mirror.example.org/nv/compute/cudnn/redist/")' <<<"$output"
    CUDAENV_MIRROR=http://127.0.0.1:9 run "$CUDAENV" info tf-2.14 --json
    py 'd["cuda"]["runfile"]["url"].startswith("http://127.0.0.1:9/compute/cuda/11.8.0/")' <<<"$output"
}

@test "a platform without files: info shows the release and says so" {
    CUDAENV_PLATFORM=linux-sbsa run "$CUDAENV" info tf-2.3 --json
    [ "$status" -eq 0 ]
    py 'd["installable"] is False and d["cuda"]["runfile"] is None and "no runfile for linux-sbsa" in d["reason"]' <<<"$output"
    CUDAENV_PLATFORM=linux-sbsa run "$CUDAENV" info tf-2.14 --json
    py 'd["installable"] and d["cuda"]["runfile"]["url"].endswith("_linux_sbsa.run") and "linux-sbsa" in d["cudnn"]["archive"]["url"]' <<<"$output"
}

# invalid MUTATION -> exit 5 and the JSON path in the message
invalid() {
    local m; m=$(small_manifest)
    python3 - "$m" "$1" <<'PY'
import json, sys
path, what = sys.argv[1], sys.argv[2]
d = json.load(open(path))
rf = d["cuda"]["11.8.0"]["runfile"]["linux-x86_64"]
if what == "schema": d["schema"] = 2
elif what == "hex": rf["sha256"] = rf["sha256"][:-1] + "A"
elif what == "nourl": del rf["url"]
elif what == "sizetype": rf["size"] = "1234"
elif what == "gcctype": d["cuda"]["11.8.0"]["max_gcc"] = "11"
elif what == "tfkey": d["tensorflow"]["2.14.0"] = d["tensorflow"].pop("2.14")
elif what == "cudnnkey": d["cudnn"]["8.7.0.84"]["cuda11.8"] = d["cudnn"]["8.7.0.84"].pop("cuda11")
elif what == "choicetype": d["cuda"]["11.8.0"]["cudnn_default"] = {"linux-x86_64": {"cudnn": "8.7.0.84"}}
elif what == "notjson": open(path, "w").write("{ \"schema\": 1, "); sys.exit(0)
json.dump(d, open(path, "w"))
PY
    CUDAENV_MANIFEST=$m run "$CUDAENV" info tf-2.14
}

@test "invalid manifests exit 5 and name the JSON path (schema, hex, url, types, keys)" {
    invalid schema;   [ "$status" -eq 5 ]; [[ "$output" == *"schema: unsupported manifest schema 2; this cudaenv supports schema 1"* ]]
    invalid hex;      [ "$status" -eq 5 ]; [[ "$output" == *'cuda."11.8.0".runfile."linux-x86_64".sha256: expected 64 hex characters'* ]]
    invalid nourl;    [ "$status" -eq 5 ]; [[ "$output" == *'cuda."11.8.0".runfile."linux-x86_64".url: missing'* ]]
    invalid sizetype; [ "$status" -eq 5 ]; [[ "$output" == *'cuda."11.8.0".runfile."linux-x86_64".size: expected a non-negative integer'* ]]
    invalid gcctype;  [ "$status" -eq 5 ]; [[ "$output" == *'cuda."11.8.0".max_gcc'* ]]
    invalid tfkey;    [ "$status" -eq 5 ]; [[ "$output" == *'tensorflow."2.14.0": TensorFlow releases are keyed MAJOR.MINOR'* ]]
    invalid cudnnkey; [ "$status" -eq 5 ]; [[ "$output" == *'cudnn."8.7.0.84"."cuda11.8"'* ]]
    invalid choicetype; [ "$status" -eq 5 ]; [[ "$output" == *'cuda."11.8.0".cudnn_default."linux-x86_64".why: missing'* ]]
    invalid notjson;  [ "$status" -eq 5 ]; [[ "$output" == *"not valid JSON"* ]]
    [[ "$output" == *"$T/mirror/cudaenv.json"* ]]
    # list-remote refuses it the same way
    CUDAENV_MANIFEST=$T/mirror/cudaenv.json run "$CUDAENV" list-remote
    [ "$status" -eq 5 ]
}

@test "a manifest URL (light binary re-execs the full one): relative URLs resolve against it; http only with --insecure" {
    # unsigned, and asked again on every run (remote.bats tests signatures and the interval)
    export CUDAENV_MANIFEST_UNSIGNED=1 CUDAENV_UPDATE_INTERVAL=0
    m=$(small_manifest)
    sed -i 's/"updated": "2026-01-01"/"updated": "2099-01-01"/' "$m"   # not before the built-in one
    server_start "$T/mirror" --tls
    run --separate-stderr "$CUDAENV" info tf-2.14 --json --manifest "$SERVER_TLS_URL/cudaenv.json"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    py 'd["cuda"]["runfile"]["url"] == "'"$SERVER_TLS_URL"'/cuda/cuda_11.8.0_linux.run" and d["manifest"] == "'"$SERVER_TLS_URL"'/cudaenv.json"' <<<"$output"
    # a manifest from a URL may not name http:// files
    sed -i "s|\"cuda/cuda_11.8.0_linux.run\"|\"http://127.0.0.1:9/x.run\"|" "$m"
    CUDAENV_MANIFEST=$SERVER_TLS_URL/cudaenv.json run "$CUDAENV" info tf-2.14
    [ "$status" -eq 5 ]
    [[ "$output" == *'cuda."11.8.0".runfile."linux-x86_64".url: http://127.0.0.1:9/x.run is refused'* ]]
    CUDAENV_MANIFEST=$SERVER_TLS_URL/cudaenv.json run --separate-stderr "$CUDAENV" info tf-2.14 --insecure --json
    [ "$status" -eq 0 ]
    py 'd["cuda"]["runfile"]["url"] == "http://127.0.0.1:9/x.run"' <<<"$output"
}
