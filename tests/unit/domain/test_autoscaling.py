"""The NodePool's limits: what the quotas hold on the autoscaled types beyond the fixed groups, in whole nodes, capped
by the autoscaled groups' max_count; and the kit's NodePool against Karpenter's own NodePool CRD (v1.0.0, the first v1
API HyperPod's docs require, and v1.14.1), applied strictly as the API server applies it."""

from __future__ import annotations

import copy

import jsonschema
import pytest
import yaml
from support.crd_schemas import DATA, check_metadata, strict

from cdk_app.config.loader import load_config
from cdk_app.domain.autoscaling import (
    MAX_PLACEMENTS,
    autoscaled_types,
    group_ceiling,
    node_pool_limits,
    quota_demand,
)
from cdk_app.domain.instance_types import CATALOGUE
from cdk_app.kubernetes.autoscaling import autoscaling_manifests

G5, G5_24, M5 = "ml.g5.12xlarge", "ml.g5.24xlarge", "ml.m5.2xlarge"
KARPENTER_TAGS = ("v1.0.0", "v1.14.1")


def config(write_config, groups, quotas, **hyperpod):
    """A config with the given groups and one team per quota list."""
    text = yaml.safe_dump({
        "environment": "t", "account": "111122223333", "region": "us-east-1",
        "availability_zone_ids": ["use1-az4", "use1-az6"],
        "hyperpod": {"autoscaling": True, "instance_groups": groups, **hyperpod},
        "teams": [{"name": f"team{i}", "quota": quota} for i, quota in enumerate(quotas)]})
    return load_config(write_config(text)).config


def auto(name, itype, max_count, *fallbacks):
    return {"name": name, "instance_type": itype, "count": 0, "max_count": max_count,
            **({"fallback_instance_types": list(fallbacks)} if fallbacks else {})}


def fixed(name, itype, count):
    return {"name": name, "instance_type": itype, "count": count}


def mib(gib):
    return f"{gib * 1024}Mi"


def test_limits_are_the_quotas_beyond_the_fixed_groups(write_config):
    # 5 g5 reserved, 2 of them fixed: the NodePool may launch the other 3, not the 8 max_count allows.
    c = config(write_config, [fixed("f", G5, 2), auto("a", G5, 8)], [[{"instance_type": G5, "count": 5}]])
    spec = CATALOGUE[G5]
    assert node_pool_limits(c) == {"memory": mib(3 * int(spec.memory_gib)), "nvidia.com/gpu": str(3 * spec.accelerators)}


def test_limits_never_exceed_what_max_count_allows(write_config):
    c = config(write_config, [auto("a", G5, 2)], [[{"instance_type": G5, "count": 5}]])
    spec = CATALOGUE[G5]
    assert node_pool_limits(c) == {"memory": mib(2 * int(spec.memory_gib)), "nvidia.com/gpu": str(2 * spec.accelerators)}


def test_no_quota_on_the_autoscaled_types_lets_no_node_in(write_config):
    c = config(write_config, [fixed("f", M5, 2), auto("a", G5, 4)], [[{"instance_type": M5, "count": 2}]])
    assert node_pool_limits(c) == {"memory": "0Mi", "nvidia.com/gpu": "0"}


def test_a_partial_quota_needs_a_whole_node_with_its_gpus(write_config):
    # 6 vCPU of a g5 and no GPU (SageMaker fills no accelerators): Karpenter still launches a whole node to hold it.
    c = config(write_config, [auto("a", G5, 4)], [[{"instance_type": G5, "vcpu": 6}]])
    spec = CATALOGUE[G5]
    assert node_pool_limits(c) == {"memory": mib(int(spec.memory_gib)), "nvidia.com/gpu": str(spec.accelerators)}


def test_a_flexible_group_is_capped_by_its_largest_type(write_config):
    c = config(write_config, [auto("a", G5, 3, G5_24)],
               [[{"instance_type": G5, "count": 1}, {"instance_type": G5_24, "count": 1}]])
    assert autoscaled_types(c) == (G5, G5_24)
    largest = max(CATALOGUE[G5].memory_gib, CATALOGUE[G5_24].memory_gib)
    assert group_ceiling(c)["memory"] == 3 * largest
    demand = CATALOGUE[G5].memory_gib + CATALOGUE[G5_24].memory_gib
    assert quota_demand(c)["memory"] == demand
    assert node_pool_limits(c)["memory"] == mib(int(demand))


