"""The cluster role HyperPod's managed Karpenter acts as: trusted by the service AWS's autoscaling docs name, holding
the two actions botocore's SageMaker model says it needs, on this account's and region's clusters only."""

from __future__ import annotations

import re

import botocore.session
from aws_cdk import App, Environment, Stack
from aws_cdk.assertions import Template

from cdk_app.domain.resource_schemas import action_resource_types, resource_type_arn_formats
from hyperpod_constructs.hyperpod_autoscaling_role import HyperPodAutoscalingRole


def _template() -> Template:
    stack = Stack(App(), "Test", env=Environment(account="111122223333", region="us-west-2"))
    HyperPodAutoscalingRole(stack, "Autoscaling")
    return Template.from_stack(stack)


def test_the_role_is_trusted_by_hyperpod_without_conditions():
    [role] = _template().find_resources("AWS::IAM::Role").values()
    assert role["Properties"]["AssumeRolePolicyDocument"]["Statement"] == [
        {"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": {"Service": "hyperpod.sagemaker.amazonaws.com"}}]


def test_the_policy_holds_the_actions_the_api_names_on_this_accounts_clusters():
    documented = botocore.session.get_session().get_service_model("sagemaker").shape_for(
        "CreateClusterRequest").members["ClusterRole"].documentation
    named = set(re.findall(r"sagemaker:[A-Za-z]+", documented))
    [policy] = _template().find_resources("AWS::IAM::Policy").values()
    [statement] = policy["Properties"]["PolicyDocument"]["Statement"]
    assert set(statement["Action"]) == named == {"sagemaker:BatchAddClusterNodes", "sagemaker:BatchDeleteClusterNodes"}
    assert statement["Resource"] == {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"},
                                                       ":sagemaker:us-west-2:111122223333:cluster/*"]]}
    resource = "arn:aws:sagemaker:us-west-2:111122223333:cluster/*"
    # IAM's own data (cfn-lint): both actions act on the cluster resource type, whose ARN the pattern fits.
    for action in named:
        assert action_resource_types(action) == ("cluster",)
    [arn_format] = resource_type_arn_formats("sagemaker", "cluster")
    pattern = arn_format.replace("${Partition}", "aws").replace("${Region}", "us-west-2").replace(
        "${Account}", "111122223333")
    assert re.fullmatch(pattern, resource.replace("*", "abcdef123456"))


def test_the_role_is_never_replaced_while_the_cluster_names_it():
    # UpdateCluster: the ClusterRole "Cannot be updated while autoscaling is enabled". CloudFormation replaces an IAM
    # role only when a create-only property changes (cfn-lint's schema of AWS::IAM::Role); the role sets none.
    from cdk_app.domain.resource_schemas import create_only_properties
    [role] = _template().find_resources("AWS::IAM::Role").values()
    create_only = {path[0] for path in create_only_properties("AWS::IAM::Role")}
    assert create_only and not create_only & set(role["Properties"])
