"""IAM role HyperPod instances run as: the AWS managed HyperPod instance policy plus what an EKS
node needs, each action named and scoped as far as the service allows.

Compared statement by statement with the execution role of AWS's references (the console's
CloudFormation in aws/sagemaker-hyperpod-cluster-setup, sagemaker-iam-role-template.yaml, and the
sagemaker_iam_role Terraform module of awslabs/awsome-distributed-ai) - same actions, narrower resources:
- ENI operations: the references grant them on instance/*, network-interface/* and the VPC's ARN, plus
  the subnets and security group by id; the kit grants them on network interfaces, subnets and security
  groups that carry ec2:Vpc = the cluster's VPC (all three resource types have the key; IAM's data in
  cfn-lint says so, tests/constructs/test_hyperpod_execution_role.py reads it), and only Attach, Detach and
  ModifyNetworkInterfaceAttribute - the ENI actions that also act on an instance, which has no ec2:Vpc
  key - on instance/* of this account and region, as the references do.
- DetachNetworkInterface: the references grant it on "*"; the kit as above.
- CreateTags: the references allow it on network-interface/* of any region and account; the kit on this
  account's and region's network interfaces in the VPC.
- ECR: the references allow pulls from any repository; the kit from any account's repositories in the
  stack's region (regional mirrors, the health monitoring agent), from EKS's registry account 602401143452
  in every region (the EFA device plugin chart pulls from us-west-2 wherever it runs) and from the
  health monitoring agent's us-east-1 fallback registry (regions the chart does not map).
- cloudwatch:DescribeAlarms: the references on "*"; the kit on this account's alarms in the region.
- fsx:DescribeFileSystems (Terraform only, for FSx for Lustre) is left out: the kit creates no FSx.
- The kit adds node logs and metrics (scoped) that the references leave to the managed policies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aws_cdk import Stack, Token
from aws_cdk import aws_iam as iam
from constructs import Construct

from hyperpod_constructs.nag_acknowledgements import acknowledge, managed_policy, nag_text, wildcard_resource
from hyperpod_constructs.service_trust import service_principal

INSTANCE_POLICY = "AmazonSageMakerClusterInstanceRolePolicy"

# ENI operations the VPC CNI performs on nodes; scoped to the VPC by the ec2:Vpc condition.
ENI_ACTIONS = (
    "ec2:CreateNetworkInterface", "ec2:DeleteNetworkInterface", "ec2:AttachNetworkInterface",
    "ec2:DetachNetworkInterface", "ec2:ModifyNetworkInterfaceAttribute", "ec2:AssignPrivateIpAddresses",
    "ec2:UnassignPrivateIpAddresses", "ec2:CreateNetworkInterfacePermission", "ec2:DeleteNetworkInterfacePermission",
)
# The ENI actions that also act on the instance, whose ARN has no ec2:Vpc key: their instance side needs a
# statement without that condition, or the call is always denied.
INSTANCE_ENI_ACTIONS = ("ec2:AttachNetworkInterface", "ec2:DetachNetworkInterface", "ec2:ModifyNetworkInterfaceAttribute")
# Describe calls have no resource-level permissions in EC2: "*" is the only resource they accept.
DESCRIBE_ACTIONS = (
    "ec2:DescribeNetworkInterfaces", "ec2:DescribeInstances", "ec2:DescribeInstanceTypes", "ec2:DescribeSubnets",
    "ec2:DescribeSecurityGroups", "ec2:DescribeVpcs", "ec2:DescribeTags", "ec2:DescribeAvailabilityZones",
    "ec2:DescribeDhcpOptions",
)
# AWS's EKS image registry account; the EFA device plugin chart pulls from it in us-west-2 in every region.
EKS_REGISTRY_ACCOUNT = "602401143452"
# Where the chart's health monitoring agent comes from in regions its map does not list.
HEALTH_AGENT_FALLBACK = ("us-east-1", "767398015722", "hyperpod-health-monitoring-agent")
ECR_PULL_ACTIONS = ("ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchCheckLayerAvailability")
LOG_ACTIONS = ("logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams")

# Why each statement that names a resource pattern cannot name a single resource.
WILDCARD_REASONS = {
    "NodeEnisInClusterVpc": "the VPC CNI creates ENIs whose ids are not known in advance; the ec2:Vpc "
                            "condition confines every operation to the cluster's VPC",
    "NodeEnisOnInstances": "attaching and detaching ENIs also acts on the node's instance, whose id is not known "
                           "in advance and whose ARN has no ec2:Vpc key; limited to this account and region and "
                           "to the three actions that need it",
    "TagNodeEnis": "the VPC CNI tags the ENIs it creates, whose ids are not known in advance; the ec2:Vpc "
                   "condition confines tagging to the cluster's VPC",
    "DescribeNetwork": "EC2 Describe actions have no resource-level permissions; '*' is the only resource they accept",
    "EcrToken": "ecr:GetAuthorizationToken has no resource-level permissions",
    "EcrPull": "system images (VPC CNI, HyperPod agents, device plugins) come from AWS-owned registries in accounts "
               "that vary by region; other regions only for EKS's registry account and the agent's fallback",
    "ReadAlarms": "the node agents read the account's alarms, whose names they do not know in advance",
    "NodeLogs": "HyperPod and Container Insights name log groups after cluster ids and create streams per node; "
                "the patterns are limited to those prefixes",
    "NodeMetrics": "cloudwatch:PutMetricData has no resource-level permissions; the namespace condition narrows it",
    "ReadLifecycleScripts": "nodes read every object of the lifecycle bucket, which holds only the scripts",
}


@dataclass(frozen=True)
class HyperPodExecutionRoleProps:
    """Props of HyperPodExecutionRole.

    vpc_id: the cluster's VPC; ENI operations are allowed in it only - required.
    eks_cluster_arn: pods on the nodes may assume roles through Pod Identity on this cluster - required.
    eks_cluster_name: container insights log groups of this cluster are writable - required.
    lifecycle_bucket_arn: the nodes read their lifecycle scripts from it - required.
    """

    vpc_id: str
    eks_cluster_arn: str
    eks_cluster_name: str
    lifecycle_bucket_arn: str


class HyperPodExecutionRole(Construct):
    """The execution role of every instance group of one HyperPod cluster."""

    def __init__(self, scope: Construct, construct_id: str, *, props: HyperPodExecutionRoleProps) -> None:
        super().__init__(scope, construct_id)
        if not Token.is_unresolved(props.vpc_id) and not re.fullmatch(r"vpc-[0-9a-f]{8,17}", props.vpc_id):
            raise ValueError(f"vpc_id must be a VPC id (vpc-...), got {props.vpc_id!r}")
        stack = Stack.of(self)
        partition, region, account = stack.partition, stack.region, stack.account
        ec2_arn = f"arn:{partition}:ec2:{region}:{account}"
        logs_arn = f"arn:{partition}:logs:{region}:{account}:log-group"

        self.role = iam.Role(
            self, "Role",
            assumed_by=service_principal(self, "sagemaker.amazonaws.com"),
            description="HyperPod instances (EKS nodes): managed instance policy plus node permissions",
            managed_policies=[iam.ManagedPolicy.from_aws_managed_policy_name(INSTANCE_POLICY)],
        )
        statements = [
            iam.PolicyStatement(
                sid="NodeEnisInClusterVpc", actions=list(ENI_ACTIONS),
                resources=[f"{ec2_arn}:network-interface/*", f"{ec2_arn}:subnet/*", f"{ec2_arn}:security-group/*"],
                conditions={"ArnEquals": {"ec2:Vpc": f"{ec2_arn}:vpc/{props.vpc_id}"}},
            ),
            iam.PolicyStatement(sid="NodeEnisOnInstances", actions=list(INSTANCE_ENI_ACTIONS),
                                resources=[f"{ec2_arn}:instance/*"]),
            iam.PolicyStatement(
                sid="TagNodeEnis", actions=["ec2:CreateTags"], resources=[f"{ec2_arn}:network-interface/*"],
                conditions={"ArnEquals": {"ec2:Vpc": f"{ec2_arn}:vpc/{props.vpc_id}"}},
            ),
            iam.PolicyStatement(sid="DescribeNetwork", actions=list(DESCRIBE_ACTIONS), resources=["*"]),
            # The token call has no resource; image pulls reach AWS-owned registries in other accounts.
            iam.PolicyStatement(sid="EcrToken", actions=["ecr:GetAuthorizationToken"], resources=["*"]),
            iam.PolicyStatement(sid="EcrPull", actions=list(ECR_PULL_ACTIONS), resources=[
                f"arn:{partition}:ecr:{region}:*:repository/*",
                f"arn:{partition}:ecr:*:{EKS_REGISTRY_ACCOUNT}:repository/*",
                "arn:{}:ecr:{}:{}:repository/{}".format(partition, *HEALTH_AGENT_FALLBACK),
            ]),
            iam.PolicyStatement(sid="ReadAlarms", actions=["cloudwatch:DescribeAlarms"],
                                resources=[f"arn:{partition}:cloudwatch:{region}:{account}:alarm:*"]),
            iam.PolicyStatement(sid="PodIdentity", actions=["eks-auth:AssumeRoleForPodIdentity"],
                                resources=[props.eks_cluster_arn]),
            iam.PolicyStatement(
                sid="NodeLogs", actions=list(LOG_ACTIONS),
                resources=[f"{logs_arn}:/aws/sagemaker/Clusters/*",
                           f"{logs_arn}:/aws/containerinsights/{props.eks_cluster_name}/*"],
            ),
            # PutMetricData has no resource-level permissions; the namespace condition narrows it.
            iam.PolicyStatement(sid="NodeMetrics", actions=["cloudwatch:PutMetricData"], resources=["*"],
                                conditions={"StringEquals": {"cloudwatch:namespace": ["ContainerInsights",
                                                                                        "CWAgent"]}}),
            iam.PolicyStatement(sid="ReadLifecycleScripts", actions=["s3:GetObject", "s3:ListBucket"],
                                resources=[props.lifecycle_bucket_arn, f"{props.lifecycle_bucket_arn}/*"]),
        ]
        self.policy = iam.Policy(self, "NodePolicy", statements=statements)
        self.policy.attach_to_role(self.role)
        acknowledge(self.role, {managed_policy(INSTANCE_POLICY): (
            "HyperPod requires its managed instance policy on the execution role; it is scoped by AWS to "
            "sagemaker-* buckets and HyperPod's own log groups")})
        # One finding per distinct pattern; "*" serves several statements, so it carries each one's reason.
        reasons: dict[str, list[str]] = {}
        for statement in statements:
            for resource in statement.resources:
                if "*" in resource:
                    reasons.setdefault(wildcard_resource(nag_text(self, resource)), []).append(
                        f"{statement.sid}: {WILDCARD_REASONS[statement.sid]}")
        acknowledge(self.policy, {finding: "; ".join(texts) for finding, texts in reasons.items()})
        self.role_arn = self.role.role_arn
        self.role_name = self.role.role_name
