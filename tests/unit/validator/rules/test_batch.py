"""Batch rules behaviour that mutation testing of cdk_app/validator/rules/batch.py found untested.

Limits are read from botocore's batch model (the documentation of ShareAttributes.shareIdentifier states the
255-character and 500-identifier limits) and tested on both sides of the edge; the config is
tests/unit/validator/rules/test_batch_bad_configs.py's valid BASE (two fair-share teams, high and low, on queue fair-q).
"""

from __future__ import annotations

import re

import botocore.session
import pytest
from support.batch_bad_configs import BASE, edit

from cdk_app.validator.report import check_file

SHARE_DOC = botocore.session.get_session().get_service_model("batch").shape_for("ShareAttributes") \
    .members["shareIdentifier"].documentation
MAX_SHARE_CHARS = int(re.search(r"limited to (\d+) alphanumeric characters", SHARE_DOC)[1])
MAX_ACTIVE_SHARES = int(re.search(r"no more than (\d+) share identifiers active", SHARE_DOC)[1])
HIGH_SHARE = "      share_identifier: HIGHPRI\n"
HIGH_ON_FAIR = "    - name: high\n      queues: [fair-q]\n"


def codes(write_config, text: str) -> list[tuple[str, str]]:
    return sorted((f.code, f.path) for f in check_file(write_config(text)).findings)


def test_base_is_clean(write_config):
    assert codes(write_config, BASE) == []


@pytest.mark.parametrize("identifier, allowed", [
    ("A" * MAX_SHARE_CHARS, True), ("A" * (MAX_SHARE_CHARS + 1), False), ("a1B2", True), ("HIGH-PRI", False),
    ("HIGH_PRI", False), ("'HIGH PRI'", False), ('"HIGH\\n"', False), ("HIGH*", False),
])
def test_share_identifier_is_letters_and_digits_up_to_the_limit(write_config, identifier, allowed):
    found = codes(write_config, edit(HIGH_SHARE, f"      share_identifier: {identifier}\n"))
    assert found == ([] if allowed else [("HPK707", "batch.teams[2].share_identifier")])


@pytest.mark.parametrize("extra", [0, 1])
def test_active_share_identifiers_per_queue_at_the_limit(write_config, extra):
    # high and low are two; fill the queue to the limit, then one more.
    teams = "".join(f"    - {{name: t{i}, queues: [fair-q], share_identifier: S{i}}}\n"
                    for i in range(MAX_ACTIVE_SHARES - 2 + extra))
    report = check_file(write_config(BASE + teams))
    assert [(f.code, f.path) for f in report.findings] == ([("HPK708", "batch.queues[1].name")] if extra else [])
    if extra:
        assert report.findings[0].message == f"{MAX_ACTIVE_SHARES + 1} share identifiers on queue 'fair-q'"
        assert report.findings[0].hint == f"a queue holds at most {MAX_ACTIVE_SHARES} active share identifiers"


@pytest.mark.parametrize("old, new, expected", [
    ("    - name: g6\n", "    - name: p4d\n",
     ("batch.service_environments[1].name",
      "service environment 'p4d' is defined twice (first at batch.service_environments[0].name)",
      "each service environment needs a unique name")),
    ("    - name: fair-q\n", "    - name: quota-q\n",
     ("batch.queues[1].name", "job queue 'quota-q' is defined twice (first at batch.queues[0].name)",
      "each job queue needs a unique name")),
    ("    - name: low\n", "    - name: high\n",
     ("batch.teams[3].name", "Batch team 'high' is defined twice (first at batch.teams[2].name)",
      "each Batch team needs a unique name")),
])
def test_each_kind_of_batch_name_is_unique(write_config, old, new, expected):
    report = check_file(write_config(edit(old, new)))
    assert [(f.path, f.message, f.hint) for f in report.findings if f.code == "HPK701"] == [expected]


def test_a_region_without_scheduling_policies_refuses_the_first_queue_that_needs_one(write_config, monkeypatch):
    # cfn-lint 1.58's data has no such region today (me-central-1 lacks only AWS::Batch::QuotaShare), so the
    # region data is the installed one minus AWS::Batch::SchedulingPolicy: what the rule must say when a
    # region is added to the data before that type reaches it.
    from cdk_app.domain.regions import cloudformation_types
    from cdk_app.validator.rules import batch as batch_rules

    monkeypatch.setattr(batch_rules, "cloudformation_types",
                        lambda region: cloudformation_types(region) - {"AWS::Batch::SchedulingPolicy"})
    report = check_file(write_config(BASE))
    assert [(f.code, f.path, f.message) for f in report.findings] == [
        ("HPK715", "batch.queues[0].scheduling", "CloudFormation in us-east-1 has no AWS::Batch::SchedulingPolicy")]


