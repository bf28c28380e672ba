"""Fine-grained tests of the HyperPodCluster construct."""

from __future__ import annotations

import dataclasses
import re

import botocore.session
import jsonschema
import pytest
from aws_cdk import App, Stack
from aws_cdk.assertions import Match, Template

from cdk_app.domain.resource_schemas import resource_schema
from hyperpod_constructs.hyperpod_cluster import HyperPodCluster, HyperPodClusterProps, InstanceGroupSpec, NodeTaint
from hyperpod_constructs.private.ami_lifecycle import AutoPatchSpec, BatchSizeSpec, DeploymentSpec, ScheduledUpdateSpec
from hyperpod_constructs.private.limits import (
    ALARM_NAME,
    BATCH_SIZE_TYPES,
    IMAGE_ID,
    IMAGE_RELEASE_VERSION,
    MAX_ALARM_NAME_LENGTH,
    MAX_ROLLBACK_ALARMS,
    MAX_WAIT_INTERVAL_SECONDS,
    PATCHING_STRATEGIES,
    SCHEDULE_EXPRESSION,
)

GPU = InstanceGroupSpec(name="gpu", instance_type="ml.p5.48xlarge", count=4, availability_zone_id="usw2-az2",
                        deep_health_checks=("InstanceStress", "InstanceConnectivity"), ebs_volume_gib=1000,
                        training_plan_arn="arn:aws:sagemaker:us-west-2:111122223333:training-plan/p5-plan",
                        labels={"workload": "training"},
                        taints=(NodeTaint(key="nvidia.com/gpu", effect="NoSchedule", value="true"),))
CPU = InstanceGroupSpec(name="cpu", instance_type="ml.m7i.4xlarge", count=2, availability_zone_id="usw2-az1",
                        threads_per_core=2)
PROPS = HyperPodClusterProps(
    cluster_name="hyperpod-prod", eks_cluster_arn="arn:aws:eks:us-west-2:111122223333:cluster/eks",
    execution_role_arn="arn:aws:iam::111122223333:role/exec", lifecycle_source_s3_uri="s3://sagemaker-x/lifecycle-scripts/",
    security_group_id="sg-0123456789abcdef0",
    subnet_ids_by_zone={"usw2-az1": "subnet-0000000000000000a", "usw2-az2": "subnet-0000000000000000b",
                        "usw2-az3": "subnet-0000000000000000c"},
    cluster_zone_ids=("usw2-az1", "usw2-az2"),
    instance_groups=(GPU, CPU),
)


@pytest.fixture(scope="module")
def template() -> Template:
    stack = Stack(App(), "Test")
    HyperPodCluster(stack, "HyperPod", props=PROPS)
    return Template.from_stack(stack)


def test_cluster_is_eks_orchestrated_with_recovery_and_continuous_provisioning(template):
    template.resource_count_is("AWS::SageMaker::Cluster", 1)
    template.has_resource_properties("AWS::SageMaker::Cluster", {
        "ClusterName": "hyperpod-prod",
        "Orchestrator": {"Eks": {"ClusterArn": PROPS.eks_cluster_arn}},
        "NodeRecovery": "Automatic",
        "NodeProvisioningMode": "Continuous",
        "VpcConfig": {"SecurityGroupIds": ["sg-0123456789abcdef0"],
                      "Subnets": ["subnet-0000000000000000a", "subnet-0000000000000000b"]},
    })


def test_gpu_group_has_deep_health_checks_plan_zone_subnet_labels_and_taints(template):
    template.has_resource_properties("AWS::SageMaker::Cluster", {"InstanceGroups": Match.array_with([{
        "InstanceGroupName": "gpu", "InstanceType": "ml.p5.48xlarge", "InstanceCount": 4, "ThreadsPerCore": 1,
        "ExecutionRole": PROPS.execution_role_arn,
        "LifeCycleConfig": {"SourceS3Uri": "s3://sagemaker-x/lifecycle-scripts/", "OnCreate": "on_create.sh"},
        "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": 1000}}],
        "OnStartDeepHealthChecks": ["InstanceStress", "InstanceConnectivity"],
        "TrainingPlanArn": GPU.training_plan_arn,
        "OverrideVpcConfig": {"SecurityGroupIds": ["sg-0123456789abcdef0"], "Subnets": ["subnet-0000000000000000b"]},
        "KubernetesConfig": {"Labels": {"workload": "training"},
                             "Taints": [{"Key": "nvidia.com/gpu", "Value": "true", "Effect": "NoSchedule"}]},
    }])})


