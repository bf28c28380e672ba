"""The NodePools' limits: one pool per autoscaled instance type, each limited to what Kueue may admit on its type
(reach.admissible: the allocations and the unallocated capacity the borrowers may take) beyond the fixed On-Demand
single-type groups, in whole nodes, capped by the autoscaled groups' max_count; and the kit's NodePools against
Karpenter's own NodePool CRD (v1.0.0, the first v1 API HyperPod's docs require, and v1.14.1), applied strictly as
the API server applies it. The round-3 red team's configs (tests/support/adversarial/issue31/r3_*.yaml) are held to
validate's reach, `job` and `simulate` - the same rule, run as the admin runs it."""

from __future__ import annotations

import copy

import jsonschema
import pytest
import yaml
from support.cli_runner import invoke
from support.crd_schemas import DATA, check_metadata, strict
from support.paths import SUPPORT

from cdk_app.config.loader import load_config
from cdk_app.domain.autoscaling import autoscaled_types, node_ceiling, node_demand, node_pool_limits
from cdk_app.domain.capacity import instances_needed, spot_backing
from cdk_app.domain.instance_types import CATALOGUE
from cdk_app.domain.reach import admissible, allocated, team_reach, unallocated
from cdk_app.kubernetes.autoscaling import autoscaling_manifests
from cdk_app.validator.report import check_file

G5, G5_24, M5 = "ml.g5.12xlarge", "ml.g5.24xlarge", "ml.m5.2xlarge"
KARPENTER_TAGS = ("v1.0.0", "v1.14.1")
RED_TEAM = SUPPORT / "adversarial" / "issue31"  # round 3: r3_*.yaml, as the red team wrote them


def config(write_config, groups, quotas, sharing="Disabled", **hyperpod):
    """A config with the given groups and one team per quota list; idle sharing Disabled unless asked, so the
    limits are the quotas' alone."""
    text = yaml.safe_dump({
        "environment": "t", "account": "111122223333", "region": "us-east-1",
        "availability_zone_ids": ["use1-az4", "use1-az6"],
        "hyperpod": {"autoscaling": True, "instance_groups": groups, **hyperpod},
        "cluster_policy": {"idle_resource_sharing": sharing},
        "teams": [{"name": f"team{i}", "quota": quota} for i, quota in enumerate(quotas)]})
    return load_config(write_config(text)).config


# Two threads per core unless a test says otherwise: a node then has the catalogue's vCPU, which the quotas count,
# so the limits follow accelerators and memory (threads per core: the tests of node_demand's vCPU below).
def auto(name, itype, max_count, *fallbacks, **extra):
    return {"name": name, "instance_type": itype, "count": 0, "max_count": max_count, "threads_per_core": 2,
            **({"fallback_instance_types": list(fallbacks)} if fallbacks else {}), **extra}


def fixed(name, itype, count, **extra):
    return {"name": name, "instance_type": itype, "count": count, "threads_per_core": 2, **extra}


def flexible(name, itype, count, *fallbacks):
    return {"name": name, "instance_type": itype, "count": count, "fallback_instance_types": list(fallbacks),
            "threads_per_core": 2}


def nodes(itype, count):
    """A pool's limits for `count` nodes of `itype`, from the catalogue's EC2 figures."""
    spec = CATALOGUE[itype]
    limits = {"memory": f"{int(spec.memory_gib * 1024) * count}Mi"}
    if spec.accelerators:
        limits["nvidia.com/gpu"] = str(spec.accelerators * count)
    return limits


def test_limits_are_the_quotas_beyond_the_fixed_groups(write_config):
    # 5 g5 reserved, 2 of them fixed: the pool may launch the other 3, not the 8 max_count allows.
    c = config(write_config, [fixed("f", G5, 2), auto("a", G5, 8)], [[{"instance_type": G5, "count": 5}]])
    assert node_pool_limits(c) == {G5: nodes(G5, 3)}


