#!/usr/bin/env bash
# Every pod runs under the container runtime's default seccomp profile unless it names another: the kubelet's
# seccompDefault. Without it a container with no seccompProfile runs Unconfined - every syscall open to a root
# container, so one kernel bug gives the node (and the operators' tokens on it). Admission cannot set a default
# without rewriting every team's manifest; the kubelet owns it. The runtime's default profile blocks what
# containers rarely need (kexec, module loading, new namespaces without privilege ...): training with NCCL, EFA
# and CUDA runs under it.
# How: lib/kubelet_seccomp_default.sh, installed on the node, sets the key in the kubelet's config file, now and
# before every kubelet start (a kubelet.service drop-in without the leading "-" of ExecStartPre, as the IMDS
# step's: a kubelet whose config cannot get the key does not start, so no node runs pods Unconfined unnoticed).
# Then the kubelet is restarted if it runs, so pods started from now on get the default. Unverified on HyperPod
# nodes: how their kubelet is configured was not observable here (no AWS account); the helper knows nodeadm's
# (AL2023) and bootstrap.sh's (AL2) files and the --config the kubelet is started with, and fails when it finds
# none of them.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$SCRIPT_DIR/../lib/common.sh"

HELPER="/usr/local/libexec/hyperpod-kit/kubelet-seccomp-default.sh"
DROP_IN="/etc/systemd/system/kubelet.service.d/90-hyperpod-kit-seccomp-default.conf"

if [[ "${SECCOMP_DEFAULT:-true}" != "true" ]]; then
  log "SECCOMP_DEFAULT=$SECCOMP_DEFAULT: pods without a seccompProfile run as the node image's kubelet has them"
  exit 0
fi

install_kubelet_pre_start "$SCRIPT_DIR/../lib/kubelet_seccomp_default.sh" "$HELPER" "$DROP_IN" "$HELPER" \
  seccomp_default.sh
changed="$PRE_START_CHANGED"
run_pre_start_helper "$HELPER"
if [[ $HELPER_STATUS -eq 3 ]]; then
  # A kubelet that already runs reads its config from a file this step cannot find: it would stay Unconfined.
  if systemctl is-active --quiet kubelet; then
    die "the kubelet runs, but with no config file the kit knows: seccompDefault cannot be set (set hyperpod.lifecycle.seccomp_default: false to create nodes without it)"
  fi
  log "WARNING: no kubelet config file yet: seccompDefault is set before the kubelet's first start, and the kubelet does not start if it finds none then (set hyperpod.lifecycle.seccomp_default: false to create nodes without it)"
elif [[ $HELPER_STATUS -ne 0 ]]; then
  die "could not set seccompDefault in the kubelet's config (above)"
fi
[[ "$HELPER_OUTPUT" != *"seccompDefault set in"* ]] || changed=true
if [[ "$changed" == true ]]; then
  log "kubelet: seccompDefault before every start ($DROP_IN)"
  systemctl daemon-reload
  if systemctl is-active --quiet kubelet; then
    systemctl restart kubelet
  fi
else
  log "the kubelet already starts with seccompDefault"
fi
