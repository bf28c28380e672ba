#!/usr/bin/env bash
# Hand NVIDIA GPUs to containers only through the device plugin, so a container gets the GPUs its
# nvidia.com/gpu request (and so its team's quota) gave it, and no others. By default the NVIDIA container
# toolkit also hands GPUs to any container whose environment names them: NVIDIA_VISIBLE_DEVICES=all from
# the image (every nvidia/cuda image sets it), or none at all in a "legacy" image that sets CUDA_VERSION.
# Admission sees only the pod spec, not the image's environment, so the node has to refuse it:
# - accept-nvidia-visible-devices-envvar-when-unprivileged = false: the variable counts only in privileged
#   containers (kube-system's device plugin, which the team guardrails keep teams from being);
# - accept-nvidia-visible-devices-as-volume-mounts = true: the toolkit reads the devices from the mounts
#   under /var/run/nvidia-container-devices, which the device plugin's volume-mounts strategy adds for the
#   devices it allocated (the kit sets that strategy in the chart whenever this step is on: without it a
#   GPU pod would get no GPU, and without this step the plugin's mounts would not be read).
# Both are top-level keys of /etc/nvidia-container-runtime/config.toml, the same file on Amazon Linux 2 and
# 2023. Nodes without the toolkit (CPU, Trainium) have no such file: nothing to do.
# No restart: nvidia-container-runtime and its hook are started for each container and read the file each
# time, so the next container already gets the new behaviour; a containerd restart would not change the
# containers already running either. A second run finds both keys set and changes nothing.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$SCRIPT_DIR/../lib/common.sh"

TOOLKIT_CONFIG="$ROOT/etc/nvidia-container-runtime/config.toml"

if [[ "${GPU_DEVICE_ISOLATION:-true}" != "true" ]]; then
  log "GPU_DEVICE_ISOLATION=$GPU_DEVICE_ISOLATION: the NVIDIA container toolkit keeps the node image's settings"
  exit 0
fi
if [[ ! -f "$TOOLKIT_CONFIG" ]]; then
  log "no ${TOOLKIT_CONFIG#"$ROOT"}: no NVIDIA container toolkit on this node, nothing to isolate"
  exit 0
fi

updated="$(toml_with_top_level_key "$TOOLKIT_CONFIG" accept-nvidia-visible-devices-as-volume-mounts true)"
updated="$(toml_with_top_level_key - accept-nvidia-visible-devices-envvar-when-unprivileged false <<< "$updated")"
[[ -n "$updated" ]] || die "could not set the device keys in ${TOOLKIT_CONFIG#"$ROOT"}"
if [[ "$updated" == "$(cat "$TOOLKIT_CONFIG")" ]]; then
  log "the NVIDIA container toolkit already takes GPUs from the device plugin's mounts only"
  exit 0
fi
log "NVIDIA container toolkit: GPUs from the device plugin's mounts only (${TOOLKIT_CONFIG#"$ROOT"})"
# Written beside and moved over it: a container started meanwhile reads the old file or the new, never half.
printf '%s\n' "$updated" > "$TOOLKIT_CONFIG.hyperpod-kit.new"
chmod --reference="$TOOLKIT_CONFIG" "$TOOLKIT_CONFIG.hyperpod-kit.new"
mv "$TOOLKIT_CONFIG.hyperpod-kit.new" "$TOOLKIT_CONFIG"
