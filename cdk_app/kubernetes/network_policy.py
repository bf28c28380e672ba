"""The NetworkPolicy of a team namespace (hyperpod-kit-team-isolation) and what the VPC CNI does with it.

The object itself is defined once, in the installer's policy (constructs/helm_release_handler/manifest_policy.py,
kit_network_policy), because the installer accepts it only in exactly that form. What it allows: pods of the
namespace reach each other on every port and reach CoreDNS, the API server, AWS endpoints and the internet;
nothing reaches them from another namespace; nothing in them reaches EC2 instance metadata.

Enforcement is the VPC CNI's network policy agent (the vpc-cni add-on's `enableNetworkPolicy`, set in
constructs/hyperpod_eks_cluster.py). Its documented limits (EKS user guide, "Limit pod traffic with Kubernetes
network policies", Considerations):
- only a pod's primary interface (eth0) is filtered: EFA devices are extra interfaces and their OS-bypass RDMA
  traffic is not subject to network policy (NCCL's TCP bootstrap over eth0 is, and stays inside the namespace);
- only pods with metadata.ownerReferences are filtered (a team creates no bare pods: team_rbac.py);
- in the default "standard" enforcing mode a new pod runs without its policies until the agent has applied them
  (seconds); "strict" mode would deny every pod of every namespace without a policy (CoreDNS, the operators).
- hostNetwork pods are not filtered (the pod-security guardrail refuses hostNetwork to teams).
Rendezvous (torchrun's c10d store, etcd) is reachable by the team's own pods, not only the job's: a member of the
team may exec into any pod of the namespace anyway (team_rbac.py), so a per-job policy would not hold against the
team; and NetworkPolicies only add allowances, so one could not narrow this one.
"""

from __future__ import annotations

from typing import Any

from cdk_app.config.names import team_namespace
from hyperpod_constructs.helm_release_handler.manifest_policy import kit_network_policy


def team_network_policy(team: str) -> dict[str, Any]:
    return kit_network_policy(team_namespace(team))
