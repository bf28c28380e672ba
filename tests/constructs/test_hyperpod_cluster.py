"""Fine-grained tests of the HyperPodCluster construct."""

from __future__ import annotations

import dataclasses

import pytest
from aws_cdk import App, Stack
from aws_cdk.assertions import Match, Template

from hyperpod_constructs.hyperpod_cluster import HyperPodCluster, HyperPodClusterProps, InstanceGroupSpec, NodeTaint

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


def _cluster_properties(props: HyperPodClusterProps) -> dict:
    stack = Stack(App(), "Test")
    HyperPodCluster(stack, "HyperPod", props=props)
    [cluster] = Template.from_stack(stack).find_resources("AWS::SageMaker::Cluster").values()
    return cluster["Properties"]


def _schema_errors(properties: dict) -> list[str]:
    """AWS::SageMaker::Cluster's properties against cfn-lint's schema of the resource (its definitions in scope)."""
    import jsonschema

    from cdk_app.domain.resource_schemas import resource_schema
    schema = resource_schema("AWS::SageMaker::Cluster")
    whole = {"type": "object", "properties": schema["properties"], "additionalProperties": False,
             "definitions": schema["definitions"]}
    return [error.message for error in jsonschema.Draft7Validator(whole).iter_errors(properties)]


def test_flexible_spot_group_with_a_minimum():
    flexible = dataclasses.replace(CPU, name="flex", fallback_instance_types=("ml.m7i.8xlarge", "ml.m5.4xlarge"),
                                   capacity_type="Spot", min_count=1)
    properties = _cluster_properties(dataclasses.replace(PROPS, instance_groups=(GPU, flexible)))
    group = next(g for g in properties["InstanceGroups"] if g["InstanceGroupName"] == "flex")
    # InstanceType and InstanceRequirements are mutually exclusive (botocore's ClusterInstanceGroupSpecification).
    assert "InstanceType" not in group
    assert group["InstanceRequirements"] == {"InstanceTypes": ["ml.m7i.4xlarge", "ml.m7i.8xlarge", "ml.m5.4xlarge"]}
    assert group["CapacityRequirements"] == {"Spot": {}}
    assert group["MinInstanceCount"] == 1
    gpu = next(g for g in properties["InstanceGroups"] if g["InstanceGroupName"] == "gpu")
    assert not {"InstanceRequirements", "CapacityRequirements", "MinInstanceCount"} & set(gpu)
    assert _schema_errors(properties) == []


def test_on_demand_is_written_when_asked():
    group = dataclasses.replace(CPU, capacity_type="OnDemand")
    properties = _cluster_properties(dataclasses.replace(PROPS, instance_groups=(group,)))
    assert properties["InstanceGroups"][0]["CapacityRequirements"] == {"OnDemand": {}}
    assert _schema_errors(properties) == []


def test_autoscaling_turns_on_karpenter_with_the_cluster_role():
    role = "arn:aws:iam::111122223333:role/karpenter"
    properties = _cluster_properties(dataclasses.replace(PROPS, autoscaling_role_arn=role))
    assert properties["AutoScaling"] == {"Mode": "Enable", "AutoScalerType": "Karpenter"}
    assert properties["ClusterRole"] == role and properties["NodeProvisioningMode"] == "Continuous"
    assert _schema_errors(properties) == []
    assert not {"AutoScaling", "ClusterRole"} & set(_cluster_properties(PROPS))


def test_the_schema_check_sees_a_broken_group():
    # The check above is not a formality: a group the schema refuses is reported.
    properties = _cluster_properties(PROPS)
    properties["InstanceGroups"][0]["CapacityRequirements"] = {"Reserved": {}}
    assert _schema_errors(properties)


@pytest.mark.parametrize(("change", "message"), [
    ({"fallback_instance_types": ("ml.m7i.4xlarge",)}, "distinct types other than instance_type"),
    ({"fallback_instance_types": ("ml.m5.large",) * 2}, "distinct types"),
    ({"fallback_instance_types": tuple(f"ml.t{i}" for i in range(20))}, "at most 19"),
    ({"capacity_type": "Reserved"}, "OnDemand or Spot"),
    ({"min_count": 3}, r"min_count must be 0 to count \(2\), got 3"),
])
def test_bad_flexible_props_raise(change, message):
    props = dataclasses.replace(PROPS, instance_groups=(dataclasses.replace(CPU, **change),))
    with pytest.raises(ValueError, match=message):
        HyperPodCluster(Stack(App(), "Test"), "HyperPod", props=props)
