"""Job manifests that task governance and topology-aware scheduling act on: a PyTorchJob or a batch Job
in the team's namespace, labelled with the team's local queue and a priority class of the config.

Checks against the config before rendering: the team exists, the priority class is in the cluster
policy, the instance type is in the cluster, topology is only asked for on types that have topology
labels and with an add-on that supports it, and one pod asks for no more than one node has. Given the
cluster's nodes (`kubectl get nodes -o json`), it also checks the GPUs, Neuron devices and EFA
interfaces the nodes of that type advertise, and that enough healthy nodes offer them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from cdk_app.config.model import KitConfig
from cdk_app.instance_types import CATALOGUE, family
from cdk_app.team_rbac import team_namespace
from cdk_app.topology import ACCELERATOR_RESOURCES, EFA_RESOURCE, HEALTH_LABEL, NodeInfo
from cdk_app.validator.rules import version_tuple

# Instance families whose nodes carry topology.k8s.aws/network-node-layer-* labels.
TOPOLOGY_FAMILIES = ("p3dn", "p4d", "p4de", "p5", "p5e", "p5en", "p6e-gb200", "trn1", "trn1n", "trn2", "trn2u")
MIN_TOPOLOGY_ADDON = (1, 2, 2)
# The training operator names a Service after each replica, so the job name must be a DNS-1035 label.
JOB_NAME = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
MAX_DNS_LABEL = 63
# Maximum EFA interfaces, only where public AWS documentation states it. Other types are checked
# only against the nodes' allocatable (--cluster-nodes), which is the authority when given.
EFA_MAXIMUM = {"ml.p5.48xlarge": 32, "ml.p5e.48xlarge": 32, "ml.g6e.48xlarge": 4,
               "ml.trn1.32xlarge": 8, "ml.trn1n.32xlarge": 16}


class JobSpecError(Exception):
    """A job the config does not allow; the message names the option and what is allowed."""


@dataclass(frozen=True)
class JobRequest:
    team: str
    priority: str
    name: str
    image: str
    command: tuple[str, ...]
    kind: Literal["pytorchjob", "job"] = "pytorchjob"
    instance_type: str | None = None
    nodes: int = 1
    accelerators_per_node: int | None = None
    efa_per_node: int | Literal["all"] = 0  # "all": every interface one node of the type has
    topology: Literal["required", "preferred"] | None = None
    topology_layer: int = 3
    auto_resume: bool = False
    max_retries: int = 3


@dataclass(frozen=True)
class Placement:
    """Where the job runs and what each pod asks for, once checked."""
    instance_type: str
    accelerators: int
    efa: int


def _fleet(nodes: Sequence[NodeInfo], instance_type: str, source: str) -> list[NodeInfo]:
    fleet = [n for n in nodes if n.type_is(instance_type)]
    if not fleet:
        types = sorted({n.instance_type for n in nodes})
        raise JobSpecError(f"--cluster-nodes: {source} has no {instance_type} node; it has {', '.join(types)}")
    return fleet


def _efa(request: JobRequest, instance_type: str, fleet: list[NodeInfo] | None) -> int:
    if request.efa_per_node != "all":
        if request.efa_per_node < 0:
            raise JobSpecError(f"--efa must be 0 or more, got {request.efa_per_node}")
        return request.efa_per_node
    if fleet is not None:
        return max(n.devices.get(EFA_RESOURCE, 0) for n in fleet)
    if instance_type in EFA_MAXIMUM:
        return EFA_MAXIMUM[instance_type]
    raise JobSpecError(f"--efa all: the kit has no documented EFA count for {instance_type}; pass --efa N, or "
                       "--cluster-nodes with `kubectl get nodes -o json` output to read it from the nodes")


def _shortfall(node: NodeInfo, needs: dict[str, int]) -> str | None:
    """Why one pod of the job cannot run on this node, or None."""
    if node.health.startswith("Unschedulable"):
        return node.health
    short = [f"{node.devices.get(r, 0)} {r}" for r, amount in needs.items() if node.devices.get(r, 0) < amount]
    return f"has {', '.join(short)}" if short else None


def _check_nodes(request: JobRequest, placement: Placement, fleet: list[NodeInfo], source: str) -> None:
    spec = CATALOGUE[placement.instance_type]
    needs = {EFA_RESOURCE: placement.efa} if placement.efa else {}
    if placement.accelerators and spec.accelerator_kind:
        needs[ACCELERATOR_RESOURCES[spec.accelerator_kind]] = placement.accelerators
    reasons = {n.name: _shortfall(n, needs) for n in fleet}
    fitting = [n for n in fleet if reasons[n.name] is None]
    if len(fitting) >= request.nodes:
        if request.topology == "required":
            _check_required_topology(request, fitting, source)
        return
    if len(fitting) == len(fleet):
        raise JobSpecError(f"--nodes {request.nodes}: {source} has only {len(fleet)} {placement.instance_type} node(s)")
    asked = "give one pod " + " and ".join(f"{amount} {r}" for r, amount in needs.items()) if needs else "take a pod"
    missing = [r for r in needs if not any(n.devices.get(r) for n in fleet)]
    hint = (f"; no node advertises {', '.join(missing)} - is the HyperPod chart's device plugin for it running?"
            if missing else "")
    unfit = "; ".join(f"{name} {why}" for name, why in sorted(reasons.items()) if why)
    raise JobSpecError(f"--nodes {request.nodes}: {len(fitting)} of the {len(fleet)} {placement.instance_type} "
                       f"nodes in {source} can {asked} ({unfit}){hint}")


def _largest_domain(nodes: list[NodeInfo], layer: int) -> tuple[int, str]:
    """The most nodes under one network node of the layer, and that network node."""
    sizes: dict[str, int] = {}
    for node in nodes:
        if len(node.layers) >= layer:
            sizes[node.layers[layer - 1]] = sizes.get(node.layers[layer - 1], 0) + 1
    return max(((size, nn) for nn, size in sizes.items()), default=(0, "none"))


def _check_required_topology(request: JobRequest, fitting: list[NodeInfo], source: str) -> None:
    """Kueue keeps a required-topology job pending until every pod fits under one network node."""
    size, network_node = _largest_domain(fitting, request.topology_layer)
    if size >= request.nodes:
        return
    wider = [f"layer {layer} holds {_largest_domain(fitting, layer)[0]}" for layer in range(request.topology_layer - 1, 0, -1)]
    raise JobSpecError(f"--topology required on layer {request.topology_layer}: at most {size} of the nodes in {source} "
                       f"that fit share one layer-{request.topology_layer} network node ({network_node}), so "
                       f"--nodes {request.nodes} would wait forever; ask for fewer nodes, a lower layer number "
                       f"({', '.join(wider) or 'none'}) or --topology preferred")


def _longest_service_name(request: JobRequest) -> str:
    """The training operator gives each replica a headless Service <job>-<replica type>-<index>."""
    return f"{request.name}-worker-{request.nodes - 2}" if request.nodes > 1 else f"{request.name}-master-0"


def check(config: KitConfig, request: JobRequest, cluster_nodes: Sequence[NodeInfo] | None = None,
          nodes_source: str = "the node list") -> Placement:
    """Validate the request against the config and, if given, the cluster's nodes."""
    teams = {t.name: t for t in config.teams}
    if request.team not in teams:
        raise JobSpecError(f"--team {request.team!r} is not a team of the {config.environment} config; "
                           f"teams: {', '.join(sorted(teams)) or 'none'}")
    classes = [c.name for c in config.cluster_policy.priority_classes]
    if request.priority not in classes:
        raise JobSpecError(f"--priority {request.priority!r} is not in the cluster policy; "
                           f"classes: {', '.join(classes) or 'none (the config defines no priority classes)'}")
    cluster_types = [g.instance_type for g in config.hyperpod.instance_groups if g.count > 0]
    listed = ", ".join(sorted(set(cluster_types))) or "none (every group has count 0)"
    instance_type = request.instance_type or next(
        (q.instance_type for q in teams[request.team].quota if q.instance_type in cluster_types), None)
    if instance_type is None:
        raise JobSpecError(f"team {request.team!r} has no quota on an instance type of the cluster, so there is no "
                           f"default; pass --instance-type (instance groups have: {listed})")
    if instance_type not in cluster_types:
        raise JobSpecError(f"--instance-type {instance_type!r} is not in the cluster; instance groups have: {listed}")
    if not JOB_NAME.fullmatch(request.name):
        raise JobSpecError(f"--name {request.name!r} is not a DNS-1035 label: 1-63 lower-case letters, digits and "
                           "'-', starting with a letter and ending with a letter or digit")
    if not request.image.strip() or request.image != request.image.strip() or any(c.isspace() for c in request.image):
        raise JobSpecError(f"--image {request.image!r} is not an image reference: give one without spaces, "
                           "e.g. 123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1.0")
    if request.nodes < 1:
        raise JobSpecError(f"--nodes must be at least 1, got {request.nodes}")
    held = sum(g.count for g in config.hyperpod.instance_groups if g.instance_type == instance_type)
    if request.nodes > held:
        raise JobSpecError(f"--nodes {request.nodes}: the {config.environment} config's instance groups hold "
                           f"{held} {instance_type} instance(s)")
    if request.kind == "pytorchjob":
        service = _longest_service_name(request)
        if len(service) > MAX_DNS_LABEL:
            raise JobSpecError(f"--name {request.name!r}: the training operator names a Service {service!r} "
                               f"({len(service)} characters) and a Service name is at most {MAX_DNS_LABEL}; "
                               f"use a name of at most {MAX_DNS_LABEL - len(service) + len(request.name)} characters")
    if request.max_retries < 0:
        raise JobSpecError(f"--max-retries must be 0 or more, got {request.max_retries}")
    spec = CATALOGUE[instance_type]
    # Default: every accelerator of the node.
    wanted = spec.accelerators if request.accelerators_per_node is None else request.accelerators_per_node
    if wanted < 0:
        raise JobSpecError(f"--accelerators must be 0 or more, got {wanted}")
    if wanted > spec.accelerators:
        raise JobSpecError(f"--accelerators {wanted} per node is more than one {instance_type} has ({spec.accelerators})")
    fleet = None if cluster_nodes is None else _fleet(cluster_nodes, instance_type, nodes_source)
    efa = _efa(request, instance_type, fleet)
    if efa > EFA_MAXIMUM.get(instance_type, efa):
        raise JobSpecError(f"--efa {efa} per node is more than one {instance_type} has ({EFA_MAXIMUM[instance_type]})")
    if request.topology is not None:
        if family(instance_type) not in TOPOLOGY_FAMILIES:
            raise JobSpecError(f"--topology: {instance_type} nodes have no topology labels; supported families: "
                               f"{', '.join(TOPOLOGY_FAMILIES)}")
        if version_tuple(config.task_governance.addon_version) < MIN_TOPOLOGY_ADDON:
            raise JobSpecError(f"--topology needs task governance v1.2.2-eksbuild.1 or later; the config has "
                               f"{config.task_governance.addon_version}")
        if request.topology_layer not in (1, 2, 3, 4):
            raise JobSpecError(f"--topology-layer must be 1 to 4, got {request.topology_layer}")
    placement = Placement(instance_type=instance_type, accelerators=wanted, efa=efa)
    if fleet is not None:
        _check_nodes(request, placement, fleet, nodes_source)
    return placement


