"""Job manifests that task governance and topology-aware scheduling act on: a PyTorchJob (elastic or
not), an MPIJob or a batch Job in the team's namespace, labelled with the team's local queue and (when
given or the team has a default) a priority class the team may use; an elastic PyTorchJob with the etcd
rendezvous also gets the etcd Service and Deployment it talks to.

Checks against the config before rendering: the team exists, the priority class is in the cluster
policy, the instance type is in the cluster and has as many nodes as asked for, topology is only asked
for on types that have topology labels and with an add-on that supports it, one pod asks for no more
than one node has, every name the operators derive from the job name is a valid Kubernetes name, and
the whole job fits in what the team can ever get (its quota plus what it may borrow) - else Kueue
would keep it pending forever. Given the cluster's nodes (`kubectl get nodes -o json`), it also checks
the GPUs, Neuron devices and EFA interfaces the nodes of that type advertise, and that enough healthy
nodes offer them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Literal

from cdk_app.config.model import KitConfig, UnqueuedPodResources
from cdk_app.config.names import local_queue, team_namespace
from cdk_app.config.storage_model import team_file_systems
from cdk_app.domain.capacity import Resources, describe, group_maximum, group_types, node_cpus
from cdk_app.domain.efa_support import has_efa
from cdk_app.domain.image_reference import reference_problem
from cdk_app.domain.instance_types import (
    CATALOGUE,
    EFA_MAXIMUM,
    MAX_TOPOLOGY_LAYERS,
    TOPOLOGY_FAMILIES,
    TOPOLOGY_LAYERS,
    family,
)
from cdk_app.domain.mount_paths import ALLOWED, bad_mount_path
from cdk_app.domain.reach import ABSOLUTE_LIMIT, BORROW_LIMIT, SHARING_DISABLED, team_reach
from cdk_app.domain.system_nodes import system_group
from cdk_app.domain.versions import version_tuple
from cdk_app.kubernetes.guardrails.constants import (
    DEVICE_ENV_OFF,
    GPU_FEATURES_OFF_ENV,
    HIDE_GPUS_ENV,
    PRIORITY_LABEL,
    QUEUE_LABEL,
    gpus_hidden_by_manifest,
)
from cdk_app.kubernetes.guardrails.team_scope import allowed_priority_classes, priority_label
from cdk_app.kubernetes.job_partitions import (
    MIG_STATE_LABEL,
    MIG_STATE_READY,
    parse_mig,
    partition_limits,
    partition_request_problem,
    whole_gpu_problem,
)
from cdk_app.kubernetes.quantity import GIB, QuantityOutOfRange, parse_quantity
from cdk_app.kubernetes.topology import (
    ACCELERATOR_RESOURCES,
    EFA_RESOURCE,
    HEALTH_LABEL,
    INSTANCE_TYPE_LABELS,
    NodeInfo,
    domain_name,
    domains,
)
from cdk_app.support.refusal import OptionError

MIN_TOPOLOGY_ADDON = (1, 2, 2)
# The training operator names a Service after each replica, so the job name must be a DNS-1035 label.
JOB_NAME = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
DNS_LABEL_MAX = 63
# Environment variable names the API server accepted before 1.30 (and every shell does).
ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
PVC_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
# HyperPod job auto-resume works through the Kubeflow training operator's PyTorchJob only (AWS docs,
# "Running jobs using kubectl": job auto-resume for Kubeflow PyTorch training).
AUTO_RESUME_KINDS = ("pytorchjob",)
# --kind as refusals name it: the object's Kubernetes kind, with its article.
A_KIND = {"pytorchjob": "a PyTorchJob", "mpijob": "an MPIJob", "job": "a Job"}
AUTO_RESUME_ANNOTATIONS = ("sagemaker.amazonaws.com/enable-job-auto-resume", "sagemaker.amazonaws.com/job-max-retry-count")
# etcd v3.5 is the last line with the v2 API torch's etcd rendezvous needs (--enable-v2); pinned, not :latest.
ETCD_IMAGE = "quay.io/coreos/etcd:v3.5.17"
ETCD_PORT = 2379
# What the etcd rendezvous asks for (its Deployment is unqueued: the team's unqueued_pods caps apply).
ETCD_REQUESTS = {"cpu": "250m", "memory": "256Mi"}
C10D_PORT = 29400
SHM_MOUNT = "/dev/shm"
# Where --scratch mounts its node-local emptyDir unless given a path (docs/how-to/storage.md).
SCRATCH_MOUNT = "/scratch"


INT32_MAX = 2**31 - 1  # Kubernetes backoffLimit fields are int32


class JobSpecError(Exception):
    """A job the config does not allow; the message names the option and what is allowed."""


class JobOptionError(JobSpecError, OptionError):
    """A job no config allows: a malformed or out-of-range option value, or options that contradict each
    other (a usage error, exit 2; cdk_app/support/refusal.py). `check_options` finds them all."""


@dataclass(frozen=True)
class Volume:
    """A PersistentVolumeClaim of the team's namespace (the claim of one of its file systems, which the kit makes) and
    where it goes."""
    claim: str
    mount_path: str
    read_only: bool = False


@dataclass(frozen=True)
class JobRequest:
    team: str
    priority: str | None  # None: the team's default_priority_class, else no priority label
    name: str
    image: str
    command: tuple[str, ...]
    kind: Literal["pytorchjob", "mpijob", "job"] = "pytorchjob"
    instance_type: str | None = None
    nodes: int = 1
    accelerators_per_node: int | None = None
    efa_per_node: int | Literal["all"] = 0  # "all": every interface one node of the type has
    topology: Literal["required", "preferred"] | None = None
    topology_layer: int = 3
    auto_resume: bool = False
    max_retries: int = 3
    # Elastic PyTorchJob: set either bound (the other defaults to --nodes). None, None: not elastic.
    min_nodes: int | None = None
    max_nodes: int | None = None
    rdzv_backend: Literal["c10d", "etcd"] | None = None  # None: c10d for an elastic job
    env: tuple[tuple[str, str], ...] = ()
    volumes: tuple[Volume, ...] = ()
    shm: str | None = None  # size of a memory-backed /dev/shm, a Kubernetes quantity
    scratch: str | None = None  # size of a node-local (disk) emptyDir, a Kubernetes quantity
    scratch_path: str = SCRATCH_MOUNT  # where it is mounted
    cpu: str | None = None  # per pod requests, Kubernetes quantities
    memory: str | None = None
    mig: tuple[str, int] | None = None  # (MIG profile, partitions per pod) instead of whole GPUs

    @property
    def elastic(self) -> bool:
        return self.min_nodes is not None or self.max_nodes is not None


def parse_env(text: str) -> tuple[str, str]:
    """--env KEY=VALUE."""
    name, sep, value = text.partition("=")
    if not sep:
        raise JobOptionError(f"--env {text!r}: give KEY=VALUE")
    return name, value


def parse_volume(text: str) -> Volume:
    """--volume CLAIM:MOUNT_PATH[:ro]."""
    parts = text.split(":")
    if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "ro"):
        raise JobOptionError(f"--volume {text!r}: give PVC:MOUNT_PATH or PVC:MOUNT_PATH:ro")
    return Volume(parts[0], parts[1], len(parts) == 3)


def parse_scratch(text: str) -> tuple[str, str]:
    """--scratch SIZE[:MOUNT_PATH] -> (size, mount path); a quantity has no ':'."""
    size, sep, path = text.partition(":")
    if not size or (sep and not path) or ":" in path:
        raise JobOptionError(f"--scratch {text!r}: give SIZE or SIZE:MOUNT_PATH (e.g. 500Gi or 500Gi:/tmp/work)")
    return size, path or SCRATCH_MOUNT


@dataclass(frozen=True)
class Placement:
    """Where the job runs and what each pod asks for, once checked."""
    instance_type: str
    accelerators: int
    efa: int
    node_vcpu: int  # the vCPUs of the type's fewest-CPU node, with its group's threads_per_core (capacity.node_cpus)
    hide_gpus: bool = True  # GPU-less containers hide the image's GPUs (guardrails.constants.gpus_hidden_by_manifest)


def _fleet(nodes: Sequence[NodeInfo], instance_type: str, source: str) -> list[NodeInfo]:
    """The nodes of the type: the job's pods select node.kubernetes.io/instance-type, so a node not (yet)
    labelled with it - the cloud controller labels a new node after it registers - takes none of them."""
    fleet = [n for n in nodes if n.type_is(instance_type)]
    if not fleet:
        types = sorted({n.instance_type for n in nodes if n.instance_type != "unknown"})
        untyped = sum(n.instance_type == "unknown" for n in nodes)
        has = ", ".join(types + ([f"{untyped} node(s) without a {INSTANCE_TYPE_LABELS[0]} label, which the job's "
                                  "pods cannot select"] if untyped else []))
        raise JobSpecError(f"--cluster-nodes: {source} has no {instance_type} node; it has {has}")
    return fleet


def _efa(request: JobRequest, instance_type: str, fleet: list[NodeInfo] | None, source: str) -> int:
    """EFA interfaces per pod. One rule for --efa N and --efa all: asking any of nodes that have none is
    refused - the node list is the authority when given, else the type's EFA support."""
    asked = request.efa_per_node
    if asked == 0:
        return 0
    if fleet is not None:
        most = max(n.devices.get(EFA_RESOURCE, 0) for n in fleet)
        if most == 0:
            others = sorted({r for n in fleet for r, count in n.devices.items() if count and r != EFA_RESOURCE})
            spans = {r: (min(c), max(c)) for r in others for c in [[n.devices.get(r, 0) for n in fleet]]}
            advertised = [f"{low} to {high} {r}" if low != high else f"{low} {r}" for r, (low, high) in spans.items()]
            remedy = (f"drop --efa ({_NO_EFA.format(instance_type)})" if not has_efa(instance_type)
                      else "is the HyperPod chart's EFA device plugin running on them?")
            raise JobSpecError(f"--efa {asked}: none of the {len(fleet)} {instance_type} nodes in {source} advertises "
                               f"{EFA_RESOURCE} (they advertise {', '.join(advertised) or 'no device'}); {remedy}")
        return most if asked == "all" else asked
    if not has_efa(instance_type):
        raise JobSpecError(f"--efa {asked}: {_NO_EFA.format(instance_type)}: drop --efa")
    if asked != "all":
        return asked
    if instance_type in EFA_MAXIMUM:
        return EFA_MAXIMUM[instance_type]
    raise JobSpecError(f"--efa all: the kit has no documented EFA count for {instance_type}; pass --efa N, or "
                       "--cluster-nodes with `kubectl get nodes -o json` output to read it from the nodes")


