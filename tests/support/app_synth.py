"""The kit's CDK app built in-process with cdk.json's feature flags, and its templates."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, cast

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
    return GovernanceStack(App(), "Governance", config=config, eks_cluster_name="eks",
                           hyperpod_cluster_arn=f"arn:aws:sagemaker:{config.region}:{config.account}:cluster/abcdef123456",
                           installer_service_token=f"arn:aws:lambda:{config.region}:{config.account}:function:i",
                           env=Environment(account=config.account, region=config.region))


def governance_template(config: KitConfig) -> Template:
    """The governance stack of a config, as the app builds it, with stand-ins for the cluster stack's outputs."""
    return Template.from_stack(_governance_stack(config))


def governance_manifests(config: KitConfig, name: str) -> list[dict[str, Any]]:
    """The objects of the governance stack's manifest set `name` as the installer reads them: inline, or from
    the S3 asset the resource names (read from the cloud assembly, its SHA-256 checked)."""
    stack = _governance_stack(config)
    assembly = Path(cast(App, stack.node.root).synth().directory)
    (resource,) = Template.from_stack(stack).find_resources(
        "Custom::KubernetesManifests", {"Properties": {"Name": name}}).values()
    properties = resource["Properties"]
    if "Manifests" in properties:
        return json.loads(properties["Manifests"])
    carried = properties["ManifestsObject"]
    content = (assembly / f"asset.{carried['Key']}").read_bytes()
    assert hashlib.sha256(content).hexdigest() == carried["Sha256"], "the asset is not the content the resource names"
    return json.loads(content)
