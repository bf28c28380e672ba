"""Native CloudFormation type or SageMaker API custom resource, per governance resource: the choice the
config records (task_governance.cloudformation_types). Shared by the validator (HPK310-HPK312), the stack
layout's estimates and the governance stacks."""

from __future__ import annotations

from typing import Literal

from cdk_app.config.model import GovernanceType, KitConfig
from cdk_app.domain.regions import cloudformation_types

TASK_GOVERNANCE_ADDON = "amazon-sagemaker-hyperpod-taskgovernance"  # the EKS add-on's name

Kind = Literal["ClusterSchedulerConfig", "ComputeQuota"]
# config key under task_governance.cloudformation_types -> (kind, CloudFormation type)
GOVERNANCE_TYPES: dict[str, tuple[Kind, str]] = {
    "cluster_policy": ("ClusterSchedulerConfig", "AWS::SageMaker::ClusterSchedulerConfig"),
    "compute_quota": ("ComputeQuota", "AWS::SageMaker::ComputeQuota"),
}


def region_offers(config: KitConfig, key: str) -> bool:
    return GOVERNANCE_TYPES[key][1] in cloudformation_types(config.region)


def offered_type(region: str, key: str) -> GovernanceType:
    """What cfn-lint's region data offers in `region` today: the value to record for a new environment there."""
    return "native" if GOVERNANCE_TYPES[key][1] in cloudformation_types(region) else "api"


def derived_type(config: KitConfig, key: str) -> GovernanceType:
    """What cfn-lint's region data offers today: the value the validator tells an admin to record. Never
    what a stack is built from - a cfn-lint upgrade can change it, and a type change replaces the resource."""
    return offered_type(config.region, key)


def recorded_type(config: KitConfig, key: str) -> GovernanceType | None:
    return getattr(config.task_governance.cloudformation_types, key)


def uses_native(config: KitConfig, key: str) -> bool:
    """The recorded choice. An unrecorded one is HPK312, an error: app.py synthesizes nothing then, and a
    caller that builds stacks without validating fails here instead of deriving a type."""
    recorded = recorded_type(config, key)
    if recorded is None:
        raise ValueError(f"task_governance.cloudformation_types.{key} is not recorded (HPK312): "
                         "run hyperpod-kit validate before building the stacks")
    return recorded == "native"


def estimated_native(config: KitConfig, key: str) -> bool:
    """For the stack-size estimate of a config that may still lack the record (validate reports HPK312 next
    to it): the recorded choice, else the derived one."""
    return (recorded_type(config, key) or derived_type(config, key)) == "native"
