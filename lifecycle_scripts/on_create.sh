#!/usr/bin/env bash
# HyperPod runs this on every node it creates or replaces (EKS orchestration). It must finish
# cleanly for the node to join; everything it prints also goes to the provisioning log.
set -euo pipefail

LOG_DIR="${PROVISION_LOG_DIR:-/var/log/provision}"
mkdir -p "$LOG_DIR"
exec > >(tee -a "$LOG_DIR/provisioning.log") 2>&1

echo "[$(date -u +%FT%TZ)] on_create.sh: start on $(hostname)"
echo "[$(date -u +%FT%TZ)] on_create.sh: done"
