"""The rule catalogue: every rule of the validator, in the order their findings are reported."""

from __future__ import annotations

from cdk_app.config.model import KitConfig
from cdk_app.validator.reporter import Reporter, Rule
from cdk_app.validator.rules.autoscaling import check_autoscaling, check_flexible_groups
from cdk_app.validator.rules.batch import check_batch
from cdk_app.validator.rules.capacity import check_capacity
from cdk_app.validator.rules.chart import check_helm_chart
from cdk_app.validator.rules.environment import check_environment
from cdk_app.validator.rules.governance import check_cluster_policy, check_governance_types, check_observability
from cdk_app.validator.rules.instance_groups import (
    check_instance_groups,
    check_kubernetes_labels,
    check_schedulable_node,
    check_system_instance_group,
    check_threads,
)
from cdk_app.validator.rules.kinds import check_kinds, has_cluster
from cdk_app.validator.rules.names import check_derived_names
from cdk_app.validator.rules.network import check_cidrs, check_eks_endpoint, check_network
from cdk_app.validator.rules.partitions import check_partitions
from cdk_app.validator.rules.principals import check_principals
from cdk_app.validator.rules.region import check_region
from cdk_app.validator.rules.rolling_updates import check_rolling_updates
from cdk_app.validator.rules.stack_limits import check_stack_limits
from cdk_app.validator.rules.storage import check_storage
from cdk_app.validator.rules.teams import check_teams
from cdk_app.validator.rules.zones import check_cluster_zones_recorded, check_zones

# The HyperPod cluster and what runs on it (EKS, network, task governance, HyperPod teams): only when the
# environment has one (cdk_app.validator.rules.kinds); a Batch-only environment skips them.
HYPERPOD_RULES: tuple[Rule, ...] = (
    check_cidrs,
    check_threads,
    check_kubernetes_labels,
    check_environment,
    check_derived_names,
    check_eks_endpoint,
    check_network,
    check_zones,
    check_cluster_zones_recorded,
    check_instance_groups,
    check_flexible_groups,
    check_autoscaling,
    check_schedulable_node,
    check_system_instance_group,
    check_helm_chart,
    check_cluster_policy,
    check_governance_types,
    check_observability,
    check_teams,
    check_capacity,
    check_partitions,
    check_rolling_updates,
    check_storage,
)


def check_hyperpod(config: KitConfig, report: Reporter) -> None:
    if has_cluster(config):
        for rule in HYPERPOD_RULES:
            rule(config, report)


RULES: tuple[Rule, ...] = (
    check_kinds,
    check_region,
    check_principals,
    check_hyperpod,
    check_batch,
    check_stack_limits,
)
