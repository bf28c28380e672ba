"""The kinds whose pod specs the guardrails check, and CEL that reaches their pods, containers and annotations."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from cdk_app.kubernetes.guardrails.cel import lit
from cdk_app.kubernetes.guardrails.constants import CONTAINER_FIELDS, Role


@dataclass(frozen=True)
class WorkloadKind:
    """A kind whose pod specs the guardrails check.

    role: "pod" (a Pod itself), "queued" (Kueue admits it: needs the team's queue label) or "unqueued"
    (not queued, so it may not ask for accelerators). replicas: for kinds with a map of replica specs
    (spec.<replicas>.<type>.template), the field and the replica types its operator accepts; other
    non-Pod kinds have one template at spec.template.
    """

    group: str
    version: str
    resource: str
    kind: str
    role: Role
    replicas: str | None = None
    replica_types: tuple[str, ...] = ()
    suspend: str | None = None  # queued kinds: the field under spec that suspends the object (Kueue's switch)

    @property
    def ref(self) -> str:
        """group/Kind, as the policies compare request.kind with it."""
        return f"{self.group}/{self.kind}"

    def pod_specs(self) -> list[tuple[str, str, str | None]]:
        """(field path, CEL expression, CEL guard or None) of each pod spec of an object of this kind."""
        if self.role == "pod":
            return [("spec", "object.spec", None)]
        if self.replicas is None:
            return [("spec.template.spec", "object.spec.template.spec", None)]
        base = f"object.spec.{self.replicas}"
        return [(f"spec.{self.replicas}.{t}.template.spec", f"{base}.{t}.template.spec", f"has({base}.{t})")
                for t in self.replica_types]


# One entry adds a kind: its pods are checked and, when queued, its queue label and priority class.
WORKLOAD_KINDS: tuple[WorkloadKind, ...] = (
    WorkloadKind("", "v1", "pods", "Pod", "pod"),
    WorkloadKind("batch", "v1", "jobs", "Job", "queued", suspend="suspend"),
    WorkloadKind("kubeflow.org", "v1", "pytorchjobs", "PyTorchJob", "queued",
                 replicas="pytorchReplicaSpecs", replica_types=("Master", "Worker"), suspend="runPolicy.suspend"),
    WorkloadKind("kubeflow.org", "v2beta1", "mpijobs", "MPIJob", "queued",
                 replicas="mpiReplicaSpecs", replica_types=("Launcher", "Worker"), suspend="runPolicy.suspend"),
    WorkloadKind("apps", "v1", "deployments", "Deployment", "unqueued"),
    WorkloadKind("apps", "v1", "statefulsets", "StatefulSet", "unqueued"),
    WorkloadKind("apps", "v1", "replicasets", "ReplicaSet", "unqueued"),
    WorkloadKind("apps", "v1", "daemonsets", "DaemonSet", "unqueued"),
)


def kind_switch(kinds: Iterable[WorkloadKind], branch: Callable[[WorkloadKind], str]) -> str:
    """CEL: a chain of conditionals on the request's kind, one branch per distinct expression, in parentheses:
    the conditional binds loosest, so `a && <chain>` unparenthesized would read `(a && kind in ..) ? .. : ..`
    and evaluate the last branch whenever `a` is false (the API server refused every job create that way)."""
    groups: dict[str, list[str]] = {}
    for kind in kinds:
        groups.setdefault(branch(kind), []).append(kind.ref)
    items = list(groups.items())
    text = items[-1][0]
    for expression, refs in reversed(items[:-1]):
        text = f"variables.kind in {lit(refs)} ? {expression} : ({text})"
    return f"({text})"


def pods_of(kind: WorkloadKind) -> str:
    # Kubernetes' CEL requires homogeneous aggregate literals: every value of a map literal is wrapped in dyn()
    # (the API server refused {'path': <string>, 'c': <container>, 'init': <bool>} when the policy was created).
    parts = []
    for path, spec, guard in kind.pod_specs():
        item = f"[{{'path': dyn({lit(path)}), 'spec': dyn({spec})}}]"
        parts.append(item if guard is None else f"({guard} ? {item} : [])")
    return " + ".join(parts)


def _metadata_field_of(kind: WorkloadKind, field: str, key: str) -> str:
    """CEL: [{'path', key: the field}] of the object's pods or pod templates whose metadata has the field."""
    parts = []
    for path, spec, guard in kind.pod_specs():
        meta_path, meta = path.removesuffix("spec") + "metadata", spec.removesuffix("spec") + "metadata"
        present = f"has({meta}.{field})" if kind.role == "pod" else f"has({meta}) && has({meta}.{field})"
        present = present if guard is None else f"{guard} && {present}"
        parts.append(f"({present} ? [{{'path': dyn({lit(f'{meta_path}.{field}')}), '{key}': dyn({meta}.{field})}}] : [])")
    return " + ".join(parts)


def annotations_of(kind: WorkloadKind) -> str:
    """CEL: [{'path', 'a': annotations}] of the object's pods or pod templates that have annotations."""
    return _metadata_field_of(kind, "annotations", "a")


def finalizers_of(kind: WorkloadKind) -> str:
    """CEL: [{'path', 'f': finalizers}] of the object's pods or pod templates that list finalizers."""
    return _metadata_field_of(kind, "finalizers", "f")


# The MPI operator (v0.5.0, pkg/controller/mpi_job_controller.go newLauncherPodTemplate) sets
# NVIDIA_VISIBLE_DEVICES and NVIDIA_DRIVER_CAPABILITIES empty on the launcher's first container unless
# runLauncherAsWorker: that container hides the GPUs without writing it (the launcher pod itself is checked too).
MPI_LAUNCHER_PATH = "spec.mpiReplicaSpecs.Launcher.template.spec"


def _operator_hides_gpus(kind: WorkloadKind, path: str, spec: str, field: str) -> str:
    if kind.ref != "kubeflow.org/MPIJob" or path != MPI_LAUNCHER_PATH or field != "containers":
        return "false"
    return (f"c.name == {spec}.containers[0].name && "
            "!(has(object.spec.runLauncherAsWorker) && object.spec.runLauncherAsWorker == true)")


def containers_of(kind: WorkloadKind) -> str:
    parts = []
    for path, spec, guard in kind.pod_specs():
        for field in CONTAINER_FIELDS:
            present = f"has({spec}.{field})" if guard is None else f"{guard} && has({spec}.{field})"
            entry = (f"{{'path': dyn({lit(f'{path}.{field}[')} + c.name + ']'), 'c': dyn(c), "
                     f"'init': dyn({str(field == 'initContainers').lower()}), "
                     f"'hidden': dyn({_operator_hides_gpus(kind, path, spec, field)})}}")
            parts.append(f"({present} ? {spec}.{field}.map(c, {entry}) : [])")
    return " + ".join(parts)


def match_rules(kinds: Iterable[WorkloadKind], subresources: bool, delete: bool = False) -> list[dict[str, Any]]:
    rules = []
    for kind in kinds:
        resources = [kind.resource]
        if subresources and kind.role == "pod":
            resources.append("pods/ephemeralcontainers")  # kubectl debug adds containers through it
        rules.append({"apiGroups": [kind.group], "apiVersions": [kind.version], "resources": resources,
                      "operations": ["CREATE", "UPDATE", *(["DELETE"] if delete else [])]})
    return rules
