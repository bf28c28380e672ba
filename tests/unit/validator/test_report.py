"""Behaviour of the validator's smaller modules (kinds, report, reach, regions, stack_limits, batch_summary) that
mutation testing found untested. The base config (tests/support/adversarial/base.yaml) is valid and gives no
finding; codes are the README's finding table.
"""

from __future__ import annotations

import pytest
from cfnlint.helpers import LIMITS as CFN_LINT_LIMITS
from support.paths import SUPPORT
from support.rule_runner import PROVIDERS, offered_in, run

from cdk_app.stacks.layout import Cost, suggested_team_stacks
from cdk_app.validator.report import check_file
from cdk_app.validator.rules import stack_limits

ZONES = "availability_zone_ids: [use1-az4, use1-az6]\n"
MANY_TEAMS = "README: Many teams"


# --- A broken hyperpod or batch section is left out; findings about which kinds the environment has are then
# unknown and dropped (HPK719, HPK720, and HPK011/HPK013 at availability_zone_ids), all others kept. --------------
@pytest.mark.parametrize("zones, kept", [
    ("availability_zone_ids: []\n", []),  # HPK013 of check_kinds, dropped
    ("", []),  # HPK011 of check_kinds, dropped
    # One zone: HPK107 (EKS needs two) and HPK121 stand whatever batch holds.
    ("availability_zone_ids: [use1-az4]\n", [("HPK107", "availability_zone_ids"),
                                              ("HPK121", "network.cluster_zone_ids[1]")]),
])
def test_broken_batch_section_drops_only_the_kind_findings(write_config, zones, kept):
    report = run(write_config, ("environment: dev\n", "environment: dev\nbatch: 5\n"), (ZONES, zones))
    assert [(f.code, f.path) for f in report.findings] == [("HPK012", "batch")] + kept


def test_broken_hyperpod_section_drops_the_batch_only_findings(write_config):
    # Left out, `hyperpod: 5` would make this a Batch-only environment whose HyperPod keys HPK720 names. The old
    # hyperpod body hangs under an unknown key (HPK010).
    batch = ("batch:\n  service_environments:\n    - {name: g6, capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 8}]}\n"
             "  queues:\n    - {name: f, service_environment: g6}\n")
    report = run(write_config, ("environment: dev\n", f"environment: dev\n{batch}"), ("hyperpod:\n", "hyperpod: 5\nold:\n"))
    assert [(f.code, f.path) for f in report.findings] == [("HPK012", "hyperpod"), ("HPK010", "old")]


def test_environment_with_neither_kind(write_config):
    report = check_file(write_config('environment: dev\naccount: "111122223333"\nregion: us-east-1\n'))
    assert [(f.code, f.path, f.message, f.hint) for f in report.findings] == [
        ("HPK719", "", "the environment has neither a hyperpod nor a batch section, so it deploys nothing",
         "add hyperpod: (a HyperPod cluster on EKS), batch: (AWS Batch queues for SageMaker Training jobs), or both "
         "(README: Teams on AWS Batch)")]


ZONES_NEEDED = "the HyperPod cluster, EKS and their network need availability zones"


@pytest.mark.parametrize("zones, expected", [
    ("", ("HPK011", f"required key 'availability_zone_ids' is missing: {ZONES_NEEDED}",
          "add `availability_zone_ids: [<zone id>, <zone id>]` (ids such as use1-az4, not names)")),
    ("availability_zone_ids: []\n", ("HPK013", "0 items has too few items",
                                     f"allowed: at least 1 ({ZONES_NEEDED}; a Batch-only environment lists none)")),
])
def test_a_cluster_needs_zones(write_config, zones, expected):
    report = run(write_config, (ZONES, zones))
    assert [(f.code, f.path, f.message, f.hint) for f in report.findings] == [
        (expected[0], "availability_zone_ids", *expected[1:])]


