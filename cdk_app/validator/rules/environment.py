"""The environment's Kubernetes version and its zones' region."""

from __future__ import annotations

from cdk_app.config.model import (
    KitConfig,
)
from cdk_app.config.zone_ids import region_code
from cdk_app.domain.regions import region_problem
from cdk_app.validator.reporter import Reporter, report_repeats
from hyperpod_constructs.private.limits import MIN_KUBERNETES_MINOR


def check_environment(config: KitConfig, report: Reporter) -> None:
    minor = int(config.eks.kubernetes_version.split(".")[1])
    if minor < MIN_KUBERNETES_MINOR:
        report.error("HPK101", ("eks", "kubernetes_version"),
                     f"Kubernetes {config.eks.kubernetes_version} is too old for HyperPod task governance",
                     f"use \"1.{MIN_KUBERNETES_MINOR}\" or later")
    zones = config.availability_zone_ids
    report_repeats(report, "HPK102", [(("availability_zone_ids", i), z) for i, z in enumerate(zones)],
                    "availability zone id")
    prefix = region_code(config.region)
    if region_problem(config.region) == "unknown":
        return  # HPK110 says so; zone ids cannot be matched against a region that does not exist
    for i, zone in enumerate(zones):
        if zone.split("-az")[0] != prefix:
            report.error("HPK106", ("availability_zone_ids", i),
                         f"availability zone id {zone} is not in region {config.region}",
                         f"ids in {config.region} start with {prefix}-az")