_NO_EFA = ("{} has no EFA interface (the EFA device plugin advertises vpc.amazonaws.com/efa only on EFA instance "
           "types)")


def _shortfall(node: NodeInfo, needs: dict[str, int], auto_resume: bool) -> str | None:
    """Why one pod of the job cannot run on this node, or None. An --auto-resume pod selects nodes labelled
    healthy (_pod_template's nodeSelector), so for it a node without that label is no place either."""
    if node.health.startswith("Unschedulable"):
        return node.health
    if auto_resume and node.health != "Schedulable":
        return f"health {node.health} (--auto-resume pods select only nodes labelled {HEALTH_LABEL}=Schedulable)"
    short = [f"{node.devices.get(r, 0)} {r}" for r, amount in needs.items() if node.devices.get(r, 0) < amount]
    return f"has {', '.join(short)}" if short else None


def _check_nodes(request: JobRequest, placement: Placement, fleet: list[NodeInfo], source: str) -> None:
    spec = CATALOGUE[placement.instance_type]
    needs = {EFA_RESOURCE: placement.efa} if placement.efa else {}
    if placement.accelerators and spec.accelerator_kind:
        needs[ACCELERATOR_RESOURCES[spec.accelerator_kind]] = placement.accelerators
    reasons = {n.name: _shortfall(n, needs, request.auto_resume) for n in fleet}
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
    """The most nodes in one topology domain of the layer (topology.domains, what `topology` shows), and
    that domain; a tie: the first in order."""
    key, size = max(((k, len(v)) for k, v in domains(nodes, layer).items()), key=lambda pair: pair[1],
                    default=((), 0))
    return size, domain_name(key) if key else "none"


def _check_required_topology(request: JobRequest, fitting: list[NodeInfo], source: str) -> None:
    """Kueue keeps a required-topology job pending until every pod fits in one domain of the layer."""
    size, network_node = _largest_domain(fitting, request.topology_layer)
    if size >= request.nodes:
        return
    wider = [f"layer {layer} holds {_largest_domain(fitting, layer)[0]}" for layer in range(request.topology_layer - 1, 0, -1)]
    raise JobSpecError(f"--topology required on layer {request.topology_layer}: at most {size} of the nodes in {source} "
                       f"that fit share one layer-{request.topology_layer} network node ({network_node}), so "
                       f"--nodes {request.nodes} would wait forever; ask for fewer nodes, a lower layer number "
                       f"({', '.join(wider) or 'none'}) or --topology preferred")


