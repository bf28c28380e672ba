"""The configs the admission cases run against: config/<env>.yaml; TAINTED - prod with administrators' taints
(hyperpod.instance_groups[].taints) for the tolerations guardrail, which a config without taints does not bind;
UNISOLATED - prod as deployed before it turned GPU isolation on (hyperpod.lifecycle.gpu_device_isolation false),
where the gpu-visibility guardrail holds the line the nodes do not."""

from __future__ import annotations

from cdk_app.config.loader import load_config
from cdk_app.config.model import KitConfig, Taint
from support.paths import ROOT

TAINTED = "prod-tainted"
UNISOLATED = "prod-unisolated"


# h100-a dedicated to research-nlp by a value of a shared key (other values of it stay free to tolerate); the
# system group kept for the administrators' own workloads; a device-resource taint every GPU pod tolerates.
TAINTS = {"h100-a": (Taint(key="example.com/dedicated", value="research-nlp", effect="NoSchedule", teams=("research-nlp",)),
                     Taint(key="nvidia.com/gpu", effect="NoSchedule")),
          "system": (Taint(key="node-role", value="system", effect="NoSchedule"),)}


def case_config(env: str) -> KitConfig:
    if env == UNISOLATED:
        prod = load_config(ROOT / "config" / "prod.yaml").config
        lifecycle = prod.hyperpod.lifecycle.model_copy(update={"gpu_device_isolation": False})
        return prod.model_copy(update={"hyperpod": prod.hyperpod.model_copy(update={"lifecycle": lifecycle})})
    if env != TAINTED:
        return load_config(ROOT / "config" / f"{env}.yaml").config
    prod = load_config(ROOT / "config" / "prod.yaml").config
    groups = tuple(g.model_copy(update={"taints": TAINTS.get(g.name, g.taints)}) for g in prod.hyperpod.instance_groups)
    return prod.model_copy(update={"hyperpod": prod.hyperpod.model_copy(update={"instance_groups": groups})})
