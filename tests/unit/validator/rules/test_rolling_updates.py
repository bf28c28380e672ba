"""The rolling-update rules on both sides of each edge. The base config (tests/support/adversarial/base.yaml) has
4 x ml.g5.12xlarge in group gpu and 2 x ml.m5.2xlarge in group cpu; john reserves 3 g5 and 1 m5, smith 1 g5 and
1 m5. AWS's HyperPod AMI-update guide is the source of HPK241 ("If schedules overlap, updates might fail");
cfn-lint's CapacitySizeConfig (Value at least 1, no maximum) the source of the percent's edge."""

from __future__ import annotations

from datetime import datetime

import pytest
from support.paths import SUPPORT
from support.rule_runner import JOHN_ONE_G5, codes, run
from support.small_config import HEAD

from cdk_app.validator.report import check_file

GPU_GROUP = "      availability_zone_id: use1-az4\n"


def schedule(batch: str = "", field: str = "maximum_batch_size", expression: str = "cron(0 4 ? * SUN *)") -> tuple[str, str]:
    deployment = f"        deployment:\n          {field}: {batch}\n" if batch else ""
    return GPU_GROUP, (f"{GPU_GROUP}      scheduled_update:\n        schedule_expression: {expression}\n{deployment}")


BATCH_PATH = "hyperpod.instance_groups[0].scheduled_update.deployment.maximum_batch_size"


@pytest.mark.parametrize(("batch", "expected"), [
    ("{type: INSTANCE_COUNT, value: 2}", []),
    ("{type: INSTANCE_COUNT, value: 3}", [("HPK520", f"{BATCH_PATH}.value")]),
    ("{type: CAPACITY_PERCENTAGE, value: 50}", []),                                  # 2 of 4
    ("{type: CAPACITY_PERCENTAGE, value: 51}", [("HPK520", f"{BATCH_PATH}.value")]),  # 2.04 counts as 3
])
def test_a_batch_up_to_the_unreserved_instances_passes(write_config, batch, expected):
    # john holds 1 g5 instead of 3: two of the four are unreserved.
    assert codes(run(write_config, JOHN_ONE_G5, schedule(batch))) == expected


def test_the_error_says_the_arithmetic_and_the_batch_that_fits(write_config):
    [finding] = run(write_config, JOHN_ONE_G5, schedule("{type: CAPACITY_PERCENTAGE, value: 75}")).findings
    assert finding.message == ("an update batch of group 'gpu' takes 3 instances (75 % of 4, rounded up) of "
                               "ml.g5.12xlarge out: of the type's 4 instances it leaves 1 instance while the enabled "
                               "teams reserve 2 instances: their quotas are not covered while it updates")
    assert finding.hint.startswith("take at most 2 instance(s) at a time (maximum_batch_size: {type: INSTANCE_COUNT, "
                                   "value: 2})")


def test_the_rollback_batch_is_checked_too(write_config):
    report = run(write_config, JOHN_ONE_G5, schedule("{type: INSTANCE_COUNT, value: 4}", "rollback_maximum_batch_size"))
    assert codes(report) == [("HPK520", "hyperpod.instance_groups[0].scheduled_update.deployment."
                                        "rollback_maximum_batch_size.value")]
    assert report.findings[0].message.startswith("a rollback batch of group 'gpu' takes 4 instances")


def test_without_unreserved_instances_even_the_default_batch_warns_but_passes(write_config):
    report = run(write_config, schedule())
    assert codes(report) == [("HPK521", BATCH_PATH)]
    assert report.exit_code == 0
    assert report.findings[0].hint.startswith("leave at least 1 ml.g5.12xlarge instance(s) unreserved")


@pytest.mark.parametrize(("value", "expected"), [(100, "HPK520"), (101, "HPK240")])
def test_a_percent_is_at_most_100(write_config, value, expected):
    report = run(write_config, JOHN_ONE_G5, schedule(f"{{type: CAPACITY_PERCENTAGE, value: {value}}}"))
    assert codes(report) == [(expected, f"{BATCH_PATH}.value")]


