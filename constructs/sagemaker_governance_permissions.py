"""IAM actions of CloudFormation's own handlers for AWS::SageMaker::ClusterSchedulerConfig and
AWS::SageMaker::ComputeQuota (`handlers.<name>.permissions` in the resource schemas cfn-lint 1.58.0 ships).

The SageMaker API custom resource makes the same calls as those handlers, and SageMaker calls EKS (access
policies for the task-governance service) with the caller's credentials, so its role needs the same actions.
Kept here as data instead of read at synth: constructs read no files, and a cfn-lint upgrade must not change an
IAM policy unreviewed. tests/constructs/test_governance_constructs.py fails when these differ from the installed schemas;
copy the new lists from its message.
"""

from __future__ import annotations

HANDLER_PERMISSIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "ClusterSchedulerConfig": {
        "create": ("sagemaker:CreateClusterSchedulerConfig", "sagemaker:DescribeClusterSchedulerConfig",
                   "sagemaker:DescribeCluster", "eks:DescribeCluster", "eks:AssociateAccessPolicy",
                   "eks:DescribeAccessEntry", "eks:ListAssociatedAccessPolicies", "sagemaker:AddTags",
                   "sagemaker:ListTags"),
        "read": ("sagemaker:DescribeClusterSchedulerConfig", "sagemaker:ListTags"),
        "update": ("sagemaker:UpdateClusterSchedulerConfig", "sagemaker:DescribeClusterSchedulerConfig",
                   "sagemaker:DescribeCluster", "eks:DescribeCluster", "eks:AssociateAccessPolicy",
                   "eks:DisassociateAccessPolicy", "eks:DescribeAccessEntry",
                   "eks:ListAssociatedAccessPolicies", "sagemaker:AddTags", "sagemaker:DeleteTags",
                   "sagemaker:ListTags"),
        "delete": ("sagemaker:DeleteClusterSchedulerConfig", "sagemaker:DescribeClusterSchedulerConfig",
                   "sagemaker:ListTags", "sagemaker:DescribeCluster", "eks:DescribeCluster",
                   "eks:DisassociateAccessPolicy", "eks:DescribeAccessEntry",
                   "eks:ListAssociatedAccessPolicies"),
        "list": ("sagemaker:ListClusterSchedulerConfigs",),
    },
    "ComputeQuota": {
        "create": ("sagemaker:CreateComputeQuota", "sagemaker:DescribeComputeQuota",
                   "sagemaker:DescribeCluster", "sagemaker:AddTags", "sagemaker:ListTags",
                   "eks:AssociateAccessPolicy", "eks:DescribeCluster", "eks:ListAssociatedAccessPolicies"),
        "read": ("sagemaker:DescribeComputeQuota", "sagemaker:ListTags"),
        "update": ("sagemaker:UpdateComputeQuota", "sagemaker:DescribeComputeQuota",
                   "sagemaker:DescribeCluster", "eks:DescribeCluster", "eks:AssociateAccessPolicy",
                   "eks:DisassociateAccessPolicy", "eks:DescribeAccessEntry",
                   "eks:ListAssociatedAccessPolicies", "sagemaker:AddTags", "sagemaker:DeleteTags",
                   "sagemaker:ListTags"),
        "delete": ("sagemaker:DeleteComputeQuota", "sagemaker:DescribeComputeQuota", "sagemaker:ListTags",
                   "sagemaker:DescribeCluster", "eks:DescribeCluster", "eks:DisassociateAccessPolicy",
                   "eks:DescribeAccessEntry", "eks:ListAssociatedAccessPolicies"),
        "list": ("sagemaker:ListComputeQuotas",),
    },
}