def parse_mig_option(text: str) -> tuple[str, int]:
    """--mig PROFILE[:COUNT]."""
    try:
        return parse_mig(text)
    except ValueError as err:
        raise JobOptionError(str(err)) from None


def check_options(request: JobRequest) -> None:
    """What no config allows (JobOptionError, a usage error): malformed or out-of-range option values and
    options that contradict each other. Needs no config, so `job` runs it before reading one."""
    _check_shape_options(request)
    _check_names(request)
    _check_env_and_volumes(request)
    if request.accelerators_per_node is not None and request.accelerators_per_node < 0:
        raise JobOptionError(f"--accelerators must be 0 or more, got {request.accelerators_per_node}")
    if request.mig is not None and request.accelerators_per_node:
        # The options contradict each other whatever the config says: a usage error, judged before it is read.
        raise JobOptionError(f"--mig {request.mig[0]} with --accelerators {request.accelerators_per_node}: a pod asks "
                             "for whole GPUs or for partitions, not both (a partitioned GPU is offered only as its "
                             "partitions); leave out one of them")
    if request.efa_per_node != "all" and request.efa_per_node < 0:
        raise JobOptionError(f"--efa must be 0 or more, got {request.efa_per_node}")
    if request.topology is not None and not 1 <= request.topology_layer <= MAX_TOPOLOGY_LAYERS:
        raise JobOptionError(f"--topology-layer must be 1 to {MAX_TOPOLOGY_LAYERS}, got {request.topology_layer}")
    for option, attribute, precision in QUANTITY_OPTIONS:
        _quantity_value(option, getattr(request, attribute), precision)


def job_priority(config: KitConfig, request: JobRequest) -> str | None:
    """The job's priority class: --priority, else the team's default_priority_class, else none (no label,
    lowest priority) unless the config requires one. Refuses a class the team's guardrail would refuse."""
    team = next(t for t in config.teams if t.name == request.team)
    chosen = request.priority or team.default_priority_class
    allowed = allowed_priority_classes(config, team.name)
    if chosen is None:
        if config.cluster_policy.require_priority_class:
            raise JobSpecError(f"--priority is required: the config sets cluster_policy.require_priority_class and team "
                               f"{team.name!r} has no default_priority_class; classes: {', '.join(allowed) or 'none'}")
        return None
    classes = [c.name for c in config.cluster_policy.priority_classes]
    if chosen not in classes:
        raise JobSpecError(f"--priority {chosen!r} is not in the cluster policy; "
                           f"classes: {', '.join(classes) or 'none (the config defines no priority classes)'}")
    if chosen not in allowed:
        raise JobSpecError(f"--priority {chosen!r} is not one of the priority_classes of team {team.name}; "
                           f"classes: {', '.join(allowed) or 'none'}")
    return chosen


def priority_note(config: KitConfig, request: JobRequest) -> str | None:
    """The decision job_priority makes without a word when neither --priority nor the team's default names a
    class although the team may use some: said out loud, with the classes to choose from."""
    team = next(t for t in config.teams if t.name == request.team)
    allowed = allowed_priority_classes(config, team.name)
    if request.priority or team.default_priority_class or not allowed:
        return None
    return (f"note: no priority label written: team {team.name} has no default_priority_class and --priority was not "
            f"given, so the job runs below every priority class ({', '.join(allowed)}) and does not show on the "
            f"console's task dashboard; choose one with --priority, or set default_priority_class for team {team.name}")


def _check_names(request: JobRequest) -> None:
    if not request.image.strip() or any(c.isspace() for c in request.image):
        raise JobOptionError(f"--image {request.image!r}: give a container image reference (not empty, no spaces)")
    problem = reference_problem(request.image)
    if problem:
        raise JobOptionError(f"--image {request.image!r}: give a container image reference (not empty, no spaces) "
                             f"the kubelet can pull: {problem}")
    if not JOB_NAME.fullmatch(request.name):
        raise JobOptionError(f"--name {request.name!r} is not a DNS-1035 label: 1-63 lower-case letters, digits and "
                           "'-', starting with a letter and ending with a letter or digit")
    for derived, what in sorted(derived_names(request), key=lambda pair: -len(pair[0])):
        if len(derived) > DNS_LABEL_MAX:
            room = DNS_LABEL_MAX - (len(derived) - len(request.name))
            raise JobOptionError(f"--name {request.name!r} is too long: {what} would be {derived!r} ({len(derived)} "
                               f"characters, at most {DNS_LABEL_MAX}); use at most {room} characters")


def elastic_bounds(request: JobRequest) -> tuple[int, int]:
    """(min, max) nodes of an elastic PyTorchJob; a bound not given is --nodes."""
    low = request.nodes if request.min_nodes is None else request.min_nodes
    high = request.nodes if request.max_nodes is None else request.max_nodes
    return low, high


def derived_names(request: JobRequest) -> list[tuple[str, str]]:
    """Names the operators (and the kit) make from the job name that must be DNS labels: the training
    operator's per-replica Services and pod hostnames, the MPI operator's launcher and worker pods."""
    name = request.name
    if request.kind == "mpijob":
        return [(f"{name}-launcher", "the MPI operator's launcher Job"),
                (f"{name}-worker-{request.nodes - 1}", "the MPI operator's last worker pod hostname")]
    if request.kind != "pytorchjob":
        return []
    if request.elastic:
        names = [(f"{name}-worker-{elastic_bounds(request)[1] - 1}", "the training operator's last worker Service")]
        if request.rdzv_backend == "etcd":
            names.append((f"{name}-etcd", "the etcd rendezvous Service"))
        return names
    names = [(f"{name}-master-0", "the training operator's master Service")]
    if request.nodes > 1:
        names.append((f"{name}-worker-{request.nodes - 2}", "the training operator's last worker Service"))
    return names