def test_automatic_patches_without_a_deployment_have_no_batch(write_config):
    assert codes(run(write_config, (GPU_GROUP, f"{GPU_GROUP}      auto_patch: {{patching_strategy: WhenIdle}}\n"))) == []


@pytest.mark.parametrize(("second", "expected"), [
    ("cron(0 4 ? * SUN *)", [("HPK241", "hyperpod.instance_groups[1].scheduled_update.schedule_expression")]),
    ("cron(00 4 ? * SUN *)", [("HPK241", "hyperpod.instance_groups[1].scheduled_update.schedule_expression")]),
    ("cron(0 4 ? * 1 *)", [("HPK241", "hyperpod.instance_groups[1].scheduled_update.schedule_expression")]),
    ("cron(0 04 ? */1 SUN *)", [("HPK241", "hyperpod.instance_groups[1].scheduled_update.schedule_expression")]),
    ("cron(0 4 ? * MON *)", []),
    ("cron(0 6 ? * SUN *)", []),
])
def test_two_groups_on_one_schedule_warn(write_config, second, expected):
    cpu = ("      count: 2\n", f"      count: 2\n      scheduled_update: {{schedule_expression: '{second}'}}\n")
    report = run(write_config, JOHN_ONE_G5, ("      count: 1\n    principals:", "      count: 0\n    principals:"),
                 schedule("{type: INSTANCE_COUNT, value: 1}"), cpu)
    assert [c for c in codes(report) if c[0] == "HPK241"] == expected


def second_g5_group(batch: int, expression: str) -> tuple[str, str]:
    """A second g5 group of 2 (6 in all, the teams' 4 leave 2 unreserved) with its own scheduled update."""
    return ("    - name: cpu\n", f"    - name: gpu-2\n      instance_type: ml.g5.12xlarge\n      count: 2\n"
                                 f"      scheduled_update:\n        schedule_expression: {expression}\n        deployment:\n"
                                 f"          maximum_batch_size: {{type: INSTANCE_COUNT, value: {batch}}}\n"
                                 "    - name: cpu\n")


@pytest.mark.parametrize(("gpu", "gpu_2", "expression", "expected"), [
    (1, 1, "cron(0 4 ? * SUN *)", []),                               # 1 + 1 out together of 2 unreserved
    (2, 2, "cron(0 6 ? * SUN *)", []),                               # each alone: 2 of 2
    (2, 1, "cron(0 4 ? * SUN *)", ["HPK520", "HPK520"]),             # 3 out together
    # Red team: the same schedule in other words (1 = Sunday in AWS cron, leading zeros) rolls together too.
    (2, 1, "cron(00 04 ? * 1 *)", ["HPK520", "HPK520"]),
])
def test_groups_of_a_type_on_one_schedule_add_their_batches(write_config, gpu, gpu_2, expression, expected):
    report = run(write_config, schedule(f"{{type: INSTANCE_COUNT, value: {gpu}}}"), second_g5_group(gpu_2, expression))
    assert [f.code for f in report.findings if f.code.startswith("HPK52")] == expected


def test_the_shared_schedule_is_named_as_the_cause(write_config):
    report = run(write_config, schedule("{type: INSTANCE_COUNT, value: 2}"), second_g5_group(1, "cron(0 4 ? * SUN *)"))
    gpu = next(f for f in report.findings if f.path == f"{BATCH_PATH}.value")
    assert gpu.message.startswith("an update batch of group 'gpu' takes 2 instances (and 1 more of the type's other "
                                  "groups whose updates start with it) of ml.g5.12xlarge out: of the type's 6 instances it "
                                  "leaves 3 instances while the enabled teams reserve 4 instances")
    # gpu: with gpu-2's one node out, one more fits; alone, two would.
    assert gpu.hint.startswith("take at most 1 instance(s) at a time (maximum_batch_size: {type: INSTANCE_COUNT, "
                               "value: 1}), or give the group its own schedule (alone it may take 2)")
    # gpu-2: gpu's two nodes already take both unreserved instances, so only its own schedule helps.
    gpu_2 = next(f for f in report.findings if f.path.startswith("hyperpod.instance_groups[1]") and f.code == "HPK520")
    assert gpu_2.hint.startswith("give the group its own schedule and take at most 2 instance(s) at a time")