def test_cpu_group_has_no_deep_health_checks(template):
    [cluster] = template.find_resources("AWS::SageMaker::Cluster").values()
    cpu = next(g for g in cluster["Properties"]["InstanceGroups"] if g["InstanceGroupName"] == "cpu")
    assert "OnStartDeepHealthChecks" not in cpu and "KubernetesConfig" not in cpu
    assert cpu["ThreadsPerCore"] == 2
    assert cpu["OverrideVpcConfig"]["Subnets"] == ["subnet-0000000000000000a"]


def test_node_recovery_none():
    stack = Stack(App(), "Test")
    HyperPodCluster(stack, "HyperPod", props=dataclasses.replace(PROPS, node_recovery="None"))
    Template.from_stack(stack).has_resource_properties("AWS::SageMaker::Cluster", {"NodeRecovery": "None"})


@pytest.mark.parametrize(("change", "message"), [
    ({"cluster_name": "-bad"}, "cluster_name must be 1-63"),
    ({"lifecycle_source_s3_uri": "https://x"}, "must be an s3:// URI"),
    ({"instance_groups": ()}, "1 to 100 groups, got 0"),
    ({"instance_groups": (GPU, dataclasses.replace(CPU, name="gpu"))}, "names must be unique"),
    ({"instance_groups": (dataclasses.replace(GPU, count=7000),)}, "'gpu': count must be 0-6758, got 7000"),
    ({"instance_groups": (dataclasses.replace(GPU, ebs_volume_gib=0),)}, "ebs_volume_gib must be 1-16384, got 0"),
    ({"instance_groups": (dataclasses.replace(GPU, threads_per_core=4),)}, "threads_per_core must be 1 or 2"),
    ({"instance_groups": (dataclasses.replace(GPU, deep_health_checks=("Burn",)),)}, "unknown deep health checks"),
    ({"instance_groups": (dataclasses.replace(GPU, availability_zone_id="usw2-az5"),)},
     "'gpu': no subnet in usw2-az5"),
])
def test_bad_props_raise(change, message):
    with pytest.raises(ValueError, match=message):
        HyperPodCluster(Stack(App(), "Test"), "HyperPod", props=dataclasses.replace(PROPS, **change))


def test_cluster_vpc_config_holds_the_recorded_zones_only_and_groups_override():
    """VpcConfig is create-only: a zone added for new groups must leave it as it is."""
    def cluster(props):
        stack = Stack(App(), "Test")
        HyperPodCluster(stack, "HyperPod", props=props)
        [resource] = Template.from_stack(stack).find_resources("AWS::SageMaker::Cluster").values()
        return resource["Properties"]
    wider = dataclasses.replace(PROPS, subnet_ids_by_zone={**PROPS.subnet_ids_by_zone, "usw2-az4": "subnet-0000000000000000d"},
                                instance_groups=(*PROPS.instance_groups, dataclasses.replace(
                                    CPU, name="cpu-az4", availability_zone_id="usw2-az4")))
    before, after = cluster(PROPS), cluster(wider)
    assert after["VpcConfig"] == before["VpcConfig"] == {"SecurityGroupIds": ["sg-0123456789abcdef0"],
                                                         "Subnets": ["subnet-0000000000000000a", "subnet-0000000000000000b"]}
    [new_group] = [g for g in after["InstanceGroups"] if g["InstanceGroupName"] == "cpu-az4"]
    assert new_group["OverrideVpcConfig"]["Subnets"] == ["subnet-0000000000000000d"]


@pytest.mark.parametrize("zones", [(), ("usw2-az9",), ("usw2-az1", "usw2-az1")])
def test_cluster_zones_must_have_subnets(zones):
    with pytest.raises(ValueError, match="cluster_zone_ids must name distinct zones with a subnet"):
        HyperPodCluster(Stack(App(), "Test"), "HyperPod", props=dataclasses.replace(PROPS, cluster_zone_ids=zones))


def test_cluster_is_kept_on_delete_and_replacement_but_not_after_a_failed_create(template):
    template.has_resource("AWS::SageMaker::Cluster", {"DeletionPolicy": "RetainExceptOnCreate",
                                                      "UpdateReplacePolicy": "Retain"})


# The AMI lifecycle: what the construct writes is checked against cfn-lint's AWS::SageMaker::Cluster schema itself.
ROLLING = ScheduledUpdateSpec("cron(0 4 ? * SUN *)", DeploymentSpec(
    maximum_batch_size=BatchSizeSpec("CAPACITY_PERCENTAGE", 25), rollback_maximum_batch_size=BatchSizeSpec("INSTANCE_COUNT", 2),
    wait_interval_seconds=600, rollback_alarms=("gpu-health", "nccl-errors")))


