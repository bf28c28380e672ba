"""Every case of the admission matrix (tests/support/admission_cases.py), judged by the real API server: each
request is made as the case's user (impersonated), dry-run, against the policies and bindings the kit ships.

Two passes per environment. With the shipped bindings (Deny, Audit) the verdict and the message come from the
API server. With the same policies bound for Warn instead, the API server reports every validation the request
fails, so the set of refusing rules can be compared with the case's - and with the cel-python model the fast
tier uses (tests/unit/kubernetes/guardrails/test_cel_verdicts.py): the model stays only while it agrees with
the server on every case.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from support.admission_cases import CASES, POD_LEVEL_RESOURCES_OFF, Case, run, synthesized_manifests
from support.realk8s.api import Answer, Cluster, wait_until
from support.realk8s.controlplane import JUDGE_CONTROLLERS
from support.realk8s.guardrail_bindings import bindings, namespaced_quotas, rules, settle

from cdk_app.kubernetes.guardrails.constants import NAMESPACE_NAME_LABEL

RULE = re.compile(r"hyperpod-kit guardrail ([a-z0-9-]+):")
ENVS = sorted({case.env for case in CASES})
# Every user a case acts as gets every right: this tier judges admission; RBAC has its own tests.
EVERYTHING = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
              "metadata": {"name": "admission-judge-everything"},
              "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]}


def _groups(case: Case) -> tuple[str, ...]:
    return ("hyperpod-team-research-nlp",) if not case.user.startswith("system:") else ()


def _named(obj: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    """The case's object under a name of its own, so stored old objects of different cases never collide; a name
    in the kit's prefix keeps the prefix (a guardrail decides by it)."""
    if obj is None:
        return None
    out = copy.deepcopy(obj)
    kit = "hyperpod-kit-"
    out["metadata"]["name"] = (kit if out["metadata"].get("name", "").startswith(kit) else "") + name
    return out


