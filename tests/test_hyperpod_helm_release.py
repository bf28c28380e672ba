"""Fine-grained tests of the HyperPodHelmRelease construct (the deploy-time side is in
test_helm_release_handler.py)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from aws_cdk import App, Environment, Stack
from aws_cdk import aws_eks_v2 as eks
from aws_cdk.assertions import Match, Template

from hyperpod_constructs.hyperpod_helm_release import (
    HyperPodHelmRelease,
    HyperPodHelmReleaseProps,
    component_values,
)

REVISION = "40eb213ed5fe90a4d16f1664db07d174b9b3d69d"


def build(**change) -> tuple[Template, HyperPodHelmRelease]:
    stack = Stack(App(), "Test", env=Environment(account="111122223333", region="eu-west-1"))
    cluster = eks.Cluster.from_cluster_attributes(stack, "Eks", cluster_name="hyperpod-eks")
    props = HyperPodHelmReleaseProps(cluster=cluster, vpc_id="vpc-0123456789abcdef0",
                                     subnet_ids=("subnet-0000000000000000a", "subnet-0000000000000000b"),
                                     security_group_id="sg-0123456789abcdef0", revision=REVISION, sha256="ab" * 32,
                                     components={"mlflow": True, "nvidia_device_plugin": False})
    release = HyperPodHelmRelease(stack, "Chart", props=dataclasses.replace(props, **change))
    return Template.from_stack(stack), release


@pytest.fixture(scope="module")
def template() -> Template:
    return build()[0]


def test_release_names_the_pinned_revision_checksum_region_and_values(template):
    template.resource_count_is("Custom::HyperPodHelmRelease", 1)
    template.has_resource_properties("Custom::HyperPodHelmRelease", {
        "ClusterName": "hyperpod-eks", "Region": "eu-west-1", "Repository": "aws/sagemaker-hyperpod-cli",
        "Revision": REVISION, "Sha256": "ab" * 32, "ReleaseName": "hyperpod-dependencies", "Namespace": "kube-system",
        "Values": json.dumps({"mlflow": {"enabled": True}, "nvidia-device-plugin": {"devicePlugin": {"enabled": False}}},
                             sort_keys=True),
    })


def test_installer_runs_in_the_vpc_with_helm_layer_and_enough_time(template):
    template.has_resource_properties("AWS::Lambda::Function", {
        "Handler": "index.on_event", "Runtime": "python3.14", "Timeout": 900,
        "Layers": Match.any_value(),
        "VpcConfig": {"SubnetIds": ["subnet-0000000000000000a", "subnet-0000000000000000b"],
                      "SecurityGroupIds": ["sg-0123456789abcdef0"]},
    })
    template.resource_count_is("AWS::Lambda::LayerVersion", 1)


def test_installer_role_is_cluster_admin_and_the_release_waits_for_it(template):
    entries = template.find_resources("AWS::EKS::AccessEntry")
    [(entry_id, entry)] = entries.items()
    assert entry["Properties"]["AccessPolicies"][0]["AccessScope"] == {"Type": "cluster"}
    assert entry["Properties"]["AccessPolicies"][0]["PolicyArn"]["Fn::Join"][1][-1].endswith("AmazonEKSClusterAdminPolicy")
    [release] = template.find_resources("Custom::HyperPodHelmRelease").values()
    assert entry_id in release["DependsOn"]


def test_installer_may_describe_only_its_cluster(template):
    template.has_resource_properties("AWS::IAM::Policy", {"PolicyDocument": {"Statement": Match.array_with([
        Match.object_like({"Action": "eks:DescribeCluster", "Resource": Match.any_value()})])}})


def test_component_values_nest_chart_keys():
    assert component_values({"efa_device_plugin": True, "job_auto_restart": False}) == {
        "aws-efa-k8s-device-plugin": {"devicePlugin": {"enabled": True}}, "job-auto-restart": {"enabled": False}}


def test_unpinned_checksum_is_passed_as_empty():
    template, _ = build(sha256=None)
    template.has_resource_properties("Custom::HyperPodHelmRelease", {"Sha256": ""})


@pytest.mark.parametrize(("change", "message"), [
    ({"revision": "main"}, "revision must be a full 40-hex commit id, got 'main'"),
    ({"sha256": "xyz"}, "sha256 must be 64 lower-case hex digits"),
    ({"repository": "not a repo"}, "repository must be a GitHub owner/name"),
    ({"release_name": "Hyperpod_Deps"}, "release_name must be a Helm release name"),
    ({"subnet_ids": ()}, "at least one subnet"),
    ({"components": {"gpu_operator": True}}, "unknown components \\['gpu_operator'\\]"),
])
def test_bad_props_raise(change, message):
    with pytest.raises(ValueError, match=message):
        build(**change)
