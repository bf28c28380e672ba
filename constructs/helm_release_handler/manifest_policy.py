"""Which Kubernetes objects the kit's cluster-admin installer applies (and deletes): only what the kit
writes - a Role or RoleBinding of a team in hyperpod-ns-<team>, bound to that team's group only and
granting no wildcard or escalating right; the team's read-only ClusterRole and ClusterRoleBinding named
hyperpod-kit-team-<team>-read (get/list/watch of its own namespace and ClusterQueue by name, and of the
cluster's WorkloadPriorityClasses), bound to that team's group only; admission guardrails
(ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding) named hyperpod-kit-*; and a team namespace's
NetworkPolicy and ResourceQuota exactly as the kit writes them (kit_network_policy, kit_resource_quota below: the
one definition, which cdk_app/kubernetes/ wraps); a team's FSx for Lustre volume exactly as the kit writes it - the
claim in hyperpod-ns-<team> (kit_volume_claim) and its PersistentVolume, pre-bound to that claim only
(kit_lustre_volume); the HyperpodNodeClass hyperpod-kit-autoscaling of HyperPod's managed Karpenter and its
NodePools hyperpod-kit-autoscaling-<instance type>, exactly as the kit writes them (kit_node_class, kit_node_pool). Anything else - any
other ClusterRole or ClusterRoleBinding, an object in kube-system, a Namespace (whose delete would remove a
team's jobs) - is refused.

Standard library only: the installer Lambda ships this file, and the KubernetesManifests construct
imports it to refuse the same objects at synth.
"""

from __future__ import annotations

import re
from typing import Any

DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
TEAM_NAMESPACE = re.compile(r"hyperpod-ns-([a-z0-9]([-a-z0-9]*[a-z0-9])?)")
GUARDRAIL_PREFIX = "hyperpod-kit-"
RBAC_API = "rbac.authorization.k8s.io"
ADMISSION_API = "admissionregistration.k8s.io/v1"
# What a team Role may never hold: wildcards and the resources and verbs that hand out more rights.
# pods/exec and pods/portforward are not among them: a shell in a team's own pod holds nothing a Job the team may create
# does not (same image, service account and volumes), and debugging needs it.
ESCALATING_RESOURCES = {"*", "roles", "rolebindings", "secrets", "serviceaccounts", "serviceaccounts/token",
                        "pods/attach", "pods/ephemeralcontainers", "pods/proxy", "services/proxy", "nodes",
                        "nodes/proxy"}
