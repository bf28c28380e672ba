"""Acknowledging cdk-nag findings, one finding at a time, each with its reason.

cdk-nag 3 names a finding after the exact value it objects to, with CloudFormation references written
as <LogicalId> or <LogicalId.Attribute>; the helpers build those names from the constructs
themselves so that an acknowledgement follows the resource, not a hard-coded id.
"""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Acknowledgment, CfnElement, Stack, Token, Validations, region_info
from constructs import IConstruct


def acknowledge(scope: IConstruct, findings: Mapping[str, str]) -> None:
    """Acknowledge each finding id on `scope` with its reason."""
    for finding, reason in findings.items():
        if len(reason) < 20:
            raise ValueError(f"acknowledgement of {finding} needs a real reason, got {reason!r}")
    Validations.of(scope).acknowledge(*(Acknowledgment(id=f, reason=r) for f, r in findings.items()))


def ref(element: CfnElement, attribute: str | None = None) -> str:
    """How cdk-nag writes a Ref or Fn::GetAtt of `element` in a finding id."""
    logical_id = Stack.of(element).resolve(element.logical_id)
    return f"<{logical_id}.{attribute}>" if attribute else f"<{logical_id}>"


def partition(scope: IConstruct) -> str:
    """The partition cdk-nag substitutes in resource ARNs of this stack's region."""
    region = Stack.of(scope).region
    if Token.is_unresolved(region):
        return "<AWS::Partition>"
    return region_info.RegionInfo.get(region).partition or "aws"


def managed_policy(name: str) -> str:
    """Finding id of AwsSolutions-IAM4 for an AWS managed policy (service-role/ paths included)."""
    return f"AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/{name}]"


def wildcard_resource(resource: str) -> str:
    return f"AwsSolutions-IAM5[Resource::{resource}]"



def nag_text(scope: IConstruct, value: str) -> str:
    """`value` (a string that may hold tokens) as cdk-nag prints it in a finding id."""
    return _render(scope, Stack.of(scope).resolve(value))


def _render(scope: IConstruct, value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and len(value) == 1:
        (function, argument), = value.items()
        if function == "Ref":
            return partition(scope) if argument == "AWS::Partition" else f"<{argument}>"
        if function == "Fn::GetAtt":
            return f"<{argument[0]}.{argument[1]}>"
        if function == "Fn::Join":
            separator, parts = argument
            return separator.join(_render(scope, part) for part in parts)
    raise ValueError(f"cannot name {value!r} the way cdk-nag does")
