# Sourced by the build scripts of tests/k8s: find the Go toolchain, key a cache directory outside the
# repository by the build's inputs and the Go version, build once per key (concurrent callers wait on a
# lock), publish the binaries atomically, and print the bin dir as the last line. Every failure exits 1.
#
# Environment: GO (default `go` on PATH, else /usr/local/go/bin/go), HYPERPOD_KIT_CACHE (default
# $HOME/.cache/hyperpod-kit), BUILD_JOBS (go build -p, default 2), GOCACHE/GOMODCACHE (passed to go).

die() {
    echo "build: ERROR: $*" >&2
    exit 1
}

find_go() {
    GO=${GO:-}
    if [[ -z $GO ]]; then
        if command -v go >/dev/null 2>&1; then
            GO=go
        elif [[ -x /usr/local/go/bin/go ]]; then
            GO=/usr/local/go/bin/go
        else
            die "no go toolchain found (set GO=/path/to/go)"
        fi
    fi
    go_version=$("$GO" version) || die "'$GO version' failed"
    # Read by the build functions of the scripts that source this file.
    # shellcheck disable=SC2034
    build_jobs=${BUILD_JOBS:-2}
}

# cached_build <cache name> <build function> <binary>... -- <key input file>...
# The build function is called with a temporary folder and builds every binary into it.
cached_build() {
    local name=$1 build=$2
    shift 2
    local binaries=() inputs=() b
    while [[ $# -gt 0 && $1 != -- ]]; do
        binaries+=("$1")
        shift
    done
    shift
    inputs=("$@")
    for b in "${inputs[@]}"; do
        [[ -f $b ]] || die "$PWD/$b is missing"
    done
    find_go
    local key key_dir bin_dir tmp_dir start
    key=$(cat "${inputs[@]}" <(printf '%s\n' "$go_version") | sha256sum | cut -c1-16)
    key_dir=${HYPERPOD_KIT_CACHE:-$HOME/.cache/hyperpod-kit}/$name/$key
    bin_dir=$key_dir/bin
    if _complete "$bin_dir" "${binaries[@]}"; then
        echo "build: $name up to date ($key)" >&2
        echo "$bin_dir"
        return 0
    fi
    mkdir -p "$key_dir"
    # One build per key at a time: a second caller waits, then finds the binaries.
    exec 9>"$key_dir/.lock"
    flock 9
    if ! _complete "$bin_dir" "${binaries[@]}"; then
        tmp_dir=$key_dir/bin.tmp.$$
        rm -rf "$tmp_dir"
        mkdir -p "$tmp_dir"
        trap 'rm -rf "$tmp_dir"' EXIT
        start=$(date +%s)
        echo "build: building $name (${binaries[*]}; $go_version; key $key)" >&2
        "$build" "$tmp_dir" || die "building $name failed (see above)"
        for b in "${binaries[@]}"; do
            [[ -x $tmp_dir/$b ]] || die "the build did not produce $b"
        done
        rm -rf "$bin_dir"
        mv "$tmp_dir" "$bin_dir"
        trap - EXIT
        echo "build: $name built in $(($(date +%s) - start)) s" >&2
    fi
    echo "$bin_dir"
}

_complete() {
    local bin_dir=$1 b
    shift
    for b in "$@"; do
        [[ -x $bin_dir/$b ]] || return 1
    done
}