def _groups(props: HyperPodClusterProps) -> dict[str, dict]:
    stack = Stack(App(), "Test")
    HyperPodCluster(stack, "HyperPod", props=props)
    [cluster] = Template.from_stack(stack).find_resources("AWS::SageMaker::Cluster").values()
    return {g["InstanceGroupName"]: g for g in cluster["Properties"]["InstanceGroups"]}


def _schema_errors(group: dict) -> list[str]:
    schema = resource_schema("AWS::SageMaker::Cluster")
    validator = jsonschema.Draft7Validator({**schema["definitions"]["ClusterInstanceGroup"],
                                            "definitions": schema["definitions"]})
    return [error.message for error in validator.iter_errors(group)]


def test_ami_lifecycle_is_written_as_the_schema_takes_it():
    groups = _groups(dataclasses.replace(PROPS, instance_groups=(
        dataclasses.replace(GPU, image_release_version="1.2.3", scheduled_update=ROLLING),
        dataclasses.replace(CPU, image_id="ami-0123456789abcdef0", auto_patch=AutoPatchSpec("WhenAllIdle")))))
    gpu, cpu = groups["gpu"], groups["cpu"]
    assert gpu["ImageReleaseVersion"] == "1.2.3" and "ImageId" not in gpu
    assert gpu["ScheduledUpdateConfig"] == {"ScheduleExpression": "cron(0 4 ? * SUN *)", "DeploymentConfig": {
        "RollingUpdatePolicy": {"MaximumBatchSize": {"Type": "CAPACITY_PERCENTAGE", "Value": 25},
                                "RollbackMaximumBatchSize": {"Type": "INSTANCE_COUNT", "Value": 2}},
        "WaitIntervalInSeconds": 600,
        "AutoRollbackConfiguration": [{"AlarmName": "gpu-health"}, {"AlarmName": "nccl-errors"}]}}
    assert cpu["ImageId"] == "ami-0123456789abcdef0" and cpu["AutoPatchConfig"] == {"PatchingStrategy": "WhenAllIdle"}
    assert _schema_errors(gpu) == [] and _schema_errors(cpu) == []


def test_a_scheduled_update_without_a_deployment_rolls_one_instance_at_a_time():
    groups = _groups(dataclasses.replace(PROPS, instance_groups=(
        dataclasses.replace(GPU, scheduled_update=ScheduledUpdateSpec("cron(30 2 1 * ? *)")),)))
    assert groups["gpu"]["ScheduledUpdateConfig"]["DeploymentConfig"] == {
        "RollingUpdatePolicy": {"MaximumBatchSize": {"Type": "INSTANCE_COUNT", "Value": 1}}}
    assert _schema_errors(groups["gpu"]) == []


def test_groups_without_an_ami_lifecycle_write_none_of_it(template):
    [cluster] = template.find_resources("AWS::SageMaker::Cluster").values()
    for group in cluster["Properties"]["InstanceGroups"]:
        assert not {"ImageId", "ImageReleaseVersion", "ScheduledUpdateConfig", "AutoPatchConfig"} & set(group)


def _with(**change) -> HyperPodClusterProps:
    return dataclasses.replace(PROPS, instance_groups=(dataclasses.replace(GPU, **change),))


@pytest.mark.parametrize(("props", "message"), [
    (_with(image_id="ami-0123"), "'gpu': image_id must be ami-<8 to 17 hex digits> or default"),
    (_with(image_id="latest"), "image_id must be"),
    (_with(image_release_version="1.2"), "image_release_version must be MAJOR.MINOR.PATCH"),
    (_with(scheduled_update=ScheduledUpdateSpec("cron(0 4 * * SUN *)")), "schedule_expression must be cron"),
    (_with(scheduled_update=ScheduledUpdateSpec("rate(1 day)")), "schedule_expression must be cron"),
    (_with(scheduled_update=dataclasses.replace(ROLLING, deployment=DeploymentSpec(BatchSizeSpec("PERCENT", 5)))),
     "batch type must be one of"),
    (_with(scheduled_update=dataclasses.replace(ROLLING, deployment=DeploymentSpec(BatchSizeSpec("INSTANCE_COUNT", 0)))),
     "batch value must be a whole number of at least 1 and at most 6758 \\(instances\\), got 0"),
    (_with(scheduled_update=dataclasses.replace(ROLLING, deployment=DeploymentSpec(
        BatchSizeSpec("CAPACITY_PERCENTAGE", 101)))), "at most 100 \\(percent\\), got 101"),
    (_with(scheduled_update=dataclasses.replace(ROLLING, deployment=DeploymentSpec(
        BatchSizeSpec("INSTANCE_COUNT", 6759)))), "at most 6758 \\(instances\\), got 6759"),
    (_with(scheduled_update=dataclasses.replace(ROLLING, deployment=DeploymentSpec(wait_interval_seconds=3601))),
     "wait_interval_seconds must be 0-3600, got 3601"),
    (_with(scheduled_update=dataclasses.replace(ROLLING, deployment=DeploymentSpec(
        rollback_alarms=tuple(f"a{i}" for i in range(11))))), "at most 10 rollback alarms, got 11"),
    (_with(scheduled_update=dataclasses.replace(ROLLING, deployment=DeploymentSpec(rollback_alarms=("  ",)))),
     "rollback alarm '  ' must be 1-255 characters"),
    (_with(auto_patch=AutoPatchSpec("DrainFirst")), "patching_strategy must be one of \\['WhenIdle', 'WhenAllIdle'\\]"),
])
def test_bad_ami_lifecycle_props_raise(props, message):
    with pytest.raises(ValueError, match=message):
        HyperPodCluster(Stack(App(), "Test"), "HyperPod", props=props)


