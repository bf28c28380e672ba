"""hyperpod-kit-dependents: a delete or a finalizer may not orphan the pods of any kind a team creates.

Orphaned children keep running outside whatever bounded their parent: a Job's, PyTorchJob's or MPIJob's pods
stay on their devices after Kueue frees the quota, and a Deployment's ReplicaSet keeps its pods after the
Deployment - the only thing the namespace's ResourceQuota counts - is gone (red team F1 of issue 28: a delete
with --cascade=orphan, then the same Deployment again, in a loop). The team cannot even list or delete the
orphaned ReplicaSets (no RBAC on them). So the rules hold for every kind with pod templates, not only the
queued ones.

How each kind deletes its dependents when the client names no policy: a batch/v1 Job orphans them (its legacy
default), so a team's delete of one must name Background or Foreground (kubectl does). Every other kind here
(apps/v1 and the custom resources) deletes them by default and orphans them only when asked: Orphan,
orphanDependents, or, with no policy named, the "orphan" finalizer on the object (which orphan-finalizer keeps
teams from adding). Kubernetes' own controllers in kube-system (garbage collector, namespace deletion, the
Deployment controller's old ReplicaSets, TTL), Kueue and the workload operators are not checked; other
service accounts are, a team namespace's own among them.

A finalizer in a pod template (spec.template.metadata.finalizers, or a replica spec's template) is refused too
(red team round 3, F1 of issue 28): the controllers copy a template's finalizers onto every pod they make
(kube-controller-manager's GetPodFromTemplate), so each pod a rollout, a scale-down or a delete removes stays in
the API for good - the team has no patch on pods to take the finalizer off - and its replacement is made at once:
every template change adds permanent pod objects without bound, on the shared etcd and every pod informer, and
blocks the namespace's deletion. Checked on a create and on any update that changes the spec (a metadata-only
update of an object made before the rule stays possible, as in the pod policies)."""

from __future__ import annotations

from typing import Any

from cdk_app.config.model import KitConfig
from cdk_app.kubernetes.guardrails.bindings import policy_metadata
from cdk_app.kubernetes.guardrails.cel import first_bad, lit, validation
from cdk_app.kubernetes.guardrails.constants import API_VERSION, DEPENDENTS
from cdk_app.kubernetes.guardrails.kinds import WORKLOAD_KINDS, finalizers_of, kind_switch, match_rules
from cdk_app.kubernetes.guardrails.workload_queue import updaters

ORPHAN_FINALIZER = "orphan"


# The controller manager's identities: its per-controller service accounts (EKS runs it with
# --use-service-account-credentials) or its own user.
KUBERNETES_CONTROLLERS = ("system:serviceaccount:kube-system:", "system:kube-controller-manager")


_OPTIONS = "has(request.options)"


# orphanDependents: false is the deprecated way to ask for the same (the API server refuses both fields at once).
_NAMES_CASCADE = (f"{_OPTIONS} && (has(request.options.propagationPolicy) "
                  "&& request.options.propagationPolicy in ['Background', 'Foreground'] "
                  "|| has(request.options.orphanDependents) && request.options.orphanDependents == false)")


_ORPHANS = (f"{_OPTIONS} && (has(request.options.propagationPolicy) && request.options.propagationPolicy == 'Orphan' "
            "|| has(request.options.orphanDependents) && request.options.orphanDependents == true)")


_HAS_ORPHAN_FINALIZER = f"has(oldObject.metadata.finalizers) && {lit(ORPHAN_FINALIZER)} in oldObject.metadata.finalizers"


# In parentheses: the conditional binds loosest (`a || b ? c : d` reads `(a || b) ? c : d`).
_DELETES_PODS = (f"(request.kind.group == 'batch' ? {_NAMES_CASCADE} "
                 f": !({_ORPHANS}) && ({_NAMES_CASCADE} || !({_HAS_ORPHAN_FINALIZER})))")


# A pod template that lists a finalizer (an empty list is none); only read on a create or a spec-changing update.
_TEMPLATE_FINALIZER = "size(e.f) > 0"


_CHECKS_TEMPLATES = "request.operation == 'CREATE' || request.operation == 'UPDATE' && object.spec != oldObject.spec"


def _exempt(config: KitConfig) -> str:
    """CEL: whether the request comes from Kubernetes' controllers, Kueue or a workload operator."""
    user = "request.userInfo.username"
    return f"{user}.startsWith({lit(KUBERNETES_CONTROLLERS[0])}) || {user} in {lit([*KUBERNETES_CONTROLLERS[1:], *updaters(config)])}"


def dependents_policy(config: KitConfig) -> dict[str, Any]:
    kinds = [k for k in WORKLOAD_KINDS if k.role != "pod"]
    spec: dict[str, Any] = {
        "failurePolicy": "Fail",
        "matchConstraints": {"resourceRules": match_rules(kinds, subresources=False, delete=True)},
        "matchConditions": [{"name": "not-a-kubernetes-controller-kueue-or-a-workload-operator",
                             "expression": f"!({_exempt(config)})"}],
        "variables": [
            {"name": "kind", "expression": "request.kind.group + '/' + request.kind.kind"},
            {"name": "templateFinalizers", "expression": kind_switch(kinds, finalizers_of)},
        ],
        "validations": [
            validation("template-finalizers",
                       f"!({_CHECKS_TEMPLATES}) || !variables.templateFinalizers.exists(e, {_TEMPLATE_FINALIZER})",
                       "a pod template may not list finalizers (the controller copies them onto every pod, which "
                       "then stays in the API for good once deleted: the team cannot remove a pod's finalizers)",
                       f"{first_bad('variables.templateFinalizers', _TEMPLATE_FINALIZER)}.path + ': a pod template "
                       "may not list finalizers (the controller copies them onto every pod, which then stays in the "
                       "API for good once deleted: the team cannot remove a pod\\'s finalizers)'"),
            validation("orphan-finalizer",
                       f"request.operation == 'DELETE' || !has(object.metadata.finalizers) "
                       f"|| !({lit(ORPHAN_FINALIZER)} in object.metadata.finalizers) "
                       f"|| request.operation == 'UPDATE' && {_HAS_ORPHAN_FINALIZER}",
                       "metadata.finalizers may not hold orphan (a delete would leave the pods running outside "
                       "the quota and the namespace's counts)",
                       "'metadata.finalizers: orphan is not allowed (a delete naming no policy would leave the pods "
                       "running outside the quota and the namespace\\'s counts)'"),
            validation("delete-propagation", f"request.operation != 'DELETE' || {_DELETES_PODS}",
                       "a delete may not orphan the pods: a Job's must name propagationPolicy Background or "
                       "Foreground (or orphanDependents false), any other kind's may not name Orphan (orphaned "
                       "pods and ReplicaSets keep running outside the quota and the namespace's counts; kubectl "
                       "delete sends Background)",
                       "'DeleteOptions.propagationPolicy: ' + (request.kind.group == 'batch' ? 'a Job\\'s delete must "
                       "name Background or Foreground (or orphanDependents false)' : 'may not be Orphan (nor "
                       "orphanDependents, nor a delete naming none of an object with the orphan finalizer)') + ' - "
                       "orphaned pods and ReplicaSets keep running outside the quota and the namespace\\'s counts; "
                       "kubectl delete sends Background unless --cascade=orphan'"),
        ],
    }
    return {"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicy", "metadata": policy_metadata(DEPENDENTS),
            "spec": spec}