def _check_shape_options(request: JobRequest) -> None:
    """Nodes, retries, elasticity and auto-resume against each other and the kind."""
    if request.nodes < 1:
        raise JobOptionError(f"--nodes must be at least 1, got {request.nodes}")
    if request.max_retries < 0:
        raise JobOptionError(f"--max-retries must be 0 or more, got {request.max_retries}")
    if request.max_retries > INT32_MAX:
        raise JobOptionError(f"--max-retries {request.max_retries}: at most {INT32_MAX} (backoffLimit is an int32)")
    if request.auto_resume and request.kind not in AUTO_RESUME_KINDS:
        raise JobOptionError(f"--auto-resume: HyperPod job auto-resume works for PyTorchJob only (through the Kubeflow "
                           f"training operator); {A_KIND[request.kind]} would not be resumed - drop --auto-resume or use "
                           "--kind pytorchjob")
    if request.rdzv_backend is not None and not request.elastic:
        raise JobOptionError(f"--rdzv-backend {request.rdzv_backend}: only an elastic PyTorchJob (--min-nodes/--max-nodes) "
                           "has a rendezvous backend")
    if request.elastic:
        if request.kind != "pytorchjob":
            raise JobOptionError(f"--min-nodes/--max-nodes: only a PyTorchJob is elastic, not {A_KIND[request.kind]}")
        low, high = elastic_bounds(request)
        if not 1 <= low <= request.nodes <= high:
            raise JobOptionError(f"--min-nodes {low}, --nodes {request.nodes}, --max-nodes {high}: need "
                                 "1 <= min-nodes <= nodes <= max-nodes (--nodes, 1 when not given, is the size the "
                                 "job starts at; a bound not given is --nodes)")


def _check_shape(config: KitConfig, request: JobRequest, instance_type: str) -> None:
    """The most nodes the job may hold against the config's instance groups of the type."""
    largest, option = request.nodes, "--nodes"
    if request.elastic and elastic_bounds(request)[1] > largest:
        largest, option = elastic_bounds(request)[1], "--max-nodes"
    # The most each group may hold (an autoscaled group's max_count; a flexible group under each of its types).
    system = system_group(config)
    groups = [g for g in config.hyperpod.instance_groups if instance_type in group_types(g) and g is not system]
    total = sum(group_maximum(g) for g in groups)
    if largest > total:
        raise JobSpecError(f"{option} {largest}: the config's instance groups have {total} {instance_type} node(s) "
                           f"({', '.join(f'{g.name}: {group_maximum(g)}' for g in groups)}); one pod runs per node")


def _check_device_env(request: JobRequest) -> None:
    """Variables that select devices: the team namespace's guardrail (device-env) refuses them."""
    for name, value in request.env:
        if name in DEVICE_ENV_OFF and value not in DEVICE_ENV_OFF[name]:
            allowed = " or ".join(repr(v) for v in DEVICE_ENV_OFF[name])
            raise JobSpecError(f"--env {name}: selects devices no resource request counts, so the team namespace's "
                               f"guardrail (device-env) refuses it (it may only be {allowed}); ask for devices with "
                               "--accelerators and --efa")


def _check_env_and_volumes(request: JobRequest) -> None:
    seen: set[str] = set()
    for name, _value in request.env:
        if not ENV_NAME.fullmatch(name):
            raise JobOptionError(f"--env {name}=...: a variable name is letters, digits, '_', '-' and '.', not "
                                 "starting with a digit")
        if name in seen:
            raise JobOptionError(f"--env {name}: given twice")
        seen.add(name)
    paths: set[str] = set()
    if request.scratch is not None:
        where = f"--scratch {request.scratch}:{request.scratch_path}"
        if _normal_path(request.scratch_path) == SHM_MOUNT:
            raise JobOptionError(f"{where}: use --shm SIZE for shared memory")
        if bad_mount_path(request.scratch_path):
            raise JobOptionError(f"{where}: the mount path must be {ALLOWED}")
        paths.add(_normal_path(request.scratch_path))
    for volume in request.volumes:
        if not PVC_NAME.fullmatch(volume.claim):
            raise JobOptionError(f"--volume {volume.claim}:...: the claim must be a PersistentVolumeClaim name "
                                 "(lower-case letters, digits, '-' and '.')")
        path = _normal_path(volume.mount_path)
        if path == SHM_MOUNT:
            raise JobOptionError(f"--volume {volume.claim}:{volume.mount_path}: use --shm SIZE for shared memory")
        if bad_mount_path(volume.mount_path):
            raise JobOptionError(f"--volume {volume.claim}:{volume.mount_path}: the mount path must be {ALLOWED}")
        if path in paths:
            raise JobOptionError(f"--volume {volume.claim}:{volume.mount_path}: something is already mounted there"
                                 f"{' (--scratch)' if request.scratch is not None and path == _normal_path(request.scratch_path) else ''}")
        if request.scratch is not None and _inside(request.scratch_path, volume.mount_path):
            raise JobOptionError(f"--scratch {request.scratch}:{request.scratch_path}: {_SCRATCH_INSIDE} "
                                 f"(--volume {volume.claim}:{volume.mount_path}); give it a path of its own, e.g. "
                                 f"--scratch {request.scratch}:{SCRATCH_MOUNT}")
        paths.add(path)


# A scratch emptyDir mounted inside another volume's path is legal to Kubernetes but misleads: it hides that
# directory of the volume, and what the job writes there stays on the node's disk and is gone with the pod.
_SCRATCH_INSIDE = ("the path is inside another volume's mount, where node-local scratch would hide that directory "
                   "of the volume and what the job writes there would be lost with the pod")


def _inside(inner: str, outer: str) -> bool:
    """Whether `inner` is a path strictly below `outer` (compared as the runtime mounts them)."""
    inner, outer = _normal_path(inner), _normal_path(outer)
    return inner.startswith(outer.rstrip("/") + "/") and inner != outer


def _normal_path(path: str) -> str:
    """The runtime mounts /dev//shm/. where /dev/shm is: paths compare without empty and "." segments."""
    return "/" + "/".join(part for part in path.split("/") if part not in ("", "."))


