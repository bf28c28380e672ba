"""Which kinds of capacity an environment has - a HyperPod cluster (with EKS and its network), AWS Batch
queues for SageMaker Training jobs, or both - and the findings about that choice itself.

A Batch-only environment deploys no VPC, EKS, HyperPod or task governance, so settings of those sections
would be silently ignored there: HPK720 names each one that is not left at its default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cdk_app.config.model import KitConfig

if TYPE_CHECKING:
    from cdk_app.validator.reporter import Reporter

# Top-level keys that configure the HyperPod cluster or what runs on it (EKS, network, task governance,
# HyperPod teams, Container Insights). Batch teams live under batch.teams.
HYPERPOD_ONLY = ("availability_zone_ids", "network", "eks", "task_governance", "cluster_policy", "teams",
                 "shared_pool", "observability", "storage")


def depends_on_kinds(code: str, path: str) -> bool:
    """A finding of check_kinds, whose verdict depends on whether hyperpod or batch is present: meaningless
    for a config checked with a broken hyperpod or batch section left out (cdk_app.validator.report)."""
    return code in ("HPK719", "HPK720") or (code in ("HPK011", "HPK013") and path == "availability_zone_ids")


def has_cluster(config: KitConfig) -> bool:
    """The environment has a HyperPod cluster whose rules can run: hyperpod and the zones it needs."""
    return config.hyperpod is not None and bool(config.availability_zone_ids)


def check_kinds(config: KitConfig, report: Reporter) -> None:
    if config.hyperpod is None and config.batch is None:
        report.error("HPK719", (), "the environment has neither a hyperpod nor a batch section, so it deploys nothing",
                     "add hyperpod: (a HyperPod cluster on EKS), batch: (AWS Batch queues for SageMaker Training "
                     "jobs), or both (README: Teams on AWS Batch)")
        return
    if config.hyperpod is not None:
        if "availability_zone_ids" in config.model_fields_set and not config.availability_zone_ids:
            report.error("HPK013", ("availability_zone_ids",), "0 items has too few items",
                         "allowed: at least 1 (the HyperPod cluster, EKS and their network need availability zones; "
                         "a Batch-only environment lists none)")
        elif not config.availability_zone_ids:
            report.error("HPK011", ("availability_zone_ids",),
                         "required key 'availability_zone_ids' is missing: the HyperPod cluster, EKS and their "
                         "network need availability zones",
                         "add `availability_zone_ids: [<zone id>, <zone id>]` (ids such as use1-az4, not names)")
        return
    defaults = KitConfig.model_fields
    for key in HYPERPOD_ONLY:
        if getattr(config, key) != defaults[key].get_default(call_default_factory=True):
            batch_teams = " (Batch teams and their shares go under batch.teams)" if key in ("teams", "shared_pool") else ""
            report.error("HPK720", (key,),
                         f"{key} configures the HyperPod cluster, EKS or their network, but this environment has "
                         f"no hyperpod section (Batch only): it would be ignored{batch_teams}",
                         f"remove {key}, or add a hyperpod section")
