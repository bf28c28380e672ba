"""The kit's Karpenter NodePools before and after (the cluster stack's autoscaling set of Kubernetes objects): which
pool goes, which comes, and how far each may grow.

Karpenter's NodeClaims are owned by their NodePool, so deleting a pool deletes the nodes it launched: Kubernetes'
garbage collection deletes its NodeClaims, and Karpenter's termination finalizer drains each node (its pods evicted,
running jobs and all) before the instance goes (kubernetes-sigs/karpenter: nodes cascade on their pool's delete since
aws/karpenter#1934; karpenter.sh "Disruption", "Control Flow"). A limit only gates new nodes: a pool over a lowered
limit launches no more and removes none ("Limits define a set of bounds for provisioning capacity", the NodePool
CRD). The kit names a pool after its instance type, so a pool goes only when its type does."""

from __future__ import annotations

import json
from typing import Any

from cdk_app.cli.plan.model import Hazard, template_resources
from cdk_app.domain.autoscaling import MEMORY
from cdk_app.domain.instance_types import CATALOGUE
from hyperpod_constructs.helm_release_handler.manifest_policy import AUTOSCALING_NAME, AUTOSCALING_SET


def _pools(template: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """NodePool name -> (logical id of its set, its spec.limits), from the template's autoscaling set."""
    pools: dict[str, tuple[str, dict[str, Any]]] = {}
    for logical_id, resource in template_resources(template).items():
        props = resource.get("Properties")
        if (resource.get("Type") != "Custom::KubernetesManifests" or not isinstance(props, dict)
                or props.get("Name") != AUTOSCALING_SET or not isinstance(props.get("Manifests"), str)):
            continue
        try:
            manifests = json.loads(props["Manifests"])
        except ValueError:
            continue  # a hand-edited template may hold anything; the deploy's installer refuses it
        for manifest in manifests if isinstance(manifests, list) else ():
            if isinstance(manifest, dict) and manifest.get("kind") == "NodePool":
                name = (manifest.get("metadata") or {}).get("name")
                limits = (manifest.get("spec") or {}).get("limits")
                if isinstance(name, str):
                    pools[name] = (logical_id, limits if isinstance(limits, dict) else {})
    return pools


def _limits_text(name: str, limits: dict[str, Any]) -> str:
    """The limits as written, and the whole nodes of the pool's type their memory allows (the kit's pools are named
    after their type)."""
    written = ", ".join(f"{resource} {amount}" for resource, amount in sorted(limits.items())) or "none"
    spec = CATALOGUE.get(name.removeprefix(f"{AUTOSCALING_NAME}-"))
    if spec is None or MEMORY not in limits:
        return written
    return f"{int(_number(limits[MEMORY]) // (spec.memory_gib * 1024))} x {spec.name} ({written})"


def node_pool_hazards(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[Hazard]:
    """Per stack of `after`: a NodePool removed (its nodes drained and terminated: refused unless allowed by
    name), added or with other limits (said, not refused)."""
    hazards = []
    for stack in sorted(after):
        old, new = _pools(before.get(stack, {})), _pools(after[stack])
        for name in sorted(set(old) | set(new)):
            logical_id, limits = new.get(name) or old[name]
            where = f"{logical_id}/{name}"
            if name not in new:
                hazards.append(Hazard(stack, where, f"Karpenter NodePool {name} removed: Kubernetes deletes the nodes "
                                                    "it launched with it (Karpenter drains each first), with the jobs "
                                                    "running on them"))
            elif name not in old:
                hazards.append(Hazard(stack, where, f"Karpenter NodePool {name} added: it may launch nodes up to "
                                                    f"{_limits_text(name, limits)} as pods wait for them", refuse=False))
            elif old[name][1] != limits:
                lowered = any(_number(limits.get(k)) < _number(v) for k, v in old[name][1].items())
                hazards.append(Hazard(stack, where, f"Karpenter NodePool {name}: limits {_limits_text(name, old[name][1])} -> "
                                                    f"{_limits_text(name, limits)}" + (
                                                        ": a lowered limit removes no running node; Karpenter launches "
                                                        "none past it" if lowered else ""), refuse=False))
    return hazards


def _number(quantity: Any) -> float:
    """A limit the kit writes (whole MiB or a count) as a number; anything else as 0."""
    text = str(quantity)
    text = text[:-2] if text.endswith("Mi") else text
    return float(text) if text.isdigit() else 0.0
