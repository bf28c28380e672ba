#!/usr/bin/env bash
# Hand NVIDIA devices to containers only through the device plugins, so a container gets what its resource
# requests (and so its team's quota) gave it, and no others. Two settings of the NVIDIA container toolkit, in
# /etc/nvidia-container-runtime/config.toml (the same file on Amazon Linux 2 and 2023):
# - Always: features.ignore-imex-channel-requests = true. Otherwise NVIDIA_IMEX_CHANNELS in a container's env
#   (an image's included, which admission cannot see) opens IMEX channels - multi-node NVLink memory import and
#   export - to any container with GPUs (nvidia-container-toolkit api/config/v1/features.go: "cannot be used to
#   provide access to an IMEX channel by simply specifying an environment variable"). Channels the NVIDIA DRA
#   driver hands out through CDI still work; toolkits older than the flag ignore the key.
# - With GPU_DEVICE_ISOLATION (hyperpod.lifecycle.gpu_device_isolation): the toolkit also hands GPUs to any
#   container whose environment names them - NVIDIA_VISIBLE_DEVICES=all from the image (every nvidia/cuda image
#   sets it), or none at all in a "legacy" image that sets CUDA_VERSION. So:
#   accept-nvidia-visible-devices-envvar-when-unprivileged = false: the variable counts only in containers
#   with CAP_SYS_ADMIN in their bounding set (kube-system's device plugin, which the team guardrails keep teams
#   from being); accept-nvidia-visible-devices-as-volume-mounts = true: the toolkit reads the devices from the
#   mounts under /var/run/nvidia-container-devices, which the device plugin's volume-mounts strategy adds for
#   the devices it allocated (the kit sets that strategy in the chart whenever isolation is on: without it a
#   GPU pod would get no GPU, and without this step the plugin's mounts would not be read).
# Nodes without the toolkit (CPU, Trainium) have neither the file nor its binaries: nothing to do. A toolkit
# binary without the file is not such a node: the toolkit then runs on its built-in defaults, which accept
# NVIDIA_VISIBLE_DEVICES from unprivileged containers, while admission no longer checks it (gpu-visibility is
# dropped under gpu_device_isolation). See below for what the step does then.
# No restart: nvidia-container-runtime and its hook are started for each container and read the file each
# time, so the next container already gets the new behaviour; a containerd restart would not change the
# containers already running either. A second run finds the keys set and changes nothing.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$SCRIPT_DIR/../lib/common.sh"

TOOLKIT_CONFIG="$ROOT/etc/nvidia-container-runtime/config.toml"

toolkit_binary() {
  local name
  for name in nvidia-ctk nvidia-container-runtime nvidia-container-runtime-hook; do
    if command -v "$name" > /dev/null; then
      printf '%s\n' "$name"
      return 0
    fi
  done
  return 1
}

if [[ ! -f "$TOOLKIT_CONFIG" ]]; then
  if ! binary="$(toolkit_binary)"; then
    log "no ${TOOLKIT_CONFIG#"$ROOT"} and no nvidia-ctk or nvidia-container-runtime: no NVIDIA container toolkit on this node, nothing to isolate"
    exit 0
  fi
  # Fail closed. Write the file the toolkit itself would (`nvidia-ctk config default`: the defaults it already
  # runs on, for this platform), then set the keys below as on any other GPU node: the node keeps working and
  # gets isolated, whereas a die would keep a node whose only fault is a missing file out of the cluster. Only
  # when that cannot be done (no nvidia-ctk, or one too old for `config default`) and isolation was asked for
  # does the step fail, naming the opt-out; without isolation the toolkit's defaults are what was asked for.
  log "$binary is here but ${TOOLKIT_CONFIG#"$ROOT"} is not: writing the NVIDIA container toolkit's default config"
  mkdir -p "$(dirname "$TOOLKIT_CONFIG")"
  if command -v nvidia-ctk > /dev/null \
      && nvidia-ctk config default --output="$TOOLKIT_CONFIG.hyperpod-kit.new" > /dev/null \
      && [[ -s "$TOOLKIT_CONFIG.hyperpod-kit.new" ]]; then
    chmod 0644 "$TOOLKIT_CONFIG.hyperpod-kit.new"
    mv "$TOOLKIT_CONFIG.hyperpod-kit.new" "$TOOLKIT_CONFIG"
  else
    rm -f "$TOOLKIT_CONFIG.hyperpod-kit.new"
    if [[ "${GPU_DEVICE_ISOLATION:-false}" == "true" ]]; then
      die "$binary is here but ${TOOLKIT_CONFIG#"$ROOT"} is not, and nvidia-ctk could not write the default one: the toolkit's defaults would hand every GPU to any container naming them in NVIDIA_VISIBLE_DEVICES. Install the file (nvidia-ctk config default --output=${TOOLKIT_CONFIG#"$ROOT"}), or set hyperpod.lifecycle.gpu_device_isolation: false to run such nodes without GPU isolation"
    fi
    log "WARNING: $binary is here but ${TOOLKIT_CONFIG#"$ROOT"} is not, and nvidia-ctk could not write it: the toolkit runs on its defaults (IMEX channels named in an image's env reach containers with GPUs)"
    exit 0
  fi
fi

# The IMEX key is v1.18.0's (the toolkit's CHANGELOG): an older toolkit ignores it and still honours the variable.
version="$( (nvidia-ctk --version 2>/dev/null || true) | sed -n 's/.*version \([0-9][0-9.]*\).*/\1/p' | head -n 1)"
if [[ -z "$version" ]]; then
  log "WARNING: the NVIDIA container toolkit's version is unknown (no nvidia-ctk): IMEX channels named in an image's env are refused only from v1.18.0"
elif [[ "$(printf '%s\n' "$version" 1.18.0 | sort -V | head -n 1)" != 1.18.0 ]]; then
  log "WARNING: NVIDIA container toolkit v$version predates v1.18.0: it ignores ignore-imex-channel-requests, so IMEX channels named in an image's env still reach containers with GPUs on this node"
fi
updated="$(toml_with_table_key "$TOOLKIT_CONFIG" features ignore-imex-channel-requests true)"
if [[ "${GPU_DEVICE_ISOLATION:-false}" == "true" ]]; then
  updated="$(toml_with_top_level_key - accept-nvidia-visible-devices-as-volume-mounts true <<< "$updated")"
  updated="$(toml_with_top_level_key - accept-nvidia-visible-devices-envvar-when-unprivileged false <<< "$updated")"
  what="IMEX channels from CDI only, GPUs from the device plugin's mounts only"
else
  log "GPU_DEVICE_ISOLATION=$GPU_DEVICE_ISOLATION: GPUs as the node image's toolkit hands them out"
  what="IMEX channels from CDI only"
fi
[[ -n "$updated" ]] || die "could not set the device keys in ${TOOLKIT_CONFIG#"$ROOT"}"
if [[ "$updated" == "$(cat "$TOOLKIT_CONFIG")" ]]; then
  log "the NVIDIA container toolkit already has these settings: $what"
  exit 0
fi
log "NVIDIA container toolkit: $what (${TOOLKIT_CONFIG#"$ROOT"})"
# Written beside and moved over it: a container started meanwhile reads the old file or the new, never half.
printf '%s\n' "$updated" > "$TOOLKIT_CONFIG.hyperpod-kit.new"
chmod --reference="$TOOLKIT_CONFIG" "$TOOLKIT_CONFIG.hyperpod-kit.new"
mv "$TOOLKIT_CONFIG.hyperpod-kit.new" "$TOOLKIT_CONFIG"
