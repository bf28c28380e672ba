"""The MIG table and placement rule against sources the kit did not write: the API's MIGProfileType enum
(cfn-lint's AWS::SageMaker::ComputeQuota schema, botocore's SageMaker model) and the MIG geometries of the
HyperPod chart's own GPU operator configuration (charts/gpu-operator/config/default-mig-config.yaml of the
pinned chart a00b22d, AWS's file), which the GPU operator's MIG manager applies by the nodes' nvidia.com/mig.config."""

from __future__ import annotations

import tarfile
import typing

import botocore.session
import pytest
import yaml
from support.paths import SUPPORT

from cdk_app.config.model import InstanceGroup, MigProfileType
from cdk_app.domain.instance_types import CATALOGUE
from cdk_app.domain.mig_profiles import (
    GPU_PROFILES,
    INSTANCE_GPUS,
    geometry_problem,
    group_partitions,
    most_per_gpu,
    per_gpu,
    profiles_of,
)
from cdk_app.domain.resource_schemas import resource_schema

SCHEMA_ENUM = resource_schema("AWS::SageMaker::ComputeQuota")["definitions"]["AcceleratorPartitionConfig"][
    "properties"]["Type"]["enum"]
BOTOCORE_ENUM = botocore.session.get_session().get_service_model("sagemaker").shape_for("MIGProfileType").enum
CHART = SUPPORT / "data" / "hyperpod-chart" / "HyperPodHelmChart-a00b22d.tar.gz"


def _chart_geometries() -> dict[str, dict[str, int]]:
    """Geometry name -> {mig-<profile>: partitions per GPU}, for every MIG-enabled config of the chart."""
    with tarfile.open(CHART) as tar:
        member = tar.extractfile("HyperPodHelmChart/charts/gpu-operator/config/default-mig-config.yaml")
        configs = yaml.safe_load(member.read())["mig-configs"]
    geometries = {}
    for name, [device] in configs.items():
        assert device["devices"] == "all"  # every GPU of the node takes the geometry (group_partitions' reading)
        if device["mig-enabled"]:
            geometries[name] = {f"mig-{p}": n for p, n in device["mig-devices"].items()}
    return geometries


GEOMETRIES = _chart_geometries()


def test_the_config_takes_exactly_the_apis_mig_profiles():
    assert list(typing.get_args(MigProfileType)) == SCHEMA_ENUM
    assert set(SCHEMA_ENUM) == set(BOTOCORE_ENUM)


def test_every_profile_of_the_table_is_one_the_api_takes_and_types_are_hyperpod_gpu_types():
    named = {p.name for profiles in GPU_PROFILES.values() for p in profiles}
    assert named <= set(SCHEMA_ENUM)
    for itype, model in INSTANCE_GPUS.items():
        spec = CATALOGUE[itype]
        assert spec.accelerator_kind == "nvidia-gpu" and spec.accelerator_model == model


def test_every_chart_geometry_of_a_partitioned_gpu_is_one_the_rule_takes_with_its_counts():
    """42 of the chart's geometries use profiles of the GPUs the kit partitions: each is valid on a type of that
    GPU and gives exactly the chart's partitions per GPU (all-<profile> as many as fit)."""
    matched = 0
    for name, devices in GEOMETRIES.items():
        types = [t for t in INSTANCE_GPUS if set(devices) <= set(profiles_of(t))]
        if not types:
            # P6-B300 geometries (1g.34gb ...): profiles outside the API's enum, so no quota can name them.
            assert not set(devices) & set(SCHEMA_ENUM), name
            continue
        matched += 1
        valid = [t for t in types if geometry_problem(t, name) is None]
        assert valid, name  # the GPU it was made for takes it ...
        for itype in valid:
            assert per_gpu(itype, name) == devices, (itype, name)  # ... with the chart's partitions per GPU
        for itype in set(types) - set(valid):
            # ... and a GPU whose profile of the same name is larger cannot: all-1g.10gb is 7 one-slice 1g of an
            # A100 80GB or H100, but an A100 40GB's 1g.10gb takes two memory slices (at most 4).
            assert "GPU cannot hold" in geometry_problem(itype, name), (itype, name)
    assert matched == 42


def test_most_per_gpu_is_the_charts_all_count_for_every_profile():
    alls = {next(iter(d)): n for name, d in GEOMETRIES.items() if name.startswith("all-") for n in d.values()}
    for name, count in alls.items():
        made_for = [most_per_gpu(p) for profiles in GPU_PROFILES.values() for p in profiles if p.name == name]
        assert not made_for or max(made_for) == count, name  # B300 names are in no table
    # NVIDIA's counts per GPU by the profile's compute and memory slices: 7, 4, 3, 2, 1, 1.
    assert [most_per_gpu(p) for p in GPU_PROFILES["H100"]] == [7, 4, 3, 2, 1, 1]


@pytest.mark.parametrize("name, why", [
    ("mixed-2-4g.40gb", "one H100 GPU cannot hold 2 x 4g.40gb"),  # a 4g starts at slice 0 only
    ("mixed-2-3g.40gb-1-1g.10gb", "GPU cannot hold"),  # two 3g take all 8 memory slices
    ("mixed-4-2g.20gb", "GPU cannot hold"),  # 8 compute slices of 7
    ("all-1g.18gb", "has no MIG profile 1g.18gb"),  # an H200 profile on an H100
    ("all-1g.10gb-x", "is not a MIG geometry name"),
    ("mixed-1-3g.40gb-1-3g.40gb", "is not a MIG geometry name"),  # a profile named twice
    ("single", "is not a MIG geometry name"),
])
def test_a_geometry_the_gpu_cannot_take_is_refused_with_why(name, why):
    assert why in geometry_problem("ml.p5.48xlarge", name)


def test_types_without_mig_and_all_disabled():
    assert "has no GPU that HyperPod partitions" in geometry_problem("ml.g5.48xlarge", "all-1g.10gb")
    assert geometry_problem("ml.p5.48xlarge", "all-disabled") is None
    assert per_gpu("ml.p5.48xlarge", "all-disabled") == {}


def test_a_group_gives_its_count_times_gpus_times_the_geometry():
    group = InstanceGroup(name="mig", instance_type="ml.p5.48xlarge", count=3,
                          labels={"nvidia.com/mig.config": "mixed-1-1g.10gb-1-2g.20gb-1-4g.40gb"})
    assert group_partitions(group, 8, group.count) == {"mig-1g.10gb": 24, "mig-2g.20gb": 24, "mig-4g.40gb": 24}
    broken = group.model_copy(update={"labels": {"nvidia.com/mig.config": "mixed-2-4g.40gb"}})
    assert group_partitions(broken, 8, broken.count) == {}
