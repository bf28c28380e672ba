"""An environment with a partitioned instance group and partition quotas (support.mig_config), synthesized by
the real CDK CLI: cfn-lint passes its templates for the region, the quotas carry AcceleratorPartition and
AbsoluteBorrowLimits, the group carries its nvidia.com/mig.config label, and the chart gets migStrategy mixed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.mig_config import P5, PROFILE, mig_config_text
from support.synthesis import cfn_lint, config_assembly


@pytest.fixture(scope="module")
def assembly(tmp_path_factory) -> Path:
    return config_assembly(tmp_path_factory, mig_config_text())


def _resources(assembly: Path, stack: str) -> dict:
    return json.loads((assembly / f"HyperPod-dev-{stack}.template.json").read_text())["Resources"]


def test_cfn_lint_is_clean(assembly):
    templates = sorted(str(p) for p in assembly.glob("*.template.json"))
    result = cfn_lint(templates, "us-east-1")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_quotas_carry_partitions_and_the_absolute_limit(assembly):
    quotas = {r["Properties"]["ComputeQuotaTarget"]["TeamName"]: r["Properties"]["ComputeQuotaConfig"]
              for r in _resources(assembly, "governance").values() if r["Type"] == "AWS::SageMaker::ComputeQuota"}
    partition = {"InstanceType": P5, "AcceleratorPartition": {"Type": PROFILE, "Count": 30}}
    assert partition in quotas["smith"]["ComputeQuotaResources"]
    assert quotas["smith"]["ResourceSharingConfig"]["AbsoluteBorrowLimits"] == [
        {"InstanceType": P5, "AcceleratorPartition": {"Type": PROFILE, "Count": 2}}]
    assert "AbsoluteBorrowLimits" not in quotas["john"]["ResourceSharingConfig"]


def test_the_group_carries_its_geometry_and_the_chart_the_mig_strategy(assembly):
    cluster = _resources(assembly, "cluster")
    [hyperpod] = [r for r in cluster.values() if r["Type"] == "AWS::SageMaker::Cluster"]
    [group] = [g for g in hyperpod["Properties"]["InstanceGroups"] if g["InstanceGroupName"] == "mig"]
    assert group["KubernetesConfig"]["Labels"] == {"nvidia.com/mig.config": "all-1g.10gb"}
    [release] = [r for r in cluster.values() if r["Type"] == "Custom::HyperPodHelmRelease"]
    values = json.loads(release["Properties"]["Values"])
    assert values["nvidia-device-plugin"]["migStrategy"] == "mixed"
