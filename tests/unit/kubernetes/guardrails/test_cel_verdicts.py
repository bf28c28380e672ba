"""The admission guardrails' CEL, evaluated by a real CEL implementation (cel-python) exactly as the
governance stack synthesizes it: the policies and bindings are read back from the synthesized template
and applied to a matrix of pods and workloads the way the API server applies a ValidatingAdmissionPolicy
(binding namespace selector, match constraints, match conditions, lazily evaluated variables, then each
validation; an expression that errors fails closed, as failurePolicy: Fail does).

Kubernetes has CEL functions cel-python lacks (strings.join/split, optionals, quantity, two-variable
comprehensions); the policies use none of them, so nothing is left untested here.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import kubernetes_validate
import pytest
from support.admission_cases import (
    CASES,
    NLP,
    Case,
    container,
    pod_spec,
    run,
    sc,
    synthesized_manifests,
    with_label,
    workload,
)
from support.case_configs import TAINTED, UNISOLATED
from support.cel_admission import (
    labels,
)
from support.paths import ROOT

from cdk_app.config.loader import load_config
from cdk_app.kubernetes.guardrails import guardrail_manifests


@pytest.fixture(scope="module")
def synthesized() -> dict[str, list[dict[str, Any]]]:
    return {env: synthesized_manifests(env) for env in sorted({case.env for case in CASES})}


# ---- the objects of the matrix ------------------------------------------------------------------------


# ---- the classes of an outside attack on the guardrails, and their siblings ---------------------------

@pytest.mark.synth
@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_matrix(synthesized, case):
    verdict = run(case, synthesized[case.env])
    assert verdict.errors == [], "an expression failed to evaluate (the API server would refuse, without a reason)"
    assert verdict.rules == set(case.refused), verdict.denials
    for rule, text in case.refused.items():
        messages = [m for m in verdict.denials if m.startswith(f"hyperpod-kit guardrail {rule}:")]
        assert any(text in m for m in messages), (text, messages)


@pytest.mark.parametrize("case", [c for c in CASES if c.obj["kind"] not in ("PyTorchJob", "MPIJob")],
                         ids=lambda c: c.id)
@pytest.mark.slow
def test_every_built_in_object_of_the_matrix_is_one_the_api_server_accepts(case):
    """The matrix tests real objects: each one of a built-in kind (and its old version) passes the
    Kubernetes schema of the configs' version, so a refusal is the policy's, not a malformed object's.
    (PyTorchJob and MPIJob are custom resources kubernetes-validate has no schema for.)"""
    for obj in filter(None, (case.obj, case.old)):
        kubernetes_validate.validate(copy.deepcopy(obj), "1.33", strict=True)


@pytest.mark.synth
def test_the_matrix_is_large_and_refuses_every_rule(synthesized):
    assert len(CASES) >= 40
    refused = {rule for case in CASES for rule in case.refused}
    names = {re.match(r"hyperpod-kit guardrail ([a-z-]+):", v["message"]).group(1)
             for env in ("prod", TAINTED, UNISOLATED) for m in synthesized[env] if m["kind"] == "ValidatingAdmissionPolicy"
             for v in m["spec"]["validations"]}
    assert refused == names
    kinds = {case.obj["kind"] for case in CASES}
    assert {"Pod", "Job", "PyTorchJob", "MPIJob", "Deployment", "StatefulSet"} <= kinds


def test_a_new_team_is_covered_with_no_other_edit():
    config = load_config(ROOT / "config" / "prod.yaml").config
    grown = config.model_copy(update={"teams": (*config.teams, config.teams[0].model_copy(update={"name": "speech"}))})
    manifests = guardrail_manifests(grown)
    ns = "hyperpod-ns-speech"
    own = workload("Job", ns, pod_spec(container()), metadata_labels=labels(ns))
    assert run(Case("own", own, {}), manifests).allowed
    foreign = with_label(own, queue=f"{NLP}-localqueue")
    assert run(Case("foreign", foreign, {}), manifests).rules == {"queue"}
    attack = workload("Job", ns, pod_spec(container(**sc(privileged=True))), metadata_labels=labels(ns))
    assert run(Case("attack", attack, {}), manifests).rules == {"privileged"}
    # The same request in the config before the team was added: not bound (the namespace is not a team's).
    assert run(Case("before", attack, {}), guardrail_manifests(config)).allowed
