"""hyperpod-kit-workload-queue: queued kinds carry their namespace's queue and an allowed priority class,
and nothing that changes how Kueue accounts them (deletes and finalizers: dependents.py)."""

from __future__ import annotations

from typing import Any

from cdk_app.config.model import KitConfig
from cdk_app.kubernetes.guardrails.bindings import policy_metadata
from cdk_app.kubernetes.guardrails.cel import lit, validation
from cdk_app.kubernetes.guardrails.constants import (
    API_VERSION,
    CLEAN_POD_KINDS,
    CLEAN_POD_POLICIES,
    HELM_RELEASE_NAMESPACE,
    KUEUE_CONTROLLER,
    KUEUE_KEY,
    MANAGED_BY,
    PRIORITY_LABEL,
    QUEUE_LABEL,
    TEAM_KUEUE_ANNOTATIONS,
    TEAM_KUEUE_LABELS,
    WORKLOAD_QUEUE,
)
from cdk_app.kubernetes.guardrails.kinds import WORKLOAD_KINDS, WorkloadKind, kind_switch, match_rules
from cdk_app.kubernetes.guardrails.team_scope import priority_text, priority_variable


def _label(var: str, name: str) -> str:
    """CEL: a label of object or oldObject, '' when absent (oldObject exists on UPDATE only)."""
    present = f"has({var}.metadata.labels) && {lit(name)} in {var}.metadata.labels"
    if var == "oldObject":
        present = f"request.operation == 'UPDATE' && {present}"
    return f"{present} ? {var}.metadata.labels[{lit(name)}] : ''"


def helm_fullname(release: str, chart: str) -> str:
    """What a chart's usual `<chart>.fullname` helper renders with no fullnameOverride or nameOverride
    (the kit sets neither): the release name when it holds the chart name, else <release>-<chart>, cut to
    63 characters and then one trailing "-" removed (Helm's trunc 63 | trimSuffix "-")."""
    name = release if chart in release else f"{release}-{chart}"
    name = name[:63]
    return name[:-1] if name.endswith("-") else name


def controller_identities(config: KitConfig) -> list[str]:
    """Operators that create queued kinds for a team's workload: the MPI operator makes each MPIJob's
    launcher a batch Job without the queue label (Kueue admits the MPIJob, not the Job), owned by the MPIJob.
    Its service account is named by the subchart's mpi-operator.fullname, in the release's namespace."""
    if not config.hyperpod.helm_chart.components.mpi_operator:
        return []
    name = helm_fullname(config.hyperpod.helm_chart.release_name, "mpi-operator")
    return [f"system:serviceaccount:{HELM_RELEASE_NAMESPACE}:{name}"]


def updaters(config: KitConfig) -> list[str]:
    """Who may update a team's workloads without the checks: Kueue and the operators (see the policies)."""
    return [KUEUE_CONTROLLER, *controller_identities(config)]


def _managed_by(present: bool) -> str:
    """CEL: (present) whether the object hands itself to a controller other than its kind's own, or
    (not present) the field that does, for the message."""
    branches = []
    for ref, (field, default) in MANAGED_BY.items():
        *parents, _ = field.split(".")
        guards = [f"has(object.spec.{'.'.join(field.split('.')[:i + 1])})" for i in range(len(parents) + 1)]
        test = " && ".join([*guards, f"object.spec.{field} != {lit(default)}"])
        branches.append((ref, f"({test})" if present else lit(f"spec.{field}: must be unset or {default}")))
    text = "false" if present else "'spec.managedBy'"
    for ref, expression in reversed(branches):
        text = f"(variables.kind == {lit(ref)} ? {expression} : {text})"
    return text


def _kueue_keys(field: str, allowed: str) -> str:
    """CEL: the Kueue keys of object.metadata.<field> a team may not set, except those an update leaves as they were."""
    meta, old = f"object.metadata.{field}", f"oldObject.metadata.{field}"
    kept = f"request.operation == 'UPDATE' && has({old}) && k in {old} && {old}[k] == {meta}[k]"
    return (f"(has({meta}) ? {meta}.filter(k, k.contains({lit(KUEUE_KEY)}) && !({allowed}) && !({kept})) : [])")


