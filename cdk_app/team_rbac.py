"""Kubernetes RBAC of one team: a Role in the team's namespace and a RoleBinding to the Kubernetes group
its EKS access entry maps the team's IAM role to. Submit and manage Jobs and PyTorchJobs, read pods,
their logs and events, read Kueue workloads and local queues - in hyperpod-ns-<team> only."""

from __future__ import annotations

from typing import Any

JOB_VERBS = ["get", "list", "watch", "create", "update", "patch", "delete"]
READ_VERBS = ["get", "list", "watch"]


def team_namespace(team: str) -> str:
    return f"hyperpod-ns-{team}"


def team_group(team: str) -> str:
    return f"hyperpod-team-{team}"


def team_manifests(team: str) -> list[dict[str, Any]]:
    namespace, name = team_namespace(team), f"hyperpod-team-{team}"
    labels = {"app.kubernetes.io/managed-by": "hyperpod-kit", "hyperpod-kit/team": team}
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "rules": [
            {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": JOB_VERBS},
            {"apiGroups": ["kubeflow.org"], "resources": ["pytorchjobs"], "verbs": JOB_VERBS},
            {"apiGroups": [""], "resources": ["pods", "pods/log", "events"], "verbs": READ_VERBS},
            {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads", "localqueues"], "verbs": READ_VERBS},
        ],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": team_group(team)}],
    }
    return [role, binding]
