"""The collection of manifests written outside the kit (tests/support/standard_manifests.py) through the
guardrails' CEL as the governance stack synthesizes it: the verdicts the real API server gives
(tests/realk8s/test_standard_manifests.py), and each refusal names the one field to add."""

from __future__ import annotations

import pytest
from support.admission_cases import request_for, synthesized_manifests
from support.cel_admission import admit
from support.standard_manifests import STANDARD, TEAMS, for_team


@pytest.fixture(scope="module")
def synthesized():
    return {env: synthesized_manifests(env) for env in TEAMS}


@pytest.mark.synth
@pytest.mark.parametrize("env", sorted(TEAMS))
@pytest.mark.parametrize("standard", STANDARD, ids=[s.id for s in STANDARD])
def test_a_standard_manifest_gets_the_verdict_of_the_collection(synthesized, standard, env):
    obj = for_team(standard, env)
    verdict = admit(synthesized[env], request_for(obj), obj, None)
    expected = standard.refused.get(env, {})
    assert verdict.errors == []
    assert verdict.rules == set(expected), verdict.denials
    for rule, field in expected.items():
        [message] = [m for m in verdict.denials if m.startswith(f"hyperpod-kit guardrail {rule}:")]
        named = message.split(": ")[1]
        assert named.endswith(field), (named, field)

