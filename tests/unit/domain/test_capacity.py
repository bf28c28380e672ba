"""Capacity behaviour that mutation testing of cdk_app/domain/capacity.py found untested.

Expected amounts are worked out by hand from the public EC2 figures, written here and not read from the
kit's catalogue: ml.g5.12xlarge has 4 GPUs, 48 vCPU and 192 GiB; ml.m5.2xlarge has no accelerator, 8 vCPU
and 32 GiB. The base config (tests/support/adversarial/base.yaml) has 4 x g5 and 2 x m5; john reserves 3 g5 and
1 m5, smith 1 g5 and 1 m5.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from support.paths import SUPPORT
from support.small_config import HEAD

from cdk_app.config.model import KitConfig
from cdk_app.domain.capacity import Resources, shared_pool_quota
from cdk_app.validator.report import check_file

BASE = (SUPPORT / "adversarial" / "base.yaml").read_text()
G5 = {"accelerators": 4, "vcpu": 48, "memory_gib": 192}
M5 = {"accelerators": 0, "vcpu": 8, "memory_gib": 32}
JOHN_G5 = "      - instance_type: ml.g5.12xlarge\n        count: 3\n"
JOHN_M5 = "      - instance_type: ml.m5.2xlarge\n        count: 1\n    principals:"
SMITH_M5 = "      - instance_type: ml.m5.2xlarge\n        count: 1\n"


def write(tmp_path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


def edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def with_pool(text: str) -> str:
    return edit(text, "teams:\n", "shared_pool:\n  name: pool\nteams:\n")


def errors(path: Path) -> list[tuple[str, str]]:
    return sorted((f.code, f.path) for f in check_file(path).errors)


def test_accelerators_on_a_cpu_type_reserve_nothing(tmp_path):
    # john's m5 entry asks for GPUs m5 does not have (HPK407); smith takes both m5 instances. The bad entry
    # adds nothing, so 0 + 2 <= 2 instances: HPK407 alone, no capacity error.
    text = edit(BASE, JOHN_M5, "      - instance_type: ml.m5.2xlarge\n        accelerators: 2\n    principals:")
    text = edit(text, SMITH_M5, "      - instance_type: ml.m5.2xlarge\n        count: 2\n")
    assert errors(write(tmp_path, text)) == [("HPK407", "teams[0].quota[1].accelerators")]


def test_an_entry_without_amounts_reserves_nothing(tmp_path):
    text = edit(BASE, JOHN_M5, "      - instance_type: ml.m5.2xlarge\n    principals:")
    text = edit(text, SMITH_M5, "      - instance_type: ml.m5.2xlarge\n        count: 2\n")
    assert errors(write(tmp_path, text)) == [("HPK406", "teams[0].quota[1]")]


def test_vcpu_written_next_to_accelerators_is_reserved_as_written(tmp_path):
    # john: 1 GPU but 190 vCPU of g5; smith: 1 whole g5 (48 vCPU). 190 + 48 = 238 vCPU > 4 x 48 = 192,
    # although the GPUs (1 + 4 of 16) fit.
    text = edit(BASE, JOHN_G5, "      - instance_type: ml.g5.12xlarge\n        accelerators: 1\n        vcpu: 190\n")
    report = check_file(write(tmp_path, text))
    assert sorted((f.code, f.path) for f in report.errors) == [("HPK501", "teams[0].quota[0]"),
                                                               ("HPK501", "teams[1].quota[0]")]
    john = next(f for f in report.errors if f.path == "teams[0].quota[0]")
    assert f"teams reserve {190 + G5['vcpu']} vCPU of ml.g5.12xlarge" in john.message
    assert f"the cluster has {4 * G5['vcpu']} vCPU" in john.message


def test_two_entries_of_one_type_add_up(tmp_path):
    # john writes g5 twice (HPK405: merge them): 2 + 2 instances, with smith's 1 that is 5 of 4.
    text = edit(BASE, JOHN_G5, "      - instance_type: ml.g5.12xlarge\n        count: 2\n"
                               "      - instance_type: ml.g5.12xlarge\n        count: 2\n")
    report = check_file(write(tmp_path, text))
    assert sorted((f.code, f.path) for f in report.errors) == [
        ("HPK405", "teams[0].quota[1].instance_type"), ("HPK501", "teams[0].quota[0]"),
        ("HPK501", "teams[1].quota[0]")]
    assert "teams reserve 5 instances of ml.g5.12xlarge but the cluster has 4 instances" in next(
        f for f in report.errors if f.code == "HPK501").message


def test_the_shared_pool_skips_a_type_the_teams_fill_and_goes_on_to_the_next(tmp_path):
    # g5: 4 - 3 - 1 = 0 instances left: no pool entry (not a zero entry). m5, listed after g5: john reserves
    # 3 vCPU (3/8 of an instance), smith 1 instance: 16 - 3 - 8 = 5 vCPU and 64 - 12 - 32 = 20 GiB are left.
    text = with_pool(edit(BASE, JOHN_M5, "      - instance_type: ml.m5.2xlarge\n        vcpu: 3\n    principals:"))
    report = check_file(write(tmp_path, text))
    assert report.errors == []
    entries = [e.model_dump(exclude_none=True) for e in shared_pool_quota(report.loaded.config)]
    assert entries == [{"instance_type": "ml.m5.2xlarge", "vcpu": 5.0, "memory_gib": 20.0}]


def test_the_shared_pool_holds_none_of_the_system_groups_nodes(tmp_path):
    # Two tainted system nodes of ml.m5.2xlarge beside the teams' two: the teams reserve both untainted ones,
    # so the pool gets no m5 (not the system nodes, which no pool pod may tolerate).
    text = with_pool(edit(BASE, "task_governance:\n",
                          "    - name: system\n      instance_type: ml.m5.2xlarge\n      count: 2\n"
                          "      labels: {node-role: system}\n"
                          "      taints: [{key: CriticalAddonsOnly, value: \"true\", effect: NoSchedule}]\n"
                          "  system_instance_group: system\ntask_governance:\n"))
    text = edit(text, JOHN_G5, "      - instance_type: ml.g5.12xlarge\n        count: 2\n")
    report = check_file(write(tmp_path, text))
    assert [e.model_dump(exclude_none=True) for e in shared_pool_quota(report.loaded.config)] == [
        {"instance_type": "ml.g5.12xlarge", "count": 1}]
    assert capacity_rows(write(tmp_path, text))["ml.m5.2xlarge"]["capacity"]["count"] == 2


def capacity_rows(path: Path) -> dict[str, dict[str, dict[str, float]]]:
    rows = [row.to_json() for row in check_file(path).capacity]
    return {row["instance_type"]: {"capacity": row["capacity"], "reserved": row["reserved"]} for row in rows}


def test_with_a_shared_pool_the_table_reserves_the_whole_cluster(tmp_path):
    # john keeps 2 g5 instead of 3: the pool holds the third, so the table shows all 4 g5 reserved.
    text = with_pool(edit(BASE, JOHN_G5, "      - instance_type: ml.g5.12xlarge\n        count: 2\n"))
    g5 = {"count": 4, **{d: 4 * v for d, v in G5.items()}}
    m5 = {"count": 2, **{d: 2 * v for d, v in M5.items()}}
    assert capacity_rows(write(tmp_path, text)) == {"ml.g5.12xlarge": {"capacity": g5, "reserved": g5},
                                                    "ml.m5.2xlarge": {"capacity": m5, "reserved": m5}}


def test_with_a_shared_pool_a_dimension_over_capacity_shows_the_teams_sum(tmp_path):
    # m5: john 1 vCPU and 60 GiB (1/8 of an instance by vCPU), smith 1 instance (8 vCPU, 32 GiB). Memory
    # 60 + 32 = 92 GiB is over the 64 GiB of 2 x m5, so the pool gets no m5 entry and the table shows the
    # teams' sum alone (9/8 instances, 9 vCPU): what the stacks write, not the capacity the pool could not fill.
    text = with_pool(edit(BASE, JOHN_M5, "      - instance_type: ml.m5.2xlarge\n        vcpu: 1\n"
                                         "        memory_gib: 60\n    principals:"))
    rows = capacity_rows(write(tmp_path, text))
    assert rows["ml.m5.2xlarge"] == {"capacity": {"count": 2, "accelerators": 0, "vcpu": 16, "memory_gib": 64},
                                     "reserved": {"count": 1.125, "accelerators": 0, "vcpu": 9, "memory_gib": 92}}


@pytest.mark.parametrize("amounts", [(1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1), (0, 0, 1, 1),
                                     (1, 1, 0, 0)])
def test_an_amount_in_any_one_dimension_is_not_nothing(amounts):
    assert not Resources(*amounts).is_zero()
    assert Resources().is_zero() and Resources(0, 0, 0, 0).is_zero()


def test_a_pool_left_with_vcpu_but_no_memory_still_holds_something(tmp_path):
    # m5: john 2 vCPU and all 64 GiB, smith nothing on m5: the gap is 14 vCPU and 0 GiB, not nothing, so
    # no HPK505 ("the shared pool would hold nothing").
    text = with_pool(edit(BASE, JOHN_M5, "      - instance_type: ml.m5.2xlarge\n        vcpu: 2\n"
                                         "        memory_gib: 64\n    principals:"))
    text = edit(text, "        count: 1\n      - instance_type: ml.m5.2xlarge\n        count: 1\n",
                "        count: 1\n")
    codes = [f.code for f in check_file(write(tmp_path, text)).findings]
    assert "HPK505" not in codes


def flexible_config(tmp_path, xl, xxl):
    """Two flexible groups of one instance each, `both` (xlarge or 2xlarge) and `small` (xlarge or large)."""
    import yaml

    from cdk_app.config.loader import load_config
    groups = [{"name": "both", "instance_type": "ml.m5.xlarge", "fallback_instance_types": ["ml.m5.2xlarge"], "count": 1},
              {"name": "small", "instance_type": "ml.m5.xlarge", "fallback_instance_types": ["ml.m5.large"], "count": 1}]
    quota = [{"instance_type": "ml.m5.xlarge", "count": xl}, {"instance_type": "ml.m5.2xlarge", "count": xxl}]
    text = yaml.safe_dump({"environment": "t", "account": "111122223333", "region": "us-east-1",
                           "availability_zone_ids": ["use1-az4"], "hyperpod": {"instance_groups": groups},
                           "teams": [{"name": "a", "quota": quota}]})
    return load_config(write(tmp_path, text)).config


@pytest.mark.parametrize(("xl", "xxl", "need", "given"), [
    # One instance of each fits only if the xlarge comes from `small`: the count moves it there.
    (1, 1, {"ml.m5.xlarge": 1, "ml.m5.2xlarge": 1}, 2),
    (2, 1, {"ml.m5.xlarge": 2, "ml.m5.2xlarge": 1}, 2),
    (0, 1, {"ml.m5.2xlarge": 1}, 1),
    (0, 2, {}, 0),  # over what even `both` could give: HPK501's, not counted here
])
def test_flexible_groups_give_each_instance_once(tmp_path, xl, xxl, need, given):
    from cdk_app.domain.capacity import flexible_reliance
    cover = flexible_reliance(flexible_config(tmp_path, xl, xxl))
    assert (cover.need, cover.given) == (need, given)


def test_flexible_reliance_costs_what_the_groups_and_types_do_not_the_instance_counts(tmp_path):
    # The red team's hang_100_6758 shape (16 KB of YAML): 100 flexible groups of 6,758 ml.c5.large (or
    # ml.c5.xlarge); a team reserves every ml.c5.large, another one ml.c5.xlarge. Placing one instance at a
    # time took over 400 s; the answer is one instance short, whatever the counts.
    import time

    import yaml

    from cdk_app.config.loader import load_config
    from cdk_app.domain.capacity import flexible_reliance
    groups = [{"name": f"g{i}", "instance_type": "ml.c5.large", "fallback_instance_types": ["ml.c5.xlarge"],
               "count": 6758} for i in range(100)]
    teams = [{"name": "john", "quota": [{"instance_type": "ml.c5.large", "count": 675800}]},
             {"name": "smith", "quota": [{"instance_type": "ml.c5.xlarge", "count": 1}]}]
    text = yaml.safe_dump({"environment": "t", "account": "111122223333", "region": "us-east-1",
                           "availability_zone_ids": ["use1-az4"], "hyperpod": {"instance_groups": groups},
                           "teams": teams})
    config = load_config(write(tmp_path, text)).config
    started = time.process_time()
    cover = flexible_reliance(config)
    assert (cover.need, cover.given) == ({"ml.c5.large": 675800, "ml.c5.xlarge": 1}, 675800)
    assert time.process_time() - started < 5  # generous: about 0.005 s here


RED_TEAM = SUPPORT / "adversarial" / "issue31"  # the issue-31 red team's configs, as they wrote them


def test_a_fully_partitioned_type_guarantees_no_whole_gpus_and_shows_no_best_effort():
    # mig1.yaml: one fixed On-Demand ml.p5.48xlarge labelled all-1g.10gb. Its 8 GPUs are 56 partitions, so the
    # whole-GPU capacity, the guaranteed part and the best-effort rest are all 0 accelerators (never -8).
    report = check_file(RED_TEAM / "mig1.yaml")
    row = next(r for r in report.capacity if r.instance_type == "ml.p5.48xlarge")
    assert (row.capacity.accelerators, row.guaranteed.accelerators, row.best_effort.accelerators) == (0, 0, 0)
    assert all(r.best_effort.is_zero() for r in report.capacity)  # so the table shows no guaranteed/best-effort columns


@pytest.mark.parametrize(("name", "pool_gpus"), [("pool_mig.yaml", 0), ("pool_mig_mixed.yaml", 8)])
def test_the_shared_pool_never_gets_partitioned_gpus_as_whole_ones(name, pool_gpus):
    # pool_mig: the only p5 is partitioned, so the pool may hold its vCPU and memory but no GPU; pool_mig_mixed
    # adds an unpartitioned p5, whose 8 GPUs are all the pool can get.
    from cdk_app.config.loader import load_config
    from cdk_app.domain.capacity import reservations
    config = load_config(RED_TEAM / name).config
    pool = reservations(shared_pool_quota(config)).get("ml.p5.48xlarge", Resources())
    assert pool.accelerators == pool_gpus
    row = next(r for r in check_file(RED_TEAM / name).capacity if r.instance_type == "ml.p5.48xlarge")
    assert not row.reserved.exceeding(row.capacity)


def test_reserving_exactly_what_a_mixed_geometry_gives_is_within_capacity():
    # mig8b.yaml: one ml.p5.48xlarge labelled mixed-1-3g.40gb-1-2g.20gb-2-1g.10gb (per GPU 1 x 3g, 1 x 2g,
    # 2 x 1g: 7 compute slices of NVIDIA's 7); three teams reserve 8 x 3g, 8 x 2g and 16 x 1g, all it gives.
    # Counted by each profile's all-<profile> count this was 47/42 instances (HPK501 three times).
    report = check_file(RED_TEAM / "mig8b.yaml")
    assert not [f for f in report.findings if f.severity == "error"], report.findings
    row = next(r for r in report.capacity if r.instance_type == "ml.p5.48xlarge")
    assert (row.reserved.count, row.capacity.count) == (1, 1)


def test_a_partition_stands_for_its_compute_slices_share_of_the_gpu_in_the_configured_geometry():
    from fractions import Fraction

    from cdk_app.config.loader import load_config
    from cdk_app.domain.capacity import partition_shares
    shares = partition_shares(load_config(RED_TEAM / "mig8b.yaml").config.hyperpod.instance_groups)
    # Of one GPU (1/8 of the instance): 3g 3/7, 2g 2/7, 1g 1/7 (NVIDIA's compute slices per profile).
    assert shares == {("ml.p5.48xlarge", "mig-3g.40gb"): Fraction(3, 56),
                      ("ml.p5.48xlarge", "mig-2g.20gb"): Fraction(2, 56),
                      ("ml.p5.48xlarge", "mig-1g.10gb"): Fraction(1, 56)}


def test_a_tainted_system_groups_partitions_are_no_teams_capacity():
    # Round-2 red team (n_sysmig2.yaml): the system group `sys` is the only partitioned ml.p5.48xlarge; john's 56
    # mig-1g.10gb partitions validated (56/56) although no team pod can tolerate the system taint.
    report = check_file(RED_TEAM / "n_sysmig2.yaml")
    assert "HPK533" in {f.code for f in report.findings if f.severity.value == "error"}
    assert all(row.capacity == 0 for row in report.partitions if row.profile == "mig-1g.10gb")


def test_a_tainted_system_group_is_neither_lent_nor_in_the_node_pools_fixed_part():
    # Round-2 red team (n_sys_auto.yaml): a fixed 1 x g5.12xlarge system group and an autoscaled g5.12xlarge team
    # group (max_count 4) under john's quota of 4. john's reach was 5 (the system node lent as unallocated) and
    # the NodePool allowed 3 nodes (the system node counted as fixed team capacity).
    from cdk_app.config.loader import load_config
    from cdk_app.domain.autoscaling import node_pool_limits

    report = check_file(RED_TEAM / "n_sys_auto.yaml")
    john = next(r for r in report.reach if r.team == "john" and r.instance_type == "ml.g5.12xlarge")
    assert (john.quota.count, john.reach.count) == (4, 4)
    assert node_pool_limits(load_config(RED_TEAM / "n_sys_auto.yaml").config)["ml.g5.12xlarge"]["nvidia.com/gpu"] == "16"


PARTITIONED = HEAD + """hyperpod:
  instance_groups:
    - name: mig
      instance_type: ml.p5.48xlarge
      count: 1
      labels: {nvidia.com/mig.config: all-1g.10gb}
