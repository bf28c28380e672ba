"""Job manifests that task governance and topology-aware scheduling act on: a PyTorchJob or a batch Job
in the team's namespace, labelled with the team's local queue and a priority class of the config.

Checks against the config before rendering: the team exists, the priority class is in the cluster
policy, the instance type is in the cluster, topology is only asked for on types that have topology
labels and with an add-on that supports it, and one pod asks for no more than one node has.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from cdk_app.config.model import KitConfig
from cdk_app.instance_types import CATALOGUE
from cdk_app.team_rbac import team_namespace
from cdk_app.topology import HEALTH_LABEL
from cdk_app.validator.rules import version_tuple

# Instance families whose nodes carry topology.k8s.aws/network-node-layer-* labels.
TOPOLOGY_FAMILIES = ("p3dn", "p4d", "p4de", "p5", "p5e", "p5en", "p6e-gb200", "trn1", "trn1n", "trn2", "trn2u")
MIN_TOPOLOGY_ADDON = (1, 2, 2)
# Maximum EFA interfaces, only where public AWS documentation states it; other types are not checked.
EFA_MAXIMUM = {"ml.p5.48xlarge": 32, "ml.p5e.48xlarge": 32, "ml.trn1.32xlarge": 8, "ml.trn1n.32xlarge": 16}
GPU_RESOURCE = {"nvidia-gpu": "nvidia.com/gpu", "aws-trainium": "aws.amazon.com/neuron"}


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
    efa_per_node: int = 0
    topology: Literal["required", "preferred"] | None = None
    topology_layer: int = 3
    auto_resume: bool = False
    max_retries: int = 3


def _family(instance_type: str) -> str:
    return instance_type.split(".")[1] if instance_type.count(".") >= 2 else instance_type


def accelerators_per_node(request: JobRequest, instance_type: str) -> int:
    """What one pod asks for: the given number, else every accelerator of the node."""
    if request.accelerators_per_node is not None:
        return request.accelerators_per_node
    return CATALOGUE[instance_type].accelerators


def check(config: KitConfig, request: JobRequest) -> str:
    """Validate the request against the config; returns the instance type the job runs on."""
    teams = {t.name: t for t in config.teams}
    if request.team not in teams:
        raise JobSpecError(f"--team {request.team!r} is not a team of the {config.environment} config; "
                           f"teams: {', '.join(sorted(teams)) or 'none'}")
    classes = [c.name for c in config.cluster_policy.priority_classes]
    if request.priority not in classes:
        raise JobSpecError(f"--priority {request.priority!r} is not in the cluster policy; "
                           f"classes: {', '.join(classes) or 'none (the config defines no priority classes)'}")
    cluster_types = [g.instance_type for g in config.hyperpod.instance_groups if g.count > 0]
    instance_type = request.instance_type or next(
        (q.instance_type for q in teams[request.team].quota if q.instance_type in cluster_types), None)
    if instance_type is None or instance_type not in cluster_types:
        raise JobSpecError(f"--instance-type {instance_type!r} is not in the cluster; "
                           f"instance groups have: {', '.join(sorted(set(cluster_types)))}")
    if request.nodes < 1:
        raise JobSpecError(f"--nodes must be at least 1, got {request.nodes}")
    spec = CATALOGUE[instance_type]
    wanted = accelerators_per_node(request, instance_type)
    if wanted > spec.accelerators:
        raise JobSpecError(f"--accelerators {wanted} per node is more than one {instance_type} has ({spec.accelerators})")
    if request.efa_per_node < 0:
        raise JobSpecError(f"--efa must be 0 or more, got {request.efa_per_node}")
    if request.efa_per_node > EFA_MAXIMUM.get(instance_type, request.efa_per_node):
        raise JobSpecError(f"--efa {request.efa_per_node} per node is more than one {instance_type} has "
                           f"({EFA_MAXIMUM[instance_type]})")
    if request.topology is not None:
        if _family(instance_type) not in TOPOLOGY_FAMILIES:
            raise JobSpecError(f"--topology: {instance_type} nodes have no topology labels; supported families: "
                               f"{', '.join(TOPOLOGY_FAMILIES)}")
        if version_tuple(config.task_governance.addon_version) < MIN_TOPOLOGY_ADDON:
            raise JobSpecError(f"--topology needs task governance v1.2.2-eksbuild.1 or later; the config has "
                               f"{config.task_governance.addon_version}")
        if request.topology_layer not in (1, 2, 3, 4):
            raise JobSpecError(f"--topology-layer must be 1 to 4, got {request.topology_layer}")
    return instance_type


def _container(config: KitConfig, request: JobRequest, instance_type: str, name: str) -> dict[str, Any]:
    spec = CATALOGUE[instance_type]
    amount = accelerators_per_node(request, instance_type)
    resources: dict[str, Any] = {}
    if amount and spec.accelerator_kind:
        resources[GPU_RESOURCE[spec.accelerator_kind]] = amount
    if request.efa_per_node:
        resources["vpc.amazonaws.com/efa"] = request.efa_per_node
    container: dict[str, Any] = {"name": name, "image": request.image, "command": list(request.command)}
    if resources:
        container["resources"] = {"requests": dict(resources), "limits": dict(resources)}
    return container


def _pod_template(config: KitConfig, request: JobRequest, instance_type: str, container: str,
                  restart: str) -> dict[str, Any]:
    annotations = {}
    if request.topology is not None:
        key = f"kueue.x-k8s.io/podset-{request.topology}-topology"
        annotations[key] = f"topology.k8s.aws/network-node-layer-{request.topology_layer}"
    selector = {"node.kubernetes.io/instance-type": instance_type}
    if request.auto_resume:
        selector[HEALTH_LABEL] = "Schedulable"
    template: dict[str, Any] = {"spec": {"nodeSelector": selector, "restartPolicy": restart,
                                         "containers": [_container(config, request, instance_type, container)]}}
    if annotations:
        template["metadata"] = {"annotations": annotations}
    return template


def render(config: KitConfig, request: JobRequest) -> dict[str, Any]:
    instance_type = check(config, request)
    namespace = team_namespace(request.team)
    labels = {"kueue.x-k8s.io/queue-name": f"{namespace}-localqueue",
              "kueue.x-k8s.io/priority-class": f"{request.priority}-priority"}
    metadata: dict[str, Any] = {"name": request.name, "namespace": namespace, "labels": labels}
    if request.kind == "job":
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata,
                "spec": {"parallelism": request.nodes, "completions": request.nodes, "backoffLimit": request.max_retries,
                         "template": _pod_template(config, request, instance_type, "main", "Never")}}
    if request.auto_resume:
        metadata["annotations"] = {"sagemaker.amazonaws.com/enable-job-auto-resume": "true",
                                   "sagemaker.amazonaws.com/job-max-retry-count": str(request.max_retries)}
    replicas: dict[str, Any] = {"Master": {"replicas": 1, "restartPolicy": "OnFailure",
                                           "template": _pod_template(config, request, instance_type, "pytorch", "OnFailure")}}
    if request.nodes > 1:
        replicas["Worker"] = {"replicas": request.nodes - 1, "restartPolicy": "OnFailure",
                              "template": _pod_template(config, request, instance_type, "pytorch", "OnFailure")}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": metadata,
            "spec": {"pytorchReplicaSpecs": replicas}}
