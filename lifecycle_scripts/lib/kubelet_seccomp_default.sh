#!/usr/bin/env bash
# Sets seccompDefault: true in the kubelet's config file, so every container without a seccompProfile of its
# own runs under the container runtime's default profile (RuntimeDefault) instead of Unconfined
# (KubeletConfiguration.seccompDefault, k8s.io/kubelet config/v1beta1). Installed on the node and run by
# kubelet.service before each start (a systemd drop-in the seccomp_default step writes): nodeadm writes the
# config again at every boot on Amazon Linux 2023, so an edit made once would not last. The files it knows:
# /etc/kubernetes/kubelet/config.json (nodeadm, AL2023) and /etc/kubernetes/kubelet/kubelet-config.json
# (bootstrap.sh, AL2). A file already set is left as it is; a missing one is skipped.
set -euo pipefail

ROOT="${PROVISION_ROOT:-}"
found=false
for file in "$ROOT/etc/kubernetes/kubelet/config.json" "$ROOT/etc/kubernetes/kubelet/kubelet-config.json"; do
  [[ -f "$file" ]] || continue
  found=true
  python3 - "$file" <<'PY'
import json
import os
import sys

path = sys.argv[1]
try:
    with open(path, encoding="utf-8") as handle:
        config = json.load(handle)
except (OSError, ValueError) as error:
    sys.exit(f"cannot read the kubelet config {path}: {error}")
if not isinstance(config, dict):
    sys.exit(f"the kubelet config {path} is not a JSON object")
if config.get("seccompDefault") is True:
    print(f"seccompDefault already set in {path}")
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
done
[[ "$found" == true ]] || echo "no kubelet config file yet: seccompDefault is set before the kubelet's next start"