AUTOSCALED_GPU = ("hyperpod:\n", "hyperpod:\n  autoscaling: true\n"), ("      count: 4\n", "      count: 0\n      max_count: 4\n")


@pytest.mark.parametrize(("batch", "expected"), [
    ("{type: INSTANCE_COUNT, value: 2}", []),
    ("{type: INSTANCE_COUNT, value: 3}", [("HPK520", f"{BATCH_PATH}.value")]),
    ("{type: CAPACITY_PERCENTAGE, value: 75}", [("HPK520", f"{BATCH_PATH}.value")]),  # 75 % of max_count 4
])
def test_an_autoscaled_groups_batch_is_sized_by_its_max_count(write_config, batch, expected):
    # Red team (ru_auto.yaml): count 0, max_count 4 is capacity 4 for the quotas, so a batch may take up to 4
    # of them out; sized by count 0 every batch looked empty and nothing was checked.
    report = run(write_config, JOHN_ONE_G5, *AUTOSCALED_GPU, schedule(batch))
    assert codes(report) == expected
    if expected:
        assert "of the type's 4 instances" in report.findings[0].message


SCHEDULE_PATH = "hyperpod.instance_groups[0].scheduled_update.schedule_expression"


@pytest.mark.parametrize(("expression", "expected"), [
    ("cron(0 4 31 2 ? *)", "HPK242"),        # 31 February (red team's ru_feb31.yaml)
    ("cron(0 4 31 */2 ? *)", None),          # January, March, ..., November: January has a 31st
    ("cron(0 4 29 2 ? 2027)", "HPK242"),     # 2027 is no leap year
    ("cron(0 4 29 2 ? *)", None),            # leap years
    ("cron(0 4 1 * MON *)", "HPK244"),       # both day fields
    ("cron(0 4 ? * ? *)", "HPK244"),         # neither
])
def test_a_schedule_that_never_starts_an_update_is_an_error(write_config, expression, expected):
    found = [c for c in codes(run(write_config, JOHN_ONE_G5, schedule(expression=expression)))
             if c[0] in ("HPK242", "HPK244")]
    assert found == ([(expected, SCHEDULE_PATH)] if expected else [])


def test_a_schedule_whose_year_has_passed_never_fires(write_config):
    report = run(write_config, JOHN_ONE_G5, schedule(expression="cron(0 4 ? * SUN 2025)"))
    [finding] = [f for f in report.findings if f.code == "HPK242"]
    assert finding.message == "cron(0 4 ? * SUN 2025) never starts an update: its year 2025 has passed"


def rolled(wait: int) -> tuple[str, str]:
    return schedule(f"{{type: INSTANCE_COUNT, value: 1}}\n          wait_interval_seconds: {wait}")


@pytest.mark.parametrize(("wait", "second", "warned"), [
    (600, "cron(5 4 ? * SUN *)", True),     # 4 batches x 600 s = 40 min from 04:00; 04:05 is inside (ru_overlap)
    (60, "cron(5 4 ? * SUN *)", False),     # 4 min: over by 04:04
    (600, "cron(40 4 ? * SUN *)", False),   # 04:40 is the end of the window: no overlap
    (600, "cron(39 4 ? * SUN *)", True),
    (600, "cron(5 4 ? * MON *)", False),    # another day
])
def test_a_start_while_another_groups_roll_may_run_warns(write_config, wait, second, warned):
    cpu = ("      count: 2\n", f"      count: 2\n      scheduled_update: {{schedule_expression: '{second}'}}\n")
    report = run(write_config, JOHN_ONE_G5, ("      count: 1\n    principals:", "      count: 0\n    principals:"),
                 rolled(wait), cpu)
    found = [f for f in report.findings if f.code == "HPK243"]
    assert [f.path for f in found] == (["hyperpod.instance_groups[1].scheduled_update.schedule_expression"]
                                       if warned else [])
    if warned:
        assert "4 batch(es) of 1 with 600 s between them take at least 40 min" in found[0].message