def _container(request: JobRequest, placement: Placement, name: str) -> dict[str, Any]:
    kind = CATALOGUE[placement.instance_type].accelerator_kind
    resources: dict[str, Any] = {}
    if placement.accelerators and kind:
        resources[ACCELERATOR_RESOURCES[kind]] = placement.accelerators
    if placement.efa:
        resources[EFA_RESOURCE] = placement.efa
    container: dict[str, Any] = {"name": name, "image": request.image, "command": list(request.command)}
    if resources:
        container["resources"] = {"requests": dict(resources), "limits": dict(resources)}
    return container


def _pod_template(request: JobRequest, placement: Placement, container: str, restart: str) -> dict[str, Any]:
    annotations = {}
    if request.topology is not None:
        key = f"kueue.x-k8s.io/podset-{request.topology}-topology"
        annotations[key] = f"topology.k8s.aws/network-node-layer-{request.topology_layer}"
    selector = {"node.kubernetes.io/instance-type": placement.instance_type}
    if request.auto_resume:
        selector[HEALTH_LABEL] = "Schedulable"
    template: dict[str, Any] = {"spec": {"nodeSelector": selector, "restartPolicy": restart,
                                         "containers": [_container(request, placement, container)]}}
    if annotations:
        template["metadata"] = {"annotations": annotations}
    return template