def test_batch_only_environment_names_each_hyperpod_key(write_config):
    report = check_file(write_config(
        'environment: dev\naccount: "111122223333"\nregion: us-east-1\nshared_pool: {name: pool}\n'
        "observability: {enabled: false}\nbatch:\n  service_environments:\n"
        "    - {name: g6, capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 8}]}\n"
        "  queues:\n    - {name: f, service_environment: g6}\n"))
    ignored = "configures the HyperPod cluster, EKS or their network, but this environment has no hyperpod section " \
              "(Batch only): it would be ignored"
    assert [(f.code, f.path, f.message, f.hint) for f in report.findings] == [
        ("HPK720", "shared_pool", f"shared_pool {ignored} (Batch teams and their shares go under batch.teams)",
         "remove shared_pool, or add a hyperpod section"),
        ("HPK720", "observability", f"observability {ignored}", "remove observability, or add a hyperpod section")]


# --- The Batch tables of `validate --format json`: keys as README ("Teams on AWS Batch") documents them, values
# from the seed scenarios (README's example: ProdExp1 60 -> 100, ProdExp2 40 -> 100 of 100 p4d). -----------------
SCENARIOS = SUPPORT / "scenarios"


def test_quota_share_tables_as_documented():
    report = check_file(SCENARIOS / "s10_batch_quota_shares.yaml")
    assert [row.to_json() for row in report.batch_capacity] == [
        {"service_environment": "p4d", "unit": "ml.p4d.24xlarge", "capacity": 100, "quota_shares": 100}]
    share = {"unit": "ml.p4d.24xlarge", "reach": 100, "strategy": "LendAndBorrow"}
    assert [row.to_json() for row in report.batch_queues] == [
        {"queue": "prod-p4d", "service_environment": "p4d", "scheduling": "quota_share", "priority": 1,
         "shares": [{"team": "ProdExp1", "quota": 60, **share}, {"team": "ProdExp2", "quota": 40, **share}]}]


def test_fifo_and_fair_share_tables_as_documented():
    # No quota-share queue uses either environment: quota_shares is null; a FIFO queue has no shares.
    report = check_file(SCENARIOS / "s10_batch_fifo_and_fair_share.yaml")
    assert [row.to_json() for row in report.batch_capacity] == [
        {"service_environment": "cpu", "unit": "NUM_INSTANCES", "capacity": 10, "quota_shares": None},
        {"service_environment": "g6", "unit": "NUM_INSTANCES", "capacity": 4, "quota_shares": None}]
    assert [row.to_json() for row in report.batch_queues] == [
        {"queue": "ml-c5-xlarge-queue", "service_environment": "cpu", "scheduling": "fifo", "priority": 2, "shares": []},
        {"queue": "ml-g6-12xlarge-queue", "service_environment": "g6", "scheduling": "fair_share", "priority": 1,
         # parts (1/w) / sum(1/w): 1, 1/3, 1/5 of 23/15 are 15/23, 5/23 and 3/23
         "shares": [{"team": "production", "share_identifier": "HIGHPRI", "weight_factor": 1.0, "percent": 65.22},
                    {"team": "exploration", "share_identifier": "MIDPRI", "weight_factor": 3.0, "percent": 21.74},
                    {"team": "sweeps", "share_identifier": "LOWPRI", "weight_factor": 5.0, "percent": 13.04}]}]


# --- HPK510-HPK514: each CloudFormation per-stack limit (cfn-lint's LIMITS) at its edge, and the 80 % warning ---
CFN = {"resources": ("HPK510", CFN_LINT_LIMITS["Resources"]["number"]),
       "outputs": ("HPK511", CFN_LINT_LIMITS["Outputs"]["number"]),
       "parameters": ("HPK513", CFN_LINT_LIMITS["Parameters"]["number"]),
       "template bytes": ("HPK512", CFN_LINT_LIMITS["template"]["body"])}
FIELD = {"resources": "resources", "outputs": "outputs", "parameters": "parameters", "template bytes": "bytes"}


