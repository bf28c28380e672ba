"""Manifests written outside the kit (tests/support/standard_manifests.py), created (dry run) by a team member on
the real API server with each environment's config applied - through the team's RBAC, the chart's CRDs and the
guardrails - are admitted unchanged, or refused only by the rules the collection names, each message naming
its field; the cel-python model of the fast tier gives the same verdicts (tests/unit/kubernetes/guardrails/
test_standard_manifests.py), and so does `hyperpod-kit check`, run beside the server on each manifest."""

from __future__ import annotations

import re

import pytest
import yaml
from support.admission_cases import synthesized_manifests
from support.cli_runner import invoke
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


def check_verdict(env: str, team: str, obj: dict, tmp_path):
    path = tmp_path / "manifest.yaml"
    path.write_text(yaml.safe_dump(obj))
    return invoke("check", f"config/{env}.yaml", "--team", team, str(path))


@pytest.mark.parametrize("standard", STANDARD, ids=[s.id for s in STANDARD])
def test_a_standard_manifest_is_admitted_or_refused_by_the_named_rules_only(cluster, standard, tmp_path):
    env, server = cluster
    team, _ = TEAMS[env]
    obj = for_team(standard, env)
    answer = server.create(obj, user=f"arn:aws:sts::111122223333:assumed-role/hyperpod-team-{team}/alice",
                           groups=(f"hyperpod-team-{team}",))
    expected = standard.refused.get(env, {})
    # `hyperpod-kit check` gives the same manifest the same verdict offline, naming the rules the server names.
    checked = check_verdict(env, team, obj, tmp_path)
    assert (checked.exit_code == 0) == answer.allowed, (checked.output, answer.message)
    if not expected:
        assert answer.allowed, (answer.status, answer.message)
        return
    assert answer.status == 403, (answer.status, answer.message)  # a policy's denial: Forbidden
    # The API server reports the first failing validation of each policy; each reported one is expected and
    # names its field (the Warn pass of test_guardrail_verdicts compares whole rule sets on the corpus).
    refusals = dict(RULE.findall(answer.message))
    assert refusals and set(refusals) <= set(expected), answer.message
    assert set(refusals) <= set(dict(RULE.findall(checked.output))), (answer.message, checked.output)
    for rule, field in refusals.items():
        assert field.rstrip(":").endswith(expected[rule]), (rule, field)
