"""Turn a validated config into the CDK app's stacks. app.py is the only caller that reads context."""

from __future__ import annotations

from aws_cdk import App, Environment, Tags

from cdk_app.config.model import KitConfig
from cdk_app.stacks.network_stack import NetworkStack


def stack_prefix(config: KitConfig) -> str:
    return f"HyperPod-{config.environment}"


def build_app(app: App, config: KitConfig) -> None:
    """Add the environment's stacks to `app`."""
    env = Environment(account=config.account, region=config.region)
    prefix = stack_prefix(config)
    NetworkStack(app, f"{prefix}-network", config=config, env=env,
                 description=f"hyperpod-kit {config.environment}: VPC, subnets and node security group")
    Tags.of(app).add("hyperpod-kit:environment", config.environment)