@pytest.mark.parametrize("what", CFN)
@pytest.mark.parametrize("share, extra, expected", [(0.8, 0, None), (0.8, 1, "HPK514"), (1.0, 0, "HPK514"),
                                                   (1.0, 1, "error")])
def test_stack_limit_edges(write_config, monkeypatch, what, share, extra, expected):
    # The governance stack's estimate replaced by one amount: exactly 80 % or the limit, or one more.
    code, limit = CFN[what]
    amount = int(limit * share) + extra
    monkeypatch.setattr(stack_limits, "stack_costs", lambda config, layout: {"governance": Cost(**{FIELD[what]: amount})})
    report = run(write_config)
    found = [(f.code, f.severity.value, f.path, f.message, f.hint) for f in report.findings]
    # All teams are in the governance stack (team_stacks 0): the way out is team stacks.
    hint = (f"set task_governance.team_stacks: {suggested_team_stacks(Cost(**{FIELD[what]: amount}))} (a new "
            f"environment; on a deployed one this moves every team's quota - delete and create: {MANY_TEAMS})")
    if expected is None:
        assert found == []
    elif expected == "HPK514":
        assert found == [("HPK514", "warning", "teams", f"stack HyperPod-dev-governance would have {amount:,} {what}, "
                          f"{amount / limit:.0%} of CloudFormation's {limit:,} per stack", hint)]
    else:
        assert found == [(code, "error", "teams", f"stack HyperPod-dev-governance would have {amount:,} {what}; "
                          f"CloudFormation allows {limit:,} per stack", hint)]


# --- HPK110 in every region cfn-lint has data for: refused exactly where AWS::SageMaker::Cluster is missing ----
REGIONS = sorted(p.stem for p in PROVIDERS.glob("*-*-[0-9].json"))


@pytest.mark.parametrize("region", REGIONS)
def test_hyperpod_only_where_cloudformation_has_the_cluster_type(write_config, region):
    offered = "AWS::SageMaker::Cluster" in offered_in(region)
    report = run(write_config, ("region: us-east-1\n", f"region: {region}\n"))
    assert [(f.code, f.message, f.hint) for f in report.findings if f.code == "HPK110"] == ([] if offered else [
        ("HPK110", f"SageMaker HyperPod (AWS::SageMaker::Cluster) is not offered in {region}",
         "pick a region where CloudFormation has AWS::SageMaker::Cluster, e.g. us-east-1 or us-west-2")])


# --- A key left out as broken: capacity findings go when it is a capacity input, stay when it is not -----------
JOHN_FIVE_G5 = ("      - instance_type: ml.g5.12xlarge\n        count: 3\n",
                "      - instance_type: ml.g5.12xlarge\n        count: 5\n")  # 5 + smith's 1 of 4: HPK501
SMITH = "  - name: smith\n"


@pytest.mark.parametrize("edit, broken", [
    (("        count: 1\n    principals:", "        count: 1\n        extra: 1\n    principals:"),
     ("HPK010", "teams[0].quota[1].extra")),
    (("      count: 4\n", "      count: four\n"), ("HPK012", "hyperpod.instance_groups[0].count")),
    ((SMITH, SMITH + "    enabled: nope\n"), ("HPK012", "teams[1].enabled")),
    ((SMITH, SMITH + "    sharing_strategy: Lnd\n"), ("HPK014", "teams[1].sharing_strategy")),
    (("cluster_policy:\n", "cluster_policy:\n  idle_resource_sharing: Of\n"), ("HPK014", "cluster_policy.idle_resource_sharing")),
    (("teams:\n", "shared_pool: 5\nteams:\n"), ("HPK012", "shared_pool")),
])
def test_capacity_findings_go_with_a_broken_capacity_input(write_config, edit, broken):
    assert [(f.code, f.path) for f in run(write_config, JOHN_FIVE_G5, edit).findings] == [broken]


