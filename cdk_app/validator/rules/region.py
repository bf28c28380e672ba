"""The region: that it exists, offers HyperPod, and its partition and zone-id prefix."""

from __future__ import annotations

import difflib

from cdk_app.config.model import (
    KitConfig,
)
from cdk_app.domain.regions import known_regions, region_problem
from cdk_app.validator.reporter import Reporter

_REGION_WORDS = {
    "northeast": "ne", "northwest": "nw", "southeast": "se", "southwest": "sw",
    "north": "n", "south": "s", "east": "e", "west": "w", "central": "c", "gov": "g",
}


def region_code(region: str) -> str:
    """us-east-1 -> use1, ap-northeast-2 -> apne2: the prefix of the region's AZ ids."""
    parts = region.split("-")
    return parts[0] + "".join(_REGION_WORDS.get(word, word[:1]) for word in parts[1:-1]) + parts[-1]


def check_region(config: KitConfig, report: Reporter) -> None:
    problem = region_problem(config.region)
    if problem == "unknown":
        near = difflib.get_close_matches(config.region, known_regions(), n=1, cutoff=0.8)
        report.error("HPK110", ("region",), f"region {config.region!r} does not exist (cfn-lint knows no such region)",
                     (f"did you mean {near[0]}? " if near else "") + "use an AWS region such as us-east-1")
    elif problem == "no-hyperpod" and config.hyperpod is not None:
        report.error("HPK110", ("region",), f"SageMaker HyperPod (AWS::SageMaker::Cluster) is not offered in {config.region}",
                     "pick a region where CloudFormation has AWS::SageMaker::Cluster, e.g. us-east-1 or us-west-2")


# The partition of a region's ARNs (a principal of another partition can never be in the account).
_PARTITIONS = (("cn-", "aws-cn"), ("us-gov-", "aws-us-gov"), ("us-isob-", "aws-iso-b"), ("us-isof-", "aws-iso-f"),
               ("eu-isoe-", "aws-iso-e"), ("us-iso-", "aws-iso"), ("eusc-", "aws-eusc"))


def partition(region: str) -> str:
    return next((p for prefix, p in _PARTITIONS if region.startswith(prefix)), "aws")
