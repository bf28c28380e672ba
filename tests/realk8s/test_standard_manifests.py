"""Manifests written outside the kit (tests/support/standard_manifests.py), created (dry run) by a team member on
the real API server with each environment's config applied - through the team's RBAC, the chart's CRDs and the
guardrails - are admitted unchanged, or refused only by the rules the collection names, each message naming
its field; the cel-python model of the fast tier gives the same verdicts (tests/unit/kubernetes/guardrails/
test_standard_manifests.py)."""

from __future__ import annotations

import re

import pytest
from support.admission_cases import synthesized_manifests
from support.realk8s.api import Cluster
from support.realk8s.guardrail_bindings import settle
from support.standard_manifests import STANDARD, TEAMS, for_team

RULE = re.compile(r"hyperpod-kit guardrail ([a-z0-9-]+): ([^ ]+)")


@pytest.fixture(scope="module", params=sorted(TEAMS))
def cluster(request, start_cluster) -> tuple[str, Cluster]:
    env = request.param
    server = start_cluster(env)
    # The admission plugin reads each policy and binding through an informer on its own time: wait until a
    # probe of every policy is refused (one policy acting said nothing of the others: a flake).
    settle(server, synthesized_manifests(env), ["Deny", "Audit"])
    return env, server


@pytest.mark.parametrize("standard", STANDARD, ids=[s.id for s in STANDARD])
def test_a_standard_manifest_is_admitted_or_refused_by_the_named_rules_only(cluster, standard):
    env, server = cluster
    team, _ = TEAMS[env]
    obj = for_team(standard, env)
    answer = server.create(obj, user=f"arn:aws:sts::111122223333:assumed-role/hyperpod-team-{team}/alice",
                           groups=(f"hyperpod-team-{team}",))
    expected = standard.refused.get(env, {})
    if not expected:
        assert answer.allowed, (answer.status, answer.message)
        return
    assert answer.status == 403, (answer.status, answer.message)  # a policy's denial: Forbidden
    # The API server reports the first failing validation of each policy; each reported one is expected and
    # names its field (the Warn pass of test_guardrail_verdicts compares whole rule sets on the corpus).
    refusals = dict(RULE.findall(answer.message))
    assert refusals and set(refusals) <= set(expected), answer.message
    for rule, field in refusals.items():
        assert field.rstrip(":").endswith(expected[rule]), (rule, field)