@pytest.mark.parametrize("edit, broken", [
    ((SMITH, SMITH + "    bogus: 1\n"), ("HPK010", "teams[1].bogus")),
    ((SMITH, SMITH + "    team_stack: x\n"), ("HPK012", "teams[1].team_stack")),
    # A group's capacity is its type and count: an unknown key or a broken zone leaves it as it is.
    (("      threads_per_core: 2\n", "      threads_per_core: 2\n      bogus: 1\n"),
     ("HPK010", "hyperpod.instance_groups[0].bogus")),
])
def test_capacity_findings_stay_with_another_broken_key(write_config, edit, broken):
    found = sorted((f.code, f.path) for f in run(write_config, JOHN_FIVE_G5, edit).findings)
    assert found == sorted([broken, ("HPK501", "teams[0].quota[0]"), ("HPK501", "teams[1].quota[0]")])


def test_a_misspelt_batch_scheduling_gives_no_finding_about_a_fifo_queue(write_config):
    # Left out, scheduling: fairshare would read as fifo, and the fair-share settings of the queue and of its
    # teams would look useless (HPK711). With the validator read from its cache file this was hidden: the
    # batch key could not be left out at all (see test_finding_texts).
    from support.batch_bad_configs import BASE as BATCH_BASE
    from support.batch_bad_configs import edit

    report = check_file(write_config(edit("      scheduling: fair_share\n", "      scheduling: fairshare\n", BATCH_BASE)))
    assert [(f.code, f.path) for f in report.findings] == [("HPK014", "batch.queues[1].scheduling")]


# --- Reach: one row per enabled team and instance type of its quota (reach.py) -----------------------------------
@pytest.mark.parametrize("strategy", ["Lend", "DontLend"])
def test_a_team_that_does_not_borrow_reaches_its_quota_on_every_type(write_config, strategy):
    report = run(write_config, ("    borrow_limit: 50\n", f"    sharing_strategy: {strategy}\n"))
    john = [(r.instance_type, r.strategy, r.borrow_limit, r.quota.count, r.reach.count, r.capped_by)
            for r in report.reach if r.team == "john"]
    assert john == [("ml.g5.12xlarge", strategy, None, 3, 3, None), ("ml.m5.2xlarge", strategy, None, 1, 1, None)]


def test_an_over_full_batch_stack_names_the_batch_section(write_config, monkeypatch):
    limit = CFN["resources"][1]
    monkeypatch.setattr(stack_limits, "stack_costs", lambda config, layout: {"batch": Cost(resources=limit + 1)})
    report = run(write_config)
    assert [(f.code, f.path, f.message, f.hint) for f in report.findings] == [
        ("HPK510", "batch", f"stack HyperPod-dev-batch would have {limit + 1:,} resources; CloudFormation allows "
         f"{limit:,} per stack", "the Batch stack holds every service environment, queue, quota share and team role "
         "of the environment: split the Batch teams and queues over two environments")]


# With three team stacks, john and smith hash to teams-2 (stack_layout.team_layout); teams-0 and teams-1 are empty.
THREE_STACKS = ("  addon_version: v1.6.0-eksbuild.1\n", "  addon_version: v1.6.0-eksbuild.1\n  team_stacks: 3\n")