def test_limits_never_exceed_what_max_count_allows(write_config):
    c = config(write_config, [auto("a", G5, 2)], [[{"instance_type": G5, "count": 5}]])
    assert node_pool_limits(c) == {G5: nodes(G5, 2)}


def test_a_type_no_allocation_can_use_gets_a_pool_that_launches_nothing(write_config):
    c = config(write_config, [fixed("f", M5, 2), auto("a", G5, 4)], [[{"instance_type": M5, "count": 2}]])
    assert node_pool_limits(c) == {G5: {"memory": "0Mi", "nvidia.com/gpu": "0"}}


def test_a_partial_quota_needs_a_whole_node_with_its_gpus(write_config):
    # 6 vCPU of a g5 and no GPU (SageMaker fills no accelerators): Karpenter still launches a whole node to hold it.
    c = config(write_config, [auto("a", G5, 4)], [[{"instance_type": G5, "vcpu": 6}]])
    assert node_pool_limits(c) == {G5: nodes(G5, 1)}


P5 = "ml.p5.48xlarge"


@pytest.mark.parametrize(("threads", "fixed_threads", "pool_nodes"), [(1, None, 2), (2, None, 1), (1, 1, 1), (2, 1, 1)])
def test_a_vcpu_quota_needs_the_nodes_its_cpus_fit_on_with_their_threads_per_core(write_config, threads, fixed_threads,
                                                                                  pool_nodes):
    # Red team round 4: Kueue admits CPU requests up to the quota's 192 vCPU (the catalogue's full p5), but a p5
    # with threads_per_core 1 has 96 (EC2 CPU options): two such nodes, where two threads per core need one.
    groups = [auto("a", P5, 2, threads_per_core=threads)]
    if fixed_threads is not None:  # a fixed p5 of 96 real CPUs holds part of the 192
        groups.insert(0, fixed("f", P5, 1, threads_per_core=fixed_threads))
    c = config(write_config, groups, [[{"instance_type": P5, "vcpu": 192}]])
    assert node_pool_limits(c) == {P5: nodes(P5, pool_nodes)}


def test_a_count_quota_on_halved_nodes_may_need_twice_the_nodes_for_the_cpu_kueue_admits(write_config):
    # 2 g5.12xlarge of quota: Kueue's cpu is 96 (2 x 48), a g5.12xlarge with one thread per core has 24.
    c = config(write_config, [auto("a", G5, 8, threads_per_core=1)], [[{"instance_type": G5, "count": 2}]])
    assert node_pool_limits(c) == {G5: nodes(G5, 4)}


def test_a_flexible_autoscaled_group_gives_each_of_its_types_a_pool_of_its_own(write_config):
    c = config(write_config, [auto("a", G5, 3, G5_24)],
               [[{"instance_type": G5, "count": 1}, {"instance_type": G5_24, "count": 1}]])
    assert autoscaled_types(c) == (G5, G5_24)
    assert node_ceiling(c) == {G5: 3, G5_24: 3}
    assert node_pool_limits(c) == {G5: nodes(G5, 1), G5_24: nodes(G5_24, 1)}


def test_a_fixed_flexible_group_covers_no_quota_of_any_type_for_sure(write_config):
    # Quotas of 2 x g5.12xlarge and 2 x g5.24xlarge; the fixed flexible group's 2 instances may come up as either
    # type, so each type's pool must hold its whole quota: 2 nodes each.
    c = config(write_config, [flexible("f", G5, 2, G5_24), auto("a", G5, 8, G5_24)],
               [[{"instance_type": G5, "count": 2}, {"instance_type": G5_24, "count": 2}]])
    assert node_pool_limits(c) == {G5: nodes(G5, 2), G5_24: nodes(G5_24, 2)}


def test_a_cpu_group_has_no_accelerator_limit(write_config):
    c = config(write_config, [auto("a", M5, 4)], [[{"instance_type": M5, "count": 1}]])
    assert node_pool_limits(c) == {M5: nodes(M5, 1)}


