#!/usr/bin/env bash
# Sets seccompDefault: true in the kubelet's config, so every container without a seccompProfile of its own runs
# under the container runtime's default profile (RuntimeDefault) instead of Unconfined
# (KubeletConfiguration.seccompDefault, k8s.io/kubelet config/v1beta1). Installed on the node and run by
# kubelet.service before each start (a systemd drop-in the seccomp_default step writes): nodeadm writes the
# config again at every boot on Amazon Linux 2023, so an edit made once would not last.
# The files: the one the running kubelet names with --config, /etc/kubernetes/kubelet/config.json (nodeadm,
# AL2023) and /etc/kubernetes/kubelet/kubelet-config.json (bootstrap.sh, AL2); a file already set is left as it
# is. Where nodeadm's drop-in folder config.json.d exists (it passes --config-dir when its NodeConfig sets kubelet
# settings, which then override the file), a drop-in of the kit's comes last in it.
# Prints "seccompDefault set in <file>" for each file it changed. Exit 3: no config file found at all.
set -euo pipefail

ROOT="${PROVISION_ROOT:-}"
KUBELET_DIR="$ROOT/etc/kubernetes/kubelet"

running_config() {
  local pid
  pid="$(pgrep -o -x kubelet 2>/dev/null)" || return 0
  [[ -r "$ROOT/proc/$pid/cmdline" ]] || return 0
  tr '\0' '\n' < "$ROOT/proc/$pid/cmdline" | sed -n -e 's/^--config=//p' -e '/^--config$/{n;p;}' | head -n 1
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
named="$(running_config)"
[[ -z "$named" ]] || files+=("$ROOT$named")
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
  echo "no kubelet config file found (${files[*]#"$ROOT"})"
  exit 3
fi
