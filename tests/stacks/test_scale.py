"""500 teams in one environment (the generated config `make bench` times): the real CLI synthesizes it,
cfn-lint passes every template for its region, every stack is within CloudFormation's limits as cfn-lint
states them (counted in the templates themselves), and the validator's estimate holds for each stack."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cfnlint.helpers import LIMITS
from generated_config import generated_config
from support.layout_estimate import MARGIN, SLACK
from support.synthesis import cfn_lint, config_assembly

from cdk_app.config.loader import load_config
from cdk_app.stacks.layout import stack_costs, stack_name

pytestmark = pytest.mark.synth
TEAMS = 500


@pytest.fixture(scope="module")
def assembly(tmp_path_factory) -> Path:
    # Version reporting on, as `cdk synth` / `cdk deploy` run by default: the templates CloudFormation gets.
    return config_assembly(tmp_path_factory, generated_config(TEAMS), version_reporting=True)


def test_cfn_lint_is_clean_for_500_teams(assembly):
    templates = sorted(str(p) for p in assembly.glob("*.template.json"))
    assert len(templates) == 3 + 9  # network, cluster, governance and the 9 team stacks
    result = cfn_lint(templates, "us-east-1")
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_stack_of_500_teams_fits_cloudformations_limits(assembly):
    config = load_config(assembly.parent / "env.yaml").config
    costs = {stack_name(config, suffix): cost for suffix, cost in stack_costs(config).items()}
    quotas = 0
    for path in assembly.glob("*.template.json"):
        template, size = json.loads(path.read_text()), path.stat().st_size
        assert len(template["Resources"]) <= LIMITS["Resources"]["number"], path.name
        assert len(template.get("Outputs", {})) <= LIMITS["Outputs"]["number"], path.name
        assert len(template.get("Parameters", {})) <= LIMITS["Parameters"]["number"], path.name
        assert size <= LIMITS["template"]["body"], path.name
        quotas += sum(r["Type"] == "AWS::SageMaker::ComputeQuota" for r in template["Resources"].values())
        cost = costs.get(path.name.removesuffix(".template.json"))
        if cost is not None:
            assert cost.resources == len(template["Resources"]) and cost.outputs == len(template.get("Outputs", {}))
            assert size <= cost.bytes <= size * (1 + MARGIN) + SLACK, (path.name, size, cost.bytes)
    assert quotas == TEAMS