def flexible(name, itype, count, *fallbacks):
    return {"name": name, "instance_type": itype, "count": count, "fallback_instance_types": list(fallbacks)}


def test_a_fixed_flexible_group_counts_once_as_the_type_that_leaves_most_to_the_node_pool(write_config):
    # Quotas of 2 x g5.12xlarge and 2 x g5.24xlarge; the fixed flexible group holds 2 instances, of either type (EC2
    # figures: g5.12xlarge 4 GPUs, 192 GiB; g5.24xlarge 4 GPUs, 384 GiB). Counted under both types it covered all
    # four and the NodePool got limits of 0. Came up as g5.12xlarge, 2 g5.24xlarge are left to autoscale (768 GiB);
    # as g5.24xlarge, 2 g5.12xlarge (384 GiB): the limit holds the larger, 8 GPUs either way.
    c = config(write_config, [flexible("f", G5, 2, G5_24), auto("a", G5, 8, G5_24)],
               [[{"instance_type": G5, "count": 2}, {"instance_type": G5_24, "count": 2}]])
    assert node_pool_limits(c) == {"memory": mib(2 * 384), "nvidia.com/gpu": "8"}


def test_a_fixed_flexible_group_that_may_come_up_as_another_type_covers_no_quota_for_sure(write_config):
    # Only g5.12xlarge has quota (4): the flexible group may come up as g5.24xlarge, leaving all 4 to autoscaling.
    c = config(write_config, [flexible("f", G5, 2, G5_24), auto("a", G5, 8)], [[{"instance_type": G5, "count": 4}]])
    assert node_pool_limits(c) == {"memory": mib(4 * 192), "nvidia.com/gpu": "16"}


def test_past_the_cases_it_weighs_the_flexible_groups_count_as_giving_none(write_config):
    # 11 fixed flexible groups of two autoscaled types: 2**11 cases, more than quota_demand weighs.
    groups = [flexible(f"f{i}", G5, 1, G5_24) for i in range(11)] + [auto("a", G5, 40, G5_24)]
    c = config(write_config, groups, [[{"instance_type": G5, "count": 11}]])
    assert 2 ** 11 > MAX_PLACEMENTS
    assert node_pool_limits(c) == {"memory": mib(11 * 192), "nvidia.com/gpu": str(11 * 4)}


def test_a_cpu_group_has_no_accelerator_limit(write_config):
    c = config(write_config, [auto("a", M5, 4)], [[{"instance_type": M5, "count": 1}]])
    assert node_pool_limits(c) == {"memory": mib(int(CATALOGUE[M5].memory_gib))}


def test_no_objects_without_autoscaling_or_without_an_autoscaled_group(write_config):
    c = config(write_config, [fixed("f", G5, 2)], [[{"instance_type": G5, "count": 1}]])
    assert autoscaling_manifests(c) == ()


def _schema(tag):
    crd = yaml.safe_load((DATA / f"karpenter.sh_nodepools-{tag}.yaml").read_text())
    return strict(next(v for v in crd["spec"]["versions"] if v["name"] == "v1")["schema"]["openAPIV3Schema"])


@pytest.fixture(scope="module", params=KARPENTER_TAGS)
def node_pool_schema(request):
    return _schema(request.param)


def test_the_node_pool_is_a_valid_karpenter_v1_node_pool(write_config, node_pool_schema):
    c = config(write_config, [fixed("f", G5, 1), auto("a", G5, 4, G5_24), auto("c", M5, 2)],
               [[{"instance_type": G5, "count": 3}, {"instance_type": M5, "count": 1}]])
    node_class, node_pool = autoscaling_manifests(c)
    assert node_class["spec"] == {"instanceGroups": ["a", "c"]}
    jsonschema.validate(node_pool, node_pool_schema)
    check_metadata(node_pool, "1.33")
    assert node_pool["spec"]["template"]["spec"]["requirements"] == [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [G5, G5_24, M5]}]


def test_the_schema_check_refuses_what_karpenter_refuses(node_pool_schema):
    # The strict schema is not a formality: a policy Karpenter does not know and an unknown field both fail.
    from hyperpod_constructs.helm_release_handler.manifest_policy import kit_node_pool
    pool = kit_node_pool([G5], {"memory": "1Mi"})
    bad = copy.deepcopy(pool)
    bad["spec"]["disruption"]["consolidationPolicy"] = "Never"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, node_pool_schema)
    bad = copy.deepcopy(pool)
    bad["spec"]["template"]["spec"]["nodeClass"] = {}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, node_pool_schema)