@pytest.mark.parametrize("costs, expected", [
    ({"governance": 501}, ("HyperPod-dev-governance", "teams", "the guardrails name every team's namespace: split "
                                                              f"the teams over two environments ({MANY_TEAMS})")),
    # The roomiest other team stack is teams-1 (fewest resources), not the first by name.
    ({"teams-0": 300, "teams-1": 100, "teams-2": 501},
     ("HyperPod-dev-teams-2", "teams[1].name", "pin new teams of this stack elsewhere, e.g. team_stack: 1 "
                                               f"(HyperPod-dev-teams-1 has 100 resources); never move a deployed team ({MANY_TEAMS})")),
    ({"teams-0": 501}, ("HyperPod-dev-teams-0", "task_governance.team_stacks", MANY_TEAMS)),
])
def test_a_full_stack_of_a_layout_with_team_stacks(write_config, monkeypatch, costs, expected):
    monkeypatch.setattr(stack_limits, "stack_costs",
                        lambda config, layout: {stack: Cost(resources=n) for stack, n in costs.items()})
    stack, path, hint = expected
    report = run(write_config, THREE_STACKS)
    assert [(f.code, f.path, f.message, f.hint) for f in report.findings] == [
        ("HPK510", path, f"stack {stack} would have 501 resources; CloudFormation allows 500 per stack", hint)]


@pytest.mark.parametrize("stacks, allowed", [(0, "none: task_governance.team_stacks is 0"), (2, "0 to 1")])
def test_a_pin_to_a_team_stack_that_does_not_exist(write_config, stacks, allowed):
    report = run(write_config, ("  addon_version: v1.6.0-eksbuild.1\n", f"  addon_version: v1.6.0-eksbuild.1\n  team_stacks: {stacks}\n"),
                 (SMITH, SMITH + f"    team_stack: {stacks}\n"))
    assert [(f.code, f.path, f.message, f.hint) for f in report.findings] == [
        ("HPK515", "teams[1].team_stack", f"team stack {stacks} does not exist (team stacks: {allowed})",
         "remove team_stack, or pin the team to an existing team stack")]


def test_team_stacks_of_a_batch_only_environment_are_not_checked(write_config):
    # Without hyperpod the teams section is ignored (HPK720 says so); its pins are not HPK515's.
    report = check_file(write_config(
        'environment: dev\naccount: "111122223333"\nregion: us-east-1\nteams:\n  - {name: a, team_stack: 7}\n'
        "batch:\n  service_environments:\n    - {name: g6, capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 8}]}\n"
        "  queues:\n    - {name: f, service_environment: g6}\n"))
    assert [(f.code, f.path) for f in report.findings] == [("HPK720", "teams")]


def test_capacity_findings_go_with_the_cluster_policy_left_out(write_config):
    report = run(write_config, JOHN_FIVE_G5, ("cluster_policy:\n", "cluster_policy: 5\nold_policy:\n"))
    assert [(f.code, f.path) for f in report.findings] == [("HPK012", "cluster_policy"), ("HPK010", "old_policy")]


def test_stack_findings_go_with_the_hyperpod_section_left_out(write_config, monkeypatch):
    # A Batch stack over CloudFormation's limit is an HPK5 finding like the capacity ones; with hyperpod left
    # out as broken it is dropped, as every HPK5 finding is.
    monkeypatch.setattr(stack_limits, "stack_costs", lambda config, layout: {"batch": Cost(resources=501)})
    batch = ("batch:\n  service_environments:\n    - {name: g6, capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 8}]}\n"
             "  queues:\n    - {name: f, service_environment: g6}\n")
    report = run(write_config, ("environment: dev\n", f"environment: dev\n{batch}"), ("hyperpod:\n", "hyperpod: 5\nold:\n"))
    assert [(f.code, f.path) for f in report.findings] == [("HPK012", "hyperpod"), ("HPK010", "old")]


# --- The report itself: file, environment and loaded config on every path; capacity rows of both sides ------------
def test_report_of_a_batch_only_environment():
    path = SCENARIOS / "s10_batch_quota_shares.yaml"
    report = check_file(path)
    assert (report.file, report.environment, report.loaded.config.environment) == (str(path), "s10", "s10")
    assert check_file(path, "shown.yaml").file == "shown.yaml"


def test_report_of_an_unreadable_file(write_config):
    path = write_config("environment: [\n")
    assert (check_file(path).file, check_file(path, "shown.yaml").file) == (str(path), "shown.yaml")
    assert check_file(path).exit_code == 2 and check_file(path).loaded is None


