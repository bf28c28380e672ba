"""A valid generated environment of N teams, shared by `make bench` and the tests that check the limits on it
(tests/stacks/test_scale.py, tests/stacks/test_layout.py): one ml.g5.12xlarge instance's worth of quota (4 GPUs)
per team, over groups of up to 100 instances, every team with a principal, spread over team stacks as the README advises for its size."""

from __future__ import annotations


def team_stacks_for(teams: int) -> int:
    """About 60 teams per team stack (each holds about 240 of CloudFormation's 500 resources); none for a
    small environment, whose teams stay in the governance stack."""
    return 0 if teams <= 50 else -(-teams // 60)


def generated_config(teams: int, environment: str = "bench", team_stacks: int | None = None) -> str:
    """team_stacks: default team_stacks_for(teams)."""
    groups = "".join(
        f"    - name: g{i}\n      instance_type: ml.g5.12xlarge\n      count: {min(100, teams - 100 * i)}\n"
        for i in range(-(-teams // 100))
    )
    team_text = "".join(
        f"  - name: team-{i:03d}\n    fair_share_weight: {i % 101}\n    sharing_strategy: LendAndBorrow\n"
        f"    borrow_limit: 100\n    default_priority_class: normal\n"
        f"    principals: [arn:aws:iam::111122223333:role/team-{i:03d}]\n"
        f"    quota:\n      - instance_type: ml.g5.12xlarge\n        accelerators: 4\n"
        for i in range(teams)
    )
    return (
        f'environment: {environment}\naccount: "111122223333"\nregion: us-east-1\n'
        "availability_zone_ids: [use1-az4, use1-az6]\n"
        f"hyperpod:\n  instance_groups:\n{groups}"
        "task_governance:\n  cloudformation_types:\n    cluster_policy: native\n    compute_quota: native\n"
        f"  team_stacks: {team_stacks_for(teams) if team_stacks is None else team_stacks}\n"
        "cluster_policy:\n  priority_classes:\n    - name: high\n      weight: 90\n    - name: normal\n      weight: 50\n"
        f"teams:\n{team_text}"
    )
