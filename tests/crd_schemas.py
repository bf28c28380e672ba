"""The schemas and rules a rendered job is checked against, none of them the kit's: the Kubeflow CRDs (as the
API server applies them), the MPI operator's own validation, and the core API validation the schemas cannot
express."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import yaml

DATA = Path(__file__).resolve().parent / "data"


def strict(schema):
    """A CRD's schema as the API server applies it under strict field validation (kubectl's default since 1.27):
    a field the schema does not declare is an error, except where it preserves unknown fields."""
    schema = copy.deepcopy(schema)
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if (node.get("type") == "object" and "properties" in node and "additionalProperties" not in node
                    and not node.get("x-kubernetes-preserve-unknown-fields")):
                node["additionalProperties"] = False
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return schema


CRD = yaml.safe_load((DATA / "kubeflow.org_pytorchjobs.yaml").read_text())
PYTORCHJOB_SCHEMA = strict(next(v for v in CRD["spec"]["versions"] if v["name"] == "v1")["schema"]["openAPIV3Schema"])
# The MPIJob CRD the pinned chart's MPI operator installs (tests/data/README.md).
MPI_CRD = yaml.safe_load((DATA / "kubeflow.org_mpijobs.yaml").read_text())
MPIJOB_SCHEMA = strict(next(v for v in MPI_CRD["spec"]["versions"] if v["name"] == "v2beta1")["schema"]["openAPIV3Schema"])
# RFC 1123 label, as k8s.io/apimachinery/pkg/util/validation IsDNS1123Label checks it.
DNS_1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


# What the API server's own validation refuses and the OpenAPI schemas cannot say (they have no enums here):
# k8s.io/kubernetes pkg/apis/core/validation/validation.go - a pod's restartPolicy and a port's protocol, case and all.
RESTART_POLICIES = {"Always", "OnFailure", "Never"}
PORT_PROTOCOLS = {"TCP", "UDP", "SCTP"}


# k8s.io/apimachinery pkg/util/validation: a label key is a qualified name (an optional DNS-1123 subdomain prefix
# of at most 253 characters, "/", and a name of at most 63), a label value at most 63 characters of the name's
# alphabet or empty; container names are DNS-1123 labels.
QUALIFIED_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
DNS_1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def label_refusals(labels):
    refusals = []
    for key, value in labels.items():
        prefix, _, name = key.rpartition("/")
        if not QUALIFIED_NAME.fullmatch(name) or (prefix or "/" in key) and not (
                len(prefix) <= 253 and DNS_1123_SUBDOMAIN.fullmatch(prefix)):
            refusals.append(f"label key {key!r}")
        if value and not QUALIFIED_NAME.fullmatch(value):
            refusals.append(f"label value {value!r}")
    return refusals


# A container's requests and limits name a standard resource (cpu, memory, ephemeral-storage, hugepages-<size>)
# or a domain-qualified extended one (nvidia.com/gpu): validateContainerResourceName in core validation.
STANDARD_CONTAINER_RESOURCES = re.compile(r"cpu|memory|ephemeral-storage|hugepages-.+")


def _resource_name_ok(name):
    prefix, _, base = name.rpartition("/")
    if not prefix:
        return bool(STANDARD_CONTAINER_RESOURCES.fullmatch(name))
    return bool(DNS_1123_SUBDOMAIN.fullmatch(prefix) and QUALIFIED_NAME.fullmatch(base))


def core_refusals(pod_spec, *, job=False):
    refusals = []
    for container in pod_spec.get("containers", []) + pod_spec.get("initContainers", []):
        for kind in ("requests", "limits"):
            refusals += [f"resource {name!r}" for name in container.get("resources", {}).get(kind, {})
                         if not _resource_name_ok(name)]
    refusals += [f"container name {c.get('name')!r}" for c in pod_spec.get("containers", []) + pod_spec.get(
        "initContainers", []) if not DNS_1123_LABEL.fullmatch(c.get("name", ""))]
    policy = pod_spec.get("restartPolicy", "Always")
    if policy not in (RESTART_POLICIES - {"Always"} if job else RESTART_POLICIES):  # a Job's pods must end
        refusals.append(f"restartPolicy {policy!r}")
    for container in pod_spec.get("containers", []) + pod_spec.get("initContainers", []):
        refusals += [f"protocol {p.get('protocol')!r}" for p in container.get("ports", [])
                     if p.get("protocol", "TCP") not in PORT_PROTOCOLS]
    return refusals


# What the MPI operator itself checks before it runs an MPIJob, which the CRD schema does not (its restartPolicy
# is any string there): kubeflow/mpi-operator pkg/apis/kubeflow/v2beta1/default.go (defaults first) and
# pkg/apis/kubeflow/validation/validation.go (read at commit 11a4e47), restated as data; the implementations are
# the pinned CRD's own list.
MPI_RESTART_POLICIES = {"Never", "OnFailure"}
MPI_CLEAN_POD_POLICIES = {"None", "Running", "All"}
MPI_IMPLEMENTATIONS = set(MPIJOB_SCHEMA["properties"]["spec"]["properties"]["mpiImplementation"]["enum"])


def mpi_operator_refusals(manifest):
    spec = copy.deepcopy(manifest["spec"])
    spec.setdefault("slotsPerWorker", 1)
    spec.setdefault("sshAuthMountPath", "/root/.ssh")
    spec.setdefault("mpiImplementation", "OpenMPI")
    spec.setdefault("runPolicy", {}).setdefault("cleanPodPolicy", "None")
    replicas = spec.get("mpiReplicaSpecs") or {}
    launcher, worker = replicas.get("Launcher"), replicas.get("Worker")
    if launcher is not None:
        launcher.setdefault("restartPolicy", "OnFailure")
        launcher.setdefault("replicas", 1)
    if worker is not None:
        worker.setdefault("restartPolicy", "Never")
        worker.setdefault("replicas", 0)
    refusals = []
    if launcher is None:
        refusals.append("must have Launcher replica spec")
    for role, replica in (("Launcher", launcher), ("Worker", worker)):
        if replica is None:
            continue
        if replica["restartPolicy"] not in MPI_RESTART_POLICIES:
            refusals.append(f"{role}.restartPolicy {replica['restartPolicy']!r} not supported")
        if not replica["template"]["spec"].get("containers"):
            refusals.append(f"{role}: must define at least one container")
    if launcher is not None and launcher["replicas"] != 1:
        refusals.append("Launcher.replicas must be 1")
    if worker is not None and worker["replicas"] <= 0:
        refusals.append("Worker.replicas must be greater than or equal to 1")
    if spec["slotsPerWorker"] < 0 or spec["runPolicy"].get("backoffLimit", 0) < 0:
        refusals.append("slotsPerWorker and runPolicy.backoffLimit must be non-negative")
    if spec["runPolicy"]["cleanPodPolicy"] not in MPI_CLEAN_POD_POLICIES:
        refusals.append(f"cleanPodPolicy {spec['runPolicy']['cleanPodPolicy']!r} not supported")
    if spec["mpiImplementation"] not in MPI_IMPLEMENTATIONS:
        refusals.append(f"mpiImplementation {spec['mpiImplementation']!r} not supported")
    hostname = f"{manifest['metadata']['name']}-worker-{max(worker['replicas'] if worker else 1, 1) - 1}"
    if not DNS_1123_LABEL.fullmatch(hostname):
        refusals.append(f"invalid DNS label {hostname!r}")
    return refusals
