"""A HyperPod cluster policy (AWS::SageMaker::ClusterSchedulerConfig) or team compute allocation
(AWS::SageMaker::ComputeQuota): the native CloudFormation type where the region has it, else a custom
resource that calls the SageMaker API (sagemaker_governance_handler).

Both paths take the same parameters: the API's request fields are the CloudFormation properties, so
one dictionary feeds either. The caller decides `native` at synth time from cfn-lint's region data.

The API path's role holds exactly the actions of CloudFormation's own handlers for the type
(sagemaker_governance_permissions), each on the narrowest resource it accepts. Its handler starts the work in
on_event and waits in is_complete (CDK's waiter state machine), so a failure after SageMaker accepted a
Create reaches CloudFormation with the new id and rollback deletes it; ServiceTimeout bounds the wait.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from aws_cdk import CfnResource, CustomResource, Duration, Stack, Token, Tokenization
from aws_cdk import aws_iam as iam
from constructs import Construct

from hyperpod_constructs.nag_acknowledgements import acknowledge, nag_text, wildcard_resource
from hyperpod_constructs.python_handler_provider import PythonHandlerProvider, PythonHandlerProviderProps
from hyperpod_constructs.sagemaker_governance_permissions import HANDLER_PERMISSIONS

HANDLER_DIR = Path(__file__).resolve().parent / "sagemaker_governance_handler"
Kind = Literal["ClusterSchedulerConfig", "ComputeQuota"]
# Scopes whose F3006 (unknown resource type) acknowledgement is made.
_ACKNOWLEDGED: weakref.WeakSet[Construct] = weakref.WeakSet()
ARN_ATTRIBUTE = {"ClusterSchedulerConfig": "ClusterSchedulerConfigArn", "ComputeQuota": "ComputeQuotaArn"}
ARN_TYPE = {"ClusterSchedulerConfig": "cluster-scheduler-config", "ComputeQuota": "compute-quota"}
REQUIRED = {"ClusterSchedulerConfig": ("Name", "ClusterArn", "SchedulerConfig"),
            "ComputeQuota": ("Name", "ClusterArn", "ComputeQuotaConfig", "ComputeQuotaTarget")}
PROVIDER_ID = "SageMakerGovernanceApi"
HANDLER_TIMEOUT = Duration.minutes(5)
# How long is_complete may report "still creating/updating/deleting" before the resource fails.
WAIT_TIMEOUT = Duration.minutes(30)
# CloudFormation gives up after this instead of its default hour: on_event plus the wait, plus a margin.
SERVICE_TIMEOUT = Duration.minutes(40)


@dataclass(frozen=True)
class SageMakerGovernanceResourceProps:
    """Props of SageMakerGovernanceResource.

    kind: ClusterSchedulerConfig or ComputeQuota - required.
    parameters: the resource's properties, as CloudFormation and the Create API name them - required.
    native: use the CloudFormation type (True) or the SageMaker API custom resource (False) - required.
    eks_cluster_name: the EKS cluster that orchestrates the HyperPod cluster; the API path's role may call EKS
        on it (and on its access entries) only - required when native is False.
    """

    kind: Kind
    parameters: dict[str, Any]
    native: bool
    eks_cluster_name: str | None = None


class SageMakerGovernanceResource(Construct):
    """One cluster policy or compute allocation; `arn` works the same either way."""

    def __init__(self, scope: Construct, construct_id: str, *, props: SageMakerGovernanceResourceProps) -> None:
        super().__init__(scope, construct_id)
        self._kind = props.kind
        if props.kind not in REQUIRED:
            raise ValueError(f"kind must be one of {sorted(REQUIRED)}, got {props.kind!r}")
        missing = [key for key in REQUIRED[props.kind] if key not in props.parameters]
        if missing:
            raise ValueError(f"{props.kind} parameters lack {missing}")
        if not props.native and not props.eks_cluster_name:
            raise ValueError("eks_cluster_name is required when native is False (the role's EKS actions act on it)")
        if props.native:
            self.resource: CfnResource | CustomResource = CfnResource(
                self, "Resource", type=f"AWS::SageMaker::{props.kind}", properties=props.parameters)
            if props.kind == "ComputeQuota" and scope not in _ACKNOWLEDGED:
                # Once per scope, which covers its children: at hundreds of teams a call per quota is seconds.
                _ACKNOWLEDGED.add(scope)
                acknowledge(scope, {"CloudFormation-Validate::F3006": (
                    "aws-cdk-lib 2.275's built-in schemas predate AWS::SageMaker::ComputeQuota (CfnComputeQuota "
                    "arrives in 2.276); cfn-lint 1.58, which has the type, lints every template in CI")})
        else:
            stack = Stack.of(self)
            provider = _api_provider(stack, props)
            self.resource = CustomResource(
                self, "Resource", service_token=provider.service_token, service_timeout=SERVICE_TIMEOUT,
                resource_type=f"Custom::SageMaker{props.kind}",
                properties={"Kind": props.kind, "Region": stack.region, "Parameters": props.parameters})

    @property
    def arn(self) -> str:
        """The policy's or quota's ARN (a token); made when asked for, since most quotas' ARNs are not used."""
        if isinstance(self.resource, CustomResource):
            return self.resource.get_att_string("Arn")
        return self.resource.get_att(ARN_ATTRIBUTE[self._kind]).to_string()