@pytest.mark.parametrize(("props", "schema_refuses"), [
    # Each value the construct refuses, written past it into a group: the schema refuses the same one (the
    # percent above 100 is the kit's own limit: the schema has none, the validator's HPK240).
    ({"ImageId": "ami-0123"}, True),
    ({"ImageReleaseVersion": "1.2"}, True),
    ({"ScheduledUpdateConfig": {"ScheduleExpression": "cron(0 4 * * SUN *)"}}, True),
    ({"ScheduledUpdateConfig": {"ScheduleExpression": "cron(0 4 ? * SUN *)", "DeploymentConfig": {
        "WaitIntervalInSeconds": 3601}}}, True),
    ({"ScheduledUpdateConfig": {"ScheduleExpression": "cron(0 4 ? * SUN *)", "DeploymentConfig": {
        "AutoRollbackConfiguration": [{"AlarmName": f"a{i}"} for i in range(11)]}}}, True),
    ({"AutoPatchConfig": {"PatchingStrategy": "DrainFirst"}}, True),
    ({"ScheduledUpdateConfig": {"ScheduleExpression": "cron(0 4 ? * SUN *)", "DeploymentConfig": {
        "RollingUpdatePolicy": {"MaximumBatchSize": {"Type": "CAPACITY_PERCENTAGE", "Value": 101}}}}}, False),
])
def test_the_refused_values_are_the_schemas(props, schema_refuses):
    base = {"InstanceGroupName": "gpu", "InstanceCount": 1, "ExecutionRole": PROPS.execution_role_arn}
    assert bool(_schema_errors({**base, **props})) is schema_refuses


def test_the_shared_limits_are_the_schemas():
    definitions = resource_schema("AWS::SageMaker::Cluster")["definitions"]
    group = definitions["ClusterInstanceGroup"]["properties"]
    assert definitions["ScheduledUpdateConfig"]["properties"]["ScheduleExpression"]["pattern"] == SCHEDULE_EXPRESSION
    assert definitions["ImageId"]["pattern"] == "^ami-[0-9a-fA-F]{8,17}|default$" and IMAGE_ID == "(ami-[0-9a-fA-F]{8,17}|default)"
    assert group["ImageReleaseVersion"]["pattern"] == f"^{IMAGE_RELEASE_VERSION}$"
    assert definitions["DeploymentConfig"]["properties"]["WaitIntervalInSeconds"]["maximum"] == MAX_WAIT_INTERVAL_SECONDS
    assert definitions["AutoRollbackConfiguration"]["maxItems"] == MAX_ROLLBACK_ALARMS
    assert tuple(definitions["AutoPatchConfig"]["properties"]["PatchingStrategy"]["enum"]) == PATCHING_STRATEGIES
    assert definitions["CapacitySizeConfig"]["properties"]["Type"]["pattern"] == "|".join(BATCH_SIZE_TYPES)
    # Alarm names: the schema's look-ahead pattern and the kit's one without it agree; botocore's length is the smaller.
    schema_alarm = definitions["AlarmDetails"]["properties"]["AlarmName"]["pattern"]
    for name in ("gpu-health", " x ", "a", "  ", "", "\t", "x\ny"):
        assert bool(re.fullmatch(schema_alarm, name)) == bool(re.fullmatch(ALARM_NAME, name)), name
    alarm_shape = botocore.session.get_session().get_service_model("sagemaker").shape_for("AlarmName")
    assert MAX_ALARM_NAME_LENGTH == alarm_shape.metadata["max"] < definitions["AlarmDetails"]["properties"]["AlarmName"]["maxLength"]
