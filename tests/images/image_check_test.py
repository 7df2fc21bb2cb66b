#!/usr/bin/env python3
"""image_check.py must fail an image that breaks its rules: this builds a small OCI archive that
runs as root, has no OCI labels, carries a world-writable file and a binary without its loader,
and asserts that the check exits non-zero naming each of those points."""

import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "image_check.py")


def add_blob(archive, data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    info = tarfile.TarInfo("blobs/sha256/" + digest.split(":")[1])
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))
    return {"digest": digest, "size": len(data)}


def layer_bytes():
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as layer:
        for name, mode, data in (("usr/local/bin/tool", 0o755, b"\x7fELF not really"),
                                 ("etc/shared.conf", 0o666, b"anyone may change this\n")):
            info = tarfile.TarInfo(name)
            info.mode, info.size = mode, len(data)
            layer.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue())


def make_archive(path):
    with tarfile.open(path, "w") as archive:
        layer = add_blob(archive, layer_bytes())
        layer["mediaType"] = "application/vnd.oci.image.layer.v1.tar+gzip"
        config = add_blob(archive, json.dumps({
            "architecture": "amd64", "os": "linux",
            "config": {"User": "0", "Entrypoint": ["/usr/local/bin/tool"]}}).encode())
        config["mediaType"] = "application/vnd.oci.image.config.v1+json"
        manifest = add_blob(archive, json.dumps({
            "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": config, "layers": [layer]}).encode())
        manifest["mediaType"] = "application/vnd.oci.image.manifest.v1+json"
        index = json.dumps({"schemaVersion": 2, "manifests": [manifest]}).encode()
        info = tarfile.TarInfo("index.json")
        info.size = len(index)
        archive.addfile(info, io.BytesIO(index))


def main():
    with tempfile.TemporaryDirectory() as work:
        archive = os.path.join(work, "bad.tar")
        make_archive(archive)
        result = subprocess.run(
            [sys.executable, CHECK, archive, "--user=65532:65532",
             "--entrypoint=/usr/local/bin/tool", "--version=0.1.0", "--max-mb=0.00001",
             "--version-output=tool 0.1.0"], capture_output=True, text=True, timeout=120)
    print(result.stdout, result.stderr)
    expected = ["config User is '0'", "label org.opencontainers.image.source is missing",
                "label org.opencontainers.image.revision is missing",
                "world-writable: /etc/shared.conf", "is over", "libraries not in the image",
                "--version exited"]
    missing = [text for text in expected if text not in result.stdout]
    if result.returncode == 0 or missing:
        print(f"image_check passed a bad image (exit {result.returncode}) or missed: {missing}")
        return 1
    print("image_check failed the bad image on every planted point")
    return 0


if __name__ == "__main__":
    sys.exit(main())
