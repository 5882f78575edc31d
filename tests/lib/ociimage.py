#!/usr/bin/env python3
"""Write a toolchain image in skopeo's dir: layout without cudaenv, for the
cases cudaenv push never writes: oci.bats copies it into the registry with
skopeo (the independent client) and installs it.
usage: ociimage.py TREE OUTDIR NAME [--receipt-sha256 HEX] [--tree-sha256 HEX] [--extra-entry PATH]
  TREE                the toolchain tree to pack (its receipt's sha256 is annotated)
  --receipt-sha256    annotate this instead (a receipt the layer does not hold)
  --tree-sha256       annotate io.cudaenv.tree_sha256 (none by default: an image
                      pushed before cudaenv wrote it)
  --extra-entry PATH  add a file entry of that name (e.g. ../escape) to the layer
"""
import argparse, gzip, hashlib, io, json, os, tarfile

ap = argparse.ArgumentParser()
ap.add_argument("tree"); ap.add_argument("out"); ap.add_argument("name")
ap.add_argument("--receipt-sha256"); ap.add_argument("--tree-sha256"); ap.add_argument("--extra-entry")
a = ap.parse_args()
os.makedirs(a.out, exist_ok=True)

raw = io.BytesIO()
with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as t:
    for root, dirs, files in os.walk(a.tree):
        dirs.sort()
        for n in sorted(dirs + files):
            p = os.path.join(root, n)
            t.add(p, arcname=os.path.relpath(p, a.tree), recursive=False)
    if a.extra_entry:
        data = b"outside the tree\n"
        ti = tarfile.TarInfo(a.extra_entry); ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
tar = raw.getvalue()
gz = gzip.compress(tar, mtime=0)

def blob(b):
    d = hashlib.sha256(b).hexdigest()
    open(os.path.join(a.out, d), "wb").write(b)
    return "sha256:" + d

receipt = a.receipt_sha256 or hashlib.sha256(open(os.path.join(a.tree, ".cudaenv-receipt.json"), "rb").read()).hexdigest()
ann = {"io.cudaenv.toolchain": a.name, "io.cudaenv.receipt.sha256": receipt}
if a.tree_sha256:
    ann["io.cudaenv.tree_sha256"] = a.tree_sha256
config = json.dumps({"architecture": "amd64", "os": "linux",
                     "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(tar).hexdigest()]}}).encode()
manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": blob(config), "size": len(config)},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": blob(gz), "size": len(gz)}],
            "annotations": ann}
open(os.path.join(a.out, "manifest.json"), "w").write(json.dumps(manifest))
open(os.path.join(a.out, "version"), "w").write("Directory Transport Version: 1.1\n")
