"""Which Kubernetes objects the kit's cluster-admin installer applies (and deletes): only what the kit
writes - a Role or RoleBinding of a team in hyperpod-ns-<team>, bound to that team's group only and
granting no wildcard or escalating right, and admission guardrails (ValidatingAdmissionPolicy and
ValidatingAdmissionPolicyBinding) named hyperpod-kit-*. Anything else - a ClusterRoleBinding, an object
in kube-system, a Namespace (whose delete would remove a team's jobs) - is refused.

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
ESCALATING_RESOURCES = {"*", "roles", "rolebindings", "secrets", "serviceaccounts", "serviceaccounts/token",
                        "pods/exec", "pods/attach", "pods/ephemeralcontainers", "pods/portforward", "pods/proxy",
                        "services/proxy", "nodes", "nodes/proxy"}
ESCALATING_VERBS = {"*", "escalate", "bind", "impersonate"}
# The verbs a team Role may hold (escalate, bind, impersonate and "*" are not among them), and a rule's fields.
ALLOWED_VERBS = {"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
RULE_FIELDS = {"apiGroups", "resources", "verbs", "resourceNames"}
# A guardrail binding must deny; Audit may be added. Params would let a policy read other objects.
BINDING_ACTIONS = {"Deny", "Audit"}


def manifest_refusal(manifest: Any) -> str | None:
    """Why the installer will not apply (or delete) `manifest`, or None for an object the kit writes:
    a Role or RoleBinding of a team in hyperpod-ns-<team>, or an admission guardrail named hyperpod-kit-*."""
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
        group = {"kind": "Group", "apiGroup": RBAC_API, "name": f"hyperpod-team-{team.group(1)}"}
        subjects = manifest.get("subjects")
        if not isinstance(subjects, list) or not subjects or any(s != group for s in subjects):
            return f"{what}: its only subject may be the team's group {group['name']}"
        return None
    if api == ADMISSION_API and kind in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"):
        if namespace:
            return f"{what} is cluster-scoped; it has no namespace"
        if not name.startswith(GUARDRAIL_PREFIX):
            return f"{what}: the kit's guardrails are named {GUARDRAIL_PREFIX}*"
        return _admission_refusal(what, kind, name, manifest.get("spec"))
    return (f"{api} {kind} {name!r} is not an object the kit writes (only Role and RoleBinding in hyperpod-ns-<team>, "
            f"ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding named {GUARDRAIL_PREFIX}*)")


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