ESCALATING_VERBS = {"*", "escalate", "bind", "impersonate"}
# The verbs a team Role may hold (escalate, bind, impersonate and "*" are not among them), and a rule's fields.
ALLOWED_VERBS = {"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
RULE_FIELDS = {"apiGroups", "resources", "verbs", "resourceNames"}
# A guardrail binding must deny; Audit may be added. Params would let a policy read other objects.
BINDING_ACTIONS = {"Deny", "Audit"}
# The team's cluster-scoped read access: its name, and what each of its rules may read.
TEAM_CLUSTER_ROLE = re.compile(r"hyperpod-kit-team-([a-z0-9]([-a-z0-9]*[a-z0-9])?)-read")
READ_VERBS = {"get", "list", "watch"}
KUEUE_API = "kueue.x-k8s.io"
KIT_MANAGED = {"app.kubernetes.io/managed-by": "hyperpod-kit"}
NETWORK_POLICY_NAME = f"{GUARDRAIL_PREFIX}team-isolation"
RESOURCE_QUOTA_NAME = f"{GUARDRAIL_PREFIX}unqueued-objects"
# EC2 instance metadata (IPv4; the VPC CNI ignores IPv6 rules in an IPv4 cluster, EKS network policy docs).
IMDS_CIDR = "169.254.169.254/32"
# What Kueue does not queue: the objects beside a team's jobs; the operators' count too (quota is per namespace).
# Deployments: one etcd rendezvous per elastic job (cdk_app/kubernetes/job_templates.py), 20 such jobs at once.
# Services: the etcd Service, the training operator's master Service and the MPI operator's worker Service - one or
# two per job, 50 jobs at once. ConfigMaps: the MPI operator's hostfile per MPIJob, the team's own, kube-root-ca.crt.
# No load balancers or node ports (defence in depth behind the hyperpod-kit-services guardrail). Pods and compute
# are not capped: Kueue-admitted job pods count in the same namespace, and no quota scope tells them apart.
# NodePort and LoadBalancer Services are the services guardrail's to refuse, with its message; no second rule here.
UNQUEUED_HARD = {"count/deployments.apps": "20", "services": "100", "configmaps": "100"}


def _team_metadata(name: str, namespace: str) -> dict[str, Any]:
    team = TEAM_NAMESPACE.fullmatch(namespace)
    labels = {**KIT_MANAGED, "hyperpod-kit/team": team.group(1)} if team else dict(KIT_MANAGED)
    return {"name": name, "namespace": namespace, "labels": labels}


def kit_network_policy(namespace: str) -> dict[str, Any]:
    """The NetworkPolicy of a team namespace; every pod of it is selected. NetworkPolicies only add allowances, so
    what is not listed is refused: ingress from other namespaces, egress to IMDS. Ingress: the namespace's own pods,
    every port (NCCL's TCP bootstrap, torchrun's c10d store on 29400, etcd). The kubelet's probes come from the
    node's own IP, which the VPC CNI's agent always allows (aws/aws-network-policy-agent,
    pkg/fwruleprocessor/fw_rule_processor.go). Egress: the namespace's own pods; CoreDNS (UDP/TCP 53); anything
    else but IMDS - the API server, AWS endpoints (public or VPC interface endpoints), EKS Pod Identity's
    169.254.170.23. That ipBlock covers other teams' pod IPs too (they are VPC addresses): their own copy of this
    policy refuses that traffic as ingress."""
    everything_but_imds = {"ipBlock": {"cidr": "0.0.0.0/0", "except": [IMDS_CIDR]}}
    dns = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
           "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}
    return {
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": _team_metadata(NETWORK_POLICY_NAME, namespace),
        "spec": {
            "podSelector": {}, "policyTypes": ["Ingress", "Egress"],
            "ingress": [{"from": [{"podSelector": {}}]}],
            "egress": [{"to": [{"podSelector": {}}]},
                       {"to": [dns], "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]},
                       {"to": [everything_but_imds]}],
        },
    }


def kit_resource_quota(namespace: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": _team_metadata(RESOURCE_QUOTA_NAME, namespace),
            "spec": {"hard": dict(UNQUEUED_HARD)}}


KIT_TEAM_OBJECTS = {("networking.k8s.io/v1", "NetworkPolicy"): kit_network_policy,
                    ("v1", "ResourceQuota"): kit_resource_quota}

# A team's FSx for Lustre volume, provisioned statically: the PersistentVolume names the file system and is
# pre-bound (claimRef) to the one claim of the team's namespace the kit creates, which names it back (volumeName).
# No StorageClass (""): no provisioner ever acts on these claims, and a claim elsewhere cannot bind the volume.
LUSTRE_DRIVER = "fsx.csi.aws.com"
# What the claim asks for is nominal (Lustre gives the whole file system) and fixed: Kubernetes refuses to resize a
# statically provisioned claim, so growing the file system changes the volume's capacity only. 1200 GiB is FSx for
# Lustre's smallest capacity, so every volume satisfies it.
CLAIM_REQUEST = "1200Gi"
# flock: Lustre's cluster-wide file locks, which the CSI driver's examples mount with (checkpoint writers use them).
LUSTRE_MOUNT_OPTIONS = ["flock"]
# Deploy-time values of a volume (file system id, DNS and mount names) are the stack's; the form is what is checked.
DEPLOY_VALUE = re.compile(r"[^\s]{1,253}")


def kit_volume_name(namespace: str, claim: str) -> str:
    """The PersistentVolume of claim `claim` in `namespace`: named after both, so no two claims share one."""
    return f"{GUARDRAIL_PREFIX}{namespace}-{claim}"


def kit_volume_claim(namespace: str, claim: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": _team_metadata(claim, namespace),
            "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "",
                     "volumeName": kit_volume_name(namespace, claim),
                     "resources": {"requests": {"storage": CLAIM_REQUEST}}}}


def kit_lustre_volume(namespace: str, claim: str, file_system_id: str, dns_name: str, mount_name: str,
                      capacity_gib: int) -> dict[str, Any]:
    metadata = _team_metadata(kit_volume_name(namespace, claim), namespace)
    del metadata["namespace"]  # cluster-scoped
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": metadata,
            "spec": {"capacity": {"storage": f"{capacity_gib}Gi"}, "accessModes": ["ReadWriteMany"],
                     "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "", "volumeMode": "Filesystem",
                     "mountOptions": list(LUSTRE_MOUNT_OPTIONS),
                     "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": namespace,
                                  "name": claim},
                     "csi": {"driver": LUSTRE_DRIVER, "volumeHandle": file_system_id,
                             "volumeAttributes": {"dnsname": dns_name, "mountname": mount_name}}}}