def render(config: KitConfig, request: JobRequest, cluster_nodes: Sequence[NodeInfo] | None = None,
           nodes_source: str = "the node list") -> dict[str, Any]:
    placement = check(config, request, cluster_nodes, nodes_source)
    namespace = team_namespace(request.team)
    labels = {"kueue.x-k8s.io/queue-name": f"{namespace}-localqueue",
              "kueue.x-k8s.io/priority-class": f"{request.priority}-priority"}
    metadata: dict[str, Any] = {"name": request.name, "namespace": namespace, "labels": labels}
    if request.kind == "job":
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata,
                "spec": {"parallelism": request.nodes, "completions": request.nodes, "backoffLimit": request.max_retries,
                         "template": _pod_template(request, placement, "main", "Never")}}
    if request.auto_resume:
        metadata["annotations"] = {"sagemaker.amazonaws.com/enable-job-auto-resume": "true",
                                   "sagemaker.amazonaws.com/job-max-retry-count": str(request.max_retries)}
    replicas: dict[str, Any] = {"Master": {"replicas": 1, "restartPolicy": "OnFailure",
                                           "template": _pod_template(request, placement, "pytorch", "OnFailure")}}
    if request.nodes > 1:
        replicas["Worker"] = {"replicas": request.nodes - 1, "restartPolicy": "OnFailure",
                              "template": _pod_template(request, placement, "pytorch", "OnFailure")}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": metadata,
            "spec": {"pytorchReplicaSpecs": replicas}}
