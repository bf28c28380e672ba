"""Fine-grained tests of the HyperPodExecutionRole construct: managed policy, scoped statements and
no wildcard action anywhere in what the construct writes."""

from __future__ import annotations

import fnmatch
import json
import re
import tarfile
from pathlib import Path

import pytest
from aws_cdk import App, Environment, Stack
from aws_cdk.assertions import Match, Template
from support.paths import SUPPORT

from hyperpod_constructs.hyperpod_execution_role import ENI_ACTIONS, HyperPodExecutionRole, HyperPodExecutionRoleProps

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


# IAM's own data on each action's resource types and each resource type's condition keys, as cfn-lint ships it.
IAM = json.loads((Path(__import__("cfnlint").__file__).parent / "data" / "AdditionalSpecs" / "Policies.json").read_text())
ACCOUNT, REGION = "111122223333", "us-east-1"


def resolved(value) -> str:
    """A CDK-written ARN with the partition filled in."""
    if isinstance(value, str):
        return value
    parts = value["Fn::Join"][1]
    return "".join("aws" if part == {"Ref": "AWS::Partition"} else part for part in parts)


def example_arn(service: str, resource_type: str) -> str:
    arn_format = IAM[service]["Resources"][resource_type]["ARNFormats"][0]
    return (arn_format.replace("${Partition}", "aws").replace("${Region}", REGION).replace("${Account}", ACCOUNT)
            .replace(".*", "x-0123456789abcdef0"))


def allowed(template: Template, action: str, service: str, resource_type: str) -> bool:
    """Is some statement granting `action` on this resource type with conditions the type can carry? A
    condition key the resource type does not have is absent from the request, so the statement never matches."""
    arn = example_arn(service, resource_type)
    keys = set(IAM[service]["Resources"][resource_type]["ConditionKeys"])
    for statement in statements(template).values():
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        used = {key for condition in statement.get("Condition", {}).values() for key in condition}
        if action in actions and any(fnmatch.fnmatchcase(arn, resolved(r)) for r in resources) and used <= keys:
            return True
    return False


@pytest.mark.parametrize("action", ENI_ACTIONS + ("ec2:CreateTags",))
def test_every_resource_type_each_eni_action_acts_on_is_granted(template, action):
    """Attach/DetachNetworkInterface also act on instance/*, which has no ec2:Vpc key: a single statement with
    that condition could never allow them, and the VPC CNI could not attach secondary interfaces."""
    service, name = action.split(":")
    needed = IAM[service]["Actions"][name.lower()]["Resources"]
    if action == "ec2:CreateTags":
        needed = ["network-interface"]  # the nodes tag only their interfaces
    missing = [r for r in needed if not allowed(template, action, service, r)]
    assert missing == [], f"{action} is denied on {missing}"


def test_delete_permission_and_describe_alarms_as_the_references_grant(template):
    found = statements(template)
    assert "ec2:DeleteNetworkInterfacePermission" in found["NodeEnisInClusterVpc"]["Action"]
    assert allowed(template, "cloudwatch:DescribeAlarms", "cloudwatch", "alarm")
    assert "ec2:DescribeDhcpOptions" in found["DescribeNetwork"]["Action"]


CHART_DATA = [SUPPORT / "data" / "hyperpod-chart", Path("/work/shared/data/hyperpod-chart")]


def chart_images(region: str) -> set[tuple[str, str, str]]:
    """(region, account, repository) of every AWS ECR image the pinned chart and its EFA dependency pull on a
    node in `region`: the EFA plugin's default, the health monitoring agent (its region map or the us-east-1
    fallback) and the chart's values for the region."""
    folder = next((p for p in CHART_DATA if p.is_dir()), None)
    if folder is None:
        pytest.skip("the pinned HyperPod chart (test data) is not on this machine")
    files: dict[str, str] = {}
    for archive in sorted(folder.glob("*.t*gz")):
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                if member.isfile() and member.name.endswith((".yaml", ".tpl")):
                    files[member.name] = tar.extractfile(member).read().decode()
    image = re.compile(r"([0-9]{12})\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com/?([a-z0-9._/-]*)")
    found = {(r, a, repo or "*") for a, r, repo in image.findall(files["aws-efa-k8s-device-plugin/values.yaml"])}
    regional = files.get(f"HyperPodHelmChart/regional-values/values-{region}.yaml", "")
    found |= {(r, a, repo or "*") for a, r, repo in image.findall(regional)}
    helpers = files["HyperPodHelmChart/charts/health-monitoring-agent/templates/_helpers.tpl"]
    agent_map = dict(re.findall(r'^\s+"([a-z0-9-]+)" "([0-9]{12})"$', helpers, re.MULTILINE))
    [fallback] = re.findall(r'\$accountId = "([0-9]{12})"', helpers)
    agent_region = region if region in agent_map else "us-east-1"
    found.add((agent_region, agent_map.get(region, fallback), "hyperpod-health-monitoring-agent"))
    return found


@pytest.mark.parametrize("region", ["us-east-1", "us-west-2", "eu-west-3"])
def test_nodes_may_pull_every_image_the_pinned_chart_names(region):
    """eu-west-3 is in neither the agent's map nor the regional values: the us-east-1 fallback applies."""
    stack = Stack(App(), "Test", env=Environment(account=ACCOUNT, region=region))
    HyperPodExecutionRole(stack, "Role", props=PROPS)
    pull = statements(Template.from_stack(stack))["EcrPull"]
    resources = pull["Resource"] if isinstance(pull["Resource"], list) else [pull["Resource"]]
    patterns = [resolved(r) for r in resources]
    images = chart_images(region)
    assert any(account == "602401143452" and r != region for r, account, _ in images) or region == "us-west-2"
    for image_region, account, repository in images:
        arn = f"arn:aws:ecr:{image_region}:{account}:repository/{repository}"
        assert any(fnmatch.fnmatchcase(arn, p) for p in patterns), arn