def test_no_objects_without_autoscaling_or_without_an_autoscaled_group(write_config):
    c = config(write_config, [fixed("f", G5, 2)], [[{"instance_type": G5, "count": 1}]])
    assert autoscaling_manifests(c) == ()


# --- F1: borrowing unallocated capacity, autoscaled max_count included ---------------------------------------


def test_the_pools_launch_what_reach_job_and_simulate_admit():
    # Round-3 red team (r3_u2.yaml): 4 fixed g5.12xlarge and an autoscaled group of 4; john 2, smith 1 with
    # borrow_limit 500. validate's reach gave smith 6 nodes, job took 6, simulate admitted 6, and the NodePool's
    # limit was 0: Karpenter would never launch the 2 nodes past the fixed 4.
    path = RED_TEAM / "r3_u2.yaml"
    c = load_config(path).config
    smith = next(r for r in check_file(path).reach if r.team == "smith" and r.instance_type == G5)
    assert smith.reach.count == 6
    job = ("job", "--config", str(path), "--team", "smith", "--name", "big", "--image", "x",
           "--instance-type", G5, "--nodes")
    assert invoke(*job, "6", "--", "python", "t.py").exit_code == 0
    assert invoke(*job, "7", "--", "python", "t.py").exit_code == 1
    simulated = invoke("simulate", str(path), "--workload", str(RED_TEAM / "r3_w-u2.yaml"))
    assert simulated.exit_code == 0 and "smith-big  smith  admitted on ml.g5.12xlarge" in simulated.output
    # One function: the pool's nodes are what Kueue may admit (reach.admissible) beyond the 4 fixed nodes - the
    # allocations, and the unallocated capacity reach lends, as far as the borrowers may take it.
    usable = admissible(c)[G5]
    room = sum((r.reach.count - r.quota.count for r in team_reach(c) if r.instance_type == G5), 0)
    assert usable.count == allocated(c)[G5].count + min(unallocated(c)[G5].count, room) == 8
    # Its groups run one thread per core: a g5.12xlarge has 24 of the 48 vCPU Kueue's cpu counts (node_vcpu), so
    # the 384 vCPU Kueue may admit, less the fixed nodes' 4 x 24, take 12 nodes - more than the 8 - 4 the GPUs take.
    assert instances_needed(G5, usable) - 4 == 4
    assert node_demand(c)[G5] == (384 - 4 * 24) // 24 == 12
    assert node_pool_limits(c) == {G5: nodes(G5, 4)}
    assert 4 + int(node_pool_limits(c)[G5]["nvidia.com/gpu"]) // 4 >= smith.reach.count


def test_unallocated_capacity_nobody_may_borrow_adds_nothing(write_config):
    # The same groups with idle sharing Disabled: Kueue admits only the quotas, so the pool launches none past them.
    c = config(write_config, [fixed("f", G5, 4), auto("a", G5, 4)], [[{"instance_type": G5, "count": 5}]])
    assert node_pool_limits(c) == {G5: nodes(G5, 1)}
    shared = config(write_config, [fixed("f", G5, 4), auto("a", G5, 4)], [[{"instance_type": G5, "count": 5}]],
                    sharing="Enabled")
    # Enabled, the team's 50 % default borrow limit (2.5 instances) may take 2.5 of the 3 unallocated: 8 in all.
    assert node_pool_limits(shared) == {G5: nodes(G5, 4)}


# --- F2: Spot groups give the pools nothing ----------------------------------------------------------------


def test_a_fixed_spot_group_counts_as_giving_nothing_so_autoscaling_makes_up_for_it():
    # Round-3 red team (r3_s1.yaml): the 4 fixed g5.12xlarge turned Spot, an autoscaled On-Demand group of 4, the
    # teams' 4 g5.12xlarge. validate relied on the autoscaled group (no HPK531), and the NodePool counted the Spot
    # nodes as given (limit 0): with the Spot nodes taken back the teams had none.
    path = RED_TEAM / "r3_s1.yaml"
    c = load_config(path).config
    assert spot_backing(c)[G5] is True
    assert "HPK531" not in {f.code for f in check_file(path).findings}
    assert node_pool_limits(c) == {G5: nodes(G5, 4)}


