#!/usr/bin/env bash
# Keep container images (containerd) and pod data (kubelet: emptyDir volumes, logs) off the small root volume:
# on the instance's NVMe instance store where it has one (HyperPod mounts it at /opt/dlami/nvme, the choice
# AWS's reference lifecycle scripts offer beside /opt/sagemaker), else on the secondary EBS volume HyperPod
# mounts at /opt/sagemaker. So a pod's emptyDir is local NVMe where the instance has it (`hyperpod-kit job
# --scratch`). The instance store is lost when the instance stops; images and pod data are disposable, and a
# replaced node is a new instance either way. How depends on the node image, read from the
# node's own /etc/os-release (AWS's reference lifecycle scripts decide the same way):
# - Amazon Linux 2: bootstrap.sh renders /etc/containerd/config.toml from the template
#   /etc/eks/containerd/containerd-config.toml, so the root goes into the template (and into the rendered
#   file too when bootstrap already ran).
# - Amazon Linux 2023 (Kubernetes 1.33+ nodes): nodeadm rewrites /etc/containerd/config.toml on every
#   boot, so an edit there does not last. A systemd drop-in starts containerd with --root on the volume
#   instead. AWS's reference writes a whole config file onto the volume and points --config at it; the kit
#   overrides the root only, so nodeadm's per-instance settings (GPU or Neuron runtime, sandbox image,
#   registry mirrors) stay in force and are not frozen in a copy (the reference's copy makes the NVIDIA
#   runtime the default on every node, Trainium and CPU ones included).
# kubelet: /var/lib/kubelet becomes a symlink to the volume, as in the reference. It lives on the root
# volume, so it needs no mount at boot; a bind mount in /etc/fstab would fail the boot whenever HyperPod
# mounts /opt/sagemaker later than local file systems.
# Checks before each change: a second run on the same node changes nothing.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$SCRIPT_DIR/../lib/common.sh"

EBS_VOLUME=/opt/sagemaker
NVME_VOLUME=/opt/dlami/nvme
DEFAULT_CONTAINERD_ROOT=/var/lib/containerd
AL2_TEMPLATE="$ROOT/etc/eks/containerd/containerd-config.toml"
RENDERED_CONFIG="$ROOT/etc/containerd/config.toml"
DROP_IN="$ROOT/etc/systemd/system/containerd.service.d/90-hyperpod-kit-data-root.conf"
KUBELET_DIR=/var/lib/kubelet
# HyperPod mounts the volumes itself; give it this long before failing (the reference waits 60 s too).
VOLUME_WAIT_SECONDS="${VOLUME_WAIT_SECONDS:-60}"

node_os() {
  local file="$ROOT/etc/os-release"
  [[ -f "$file" ]] || { echo "unknown"; return; }
  # shellcheck source=/dev/null
  (source "$file" && echo "${ID:-unknown}-${VERSION_ID:-unknown}")
}

# Succeeds once $1 is mounted, fails after VOLUME_WAIT_SECONDS.
wait_for_mount() {
  local waited=0
  until mountpoint -q "$ROOT$1"; do
    ((waited < VOLUME_WAIT_SECONDS)) || return 1
    sleep 5
    waited=$((waited + 5))
  done
}

# Sets VOLUME: the instance store where the instance has one and HyperPod mounted it, else the EBS volume.
choose_volume() {
  # The instance store's NVMe devices, as udev names them by their model ("Amazon EC2 NVMe Instance Storage";
  # EBS volumes are "Amazon Elastic Block Store"). Without one the pattern stays as written and names no file.
  local devices=("$ROOT"/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_*)
  if [[ -e "${devices[0]}" ]]; then
    if wait_for_mount "$NVME_VOLUME"; then
      VOLUME="$NVME_VOLUME"
      log "instance store (${#devices[@]} NVMe device(s)) mounted at $NVME_VOLUME: data roots go there"
      return
    fi
    log "WARNING: the instance has ${#devices[@]} NVMe instance-store device(s) but $NVME_VOLUME is not mounted after ${VOLUME_WAIT_SECONDS}s: data roots go to $EBS_VOLUME (emptyDir volumes are EBS-backed on this node)"
  fi
  wait_for_mount "$EBS_VOLUME" ||
    die "$EBS_VOLUME is not mounted after ${VOLUME_WAIT_SECONDS}s: the instance group needs its secondary EBS volume (ebs_volume_gib)"
  VOLUME="$EBS_VOLUME"
}

# Set the root in a containerd config file; CHANGED=true when the file changed. (Functions here are never
# called as conditions: that would switch off `set -e` inside them.)
CHANGED=false
set_root_in() {
  local file="$1" updated
  updated="$(toml_with_top_level_key "$file" root "\"$CONTAINERD_ROOT\"")"
  [[ -n "$updated" ]] || die "could not set the root in $file"
  if [[ "$updated" == "$(cat "$file")" ]]; then
    return
  fi
  CHANGED=true
  log "containerd root -> $CONTAINERD_ROOT in ${file#"$ROOT"}"
  printf '%s\n' "$updated" > "$file.hyperpod-kit.new"
  mv "$file.hyperpod-kit.new" "$file"
}

configure_al2() {
  [[ -f "$AL2_TEMPLATE" ]] ||
    die "${AL2_TEMPLATE#"$ROOT"} not found: this Amazon Linux 2 node is not an EKS node image with containerd"
  set_root_in "$AL2_TEMPLATE"
  if [[ -f "$RENDERED_CONFIG" ]]; then  # bootstrap.sh already ran: it will not render the template again
    set_root_in "$RENDERED_CONFIG"
  fi
}