def _volume_refusal(what: str, manifest: dict[str, Any]) -> str | None:
    """A PersistentVolume only as kit_lustre_volume writes it, for a claim of a team namespace; its deploy-time
    values (file system id, DNS and mount names) only in form."""
    spec = manifest.get("spec") if isinstance(manifest.get("spec"), dict) else {}
    claim = spec.get("claimRef") if isinstance(spec.get("claimRef"), dict) else {}
    csi = spec.get("csi") if isinstance(spec.get("csi"), dict) else {}
    attributes = csi.get("volumeAttributes") if isinstance(csi.get("volumeAttributes"), dict) else {}
    namespace, name = claim.get("namespace"), claim.get("name")
    values = (csi.get("volumeHandle"), attributes.get("dnsname"), attributes.get("mountname"))
    capacity = re.fullmatch(r"([1-9][0-9]{0,9})Gi", str((spec.get("capacity") or {}).get("storage", "")))
    if (not isinstance(namespace, str) or TEAM_NAMESPACE.fullmatch(namespace) is None or not isinstance(name, str)
            or not all(isinstance(v, str) and DEPLOY_VALUE.fullmatch(v) for v in values) or capacity is None):
        return f"{what}: the installer applies a PersistentVolume only as the kit writes it, for a claim of hyperpod-ns-<team>"
    if manifest != kit_lustre_volume(namespace, name, *values, int(capacity.group(1))):  # type: ignore[arg-type]
        return (f"{what}: the installer applies only the kit's FSx for Lustre volume of claim {namespace}/{name}, "
                "exactly as the kit writes it")
    return None


def _team_cluster_objects(team: str) -> dict[tuple[str, str], set[str] | None]:
    """(apiGroup, resource) -> the names a team's ClusterRole may read; None: every name (cluster-wide,
    the same for every team)."""
    return {("", "namespaces"): {f"hyperpod-ns-{team}"},
            (KUEUE_API, "clusterqueues"): {f"hyperpod-ns-{team}-clusterqueue"},
            (KUEUE_API, "workloadpriorityclasses"): None}


# HyperPod's managed Karpenter (HyperPod autoscaling docs, "Create a NodeClass", "Create a NodePool"): the kit's one
# HyperpodNodeClass over the autoscaled instance groups and one NodePool per instance type that launches nodes from
# it (a NodePool's limits are per resource, not per type: one pool per type keeps each type's limit its own).
NODE_CLASS_API, NODE_CLASS_KIND = "karpenter.sagemaker.amazonaws.com/v1", "HyperpodNodeClass"
NODE_POOL_API = "karpenter.sh/v1"
AUTOSCALING_NAME = f"{GUARDRAIL_PREFIX}autoscaling"
# The set of Kubernetes objects (KubernetesManifests' Name) that holds them, and only them.
AUTOSCALING_SET = "autoscaling"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
SAGEMAKER_NAME = re.compile(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}")
# A HyperPod instance type (ml.<family>.<size>): it names the type's NodePool, so it is held to a DNS label's
# characters (the name is also the karpenter.sh/nodepool label's value, at most 63 characters).
POOL_INSTANCE_TYPE = re.compile(r"ml\.[a-z0-9-]{1,20}\.[a-z0-9-]{1,14}")
MAX_NODE_CLASS_GROUPS = 10
# The NodePool removes a node only once it runs no pod (WhenEmpty): WhenEmptyOrUnderutilized would move running
# training pods to pack nodes tighter. A node stays this long empty, so the next job (or a restarted one) finds it.
CONSOLIDATE_AFTER = "10m"