def _suspended(var: str, kind: WorkloadKind) -> str:
    """CEL: whether object or oldObject (var) of a queued kind is suspended."""
    assert kind.suspend is not None, kind
    parts = kind.suspend.split(".")
    guards = [f"has({var}.spec.{'.'.join(parts[:i + 1])})" for i in range(len(parts))]
    return "(" + " && ".join([*guards, f"{var}.spec.{kind.suspend} == true"]) + ")"


# Removing owners detaches an object from the one Kueue admitted (an MPI launcher from its MPIJob): only the
# garbage collector does that, when it orphans dependents.
GARBAGE_COLLECTORS = ("system:serviceaccount:kube-system:generic-garbage-collector", "system:kube-controller-manager")


def workload_queue_policy(config: KitConfig) -> dict[str, Any]:
    kinds = [k for k in WORKLOAD_KINDS if k.role == "queued"]
    own = "request.namespace + '-localqueue'"
    # An update that changes nothing but metadata may keep a label as it was: objects made before the
    # policy stay manageable. A spec change needs the labels right, and is refused on an object made
    # without the queue label (an operator's launcher Job, or one older than the guardrails).
    unchanged = "!variables.specChanged && variables.{0} == variables.old{1}"
    required = config.cluster_policy.require_priority_class
    priority_ok = "variables.priority in variables.priorityClasses"
    if not required:
        priority_ok = f"variables.priority == '' || {priority_ok}"
    owners, old_owners = "variables.owners", "variables.oldOwners"
    labels = _kueue_keys("labels", f"k in {lit(TEAM_KUEUE_LABELS)}")
    annotations = _kueue_keys("annotations", f"k in {lit(TEAM_KUEUE_ANNOTATIONS)} || "
                                             f"k == {lit(QUEUE_LABEL)} && object.metadata.annotations[k] == {own}")
    spec: dict[str, Any] = {
        "failurePolicy": "Fail",
        "matchConstraints": {"resourceRules": match_rules(kinds, subresources=False)},
        # Kueue and the operators: the MPI operator creates launcher Jobs without the queue label, owned by
        # their MPIJob; Kueue suspends and starts what it admitted.
        "matchConditions": [{"name": "not-kueue-or-a-workload-operator",
                             "expression": f"!(request.userInfo.username in {lit(updaters(config))})"}],
        "variables": [
            {"name": "kind", "expression": "request.kind.group + '/' + request.kind.kind"},
            {"name": "specChanged", "expression": "request.operation == 'CREATE' || object.spec != oldObject.spec"},
            {"name": "queue", "expression": _label("object", QUEUE_LABEL)},
            {"name": "oldQueue", "expression": _label("oldObject", QUEUE_LABEL)},
            {"name": "priority", "expression": _label("object", PRIORITY_LABEL)},
            {"name": "oldPriority", "expression": _label("oldObject", PRIORITY_LABEL)},
            {"name": "kueueLabels", "expression": labels},
            {"name": "kueueAnnotations", "expression": annotations},
            {"name": "owners", "expression": "has(object.metadata.ownerReferences) ? object.metadata.ownerReferences : []"},
            {"name": "oldOwners", "expression": "request.operation == 'UPDATE' && has(oldObject.metadata.ownerReferences) "
                                                "? oldObject.metadata.ownerReferences : []"},
            {"name": "resumed", "expression": "request.operation == 'UPDATE' && "
                                              + kind_switch(kinds, lambda k: f"{_suspended('oldObject', k)} && !{_suspended('object', k)}")},
            priority_variable(config),
        ],
        "validations": [
            validation("queue", f"variables.queue == {own} || {unchanged.format('queue', 'Queue')}",
                        f"metadata.labels[{QUEUE_LABEL}] must be the namespace's own queue, <namespace>-localqueue",
                        f"'metadata.labels[{QUEUE_LABEL}]: ' + (variables.queue == '' ? 'missing' : "
                        f"'\\'' + variables.queue + '\\' is not this namespace\\'s queue') + '; set it to ' + {own}"),
            validation("priority-class", f"{priority_ok} || {unchanged.format('priority', 'Priority')}",
                        f"metadata.labels[{PRIORITY_LABEL}] must be one of the team's priority classes"
                        + (" and is required" if required else ""),
                        f"'metadata.labels[{PRIORITY_LABEL}]: ' + (variables.priority == '' ? 'missing (the config "
                        f"requires a priority class)' : '\\'' + variables.priority + '\\' is not allowed') + "
                        f"'; allowed: ' + {priority_text(config)}"),
            validation("unqueued-object", "!variables.specChanged || request.operation == 'CREATE' || variables.oldQueue != ''",
                        "the object was made without the queue label (by an operator, or before the guardrails): "
                        "its spec may not change",
                        "'spec: this object was made without the queue label (by an operator, or before the "
                        "guardrails); its spec may not change'"),
            # Kueue treats an object with a controller owner it manages as that owner's child: no Workload of
            # its own, so no quota. Only an update that keeps the spec may keep the owners it had; only the
            # garbage collector removes them.
            validation("owner-references",
                        f"size({owners}) == 0 && size({old_owners}) == 0 || !variables.specChanged "
                        f"&& {owners}.all(r, r in {old_owners}) && (size({owners}) == size({old_owners}) "
                        f"|| request.userInfo.username in {lit(GARBAGE_COLLECTORS)})",
                        "metadata.ownerReferences may not be set, and only the garbage collector removes them (Kueue "
                        "would count the object as its owner's, or lose track of it)",
                        f"'metadata.ownerReferences: ' + (size({owners}) > 0 ? {owners}[0].kind + '/' + {owners}[0].name "
                        "+ ' may not be set (Kueue would count the object as its owner\\'s)' : 'only the garbage "
                        "collector removes owners (Kueue would lose track of the object)')"),
            validation("resume", "!variables.resumed",
                        "a suspended job may not be resumed by hand: Kueue starts it when it admits it",
                        "'spec: a suspended job may not be resumed by hand (" + ", ".join(
                            sorted({f"{k.kind} spec.{k.suspend}" for k in kinds})) + "); Kueue starts it when it admits it'"),
            validation("managed-by", f"!variables.specChanged || !{_managed_by(True)}",
                        "a managedBy that hands the object to another controller is not allowed",
                        f"{_managed_by(False)} + ' (another controller would run it outside the queue)'"),
            validation("clean-pod-policy",
                        f"!variables.specChanged || !(variables.kind in {lit(CLEAN_POD_KINDS)}) || "
                        "has(object.spec.runPolicy) && has(object.spec.runPolicy.cleanPodPolicy) && "
                        f"object.spec.runPolicy.cleanPodPolicy in {lit(CLEAN_POD_POLICIES)}",
                        f"a PyTorchJob or MPIJob must set spec.runPolicy.cleanPodPolicy to {' or '.join(CLEAN_POD_POLICIES)}",
                        f"'spec.runPolicy.cleanPodPolicy: must be {' or '.join(CLEAN_POD_POLICIES)} (with None, the "
                        "operators\\' default, Workers keep running on their GPUs after the job succeeds and Kueue "
                        "frees its quota)'"),
            validation("kueue-keys", "size(variables.kueueLabels) == 0 && size(variables.kueueAnnotations) == 0",
                        f"Kueue labels other than {', '.join(TEAM_KUEUE_LABELS)} and annotations other than "
                        f"{', '.join(TEAM_KUEUE_ANNOTATIONS)} (and the own queue) are not allowed",
                        "'metadata: ' + (size(variables.kueueLabels) > 0 ? 'label ' + variables.kueueLabels[0] : "
                        "'annotation ' + variables.kueueAnnotations[0]) + ' changes how Kueue accounts the object; "
                        f"allowed: {', '.join(TEAM_KUEUE_LABELS + TEAM_KUEUE_ANNOTATIONS)}'"),
        ],
    }
    return {"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicy", "metadata": policy_metadata(WORKLOAD_QUEUE),
            "spec": spec}
