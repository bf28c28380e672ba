#!/usr/bin/env bash
# Every pod runs under the container runtime's default seccomp profile unless it names another: the kubelet's
# seccompDefault. Without it a container with no seccompProfile runs Unconfined - every syscall open to a root
# container, so one kernel bug gives the node (and the operators' tokens on it). Admission cannot set a default
# without rewriting every team's manifest; the kubelet owns it. The runtime's default profile blocks what
# containers rarely need (kexec, module loading, new namespaces without privilege ...): training with NCCL, EFA
# and CUDA runs under it.
# How: lib/kubelet_seccomp_default.sh, installed on the node, sets the key in the kubelet's config file, now and
# before every kubelet start (a kubelet.service drop-in; the leading "-" of ExecStartPre lets the kubelet start
# with the config as it is should the helper fail then - this step itself fails loudly). Then the kubelet is
# restarted if it runs, so pods started from now on get the default. Unverified on HyperPod nodes: how their
# kubelet is configured was not observable here (no AWS account); the helper knows nodeadm's (AL2023) and
# bootstrap.sh's (AL2) files and says so when it finds neither.
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

changed=false
[[ -z "$(install_kubelet_pre_start "$SCRIPT_DIR/../lib/kubelet_seccomp_default.sh" "$HELPER" "$DROP_IN" \
  "-$HELPER" seccomp_default.sh)" ]] || changed=true
set +e
output="$(PROVISION_ROOT="$ROOT" bash "$ROOT$HELPER" 2>&1)"
status=$?
set -e
[[ -z "$output" ]] || log "$output"
if [[ $status -eq 3 ]]; then
  # A kubelet that already runs reads its config from a file this step cannot find: it would stay Unconfined.
  if systemctl is-active --quiet kubelet; then
    die "the kubelet runs, but with no config file the kit knows: seccompDefault cannot be set (set hyperpod.lifecycle.seccomp_default: false to create nodes without it)"
  fi
  log "no kubelet config file yet: seccompDefault is set before the kubelet's first start"
elif [[ $status -ne 0 ]]; then
  die "could not set seccompDefault in the kubelet's config (above)"
fi
[[ "$output" != *"seccompDefault set in"* ]] || changed=true
if [[ "$changed" == true ]]; then
  log "kubelet: seccompDefault before every start ($DROP_IN)"
  systemctl daemon-reload
  if systemctl is-active --quiet kubelet; then
    systemctl restart kubelet
  fi
else
  log "the kubelet already starts with seccompDefault"
fi
