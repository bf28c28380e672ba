"""The CPU, memory and local disk (ephemeral-storage) of unqueued workloads' pods (Deployment, StatefulSet, ReplicaSet, DaemonSet): Kueue counts
none of it, so each team's caps (teams[].unqueued_pods) bound what its rendezvous stores and tools may hold on
nodes that its own and other teams' admitted jobs need. Rules of the pod-security policy, with CEL's quantity
library (Kubernetes 1.29+) comparing the quantities exactly per container and, summed as floats, per pod.

GPU nodes: an unqueued pod asks for no device (unqueued-devices), so a device-resource taint on a group
(nvidia.com/gpu:NoSchedule) keeps it off: the API server's ExtendedResourceToleration plugin (on in EKS since
1.19, aws/containers-roadmap#739) tolerates such a taint only for pods that request the resource. What is left is
a toleration the pod writes itself, which the admin-taints rule allows for device taints (GPU pods need them):
refused here for unqueued kinds.

Hugepages are refused to unqueued pods outright: a node's huge pages are set aside at boot, a fixed pool the
scheduler hands out by request, and no quota counts them; an unqueued pod holding them would keep the queued jobs
that need them (libfabric and DPDK-style data paths) off that node, and no rendezvous or tool needs them."""

from __future__ import annotations

from cdk_app.config.model import KitConfig, UnqueuedPodResources
from cdk_app.config.names import team_namespace
from cdk_app.domain.kueue_mapping import governed_teams
from cdk_app.kubernetes.guardrails.cel import first_bad, lit, pod_rule, validation
from cdk_app.kubernetes.guardrails.constants import DEVICE_RESOURCE_PREFIXES
from cdk_app.kubernetes.guardrails.kinds import WORKLOAD_KINDS

# resource -> its keys in variables.unqueuedCaps: per container, per pod.
RESOURCES = {"cpu": ("cpu", "podCpu"), "memory": ("memory", "podMemory"),
             "ephemeral-storage": ("ephemeralStorage", "podEphemeralStorage")}
HUGEPAGES_PREFIX = "hugepages-"
UNQUEUED = [k.ref for k in WORKLOAD_KINDS if k.role == "unqueued"]
# A pod's sum is compared as float64 (asApproximateFloat; CEL cannot fold quantities): a margin of one part in
# 10^9 keeps decimal rounding (0.1 + 0.2 > 0.3) from refusing a pod exactly at its cap.
SUM_MARGIN = 1.000000001
# In single-quoted CEL strings: no apostrophe.
_WHY = "Kueue counts no pod of an unqueued workload; run larger work as a Job, or ask the administrators " \
       "(teams[].unqueued_pods)"


def caps_variable(config: KitConfig) -> dict[str, str]:
    """variables.unqueuedCaps: the request namespace's caps, {'cpu', 'memory', 'ephemeralStorage', 'podCpu',
    'podMemory', 'podEphemeralStorage'}."""
    chosen = {team.name: team.unqueued_pods for team in reversed(config.teams)}  # the first team of a name wins
    entries = []
    for team in governed_teams(config):
        caps = chosen.get(team, UnqueuedPodResources())
        values = {"cpu": caps.container_cpu, "memory": caps.container_memory,
                  "ephemeralStorage": caps.container_ephemeral_storage, "podCpu": caps.pod_cpu,
                  "podMemory": caps.pod_memory, "podEphemeralStorage": caps.pod_ephemeral_storage}
        entries.append(f"{lit(team_namespace(team))}: {{" + ", ".join(f"{lit(k)}: {lit(v)}" for k, v in values.items()) + "}")
    return {"name": "unqueuedCaps", "expression": "{" + ", ".join(entries) + "}[request.namespace]"}


def _above(field: str, cap: str) -> str:
    """CEL: whether container e.c sets resources.<field> (requests.cpu ...) above the cap variables.unqueuedCaps.<cap>."""
    kind, resource = field.split(".")
    value = f"e.c.resources.{kind}[{lit(resource)}]"
    return (f"has(e.c.resources) && has(e.c.resources.{kind}) && {lit(resource)} in e.c.resources.{kind} && "
            f"quantity(string({value})).isGreaterThan(quantity(variables.unqueuedCaps.{cap}))")