# --- schedules read by their dates, from a fixed today (the red team's second round) ---------------------------
NOW = datetime(2026, 11, 27, 21, 30)
CPU_SCHEDULE_PATH = "hyperpod.instance_groups[1].scheduled_update.schedule_expression"


def cpu_on(expression: str) -> tuple[str, str]:
    return "      count: 2\n", f"      count: 2\n      scheduled_update: {{schedule_expression: '{expression}'}}\n"


ONE_GPU_BATCH = schedule("{type: INSTANCE_COUNT, value: 1}")
NO_CPU_QUOTA = ("      count: 1\n    principals:", "      count: 0\n    principals:")


@pytest.mark.parametrize(("gpu", "cpu", "at"), [
    # Every Sunday holds the first one.
    ("cron(0 4 ? * SUN *)", "cron(0 4 ? * 1#1 *)",
     "2026-12-06 04:00 UTC (cron(0 4 ? * SUN *) and cron(0 4 ? * 1#1 *) meet then)"),
    # Every twelfth month from January is January: one schedule.
    ("cron(0 4 1 */12 ? *)", "cron(0 4 1 1 ? *)", "cron(0 4 1 */12 ? *) and cron(0 4 1 1 ? *) (the same schedule)"),
    # A year far from today is compared too.
    ("cron(0 4 ? * SUN 2041)", "cron(0 4 ? * 1 *)",
     "2041-01-06 04:00 UTC (cron(0 4 ? * SUN 2041) and cron(0 4 ? * 1 *) meet then)"),
])
def test_schedules_that_meet_on_some_date_warn_with_the_date(write_config, gpu, cpu, at):
    report = run(write_config, JOHN_ONE_G5, NO_CPU_QUOTA, schedule("{type: INSTANCE_COUNT, value: 1}", expression=gpu),
                 cpu_on(cpu), now=NOW)
    [finding] = [f for f in report.findings if f.code == "HPK241"]
    assert finding.path == CPU_SCHEDULE_PATH
    assert finding.message.startswith(f"groups 'gpu' and 'cpu' both start an AMI update at {at}: AWS warns")


def test_a_year_bounded_schedule_that_never_meets_the_other_is_no_overlap(write_config):
    report = run(write_config, JOHN_ONE_G5, NO_CPU_QUOTA, schedule("{type: INSTANCE_COUNT, value: 1}",
                 expression="cron(0 4 ? * MON 2041)"), cpu_on("cron(0 4 ? * 1 *)"), now=NOW)
    assert [f.code for f in report.findings if f.code in ("HPK241", "HPK243")] == []


def test_a_start_at_the_same_minute_as_another_is_a_shared_start_not_missed(write_config):
    # Red team: the old search skipped another schedule's start at the very minute of a roll's start.
    report = run(write_config, JOHN_ONE_G5, NO_CPU_QUOTA, rolled(600), cpu_on("cron(0 4 ? * 1#2 *)"), now=NOW)
    assert [(f.code, f.path) for f in report.findings if f.code in ("HPK241", "HPK243")] == [("HPK241", CPU_SCHEDULE_PATH)]


def test_groups_of_a_type_whose_schedules_meet_add_their_batches(write_config):
    # gpu takes 2 each Sunday, gpu-2 1 each first Sunday: 3 of the 2 unreserved on the first Sunday of a month.
    report = run(write_config, schedule("{type: INSTANCE_COUNT, value: 2}"), second_g5_group(1, "cron(0 4 ? * 1#1 *)"),
                 now=NOW)
    assert [f.code for f in report.findings if f.code.startswith("HPK52")] == ["HPK520", "HPK520"]


def test_a_rare_date_is_a_far_first_update_not_one_that_never_comes(write_config):
    # The fifth Monday of February first comes on 29 February 2044.
    report = run(write_config, JOHN_ONE_G5, schedule(expression="cron(0 4 ? 2 2#5 *)"), now=NOW)
    found = [f for f in report.findings if f.code in ("HPK242", "HPK245")]
    assert [(f.code, f.path, f.severity.value) for f in found] == [("HPK245", SCHEDULE_PATH, "warning")]
    assert found[0].message == ("cron(0 4 ? 2 2#5 *) first starts an update on 2044-02-29 04:00 UTC, 17 year(s) from "
                                "now: until then the group's AMI is not updated on schedule")


