#!/usr/bin/env bash
# Keep container images (containerd) and pod data (kubelet) on the secondary EBS volume HyperPod mounts
# at /opt/sagemaker instead of the small root volume. Checks before each change, so a second run on the
# same node changes nothing.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$SCRIPT_DIR/../lib/common.sh"

VOLUME=/opt/sagemaker
CONTAINERD_CONFIG="$ROOT/etc/containerd/config.toml"
CONTAINERD_ROOT="$VOLUME/containerd/data-root"
KUBELET_DIR=/var/lib/kubelet
KUBELET_TARGET="$VOLUME/kubelet"
FSTAB="$ROOT/etc/fstab"

move_containerd_root() {
  [[ -f "$CONTAINERD_CONFIG" ]] || die "$CONTAINERD_CONFIG not found: this is not an EKS node image with containerd"
  if grep -qx "root = \"$CONTAINERD_ROOT\"" "$CONTAINERD_CONFIG"; then
    log "containerd already keeps its data in $CONTAINERD_ROOT"
    return
  fi
  local old_root
  old_root="$(sed -n 's/^root = "\(.*\)"$/\1/p' "$CONTAINERD_CONFIG")"
  old_root="${old_root:-/var/lib/containerd}"
  log "moving containerd's data from $old_root to $CONTAINERD_ROOT"
  systemctl stop containerd
  mkdir -p "$ROOT$CONTAINERD_ROOT"
  if [[ -d "$ROOT$old_root" ]]; then
    cp -a "$ROOT$old_root/." "$ROOT$CONTAINERD_ROOT/"
  fi
  if grep -q '^root = ' "$CONTAINERD_CONFIG"; then
    sed -i "s|^root = .*|root = \"$CONTAINERD_ROOT\"|" "$CONTAINERD_CONFIG"
  else
    # A top-level key must come before the first [table]; the first line is always before it.
    printf 'root = "%s"\n%s' "$CONTAINERD_ROOT" "$(cat "$CONTAINERD_CONFIG")" > "$CONTAINERD_CONFIG.new"
    mv "$CONTAINERD_CONFIG.new" "$CONTAINERD_CONFIG"
  fi
  systemctl start containerd
}

bind_kubelet_dir() {
  local entry="$KUBELET_TARGET $KUBELET_DIR none bind 0 0"
  mkdir -p "$ROOT$KUBELET_TARGET" "$ROOT$KUBELET_DIR"
  if ! grep -qxF "$entry" "$FSTAB" 2>/dev/null; then
    log "kubelet data goes to $KUBELET_TARGET (bind mount on $KUBELET_DIR, kept in /etc/fstab)"
    cp -a "$ROOT$KUBELET_DIR/." "$ROOT$KUBELET_TARGET/"
    printf '%s\n' "$entry" >> "$FSTAB"
  fi
  if mountpoint -q "$ROOT$KUBELET_DIR"; then
    log "$KUBELET_DIR is already mounted"
  else
    mount --bind "$ROOT$KUBELET_TARGET" "$ROOT$KUBELET_DIR"
  fi
}

if [[ "${MOVE_DATA_ROOTS:-true}" != "true" ]]; then
  log "MOVE_DATA_ROOTS=$MOVE_DATA_ROOTS: containerd and kubelet stay on the root volume"
  exit 0
fi
mountpoint -q "$ROOT$VOLUME" ||
  die "$VOLUME is not mounted: the instance group needs its secondary EBS volume (ebs_volume_gib)"
move_containerd_root
bind_kubelet_dir
