"""Fine-grained tests of the HyperPodExecutionRole construct: managed policy, scoped statements and
no wildcard action anywhere in what the construct writes."""

from __future__ import annotations

import pytest
from aws_cdk import App, Environment, Stack
from aws_cdk.assertions import Match, Template

from hyperpod_constructs.hyperpod_execution_role import HyperPodExecutionRole, HyperPodExecutionRoleProps

PROPS = HyperPodExecutionRoleProps(
    vpc_id="vpc-0123456789abcdef0",
    eks_cluster_arn="arn:aws:eks:us-east-1:111122223333:cluster/hyperpod-eks",
    eks_cluster_name="hyperpod-eks",
    lifecycle_bucket_arn="arn:aws:s3:::sagemaker-hpk-dev-111122223333-us-east-1",
)



def arn(rest: str) -> dict:
    """An ARN as CDK writes it: the partition stays a reference."""
    return {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, rest]]}


@pytest.fixture(scope="module")
def template() -> Template:
    stack = Stack(App(), "Test", env=Environment(account="111122223333", region="us-east-1"))
    HyperPodExecutionRole(stack, "Role", props=PROPS)
    return Template.from_stack(stack)


def statements(template: Template) -> dict[str, dict]:
    [policy] = template.find_resources("AWS::IAM::Policy").values()
    return {s["Sid"]: s for s in policy["Properties"]["PolicyDocument"]["Statement"]}


def test_role_is_for_sagemaker_with_the_hyperpod_instance_policy(template):
    template.has_resource_properties("AWS::IAM::Role", {
        "AssumeRolePolicyDocument": {"Statement": [Match.object_like(
            {"Action": "sts:AssumeRole", "Principal": {"Service": "sagemaker.amazonaws.com"}})]},
        "ManagedPolicyArns": [{"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"},
                                                 ":iam::aws:policy/AmazonSageMakerClusterInstanceRolePolicy"]]}],
    })


def test_no_wildcard_actions(template):
    for sid, statement in statements(template).items():
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        assert all("*" not in action for action in actions), sid


def test_eni_operations_are_confined_to_the_vpc(template):
    eni = statements(template)["NodeEnisInClusterVpc"]
    assert "ec2:CreateNetworkInterface" in eni["Action"]
    assert eni["Condition"] == {"ArnEquals": {"ec2:Vpc": arn(":ec2:us-east-1:111122223333:vpc/vpc-0123456789abcdef0")}}
    tags = statements(template)["TagNodeEnis"]
    assert tags["Action"] == "ec2:CreateTags"
    assert tags["Resource"] == arn(":ec2:us-east-1:111122223333:network-interface/*")


def test_pod_identity_is_on_this_cluster_only(template):
    pod = statements(template)["PodIdentity"]
    assert pod["Action"] == "eks-auth:AssumeRoleForPodIdentity"
    assert pod["Resource"] == PROPS.eks_cluster_arn


def test_lifecycle_bucket_is_readable_and_nothing_else_in_s3(template):
    s3 = statements(template)["ReadLifecycleScripts"]
    assert s3["Action"] == ["s3:GetObject", "s3:ListBucket"]
    assert s3["Resource"] == [PROPS.lifecycle_bucket_arn, PROPS.lifecycle_bucket_arn + "/*"]


def test_ecr_pull_and_metrics(template):
    found = statements(template)
    assert found["EcrPull"]["Action"] == ["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer",
                                          "ecr:BatchCheckLayerAvailability"]
    assert found["NodeMetrics"]["Condition"] == {"StringEquals": {"cloudwatch:namespace": ["ContainerInsights", "CWAgent"]}}
    assert found["NodeLogs"]["Resource"] == [
        arn(":logs:us-east-1:111122223333:log-group:/aws/sagemaker/Clusters/*"),
        arn(":logs:us-east-1:111122223333:log-group:/aws/containerinsights/hyperpod-eks/*")]


def test_bad_vpc_id_raises():
    with pytest.raises(ValueError, match="vpc_id must be a VPC id \\(vpc-...\\), got 'my-vpc'"):
        HyperPodExecutionRole(Stack(App(), "Test"), "Role", props=HyperPodExecutionRoleProps(
            vpc_id="my-vpc", eks_cluster_arn=PROPS.eks_cluster_arn, eks_cluster_name="x",
            lifecycle_bucket_arn=PROPS.lifecycle_bucket_arn))
