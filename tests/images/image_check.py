#!/usr/bin/env python3
"""Checks one OCI archive that `make images` built: its config (user, entrypoint, OCI labels),
its layers (no world-writable files, uncompressed size within a ceiling), and its root filesystem
(every shared library the binary needs is inside, found by the image's own dynamic loader; the
binary runs there as the image's user). Exits non-zero naming each failed point."""

import argparse
import gzip
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile

OCI_LABELS = ("org.opencontainers.image.source", "org.opencontainers.image.version",
              "org.opencontainers.image.revision")
LOADER = "/lib64/ld-linux-x86-64.so.2"


def read_blob(archive, digest):
    return archive.extractfile("blobs/" + digest.replace(":", "/")).read()


def open_layer(archive, layer):
    raw = archive.extractfile("blobs/" + layer["digest"].replace(":", "/"))
    if layer["mediaType"].endswith("+gzip"):
        raw = gzip.GzipFile(fileobj=raw)
    return tarfile.open(fileobj=raw, mode="r|")


def world_writable(member):
    if member.issym() or member.islnk():
        return False
    if member.isdir() and member.mode & stat.S_ISVTX:
        return False  # /tmp and /var/tmp: shared, but nobody may remove another's files
    return bool(member.mode & stat.S_IWOTH)


def apply_layer(layer_tar, root, problems):
    """Unpacks one layer over root, honouring OCI whiteouts; notes world-writable entries."""
    size = 0
    for member in layer_tar:
        size += member.size
        name = os.path.normpath(member.name.lstrip("./") or ".")
        if name.startswith(".."):
            problems.append(f"layer entry escapes the root: {member.name}")
            continue
        base = os.path.basename(name)
        parent = os.path.join(root, os.path.dirname(name))
        if base == ".wh..wh..opq":
            for entry in os.listdir(parent) if os.path.isdir(parent) else []:
                shutil.rmtree(os.path.join(parent, entry), ignore_errors=True)
            continue
        if base.startswith(".wh."):
            target = os.path.join(parent, base[len(".wh."):])
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target)
            elif os.path.lexists(target):
                os.remove(target)
            continue
        if world_writable(member):
            problems.append(f"world-writable: /{name} ({stat.filemode(member.mode)})")
        target = os.path.join(root, name)
        if os.path.lexists(target) and not (member.isdir() and os.path.isdir(target)):
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target)
            else:
                os.remove(target)
        layer_tar.extract(member, root, set_attrs=not member.issym())
    return size


