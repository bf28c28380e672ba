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
                        "pods/exec", "pods/attach", "pods/ephemeralcontainers"}
ESCALATING_VERBS = {"*", "escalate", "bind", "impersonate"}


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
        policy = (manifest.get("spec") or {}).get("policyName", GUARDRAIL_PREFIX)
        if kind == "ValidatingAdmissionPolicyBinding" and not str(policy).startswith(GUARDRAIL_PREFIX):
            return f"{what} binds policy {policy!r}; it may only bind the kit's {GUARDRAIL_PREFIX}* policies"
        return None
    return (f"{api} {kind} {name!r} is not an object the kit writes (only Role and RoleBinding in hyperpod-ns-<team>, "
            f"ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding named {GUARDRAIL_PREFIX}*)")


def _role_refusal(what: str, rules: Any) -> str | None:
    for rule in rules if isinstance(rules, list) else [None]:
        if not isinstance(rule, dict):
            return f"{what}: rules must be a list of rules"
        resources = set(rule.get("resources") or ()) & ESCALATING_RESOURCES
        verbs = set(rule.get("verbs") or ()) & ESCALATING_VERBS
        if resources or verbs or "*" in (rule.get("apiGroups") or ()):
            return f"{what} grants {sorted(resources | verbs) or ['*']}; a team Role may not hold wildcards or rights that grant more rights"
    return None
