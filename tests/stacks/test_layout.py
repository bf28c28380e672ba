"""The stack layout and CloudFormation's limits: the limits are cfn-lint's, placement is stable under adding
and removing teams, the validator refuses what would not deploy (HPK510-HPK515) naming the limit, and the
estimate the validator uses matches real synthesized templates: resources, outputs and parameters exactly,
template bytes never below the real size and at most MARGIN above it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cfnlint.helpers import LIMITS as CFN_LINT_LIMITS
from generated_config import generated_config
from hypothesis import given, settings
from hypothesis import strategies as st
from support.layout_estimate import MARGIN, SLACK
from support.paths import ROOT
from support.synthesis import config_assembly, env_assembly

from cdk_app.config.loader import load_config
from cdk_app.stacks.layout import LIMITS, environment_of, hashed_team_stack, stack_costs, stack_name, team_layout
from cdk_app.validator.report import check_file

NAMES = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True)


def test_limits_are_cloudformations_as_cfn_lint_has_them():
    assert LIMITS == {"resources": CFN_LINT_LIMITS["Resources"]["number"],
                      "outputs": CFN_LINT_LIMITS["Outputs"]["number"],
                      "parameters": CFN_LINT_LIMITS["Parameters"]["number"],
                      "template bytes": CFN_LINT_LIMITS["template"]["body"]}


@settings(max_examples=200, deadline=None)
@given(names=st.sets(NAMES, min_size=2, max_size=40), extra=NAMES, count=st.integers(1, 100))
def test_adding_or_removing_a_team_never_moves_another(names, extra, count):
    before = {name: hashed_team_stack(name, count) for name in names}
    added = {name: hashed_team_stack(name, count) for name in names | {extra}}
    removed_one = sorted(names)[0]
    removed = {name: hashed_team_stack(name, count) for name in names - {removed_one}}
    assert all(added[n] == before[n] for n in names) and all(removed[n] == before[n] for n in removed)
    assert all(0 <= k < count for k in before.values())


def findings(write_config, text: str):
    report = check_file(write_config(text))
    return report, {f.code: f for f in report.findings}


def test_too_many_teams_for_the_governance_stack_are_refused_before_synth(write_config):
    """130 teams x 4 resources cannot fit one stack with the governance pieces (the issue: CDK died at 122)."""
    text = generated_config(130, team_stacks=0)
    report, by_code = findings(write_config, text)
    finding = by_code["HPK510"]
    assert "HyperPod-bench-governance would have 528 resources; CloudFormation allows 500 per stack" in finding.message
    assert finding.path == "teams" and "task_governance.team_stacks: 3" in finding.hint
    assert report.exit_code == 1


def test_a_full_team_stack_names_the_team_it_received_last_and_a_stack_with_room(write_config):
    text = generated_config(260, team_stacks=2)
    config = load_config(write_config(text)).config
    layout = team_layout(config)
    report = check_file(write_config(text))
    full = [f for f in report.findings if f.code == "HPK510"]
    assert full and report.exit_code == 1
    for finding in full:
        stack = next(s for s in layout.team_stacks if f"stack {stack_name(config, s)} would have" in finding.message)
        last = layout.stacks[stack][-1].name
        assert finding.path == f"teams[{int(last.split('-')[1])}].name"
        assert "team_stack: " in finding.hint and "never move a deployed team" in finding.hint


def test_a_pin_moves_a_new_team_and_must_name_an_existing_stack(write_config):
    text = generated_config(60, team_stacks=2)
    home = hashed_team_stack("team-059", 2)
    pinned = text + f"    team_stack: {1 - home}\n"
    assert team_layout(load_config(write_config(pinned)).config).stack_of("team-059") == f"teams-{1 - home}"
    _, by_code = findings(write_config, text + "    team_stack: 2\n")
    assert "team stack 2 does not exist (team stacks: 0 to 1)" in by_code["HPK515"].message


def test_a_stack_above_80_percent_is_a_warning(write_config):
    text = generated_config(105, team_stacks=0)
    report, by_code = findings(write_config, text)
    assert report.ok and "HPK514" in by_code and "of CloudFormation's 500 per stack" in by_code["HPK514"].message


EXTRA_TEAMS = (("x" * 40, ["a", "b"]), ("q", []), ("long-team-name-with-several-parts", ["q"]))
EXTRA_GROUPS = ("    - name: extra\n      instance_type: ml.g5.12xlarge\n      count: 3\n"
                "    - name: cpu\n      instance_type: ml.m5.2xlarge\n      count: 2\n")
# Names of 1 to 40 characters, 0 to 2 principals, 1 or 2 quota entries, over 3 team stacks.
VARIED = generated_config(40, team_stacks=3).replace("  instance_groups:\n", "  instance_groups:\n" + EXTRA_GROUPS, 1) + "".join(
    f"  - name: {name}\n    quota:\n      - instance_type: ml.g5.12xlarge\n        count: 1\n"
    f"      - instance_type: ml.m5.2xlarge\n        vcpu: 2.5\n"
    + (f"    principals: [{', '.join(f'arn:aws:iam::111122223333:role/{r}' for r in roles)}]\n" if roles else "")
    for name, roles in EXTRA_TEAMS)


# A Batch-only environment with a long name and varied pieces: several capacity limits, queues with and
# without timeouts, default and explicit weights, teams on one to three queues of every kind, several
# principals, a priority cap or none, a team without a role.
BATCH_VARIED = """\
environment: batch-varied-names-x
account: "111122223333"
region: ap-southeast-2
batch:
  service_environments:
    - name: a
      capacity_limits:
        - {unit: ml.p4d.24xlarge, max_capacity: 100}
        - {unit: ml.p5.48xlarge, max_capacity: 7}
        - {unit: ml.g5.12xlarge, max_capacity: 12345}
    - name: fair-environment-with-a-rather-long-name
      capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 8}]
    - name: f
      capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 1}]
  queues:
    - {name: q, service_environment: a, scheduling: quota_share}
    - {name: fair-queue-with-a-long-name_and_underscores, service_environment: fair-environment-with-a-rather-long-name,
       scheduling: fair_share, runnable_timeout_seconds: 600}
    - {name: fifo, service_environment: f, runnable_timeout_seconds: 86400}
  teams:
