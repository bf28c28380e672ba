"""Trust of AWS services in the kit's roles: a condition only where AWS documents that the service sends its key.
A trust condition on a key the service does not send stops it from assuming the role at all - for the HyperPod
execution role that would fail CreateCluster after half an hour of EKS work.

- eks.amazonaws.com (the cluster role) and states.amazonaws.com (CDK's waiter state machine): aws:SourceAccount,
  as the EKS user guide (cluster IAM role) and Step Functions (cross-service confused deputy prevention) show it.
- vpc-flow-logs.amazonaws.com: aws:SourceAccount and aws:SourceArn (VPC Flow Logs user guide, IAM role).
- pods.eks.amazonaws.com: the session tags EKS Pod Identity sets - cluster, namespace, service account (EKS user
  guide, "Create IAM role with trust policy required by EKS Pod Identity").
- sagemaker.amazonaws.com (HyperPod execution role): none. SageMaker's confused-deputy page lists Training,
  Processing, Inference, Pipelines ... but not HyperPod, and AWS's own HyperPod templates trust the service without
  a condition (aws/sagemaker-hyperpod-cluster-setup, eks/cloudformation/sagemaker-iam-role-template.yaml).
- hyperpod.sagemaker.amazonaws.com (the cluster role HyperPod's managed Karpenter acts as): none, as HyperPod's
  autoscaling docs ("Create an IAM role for HyperPod autoscaling with Karpenter") and AWS's Terraform
  (awsome-distributed-training, sagemaker_iam_role karpenter_role) write it.
- lambda.amazonaws.com: none. Lambda's execution-role page shows the trust without a condition; who may attach a
  role to a function is iam:PassRole's to decide, in this account.
tests/stacks/test_app.py reads every trust policy of every stack against this table.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from constructs import IConstruct

# Services whose documented trust policy carries aws:SourceAccount (see above).
SOURCE_ACCOUNT_DOCUMENTED = frozenset({"eks.amazonaws.com", "states.amazonaws.com", "vpc-flow-logs.amazonaws.com"})
POD_IDENTITY = "pods.eks.amazonaws.com"


def source_conditions(scope: IConstruct, service: str, source_arn: str | None = None) -> dict[str, Any]:
    """The conditions AWS documents for `service` in a role's trust policy (none for most)."""
    if service not in SOURCE_ACCOUNT_DOCUMENTED:
        if source_arn is not None:
            raise ValueError(f"{service} documents no aws:SourceArn for role trust")
        return {}
    conditions: dict[str, Any] = {"StringEquals": {"aws:SourceAccount": Stack.of(scope).account}}
    if source_arn is not None:
        conditions["ArnLike"] = {"aws:SourceArn": source_arn}
    return conditions


def service_principal(scope: IConstruct, service: str, source_arn: str | None = None) -> iam.ServicePrincipal:
    """`service` as a principal, with the conditions AWS documents for it."""
    if service == POD_IDENTITY:
        raise ValueError("use pod_identity_principal: EKS Pod Identity is limited by its session tags")
    return iam.ServicePrincipal(service, conditions=source_conditions(scope, service, source_arn) or None)


def pod_identity_principal(cluster_name: str, namespace: str, service_account: str) -> iam.IPrincipal:
    """EKS Pod Identity for one service account of one cluster: the session tags it sets (and so needs
    sts:TagSession) are what the trust policy can check."""
    return iam.ServicePrincipal(POD_IDENTITY, conditions={"StringEquals": {
        "aws:RequestTag/eks-cluster-name": cluster_name, "aws:RequestTag/kubernetes-namespace": namespace,
        "aws:RequestTag/kubernetes-service-account": service_account}}).with_session_tags()


def restrict_service_trust(role: iam.IRole) -> None:
    """Add the documented conditions to the single service statement of a role CDK wrote (the EKS cluster role,
    the waiter's state machine role)."""
    cfn_role = role.node.default_child
    statements = Stack.of(role).resolve(cfn_role.assume_role_policy_document)["Statement"]
    if len(statements) != 1 or "Service" not in statements[0]["Principal"]:
        raise ValueError(f"{role.node.path}: expected one service trust statement, got {statements}")
    service = statements[0]["Principal"]["Service"]
    if service not in SOURCE_ACCOUNT_DOCUMENTED:
        raise ValueError(f"{role.node.path}: {service} documents no trust condition; leave its trust as CDK wrote it")
    cfn_role.add_property_override("AssumeRolePolicyDocument.Statement.0.Condition", source_conditions(role, service))