def kit_node_class(instance_groups: list[str]) -> dict[str, Any]:
    return {"apiVersion": NODE_CLASS_API, "kind": NODE_CLASS_KIND,
            "metadata": {"name": AUTOSCALING_NAME, "labels": dict(KIT_MANAGED)},
            "spec": {"instanceGroups": list(instance_groups)}}


def node_pool_name(instance_type: str) -> str:
    """hyperpod-kit-autoscaling-<instance type>: the name follows the type alone, so adding or removing another
    type never renames (and so never empties) a pool."""
    return f"{AUTOSCALING_NAME}-{instance_type}"


def kit_node_pool(instance_type: str, limits: dict[str, str]) -> dict[str, Any]:
    """expireAfter Never: Karpenter's default (720h) would replace every node after 30 days, running jobs and all."""
    return {"apiVersion": NODE_POOL_API, "kind": "NodePool",
            "metadata": {"name": node_pool_name(instance_type), "labels": dict(KIT_MANAGED)},
            "spec": {"template": {"spec": {
                "nodeClassRef": {"group": NODE_CLASS_API.split("/")[0], "kind": NODE_CLASS_KIND, "name": AUTOSCALING_NAME},
                "expireAfter": "Never",
                "requirements": [{"key": INSTANCE_TYPE_LABEL, "operator": "In", "values": [instance_type]}]}},
                "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": CONSOLIDATE_AFTER},
                "limits": dict(limits)}}


def _autoscaling_refusal(what: str, manifest: dict[str, Any]) -> str | None:
    """The kit's NodeClass or a NodePool of one instance type, rebuilt from its own instance groups, type and limits:
    anything else that would reach the installer (another name, several types, a template with other labels or
    taints) is refused."""
    spec = manifest.get("spec") if isinstance(manifest.get("spec"), dict) else {}
    if manifest.get("kind") == NODE_CLASS_KIND:
        groups = spec.get("instanceGroups")
        if not (isinstance(groups, list) and 1 <= len(groups) <= MAX_NODE_CLASS_GROUPS
                and all(isinstance(g, str) and SAGEMAKER_NAME.fullmatch(g) for g in groups)
                and manifest == kit_node_class(groups)):
            return f"{what}: the installer applies only the kit's node class of 1-{MAX_NODE_CLASS_GROUPS} instance groups"
        return None
    try:
        [itype] = spec["template"]["spec"]["requirements"][0]["values"]
        limits = spec["limits"]
        rebuilt = kit_node_pool(itype, limits) if isinstance(itype, str) and POOL_INSTANCE_TYPE.fullmatch(itype) else None
    except (KeyError, IndexError, TypeError, ValueError):
        rebuilt = None
    if rebuilt is None or manifest != rebuilt or not all(isinstance(v, str) for v in limits.values()):
        return f"{what}: the installer applies only the kit's node pools, one per instance type, exactly as the kit writes them"
    return None