def with_team_volumes(config: KitConfig, request: JobRequest) -> JobRequest:
    """The job with its team's file systems (storage section) mounted, each at its mount_path, unless --volume
    mounts that claim itself. The claims exist: the kit makes them (team_volumes.py). A --volume of another claim
    at one of those paths is refused: the team's file system is mounted there."""
    given = {volume.claim for volume in request.volumes}
    paths = {_normal_path(volume.mount_path): volume for volume in request.volumes}
    added = []
    for file_system in team_file_systems(config.storage, request.team):
        if file_system.name in given:
            continue
        if request.scratch is not None and _normal_path(request.scratch_path) == _normal_path(file_system.job_mount_path):
            raise JobSpecError(f"--scratch {request.scratch}: team {request.team}'s file system {file_system.name} is "
                               f"mounted at {file_system.job_mount_path} (storage.file_systems); give the scratch space "
                               f"another path: --scratch {request.scratch}:/local-scratch")
        if request.scratch is not None and _inside(request.scratch_path, file_system.job_mount_path):
            raise JobSpecError(f"--scratch {request.scratch}:{request.scratch_path}: {_SCRATCH_INSIDE} (team "
                               f"{request.team}'s file system {file_system.name} at {file_system.job_mount_path}, "
                               f"storage.file_systems); give it a path of its own, e.g. --scratch "
                               f"{request.scratch}:/local-scratch")
        taken = paths.get(_normal_path(file_system.job_mount_path))
        if taken is not None:
            raise JobSpecError(f"--volume {taken.claim}:{taken.mount_path}: team {request.team}'s file system "
                               f"{file_system.name} is mounted there (storage.file_systems); mount {taken.claim} elsewhere, "
                               f"or give --volume {file_system.name}:PATH to mount the file system elsewhere")
        added.append(Volume(file_system.name, file_system.job_mount_path))
    return replace(request, volumes=(*request.volumes, *added)) if added else request


# The smallest amount Kubernetes represents for each: CPU in millicores, memory in bytes (the API server warns
# that a fractional byte is invalid; the kubelet rounds CPU to 1m).
CPU_PRECISION, BYTE_PRECISION = Fraction(1, 1000), Fraction(1)


def _quantity_value(option: str, text: str | None, precision: Fraction) -> Fraction:
    """The option's quantity in base units, positive and in whole steps of `precision`; 0 when not given. Its
    text is a Kubernetes quantity exactly: no surrounding space, as the API server reads one."""
    if text is None:
        return Fraction(0)
    try:
        value = parse_quantity(text)
    except QuantityOutOfRange as err:
        if err.tiny:
            raise JobOptionError(f"{option} {err}, far below {_step(precision)}, the smallest amount Kubernetes "
                                 "represents") from None
        raise JobOptionError(f"{option} {err}: no node has anything near that much") from None
    if value is None or value <= 0:
        raise JobOptionError(f"{option} {text!r} is not a positive Kubernetes quantity (e.g. 500m or 4 for CPU, "
                             "512Mi or 16Gi for memory; no spaces)")
    if (value / precision).denominator != 1:
        raise JobOptionError(f"{option} {text} is not a whole number of {_step(precision)}, the smallest amount "
                             "Kubernetes represents; round it")
    return value


def _step(precision: Fraction) -> str:
    return "1m (a thousandth of a CPU)" if precision == CPU_PRECISION else "1 byte"


QUANTITY_OPTIONS = (("--cpu", "cpu", CPU_PRECISION), ("--memory", "memory", BYTE_PRECISION),
                    ("--shm", "shm", BYTE_PRECISION), ("--scratch", "scratch", BYTE_PRECISION))


def _quantity(option: str, text: str | None, unit: int, most: Fraction, instance_type: str,
              precision: Fraction = BYTE_PRECISION, why: str = "") -> Fraction:
    """A quantity (in `unit`s) that fits in one node; 0 when not given. `why`: what makes `most` less than the
    type's own figure."""
    value = _quantity_value(option, text, precision) / unit
    if value > most:
        raise JobSpecError(f"{option} {text} per pod is more than one {instance_type} has "
                           f"({_number(most)}{'' if unit == 1 else 'Gi'}{why})")
    return value


def _number(value: Fraction) -> str:
    return str(int(value)) if value.denominator == 1 else f"{float(value):.3g}"


def per_pod(request: JobRequest, placement: Placement) -> Resources:
    """What one pod asks for, on the scale of a team's quota (accelerators, vCPU, GiB)."""
    spec = CATALOGUE[placement.instance_type]
    # With threads_per_core 1 a node has half the type's vCPU: a pod asking for more is never scheduled.
    halved = (f": its group's threads_per_core 1 leaves half the type's {spec.vcpu} vCPU"
              if placement.node_vcpu < spec.vcpu else "")
    cpu = _quantity("--cpu", request.cpu, 1, Fraction(placement.node_vcpu), placement.instance_type, CPU_PRECISION,
                    halved)
    memory = _quantity("--memory", request.memory, GIB, Fraction(spec.memory_gib), placement.instance_type)
    _quantity("--shm", request.shm, GIB, Fraction(spec.memory_gib), placement.instance_type)
    return Resources(Fraction(0), Fraction(placement.accelerators if spec.accelerator_kind else 0), cpu, memory)


def job_need(request: JobRequest, pod: Resources) -> Resources:
    """What Kueue counts for the whole job on the team's quota: every worker pod, and an MPIJob's launcher (one
    more pod on the same instance type, with the workers' vCPU and memory requests and no devices)."""
    need = pod.scaled(Fraction(request.nodes))
    if request.kind == "mpijob":
        need = need + Resources(Fraction(0), Fraction(0), pod.vcpu, pod.memory_gib)
    return need


def _check_reach(config: KitConfig, request: JobRequest, placement: Placement, pod: Resources) -> None:
    """Refuse a job bigger than the team's quota plus all it may borrow: Kueue never admits it."""
    itype = placement.instance_type
    row = next((r for r in team_reach(config) if r.team == request.team and r.instance_type == itype), None)
    need = job_need(request, pod)
    reach = row.reach if row is not None else Resources()
    over = [d for d in ("accelerators", "vcpu", "memory_gib") if getattr(need, d) > getattr(reach, d)]
    if not over:
        return
    dim = over[0]
    if row is None:
        why = (f"team {request.team!r} has no quota for {itype}, and a team borrows only on instance types it has "
               "a quota for (its borrow_limit is a percent of that quota)")
    elif row.capped_by == SHARING_DISABLED:
        why = (f"its quota is {describe(getattr(row.quota, dim), dim)} and no team borrows while "
               "cluster_policy.idle_resource_sharing is Disabled")
    elif row.borrow_limit is None:
        why = f"its quota is {describe(getattr(row.quota, dim), dim)} and a {row.strategy} team does not borrow"
    else:
        borrowed = getattr(row.reach, dim) - getattr(row.quota, dim)
        cap = (f"borrow_limit {row.borrow_limit}%" if row.capped_by == BORROW_LIMIT
               else "its absolute_borrow_limits entry" if row.capped_by == ABSOLUTE_LIMIT
               else "all that the lending teams and the unallocated capacity hold")
        why = (f"its quota {describe(getattr(row.quota, dim), dim)} + at most {describe(borrowed, dim)} borrowed "
               f"({cap}) = {describe(getattr(row.reach, dim), dim)}")
    launcher = " + the MPI launcher's" if request.kind == "mpijob" and dim != "accelerators" else ""
    raise JobSpecError(f"--nodes {request.nodes} x {describe(getattr(pod, dim), dim)} per pod{launcher} = "
                       f"{describe(getattr(need, dim), dim)} of {itype}, more than team {request.team!r} can ever get: "
                       f"{why}; Kueue would keep the job pending forever")