@pytest.mark.parametrize(("expression", "expected"), [
    ("cron(0 4 1 12 ? *)", []),                         # next 1 December: days away
    ("cron(0 4 27 11 ? *)", []),                        # 27 November 2027: within a year
    ("cron(0 4 29 2 ? *)", ["HPK245"]),                 # 29 February 2028: fifteen months away
])
def test_a_first_update_more_than_a_year_away_warns(write_config, expression, expected):
    report = run(write_config, JOHN_ONE_G5, schedule(expression=expression), now=NOW)
    assert [f.code for f in report.findings if f.code in ("HPK242", "HPK245")] == expected


@pytest.mark.parametrize(("expression", "message"), [
    ("cron(0 4 1 3 ? 2026)", "cron(0 4 1 3 ? 2026) never starts an update: its dates in 2026 have passed (the last "
                             "was 2026-03-01 04:00 UTC)"),
    ("cron(0 4 ? * 6L 2026)", None),                    # 25 December 2026 is still to come
    ("cron(0 4 ? * SUN 2025)", "cron(0 4 ? * SUN 2025) never starts an update: its year 2025 has passed"),
])
def test_a_year_whose_dates_have_passed_never_fires(write_config, expression, message):
    report = run(write_config, JOHN_ONE_G5, schedule(expression=expression), now=NOW)
    assert [f.message for f in report.findings if f.code == "HPK242"] == ([message] if message else [])


def test_a_moment_given_with_a_zone_is_judged_in_utc(write_config):
    # 28 November 2026 00:30 in UTC+1 is still 27 November in UTC: 27 November's 23:45 start is to come.
    from datetime import timedelta, timezone
    report = run(write_config, JOHN_ONE_G5, schedule(expression="cron(45 23 27 11 ? 2026)"),
                 now=datetime(2026, 11, 28, 0, 30, tzinfo=timezone(timedelta(hours=1))))
    assert [f.code for f in report.findings if f.code in ("HPK242", "HPK245")] == []
ROLL = ("      scheduled_update:\n        schedule_expression: cron(0 4 ? * SUN *)\n"
        "        deployment: {maximum_batch_size: {type: INSTANCE_COUNT, value: 1}}\n")


def rolling_findings(write_config, text: str) -> list:
    return [f for f in check_file(write_config(HEAD + text)).findings if f.code in ("HPK520", "HPK521")]


def test_a_flexible_groups_batch_is_refused_as_the_fallback_type_it_may_be(write_config):
    # 2 x g5.24xlarge of quota; the flexible group may be 1 of them, and rolls with group a's batch.
    text = ("hyperpod:\n  instance_groups:\n    - name: a\n      instance_type: ml.g5.24xlarge\n      count: 2\n" + ROLL
            + "    - name: flex\n      instance_type: ml.g5.12xlarge\n      fallback_instance_types: [ml.g5.24xlarge]\n"
            "      count: 1\n" + ROLL
            + "teams:\n  - name: t0\n    quota:\n      - {instance_type: ml.g5.24xlarge, count: 2}\n")
    a, flex = rolling_findings(write_config, text)
    assert (a.code, flex.code) == ("HPK520", "HPK520")
    assert flex.message.startswith("an update batch of group 'flex' (as ml.g5.24xlarge, one of the types it may run "
                                   "as) takes 1 instance (and 1 more of the type's other groups whose updates start with it) "
                                   "of ml.g5.24xlarge out: of the type's 3 instances it leaves 1 instance")


