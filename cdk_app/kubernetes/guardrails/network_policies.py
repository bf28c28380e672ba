"""hyperpod-kit-network-policies: the NetworkPolicies a team member may create, change and delete."""

from __future__ import annotations

from typing import Any

from cdk_app.config.model import KitConfig
from cdk_app.domain.kueue_mapping import governed_teams
from cdk_app.kubernetes.guardrails.bindings import policy_metadata
from cdk_app.kubernetes.guardrails.cel import lit, validation
from cdk_app.kubernetes.guardrails.constants import API_VERSION, NAME_PREFIX, NETWORK_POLICIES
from cdk_app.kubernetes.team_rbac import team_group


def network_policy_policy(config: KitConfig) -> dict[str, Any]:
    """A team's own NetworkPolicies may add ingress to its namespace, nothing else. RBAC grants networkpolicies
    whole (it cannot exclude names from create, update or delete), so this refuses a team member:
    - any change to the kit's hyperpod-kit-* policy (network_policy.py), deleting it included;
    - egress rules: NetworkPolicies only add allowances, the kit's already allows all but other teams and instance
      metadata, so a team's egress rule could only reopen instance metadata (the VPC CNI merges an allowed CIDR
      into the same map entry as the kit's `except`: aws-network-policy-agent, fw_rule_processor.go).
    The administrators and the installer are not team members: the policy matches team groups only."""
    kit = f"{lit(NAME_PREFIX)})"
    name = "(request.operation == 'DELETE' ? oldObject.metadata.name : object.metadata.name)"
    generated = "has(object.metadata.generateName) && object.metadata.generateName.startsWith("
    spec = "object.spec"
    return {
        "apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicy", "metadata": policy_metadata(NETWORK_POLICIES),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"apiGroups": ["networking.k8s.io"], "apiVersions": ["v1"],
                                                    "resources": ["networkpolicies"],
                                                    "operations": ["CREATE", "UPDATE", "DELETE"]}]},
            "matchConditions": [{"name": "by-a-team-member", "expression":
                                 f"request.userInfo.groups.exists(g, g in {lit([team_group(t) for t in governed_teams(config)])})"}],
            "validations": [
                validation("kit-network-policy", f"!{name}.startsWith({kit}",
                           f"the kit's {NAME_PREFIX}* NetworkPolicy is the installer's to change",
                           f"'metadata.name: ' + {name} + ' is the kit\\'s; a team\\'s own NetworkPolicy takes "
                           f"another name'"),
                validation("kit-network-policy", f"request.operation == 'DELETE' || !({generated}{kit})",
                           f"metadata.generateName may not start with {NAME_PREFIX}",
                           "'metadata.generateName: ' + object.metadata.generateName + ' is the kit\\'s prefix'"),
                validation("network-policy-egress",
                           f"request.operation == 'DELETE' || (!has({spec}.egress) && "
                           f"!(has({spec}.policyTypes) && 'Egress' in {spec}.policyTypes))",
                           "a team's NetworkPolicy may not hold egress rules (the kit's allows all but other "
                           "teams and instance metadata)",
                           "'spec.egress and policyTypes Egress: not allowed; the kit\\'s NetworkPolicy already "
                           "allows all egress but other teams and instance metadata'"),
            ],
        },
    }
