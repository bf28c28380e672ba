"""Kubernetes RBAC of one team, bound to the Kubernetes group its EKS access entry maps the team's IAM
role to:

- a Role in hyperpod-ns-<team>: submit and manage the kinds its workloads are made of (batch Jobs,
  PyTorchJobs - elastic ones too -, MPIJobs, and the Services, ConfigMaps and Deployments a rendezvous
  such as etcd needs), read pods, their logs and events, exec into and port-forward to its own pods,
  read its Kueue workloads and local queue; add NetworkPolicies of its own (the kit's own hyperpod-kit-* one
  it may not change or delete: guardrail hyperpod-kit-network-policies) and read its ResourceQuota;
- a ClusterRole and ClusterRoleBinding that read the cluster-scoped objects a team member's tools look
  at: its own namespace and its own ClusterQueue (by name), and the cluster's WorkloadPriorityClasses.

Nothing else: no Secrets, no bare Pods (a Pod is not queued, so it would bypass the team's quota), no
ServiceAccounts or RBAC, nothing in another namespace and no cluster-scoped write. The admission
guardrails (cdk_app/kubernetes/guardrails/) check every kind this Role lets a team create that holds pods.
"""

from __future__ import annotations

from typing import Any

from cdk_app.config.names import team_cluster_queue, team_namespace

RBAC_API = "rbac.authorization.k8s.io"
JOB_VERBS = ["get", "list", "watch", "create", "update", "patch", "delete"]
READ_VERBS = ["get", "list", "watch"]
KUEUE = "kueue.x-k8s.io"


def team_group(team: str) -> str:
    return f"hyperpod-team-{team}"


def team_cluster_role(team: str) -> str:
    """Name of the team's ClusterRole and ClusterRoleBinding (the installer accepts only this name)."""
    return f"hyperpod-kit-team-{team}-read"


def team_role_rules() -> list[dict[str, Any]]:
    return [
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": JOB_VERBS},
        {"apiGroups": ["kubeflow.org"], "resources": ["pytorchjobs", "mpijobs"], "verbs": JOB_VERBS},
        # Rendezvous and helpers of a job: the etcd Service and Deployment of an elastic PyTorchJob,
        # configuration files. Deployments may not ask for accelerators (guardrail unqueued-devices).
        {"apiGroups": [""], "resources": ["services", "configmaps"], "verbs": JOB_VERBS},
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": JOB_VERBS},
        {"apiGroups": [""], "resources": ["pods", "pods/log", "events"], "verbs": READ_VERBS},
        # Debugging a hung or slow job (py-spy, nvidia-smi, TensorBoard) needs a shell in its pods and a
        # port to them. It gives nothing a Job the team may create does not already have: the same image,
        # service account and volumes. attach and ephemeral containers stay out.
        {"apiGroups": [""], "resources": ["pods/exec", "pods/portforward"], "verbs": ["create"]},
        {"apiGroups": [KUEUE], "resources": ["workloads", "localqueues"], "verbs": READ_VERBS},
        # A team may open its namespace to more ingress (its policies only add allowances); RBAC cannot say
        # "but not the kit's", so guardrails/network_policies.py refuses changes to hyperpod-kit-* and egress rules.
        {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": JOB_VERBS},
        # `kubectl describe quota`: what the kit's ResourceQuota allows and uses; no write.
        {"apiGroups": [""], "resources": ["resourcequotas"], "verbs": READ_VERBS},
    ]


def team_cluster_rules(team: str) -> list[dict[str, Any]]:
    return [
        # `hyp` and `kubectl get namespace` read the team's namespace (its task-governance labels).
        {"apiGroups": [""], "resources": ["namespaces"], "resourceNames": [team_namespace(team)],
         "verbs": READ_VERBS},
        # The team's quota and what it uses now: `kubectl get clusterqueue`, `hyp list-cluster`.
        {"apiGroups": [KUEUE], "resources": ["clusterqueues"], "resourceNames": [team_cluster_queue(team)],
         "verbs": READ_VERBS},
        # The priority classes jobs may name; `hyp` lists them to check --priority. Cluster-wide names and
        # weights, the same for every team: nothing of another team's.
        {"apiGroups": [KUEUE], "resources": ["workloadpriorityclasses"], "verbs": READ_VERBS},
    ]


def _group(team: str) -> list[dict[str, str]]:
    return [{"apiGroup": RBAC_API, "kind": "Group", "name": team_group(team)}]


def team_manifests(team: str) -> list[dict[str, Any]]:
    namespace, name, cluster_name = team_namespace(team), f"hyperpod-team-{team}", team_cluster_role(team)
    labels = {"app.kubernetes.io/managed-by": "hyperpod-kit", "hyperpod-kit/team": team}
    role = {
        "apiVersion": f"{RBAC_API}/v1", "kind": "Role",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "rules": team_role_rules(),
    }
    binding = {
        "apiVersion": f"{RBAC_API}/v1", "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "roleRef": {"apiGroup": RBAC_API, "kind": "Role", "name": name},
        "subjects": _group(team),
    }
    cluster_role = {
        "apiVersion": f"{RBAC_API}/v1", "kind": "ClusterRole",
        "metadata": {"name": cluster_name, "labels": labels},
        "rules": team_cluster_rules(team),
    }
    cluster_binding = {
        "apiVersion": f"{RBAC_API}/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": cluster_name, "labels": labels},
        "roleRef": {"apiGroup": RBAC_API, "kind": "ClusterRole", "name": cluster_name},
        "subjects": _group(team),
    }
    return [role, binding, cluster_role, cluster_binding]
