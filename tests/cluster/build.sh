#!/usr/bin/env bash
# Build (once) the binaries of the local test cluster from Go modules and cache them under
#   ${BSW_CACHE_DIR:-~/.cache/budgetsweep}/<component>-<version>/<binary>
# A warm cache makes this a no-op that runs no Go command at all.
#
# Usage: tests/cluster/build.sh [component...]   (default: all of them)
#   components: kube-apiserver kube-scheduler kube-controller-manager kubelet kube-proxy etcd
#               containerd prometheus helm
# Prints the cache path of each binary, and how long each cold build took.
set -euo pipefail

# ---- pinned versions --------------------------------------------------------------------------
# Kubernetes: the newest minor whose go.mod `go` line the installed Go accepts with
# GOTOOLCHAIN=local (v1.37.x: `go 1.26.0`). etcd: the server minor that k8s v1.37 pins its etcd
# client modules to (v3.7). helm: the newest v3 release. containerd: the newest v2.2 patch
# (kubelet >= 1.36 needs containerd >= 2.0; Debian's is 1.6). Prometheus: upstream 3.16 (module
# v0.316.0), which has Kubernetes service discovery (Debian's build leaves it out).
K8S_VERSION=v1.37.2
ETCD_VERSION=v3.7.3
HELM_VERSION=v3.22.0
CONTAINERD_VERSION=v2.2.9
PROMETHEUS_VERSION=v0.316.0
# -----------------------------------------------------------------------------------------------

CACHE_DIR=${BSW_CACHE_DIR:-$HOME/.cache/budgetsweep}
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}

# Go builds share the machine: lowest priority, at most two threads, one package at a time is
# available through BSW_GO_P=1 when memory is tight.
export GOTOOLCHAIN=local CGO_ENABLED=0 GOMAXPROCS=${GOMAXPROCS:-2}
export GOFLAGS="-mod=mod -buildvcs=false"
GO_P=${BSW_GO_P:-2}
NICE=(nice -n 19)

log() { printf '[build] %s\n' "$*" >&2; }
die() { printf '[build] error: %s\n' "$*" >&2; exit 1; }

[ -x "$GO" ] || die "go not found (set GO=/path/to/go)"

k8s_minor() { local v=${K8S_VERSION#v}; v=${v#*.}; echo "${v%%.*}"; }
k8s_major() { local v=${K8S_VERSION#v}; echo "${v%%.*}"; }

# Paths of the cached binaries.
bin_path() {
  case $1 in
    kube-apiserver) echo "$CACHE_DIR/kube-apiserver-$K8S_VERSION/kube-apiserver" ;;
    kube-scheduler) echo "$CACHE_DIR/kube-scheduler-$K8S_VERSION/kube-scheduler" ;;
    kube-controller-manager|kubelet|kube-proxy) echo "$CACHE_DIR/$1-$K8S_VERSION/$1" ;;
    # One directory holds the daemon and the tools built with it.
    containerd)     echo "$CACHE_DIR/containerd-$CONTAINERD_VERSION/containerd" ;;
    prometheus)     echo "$CACHE_DIR/prometheus-$PROMETHEUS_VERSION/prometheus" ;;
    etcd)           echo "$CACHE_DIR/etcd-$ETCD_VERSION/etcd" ;;
    helm)           echo "$CACHE_DIR/helm-$HELM_VERSION/helm" ;;
    *) die "unknown component: $1" ;;
  esac
}

# Scratch space inside the cache dir (same filesystem, so the final `mv` is a rename).
mkscratch() { mkdir -p "$CACHE_DIR/.tmp"; mktemp -d "$CACHE_DIR/.tmp/$1.XXXXXX"; }

SCRATCH=()
cleanup() { local d; for d in "${SCRATCH[@]}"; do [ -n "$d" ] && rm -rf "$d"; done; }
trap cleanup EXIT

# install_dir <tmpdir with the binary> <component>: the whole directory appears at once.
install_dir() {
  local tmp=$1 comp=$2 final
  final=$(dirname "$(bin_path "$comp")")
  chmod 755 "$tmp"
  rm -rf "$final"   # only reached when the binary in it was missing or not executable
  mv "$tmp" "$final"
}

