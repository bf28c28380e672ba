"""`plan` on AMI changes: which instance groups roll at a deploy and how many nodes their updates drain at a time.
Whether anything is replaced comes from cfn-lint's AWS::SageMaker::Cluster schema (none of these properties is
create-only); that an ImageReleaseVersion change updates the group's software from the schema's description of it."""

from __future__ import annotations

import copy
from datetime import datetime

import pytest
from support.paths import ROOT
from support.synthesis import env_assembly

from cdk_app.cli import plan as planning
from cdk_app.cli.plan.rolls import roll_hazards
from cdk_app.config.loader import load_config
from cdk_app.domain.resource_schemas import create_only_properties, resource_schema

GROUP = {"InstanceGroupName": "gpu", "InstanceType": "ml.p5.48xlarge", "InstanceCount": 6}
NOW = datetime(2026, 11, 27, 21, 30)  # a Friday: the next Sunday is 29 November


def cluster(*groups: dict) -> dict:
    return {"InstanceGroups": [copy.deepcopy(g) for g in groups]}


def test_the_ami_properties_are_not_create_only_and_a_version_change_updates_the_software():
    paths = {"/".join(p) for p in create_only_properties("AWS::SageMaker::Cluster")}
    assert not any(p.startswith("InstanceGroups") for p in paths)
    described = resource_schema("AWS::SageMaker::Cluster")["definitions"]["ClusterInstanceGroup"]["properties"]
    assert "triggers a software update via UpdateClusterSoftware" in described["ImageReleaseVersion"]["description"]


def test_a_version_change_rolls_the_group_at_the_deploy_and_is_refused_until_named():
    scheduled = {**GROUP, "ScheduledUpdateConfig": {"ScheduleExpression": "cron(0 4 ? * SUN *)", "DeploymentConfig": {
        "RollingUpdatePolicy": {"MaximumBatchSize": {"Type": "CAPACITY_PERCENTAGE", "Value": 25}}}}}
    [roll] = roll_hazards("s", "Cluster", cluster({**scheduled, "ImageReleaseVersion": "1.2.3"}),
                          cluster({**scheduled, "ImageReleaseVersion": "1.2.4"}))
    assert roll.name == "Cluster/gpu" and roll.refuse and not roll.fails
    assert roll.text.startswith("instance group gpu rolls at this deploy: ImageReleaseVersion 1.2.3 -> "
                                "ImageReleaseVersion 1.2.4.")
    assert "its 6 x ml.p5.48xlarge nodes reboot onto the new AMI" in roll.text
    assert roll.text.endswith("plan for all 6 at once (its scheduled updates take 2 instances (25 % of 6, rounded up) "
                              "at a time)")


def test_a_custom_ami_set_for_the_first_time_rolls_the_group():
    [roll] = roll_hazards("s", "Cluster", cluster(GROUP), cluster({**GROUP, "ImageId": "ami-0123456789abcdef0"}))
    assert "SageMaker's AMI -> ImageId ami-0123456789abcdef0" in roll.text and roll.text.endswith("all 6 at once")


def test_a_new_group_starts_on_its_ami_and_rolls_nothing():
    new = {**GROUP, "InstanceGroupName": "gpu-2", "ImageReleaseVersion": "1.2.4"}
    assert roll_hazards("s", "Cluster", cluster(GROUP), cluster(GROUP, new)) == []


def test_a_schedule_is_called_out_with_what_each_update_drains():
    deployment = {"RollingUpdatePolicy": {"MaximumBatchSize": {"Type": "INSTANCE_COUNT", "Value": 1}},
                  "WaitIntervalInSeconds": 600, "AutoRollbackConfiguration": [{"AlarmName": "gpu-health"}]}
    after = {**GROUP, "ScheduledUpdateConfig": {"ScheduleExpression": "cron(0 4 ? * SUN *)", "DeploymentConfig": deployment}}
    [added] = roll_hazards("s", "Cluster", cluster(GROUP), cluster(after), NOW)
    assert not added.refuse
    assert added.text == ("instance group gpu: AMI updates scheduled at cron(0 4 ? * SUN *) (the first on 2026-11-29 "
                          "04:00 UTC): each drains its "
                          "6 x ml.p5.48xlarge nodes 1 instance at a time, 600 s between batches, rolled back when "
                          "gpu-health fires")
    [removed] = roll_hazards("s", "Cluster", cluster(after), cluster(GROUP))
    assert removed.text.startswith("instance group gpu: scheduled AMI updates removed")


def test_a_schedule_without_a_rolling_batch_drains_the_whole_group():
    after = {**GROUP, "ScheduledUpdateConfig": {"ScheduleExpression": "cron(0 4 ? * SUN *)"}}
    [added] = roll_hazards("s", "Cluster", cluster(GROUP), cluster(after))
    assert added.text.endswith("each drains its 6 x ml.p5.48xlarge nodes all 6 nodes at once (no rolling batch)")


@pytest.mark.parametrize(("strategy", "how"), [("WhenIdle", "patches each once it runs no job"),
                                               ("WhenAllIdle", "patches them all once all are idle")])
