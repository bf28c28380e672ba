"""The region: that it exists, offers HyperPod, and its partition."""

from __future__ import annotations

from cdk_app.config.model import (
    KitConfig,
)
from cdk_app.domain.regions import nearest_region, region_problem
from cdk_app.validator.reporter import Reporter


def check_region(config: KitConfig, report: Reporter) -> None:
    problem = region_problem(config.region)
    if problem == "unknown":
        near = nearest_region(config.region)
        report.error("HPK110", ("region",), f"region {config.region!r} does not exist (cfn-lint knows no such region)",
                     (f"did you mean {near}? " if near else "") + "use an AWS region such as us-east-1")
    elif problem == "no-hyperpod" and config.hyperpod is not None:
        report.error("HPK110", ("region",), f"SageMaker HyperPod (AWS::SageMaker::Cluster) is not offered in {config.region}",
                     "pick a region where CloudFormation has AWS::SageMaker::Cluster, e.g. us-east-1 or us-west-2")


# The partition of a region's ARNs (a principal of another partition can never be in the account).
_PARTITIONS = (("cn-", "aws-cn"), ("us-gov-", "aws-us-gov"), ("us-isob-", "aws-iso-b"), ("us-isof-", "aws-iso-f"),
               ("eu-isoe-", "aws-iso-e"), ("us-iso-", "aws-iso"), ("eusc-", "aws-eusc"))


def partition(region: str) -> str:
    return next((p for prefix, p in _PARTITIONS if region.startswith(prefix)), "aws")