@pytest.mark.parametrize("strategy, refused", [("LendAndBorrow", False), ("Lend", True), ("DontLend", True)])
def test_borrow_limit_only_with_lend_and_borrow(write_config, strategy, refused):
    count = "          count: 40\n"
    report = check_file(write_config(edit(count, f"{count}      sharing_strategy: {strategy}\n      borrow_limit: 200\n")))
    assert [(f.code, f.path, f.message) for f in report.findings] == (
        [("HPK712", "batch.teams[1].borrow_limit", f"borrow_limit has no effect with sharing_strategy {strategy}")]
        if refused else [])


def test_share_identifiers_repeat_only_on_fair_share_queues(write_config):
    # high (on fair-q and fifo-q) and low (on fifo-q only) name one identifier; on a FIFO queue identifiers
    # mean nothing, so low's is useless (HPK711) but not a repeat (HPK708).
    fifo = "    - name: fifo-q\n      service_environment: p4d-fifo\n"
    text = (BASE.replace("  queues:\n", "    - name: p4d-fifo\n      capacity_limits:\n        - unit: NUM_INSTANCES\n"
                                        "          max_capacity: 4\n  queues:\n")
            .replace("  teams:\n", f"{fifo}  teams:\n")
            .replace(HIGH_ON_FAIR, "    - name: high\n      queues: [fair-q, fifo-q]\n")
            .replace("      queues: [fair-q]\n      share_identifier: LOWPRI\n",
                     "      queues: [fifo-q]\n      share_identifier: HIGHPRI\n"))
    report = check_file(write_config(text))
    assert [(f.code, f.path) for f in report.findings] == [("HPK711", "batch.teams[3].share_identifier"),
                                                          ("HPK711", "batch.teams[3].weight_factor")]


# --- HPK727: a disabled team keeps no queue its role could still submit to --------------------------------------
FAIR_QUEUE = "    - name: fair-q\n      service_environment: g6\n      scheduling: fair_share\n      share_decay_seconds: 3600\n"
DISABLED_HINT = ("remove the fifo and fair_share queues from the team's queues (its role then cannot submit to them), "
                 "or set enabled: true")


@pytest.mark.parametrize("queues, more", [("[fair-q]", ""), ("[fair-q, fifo-q]", " (and 1 more)")])
def test_disabled_team_on_open_queues(write_config, queues, more):
    text = BASE.replace(FAIR_QUEUE, FAIR_QUEUE + "    - name: fifo-q\n      service_environment: fifo-env\n").replace(
        "  queues:\n", "    - name: fifo-env\n      capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 2}]\n  queues:\n")
    text = text.replace(HIGH_ON_FAIR, f"    - name: high\n      enabled: false\n      queues: {queues}\n")
    report = check_file(write_config(text))
    assert [(f.code, f.path, f.message, f.hint) for f in report.findings] == [
        ("HPK727", "batch.teams[2].enabled", f"team 'high' is disabled but is on fair_share queue 'fair-q'{more}: "
         "enabled: false only disables a quota share, so its role could still submit there", DISABLED_HINT)]


def test_disabled_team_on_a_quota_queue_and_an_undefined_one(write_config):
    # A quota share has the switch; an undefined queue is HPK706's, not a crash.
    text = BASE.replace("    - name: ProdExp2\n      queues: [quota-q]\n",
                        "    - name: ProdExp2\n      enabled: false\n      queues: [quota-q, nowhere]\n")
    assert codes(write_config, text) == [("HPK706", "batch.teams[1].queues[1]")]


def test_two_teams_passing_one_execution_role(write_config):
    role = "arn:aws:iam::111122223333:role/P1Training"
    text = edit("          count: 40\n", f"          count: 40\n      execution_role_arn: {role}\n"
                                          "      principals: [arn:aws:iam::111122223333:role/P2]\n")
    report = check_file(write_config(text))
    assert [(f.code, f.path, f.message, f.hint) for f in report.findings] == [
        ("HPK726", "batch.teams[1].execution_role_arn",
         f"teams 'ProdExp1' and 'ProdExp2' pass the same execution role {role}",
         "give each team its own training execution role: jobs of one team can read and write whatever the other's "
         "role may")]


