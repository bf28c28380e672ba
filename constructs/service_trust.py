"""Trust of AWS services in the kit's roles, limited to requests made for this account (confused deputy).

Every role a service assumes carries aws:SourceAccount (the account the service acts for), and
aws:SourceArn where the service documents that it sets it (VPC Flow Logs). SageMaker HyperPod, Lambda,
EKS and EKS Pod Identity document SourceAccount for their roles but not a SourceArn we could name before
the resource exists, so those get the account only; a trust condition on a key the service does not send
would stop it from assuming the role at all. tests/stacks/test_app.py reads every trust policy of every stack.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from constructs import IConstruct


def source_conditions(scope: IConstruct, source_arn: str | None = None) -> dict[str, Any]:
    conditions: dict[str, Any] = {"StringEquals": {"aws:SourceAccount": Stack.of(scope).account}}
    if source_arn is not None:
        conditions["ArnLike"] = {"aws:SourceArn": source_arn}
    return conditions


def service_principal(scope: IConstruct, service: str, source_arn: str | None = None) -> iam.ServicePrincipal:
    """`service` as a principal that only acts for this stack's account (and `source_arn`, when given)."""
    return iam.ServicePrincipal(service, conditions=source_conditions(scope, source_arn))


def restrict_service_trust(role: iam.IRole) -> None:
    """Add aws:SourceAccount to the single service statement of a role CDK wrote (framework functions)."""
    cfn_role = role.node.default_child
    statements = Stack.of(role).resolve(cfn_role.assume_role_policy_document)["Statement"]
    if len(statements) != 1 or "Service" not in statements[0]["Principal"]:
        raise ValueError(f"{role.node.path}: expected one service trust statement, got {statements}")
    cfn_role.add_property_override("AssumeRolePolicyDocument.Statement.0.Condition", source_conditions(role))
