"""What a delete of each stack keeps, pinned on the synthesized app, and the names `hyperpod-kit teardown`
prints held to it: the network stays whole under running clusters unless released with -c teardown=<env>."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from support.app_synth import build, templates
from support.paths import ROOT

from cdk_app.cli.teardown import EKS_NAME_OUTPUT, SECURITY_GROUP_OUTPUT, render, runbook
from cdk_app.config.loader import load_config

ENVIRONMENTS = ("dev", "prod")
# Nothing the nodes use: the flow log and its delivery role go with the stack; the flow log group is kept.
NOT_KEPT = {"AWS::EC2::FlowLog", "AWS::IAM::Role", "AWS::IAM::Policy"}
# Replaced, and kept on replacement, only what holds state (tests/stacks/test_app.py); the rest is replaced as usual.
STATEFUL = {"AWS::EC2::VPC", "AWS::EC2::Subnet", "AWS::EC2::EIP"}


@pytest.fixture(scope="module", params=ENVIRONMENTS)
def synths(request, tmp_path_factory):
    env = request.param
    config = ROOT / "config" / f"{env}.yaml"
    kept = templates(build(config, tmp_path_factory.mktemp(f"{env}-kept")))
    released = templates(build(config, tmp_path_factory.mktemp(f"{env}-released"), teardown=True))
    return env, {name: t.to_json() for name, t in kept.items()}, {name: t.to_json() for name, t in released.items()}


def test_a_network_stack_delete_keeps_everything_the_clusters_use(synths):
    env, kept, _ = synths
    for logical_id, resource in kept[f"HyperPod-{env}-network"]["Resources"].items():
        if resource["Type"] in NOT_KEPT:
            assert "DeletionPolicy" not in resource, logical_id
        elif resource["Type"] == "AWS::Logs::LogGroup":
            assert resource["DeletionPolicy"] == "Retain", logical_id
        else:
            assert resource["DeletionPolicy"] == "RetainExceptOnCreate", logical_id
            replaced = "Retain" if resource["Type"] in STATEFUL else "Delete"
            assert resource.get("UpdateReplacePolicy") == replaced, logical_id


def test_the_teardown_build_releases_the_network_and_changes_nothing_else(synths):
    env, kept, released = synths
    name = f"HyperPod-{env}-network"
    policies = ("DeletionPolicy", "UpdateReplacePolicy")
    for logical_id, resource in released[name]["Resources"].items():
        if resource["Type"] != "AWS::Logs::LogGroup":
            assert not set(policies) & set(resource), logical_id
    # Same logical ids and properties: the teardown deploy is an in-place change of the policies only.
    strip = {lid: {k: v for k, v in r.items() if k not in policies} for lid, r in kept[name]["Resources"].items()}
    assert strip == {lid: {k: v for k, v in r.items() if k not in policies}
                     for lid, r in released[name]["Resources"].items()}
    assert {n: t for n, t in kept.items() if n != name} == {n: t for n, t in released.items() if n != name}


def test_the_runbook_names_the_synthesized_stacks_outputs_and_resources(synths):
    env, kept, _ = synths
    path = ROOT / "config" / f"{env}.yaml"
    config = load_config(path).config
    text = render(config, runbook(config, path))
    assert set(re.findall(r"HyperPod-[a-z0-9-]+", text)) == set(kept)
    assert EKS_NAME_OUTPUT in kept[f"HyperPod-{env}-cluster"]["Outputs"]
    assert SECURITY_GROUP_OUTPUT in kept[f"HyperPod-{env}-network"]["Outputs"]
    # The recorded key and flow log group: one of the type in its stack, or the lookup would print several.
    for stack, kind in (("cluster", "AWS::KMS::Key"), ("network", "AWS::Logs::LogGroup")):
        assert f"--stack-name HyperPod-{env}-{stack} " in text and f"ResourceType=='{kind}'" in text
        assert [r["Type"] for r in kept[f"HyperPod-{env}-{stack}"]["Resources"].values()].count(kind) == 1
    [cluster] = [r for r in kept[f"HyperPod-{env}-cluster"]["Resources"].values() if r["Type"] == "AWS::SageMaker::Cluster"]
    assert f"--cluster-name {cluster['Properties']['ClusterName']} " in text


def test_app_refuses_a_teardown_of_another_environment(tmp_path):
    env = {**os.environ, "CDK_CONTEXT_JSON": json.dumps({"env": "dev", "teardown": "prod"}), "CDK_OUTDIR": str(tmp_path)}
    result = subprocess.run([sys.executable, "app.py"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "-c teardown=prod must name the environment being built" in result.stderr
    assert not list(tmp_path.glob("*.template.json"))