@pytest.mark.parametrize("count", [40, 41])
def test_quota_shares_against_their_environment_only(write_config, count):
    # ProdExp1 60 + ProdExp2 on p4d's 100 instances: at the limit, then one over. Queue q5, quota_share on
    # another environment, is no part of p4d's sum or message.
    text = edit("  queues:\n", "    - name: p5\n      capacity_limits:\n        - unit: ml.p5.48xlarge\n"
                               "          max_capacity: 4\n  queues:\n    - name: q5\n      service_environment: p5\n"
                               "      scheduling: quota_share\n").replace("          count: 40\n", f"          count: {count}\n")
    report = check_file(write_config(text))
    assert [(f.code, f.path, f.message) for f in report.findings] == ([] if count == 40 else [
        ("HPK710", "batch.teams[1].quota[0]", "quota shares on quota-q hold 101 instances of ml.p4d.24xlarge but "
                                             "service environment 'p4d' has 100 instances (ProdExp1 60, ProdExp2 41)")])


# --- HPK728: IAM's 2,048-character quota on a role trust policy (IAM and STS quotas, "Role trust policy length";
# IAM counts the policy without white space) -----------------------------------------------------------------------
TRUST_QUOTA = 2048
ROLE_ARN = "arn:aws:iam::111122223333:role/"


def trust_length(principals: list[str]) -> int:
    """The trust policy the team's role gets (CDK's one sts:AssumeRole statement naming the ARNs), minified."""
    listed = ",".join(f'"{arn}"' for arn in sorted(principals))
    return len('{"Statement":[{"Action":"sts:AssumeRole","Effect":"Allow","Principal":{"AWS":[' + listed
               + ']}}],"Version":"2012-10-17"}')


def principals_of_length(target: int) -> list[str]:
    """Role ARNs whose trust policy is exactly `target` characters (the last name takes up the rest)."""
    principals = [f"{ROLE_ARN}member{i:03}" for i in range(44)]
    short = trust_length(principals)
    principals[-1] += "x" * (target - short)
    assert trust_length(principals) == target and len(principals[-1].rsplit("/", 1)[1]) <= 64
    return principals


@pytest.mark.parametrize("size", [TRUST_QUOTA, TRUST_QUOTA + 1])
def test_trust_policy_at_the_iam_quota(write_config, size):
    # low (teams[3]) gets the principals; ProdExp2 before it has no role, which must not end the check.
    principals = ", ".join(principals_of_length(size))
    text = edit("      share_identifier: LOWPRI\n", f"      share_identifier: LOWPRI\n      principals: [{principals}]\n"
                f"      execution_role_arn: {ROLE_ARN}LowTraining\n")
    report = check_file(write_config(text))
    assert [(f.code, f.path, f.message) for f in report.findings] == ([] if size == TRUST_QUOTA else [
        ("HPK728", "batch.teams[3].principals",
         f"team 'low''s Batch role would have a {size:,}-character trust policy, over IAM's limit of 2,048 characters")])


# --- HPK729: a queue listed twice in a team's queues, whatever its kind -------------------------------------------
FIFO_ENV = "    - name: fifo-env\n      capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 2}]\n  queues:\n"
FIFO_QUEUE = "    - name: fifo-q\n      service_environment: fifo-env\n  teams:\n"


@pytest.mark.parametrize("team, queues, queue, repeat, first", [
    ("high", "[fair-q, fifo-q, fifo-q]", "fifo-q", 2, 1),  # FIFO: no finding at all before
    ("high", "[fifo-q, fair-q, fair-q]", "fair-q", 2, 1),  # was "share identifier used twice" (HPK708): untrue
    ("ProdExp2", "[quota-q, quota-q]", "quota-q", 1, 0),  # was "on quota-share queues quota-q, quota-q" (HPK713)
])
def test_a_queue_listed_twice_by_one_team_is_one_finding_of_its_own(write_config, team, queues, queue, repeat, first):
    text = BASE.replace("  queues:\n", FIFO_ENV, 1).replace("  teams:\n", FIFO_QUEUE, 1)
    listed = "[fair-q]" if team == "high" else "[quota-q]"
    text = edit(f"    - name: {team}\n      queues: {listed}\n", f"    - name: {team}\n      queues: {queues}\n", text)
    index = 2 if team == "high" else 1
    report = check_file(write_config(text))
    assert [(f.code, f.path, f.message) for f in report.findings] == [
        ("HPK729", f"batch.teams[{index}].queues[{repeat}]",
         f"team '{team}' lists job queue '{queue}' twice (first at queues[{first}])")]
    assert report.exit_code == 1


