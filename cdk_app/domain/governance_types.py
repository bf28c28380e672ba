"""Native CloudFormation type or SageMaker API custom resource, per governance resource: the choice the
config records (task_governance.cloudformation_types), else what cfn-lint's region data offers today.
Shared by the validator (HPK310-HPK312) and the governance stack."""

from __future__ import annotations

from typing import Literal

from cdk_app.config.model import KitConfig
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


def uses_native(config: KitConfig, key: str) -> bool:
    recorded = getattr(config.task_governance.cloudformation_types, key)
    return region_offers(config, key) if recorded is None else recorded == "native"