def test_capacity_rows_of_types_on_one_side_only(write_config):
    # A c5 group nobody reserves, and a zero quota on a p5 the cluster lacks: one row each, zero on the other side.
    report = run(write_config, ("    - name: cpu\n", "    - name: c5\n      instance_type: ml.c5.xlarge\n      count: 1\n"
                                                   "    - name: cpu\n"),
                 (SMITH + "    quota:\n", SMITH + "    quota:\n      - instance_type: ml.p5.48xlarge\n        count: 0\n"))
    assert (report.environment, report.loaded.config.environment) == ("dev", "dev")
    rows = {r.instance_type: (r.capacity.count, r.reserved.count) for r in report.capacity}
    assert rows == {"ml.c5.xlarge": (1, 0), "ml.g5.12xlarge": (4, 4), "ml.m5.2xlarge": (2, 2), "ml.p5.48xlarge": (0, 0)}
    assert [r.instance_type for r in report.capacity] == sorted(rows)


# --- Findings that may only follow from an unknown instance type are held back, not counted (issue 30). ---------
GPU_TYPO = ("      instance_type: ml.g5.12xlarge\n      count: 4\n", "      instance_type: ml.g5.12xlarg\n      count: 4\n")


def test_over_capacity_findings_of_a_mistyped_group_are_held_back(write_config):
    """Without the typo'd group the quotas on ml.g5.12xlarge look over capacity ("lower the quotas by 4"):
    wrong advice, held back; the HPK201 that causes it stands and the config still fails."""
    report = run(write_config, GPU_TYPO)
    assert [(f.code, f.path) for f in report.findings] == [("HPK201", "hyperpod.instance_groups[0].instance_type")]
    assert [(f.code, f.path) for f in report.held_back] == [("HPK501", "teams[0].quota[0]"), ("HPK501", "teams[1].quota[0]")]
    assert report.exit_code == 1


def test_a_pool_made_of_a_mistyped_groups_capacity_is_held_back(write_config):
    report = run(write_config, GPU_TYPO, ("teams:\n", "shared_pool:\n  name: pool\nteams:\n"))
    assert [f.code for f in report.findings] == ["HPK201"]
    assert {f.code for f in report.held_back} == {"HPK501", "HPK505"}  # "the shared pool would hold nothing"


def test_findings_unrelated_to_the_mistyped_type_still_count(write_config):
    report = run(write_config, GPU_TYPO, ("      weight: 10\n", "      weight: 90\n"))
    assert [(f.code, f.path) for f in report.findings] == [("HPK201", "hyperpod.instance_groups[0].instance_type"),
                                                           ("HPK304", "cluster_policy.priority_classes[1].weight")]


def test_capacity_findings_of_a_partial_config_are_held_back_not_lost(write_config):
    report = run(write_config, JOHN_FIVE_G5, (SMITH, SMITH + "    sharing_strategy: Lnd\n"))
    assert [(f.code, f.path) for f in report.findings] == [("HPK014", "teams[1].sharing_strategy")]
    assert [(f.code, f.path) for f in report.held_back] == [("HPK501", "teams[0].quota[0]"), ("HPK501", "teams[1].quota[0]")]


# --- The shared pool's own quota and the unreserved capacity, per instance type (issue 30). ----------------------
def test_capacity_rows_show_the_shared_pools_quota_and_what_no_one_holds(write_config):
    """Of 4 ml.g5.12xlarge (4 GPUs each) the teams hold 3 + 1 = 4 and a pool added to them gets nothing; of
    2 ml.m5.2xlarge they hold 1 + 1 = 2. With john's g5 quota down to 1, the pool holds the 2 instances left."""
    report = run(write_config, ("teams:\n", "shared_pool:\n  name: pool\nteams:\n"),
                 ("      - instance_type: ml.g5.12xlarge\n        count: 3\n",
                  "      - instance_type: ml.g5.12xlarge\n        count: 1\n"))
    rows = {row.instance_type: row.to_json() for row in report.capacity}
    assert rows["ml.g5.12xlarge"]["shared_pool"] == {"count": 2, "accelerators": 8, "vcpu": 96, "memory_gib": 384}
    assert rows["ml.g5.12xlarge"]["unreserved"] == {"count": 0, "accelerators": 0, "vcpu": 0, "memory_gib": 0}
    assert rows["ml.m5.2xlarge"]["shared_pool"]["count"] == 0