def test_one_queue_on_two_teams_is_no_repeat(write_config):
    text = BASE.replace("  queues:\n", FIFO_ENV, 1).replace("  teams:\n", FIFO_QUEUE, 1)
    text = edit(HIGH_ON_FAIR, "    - name: high\n      queues: [fair-q, fifo-q]\n", text)
    text = text.replace("      queues: [fair-q]\n      share_identifier: LOWPRI\n",
                        "      queues: [fair-q, fifo-q]\n      share_identifier: LOWPRI\n")
    assert codes(write_config, text) == []


HIGH_WEIGHT, LOW_WEIGHT = "      weight_factor: 1\n", "      weight_factor: 5\n"


def quotas(high: str, low: str, high_type: str = "ml.g6.12xlarge") -> str:
    """BASE with a quota on each fair-share team (the fair-share queue's environment counts NUM_INSTANCES)."""
    return BASE.replace("      share_identifier: HIGHPRI\n", f"      share_identifier: HIGHPRI\n      quota:\n"
                        f"        - {{instance_type: {high_type}, count: 60}}\n").replace(
        "      share_identifier: LOWPRI\n", "      share_identifier: LOWPRI\n      quota:\n"
        "        - {instance_type: ml.g6.12xlarge, count: 40}\n").replace(HIGH_WEIGHT, high).replace(LOW_WEIGHT, low)


def test_a_quota_split_on_a_fair_share_queue_that_the_weights_contradict_is_an_error(write_config):
    """60/40 by quota, weights left at Batch's default: it would deploy as 50/50."""
    report = check_file(write_config(quotas("", "")))
    found = [f for f in report.findings if f.code == "HPK730"]
    assert [(f.path, f.severity.value) for f in found] == [("batch.teams[2].quota", "error"),
                                                            ("batch.teams[3].quota", "error")]
    assert "the quotas ask for high 60 %, low 40 %, the weight factors give high 50 %, low 50 %" in found[0].message
    assert found[0].hint.startswith("write the split as weight factors (lower = larger share): "
                                    "high weight_factor: 1, low weight_factor: 1.5, and remove quota")


def test_weights_that_give_the_quota_split_leave_the_quota_only_redundant(write_config):
    """The weights the hint names give the split (botocore: a share goes as 1/weight): no error, HPK711 remains."""
    found = codes(write_config, quotas(HIGH_WEIGHT, "      weight_factor: 1.5\n"))
    assert found == [("HPK711", "batch.teams[2].quota"), ("HPK711", "batch.teams[3].quota")]


def test_weights_that_give_another_split_are_an_error_naming_both(write_config):
    report = check_file(write_config(quotas(HIGH_WEIGHT, LOW_WEIGHT)))  # 1 and 5: 5/6 and 1/6
    found = [f for f in report.findings if f.code == "HPK730"]
    assert len(found) == 2 and "give high 83.33 %, low 16.67 %" in found[0].message


def test_quotas_in_several_instance_types_give_no_weights_to_suggest(write_config):
    report = check_file(write_config(quotas("", "", high_type="ml.g6.24xlarge")))
    found = [f for f in report.findings if f.code == "HPK730"]
    assert len(found) == 2 and "weight_factor:" not in found[0].hint and "a part goes as 1/weight" in found[0].hint


def test_hpk730_names_every_fair_share_queue_of_a_team_on_two(write_config):
    """The newcomer's team was on two fair-share queues; "is on fair-share queue 'fair-q' only" was untrue."""
    second_env = "    - {name: g7, capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 4}]}\n"
    text = quotas("", "")
    text = text.replace("  queues:\n", second_env + "  queues:\n", 1).replace(
        "  teams:\n", "    - {name: fair-r, service_environment: g7, scheduling: fair_share}\n  teams:\n", 1)
    text = edit(HIGH_ON_FAIR, "    - name: high\n      queues: [fair-q, fair-r]\n", text)
    found = [f for f in check_file(write_config(text)).findings if f.code == "HPK730"]
    high = next(f for f in found if f.path == "batch.teams[2].quota")
    assert "only" not in high.message
    assert high.message.startswith("team 'high' has a quota but is on no quota-share queue; on fair-share queue "
                                   "'fair-q' (and on fair-share queue fair-r) Batch splits by weight factor")