def test_quotas_beyond_the_on_demand_groups_count_on_spot_in_validate_and_in_plan(write_config):
    c = config(write_config, [fixed("s", G5, 4, capacity_type="Spot"), auto("a", G5, 2)],
               [[{"instance_type": G5, "count": 4}]])
    assert spot_backing(c) == {G5: False}
    # The pool still lets the autoscaled group give all it has: the part the Spot nodes leave when EC2 takes them.
    assert node_pool_limits(c) == {G5: nodes(G5, 2)}


# --- F3: one pool per type ---------------------------------------------------------------------------------


def test_a_borrower_on_one_type_cannot_use_up_another_types_limit():
    # Round-3 red team (r3_n1.yaml): john's 2 x g5.12xlarge only autoscaling gives; smith borrows 2 g5.24xlarge
    # from the autoscaled g5.24xlarge group. One pool's limit (memory 384 GiB, 8 GPUs) was one g5.24xlarge node away
    # from john's quota; now each type has its own pool and limit.
    c = load_config(RED_TEAM / "r3_n1.yaml").config
    limits = node_pool_limits(c)
    assert limits == {G5: nodes(G5, 2), G5_24: nodes(G5_24, 2)}
    pools = {m["metadata"]["name"]: m for m in autoscaling_manifests(c)[1:]}
    assert sorted(pools) == [f"hyperpod-kit-autoscaling-{G5}", f"hyperpod-kit-autoscaling-{G5_24}"]
    for itype in (G5, G5_24):
        pool = pools[f"hyperpod-kit-autoscaling-{itype}"]
        assert pool["spec"]["template"]["spec"]["requirements"] == [
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [itype]}]
        assert pool["spec"]["limits"] == limits[itype]


def _schema(tag):
    crd = yaml.safe_load((DATA / f"karpenter.sh_nodepools-{tag}.yaml").read_text())
    return strict(next(v for v in crd["spec"]["versions"] if v["name"] == "v1")["schema"]["openAPIV3Schema"])


@pytest.fixture(scope="module", params=KARPENTER_TAGS)
def node_pool_schema(request):
    return _schema(request.param)


def test_the_node_pools_are_valid_karpenter_v1_node_pools(write_config, node_pool_schema):
    c = config(write_config, [fixed("f", G5, 1), auto("a", G5, 4, G5_24), auto("c", M5, 2)],
               [[{"instance_type": G5, "count": 3}, {"instance_type": M5, "count": 1}]])
    node_class, *node_pools = autoscaling_manifests(c)
    assert node_class["spec"] == {"instanceGroups": ["a", "c"]}
    assert [pool["spec"]["template"]["spec"]["requirements"][0]["values"] for pool in node_pools] == [[G5], [G5_24], [M5]]
    for pool in node_pools:
        jsonschema.validate(pool, node_pool_schema)
        check_metadata(pool, "1.33")
        assert pool["spec"]["template"]["spec"]["nodeClassRef"]["name"] == node_class["metadata"]["name"]


def test_the_schema_check_refuses_what_karpenter_refuses(node_pool_schema):
    # The strict schema is not a formality: a policy Karpenter does not know and an unknown field both fail.
    from hyperpod_constructs.helm_release_handler.manifest_policy import kit_node_pool
    pool = kit_node_pool(G5, {"memory": "1Mi"})
    bad = copy.deepcopy(pool)
    bad["spec"]["disruption"]["consolidationPolicy"] = "Never"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, node_pool_schema)
    bad = copy.deepcopy(pool)
    bad["spec"]["template"]["spec"]["nodeClass"] = {}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, node_pool_schema)