shared_pool: {name: pool}
teams:
  - name: t0
    quota:
      - instance_type: ml.p5.48xlarge
        accelerator_partition: {type: mig-1g.10gb, count: 20}
"""


def test_the_pool_takes_no_vcpu_of_a_type_whose_gpus_are_all_partitioned(tmp_path):
    # ml.p5.48xlarge: 8 GPUs, 192 vCPU, 2048 GiB; all-1g.10gb is 7 x 1g.10gb per GPU, 56 per node. A vCPU and memory
    # entry gets no GPU from SageMaker; it showed the type's vCPU all reserved while 36 partitions were free.
    report = check_file(write(tmp_path, PARTITIONED))
    assert shared_pool_quota(report.loaded.config) == []
    [row] = report.capacity
    share = Fraction(20, 56)
    assert row.reserved == Resources(share, 0, 192 * share, 2048 * share)
    assert row.shared_pool == Resources() and row.unreserved == Resources(1 - share, 0, 192 * (1 - share),
                                                                            2048 * (1 - share))



def test_autoscaled_on_demand_groups_back_the_quotas_where_spot_groups_do_not(write_config):
    # 4 fixed g5 on Spot, an autoscaled On-Demand group of 3: quotas of 3 fit the On-Demand groups, 4 count on Spot.
    # spot_backing is what HPK531 and plan's Spot hazard read; the NodePools count the Spot group as giving nothing.
    from cdk_app.config.loader import load_config
    from cdk_app.domain.capacity import on_demand_groups, spot_backing

    def backing(count):
        text = HEAD + f"""hyperpod:
  autoscaling: true
  instance_groups:
    - name: spot
      instance_type: ml.g5.12xlarge
      count: 4
      capacity_type: Spot
    - name: auto
      instance_type: ml.g5.12xlarge
      count: 0
      max_count: 3
