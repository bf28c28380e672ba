#!/usr/bin/env bash
# Sets seccompDefault: true in the kubelet's config, so every container without a seccompProfile of its own runs
# under the container runtime's default profile (RuntimeDefault) instead of Unconfined
# (KubeletConfiguration.seccompDefault, k8s.io/kubelet config/v1beta1). Installed on the node and run by
# kubelet.service before each start (a systemd drop-in the seccomp_default step writes, with no leading "-": a
# failure here keeps the kubelet down, so no node runs pods Unconfined by accident). nodeadm writes the config
# again at every boot on Amazon Linux 2023, so an edit made once would not last.
# The files (awslabs/amazon-eks-ami): the one the kubelet is started with - `--config` of the running kubelet, of
# the arguments systemd hands this helper before a start (NODEADM_KUBELET_ARGS from nodeadm's
# /etc/eks/kubelet/environment on AL2023, KUBELET_ARGS and KUBELET_EXTRA_ARGS on AL2), or of that environment
# file - and the images' own: /etc/kubernetes/kubelet/config.json (nodeadm, AL2023) and
# /etc/kubernetes/kubelet/kubelet-config.json (bootstrap.sh's unit, AL2); a file already set is left as it is. A
# config named but missing, or not JSON, is an error. Where nodeadm's drop-in folder config.json.d exists (it
# passes --config-dir when its NodeConfig sets kubelet settings, which then override the file), a drop-in of the
# kit's comes last in it.
# Prints "seccompDefault set in <file>" for each file it changed. Exit 3: no config file found at all.
set -euo pipefail

ROOT="${PROVISION_ROOT:-}"
KUBELET_DIR="$ROOT/etc/kubernetes/kubelet"

OPT_OUT="set hyperpod.lifecycle.seccomp_default: false to run nodes without it"
ENVIRONMENT_FILE="$ROOT/etc/eks/kubelet/environment"

running_config() {
  local pid
  pid="$(pgrep -o -x kubelet 2>/dev/null)" || return 0
  [[ -r "$ROOT/proc/$pid/cmdline" ]] || return 0
  tr '\0' '\n' < "$ROOT/proc/$pid/cmdline" | sed -n -e 's/^--config=//p' -e '/^--config$/{n;p;}' | tail -n 1
}

# The --config the kubelet gets at its next start: the last one of its start arguments (a later flag wins).
start_config() {
  local args="${NODEADM_KUBELET_ARGS:-} ${KUBELET_ARGS:-} ${KUBELET_EXTRA_ARGS:-}"
  if [[ -f "$ENVIRONMENT_FILE" ]]; then
    args="$(sed -n 's/^NODEADM_KUBELET_ARGS=//p' "$ENVIRONMENT_FILE") $args"
  fi
  tr ' ' '\n' <<< "$args" | sed -n -e 's/^--config=//p' -e '/^--config$/{n;p;}' | tail -n 1
}

set_in() {
  python3 - "$1" <<'PY'
import json
import os
import sys

path = sys.argv[1]
try:
    with open(path, encoding="utf-8-sig") as handle:
        config = json.load(handle)
except (OSError, ValueError) as error:
    sys.exit(f"cannot read the kubelet config {path} as JSON: {error}")
if not isinstance(config, dict):
    sys.exit(f"the kubelet config {path} is not a JSON object")
if config.get("seccompDefault") is True:
    sys.exit(0)
config["seccompDefault"] = True
# Written beside and moved over it: the kubelet reads the old file or the new, never half.
new = path + ".hyperpod-kit.new"
with open(new, "w", encoding="utf-8") as handle:
    json.dump(config, handle, indent=4)
    handle.write("\n")
os.chmod(new, os.stat(path).st_mode & 0o7777)
os.replace(new, path)
print(f"seccompDefault set in {path}")
PY
}

files=()
# Assigned first: a failure inside $(...) ends the helper only through an assignment's status.
running="$(running_config)"
starting="$(start_config)"
for named in "$running" "$starting"; do
  [[ -n "$named" ]] || continue
  if [[ ! -f "$ROOT$named" ]]; then
    echo "the kubelet is started with --config $named, which does not exist: seccompDefault cannot be set ($OPT_OUT)" >&2
    exit 3
  fi
  [[ " ${files[*]} " == *" $ROOT$named "* ]] || files+=("$ROOT$named")
done
for file in "$KUBELET_DIR/config.json" "$KUBELET_DIR/kubelet-config.json"; do
  [[ " ${files[*]} " == *" $file "* ]] || files+=("$file")
done
found=false
for file in "${files[@]}"; do
  [[ -f "$file" ]] || continue
  found=true
  set_in "$file"
done
if [[ -d "$KUBELET_DIR/config.json.d" ]]; then
  found=true
  drop_in="$KUBELET_DIR/config.json.d/99-hyperpod-kit-seccomp-default.conf"
  content='{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", "seccompDefault": true}'
  if [[ ! -f "$drop_in" || "$(cat "$drop_in")" != "$content" ]]; then
    printf '%s\n' "$content" > "$drop_in"
    echo "seccompDefault set in $drop_in"
  fi
fi
if [[ "$found" != true ]]; then
  echo "no kubelet config file found (${files[*]#"$ROOT"}): seccompDefault cannot be set ($OPT_OUT)" >&2
  exit 3
fi
