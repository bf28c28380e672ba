"""The schemas and rules a rendered job is checked against, none of them the kit's: the Kubeflow CRDs (as the
API server applies them), the MPI operator's own validation, and the core API validation the schemas cannot
express. Each rule names where it was read; a review against those sources (2026-11-23) corrected them."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import kubernetes_validate
import yaml

DATA = Path(__file__).resolve().parent / "data"
COMBINATORS = ("anyOf", "allOf", "oneOf", "not")
EMBEDDED_META_FIELDS = ("apiVersion", "kind", "metadata")


def strict(schema):
    """A CRD's schema as the API server applies it under strict field validation (kubectl's default since 1.27):
    a field the schema does not declare is an error (apiextensions-apiserver prunes it and reports it), except
    under x-kubernetes-preserve-unknown-fields; an object without properties keeps none; an embedded resource
    keeps apiVersion, kind and metadata. Combinators declare no fields, so they are left as they are. The root
    metadata is the API server's own ObjectMeta: check_metadata checks it."""
    schema = copy.deepcopy(schema)
    stack = [(schema, True)]
    while stack:
        node, root = stack.pop()
        if node.get("type") == "object" and "additionalProperties" not in node and not node.get(
                "x-kubernetes-preserve-unknown-fields"):
            declared = node.setdefault("properties", {})
            if node.get("x-kubernetes-embedded-resource"):
                for field in EMBEDDED_META_FIELDS:
                    declared.setdefault(field, {})
            node["additionalProperties"] = False
        for name, child in node.get("properties", {}).items():
            if not (root and name == "metadata"):
                stack.append((child, False))
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                stack.append((node[key], False))
    return schema


def check_metadata(obj, kubernetes_version):
    """The object's metadata against Kubernetes' own ObjectMeta schema (as a ConfigMap's: kubernetes_validate
    has no schema for a custom kind), strictly: no undeclared field, labels and annotations text."""
    kubernetes_validate.validate({"apiVersion": "v1", "kind": "ConfigMap", "metadata": copy.deepcopy(obj["metadata"])},
                                 kubernetes_version, strict=True)


CRD = yaml.safe_load((DATA / "kubeflow.org_pytorchjobs.yaml").read_text())
PYTORCHJOB_SCHEMA = strict(next(v for v in CRD["spec"]["versions"] if v["name"] == "v1")["schema"]["openAPIV3Schema"])
# The MPIJob CRD the pinned chart's MPI operator installs (tests/support/data/README.md).
MPI_CRD = yaml.safe_load((DATA / "kubeflow.org_mpijobs.yaml").read_text())
MPIJOB_SCHEMA = strict(next(v for v in MPI_CRD["spec"]["versions"] if v["name"] == "v2beta1")["schema"]["openAPIV3Schema"])

# k8s.io/apimachinery pkg/util/validation (v0.31): IsDNS1123Label, IsDNS1035Label, IsDNS1123Subdomain,
# IsQualifiedName (an optional DNS-1123 subdomain prefix of at most 253 characters, "/", a name of at most 63)
# and IsValidLabelValue (at most 63 characters of the name's alphabet, or empty).
DNS_1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
DNS_1035_LABEL = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
DNS_1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
QUALIFIED_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")


def _qualified(key):
    prefix, slash, name = key.rpartition("/")
    return bool(QUALIFIED_NAME.fullmatch(name)) and (not slash or (
        len(prefix) <= 253 and DNS_1123_SUBDOMAIN.fullmatch(prefix) is not None))


def label_refusals(labels):
    refusals = []
    for key, value in labels.items():
        if not _qualified(key):
            refusals.append(f"label key {key!r}")
        if value and not QUALIFIED_NAME.fullmatch(value):
            refusals.append(f"label value {value!r}")
    return refusals


# What the API server's own validation refuses and the OpenAPI schemas cannot say (they have no enums here):
# k8s.io/kubernetes pkg/apis/core/validation/validation.go - validateRestartPolicy, supportedPortProtocols (case
# and all), validateContainers (DNS-1123 label names, unique across containers and init containers),
# validateContainerResourceName (a standard name, or a qualified one with a domain that does not start with
# "requests."); pkg/apis/batch/validation/validation.go - a Job's pods restart OnFailure or Never, and Never
# only with a podFailurePolicy.
RESTART_POLICIES = {"Always", "OnFailure", "Never"}
PORT_PROTOCOLS = {"TCP", "UDP", "SCTP"}
STANDARD_CONTAINER_RESOURCES = re.compile(r"cpu|memory|ephemeral-storage|hugepages-.+")


