"""plan's quota rows for GPU partitions and absolute borrow limits, read from ComputeQuota properties as the
kit writes them (cdk_app.stacks.team_stack.quota_parameters, checked against cfn-lint's schema in
tests/unit/stacks/test_team_stack.py)."""

from __future__ import annotations

from support.mig_config import write_mig_config

from cdk_app.cli import plan as planning
from cdk_app.config.loader import load_config
from cdk_app.stacks.team_stack import quota_parameters

ARN = "arn:aws:sagemaker:us-east-1:111122223333:cluster/abcdefghijkl"


def _templates(directory, **amounts):
    directory.mkdir()
    config = load_config(write_mig_config(directory, **amounts)).config
    smith = next(t for t in config.teams if t.name == "smith")
    props = quota_parameters(config, ARN, smith, smith.quota)
    return {"HyperPod-dev-governance": {"Resources": {"Quota": {"Type": "AWS::SageMaker::ComputeQuota",
                                                                "Properties": props}}}}


def test_fewer_partitions_is_a_lowered_quota_and_a_new_limit_is_shown(tmp_path):
    before = _templates(tmp_path / "a", smith=30, smith_limit=2)
    after = _templates(tmp_path / "b", smith=20, smith_limit=5)
    plan = planning.compare(before, after, "t")
    [team] = plan.teams
    assert (team.team, team.change, team.lowered) == ("smith", "changed", ("ml.p5.48xlarge",))
    lines = planning.render(plan).splitlines()
    assert "      ml.p5.48xlarge: 30 mig-1g.10gb partitions -> 20 mig-1g.10gb partitions" in lines
    assert ("      ml.p5.48xlarge absolute borrow limit: 2 mig-1g.10gb partitions -> 5 mig-1g.10gb partitions"
            in lines)


def test_a_raised_borrow_limit_alone_lowers_nothing(tmp_path):
    plan = planning.compare(_templates(tmp_path / "a", smith_limit=5), _templates(tmp_path / "b", smith_limit=1), "t")
    [team] = plan.teams
    assert team.lowered == ()  # a borrow limit is what the team may take, not what its running jobs hold
