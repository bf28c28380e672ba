"""The kit's CDK app built in-process with cdk.json's feature flags, and its templates."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from aws_cdk import App, Environment, Stack
from aws_cdk.assertions import Template

from cdk_app.config.loader import load_config
from cdk_app.config.model import KitConfig
from cdk_app.stacks.app_builder import build_app
from cdk_app.stacks.governance_stack import GovernanceStack
from support.paths import ROOT

# cdk.json's feature flags plus what the CLI adds to every synth (construct paths and asset metadata), so an
# app built here renders exactly the templates of the shared CLI synths it is compared with.
CONTEXT = {**json.loads((ROOT / "cdk.json").read_text())["context"], "aws:cdk:enable-path-metadata": True,
           "aws:cdk:enable-asset-metadata": True}


def build(config_path: Path, outdir: Path, teardown: bool = False) -> App:
    app = App(context=CONTEXT, outdir=str(outdir))
    build_app(app, load_config(config_path).config, teardown=teardown)
    return app


def templates(app: App) -> dict[str, Template]:
    return {stack.stack_name: Template.from_stack(stack) for stack in app.node.children if isinstance(stack, Stack)}



def _governance_stack(config: KitConfig) -> GovernanceStack:
    """The governance stack of a config, as the app builds it, with stand-ins for the cluster stack's outputs."""
    return GovernanceStack(App(), "Governance", config=config, eks_cluster_name="eks",
                           hyperpod_cluster_arn=f"arn:aws:sagemaker:{config.region}:{config.account}:cluster/abcdef123456",
                           installer_service_token=f"arn:aws:lambda:{config.region}:{config.account}:function:i",
                           env=Environment(account=config.account, region=config.region))


def governance_template(config: KitConfig) -> Template:
    return Template.from_stack(_governance_stack(config))


def guardrail_objects(config: KitConfig) -> list[dict]:
    """The guardrails as the installer reads them: the asset file the Guardrails resource names, staged in the cloud
    assembly, checked against the SHA-256 the resource carries."""
    stack = _governance_stack(config)
    template = Template.from_stack(stack)  # synthesizes: the asset is staged in the app's output folder
    [resource] = template.find_resources("Custom::KubernetesManifests", {"Properties": {"Name": "guardrails"}}).values()
    asset = stack.node.find_child("Guardrails").asset
    content = (Path(stack.node.root.outdir) / asset.asset_path).read_bytes()
    assert hashlib.sha256(content).hexdigest() == resource["Properties"]["ManifestsObject"]["Sha256"]
    return json.loads(content)