""" + "".join(
    f"""    - name: {name}
      queues: [{queues}]
{extra}"""
    for name, queues, extra in (
        ("t", "q", "      quota: [{instance_type: ml.p4d.24xlarge, count: 1}]\n      enabled: false\n"
                   "      principals: [arn:aws:iam::111122223333:role/a]\n"
                   "      execution_role_arn: arn:aws:iam::111122223333:role/b\n"),
        ("team_with-a-long-name-" + "x" * 80, "q, fair-queue-with-a-long-name_and_underscores, fifo",
         "      quota: [{instance_type: ml.p4d.24xlarge, count: 50}, {instance_type: ml.p5.48xlarge, count: 7},"
         " {instance_type: ml.g5.12xlarge, count: 12000}]\n"
         "      sharing_strategy: DontLend\n      preempt_team_tasks: Never\n"
         "      share_identifier: S" + "s" * 200 + "\n      weight_factor: 0.0001\n      max_priority: 9999\n"
         "      principals: [arn:aws:iam::111122223333:role/p1, arn:aws:iam::111122223333:user/some/path/p2,"
         " arn:aws:iam::111122223333:role/" + "r" * 60 + "]\n"
         "      execution_role_arn: arn:aws:iam::111122223333:role/path/to/" + "e" * 60 + "\n"),
        ("fair-only", "fair-queue-with-a-long-name_and_underscores",
         "      share_identifier: F\n      principals: [arn:aws:iam::111122223333:role/f]\n"
         "      execution_role_arn: arn:aws:iam::111122223333:role/f\n      max_priority: 0\n"),
        ("no-role", "fifo, fair-queue-with-a-long-name_and_underscores", "      share_identifier: N\n"),
        ("fifo-only", "fifo", "      principals: [arn:aws:iam::111122223333:role/x]\n"
                              "      execution_role_arn: arn:aws:iam::111122223333:role/y\n"),
    ))


def real(assembly: Path) -> dict[str, dict]:
    return {p.name.removesuffix(".template.json"): {"template": json.loads(p.read_text()), "bytes": p.stat().st_size}
            for p in assembly.glob("*.template.json")}


@pytest.mark.synth
@pytest.mark.parametrize("case", ["dev", "prod", "varied", "batch-example", "batch-only-example", "batch-varied"])
def test_the_estimate_matches_the_synthesized_templates(tmp_path_factory, case):
    if case in ("varied", "batch-varied", "batch-only-example"):
        # Synthesized with version reporting on, as `cdk synth` and `cdk deploy` run by default.
        text = {"varied": VARIED, "batch-varied": BATCH_VARIED}.get(case) or (ROOT / "config" / f"{case}.yaml").read_text()
        assembly = config_assembly(tmp_path_factory, text, version_reporting=True)
        config = load_config(assembly.parent / "env.yaml").config
    else:  # the shared synths of test_synth (--no-version-reporting)
        assembly, config = env_assembly(tmp_path_factory, case), load_config(ROOT / "config" / f"{case}.yaml").config
    templates = real(assembly)
    costs = stack_costs(config)
    # Every stack is costed except network, cluster and storage (fixed or bounded by the config model - at most 10
    # file systems of 8 associations - far below the limits): a Batch-only synth writes the Batch stack alone.
    assert set(costs) == ({name.removeprefix(f"HyperPod-{config.environment}-") for name in templates}
                          - {"network", "cluster", "storage"})
    assert len(costs) == {"varied": 4, "batch-example": 2}.get(case, 1)
    assert {environment_of(name) for name in templates} == {config.environment}  # what plan reads them by
    for suffix, cost in costs.items():
        found = templates[stack_name(config, suffix)]
        template = found["template"]
        # The estimate counts CDK's metadata resource (`cdk synth` adds it unless --no-version-reporting).
        metadata = int("CDKMetadata" not in template["Resources"])
        assert cost.resources - metadata == len(template["Resources"]), suffix
        assert cost.outputs == len(template.get("Outputs", {})), suffix
        assert cost.parameters == len(template.get("Parameters", {})), suffix
        assert found["bytes"] <= cost.bytes <= found["bytes"] * (1 + MARGIN) + SLACK, (suffix, found["bytes"], cost.bytes)


@pytest.mark.synth
def test_cdk_itself_refuses_what_the_validator_refuses(tmp_path):
    """The source of truth for HPK510: CDK's own check at synth, on the config the validator refuses."""
    from aws_cdk import App

    from cdk_app.stacks.app_builder import build_app

    path = tmp_path / "env.yaml"
    path.write_text(generated_config(130, team_stacks=0))
    assert "HPK510" in {f.code for f in check_file(path).findings}
    app = App(outdir=str(tmp_path / "out"), builtin_cloud_formation_validation=False)
    build_app(app, load_config(path).config)
    with pytest.raises(RuntimeError, match="greater than allowed maximum of 500"):
        app.synth()