K8S_WRAPPER=""
# A throwaway module that pins every k8s.io staging module. The list of staging modules is
# read from the `replace k8s.io/X => ./staging/...` lines of k8s.io/kubernetes's own go.mod.
k8s_wrapper() {
  [ -n "$K8S_WRAPPER" ] && return 0
  local w gomod staging m
  w=$(mkscratch k8s-wrapper); SCRATCH+=("$w")
  gomod=$(cd "$w" && "$GO" mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
          sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
  [ -f "$gomod" ] || die "could not download k8s.io/kubernetes@$K8S_VERSION"
  local gov
  gov=$(sed -n 's/^go \([0-9.]*\).*/\1/p' "$gomod")
  log "k8s.io/kubernetes@$K8S_VERSION needs go $gov; using $("$GO" env GOVERSION)"
  staging=$(sed -n 's#^[[:space:]]*\(k8s\.io/[A-Za-z0-9._-]*\)[[:space:]]*=>[[:space:]]*\./staging/.*#\1#p' "$gomod" | sort -u)
  [ -n "$staging" ] || die "no staging replace lines found in $gomod"
  (
    cd "$w"
    "$GO" mod init budgetsweep.test/k8s-wrapper >/dev/null 2>&1
    local args=()
    for m in $staging; do args+=("-replace=$m=$m@v0.$(k8s_minor).${K8S_VERSION##*.}"); done
    "$GO" mod edit "${args[@]}"
    log "wrapper pins $(echo "$staging" | wc -l) staging modules at v0.$(k8s_minor).${K8S_VERSION##*.}"
    "${NICE[@]}" "$GO" get -tags selinux,notest,grpcnotrace \
      "k8s.io/kubernetes/cmd/kube-apiserver@$K8S_VERSION" \
      "k8s.io/kubernetes/cmd/kube-scheduler@$K8S_VERSION" \
      "k8s.io/kubernetes/cmd/kube-controller-manager@$K8S_VERSION" \
      "k8s.io/kubernetes/cmd/kubelet@$K8S_VERSION" \
      "k8s.io/kubernetes/cmd/kube-proxy@$K8S_VERSION" >&2
  ) || die "preparing the k8s wrapper module failed"
  K8S_WRAPPER=$w
}

k8s_ldflags() {
  local f="-s -w" p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    f+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=$(k8s_major) -X $p.gitMinor=$(k8s_minor)"
    f+=" -X $p.gitTreeState=clean"
  done
  echo "$f"
}

build_k8s() {   # kube-apiserver | kube-scheduler | kube-controller-manager | kubelet | kube-proxy
  local comp=$1 out
  k8s_wrapper
  out=$(mkscratch "$comp"); SCRATCH+=("$out")
  (
    cd "$K8S_WRAPPER"
    "${NICE[@]}" "$GO" build -p "$GO_P" -trimpath -tags selinux,notest,grpcnotrace \
      -ldflags "$(k8s_ldflags)" -o "$out/$comp" "k8s.io/kubernetes/cmd/$comp"
  ) || die "building $comp failed"
  install_dir "$out" "$comp"
}

# build_module <component> <module@version> <tags> <ldflags> <binary=package...>: packages of
# one module, built in a throwaway wrapper module that requires only it, into the component's
# directory.
build_module() {
  local comp=$1 mod=$2 tags=$3 ld=$4 w out pkg
  shift 4
  w=$(mkscratch "$comp-wrapper"); SCRATCH+=("$w")
  out=$(mkscratch "$comp"); SCRATCH+=("$out")
  (
    cd "$w"
    "$GO" mod init "budgetsweep.test/$comp-wrapper" >/dev/null 2>&1
    "${NICE[@]}" "$GO" get "$mod" >&2
    for pkg in "$@"; do
      "${NICE[@]}" "$GO" build -p "$GO_P" -trimpath -tags "$tags" -ldflags "-s -w $ld" \
        -o "$out/${pkg%%=*}" "${pkg#*=}"
    done
  ) || die "building $comp failed"
  install_dir "$out" "$comp"
}

build_etcd() {
  build_module etcd "go.etcd.io/etcd/server/v3@$ETCD_VERSION" "" "" etcd=go.etcd.io/etcd/server/v3
}

# containerd with its CLI and the runc shim; the snapshotters that need cgo or kernel headers
# are left out (the node uses overlayfs).
build_containerd() {
  local m=github.com/containerd/containerd/v2
  build_module containerd "$m@$CONTAINERD_VERSION" no_btrfs,no_devmapper \
    "-X $m/version.Version=$CONTAINERD_VERSION -X $m/version.Revision=module" \
    "containerd=$m/cmd/containerd" "ctr=$m/cmd/ctr" \
    "containerd-shim-runc-v2=$m/cmd/containerd-shim-runc-v2"
}

# Prometheus and promtool without the web UI's assets (the builtinassets tag): the HTTP API,
# scraping and service discovery are all there. The version is 3.x for module v0.3xx.y.
build_prometheus() {
  local m=github.com/prometheus/prometheus c=github.com/prometheus/common/version v
  v=${PROMETHEUS_VERSION#v0.}; v="3.$(( 10#${v%%.*} - 300 )).${v#*.}"
  build_module prometheus "$m@$PROMETHEUS_VERSION" "" \
    "-X $c.Version=$v -X $c.Revision=module -X $c.Branch=release-${v%.*}" \
    "prometheus=$m/cmd/prometheus" "promtool=$m/cmd/promtool"
}

build_helm() {
  local out gomod cg kmaj kmin ld p
  out=$(mkscratch helm); SCRATCH+=("$out")
  # Like helm's Makefile: stamp the version, and the default Kubernetes version (for
  # `helm template`/lint) from the k8s.io/client-go version in helm's own go.mod.
  gomod=$(cd "$out" && "$GO" mod download -json "helm.sh/helm/v3@$HELM_VERSION" |
          sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
  [ -f "$gomod" ] || die "could not download helm.sh/helm/v3@$HELM_VERSION"
  cg=$(sed -n 's#^[[:space:]]*k8s\.io/client-go v\([0-9.]*\).*#\1#p' "$gomod" | head -1)
  kmaj=$(( ${cg%%.*} + 1 )); kmin=${cg#*.}; kmin=${kmin%%.*}
  ld="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
  ld+=" -X helm.sh/helm/v3/internal/version.metadata= -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    ld+=" -X $p.k8sVersionMajor=$kmaj -X $p.k8sVersionMinor=$kmin"
  done
  (
    cd "$out"   # outside any module: `go install pkg@version` uses helm's own go.mod
    GOBIN="$out" GOFLAGS=-buildvcs=false "${NICE[@]}" "$GO" install -p "$GO_P" -trimpath \
      -ldflags "$ld" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  ) || die "building helm failed"
  install_dir "$out" helm
}

ensure() {
  local comp=$1 bin start secs
  bin=$(bin_path "$comp")
  if [ -x "$bin" ]; then
    log "$comp: cached at $bin"
    return 0
  fi
  log "$comp: building (cold) ..."
  start=$(date +%s)
  case $comp in
    kube-apiserver|kube-scheduler|kube-controller-manager|kubelet|kube-proxy) build_k8s "$comp" ;;
    etcd) build_etcd ;;
    containerd) build_containerd ;;
    prometheus) build_prometheus ;;
    helm) build_helm ;;
  esac
  secs=$(( $(date +%s) - start ))
  printf 'built_seconds=%s\nbuilt_at=%s\ngo=%s\n' "$secs" "$(date -u +%FT%TZ)" \
    "$("$GO" env GOVERSION)" > "$(dirname "$bin")/BUILD_INFO"
  log "$comp: built in ${secs}s ($(( secs / 60 ))m$(( secs % 60 ))s) -> $bin"
}

components=("$@")
[ ${#components[@]} -gt 0 ] || components=(etcd kube-apiserver kube-scheduler kube-controller-manager
  kubelet kube-proxy containerd prometheus helm)

# Fast path: everything cached -> no lock, no Go.
all_cached=1
for c in "${components[@]}"; do [ -x "$(bin_path "$c")" ] || all_cached=0; done
if [ "$all_cached" = 0 ]; then
  mkdir -p "$CACHE_DIR"
  exec 9>"$CACHE_DIR/.build.lock"
  flock 9   # one builder at a time; a second caller waits and then finds the cache warm
  for c in "${components[@]}"; do ensure "$c"; done
  rm -rf "$CACHE_DIR/.tmp" 2>/dev/null || true
fi
for c in "${components[@]}"; do echo "$c=$(bin_path "$c")"; done