def test_automatic_patches_are_called_out_with_the_cordon(strategy, how):
    [patch] = roll_hazards("s", "Cluster", cluster(GROUP), cluster({**GROUP, "AutoPatchConfig": {"PatchingStrategy": strategy}}))
    assert not patch.refuse
    assert f"its 6 x ml.p5.48xlarge nodes are cordoned (no new jobs start there) and HyperPod {how}" in patch.text


def test_hand_edited_batches_read_as_no_batch():
    for size in ({"Type": "INSTANCE_COUNT", "Value": "2"}, {"Type": "SOME", "Value": 2}, {"Type": "INSTANCE_COUNT"}, "x"):
        after = {**GROUP, "ScheduledUpdateConfig": {"ScheduleExpression": "cron(0 4 ? * SUN *)", "DeploymentConfig": {
            "RollingUpdatePolicy": {"MaximumBatchSize": size}}}}
        [added] = roll_hazards("s", "Cluster", cluster(GROUP), cluster(after))
        assert "(no rolling batch)" in added.text


@pytest.mark.synth
def test_a_new_ami_version_in_prod_is_an_in_place_update_refused_until_named(tmp_path_factory):
    base = env_assembly(tmp_path_factory, "prod")
    text = (ROOT / "config" / "prod.yaml").read_text()
    anchor = "      scheduled_update:\n        schedule_expression: cron(0 4 ? * SUN *)\n"
    assert text.count(anchor) == 1
    folder = tmp_path_factory.mktemp("plan-ami")
    (folder / "prod.yaml").write_text(text.replace(anchor, '      image_release_version: "1.2.4"\n' + anchor))
    current = planning.synthesize(load_config(folder / "prod.yaml").config, folder / "cdk.out")
    plan = planning.compare(planning.read_templates(base), planning.read_templates(current), "base")
    [change] = [c for c in plan.changes if c.type == "AWS::SageMaker::Cluster"]
    assert change.action == "modify" and not change.dangerous
    assert plan.blocked() == [f"{change.logical_id}/h100-a"]
    rendered = planning.render(plan)
    assert ("instance group h100-a rolls at this deploy: SageMaker's AMI -> ImageReleaseVersion 1.2.4." in rendered
            and "plan for all 6 at once (its scheduled updates take 1 instance at a time)" in rendered)
    assert plan.blocked((f"{change.logical_id}/h100-a",)) == []


@pytest.mark.parametrize("junk", [{"InstanceGroups": 7}, {"InstanceGroups": "gpu"}, {}, {"InstanceGroups": [3, None]}])
def test_hand_edited_groups_read_as_none(junk):
    assert roll_hazards("s", "Cluster", junk, cluster(GROUP)) == []
    assert roll_hazards("s", "Cluster", cluster(GROUP), junk) == []


def test_hand_edited_alarms_are_left_out():
    after = {**GROUP, "ScheduledUpdateConfig": {"ScheduleExpression": "cron(0 4 ? * SUN *)", "DeploymentConfig": {
        "RollingUpdatePolicy": {"MaximumBatchSize": {"Type": "INSTANCE_COUNT", "Value": 1}},
        "AutoRollbackConfiguration": 5}}}
    [added] = roll_hazards("s", "Cluster", cluster(GROUP), cluster(after))
    assert added.text.endswith("1 instance at a time")


def scheduled(name: str, expression: str) -> dict:
    return {**GROUP, "InstanceGroupName": name, "ScheduledUpdateConfig": {"ScheduleExpression": expression}}


def test_a_schedule_names_the_groups_whose_updates_start_with_it():
    # Every Sunday holds the first Sunday (6 December 2026); the Mondays never meet it.
    others = (scheduled("cpu", "cron(0 4 ? * 1#1 *)"), scheduled("mon", "cron(0 4 ? * MON *)"))
    [added] = roll_hazards("s", "Cluster", cluster(GROUP, *others),
                           cluster(scheduled("gpu", "cron(0 4 ? * SUN *)"), *others), NOW)
    assert added.text.endswith("all 6 nodes at once (no rolling batch); they start with the updates of cpu (first on "
                               "2026-12-06 04:00 UTC), so their batches are out at once, and AWS warns that "
                               "overlapping schedules may make updates fail")


def test_a_schedule_whose_dates_have_passed_is_said_to_start_none():
    [added] = roll_hazards("s", "Cluster", cluster(GROUP), cluster(scheduled("gpu", "cron(0 4 1 3 ? 2026)")), NOW)
    assert added.text.startswith("instance group gpu: AMI updates scheduled at cron(0 4 1 3 ? 2026) (never, from "
                                 "today on): each drains")


def test_a_far_first_update_is_dated():
    [added] = roll_hazards("s", "Cluster", cluster(GROUP), cluster(scheduled("gpu", "cron(0 4 ? 2 2#5 *)")), NOW)
    assert "cron(0 4 ? 2 2#5 *) (the first on 2044-02-29 04:00 UTC): each drains" in added.text
