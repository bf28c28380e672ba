"""An environment with HyperPod's managed Karpenter, a flexible group and a Spot group, synthesized by the real CDK CLI
(cdk-nag runs in it): cfn-lint passes its templates, cdk-nag has nothing unacknowledged, and the cluster stack holds
AutoScaling, the cluster role and the kit's HyperpodNodeClass and NodePool, applied after the cluster."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aws_cdk.assertions import Match, Template
from support.paths import ROOT
from support.synthesis import cfn_lint, config_assembly

from cdk_app.config.loader import load_config
from cdk_app.kubernetes.autoscaling import autoscaling_manifests

GROUPS = """    - name: gpu-auto
      instance_type: ml.g5.12xlarge
      fallback_instance_types: [ml.g5.24xlarge]
      count: 0
      max_count: 4
    - name: gpu-spot
      instance_type: ml.g5.12xlarge
      capacity_type: Spot
      count: 2
      min_count: 1
"""


def autoscaling_text() -> str:
    text = (ROOT / "config" / "dev.yaml").read_text()
    text = text.replace("  node_recovery: Automatic\n", "  node_recovery: Automatic\n  autoscaling: true\n", 1)
    return text.replace("        workload: cpu\n", "        workload: cpu\n" + GROUPS, 1)


@pytest.fixture(scope="module")
def assembly(tmp_path_factory) -> Path:
    return config_assembly(tmp_path_factory, autoscaling_text(), name="dev.yaml")


def test_cfn_lint_is_clean(assembly):
    templates = sorted(str(p) for p in assembly.glob("*.template.json"))
    result = cfn_lint(templates, "us-east-1")
    assert result.returncode == 0, result.stdout + result.stderr


def test_cdk_nag_has_nothing_unacknowledged(assembly):
    report = json.loads((assembly / "validation-report.json").read_text())
    assert [(r["pluginName"], r["violations"]) for r in report["pluginReports"] if r["violations"]] == []


def test_the_cluster_stack_turns_karpenter_on_and_applies_the_kits_objects_after_the_cluster(assembly, tmp_path):
    template = Template.from_json(json.loads((assembly / "HyperPod-dev-cluster.template.json").read_text()))
    [(cluster_id, cluster)] = template.find_resources("AWS::SageMaker::Cluster").items()
    properties = cluster["Properties"]
    assert properties["AutoScaling"] == {"AutoScalerType": "Karpenter", "Mode": "Enable"}
    [(role_id, role)] = template.find_resources("AWS::IAM::Role", {"Properties": {"Description": Match.string_like_regexp("Karpenter")}}).items()
    assert properties["ClusterRole"] == {"Fn::GetAtt": [role_id, "Arn"]}
    assert role["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]["Principal"] == {
        "Service": "hyperpod.sagemaker.amazonaws.com"}
    groups = {g["InstanceGroupName"]: g for g in properties["InstanceGroups"]}
    assert groups["gpu-auto"]["InstanceRequirements"] == {"InstanceTypes": ["ml.g5.12xlarge", "ml.g5.24xlarge"]}
    assert groups["gpu-auto"]["InstanceCount"] == 0 and "OnStartDeepHealthChecks" not in groups["gpu-auto"]
    assert groups["gpu-spot"]["CapacityRequirements"] == {"Spot": {}} and groups["gpu-spot"]["MinInstanceCount"] == 1
    [manifests] = template.find_resources("Custom::KubernetesManifests", {"Properties": {"Name": "autoscaling"}}).values()
    assert cluster_id in manifests["DependsOn"]
    path = tmp_path / "dev.yaml"
    path.write_text(autoscaling_text())
    assert json.loads(manifests["Properties"]["Manifests"]) == list(autoscaling_manifests(load_config(path).config))

