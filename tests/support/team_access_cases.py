"""What a team member of team john (config/dev.yaml) must be able to do, and what not, as RBAC requests."""

from __future__ import annotations

from cdk_app.kubernetes.team_rbac import team_group
from support.rbac_authorizer import Request

JOHN = {team_group("john")}


NS, OTHER = "hyperpod-ns-john", "hyperpod-ns-smith"


WRITE = ("create", "get", "list", "watch", "update", "patch", "delete")


NEEDED = [  # (verbs, group, resource, namespace, name): what a team member's workloads and tools do
    (WRITE, "batch", "jobs", NS, "j"),
    (WRITE, "kubeflow.org", "pytorchjobs", NS, "fsdp"),
    (WRITE, "kubeflow.org", "mpijobs", NS, "m"),
    (WRITE, "", "services", NS, "fsdp-etcd"),
    (WRITE, "", "configmaps", NS, "c"),
    (WRITE, "apps", "deployments", NS, "fsdp-etcd"),
    (("get", "list", "watch"), "", "pods", NS, "p"),
    (("get",), "", "pods/log", NS, "p"),
    (("list",), "", "events", NS, ""),
    (("create",), "", "pods/exec", NS, "p"),
    (("create",), "", "pods/portforward", NS, "p"),
    (("get", "list", "watch"), "kueue.x-k8s.io", "workloads", NS, "w"),
    (("get", "list", "watch"), "kueue.x-k8s.io", "localqueues", NS, "hyperpod-ns-john-localqueue"),
    (("get", "watch"), "kueue.x-k8s.io", "clusterqueues", "", "hyperpod-ns-john-clusterqueue"),
    (("get", "list"), "kueue.x-k8s.io", "workloadpriorityclasses", "", ""),
    # its own ingress policies (the guardrail hyperpod-kit-network-policies keeps the kit's and refuses egress)
    (WRITE, "networking.k8s.io", "networkpolicies", NS, "allow-tensorboard"),
    (("get", "list", "watch"), "", "resourcequotas", NS, "hyperpod-kit-unqueued-objects"),
]


FORBIDDEN = [  # what a team member may not do
    Request("get", "", "secrets", NS, "s"),
    Request("list", "", "secrets", NS),
    Request("create", "", "pods", NS),  # a bare pod is not queued: it would bypass the quota
    Request("create", "", "pods/attach", NS, "p"),
    Request("patch", "", "pods/ephemeralcontainers", NS, "p"),
    Request("create", "", "serviceaccounts/token", NS, "default"),
    Request("create", "rbac.authorization.k8s.io", "rolebindings", NS),
    Request("create", "apps", "statefulsets", NS),
    Request("patch", "kueue.x-k8s.io", "workloads", NS, "w"),
    Request("create", "kueue.x-k8s.io", "localqueues", NS),
    Request("create", "batch", "jobs", OTHER),
    Request("get", "", "pods", OTHER, "p"),
    Request("create", "", "pods/exec", OTHER, "p"),
    Request("get", "kueue.x-k8s.io", "clusterqueues", "", "hyperpod-ns-smith-clusterqueue"),
    Request("list", "kueue.x-k8s.io", "clusterqueues", ""),
    Request("update", "kueue.x-k8s.io", "clusterqueues", "", "hyperpod-ns-john-clusterqueue"),
    Request("create", "kueue.x-k8s.io", "workloadpriorityclasses", ""),
    Request("list", "kueue.x-k8s.io", "resourceflavors", ""),
    Request("list", "", "nodes", ""),
    Request("create", "", "namespaces", ""),
    Request.of("delete", "", "namespaces", name=NS),
    Request("create", "rbac.authorization.k8s.io", "clusterrolebindings", ""),
    Request("create", "admissionregistration.k8s.io", "validatingadmissionpolicybindings", ""),
    Request("update", "", "resourcequotas", NS, "hyperpod-kit-unqueued-objects"),
    Request("delete", "", "resourcequotas", NS, "hyperpod-kit-unqueued-objects"),
    Request("create", "", "resourcequotas", NS),
    Request("create", "networking.k8s.io", "networkpolicies", OTHER),
    Request("delete", "networking.k8s.io", "networkpolicies", OTHER, "hyperpod-kit-team-isolation"),
]


# (rules of a Role in namespace "a" bound to group "g", request, allowed): cases the Kubernetes RBAC
# documentation states, for the authorizer of the fast tier and the real API server alike.
RULE_CASES = [
    ([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}], Request("get", "", "pods", "a", "p"), True),
    ([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}], Request("get", "", "pods/log", "a", "p"), False),
    ([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}], Request("list", "", "pods", "a"), False),
    ([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}], Request("get", "", "pods", "b", "p"), False),
    ([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}], Request("get", "apps", "pods", "a", "p"), False),
    ([{"apiGroups": ["apps"], "resources": ["*/scale"], "verbs": ["update"]}],
     Request("update", "apps", "deployments/scale", "a", "d"), True),
    ([{"apiGroups": ["apps"], "resources": ["*/scale"], "verbs": ["update"]}],
     Request("update", "apps", "deployments", "a", "d"), False),
    ([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}], Request("delete", "x.io", "things", "a", "t"), True),
    ([{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["c"], "verbs": ["get", "list"]}],
     Request("get", "", "configmaps", "a", "c"), True),
    ([{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["c"], "verbs": ["get", "list"]}],
     Request("get", "", "configmaps", "a", "d"), False),
    # A list names no object unless it selects metadata.name: resourceNames refuses it.
    ([{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["c"], "verbs": ["get", "list"]}],
     Request("list", "", "configmaps", "a"), False),
    # A Role of namespace a grants reading namespace a itself (the request is "in" a), not namespace b.
    ([{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}], Request.of("get", "", "namespaces", name="a"), True),
    ([{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}], Request.of("get", "", "namespaces", name="b"), False),
    # Nor anything cluster-scoped: a RoleBinding applies in its namespace only.
    ([{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}], Request("list", "", "nodes"), False),
]