def scratch_note(config: KitConfig, request: JobRequest, placement: Placement) -> str | None:
    """When --scratch asks for more than the secondary EBS volume of every group of the job's type: the space is
    there only if the type's instance store is that large, which the kit cannot tell (its catalogue has no
    instance-store sizes), so it says so rather than refuse. A pod whose emptyDir passes its sizeLimit, or that
    fills the node's disk, is evicted by the kubelet."""
    if request.scratch is None:
        return None
    asked = _quantity_value("--scratch", request.scratch, BYTE_PRECISION)
    volumes = [g.ebs_volume_gib for g in config.hyperpod.instance_groups if placement.instance_type in group_types(g)]
    largest = max(volumes, default=0)
    if not volumes or asked <= largest * 2**30:
        return None
    return (f"note: --scratch {request.scratch} is more than the {largest} GiB secondary EBS volume of the "
            f"{placement.instance_type} nodes (ebs_volume_gib); it fits only on an instance-store NVMe that large, which "
            "the kit cannot check - the kubelet evicts a pod that fills the node's disk. Ask for less, or raise "
            "ebs_volume_gib of the group")


def borrowing_note(config: KitConfig, request: JobRequest, placement: Placement) -> str | None:
    """When the job needs more than its team's quota (within what it may borrow, which check() made sure of):
    it can only run on borrowed capacity, which the lenders can take back - by preempting it."""
    itype = placement.instance_type
    row = next((r for r in team_reach(config) if r.team == request.team and r.instance_type == itype), None)
    if row is None:
        return None
    need = job_need(request, per_pod(request, placement))
    over = [d for d in ("accelerators", "vcpu", "memory_gib") if getattr(need, d) > getattr(row.quota, d)]
    if not over:
        return None
    dim = over[0]
    return (f"note: the job needs {describe(getattr(need, dim), dim)} of {itype}, above the quota of team {request.team} "
            f"of {describe(getattr(row.quota, dim), dim)}: it runs only while it can borrow the rest, and a team that "
            "lends it can take it back by preempting the job (hyperpod-kit simulate shows when)")


def check(config: KitConfig, request: JobRequest, cluster_nodes: Sequence[NodeInfo] | None = None,
          nodes_source: str = "the node list") -> Placement:
    """Validate the request: its options (JobOptionError), then against the config and, if given, the
    cluster's nodes (JobSpecError)."""
    check_options(request)
    teams = {t.name: t for t in config.teams}
    if request.team not in teams:
        raise JobSpecError(f"--team {request.team!r} is not a team of the {config.environment} config; "
                           f"teams: {', '.join(sorted(teams)) or 'none'}")
    if not teams[request.team].enabled:
        raise JobSpecError(f"team {request.team!r} is disabled (enabled: false): task governance makes no queue for "
                           "a disabled compute allocation, so Kueue admits none of its jobs; enable the team first")
    job_priority(config, request)
    with_team_volumes(config, request)
    system = system_group(config)
    # The system group's taint keeps every team pod off its nodes: its type is no choice for a team's job.
    cluster_types = [t for g in config.hyperpod.instance_groups if group_maximum(g) > 0 and g is not system
                     for t in group_types(g)]
    listed = ", ".join(sorted(set(cluster_types))) or "none (every group has count 0 and no max_count)"
    instance_type = request.instance_type or next(
        (q.instance_type for q in teams[request.team].quota if q.instance_type in cluster_types), None)
    if instance_type is None:
        raise JobSpecError(f"team {request.team!r} has no quota on an instance type of the cluster, so there is no "
                           f"default; pass --instance-type (instance groups have: {listed})")
    if instance_type not in cluster_types and system is not None and instance_type in group_types(system):
        raise JobSpecError(f"--instance-type {instance_type!r}: only the administrators' system group {system.name!r} "
                           f"has it, whose taint keeps team pods off; instance groups for teams have: {listed}")
    if instance_type not in cluster_types:
        raise JobSpecError(f"--instance-type {instance_type!r} is not in the cluster; instance groups have: {listed}")
    _check_shape(config, request, instance_type)
    _check_device_env(request)
    spec = CATALOGUE[instance_type]
    # Default: every accelerator of the node; none for a job on partitions.
    wanted = request.accelerators_per_node or 0 if request.mig else (
        spec.accelerators if request.accelerators_per_node is None else request.accelerators_per_node)
    if request.mig is not None:
        problem = partition_request_problem(config, request.team, instance_type, request.mig, request.nodes)
        if problem:
            raise JobSpecError(problem)
    elif wanted and (problem := whole_gpu_problem(config, instance_type)):
        raise JobSpecError(problem)
    if wanted > spec.accelerators:
        raise JobSpecError(f"--accelerators {wanted} per node is more than one {instance_type} has ({spec.accelerators})")
    if request.topology is not None:
        if family(instance_type) not in TOPOLOGY_FAMILIES:
            raise JobSpecError(f"--topology: {instance_type} nodes have no topology labels; supported families: "
                               f"{', '.join(TOPOLOGY_FAMILIES)}")
        if version_tuple(config.task_governance.addon_version) < MIN_TOPOLOGY_ADDON:
            raise JobSpecError(f"--topology needs task governance v1.2.2-eksbuild.1 or later; the config has "
                               f"{config.task_governance.addon_version}")
        layers = TOPOLOGY_LAYERS[family(instance_type)]
        if request.topology_layer > layers:
            # Nodes carry one label per layer of their type's EC2 instance topology: Kueue would find no domain.
            raise JobSpecError(f"--topology-layer {request.topology_layer}: {instance_type} nodes carry network-node "
                               f"layers 1 to {layers} only (EC2 instance topology of the type); use 1 to {layers}")
    fleet = None if cluster_nodes is None else _fleet(cluster_nodes, instance_type, nodes_source)
    efa = _efa(request, instance_type, fleet, nodes_source)
    if efa > EFA_MAXIMUM.get(instance_type, efa):
        raise JobSpecError(f"--efa {efa} per node is more than one {instance_type} has ({EFA_MAXIMUM[instance_type]})")
    placement = Placement(instance_type=instance_type, accelerators=wanted, efa=efa,
                          node_vcpu=node_cpus(config)[instance_type][0], hide_gpus=gpus_hidden_by_manifest(config))
    pod = per_pod(request, placement)
    if fleet is not None:
        _check_nodes(request, placement, fleet, nodes_source)
    if pod.is_zero() and request.mig is None:
        # Kueue admits a workload that requests nothing without counting it against any quota: the pods would
        # run unaccounted on the team's (or another team's) nodes.
        spec = CATALOGUE[instance_type]
        raise JobSpecError(f"the job requests no accelerators, CPU or memory on {instance_type}, so Kueue would "
                           "admit it without counting it against the team's quota; pass --cpu and --memory "
                           f"(one {instance_type} node has {placement.node_vcpu} vCPU and "
                           f"{_number(Fraction(spec.memory_gib))}Gi)")
    _check_reach(config, request, placement, pod)
    _check_etcd_caps(teams[request.team].unqueued_pods, request)
    return placement