def _api_provider(stack: Stack, props: SageMakerGovernanceResourceProps) -> PythonHandlerProvider:
    """One handler per stack serves every API-backed policy and quota in it; its role gains each kind's
    actions the first time the kind appears."""
    provider = stack.node.try_find_child(PROVIDER_ID)
    if provider is None:
        provider = PythonHandlerProvider(stack, PROVIDER_ID, props=PythonHandlerProviderProps(
            handler_dir=str(HANDLER_DIR), timeout=HANDLER_TIMEOUT, is_complete=True, total_timeout=WAIT_TIMEOUT,
            anchored_to_stack=True,
            description="Creates, updates and deletes HyperPod cluster policies and compute quotas via the SageMaker API"))
        provider.granted = {}  # type: ignore[attr-defined]
    granted: dict[str, tuple[str, str]] = provider.granted  # type: ignore[attr-defined]
    clusters = (props.parameters["ClusterArn"], props.eks_cluster_name)
    if granted and clusters not in granted.values():
        raise ValueError("every API-backed policy and quota of a stack must name the same HyperPod and EKS clusters")
    if props.kind not in granted:
        granted[props.kind] = clusters
        _grant(stack, provider, props.kind, *clusters)
    return provider  # type: ignore[return-value]


def scoped_resources(stack: Stack, kind: str, action: str, cluster_arn: str, eks_cluster_name: str) -> tuple[str, ...]:
    """The narrowest resources `action` accepts here (IAM's resource types for it, per the service
    authorization reference): the HyperPod cluster, this account's policies or quotas (ids are assigned by
    SageMaker, hence the pattern), the EKS cluster or its access entries; '*' only for listings."""
    service, _, name = action.partition(":")
    if service == "eks":
        eks_arn = f"arn:{stack.partition}:eks:{stack.region}:{stack.account}"
        if name == "DescribeCluster":
            return (f"{eks_arn}:cluster/{eks_cluster_name}",)
        return (f"{eks_arn}:access-entry/{eks_cluster_name}/*",)
    own = f"arn:{stack.partition}:sagemaker:{stack.region}:{stack.account}:{ARN_TYPE[kind]}/*"
    if name == "DescribeCluster":
        return (cluster_arn,)
    if name.startswith("Create"):
        return (cluster_arn, own)  # Create acts on the cluster and on the new policy or quota
    if name.startswith("List") and name != "ListTags":
        return ("*",)  # ListComputeQuotas / ListClusterSchedulerConfigs accept no resource
    return (own,)


def _imported(stack: Stack, value: str) -> tuple[str, str]:
    """`value` and how cdk-nag names it. A reference to another stack's resource becomes the import of
    the export CDK makes for it anyway (Stack.export_value gives it the same name), so the finding's name
    is known here: cdk-nag prints an import as its export name."""
    if not Token.is_unresolved(value):
        return value, value
    tokens = Tokenization.reverse_string(value).tokens
    target = getattr(tokens[0], "target", None) if len(tokens) == 1 else None
    if target is None or Stack.of(target) is stack:
        return value, nag_text(stack, value)
    imported = Stack.of(target).export_value(value)
    return imported, stack.resolve(imported)["Fn::ImportValue"]


def _grant(stack: Stack, provider: PythonHandlerProvider, kind: str, cluster_arn: str, eks_cluster_name: str) -> None:
    eks_cluster_name, eks_nag_name = _imported(stack, eks_cluster_name)
    actions = sorted({a for handler in HANDLER_PERMISSIONS[kind].values() for a in handler})
    by_scope: dict[tuple[str, ...], list[str]] = {}
    for action in actions:
        by_scope.setdefault(scoped_resources(stack, kind, action, cluster_arn, eks_cluster_name), []).append(action)
    for resources, scoped in by_scope.items():
        provider.role.add_to_policy(iam.PolicyStatement(actions=scoped, resources=list(resources)))
    reasons = {
        f"{ARN_TYPE[kind]}/*": f"{kind} ids are assigned by SageMaker at creation; the pattern stops at this "
                               "account, region and resource type",
        "access-entry/": "SageMaker associates task governance's access policies on this EKS cluster's access "
                         "entries (CloudFormation's own handler needs the same); entry ids are EKS-assigned",
        "*": "ListComputeQuotas and ListClusterSchedulerConfigs accept no resource-level permission",
    }
    findings = {}
    for resources in by_scope:
        for resource in resources:
            if resource.endswith("*"):
                key = next(k for k in reasons if k in resource) if resource != "*" else "*"
                # The cluster name goes in after rendering: nag_text names same-stack references only.
                named = nag_text(stack, resource.replace(eks_cluster_name, "{eks}")).replace("{eks}", eks_nag_name)
                findings[wildcard_resource(named)] = reasons[key]
    acknowledge(provider.role, findings)
