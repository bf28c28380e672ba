"""hyperpod-kit-tolerations: team pods may not tolerate the taints administrators put on instance groups
(hyperpod.instance_groups[].taints), except the teams a taint lists. A taint keeps a group for the system
(the operators, Kueue) or for one team; a toleration a team writes for itself would undo that.

A toleration (t) matches a taint (x) as the scheduler matches them (Kubernetes' Toleration.ToleratesTaint):
the same key, or no key with operator Exists (every taint); no effect or the same effect; operator Exists, or
Equal (the default) with the same value. So a team may still tolerate a value of a key that no taint of the
config has: dedicated=<team> taints can give each team its own group under one key.

Device-resource taints are left out (see Taint.teams): the ExtendedResourceToleration admission plugin adds a
toleration of nvidia.com/gpu (and each extended resource a pod asks for) before this policy runs. HyperPod's
and Kubernetes' own taints (unhealthy, cordoned nodes) are pod-security's rule "tolerations". None of the
AWS or HyperPod examples a team follows tolerates an administrator's taint; the HyperPod chart's device
plugins and operators tolerate node-health-status, and run in kube-system and kubeflow, outside the bindings.
Task governance makes a ResourceFlavor per instance type with no tolerations that its documentation shows
(reference task-governance-mapping.md); a flavor with tolerations would be refused here on its pods.

Bound only when the config has such a taint: a config without one gets no extra policy.
"""

from __future__ import annotations

import json
from typing import Any

from cdk_app.config.model import KitConfig
from cdk_app.config.names import team_namespace
from cdk_app.domain.kueue_mapping import governed_teams
from cdk_app.kubernetes.guardrails.cel import first_bad, lit, validation
from cdk_app.kubernetes.guardrails.constants import DEVICE_RESOURCE_PREFIXES, TOLERATIONS
from cdk_app.kubernetes.guardrails.pod_security import pod_policy

# CEL: toleration t matches administrators' taint x (a map of key, value, effect and its text for messages).
_MATCHES = ("(!has(t.key) || t.key == '' || t.key == x.key) "
            "&& (!has(t.effect) || t.effect == '' || t.effect == x.effect) "
            "&& (has(t.operator) && t.operator == 'Exists' || (has(t.value) ? t.value : '') == x.value)")


_TOLERATES = "has(e.spec.tolerations) && e.spec.tolerations.exists(t, variables.taints.exists(x, " + _MATCHES + "))"


def guarded_taints(config: KitConfig) -> dict[str, list[dict[str, str]]]:
    """Per governed team, the administrators' taints it may not tolerate (each once, with the groups carrying it)."""
    taints: dict[tuple[str, str, str], dict[str, Any]] = {}
    for group in config.hyperpod.instance_groups if config.hyperpod else ():
        for taint in group.taints:
            if taint.key.startswith(DEVICE_RESOURCE_PREFIXES):
                continue
            entry = taints.setdefault((taint.key, taint.value or "", taint.effect), {"groups": [], "teams": None})
            entry["groups"].append(group.name)
            # One taint on several groups: a team may tolerate it only where every group allows it.
            allowed = set(taint.teams)
            entry["teams"] = allowed if entry["teams"] is None else entry["teams"] & allowed
    out: dict[str, list[dict[str, str]]] = {}
    for team in governed_teams(config):
        out[team] = [{"key": key, "value": value, "effect": effect,
                      "text": f"{key}{'=' + value if value else ''}:{effect} (instance group {', '.join(entry['groups'])})"}
                     for (key, value, effect), entry in taints.items() if team not in entry["teams"]]
    return out


def tolerations_policies(config: KitConfig) -> list[dict[str, Any]]:
    """The policy, or none when no team has an administrators' taint to keep off."""
    guarded = guarded_taints(config)
    if not any(guarded.values()):
        return []
    per_namespace = "{" + ", ".join(f"{lit(team_namespace(team))}: {json.dumps(taints)}"
                                    for team, taints in guarded.items()) + "}[request.namespace]"
    pod = first_bad("variables.pods", _TOLERATES)
    taint = f"variables.taints.filter(x, {pod}.spec.tolerations.exists(t, {_MATCHES}))[0]"
    message = ("tolerates a taint the administrators put on an instance group (hyperpod.instance_groups[].taints); "
               "only the teams the taint lists may")
    return [pod_policy(config, TOLERATIONS, [{"name": "taints", "expression": per_namespace}], [validation(
        "admin-taints", f"!variables.pods.exists(e, {_TOLERATES})", message,
        f"{pod}.path + '.tolerations: tolerates ' + {taint}.text + "
        f"{lit(' - a taint the administrators keep for the system or for other teams (hyperpod.instance_groups[].taints[].teams)')}")])]
