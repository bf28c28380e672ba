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