def _check_etcd_caps(caps: UnqueuedPodResources, request: JobRequest) -> None:
    """The etcd rendezvous is a Deployment: the team namespace's guardrails (unqueued-resources,
    unqueued-pod-resources) refuse it above the team's caps."""
    if not (request.elastic and request.rdzv_backend == "etcd"):
        return
    for resource, cap in (("cpu", min(caps.container_cpu, caps.pod_cpu, key=parse_quantity)),
                          ("memory", min(caps.container_memory, caps.pod_memory, key=parse_quantity))):
        if parse_quantity(ETCD_REQUESTS[resource]) > parse_quantity(cap):
            raise JobSpecError(f"--rdzv-backend etcd: the rendezvous Deployment asks for {ETCD_REQUESTS[resource]} "
                               f"{resource}, above team {request.team!r}'s cap of {cap} (teams[].unqueued_pods), so "
                               "the team namespace's guardrail refuses it; use --rdzv-backend c10d or raise the cap")


def _container(request: JobRequest, placement: Placement, name: str, *, devices: bool = True,
               command: bool = True) -> dict[str, Any]:
    """One container; devices: the accelerators and EFA of the placement (not for an MPI launcher);
    command: the job's command (an MPI worker runs its image's own, its SSH server)."""
    kind = CATALOGUE[placement.instance_type].accelerator_kind
    limits: dict[str, Any] = {}
    if devices and placement.accelerators and kind:
        limits[ACCELERATOR_RESOURCES[kind]] = placement.accelerators
    if devices and placement.efa:
        limits[EFA_RESOURCE] = placement.efa
    if devices:
        limits.update(partition_limits(request.mig))
    requests = dict(limits)  # extended resources need requests equal to limits
    if request.cpu is not None:
        requests["cpu"] = request.cpu
    if request.memory is not None:
        requests["memory"] = request.memory
    container: dict[str, Any] = {"name": name, "image": request.image}
    if command:
        container["command"] = list(request.command)
    env = [{"name": key, "value": value} for key, value in request.env]
    given = dict(request.env)
    # A MIG partition is a GPU to the container as much as a whole one: the device plugin selects it.
    gpus = ACCELERATOR_RESOURCES["nvidia-gpu"] in limits or bool(partition_limits(request.mig) and devices)
    if gpus and HIDE_GPUS_ENV["name"] in given:
        raise JobSpecError(f"--env {HIDE_GPUS_ENV['name']}: the containers ask for GPUs, which the device plugin "
                           "selects; hiding them would leave the job charged for GPUs it cannot see")
    if not gpus:
        hide = [HIDE_GPUS_ENV] if placement.hide_gpus else []  # the guardrail gpu-visibility, where it applies
    else:
        hide = list(GPU_FEATURES_OFF_ENV)  # no host-wide EFA/NVSwitch device nodes from the image (constants say why)
    env += [dict(v) for v in hide if v["name"] not in given]
    if env:
        container["env"] = env
    if requests:
        container["resources"] = {"requests": requests, **({"limits": limits} if limits else {})}
    mounts = [{"name": f"pvc-{i}", "mountPath": v.mount_path, **({"readOnly": True} if v.read_only else {})}
              for i, v in enumerate(request.volumes)]
    if request.shm is not None:
        mounts.append({"name": "shm", "mountPath": SHM_MOUNT})
    if request.scratch is not None:
        mounts.append({"name": "scratch", "mountPath": request.scratch_path})
    if mounts:
        container["volumeMounts"] = mounts
    return container


def _pod_template(request: JobRequest, placement: Placement, container: dict[str, Any], restart: str) -> dict[str, Any]:
    annotations = {}
    if request.topology is not None:
        key = f"kueue.x-k8s.io/podset-{request.topology}-topology"
        annotations[key] = f"topology.k8s.aws/network-node-layer-{request.topology_layer}"
    selector = {"node.kubernetes.io/instance-type": placement.instance_type}
    if request.mig is not None:
        selector[MIG_STATE_LABEL] = MIG_STATE_READY
    if request.auto_resume:
        selector[HEALTH_LABEL] = "Schedulable"
    spec: dict[str, Any] = {"nodeSelector": selector, "restartPolicy": restart, "containers": [container]}
    volumes: list[dict[str, Any]] = [
        {"name": f"pvc-{i}", "persistentVolumeClaim": {"claimName": v.claim, **({"readOnly": True} if v.read_only else {})}}
        for i, v in enumerate(request.volumes)]
    if request.shm is not None:
        # Containers get 64 MiB of /dev/shm by default: too little for NCCL and data-loader workers.
        volumes.append({"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": request.shm}})
    if request.scratch is not None:
        # On the node's disk under the kubelet's directory, which the lifecycle scripts put on the instance store
        # NVMe where there is one (steps/data_roots.sh), else on the secondary EBS volume. No hostPath: the pod
        # gets its own directory, deleted with it, and the kubelet evicts a pod that writes past sizeLimit. No
        # ephemeral-storage request: the teams' ClusterQueues do not cover that resource, and Kueue leaves a
        # workload asking for one pending ("resource ... unavailable in ClusterQueue", v0.19.2 flavorassigner).
        volumes.append({"name": "scratch", "emptyDir": {"sizeLimit": request.scratch}})
    if volumes:
        spec["volumes"] = volumes
    template: dict[str, Any] = {"spec": spec}
    if annotations:
        template["metadata"] = {"annotations": annotations}
    return template