def test_without_a_pool_the_capacity_no_team_holds_is_unreserved(write_config):
    report = run(write_config, ("      - instance_type: ml.g5.12xlarge\n        count: 3\n",
                                "      - instance_type: ml.g5.12xlarge\n        count: 1\n"))
    row, = [row.to_json() for row in report.capacity if row.instance_type == "ml.g5.12xlarge"]
    assert row["shared_pool"] is None
    assert row["unreserved"] == {"count": 2, "accelerators": 8, "vcpu": 96, "memory_gib": 384}


# --- Every independent mistake in one run (issue 30, the newcomer's task 2): config/dev.yaml copied to eu-west-1
# with zone names for zone ids, the GPU type typo'd everywhere it is written, and quotas over the group's count. --
def newcomer_file(tmp_path) -> str:
    from support.paths import ROOT

    text = (ROOT / "config" / "dev.yaml").read_text()
    text = text.replace("region: us-east-1", "region: eu-west-1").replace("use1-az4", "eu-west-1a")
    text = text.replace("use1-az6", "eu-west-1b").replace("instance_type: ml.g5.12xlarge\n", "instance_type: ml.g5.12xlage\n")
    text = text.replace("        count: 3\n", "        count: 5\n", 1)  # john 5 + smith 1 of 4 instances
    path = tmp_path / "euro.yaml"
    path.write_text(text)
    return str(path)


def test_the_newcomers_three_mistakes_and_the_regions_types_show_in_one_run(tmp_path):
    report = check_file(newcomer_file(tmp_path))
    assert not report.rules_skipped
    zone_fields = ["availability_zone_ids[0]", "availability_zone_ids[1]", "network.cluster_zone_ids[0]",
                   "network.cluster_zone_ids[1]", "hyperpod.instance_groups[0].availability_zone_id",
                   "hyperpod.instance_groups[1].availability_zone_id", "storage.file_systems[0].availability_zone_id",
                   "storage.file_systems[1].availability_zone_id"]
    zone_findings = [f for f in report.findings if f.code == "HPK015"]
    assert [f.path for f in zone_findings] == zone_fields
    # one message for the one mistake, whichever zone field holds it
    assert {f.message.split("'", 2)[2] for f in zone_findings} == {" is an availability zone name; the kit needs zone ids"}
    typo = [f.path for f in report.findings if f.code == "HPK201"]
    assert typo == ["hyperpod.instance_groups[0].instance_type", "teams[0].quota[0].instance_type",
                    "teams[1].quota[0].instance_type"]
    over = [f for f in report.findings if f.code == "HPK501"]
    assert [f.path for f in over] == ["teams[0].quota[0].count", "teams[1].quota[0].count"]
    assert "teams reserve 6 instances of ml.g5.12xlage but its instance groups have 4 instances" in over[0].message
    # cfn-lint's provider data for eu-west-1 has no ClusterSchedulerConfig: dev's `cluster_policy: native` is HPK310
    assert "AWS::SageMaker::ClusterSchedulerConfig" not in offered_in("eu-west-1")
    assert [f.path for f in report.findings if f.code == "HPK310"] == ["task_governance.cloudformation_types.cluster_policy"]
    assert report.held_back == []  # nothing follows from the zone names: the stand-ins agree as the names do


