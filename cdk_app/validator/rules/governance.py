"""Task governance: the add-on, the cluster policy, the CloudFormation types and observability."""

from __future__ import annotations

from cdk_app.config.model import (
    KitConfig,
)
from cdk_app.config.names import (
    DNS1123_LABEL,
)
from cdk_app.config.yaml_source import PathKey
from cdk_app.domain.governance_types import GOVERNANCE_TYPES, derived_type, recorded_type, region_offers
from cdk_app.domain.regions import region_problem
from cdk_app.domain.versions import version_tuple
from cdk_app.validator.reporter import Reporter, report_repeats

MAX_PRIORITY_CLASS_NAME = 54  # <name>-priority must fit 63 characters


MAX_PRIORITY_CLASSES = 10


TOPOLOGY_ADDON_VERSION = (1, 2, 2)


def check_cluster_policy(config: KitConfig, report: Reporter) -> None:
    classes = config.cluster_policy.priority_classes
    base: PathKey = ("cluster_policy", "priority_classes")
    if len(classes) > MAX_PRIORITY_CLASSES:
        report.error("HPK302", base + (MAX_PRIORITY_CLASSES,), f"{len(classes)} priority classes are defined",
                     f"at most {MAX_PRIORITY_CLASSES}")
    for i, cls in enumerate(classes):
        if len(cls.name) > MAX_PRIORITY_CLASS_NAME or not DNS1123_LABEL.fullmatch(cls.name):
            report.error("HPK301", base + (i, "name"), f"priority class name {cls.name!r} is not allowed",
                         f"lower-case letters, digits and inner hyphens, at most {MAX_PRIORITY_CLASS_NAME} characters")
    report_repeats(report, "HPK303", [(base + (i, "name"), c.name) for i, c in enumerate(classes)],
                    "priority class")
    first_with: dict[int, str] = {}
    for i, cls in enumerate(classes):
        if cls.weight in first_with:
            report.warning("HPK304", base + (i, "weight"),
                           f"'{cls.name}' has the same weight {cls.weight} as '{first_with[cls.weight]}'",
                           "give each class its own weight so their order is defined")
        else:
            first_with[cls.weight] = cls.name
    if config.cluster_policy.require_priority_class and not classes:
        report.error("HPK320", ("cluster_policy", "require_priority_class"),
                     "require_priority_class would refuse every workload: the cluster policy has no priority classes",
                     "define priority_classes, or set require_priority_class: false")
    version = version_tuple(config.task_governance.addon_version)
    if version < TOPOLOGY_ADDON_VERSION:
        report.warning("HPK305", ("task_governance", "addon_version"),
                       f"add-on {config.task_governance.addon_version} has no topology-aware scheduling",
                       "use v1.2.2-eksbuild.1 or later (the kit's default is the current version)")
    if version[:2] == (1, 3):
        report.warning("HPK306", ("task_governance", "addon_version"),
                       f"add-on {config.task_governance.addon_version} cannot be updated in place to v1.5 or later",
                       "install v1.4 or later now, or plan to delete and recreate the add-on (README: upgrading)")


def check_governance_types(config: KitConfig, report: Reporter) -> None:
    """The recorded type per governance resource, against what CloudFormation offers in the region
    (cfn-lint's provider data). Changing a recorded type of a deployed environment cannot be seen
    offline; CloudFormation refuses it (a new type under the same logical id)."""
    if region_problem(config.region) is not None:
        return  # HPK110 names the region; every type would be "not offered" there too
    for key, (_, cfn_type) in GOVERNANCE_TYPES.items():
        path: PathKey = ("task_governance", "cloudformation_types", key)
        choice, offered = recorded_type(config, key), region_offers(config, key)
        if choice == "native" and not offered:
            report.error("HPK310", path, f"{cfn_type} is not a CloudFormation type in {config.region}",
                         f"use {key}: api (a custom resource calling the SageMaker API)")
        elif choice == "api" and offered:
            report.warning("HPK311", path,
                           f"{config.region} offers {cfn_type}, but this environment records api",
                           f"not deployed yet: record {key}: native; already deployed: keep the type its stacks "
                           "were deployed with, whatever this file now says (CloudFormation refuses a type change "
                           "under the same logical id; `hyperpod-kit plan --against-account` shows the deployed "
                           "type); to move, see README 'Things to know before editing'")
    missing = [key for key in GOVERNANCE_TYPES if recorded_type(config, key) is None]
    if missing:
        # An error, not a default: a type derived at synth flips when a cfn-lint upgrade changes the region
        # data, and CloudFormation refuses a new type under the policy's and quotas' logical ids.
        whole = ", ".join(f"{key}: {recorded_type(config, key) or derived_type(config, key)}"
                          for key in GOVERNANCE_TYPES)
        report.error("HPK312", ("task_governance", "cloudformation_types"),
                     f"{' and '.join(missing)} not recorded: the stacks would take the type from the installed "
                     "cfn-lint's region data, which an upgrade may change under the deployed policy and quotas",
                     f"write under task_governance: `cloudformation_types: {{{whole}}}`, what {config.region} "
                     "offers today; for an environment already deployed, the types its stacks have - "
                     "`hyperpod-kit plan --against-account` shows any other as a type change that will fail")


def check_observability(config: KitConfig, report: Reporter) -> None:
    obs = config.observability
    if obs.enabled and obs.kueue_metrics and obs.addon_version and version_tuple(obs.addon_version) < (2, 4, 0):
        report.error("HPK307", ("observability", "addon_version"),
                     f"amazon-cloudwatch-observability {obs.addon_version} cannot collect Kueue metrics",
                     "use v2.4.0-eksbuild.1 or later, or set kueue_metrics: false")
