"""IAM role HyperPod's managed Karpenter acts as (AWS::SageMaker::Cluster ClusterRole): it adds and removes the
cluster's nodes, nothing else.

botocore's sagemaker model (CreateCluster ClusterRole): "This role must have permissions for
sagemaker:BatchAddClusterNodes and sagemaker:BatchDeleteClusterNodes". Compared with the policy of HyperPod's
autoscaling docs ("Create an IAM role for HyperPod autoscaling with Karpenter") and AWS's Terraform
(awsome-distributed-training, sagemaker_iam_role's karpenter_policy):
- the two actions on cluster/* of any region with aws:ResourceAccount = the caller's account; the kit on
  cluster/* of this account and region. The cluster's ARN ends in an id SageMaker assigns at creation, and the
  cluster names this role when it is created, so no policy can name the cluster itself before it exists.
- kms:CreateGrant and kms:DescribeKey through SageMaker (for volumes encrypted with a customer managed key): left
  out, as the kit's instance groups name no KMS key (their EBS volumes use the AWS managed key).
The cluster's ClusterRole "Cannot be updated while autoscaling is enabled" (botocore, UpdateClusterRequest): the role
has no name or path of its own, the only properties whose change makes CloudFormation replace an IAM role, so its ARN
stays for the life of the cluster.
"""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from constructs import Construct

from hyperpod_constructs.nag_acknowledgements import acknowledge, nag_text, wildcard_resource
from hyperpod_constructs.service_trust import service_principal

AUTOSCALER_SERVICE = "hyperpod.sagemaker.amazonaws.com"
NODE_ACTIONS = ("sagemaker:BatchAddClusterNodes", "sagemaker:BatchDeleteClusterNodes")


class HyperPodAutoscalingRole(Construct):
    """The cluster role of one HyperPod cluster with autoscaling (no props: its scope is the stack's account and
    region)."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        clusters = f"arn:{stack.partition}:sagemaker:{stack.region}:{stack.account}:cluster/*"
        self.role = iam.Role(self, "Role", assumed_by=service_principal(self, AUTOSCALER_SERVICE),
                             description="HyperPod's managed Karpenter: adds and removes the cluster's nodes")
        self.policy = iam.Policy(self, "ScalingPolicy", statements=[
            iam.PolicyStatement(sid="ScaleClusterNodes", actions=list(NODE_ACTIONS), resources=[clusters])])
        self.policy.attach_to_role(self.role)
        acknowledge(self.policy, {wildcard_resource(nag_text(self, clusters)): (
            "the cluster's ARN ends in an id SageMaker assigns when it creates the cluster, which names this role "
            "then; limited to this account's and region's clusters and to adding and removing nodes")})
        self.role_arn = self.role.role_arn