teams:
  - name: a
    quota:
      - instance_type: ml.g5.12xlarge
        count: {count}
"""
        config = load_config(write_config(text)).config
        assert [g.name for g in on_demand_groups(config)] == ["auto"]
        return spot_backing(config)

    assert backing(3) == {"ml.g5.12xlarge": True}
    assert backing(4) == {"ml.g5.12xlarge": False}
# --- A partitioned flexible group (the red team's third round, F5 and F6) ---------------------------------------
# all-1g.10gb is 7 x 1g.10gb per GPU on an H100 and on an A100 80GB alike (NVIDIA's MIG User Guide, "Supported
# MIG Profiles"); ml.p5.48xlarge and ml.p4de.24xlarge have 8 GPUs each (EC2): 56 partitions a node.
P5, P4DE, P4D = "ml.p5.48xlarge", "ml.p4de.24xlarge", "ml.p4d.24xlarge"


def test_a_partitioned_flexible_group_is_partitioned_as_every_type_it_may_run_as():
    # r3_f3.yaml: prod plus flexmig, 2 x p5 or p4de, labelled all-1g.10gb. The label is the group's, so a node
    # that comes up as p4de is partitioned too: no whole GPU under either type, 112 partitions under each.
    from cdk_app.config.loader import load_config
    from cdk_app.domain.capacity import groups_capacity, node_partitions, partition_capacity_of, partitioned_gpus
    config = load_config(RED_TEAM / "r3_f3.yaml").config
    [flexmig] = [g for g in config.hyperpod.instance_groups if g.name == "flexmig"]
    assert partitioned_gpus((flexmig,)) == {P5: 16, P4DE: 16}
    assert partition_capacity_of((flexmig,)) == {(P5, "mig-1g.10gb"): 112, (P4DE, "mig-1g.10gb"): 112}
    assert (groups_capacity((flexmig,))[P5].accelerators, groups_capacity((flexmig,))[P4DE].accelerators) == (0, 0)
    assert node_partitions(config, P4DE) == {"mig-1g.10gb": 56}
    # validate: applied-science's 16 whole p4de GPUs are over capacity, and the partition table has a p4de row.
    report = check_file(RED_TEAM / "r3_f3.yaml")
    [over] = [f for f in report.findings if f.code == "HPK501"]
    assert over.path == "teams[4].quota[2]"
    assert "the cluster has 0 accelerators (16 more of its GPUs are partitioned" in over.message
    assert {(r.instance_type, r.profile, r.capacity) for r in report.partitions} == {
        (P5, "mig-1g.10gb", 112), (P4DE, "mig-1g.10gb", 112)}


def test_partition_quotas_need_the_nodes_of_the_partitioned_flexible_group():
    # r3_f2.yaml: miggy's 112 mig-1g.10gb on p5 are both of flexmig's nodes (56 a node), and applied-science's 16
    # p4d GPUs two more (all-1g.10gb is no geometry of the A100 40GB, HPK224, so as p4d its GPUs stay whole):
    # 4 instances of a group of 2. Counted as instance-share of any p5 this was 3.
    from cdk_app.config.loader import load_config
    from cdk_app.domain.capacity import flexible_reliance
    cover = flexible_reliance(load_config(RED_TEAM / "r3_f2.yaml").config)
    assert cover.need == {P4D: 2, f"{P5} partitions (all-1g.10gb)": 2}
    assert (cover.given, cover.groups, cover.short) == (2, ("flexmig",), True)


def mig_flex_config(count: int, quota: list[dict]):
    return KitConfig.model_validate({
        "environment": "t", "account": "111122223333", "region": "us-east-1", "availability_zone_ids": ["use1-az4"],
        "hyperpod": {"instance_groups": [
            {"name": "flexmig", "instance_type": P5, "fallback_instance_types": [P4DE], "count": count,
             "labels": {"nvidia.com/mig.config": "mixed-1-3g.40gb-1-2g.20gb-2-1g.10gb"}}]},
        "teams": [{"name": f"t{i}", "quota": [entry]} for i, entry in enumerate(quota)]})


def _partitions(itype: str, profile: str, count: int) -> dict:
    return {"instance_type": itype, "accelerator_partition": {"type": profile, "count": count}}


@pytest.mark.parametrize(("count", "quota", "need", "short"), [
    # One node of mixed-1-3g.40gb-1-2g.20gb-2-1g.10gb holds 8 x 3g, 8 x 2g and 16 x 1g together: its profiles
    # are one node's, not one node each.
    (1, [_partitions(P5, "mig-3g.40gb", 8), _partitions(P5, "mig-1g.10gb", 16)], {f"{P5} partitions "
     "(mixed-1-3g.40gb-1-2g.20gb-2-1g.10gb)": 1}, False),
    # One more 1g.10gb takes a second node, which then cannot be the p4de the other quota needs.
    (2, [_partitions(P5, "mig-3g.40gb", 8), _partitions(P5, "mig-1g.10gb", 17), _partitions(P4DE, "mig-3g.40gb", 8)],
     {f"{P5} partitions (mixed-1-3g.40gb-1-2g.20gb-2-1g.10gb)": 2,
      f"{P4DE} partitions (mixed-1-3g.40gb-1-2g.20gb-2-1g.10gb)": 1}, True),
    # Partitions of both types from a group of one: it is one type at a time.
    (1, [_partitions(P5, "mig-3g.40gb", 8), _partitions(P4DE, "mig-3g.40gb", 8)],
     {f"{P5} partitions (mixed-1-3g.40gb-1-2g.20gb-2-1g.10gb)": 1,
      f"{P4DE} partitions (mixed-1-3g.40gb-1-2g.20gb-2-1g.10gb)": 1}, True),
    (2, [_partitions(P5, "mig-3g.40gb", 8), _partitions(P4DE, "mig-3g.40gb", 8)],
     {f"{P5} partitions (mixed-1-3g.40gb-1-2g.20gb-2-1g.10gb)": 1,
      f"{P4DE} partitions (mixed-1-3g.40gb-1-2g.20gb-2-1g.10gb)": 1}, False),
])
def test_a_geometrys_profiles_come_from_the_same_nodes(count, quota, need, short):
    from cdk_app.domain.capacity import flexible_reliance
    cover = flexible_reliance(mig_flex_config(count, quota))
    assert (cover.need, cover.short) == (need, short)
def _groups_config(tmp_path, groups):
    import yaml

    from cdk_app.config.loader import load_config
    text = yaml.safe_dump({"environment": "t", "account": "111122223333", "region": "us-east-1",
                           "availability_zone_ids": ["use1-az4"], "hyperpod": {"instance_groups": groups},
                           "teams": [{"name": "a", "quota": [{"instance_type": "ml.m5.xlarge", "count": 1}]}]})
    return load_config(write(tmp_path, text)).config


def test_node_cpus_take_each_groups_threads_per_core_and_the_fewest_per_node(tmp_path):
    from cdk_app.domain.capacity import node_cpus
    config = _groups_config(tmp_path, [
        {"name": "ht", "instance_type": "ml.m5.xlarge", "count": 2, "threads_per_core": 2},
        {"name": "cores", "instance_type": "ml.m5.xlarge", "count": 3},  # threads_per_core 1: 2 of 4 vCPU
        {"name": "flex", "instance_type": "ml.m5.2xlarge", "fallback_instance_types": ["ml.m5.xlarge"], "count": 1},
        {"name": "arm", "instance_type": "ml.m7g.xlarge", "count": 1},  # Graviton: one thread per core
        {"name": "none", "instance_type": "ml.c5.xlarge", "count": 0}])
    assert node_cpus(config) == {"ml.m5.xlarge": (2, 2 * 4 + 3 * 2 + 2), "ml.m5.2xlarge": (4, 4),
                                 "ml.m7g.xlarge": (4, 4)}