configure_al2023() {
  local wanted
  wanted="$(printf '%s\n' \
    "# Written by hyperpod-kit (lifecycle_scripts/steps/data_roots.sh): containerd keeps its data on the" \
    "# secondary volume; every other setting comes from nodeadm's /etc/containerd/config.toml." \
    "[Service]" \
    "ExecStart=" \
    "ExecStart=/usr/bin/containerd --root $CONTAINERD_ROOT")"
  if [[ -f "$DROP_IN" && "$(cat "$DROP_IN")" == "$wanted" ]]; then
    return
  fi
  CHANGED=true
  log "containerd root -> $CONTAINERD_ROOT through the systemd drop-in ${DROP_IN#"$ROOT"}"
  mkdir -p "$(dirname "$DROP_IN")"
  printf '%s\n' "$wanted" > "$DROP_IN"
}

# Data another image left on the volume (an AL2 -> AL2023 update keeps the secondary volume) is not
# reused: its containerd and kubelet state may not match. The reference deletes it on every AL2023 run;
# the kit only when the marker says another image wrote it, so a second run keeps what the first made.
forget_other_os_data() {
  local os="$1" previous=""
  [[ -f "$OS_MARKER" ]] && previous="$(cat "$OS_MARKER")"
  if [[ "$previous" == "$os" ]]; then
    return
  fi
  if [[ -n "$previous" ]]; then
    log "data on $VOLUME was written by node image $previous; starting afresh for $os"
    rm -rf --one-file-system "$ROOT$CONTAINERD_ROOT" "$ROOT$KUBELET_TARGET"
  fi
  printf '%s\n' "$os" > "$OS_MARKER"
}

move_containerd_root() {
  local os="$1"
  case "$os" in
    amzn-2) configure_al2 ;;
    amzn-2023) configure_al2023 ;;
    *)
      log "WARNING: node image '$os' is neither Amazon Linux 2 nor 2023: containerd's data stays on the root volume"
      return ;;
  esac
  if [[ "$CHANGED" == false && -d "$ROOT$CONTAINERD_ROOT" ]]; then
    log "containerd already keeps its data in $CONTAINERD_ROOT"
    return
  fi
  local running=false
  if systemctl is-active --quiet containerd; then
    running=true
    systemctl stop containerd
  fi
  if [[ ! -d "$ROOT$CONTAINERD_ROOT" ]]; then
    # Copy into a scratch folder first: an interrupted copy is never taken for a finished one.
    log "copying containerd's data from $DEFAULT_CONTAINERD_ROOT to $CONTAINERD_ROOT"
    rm -rf "$ROOT$CONTAINERD_ROOT.partial"
    mkdir -p "$ROOT$CONTAINERD_ROOT.partial"
    if [[ -d "$ROOT$DEFAULT_CONTAINERD_ROOT" ]]; then
      cp -a "$ROOT$DEFAULT_CONTAINERD_ROOT/." "$ROOT$CONTAINERD_ROOT.partial/"
    fi
    mv "$ROOT$CONTAINERD_ROOT.partial" "$ROOT$CONTAINERD_ROOT"
  fi
  if [[ "$os" == amzn-2023 ]]; then
    systemctl daemon-reload
  fi
  if [[ "$running" == true ]]; then
    systemctl start containerd
  fi
}

link_kubelet_dir() {
  if [[ -L "$ROOT$KUBELET_DIR" && "$(readlink "$ROOT$KUBELET_DIR")" == "$KUBELET_TARGET" ]]; then
    log "$KUBELET_DIR already points to $KUBELET_TARGET"
    return
  fi
  log "kubelet data goes to $KUBELET_TARGET ($KUBELET_DIR becomes a symlink to it)"
  local running=false
  if systemctl is-active --quiet kubelet; then
    running=true
    systemctl stop kubelet
  fi
  mkdir -p "$ROOT$KUBELET_TARGET"
  if [[ -d "$ROOT$KUBELET_DIR" && ! -L "$ROOT$KUBELET_DIR" ]]; then
    cp -a "$ROOT$KUBELET_DIR/." "$ROOT$KUBELET_TARGET/"
    rm -rf --one-file-system "$ROOT$KUBELET_DIR"
  fi
  mkdir -p "$(dirname "$ROOT$KUBELET_DIR")"
  ln -sfn "$KUBELET_TARGET" "$ROOT$KUBELET_DIR"
  if [[ "$running" == true ]]; then
    systemctl start kubelet
  fi
}

if [[ "${MOVE_DATA_ROOTS:-true}" != "true" ]]; then
  log "MOVE_DATA_ROOTS=$MOVE_DATA_ROOTS: containerd and kubelet stay on the root volume"
  exit 0
fi
choose_volume
CONTAINERD_ROOT="$VOLUME/containerd/data-root"
KUBELET_TARGET="$VOLUME/kubelet"
# Which image wrote the data on the volume: data of another image (AL2 -> AL2023 update) is not reused.
OS_MARKER="$ROOT$VOLUME/.hyperpod-kit-data-roots-os"
os="$(node_os)"
log "node image: $os"
forget_other_os_data "$os"
move_containerd_root "$os"
link_kubelet_dir
