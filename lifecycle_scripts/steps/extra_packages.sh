#!/usr/bin/env bash
# Install the packages hyperpod.lifecycle.extra_packages names, and only those not installed yet: a
# second run, or a node that has them all, makes no call to a package repository.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$SCRIPT_DIR/../lib/common.sh"

if [[ -z "${EXTRA_PACKAGES:-}" ]]; then
  log "no extra packages asked for"
  exit 0
fi
read -r -a wanted <<< "$EXTRA_PACKAGES"

if command -v dnf > /dev/null; then
  installed() { rpm -q "$1" > /dev/null 2>&1; }
  install() { dnf install -y "$@"; }
elif command -v apt-get > /dev/null; then
  installed() { dpkg -s "$1" > /dev/null 2>&1; }
  install() { DEBIAN_FRONTEND=noninteractive apt-get install -y "$@"; }
else
  die "neither dnf nor apt-get is available to install: ${wanted[*]}"
fi

missing=()
for package in "${wanted[@]}"; do
  installed "$package" || missing+=("$package")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  log "extra packages already installed: ${wanted[*]}"
  exit 0
fi
log "installing: ${missing[*]}"
install "${missing[@]}" || die "could not install: ${missing[*]}"
