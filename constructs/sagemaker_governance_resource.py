"""A HyperPod cluster policy (AWS::SageMaker::ClusterSchedulerConfig) or team compute allocation
(AWS::SageMaker::ComputeQuota): the native CloudFormation type where the region has it, else a custom
resource that calls the SageMaker API (sagemaker_governance_handler).

Both paths take the same parameters: the API's request fields are the CloudFormation properties, so
one dictionary feeds either. The caller decides `native` at synth time from cfn-lint's region data.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from aws_cdk import CfnResource, CustomResource, Duration, Stack, aws_iam as iam
from constructs import Construct

from hyperpod_constructs.nag_acknowledgements import acknowledge, nag_text, wildcard_resource
from hyperpod_constructs.python_handler_provider import PythonHandlerProvider, PythonHandlerProviderProps

HANDLER_DIR = Path(__file__).resolve().parent / "sagemaker_governance_handler"
Kind = Literal["ClusterSchedulerConfig", "ComputeQuota"]
ARN_ATTRIBUTE = {"ClusterSchedulerConfig": "ClusterSchedulerConfigArn", "ComputeQuota": "ComputeQuotaArn"}
REQUIRED = {"ClusterSchedulerConfig": ("Name", "ClusterArn", "SchedulerConfig"),
            "ComputeQuota": ("Name", "ClusterArn", "ComputeQuotaConfig", "ComputeQuotaTarget")}
PROVIDER_ID = "SageMakerGovernanceApi"


@dataclass(frozen=True)
class SageMakerGovernanceResourceProps:
    """Props of SageMakerGovernanceResource.

    kind: ClusterSchedulerConfig or ComputeQuota - required.
    parameters: the resource's properties, as CloudFormation and the Create API name them - required.
    native: use the CloudFormation type (True) or the SageMaker API custom resource (False) - required.
    """

    kind: Kind
    parameters: dict[str, Any]
    native: bool


class SageMakerGovernanceResource(Construct):
    """One cluster policy or compute allocation; `arn` works the same either way."""

    def __init__(self, scope: Construct, construct_id: str, *, props: SageMakerGovernanceResourceProps) -> None:
        super().__init__(scope, construct_id)
        if props.kind not in REQUIRED:
            raise ValueError(f"kind must be one of {sorted(REQUIRED)}, got {props.kind!r}")
        missing = [key for key in REQUIRED[props.kind] if key not in props.parameters]
        if missing:
            raise ValueError(f"{props.kind} parameters lack {missing}")
        if props.native:
            self.resource: CfnResource | CustomResource = CfnResource(
                self, "Resource", type=f"AWS::SageMaker::{props.kind}", properties=props.parameters)
            self.arn = self.resource.get_att(ARN_ATTRIBUTE[props.kind]).to_string()
            if props.kind == "ComputeQuota":
                acknowledge(self.resource, {"CloudFormation-Validate::F3006": (
                    "aws-cdk-lib 2.275's built-in schemas predate AWS::SageMaker::ComputeQuota (CfnComputeQuota "
                    "arrives in 2.276); cfn-lint 1.58, which has the type, lints every template in CI")})
        else:
            self.resource = CustomResource(
                self, "Resource", service_token=_api_provider(Stack.of(self)).service_token,
                resource_type=f"Custom::SageMaker{props.kind}",
                properties={"Kind": props.kind, "Region": Stack.of(self).region, "Parameters": props.parameters})
            self.arn = self.resource.get_att_string("Arn")


def _api_provider(stack: Stack) -> PythonHandlerProvider:
    """One handler per stack serves every API-backed policy and quota in it."""
    existing = stack.node.try_find_child(PROVIDER_ID)
    if existing is not None:
        return existing  # type: ignore[return-value]
    provider = PythonHandlerProvider(stack, PROVIDER_ID, props=PythonHandlerProviderProps(
        handler_dir=str(HANDLER_DIR), timeout=Duration.minutes(15),
        description="Creates, updates and deletes HyperPod cluster policies and compute quotas via the SageMaker API"))
    arn = f"arn:{stack.partition}:sagemaker:{stack.region}:{stack.account}"
    resources = [f"{arn}:cluster-scheduler-config/*", f"{arn}:compute-quota/*", f"{arn}:cluster/*"]
    provider.role.add_to_policy(iam.PolicyStatement(
        actions=[f"sagemaker:{verb}{kind}" for kind in ("ClusterSchedulerConfig", "ComputeQuota")
                 for verb in ("Create", "Describe", "Update", "Delete")] + ["sagemaker:AddTags"],
        resources=resources))
    acknowledge(provider.role, {
        wildcard_resource(nag_text(stack, resource)):
            "policy and quota ids are assigned by SageMaker at creation; the patterns stop at this account and region"
        for resource in resources})
    return provider
