"""Policy metadata and the binding of a policy to the team namespaces."""

from __future__ import annotations

from typing import Any

from cdk_app.kubernetes.guardrails.constants import API_VERSION, NAMESPACE_NAME_LABEL


def policy_metadata(name: str) -> dict[str, Any]:
    return {"name": name, "labels": {"app.kubernetes.io/managed-by": "hyperpod-kit"}}


def binding(policy: dict[str, Any], namespaces: list[str]) -> dict[str, Any]:
    name = policy["metadata"]["name"]
    return {
        "apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicyBinding", "metadata": policy_metadata(name),
        "spec": {
            "policyName": name,
            # Deny refuses the request; Audit also records the violation in the API server's audit log.
            "validationActions": ["Deny", "Audit"],
            "matchResources": {"namespaceSelector": {"matchExpressions": [
                {"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": sorted(namespaces)}]}},
        },
    }