def _resource_name_ok(name):
    if "/" not in name:
        return bool(STANDARD_CONTAINER_RESOURCES.fullmatch(name))
    return _qualified(name) and not name.startswith("requests.")


def core_refusals(pod_spec, *, job=None):
    """job: the batch Job's spec the pod template is in (its podFailurePolicy matters), else None."""
    refusals = []
    containers = pod_spec.get("containers", []) + pod_spec.get("initContainers", [])
    names = [c.get("name", "") for c in containers]
    refusals += [f"container name {n!r}" for n in names if not DNS_1123_LABEL.fullmatch(n)]
    refusals += [f"container name {n!r} twice" for n in sorted({n for n in names if names.count(n) > 1})]
    for container in containers:
        for kind in ("requests", "limits"):
            refusals += [f"resource {name!r}" for name in container.get("resources", {}).get(kind, {})
                         if not _resource_name_ok(name)]
    policy = pod_spec.get("restartPolicy", "" if job is not None else "Always")
    if job is not None:
        allowed = {"Never"} if job.get("podFailurePolicy") is not None else {"OnFailure", "Never"}
    else:
        allowed = RESTART_POLICIES
    if policy not in allowed:
        refusals.append(f"restartPolicy {policy!r}")
    for container in containers:
        refusals += [f"protocol {p.get('protocol')!r}" for p in container.get("ports", [])
                     if p.get("protocol", "TCP") not in PORT_PROTOCOLS]
    return refusals


# What the MPI operator itself checks before it runs an MPIJob, which the CRD schema does not (its restartPolicy
# is any string there): kubeflow/mpi-operator v0.5.0, pkg/apis/kubeflow/v2beta1/default.go (defaults first, for
# values left empty) and pkg/apis/kubeflow/validation/validation.go, restated as data; the implementations are
# the pinned CRD's own list.
MPI_RESTART_POLICIES = {"Never", "OnFailure"}
MPI_CLEAN_POD_POLICIES = {"None", "Running", "All"}
MPI_IMPLEMENTATIONS = set(MPIJOB_SCHEMA["properties"]["spec"]["properties"]["mpiImplementation"]["enum"])


def _default(mapping, key, value):
    if mapping.get(key) in (None, ""):
        mapping[key] = value


def mpi_operator_refusals(manifest):
    spec = copy.deepcopy(manifest["spec"])
    _default(spec, "slotsPerWorker", 1)
    _default(spec, "sshAuthMountPath", "/root/.ssh")
    _default(spec, "mpiImplementation", "OpenMPI")
    if spec.get("runPolicy") is None:
        spec["runPolicy"] = {}
    _default(spec["runPolicy"], "cleanPodPolicy", "None")
    replicas = spec.get("mpiReplicaSpecs") or {}
    launcher, worker = replicas.get("Launcher"), replicas.get("Worker")
    if launcher is not None:
        _default(launcher, "restartPolicy", "OnFailure")
        _default(launcher, "replicas", 1)
    if worker is not None:
        _default(worker, "restartPolicy", "Never")
        _default(worker, "replicas", 0)
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
    if spec["slotsPerWorker"] < 0:
        refusals.append("slotsPerWorker must be non-negative")
    for field in ("backoffLimit", "ttlSecondsAfterFinished", "activeDeadlineSeconds"):
        if (spec["runPolicy"].get(field) or 0) < 0:
            refusals.append(f"runPolicy.{field} must be non-negative")
    if spec["runPolicy"]["cleanPodPolicy"] not in MPI_CLEAN_POD_POLICIES:
        refusals.append(f"cleanPodPolicy {spec['runPolicy']['cleanPodPolicy']!r} not supported")
    if spec["mpiImplementation"] not in MPI_IMPLEMENTATIONS:
        refusals.append(f"mpiImplementation {spec['mpiImplementation']!r} not supported")
    # v0.5.0 checks the last worker's hostname as a DNS-1035 label (later commits as DNS-1123).
    hostname = f"{manifest['metadata']['name']}-worker-{max(worker['replicas'] if worker else 1, 1) - 1}"
    if not DNS_1035_LABEL.fullmatch(hostname):
        refusals.append(f"invalid DNS-1035 label {hostname!r}")
    return refusals
