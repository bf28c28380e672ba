#!/usr/bin/env bash
# Drops what pods send to EC2 instance metadata (169.254.169.254), so a pod cannot read the node role's
# credentials. The rule is the one the EKS user guide gives ("Restricting access to Amazon EC2 instance profile
# credentials": iptables --insert FORWARD 1 --in-interface eni+ --destination 169.254.169.254/32 --jump DROP).
# A pod's packets come in through its veth, which the VPC CNI names eni<hash> on the node, and are routed, so
# they pass the FORWARD chain; the node's own processes and host-network pods (aws-node, kube-proxy, the EKS Pod
# Identity agent, the CloudWatch agent and Fluent Bit) send theirs from the node, through OUTPUT, which keeps
# IMDS for them. Installed on the node and run by kubelet.service before each start (a drop-in the
# pod_imds_block step writes): iptables rules last until the next boot only, and no pod starts before the kubelet.
# Adds the rule only when it is missing. Prints "rule added" when it added it. Exit 3: no iptables on the node.
set -euo pipefail

RULE=(FORWARD --in-interface eni+ --destination 169.254.169.254/32 --jump DROP)

if ! command -v iptables >/dev/null 2>&1; then
  echo "no iptables command on this node" >&2
  exit 3
fi
# -w: wait for the xtables lock that kube-proxy and aws-node hold while they write their own rules.
if iptables -w 5 --check "${RULE[@]}" 2>/dev/null; then
  exit 0
fi
iptables -w 5 --insert "${RULE[0]}" 1 "${RULE[@]:1}"
echo "rule added: iptables --insert FORWARD 1 ${RULE[*]:1}"
