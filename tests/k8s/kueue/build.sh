#!/usr/bin/env bash
# Build kueue-oracle (the real Kueue v0.19.2 scheduler driven in-process, one scheduling cycle at a time:
# cmd/kueue-oracle) and the Kueue controller (sigs.k8s.io/kueue/cmd/kueue, pinned by tools.go) from the Go
# module proxy into
#   ${HYPERPOD_KIT_CACHE:-$HOME/.cache/hyperpod-kit}/kueue/<key>/bin
# keyed by go.sum, the harness sources and `go version`. Prints the bin dir as its last line.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"
# shellcheck source-path=SCRIPTDIR
# shellcheck source=../cached_build.sh
source ../cached_build.sh

build() {
    local out=$1 kueue_version
    kueue_version=$("$GO" list -m -f '{{.Version}}' sigs.k8s.io/kueue) ||
        die "cannot read the sigs.k8s.io/kueue version from go.mod"
    nice -n 10 "$GO" build -mod=readonly -p "$build_jobs" -trimpath -o "$out/kueue-oracle" ./cmd/kueue-oracle
    nice -n 10 "$GO" build -mod=readonly -p "$build_jobs" -trimpath \
        -ldflags "-X sigs.k8s.io/kueue/pkg/version.GitVersion=$kueue_version" \
        -o "$out/kueue" sigs.k8s.io/kueue/cmd/kueue
    # Smoke test the oracle before publishing it.
    echo '{}' | "$out/kueue-oracle" >/dev/null || die "kueue-oracle smoke test"
}

cached_build kueue build kueue-oracle kueue -- go.sum cmd/kueue-oracle/shim_linkname.go cmd/kueue-oracle/main.go cmd/kueue-oracle/session.go