def manifest_refusal(manifest: Any) -> str | None:
    """Why the installer will not apply (or delete) `manifest`, or None for an object the kit writes:
    a Role or RoleBinding of a team in hyperpod-ns-<team>, a team's read-only ClusterRole or
    ClusterRoleBinding hyperpod-kit-team-<team>-read, or an admission guardrail named hyperpod-kit-*."""
    if not isinstance(manifest, dict):
        return "a manifest must be a Kubernetes object"
    api, kind = manifest.get("apiVersion"), manifest.get("kind")
    meta = manifest.get("metadata") if isinstance(manifest.get("metadata"), dict) else {}
    name, namespace = meta.get("name"), meta.get("namespace")
    what = f"{kind} {name!r}"
    if not isinstance(name, str) or not DNS_SUBDOMAIN.fullmatch(name):
        return f"{what}: metadata.name must be a lower-case DNS name"
    if api == f"{RBAC_API}/v1" and kind in ("Role", "RoleBinding"):
        team = TEAM_NAMESPACE.fullmatch(namespace or "")
        if team is None:
            return f"{what} is in namespace {namespace!r}; team RBAC goes only into hyperpod-ns-<team>"
        if kind == "Role":
            return _role_refusal(what, manifest.get("rules"))
        ref = manifest.get("roleRef") or {}
        if ref.get("kind") != "Role" or ref.get("apiGroup") != RBAC_API:
            return f"{what} binds {ref.get('kind')} {ref.get('name')!r}; a team binding may only bind a Role of its namespace"
        return _subject_refusal(what, team.group(1), manifest.get("subjects"))
    if api == "v1" and kind == "PersistentVolume":
        return f"{what} is cluster-scoped; it has no namespace" if namespace else _volume_refusal(what, manifest)
    if api == "v1" and kind == "PersistentVolumeClaim":
        if TEAM_NAMESPACE.fullmatch(namespace or "") is None:
            return f"{what} is in namespace {namespace!r}; the kit writes one only into hyperpod-ns-<team>"
        if manifest != kit_volume_claim(namespace, name):
            return f"{what}: the installer applies only the kit's claim {name}, exactly as the kit writes it"
        return None
    build = KIT_TEAM_OBJECTS.get((api, kind))
    if build is not None:
        if TEAM_NAMESPACE.fullmatch(namespace or "") is None:
            return f"{what} is in namespace {namespace!r}; the kit writes one only into hyperpod-ns-<team>"
        if manifest != build(namespace):
            return (f"{what}: the installer applies only the kit's own {build(namespace)['metadata']['name']}, "
                    "exactly as the kit writes it")
        return None
    cluster_team = TEAM_CLUSTER_ROLE.fullmatch(name)
    if api == f"{RBAC_API}/v1" and kind in ("ClusterRole", "ClusterRoleBinding") and cluster_team:
        team = cluster_team.group(1)
        if namespace:
            return f"{what} is cluster-scoped; it has no namespace"
        if kind == "ClusterRole":
            return _cluster_role_refusal(what, team, manifest)
        ref = manifest.get("roleRef") or {}
        if ref != {"apiGroup": RBAC_API, "kind": "ClusterRole", "name": name}:
            return f"{what} binds {ref.get('kind')} {ref.get('name')!r}; it may only bind the team's ClusterRole {name}"
        return _subject_refusal(what, team, manifest.get("subjects"))
    if (api, kind) == (NODE_CLASS_API, NODE_CLASS_KIND):
        if namespace or name != AUTOSCALING_NAME:
            return f"{what}: the kit's one {kind} is {AUTOSCALING_NAME}, cluster-scoped"
        return _autoscaling_refusal(what, manifest)
    if (api, kind) == (NODE_POOL_API, "NodePool"):
        if namespace or not name.startswith(f"{AUTOSCALING_NAME}-"):
            return f"{what}: the kit's NodePools are {AUTOSCALING_NAME}-<instance type>, cluster-scoped"
        return _autoscaling_refusal(what, manifest)
    if api == ADMISSION_API and kind in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"):
        if namespace:
            return f"{what} is cluster-scoped; it has no namespace"
        if not name.startswith(GUARDRAIL_PREFIX):
            return f"{what}: the kit's guardrails are named {GUARDRAIL_PREFIX}*"
        return _admission_refusal(what, kind, name, manifest.get("spec"))
    return (f"{api} {kind} {name!r} is not an object the kit writes (only Role, RoleBinding and the kit's "
            f"NetworkPolicy {NETWORK_POLICY_NAME}, ResourceQuota {RESOURCE_QUOTA_NAME} and volume claims in "
            "hyperpod-ns-<team>, the kit's FSx for Lustre PersistentVolumes, "
            "ClusterRole and ClusterRoleBinding hyperpod-kit-team-<team>-read, ValidatingAdmissionPolicy and "
            f"ValidatingAdmissionPolicyBinding named {GUARDRAIL_PREFIX}*, the kit's HyperpodNodeClass "
            f"{AUTOSCALING_NAME} and NodePools {AUTOSCALING_NAME}-<instance type>)")


