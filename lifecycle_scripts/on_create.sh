#!/usr/bin/env bash
# HyperPod runs this on every node it creates or replaces (EKS orchestration; automatic node recovery
# included). The node joins only if it exits 0. Everything it and its steps print goes to stdout
# (HyperPod ships that to CloudWatch) and to /var/log/provision/provisioning.log on the node.
# Running it again on the same node changes nothing and succeeds.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"

main() {
  log "on_create.sh: start on $(hostname)"
  load_settings "$SCRIPT_DIR/provisioning.env"
  # Before anything else: a pod the kubelet may already run has no instance metadata from here on.
  run_step "pods' instance metadata dropped" "$SCRIPT_DIR/steps/pod_imds_block.sh"
  # First: the toolkit reads its settings at each container start, and data_roots may restart containerd.
  run_step "GPU device isolation" "$SCRIPT_DIR/steps/gpu_device_isolation.sh"
  run_step "data roots off the root volume" "$SCRIPT_DIR/steps/data_roots.sh"
  run_step "extra packages" "$SCRIPT_DIR/steps/extra_packages.sh"
  # Last: it restarts the kubelet (data_roots may have stopped and started it already).
  run_step "seccomp RuntimeDefault for every pod" "$SCRIPT_DIR/steps/seccomp_default.sh"
  log "on_create.sh: done"
}

mkdir -p "$LOG_DIR"
# One tee for the whole run, and the script waits for it: no line is lost when a step fails.
main "$@" 2>&1 | tee -a "$LOG_FILE"
