#!/usr/bin/env bash
# make images: builds the three OCI images from the repository's Dockerfiles with no daemon and
# no image pulls, into OCI archives under build/images/:
#   budgetsweep-operator.tar      operator/Dockerfile            budgetsweep/operator:VERSION
#   budgetsweep-trainer.tar       trainer-image/Dockerfile       budgetsweep/trainer:VERSION
#   budgetsweep-trainer-cuda.tar  trainer-image/Dockerfile.cuda  budgetsweep/trainer-cuda:VERSION
# The Dockerfiles start FROM debian:bookworm-slim. Here that base is made from Debian's packages
# with mmdebstrap (its root tarball cached under ~/.cache/budgetsweep, keyed by the package
# selection below) and tagged locally under that name; buildah then builds each Dockerfile in its
# own storage under ~/.cache/budgetsweep/buildah, whose layer cache makes an unchanged image cheap.
#
# Usage: scripts/images.sh [operator|trainer|trainer-cuda|sandbox|curve-trainer ...]
#   (default: the three above). sandbox and curve-trainer are test images for the test node
#   (tests/cluster/node, tests/fixtures/curve-trainer): budgetsweep-sandbox.tar and
#   budgetsweep-curve-trainer.tar.
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(scripts/project-version)
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then revision="$revision-dirty"; fi
cache=${BSW_CACHE:-$HOME/.cache/budgetsweep}
out=${BSW_IMAGES_DIR:-build/images}
mkdir -p "$out" "$cache"

log() { printf '[images] %s\n' "$*" >&2; }

for tool in mmdebstrap buildah; do
  command -v "$tool" >/dev/null || { log "error: $tool not found (make deps installs it)"; exit 1; }
done

# buildah keeps its images, layers and RUN --mount caches beside the other cached builds.
storage=$cache/buildah
export TMPDIR=$storage/tmp
mkdir -p "$TMPDIR"
bh() { buildah --root "$storage/root" --runroot "$storage/run" --storage-driver overlay "$@"; }

# ---- the base: debian:bookworm-slim from Debian's packages -------------------------------------
# Like the official slim image: minbase, without manuals, documentation (copyrights kept) and
# translations, and with an empty /dev (the container runtime provides it). The key changes with
# this selection; a Debian point release is picked up by removing the cached tarball.
suite=bookworm
base_options=(--variant=minbase --mode=auto --format=tar --skip=output/dev
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias'
  --include=ca-certificates)
base_key=$(printf '%s\n' "$suite" "${base_options[@]}" | sha256sum | cut -c1-16)
base_tar=$cache/base-debian-$suite-slim-$base_key.tar
base_ref=docker.io/library/debian:$suite-slim

if [ ! -f "$base_tar" ]; then
  log "making the base rootfs with mmdebstrap ($suite, minbase): about a minute, once"
  start=$SECONDS
  # No mirror named: mmdebstrap uses this machine's apt sources.
  mmdebstrap "${base_options[@]}" "$suite" "$base_tar.partial" >&2
  mv "$base_tar.partial" "$base_tar"
  log "base rootfs made in $((SECONDS - start)) s: $(du -h "$base_tar" | cut -f1)"
fi
if [ "$(bh inspect --type image --format '{{index .ImageAnnotations "dev.budgetsweep.base-key"}}' "$base_ref" 2>/dev/null)" != "$base_key" ]; then
  log "tagging the base as $base_ref"
  container=$(bh from scratch)
  bh add "$container" "$base_tar" / >/dev/null
  bh config --os linux --arch amd64 --cmd bash \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --annotation "dev.budgetsweep.base-key=$base_key" "$container"
  bh commit -q --rm "$container" "$base_ref" >/dev/null
fi

# ---- the images ---------------------------------------------------------------------------------
# The version and revision labels are also given on the command line: buildah's layer cache reuses
# a LABEL step whose build arguments changed, which would keep an old revision.
dockerfile_of() {
  case $1 in
    operator) echo operator/Dockerfile ;;
    trainer) echo trainer-image/Dockerfile ;;
    trainer-cuda) echo trainer-image/Dockerfile.cuda ;;
    # Test images, not products: the test node's pod sandbox, and the curve-trainer fixture.
    sandbox) echo tests/cluster/node/Dockerfile.sandbox ;;
    curve-trainer) echo tests/fixtures/curve-trainer/Dockerfile ;;
    *) log "error: unknown image '$1' (operator, trainer, trainer-cuda, sandbox, curve-trainer)"; exit 2 ;;
  esac
}

# pip in a build stage trusts what this machine trusts: where the network re-signs TLS with a
# local CA, Debian's bundle in the image lacks it. It goes in as the build secret pip-ca, which
# no layer keeps.
ca_bundle=${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}
build_options=()
if [ -f "$ca_bundle" ]; then build_options=(--secret "id=pip-ca,src=$ca_bundle"); fi

images=("$@")
[ ${#images[@]} -gt 0 ] || images=(operator trainer trainer-cuda)
for image in "${images[@]}"; do
  dockerfile=$(dockerfile_of "$image")
  ref=budgetsweep/$image:$version
  archive=$out/budgetsweep-$image.tar
  log "building $ref from $dockerfile"
  start=$SECONDS
  previous=$(bh inspect --type image --format '{{.FromImageID}}' "$ref" 2>/dev/null || true)
  bh bud --pull=never --layers --isolation chroot --network host \
    --build-arg "VERSION=$version" --build-arg "REVISION=$revision" "${build_options[@]}" \
    --label "org.opencontainers.image.version=$version" \
    --label "org.opencontainers.image.revision=$revision" \
    -f "$dockerfile" -t "$ref" . >&2
  # The image the tag named before is garbage now; its layers go unless a cached step holds them.
  if [ -n "$previous" ] && [ "$previous" != "$(bh inspect --type image --format '{{.FromImageID}}' "$ref")" ]; then
    bh rmi "$previous" >/dev/null 2>&1 || true
  fi
  rm -f "$archive"
  bh push -q "$ref" "oci-archive:$archive:$ref" >&2
  log "$archive: $(du -h "$archive" | cut -f1) compressed, built in $((SECONDS - start)) s"
done
