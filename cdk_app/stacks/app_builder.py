"""Turn a validated config into the CDK app's stacks. app.py is the only caller that reads context."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import App, Environment, Tags, Validations
from cdk_nag import AwsSolutionsChecks

from cdk_app.config.model import KitConfig
from cdk_app.stacks.batch_stack import BatchStack
from cdk_app.stacks.cluster_stack import ClusterStack
from cdk_app.stacks.governance_stack import GovernanceStack
from cdk_app.stacks.layout import (
    BATCH,
    CLUSTER,
    GOVERNANCE,
    NETWORK,
    STORAGE,
    TeamLayout,
    stack_description,
    stack_name,
    stack_suffixes,
    team_layout,
)
from cdk_app.stacks.network_stack import NetworkStack
from cdk_app.stacks.storage_stack import StorageStack
from cdk_app.stacks.team_stack import ClusterRefs, TeamStack

LIFECYCLE_SCRIPTS_DIR = Path(__file__).resolve().parents[2] / "lifecycle_scripts"


def build_app(app: App, config: KitConfig, teardown: bool = False) -> None:
    """Add the environment's stacks to `app`, checked by cdk-nag's AwsSolutions pack at synth: a finding
    nobody acknowledged (with a reason, in the construct that causes it) fails the synth. Which stacks exist
    is the stack layout's to say (cdk_app/stacks/layout.py) (the validator checks the same list against CloudFormation's limits).
    teardown: the network stack's delete removes its network instead of keeping it (the last steps of
    `hyperpod-kit teardown`, once no cluster uses it)."""
    env = Environment(account=config.account, region=config.region)
    layout = team_layout(config)
    suffixes = stack_suffixes(config, layout)
    if NETWORK in suffixes:
        _hyperpod_stacks(app, config, env, layout, teardown)
    if BATCH in suffixes:
        # Termination protection too: deleting a job queue ends the queued and running training jobs in it.
        BatchStack(app, stack_name(config, BATCH), config=config, env=env, termination_protection=True,
                   description=stack_description(config, BATCH))
    Tags.of(app).add("hyperpod-kit:environment", config.environment)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))


def _hyperpod_stacks(app: App, config: KitConfig, env: Environment, layout: TeamLayout, teardown: bool) -> None:
    """Network, cluster (EKS and HyperPod), governance and the team stacks."""
    # Termination protection on the stateful stacks: `cdk destroy` and a console delete are refused until an
    # admin turns it off on purpose. The governance stack stays deletable (its add-on is preserved on delete).
    network = NetworkStack(app, stack_name(config, NETWORK), config=config, teardown=teardown, env=env,
                           termination_protection=True,
                           description=stack_description(config, NETWORK))
    # The cluster stack references the network's outputs, which makes it deploy after the network.
    cluster = ClusterStack(app, stack_name(config, CLUSTER), config=config, network=network.network,
                           scripts_dir=str(LIFECYCLE_SCRIPTS_DIR), env=env, termination_protection=True,
                           description=stack_description(config, CLUSTER))
    refs = ClusterRefs(cluster.eks.cluster_name, cluster.hyperpod.cluster_arn, cluster.installer_service_token)
    if config.storage is not None:
        # Stateful (the file systems are retained anyway): protected like the network and cluster stacks.
        StorageStack(app, stack_name(config, STORAGE), config=config, network=network.network,
                     eks_cluster_name=refs.eks_cluster_name, installer_service_token=refs.installer_service_token,
                     env=env, termination_protection=True,
                     description=stack_description(config, STORAGE))
    governance = GovernanceStack(
        app, stack_name(config, GOVERNANCE), config=config, eks_cluster_name=refs.eks_cluster_name,
        hyperpod_cluster_arn=refs.hyperpod_cluster_arn, installer_service_token=refs.installer_service_token,
        teams=layout.stacks[GOVERNANCE], env=env,
        description=stack_description(config, GOVERNANCE, layout))
    # Every team stack of the layout exists, with or without teams (README: Many teams).
    for name in layout.team_stacks:
        teams = TeamStack(app, stack_name(config, name), config=config, teams=layout.stacks[name], refs=refs, env=env,
                          description=stack_description(config, name, layout))
        teams.add_stack_dependency(governance, "quotas follow the cluster policy, RBAC the guardrails")
