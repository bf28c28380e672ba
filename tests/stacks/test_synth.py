"""The real CDK CLI synthesizes every environment with no credentials and no network; cfn-lint passes
the templates for each environment's region, and the templates match their reviewed snapshots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.paths import ROOT
from support.snapshots import normalised
from support.synthesis import cfn_lint, cli_synth, env_assembly
from syrupy.extensions.json import JSONSnapshotExtension

from hyperpod_constructs.python_handler_provider import FUNCTION_TAG

ENVIRONMENTS = {"dev": "us-east-1", "prod": "us-west-2"}


@pytest.fixture(scope="session")
def assemblies(tmp_path_factory) -> dict[str, Path]:
    """The CLI's offline synth of each environment, shared with test_app and test_plan (tests/support/synthesis.py)."""
    return {name: env_assembly(tmp_path_factory, name) for name in ENVIRONMENTS}


@pytest.mark.parametrize("env_name", ENVIRONMENTS)
def test_synth_offline_writes_the_cluster_stack(assemblies, env_name):
    template = json.loads((assemblies[env_name] / f"HyperPod-{env_name}-cluster.template.json").read_text())
    types = {r["Type"] for r in template["Resources"].values()}
    assert {"AWS::EKS::Cluster", "AWS::SageMaker::Cluster", "Custom::HyperPodHelmRelease", "AWS::S3::Bucket",
            "AWS::KMS::Key", "AWS::EKS::Addon", "AWS::EKS::AccessEntry"} <= types


@pytest.mark.parametrize("env_name", ENVIRONMENTS)
def test_synth_without_credentials_writes_the_network_stack(assemblies, env_name):
    template = json.loads((assemblies[env_name] / f"HyperPod-{env_name}-network.template.json").read_text())
    types = {r["Type"] for r in template["Resources"].values()}
    assert {"AWS::EC2::VPC", "AWS::EC2::Subnet", "AWS::EC2::NatGateway", "AWS::EC2::SecurityGroup"} <= types
    manifest = json.loads((assemblies[env_name] / "manifest.json").read_text())
    stack = manifest["artifacts"][f"HyperPod-{env_name}-network"]
    assert stack["environment"].endswith(f"/{ENVIRONMENTS[env_name]}")


@pytest.mark.parametrize("env_name", ENVIRONMENTS)
def test_cfn_lint_is_clean_for_the_environment_region(assemblies, env_name):
    templates = sorted(str(p) for p in assemblies[env_name].glob("*.template.json"))
    result = cfn_lint(templates, ENVIRONMENTS[env_name])
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("env_name", ENVIRONMENTS)
def test_every_function_in_the_templates_carries_the_kit_function_tag(assemblies, env_name):
    """The kit makes Lambda functions only through PythonHandlerProvider; an SCP naming the tag covers them all."""
    key, value = FUNCTION_TAG
    functions = [(path.name, name, r) for path in assemblies[env_name].glob("*.template.json")
                 for name, r in json.loads(path.read_text())["Resources"].items() if r["Type"] == "AWS::Lambda::Function"]
    assert functions
    assert [(p, n) for p, n, r in functions if {"Key": key, "Value": value} not in r["Properties"].get("Tags", [])] == []


def test_invalid_config_synthesizes_nothing(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text((ROOT / "config/dev.yaml").read_text().replace("count: 3", "count: 4"))
    out = tmp_path / "out"
    result = cli_synth(out, "env=dev", f"config={bad}")
    assert result.returncode != 0
    assert "HPK501" in result.stderr and "nothing synthesized" in result.stderr
    assert "Traceback" not in result.stderr
    assert not list(out.glob("*.template.json"))


@pytest.mark.parametrize("env_name", ENVIRONMENTS)
@pytest.mark.parametrize("stack", ["network", "cluster", "governance"])
def test_template_matches_snapshot(assemblies, env_name, stack, snapshot):
    """Review a change with `pytest tests/stacks/test_synth.py --snapshot-update` and read the diff."""
    path = assemblies[env_name] / f"HyperPod-{env_name}-{stack}.template.json"
    assert normalised(path) == snapshot(extension_class=JSONSnapshotExtension)


def test_storage_template_matches_snapshot(assemblies, snapshot):
    """dev has a storage section (its teams' file systems); prod has none, so no storage stack."""
    assert not (assemblies["prod"] / "HyperPod-prod-storage.template.json").exists()
    path = assemblies["dev"] / "HyperPod-dev-storage.template.json"
    assert normalised(path) == snapshot(extension_class=JSONSnapshotExtension)