def _admission_refusal(what: str, kind: str, name: str, spec: Any) -> str | None:
    """A guardrail that fails closed and reads nothing but the request: a policy with failurePolicy Fail and
    no paramKind, a binding of the policy of its own name that denies, without paramRef."""
    spec = spec if isinstance(spec, dict) else {}
    if kind == "ValidatingAdmissionPolicy":
        if spec.get("failurePolicy") != "Fail" or "paramKind" in spec:
            return f"{what}: a guardrail policy has failurePolicy Fail and no paramKind"
        return None
    actions = spec.get("validationActions")
    if (spec.get("policyName") != name or "paramRef" in spec or not isinstance(actions, list)
            or "Deny" not in actions or not set(actions) <= BINDING_ACTIONS):
        return (f"{what} binds policy {spec.get('policyName')!r} with {actions!r}; a guardrail binding binds the "
                f"policy of its own name with validationActions Deny (and Audit), without paramRef")
    return None


def _role_refusal(what: str, rules: Any) -> str | None:
    """Every field of every rule against what a team Role may hold. RBAC matches a rule resource "*" against
    everything and "*/<sub>" against every resource's <sub> (ResourceMatches in Kubernetes'
    pkg/apis/rbac/v1/evaluation_helpers.go), so any "*" in a resource is refused, as are the escalating
    rights named with their subresource."""
    for rule in rules if isinstance(rules, list) else [None]:
        if not isinstance(rule, dict):
            return f"{what}: rules must be a list of rules"
        unknown = set(rule) - RULE_FIELDS
        if unknown:
            return f"{what}: a team Role rule may hold only {sorted(RULE_FIELDS)}, not {sorted(unknown)}"
        lists = {key: rule.get(key, [""] if key == "resourceNames" else None) for key in RULE_FIELDS}
        if not all(isinstance(v, list) and v and all(isinstance(i, str) for i in v) for v in lists.values()):
            return f"{what}: apiGroups, resources, verbs (and resourceNames) must be non-empty lists of strings"
        resources, verbs = set(lists["resources"]), set(lists["verbs"])
        wild = {r for r in resources if "*" in r} | {g for g in lists["apiGroups"] if "*" in g}
        bad_verbs = verbs - ALLOWED_VERBS
        escalating = resources & ESCALATING_RESOURCES
        if wild or bad_verbs or escalating:
            return (f"{what} grants {sorted(wild | bad_verbs | escalating) or ['nothing']}; a team Role may not hold "
                    f"wildcards or rights that grant more rights (verbs only {sorted(ALLOWED_VERBS)})")
    return None


def _subject_refusal(what: str, team: str, subjects: Any) -> str | None:
    group = {"kind": "Group", "apiGroup": RBAC_API, "name": f"hyperpod-team-{team}"}
    if not isinstance(subjects, list) or not subjects or any(s != group for s in subjects):
        return f"{what}: its only subject may be the team's group {group['name']}"
    return None


def _cluster_role_refusal(what: str, team: str, manifest: dict[str, Any]) -> str | None:
    """A team's ClusterRole reads its own namespace and ClusterQueue by name, and the priority classes:
    get/list/watch only, no aggregation (which would pull in other roles' rules), no non-resource URLs."""
    if "aggregationRule" in manifest:
        return f"{what}: a team ClusterRole may not aggregate other roles"
    rules = manifest.get("rules")
    allowed = _team_cluster_objects(team)
    for rule in rules if isinstance(rules, list) and rules else [None]:
        if not isinstance(rule, dict):
            return f"{what}: rules must be a non-empty list of rules"
        if "nonResourceURLs" in rule:
            return f"{what}: a team ClusterRole may not grant non-resource URLs"
        verbs = rule.get("verbs")
        if not isinstance(verbs, list) or not verbs or not set(verbs) <= READ_VERBS:
            return f"{what} grants verbs {verbs!r}; a team ClusterRole may only get, list and watch"
        names = rule.get("resourceNames")
        for group in rule.get("apiGroups") or [None]:
            for resource in rule.get("resources") or [None]:
                if (group, resource) not in allowed:
                    return (f"{what} grants {group!r}/{resource!r}; a team ClusterRole reads only namespaces, "
                            "clusterqueues and workloadpriorityclasses")
                own = allowed[(group, resource)]
                # An empty or missing resourceNames means every name.
                if own is not None and (not isinstance(names, list) or not names or not set(names) <= own):
                    return (f"{what} grants {resource} {names!r}; a team ClusterRole reads only its own "
                            f"{', '.join(sorted(own))} by name")
    return None