def source_revision():
    """The revision `make images` labels an image of this checkout with, or None outside git."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        return None
    dirty = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True)
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def in_image(root, argv, user=None, read_only=False):
    """Runs argv in the unpacked root as a container runtime would: in its own mount and PID
    namespaces, with /proc and /dev mounted, as `user` (when run as root), on a read-only root
    when asked."""
    for mountpoint in ("proc", "dev"):
        os.makedirs(os.path.join(root, mountpoint), exist_ok=True)
    userns = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    userspec = [f"--userspec={user}"] if user and os.geteuid() == 0 else []
    script = 'mount -t proc proc "$0/proc" && mount --rbind /dev "$0/dev" && exec chroot "$@"'
    if read_only:
        script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && ' + script
    command = ([shutil.which("unshare") or "/usr/bin/unshare"] + userns +
               ["--mount", "--pid", "--fork", "sh", "-c", script, root] + userspec + [root] + argv)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME": "/tmp"}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("archive")
    parser.add_argument("--user", required=True, help="expected config User, e.g. 65532:65532")
    parser.add_argument("--entrypoint", required=True, help="expected Entrypoint[0]")
    parser.add_argument("--version", required=True, help="expected org.opencontainers.image.version")
    parser.add_argument("--max-mb", type=float, required=True,
                        help="ceiling of the uncompressed layers, MB (10^6 bytes)")
    parser.add_argument("--version-output", required=True,
                        help="what ENTRYPOINT --version must print first")
    parser.add_argument("--read-only", action="store_true",
                        help="run the binary on a read-only root, as readOnlyRootFilesystem does")
    parser.add_argument("--run", action="append", default=[],
                        help="a further command line that must exit 0 in the image, as its user")
    parser.add_argument("--fail", action="append", default=[],
                        help="'ARGS=>TEXT': this command line must exit non-zero, saying TEXT")
    args = parser.parse_args()

    if not os.path.isfile(args.archive):
        print(f"{args.archive}: no such archive (make images builds it)")
        return 1
    problems = []
    with tarfile.open(args.archive) as archive:
        index = json.loads(archive.extractfile("index.json").read())
        manifest = json.loads(read_blob(archive, index["manifests"][0]["digest"]))
        config = json.loads(read_blob(archive, manifest["config"]["digest"])).get("config", {})

        if config.get("User") != args.user:
            problems.append(f"config User is {config.get('User')!r}, want {args.user!r}")
        entrypoint = config.get("Entrypoint") or []
        if entrypoint[:1] != [args.entrypoint]:
            problems.append(f"config Entrypoint is {entrypoint}, want [{args.entrypoint!r}, ...]")
        labels = config.get("Labels") or {}
        for label in OCI_LABELS:
            if not labels.get(label) or labels.get(label) == "unknown":
                problems.append(f"label {label} is missing or unknown: {labels.get(label)!r}")
        revision = source_revision()
        if revision and labels.get("org.opencontainers.image.revision") != revision:
            problems.append(f"label revision is {labels.get('org.opencontainers.image.revision')!r}, "
                            f"but the checkout is at {revision!r} (make images)")
        if labels.get("org.opencontainers.image.version") != args.version:
            problems.append(f"label version is {labels.get('org.opencontainers.image.version')!r},"
                            f" want {args.version!r}")

        root = tempfile.mkdtemp(prefix="bsw-image-")
        os.chmod(root, 0o755)  # the image's user must reach its own root
        try:
            size = sum(apply_layer(open_layer(archive, layer), root, problems)
                       for layer in manifest["layers"])
            print(f"{os.path.basename(args.archive)}: {len(manifest['layers'])} layers, "
                  f"{size / 1e6:.1f} MB uncompressed (ceiling {args.max_mb:g} MB), "
                  f"{os.path.getsize(args.archive) / 1e6:.1f} MB compressed")
            if size > args.max_mb * 1e6:
                problems.append(f"uncompressed size {size / 1e6:.1f} MB is over {args.max_mb:g} MB")

            listed = in_image(root, [LOADER, "--list", args.entrypoint])
            missing = [line.strip() for line in listed.stdout.splitlines() if "not found" in line]
            if listed.returncode != 0 or missing:
                problems.append(f"{args.entrypoint}: libraries not in the image: {missing or listed.stderr.strip()}")
            version = in_image(root, [args.entrypoint, "--version"], args.user, args.read_only)
            print(f"{args.entrypoint} --version: {version.stdout.strip()}")
            if version.returncode != 0 or not version.stdout.startswith(args.version_output):
                problems.append(f"{args.entrypoint} --version exited {version.returncode} printing "
                                f"{version.stdout.strip()!r} {version.stderr.strip()!r}, want "
                                f"{args.version_output!r}")
            for command in args.run:
                ran = in_image(root, [args.entrypoint] + command.split(), args.user, args.read_only)
                print(f"{args.entrypoint} {command}: exit {ran.returncode}: "
                      f"{ran.stderr.strip().splitlines()[-1:] }")
                if ran.returncode != 0:
                    problems.append(f"{args.entrypoint} {command} exited {ran.returncode}: "
                                    f"{ran.stderr.strip()[-800:]}")
            for case in args.fail:
                command, _, text = case.partition("=>")
                ran = in_image(root, [args.entrypoint] + command.split(), args.user, args.read_only)
                print(f"{args.entrypoint} {command}: exit {ran.returncode}: {ran.stderr.strip()}")
                if ran.returncode == 0 or text not in ran.stderr:
                    problems.append(f"{args.entrypoint} {command} exited {ran.returncode} with "
                                    f"{ran.stderr.strip()!r}, want a failure saying {text!r}")
        finally:
            shutil.rmtree(root, ignore_errors=True)

    for problem in problems:
        print(f"{os.path.basename(args.archive)}: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