def merge_patch(old: Any, new: Any) -> Any:
    """The JSON merge patch (RFC 7386) that turns `old` into `new`: an update made the way clients make one,
    so what the API server defaulted in the stored object (a Job's selector and labels) stays."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return new
    patch: dict[str, Any] = {key: None for key in old if key not in new}
    for key, value in new.items():
        if key not in old:
            patch[key] = value
        elif old[key] != value:
            patch[key] = merge_patch(old[key], value)
    return patch


def _stored(case: Case) -> dict[str, Any] | None:
    """What must exist before the request: the old object of an UPDATE, the object a DELETE deletes."""
    return case.old if case.operation == "UPDATE" else case.obj if case.operation == "DELETE" else None


def _put_all(cluster: Cluster, objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        path = cluster.object_path(obj)
        answer = cluster.request("PATCH", path, obj, params={"fieldManager": "hyperpod-kit", "force": "true"},
                                 content_type="application/apply-patch+yaml")
        assert answer.allowed, (obj["metadata"]["name"], answer.status, answer.message)


class Judge:
    def __init__(self, cluster: Cluster, manifests: list[dict[str, Any]]) -> None:
        self.cluster, self.manifests = cluster, manifests

    def bind(self, actions: list[str]) -> None:
        _put_all(self.cluster, bindings(self.manifests, actions))
        settle(self.cluster, self.manifests, actions)

    def request(self, index: int, case: Case) -> Answer:
        name = f"case-{index}"
        obj = _named(case.obj, name)
        user, groups = case.user, _groups(case)
        if case.operation == "CREATE":
            return self.cluster.create(obj, user=user, groups=groups)
        stored = self.cluster.get(obj)
        assert stored.allowed, f"{case.id}: the stored object is missing ({stored.message})"
        if case.operation == "DELETE":
            return self.cluster.delete(obj, user=user, groups=groups, options=case.options)
        patch = merge_patch(_named(case.old, name), obj)
        path = self.cluster.object_path(obj) + (f"/{case.subresource}" if case.subresource else "")
        return self.cluster.request("PATCH", path, patch, user=user, groups=groups,
                                    params={"dryRun": "All", "fieldValidation": "Strict"},
                                    content_type="application/merge-patch+json")


@pytest.fixture(scope="module", params=ENVS)
def judge(request: pytest.FixtureRequest, start_cluster) -> Iterator[tuple[str, Judge]]:
    env = request.param
    cluster = start_cluster(env, JUDGE_CONTROLLERS)
    manifests = synthesized_manifests(env)
    # Objects made before the guardrails (or before a team lost a right) are stored with no binding in place.
    for binding in bindings(manifests, []):
        assert cluster.delete(binding, dry_run=False).allowed
    settle(cluster, manifests, [])
    # A pod naming a priorityClassName needs that PriorityClass (the Priority admission plugin); whether task
    # governance makes scheduling PriorityClasses for its classes is not documented, so the judge does.
    classes = sorted({spec.get("priorityClassName") for case in CASES if case.env == env
                      for spec in _pod_specs(case.obj)} - {None})
    classes = [c for c in classes if not c.startswith("system-")]  # Kubernetes' own, always there
    _put_all(cluster, [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": c},
                        "value": 1000} for c in classes])
    users = sorted({case.user for case in CASES if case.env == env})
    _put_all(cluster, [EVERYTHING, {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "admission-judge-everything"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": EVERYTHING["metadata"]["name"]},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": u} for u in users]}])
    # ... and before the kit's ResourceQuota, which refuses e.g. a LoadBalancer whatever the bindings: lifted
    # while the old objects are stored, put back before any case is judged.
    quotas = namespaced_quotas(cluster)
    for quota in quotas:
        assert cluster.delete(quota, dry_run=False).allowed
    for index, case in enumerate(CASES):
        stored = _named(_stored(case), f"case-{index}")
        if case.env == env and stored is not None:
            for field in ("resourceVersion", "uid", "creationTimestamp"):
                stored["metadata"].pop(field, None)
            # The bindings are gone, but each policy leaves the admission plugin's informer on its own time:
            # a guardrail's refusal here is that lag, and passes; anything else fails at once.
            def stored_now(stored: dict[str, Any] = stored) -> Any:
                answer = cluster.create(stored, dry_run=False)
                return answer if answer.allowed or "hyperpod-kit guardrail" not in answer.message else None

            answer = wait_until(stored_now, f"{case.id}: storing the old object", timeout=60, interval=0.5)
            assert answer.allowed, f"{case.id}: the old object was refused: {answer.message}"
    for quota in quotas:
        assert cluster.create(quota, dry_run=False).allowed
    yield env, Judge(cluster, manifests)


def _pod_specs(obj: dict[str, Any]) -> list[dict[str, Any]]:
    spec = obj.get("spec", {})
    if obj["kind"] == "Pod":
        return [spec]
    if "template" in spec:
        return [spec["template"].get("spec", {})]
    return [r.get("template", {}).get("spec", {}) for key, replicas in spec.items() if key.endswith("ReplicaSpecs")
            for r in replicas.values()]


def before_admission(answer: Answer) -> bool:
    """Refused by decoding or object validation, before any admission policy ran (422 Invalid, 400 BadRequest)."""
    return not answer.allowed and "ValidatingAdmissionPolicy" not in answer.message and answer.status in (400, 422)


def test_every_namespace_a_refusal_is_expected_in_is_bound(judge):
    env, j = judge
    namespaces = {case.obj["metadata"]["namespace"] for case in CASES if case.env == env and case.refused}
    for binding in bindings(j.manifests, ["Deny"]):
        selected = binding["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"][0]
        assert selected["key"] == NAMESPACE_NAME_LABEL
        assert namespaces <= set(selected["values"])


def test_every_case_the_api_server_refuses_and_allows_as_the_matrix_says(judge):
    """The shipped bindings (Deny): allowed exactly when the case expects no refusal; a refusal names the case's
    rules (the API server reports the first failing validation of each policy) - or comes before admission
    (the API server's own validation refuses the object), which only a case expecting a refusal may meet."""
    env, j = judge
    j.bind(["Deny", "Audit"])
    wrong = {}
    for index, case in enumerate(CASES):
        if case.env != env:
            continue
        answer = j.request(index, case)
        named, refused = rules([answer.message]), case.refused_by_api_server
        if not refused:
            if not answer.allowed:
                wrong[case.id] = f"refused ({answer.status}): {answer.message}"
        elif answer.allowed:
            wrong[case.id] = f"allowed; expected {sorted(refused)}"
        elif not before_admission(answer) and not named or not named <= set(refused):
            wrong[case.id] = f"refused by {sorted(named) or 'no guardrail'}: {answer.message}"
    assert wrong == {}, json.dumps(wrong, indent=1)


def test_every_rule_the_api_server_finds_is_the_matrixs_and_the_models(judge):
    """Bound for Warn, the API server reports every failing validation: the set is the case's, and the
    cel-python model of the fast tier finds the same set (and never an evaluation error). Cases the API
    server refuses before admission have no rules to compare; they are listed in the report."""
    env, j = judge
    j.bind(["Warn"])
    try:
        disagreements, unjudged = {}, []
        for index, case in enumerate(CASES):
            if case.env != env:
                continue
            answer = j.request(index, case)
            model = run(case, j.manifests)
            if before_admission(answer):
                unjudged.append(case.id)
                if not case.refused or model.errors:
                    disagreements[case.id] = {"refused before admission": answer.message, "matrix": sorted(case.refused)}
                continue
            real = rules(answer.warnings)
            # A policy's warning that is not a guardrail's message is an expression that failed to evaluate.
            failed = [w for w in answer.warnings if "ValidatingAdmissionPolicy" in w and "hyperpod-kit guardrail" not in w]
            texts = {rule: text for rule, text in case.refused_by_api_server.items()
                     if not any(f"guardrail {rule}:" in w and text in w for w in answer.warnings)}
            # The model sees the object as sent; the API server drops fields of features it has off.
            expected_model = set(case.refused) if case.dropped_by_api_server else real
            if (real != set(case.refused_by_api_server) or model.rules != expected_model or model.errors or failed
                    or texts or not answer.allowed):
                disagreements[case.id] = {"server": sorted(real), "matrix": sorted(case.refused_by_api_server),
                                          "model": sorted(model.rules), "model errors": model.errors,
                                          "failed expressions": failed, "texts missing": texts,
                                          "status": answer.status, "message": answer.message}
        assert disagreements == {}, json.dumps(disagreements, indent=1)
        print(f"{env}: refused by the API server before admission: {unjudged}")
    finally:
        j.bind(["Deny", "Audit"])


@pytest.mark.parametrize("judge", ["prod"], indirect=True)
def test_check_is_stricter_than_this_server_where_it_drops_pod_level_resources(judge):
    """Red team round 2, F5: PodLevelResources is off in Kubernetes 1.33, so its API server drops a pod template's
    `resources` before admission and admits the Deployment (the field has no effect there); `check` (the model)
    refuses it on purpose, as the same policies do on 1.34+, where the scheduler reserves those resources."""
    env, j = judge
    [(index, case)] = [(i, c) for i, c in enumerate(CASES)
                       if c.id == "deployment-pod-level-cpu-above-the-pod-cap" and c.env == env]
    assert case.dropped_by_api_server == POD_LEVEL_RESOURCES_OFF
    j.bind(["Deny", "Audit"])
    answer = j.request(index, case)
    assert answer.allowed, answer.message
    assert "resources" not in answer.body["spec"]["template"]["spec"], "the server kept the pod-level resources"
    assert run(case, j.manifests).rules == {"unqueued-pod-resources"}
