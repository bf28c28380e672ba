#!/usr/bin/env bash
# Pods may not reach EC2 instance metadata: the node role reads every sagemaker-* bucket of the account and pulls
# from any ECR repository, and the team namespaces' NetworkPolicy, which also refuses it, applies only once the
# VPC CNI's agent has set it up for a new pod (seconds, in its standard mode) and covers team namespaces only.
# HyperPod's instance groups take no metadata options (no hop limit of 1 with IMDSv2 only), so the node does it:
# lib/pod_imds_block.sh, installed on the node, drops pods' packets to 169.254.169.254 now and before every
# kubelet start (a kubelet.service drop-in without the leading "-": a kubelet whose rule cannot be set does not
# start, so a node never runs pods without it). No daemon-reload: the rule set now lasts until the next boot,
# when systemd reads the drop-in anyway.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$SCRIPT_DIR/../lib/common.sh"

HELPER="/usr/local/libexec/hyperpod-kit/pod-imds-block.sh"
DROP_IN="/etc/systemd/system/kubelet.service.d/80-hyperpod-kit-pod-imds-block.conf"

if [[ "${BLOCK_POD_IMDS:-true}" != "true" ]]; then
  log "BLOCK_POD_IMDS=$BLOCK_POD_IMDS: pods reach instance metadata unless a NetworkPolicy refuses it"
  exit 0
fi

install_kubelet_pre_start "$SCRIPT_DIR/../lib/pod_imds_block.sh" "$HELPER" "$DROP_IN" "$HELPER" pod_imds_block.sh
if [[ "$PRE_START_CHANGED" == true ]]; then
  log "kubelet: pods' instance metadata dropped before every start ($DROP_IN)"
fi
run_pre_start_helper "$HELPER"
if [[ $HELPER_STATUS -eq 3 ]]; then
  die "this node has no iptables: pods' instance metadata cannot be dropped (set hyperpod.lifecycle.block_pod_imds: false to create nodes without it)"
elif [[ $HELPER_STATUS -ne 0 ]]; then
  die "could not add the iptables rule dropping pods' instance metadata (above)"
fi
[[ "$HELPER_OUTPUT" == *"rule added"* ]] || log "pods' instance metadata is already dropped"