def test_a_partitioned_groups_batch_is_held_to_the_partition_quotas(write_config):
    text = ("hyperpod:\n  instance_groups:\n    - name: mig\n      instance_type: ml.p5.48xlarge\n      count: 1\n"
            "      labels: {nvidia.com/mig.config: all-1g.10gb}\n" + ROLL
            + "    - {name: whole, instance_type: ml.p5.48xlarge, count: 1}\n"
            "teams:\n  - name: t0\n    quota:\n      - instance_type: ml.p5.48xlarge\n"
            "        accelerator_partition: {type: mig-1g.10gb, count: 50}\n")
    [finding] = rolling_findings(write_config, text)
    assert finding.code == "HPK521"
    assert ("of the type's 56 mig-1g.10gb partitions it leaves 0 mig-1g.10gb partitions while the enabled teams "
            "reserve 50 mig-1g.10gb partitions: the teams leave less than one node's mig-1g.10gb partitions "
            "unreserved") in finding.message


# --- The red team's third round (tests/support/adversarial/issue31/r3_*.yaml, as they wrote them) ---------------
RED_TEAM = SUPPORT / "adversarial" / "issue31"


def test_a_batch_is_checked_against_every_types_quotas_at_once():
    # r3_r1: gpu-workers' batch of 1 leaves 3 g5.12xlarge for john's 4, and flex (2, g5.24xlarge or g5.12xlarge)
    # cannot give john 1 and smith 2 at once; no batch of gpu-workers leaves them covered.
    report = check_file(RED_TEAM / "r3_r1.yaml")
    [finding] = [f for f in report.findings if f.code in ("HPK520", "HPK521")]
    assert (finding.code, finding.path) == ("HPK521", BATCH_PATH)
    assert finding.message == (
        "an update batch of group 'gpu-workers' takes 1 instance out: the enabled teams' quotas then need 3 instances "
        "from flexible group(s) flex (ml.g5.12xlarge: 1, ml.g5.24xlarge: 2) beyond the single-type groups, but those "
        "groups can give 2 of them at once (a flexible group is one type at a time): no batch of the group leaves "
        "their quotas covered")


def test_patching_a_whole_group_the_quotas_need_when_all_are_idle_warns():
    # r3_p1: WhenAllIdle without a deployment on gpu-workers, which the teams reserve in full.
    report = check_file(RED_TEAM / "r3_p1.yaml")
    [finding] = [f for f in report.findings if f.code == "HPK522"]
    assert (finding.path, finding.line, report.exit_code) == (
        "hyperpod.instance_groups[0].auto_patch.patching_strategy", 34, 0)
    assert finding.message.startswith("WhenAllIdle without a deployment cordons all 4 instance(s) of group "
                                      "'gpu-workers' when a patch comes out")


PATCH = "hyperpod.instance_groups[0].auto_patch"
MORE_G5 = ("    - name: cpu\n", "    - {name: more, instance_type: ml.g5.12xlarge, count: 4}\n    - name: cpu\n")


@pytest.mark.parametrize(("strategy", "deployment", "more", "expected"), [
    ("WhenAllIdle", "", False, [("HPK522", f"{PATCH}.patching_strategy")]),  # the teams reserve all 4 g5
    ("WhenAllIdle", "", True, []),   # 4 more g5 hold the teams' 4 while group gpu is cordoned
    ("WhenIdle", "", False, []),     # each instance uncordoned right after its patch
    ("WhenAllIdle", "\n        deployment: {maximum_batch_size: {type: INSTANCE_COUNT, value: 1}}", False,
     [("HPK521", f"{PATCH}.deployment.maximum_batch_size")]),  # batches: checked as batches
])
def test_only_whenallidle_without_batches_patches_the_group_at_once(write_config, strategy, deployment, more, expected):
    edits = [(GPU_GROUP, f"{GPU_GROUP}      auto_patch:\n        patching_strategy: {strategy}{deployment}\n")]
    assert codes(run(write_config, *edits, *([MORE_G5] if more else []))) == expected


def test_a_patch_batch_is_named_a_patch_batch():
    [finding] = [f for f in check_file(RED_TEAM / "r3_p2.yaml").findings if f.code == "HPK521"]
    assert finding.message.startswith("a patch batch of group 'gpu-workers' takes 2 instances of ml.g5.12xlarge out")


def test_a_schedule_that_never_fires_rolls_no_batch():
    report = check_file(RED_TEAM / "r3_cron_bad.yaml")
    assert [f.code for f in report.findings if f.code.startswith(("HPK24", "HPK52"))] == ["HPK242"]
