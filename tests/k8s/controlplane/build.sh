#!/usr/bin/env bash
# Build etcd (embedded, cmd/etcd), kube-apiserver, kube-controller-manager and kubectl - Kubernetes v1.33 from
# the Go module proxy, pinned by go.mod and go.sum - into
#   ${HYPERPOD_KIT_CACHE:-$HOME/.cache/hyperpod-kit}/k8s/<key>/bin
# keyed by go.sum, go.mod, the etcd main and `go version`. Prints the bin dir as its last line.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"
# shellcheck source-path=SCRIPTDIR
# shellcheck source=../cached_build.sh
source ../cached_build.sh

build() {
    local out=$1 k8s_version major minor ldflags pkg
    k8s_version=$("$GO" list -m -f '{{.Version}}' k8s.io/kubernetes) ||
        die "cannot read the k8s.io/kubernetes version from go.mod"
    [[ $k8s_version =~ ^v([0-9]+)\.([0-9]+)\. ]] || die "unexpected k8s.io/kubernetes version '$k8s_version'"
    major=${BASH_REMATCH[1]}
    minor=${BASH_REMATCH[2]}
    # What `kubectl version` and /version report (the release's own build sets the same).
    ldflags="-s -w"
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
        ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
    done
    # -mod=readonly: a missing go.sum line is an error, not a silent update. CGO off: static binaries, as
    # the upstream release. The three Kubernetes commands are `tool` directives of go.mod.
    CGO_ENABLED=0 nice -n 10 "$GO" build -mod=readonly -p "$build_jobs" -trimpath -ldflags="$ldflags" \
        -o "$out/" tool ./cmd/etcd
}

cached_build k8s build etcd kube-apiserver kube-controller-manager kubectl -- go.sum go.mod cmd/etcd/main.go