def _metadata(config: KitConfig, request: JobRequest) -> dict[str, Any]:
    namespace = team_namespace(request.team)
    labels = {QUEUE_LABEL: local_queue(request.team)}  # the LocalQueue task governance makes (kueue_mapping)
    priority = job_priority(config, request)
    if priority is not None:
        labels[PRIORITY_LABEL] = priority_label(priority)
    return {"name": request.name, "namespace": namespace, "labels": labels}


def _pytorchjob_spec(request: JobRequest, placement: Placement) -> dict[str, Any]:
    def replica(count: int) -> dict[str, Any]:
        pod = _pod_template(request, placement, _container(request, placement, "pytorch"), "OnFailure")
        return {"replicas": count, "restartPolicy": "OnFailure", "template": pod}

    # Running: when the job succeeds (its Master, or every elastic Worker) the operator deletes the pods still
    # running, so none holds GPUs after Kueue has freed the quota (the guardrail clean-pod-policy requires it).
    run_policy = {"cleanPodPolicy": "Running"}
    if not request.elastic:
        replicas = {"Master": replica(1)}
        if request.nodes > 1:
            replicas["Worker"] = replica(request.nodes - 1)
        return {"runPolicy": run_policy, "pytorchReplicaSpecs": replicas}
    low, high = elastic_bounds(request)
    # c10d: torchrun's own rendezvous, hosted by the agent on worker 0 (its operator-made Service resolves to
    # the pod). etcd: a separate store that outlives any worker (the Service and Deployment etcd_manifests writes).
    backend = request.rdzv_backend or "c10d"
    host, port = (f"{request.name}-etcd", ETCD_PORT) if backend == "etcd" else (f"{request.name}-worker-0", C10D_PORT)
    spec: dict[str, Any] = {"runPolicy": run_policy, "elasticPolicy": {"rdzvBackend": backend, "rdzvHost": host, "rdzvPort": port,
                                              "minReplicas": low, "maxReplicas": high},
                            "pytorchReplicaSpecs": {"Worker": replica(request.nodes)}}
    if placement.accelerators:
        spec["nprocPerNode"] = str(placement.accelerators)  # one process per accelerator
    return spec


def _mpijob_spec(request: JobRequest, placement: Placement) -> dict[str, Any]:
    launcher = _container(request, placement, "launcher", devices=False)
    worker = _container(request, placement, "worker", command=False)
    return {"slotsPerWorker": max(placement.accelerators, 1),
            "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": request.max_retries},
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "restartPolicy": "OnFailure",
                             "template": _pod_template(request, placement, launcher, "OnFailure")},
                "Worker": {"replicas": request.nodes, "restartPolicy": "OnFailure",
                           "template": _pod_template(request, placement, worker, "OnFailure")}}}


def render(config: KitConfig, request: JobRequest, cluster_nodes: Sequence[NodeInfo] | None = None,
           nodes_source: str = "the node list") -> dict[str, Any]:
    """The job object (a PyTorchJob, MPIJob or batch Job)."""
    placement = check(config, request, cluster_nodes, nodes_source)
    request = with_team_volumes(config, request)
    metadata = _metadata(config, request)
    if request.kind == "job":
        container = _container(request, placement, "main")
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata,
                "spec": {"parallelism": request.nodes, "completions": request.nodes, "backoffLimit": request.max_retries,
                         "template": _pod_template(request, placement, container, "Never")}}
    if request.kind == "mpijob":
        return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": metadata,
                "spec": _mpijob_spec(request, placement)}
    if request.auto_resume:
        metadata["annotations"] = dict(zip(AUTO_RESUME_ANNOTATIONS, ("true", str(request.max_retries))))
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": metadata,
            "spec": _pytorchjob_spec(request, placement)}


def etcd_manifests(request: JobRequest, hide_gpus: bool) -> list[dict[str, Any]]:
    """The etcd rendezvous store of an elastic PyTorchJob: one pod, CPU only (not queued: a Deployment may
    not ask for accelerators), reached through the Service <name>-etcd."""
    name, namespace = f"{request.name}-etcd", team_namespace(request.team)
    selector = {"app.kubernetes.io/name": "etcd", "hyperpod-kit/job": request.name}
    meta = {"name": name, "namespace": namespace, "labels": dict(selector)}
    url = f"http://0.0.0.0:{ETCD_PORT}"
    container = {"name": "etcd", "image": ETCD_IMAGE, "command": ["/usr/local/bin/etcd"],
                 "args": ["--data-dir", "/var/lib/etcd", "--enable-v2", "--listen-client-urls", url,
                          "--advertise-client-urls", url, "--initial-cluster-state", "new"],
                 "ports": [{"containerPort": ETCD_PORT, "name": "client", "protocol": "TCP"}],
                 "resources": {"requests": dict(ETCD_REQUESTS)}}
    if hide_gpus:
        container["env"] = [dict(HIDE_GPUS_ENV)]
    service = {"apiVersion": "v1", "kind": "Service", "metadata": meta,
               "spec": {"selector": selector, "ports": [{"name": "client", "port": ETCD_PORT, "targetPort": ETCD_PORT,
                                                         "protocol": "TCP"}]}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
                  "spec": {"replicas": 1, "selector": {"matchLabels": selector},
                           "template": {"metadata": {"labels": dict(selector)},
                                        "spec": {"containers": [container], "restartPolicy": "Always"}}}}
    return [service, deployment]


def manifests(config: KitConfig, request: JobRequest, cluster_nodes: Sequence[NodeInfo] | None = None,
              nodes_source: str = "the node list") -> list[dict[str, Any]]:
    """Everything `kubectl apply -f` needs for the job, in order: the etcd rendezvous (when asked), the job."""
    job = render(config, request, cluster_nodes, nodes_source)
    elastic_etcd = request.elastic and request.rdzv_backend == "etcd"
    rendezvous = etcd_manifests(request, gpus_hidden_by_manifest(config)) if elastic_etcd else []
    return [*rendezvous, job]