def test_the_config_reference_claim_one_run_shows_both_kinds_holds_for_the_newcomers_file(tmp_path):
    from support.paths import ROOT

    claim = (ROOT / "docs" / "reference" / "config.md").read_text()
    assert "one run shows both kinds of errors" in claim
    report = check_file(newcomer_file(tmp_path))
    shape, policy = {"HPK015"}, {"HPK201", "HPK310", "HPK501"}
    assert shape | policy <= {f.code for f in report.findings}


def test_a_zone_name_in_one_list_item_holds_back_only_what_names_its_stand_in(write_config):
    """availability_zone_ids [use1-az4, us-east-1f]: the groups in use1-az4 still match, so nothing about them;
    cluster_zone_ids' use1-az6 is not in the list as written, but fixing the zone name may well add it, and the
    finding's hint would name the stand-in the loader put in its place (a zone nobody wrote): not shown at all,
    not even among the held back (whose JSON carries the hint)."""
    report = run(write_config, ("availability_zone_ids: [use1-az4, use1-az6]", "availability_zone_ids: [use1-az4, us-east-1f]"))
    assert [(f.code, f.path) for f in report.findings] == [("HPK015", "availability_zone_ids[1]")]
    assert report.held_back == []
    # Without the cluster zones recorded, HPK123 would advise recording [use1-az4, <stand-in>]: dropped too.
    report = run(write_config, ("availability_zone_ids: [use1-az4, use1-az6]", "availability_zone_ids: [use1-az4, us-east-1f]"),
                 ("  cluster_zone_ids: [use1-az4, use1-az6]\n", ""))
    assert [(f.code, f.path) for f in report.findings + report.held_back] == [("HPK015", "availability_zone_ids[1]")]


# --- A required key whose type error names its fix is read as that fix, so the other rules still run. ----------
def dev_edited(tmp_path, *edits: tuple[str, str]) -> str:
    from support.paths import ROOT

    text = (ROOT / "config" / "dev.yaml").read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new, 1)
    path = tmp_path / "dev.yaml"
    path.write_text(text)
    return str(path)


def test_a_quoted_group_count_stops_no_rule_but_holds_back_the_capacity_it_feeds(tmp_path):
    """`count: "4"` (HPK012, "write it without quotes") used to stop every rule: now HPK113 of the EKS rules
    stands, and the over-capacity that reads the count is held back, not lost."""
    report = check_file(dev_edited(tmp_path, ("      count: 4\n", '      count: "4"\n'), ("        count: 3\n", "        count: 9\n")))
    assert not report.rules_skipped
    assert [(f.code, f.path) for f in report.findings] == [("HPK113", "eks.public_access_cidrs"),
                                                           ("HPK012", "hyperpod.instance_groups[0].count")]
    assert [(f.code, f.path) for f in report.held_back] == [("HPK501", "teams[0].quota[0]"), ("HPK501", "teams[1].quota[0]")]


def test_a_finding_that_names_a_value_read_as_meant_is_held_back(tmp_path):
    """account: 011122223333 unquoted is a number (HPK012, "write it in quotes"); read as "011122223333", the
    administrators' account 111122223333 differs from it (HPK111) - which may only follow from the fix."""
    report = check_file(dev_edited(tmp_path, ('account: "111122223333"', "account: 011122223333")))
    assert not report.rules_skipped
    assert [(f.code, f.path) for f in report.findings] == [("HPK012", "account"), ("HPK113", "eks.public_access_cidrs")]
    assert {f.code for f in report.held_back} == {"HPK111"}


def test_each_capacity_row_gives_the_cpus_of_the_types_fewest_cpu_node(write_config):
    # The base's g5 group runs two threads per core (48), its m5 group one (4 of 8): EC2's CPU options.
    rows = check_file(write_config((SUPPORT / "adversarial" / "base.yaml").read_text())).capacity
    assert [(row.instance_type, row.to_json()["node_vcpu"], row.capacity.vcpu) for row in rows] == [
        ("ml.g5.12xlarge", 48, 192), ("ml.m5.2xlarge", 4, 16)]