def batch_only_with(queues: int) -> str:
    """A Batch-only config with `queues` FIFO queues, each on its own service environment (2 resources each)."""
    return ("environment: many\naccount: \"111122223333\"\nregion: us-east-1\nbatch:\n  service_environments:\n"
            + "".join(f"    - {{name: e{i}, capacity_limits: [{{unit: NUM_INSTANCES, max_capacity: 1}}]}}\n"
                      for i in range(queues))
            + "  queues:\n" + "".join(f"    - {{name: q{i}, service_environment: e{i}}}\n" for i in range(queues)))


def test_a_batch_stack_over_the_resource_limit_is_refused(tmp_path):
    """The Batch stack is costed by the same layout code (its resource count is held to real synths by
    test_the_estimate_matches_the_synthesized_templates): 260 queues and environments (+ CDK's metadata) are
    521 resources - HPK510 at the batch section; 200 of each are above 80 %, a warning."""
    path = tmp_path / "many.yaml"
    path.write_text(batch_only_with(260))
    by_code = {f.code: f for f in check_file(path).findings}
    assert set(by_code) == {"HPK510", "HPK723"}  # HPK723: Batch's own limit of 50 queues per Region
    assert by_code["HPK510"].path == "batch" and "HyperPod-many-batch would have 521 resources" in by_code["HPK510"].message
    path.write_text(batch_only_with(200))  # 401 resources: above 80 %, a warning
    assert {f.code for f in check_file(path).findings} == {"HPK514", "HPK723"}


@pytest.mark.synth
def test_partitions_and_absolute_limits_cost_what_they_add_to_the_template(tmp_path_factory):
    """The bytes GPU partitions and an absolute borrow limit add to the governance template (support.mig_config on
    its base config: three AcceleratorPartition entries, one AbsoluteBorrowLimits list), estimated as synthesized:
    never below, and within a few bytes. (Measured on the difference: the base config's own estimate is the
    other cases' matter.)"""
    from support.mig_config import BASE, mig_config_text

    added = {}
    for name, text in (("base", BASE), ("partitions", mig_config_text())):
        assembly = config_assembly(tmp_path_factory, text, version_reporting=True)
        config = load_config(assembly.parent / "env.yaml").config
        added[name] = (real(assembly)[stack_name(config, "governance")]["bytes"], stack_costs(config)["governance"].bytes)
    synthesized = added["partitions"][0] - added["base"][0]
    estimated = added["partitions"][1] - added["base"][1]
    assert synthesized <= estimated <= synthesized + 8, (synthesized, estimated)