def _requested(resource: str) -> str:
    """CEL: what container c reserves of a resource, as a float: its request, else its limit (Kubernetes makes
    the limit the request), else nothing."""
    def of(kind: str, otherwise: str) -> str:
        return (f"has(c.resources) && has(c.resources.{kind}) && {lit(resource)} in c.resources.{kind} ? "
                f"quantity(string(c.resources.{kind}[{lit(resource)}])).asApproximateFloat() : {otherwise}")
    return of("requests", f"({of('limits', '0.0')})")


def _pod_level_above(resource: str, cap: str) -> str:
    """CEL: whether pod e.spec's pod-level resources (PodLevelResources, beta from Kubernetes 1.34: the scheduler
    then reserves those) request or limit more of a resource than the cap."""
    return " || ".join(
        f"has(e.spec.resources) && has(e.spec.resources.{kind}) && {lit(resource)} in e.spec.resources.{kind} && "
        f"quantity(string(e.spec.resources.{kind}[{lit(resource)}])).isGreaterThan(quantity(variables.unqueuedCaps.{cap}))"
        for kind in ("requests", "limits"))


def _pod_above(resource: str, cap: str) -> str:
    """CEL: whether pod e.spec's containers and init containers reserve more of a resource together than the cap,
    or its pod-level resources do."""
    containers = "(e.spec.containers + (has(e.spec.initContainers) ? e.spec.initContainers : []))"
    return (f"{_pod_level_above(resource, cap)} || {containers}.map(c, {_requested(resource)}).sum() > "
            f"quantity(variables.unqueuedCaps.{cap}).asApproximateFloat() * {SUM_MARGIN}")


def unqueued_resource_validations() -> list[dict[str, str]]:
    rules = []
    unqueued = f"!(variables.kind in {lit(UNQUEUED)})"
    for resource, (cap, _) in RESOURCES.items():
        for kind in ("requests", "limits"):
            field = f"{kind}.{resource}"
            bad = _above(field, cap)
            first = first_bad("variables.containers", bad)
            rules.append(validation(
                "unqueued-resources", f"{unqueued} || !variables.containers.exists(e, {bad})",
                f"a container of an unqueued workload may not set resources.{field} above its team's cap",
                f"{first}.path + '.resources.{field}: ' + string({first}.c.resources.{kind}[{lit(resource)}]) + "
                f"' is above the team\\'s cap of ' + variables.unqueuedCaps.{cap} + ' per container ({_WHY})'"))
    for resource, (_, cap) in RESOURCES.items():
        bad = _pod_above(resource, cap)
        first = first_bad("variables.pods", bad)
        rules.append(validation(
            "unqueued-pod-resources", f"{unqueued} || !variables.pods.exists(e, {bad})",
            f"the containers of an unqueued workload's pod may not request more {resource} together than its team's cap",
            f"{first}.path + ([{first}].exists(e, {_pod_level_above(resource, cap)}) ? '.resources.{resource}: the "
            f"pod-level resources are' : '.containers[*].resources.requests.{resource}: together') + ' above the "
            f"team\\'s cap of ' + variables.unqueuedCaps.{cap} + ' per pod (init containers and limits where no "
            f"request is set count; {_WHY})'"))
    hugepages = " || ".join(f"has(e.c.resources) && has(e.c.resources.{kind}) && "
                            f"e.c.resources.{kind}.exists(r, r.startsWith({lit(HUGEPAGES_PREFIX)}))"
                            for kind in ("requests", "limits"))
    rules.append(validation(
        "unqueued-hugepages", f"{unqueued} || !variables.containers.exists(e, {hugepages})",
        "an unqueued workload may not ask for hugepages (a node's fixed pool, which no quota counts)",
        f"{first_bad('variables.containers', hugepages)}.path + '.resources: hugepages-* only for queued workloads "
        "(Job, PyTorchJob, MPIJob): a node\\'s huge pages are a fixed pool no quota counts'"))
    rules.append(pod_rule(
        "unqueued-devices", f"variables.kind in {lit(UNQUEUED)} && has(e.spec.tolerations) && e.spec.tolerations.exists("
        f"t, has(t.key) && {lit(DEVICE_RESOURCE_PREFIXES)}.exists(p, t.key.startsWith(p)))", "tolerations",
        "an unqueued workload may not tolerate a device-resource taint (it would reach the GPU, Neuron or EFA nodes "
        "the taint keeps for pods that request them)"))
    return rules
