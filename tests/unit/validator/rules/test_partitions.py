"""GPU partitions and absolute borrow limits (HPK224, HPK225, HPK430-HPK435, HPK533), at their edges: the
partitions a geometry gives (the pinned chart's MIG manager configuration says all-1g.10gb is 7 per GPU; an
ml.p5.48xlarge has 8 GPUs, the catalogue's EC2 figure), the profiles of the API's enum, and the
AbsoluteBorrowLimits list of cfn-lint's ComputeQuota schema (15 items, ComputeQuotaResourceConfig)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from support.rule_runner import codes, run

from cdk_app.domain.resource_schemas import resource_schema

CPU_GROUP = "    - name: cpu\n      instance_type: ml.m5.2xlarge\n      count: 2\n"
SMITH = "  - name: smith\n    quota:\n"
P5_PER_NODE = 7 * 8  # all-1g.10gb: 7 per GPU (chart), 8 GPUs


def mig_group(geometry: str = "all-1g.10gb", count: int = 1) -> tuple[str, str]:
    return (CPU_GROUP, CPU_GROUP + f"    - name: mig\n      instance_type: ml.p5.48xlarge\n      count: {count}\n"
                                   f"      labels:\n        nvidia.com/mig.config: {geometry}\n")


def smith_partitions(count: int, profile: str = "mig-1g.10gb", itype: str = "ml.p5.48xlarge") -> tuple[str, str]:
    return (SMITH, SMITH + f"      - instance_type: {itype}\n"
                           f"        accelerator_partition: {{type: {profile}, count: {count}}}\n")


def found(report) -> list[tuple[str, str, str]]:
    return [(f.code, f.path, f.message) for f in report.findings]


def test_a_quota_of_all_the_partitions_a_group_gives_is_valid_with_the_operator_warning(write_config):
    report = run(write_config, mig_group(), smith_partitions(P5_PER_NODE))
    # All its vCPU is 192 as SageMaker counts it; the node has 96 with threads_per_core 1 (HPK540).
    assert codes(report) == [("HPK225", "hyperpod.instance_groups[2].labels.nvidia.com/mig.config"),
                             ("HPK540", "teams[1].quota[0]")]
    [row] = report.partitions
    assert (row.instance_type, row.profile, row.capacity, row.reserved, row.unreserved) == (
        "ml.p5.48xlarge", "mig-1g.10gb", P5_PER_NODE, P5_PER_NODE, 0)
    # SageMaker fills an entry of partitions alone in their share of the instance: all of them, all its vCPU.
    [p5] = [r for r in report.capacity if r.instance_type == "ml.p5.48xlarge"]
    assert (p5.reserved.vcpu, p5.capacity.vcpu, p5.capacity.accelerators) == (192, 192, 0)


def test_one_partition_over_is_an_error_at_each_entry_naming_the_shares(write_config):
    report = run(write_config, mig_group(), smith_partitions(P5_PER_NODE - 10),
                 ("  - name: john\n    borrow_limit: 50\n    quota:\n",
                  "  - name: john\n    borrow_limit: 50\n    quota:\n      - instance_type: ml.p5.48xlarge\n"
                  "        accelerator_partition: {type: mig-1g.10gb, count: 11}\n"))
    over = [f for f in report.findings if f.code == "HPK533"]
    assert [(f.path, f.message) for f in over] == [
        (f"teams[{i}].quota[{j}].accelerator_partition.count",
         "teams reserve 57 mig-1g.10gb partitions of ml.p5.48xlarge but the cluster's ml.p5.48xlarge groups give 56 "
         f"(shares: john 11, smith 46; this entry {n})") for i, j, n in ((0, 0, 11), (1, 0, 46))]
    assert over[0].hint == ("lower the partition quotas by 1, or give more ml.p5.48xlarge GPUs a geometry with "
                            "mig-1g.10gb (nvidia.com/mig.config, e.g. all-1g.10gb)")


def test_partitions_of_a_profile_no_group_gives(write_config):
    report = run(write_config, mig_group(), smith_partitions(1, "mig-2g.20gb"))
    assert ("HPK533", "teams[1].quota[0].accelerator_partition.count",
            "teams reserve 1 mig-2g.20gb partitions of ml.p5.48xlarge but no ml.p5.48xlarge instance group's "
            "nvidia.com/mig.config label partitions its GPUs into mig-2g.20gb (shares: smith 1; this entry 1)") in found(report)


def test_a_profile_the_gpu_does_not_offer(write_config):
    report = run(write_config, mig_group(), smith_partitions(1, "mig-1g.18gb"))
    assert ("HPK430", "teams[1].quota[0].accelerator_partition.type",
            "ml.p5.48xlarge's GPU has no MIG profile mig-1g.18gb") in found(report)
    # On a type without MIG, HPK430 names the types that have it.
    report = run(write_config, smith_partitions(1, "mig-1g.10gb", "ml.g5.12xlarge"))
    [finding] = [f for f in report.findings if f.code == "HPK430"]
    assert finding.hint.startswith("MIG partitions exist on ml.p4d.24xlarge, ml.p4de.24xlarge, ml.p5.48xlarge")


@pytest.mark.parametrize("geometry, why", [
    ("all-1g.18gb", "ml.p5.48xlarge's GPU has no MIG profile 1g.18gb (it offers 1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, "
                    "4g.40gb, 7g.80gb)"),
    ("mixed-2-4g.40gb", "one H100 GPU cannot hold 2 x 4g.40gb (NVIDIA's MIG placements)"),
    ("half", "'half' is not a MIG geometry name (all-<profile>, mixed-<n>-<profile>-..., or all-disabled)"),
])
def test_a_geometry_label_the_gpus_cannot_take(write_config, geometry, why):
    report = run(write_config, mig_group(geometry))
    assert ("HPK224", "hyperpod.instance_groups[2].labels.nvidia.com/mig.config",
            f"nvidia.com/mig.config {geometry!r} of group 'mig' is no MIG geometry of its GPUs: {why}") in found(report)
    assert report.partitions == []  # it gives no partitions, and its GPUs stay whole
    [p5] = [r for r in report.capacity if r.instance_type == "ml.p5.48xlarge"]
    assert p5.capacity.accelerators == 8


def test_all_disabled_partitions_nothing_and_needs_no_operator(write_config):
    report = run(write_config, mig_group("all-disabled"), smith_partitions(0))
    assert "HPK225" not in [c for c, _ in codes(report)] and report.partitions[0].capacity == 0


# --- absolute borrow limits -------------------------------------------------------------------------------------
LIMIT_ITEMS = resource_schema("AWS::SageMaker::ComputeQuota")["definitions"]["ResourceSharingConfig"][
    "properties"]["AbsoluteBorrowLimits"]


def smith_limits(*entries: str, strategy: str | None = None) -> tuple[str, str]:
    lines = "".join(f"      - {e}\n" for e in entries)
    extra = f"    sharing_strategy: {strategy}\n" if strategy else ""
    return (SMITH, f"  - name: smith\n{extra}    absolute_borrow_limits:\n{lines}    quota:\n")


def test_an_absolute_limit_replaces_the_percent_in_reach(write_config):
    report = run(write_config, ("      - instance_type: ml.g5.12xlarge\n        count: 3\n",
                                "      - instance_type: ml.g5.12xlarge\n        count: 1\n"),
                 smith_limits("{instance_type: ml.g5.12xlarge, accelerators: 8}"))
    assert codes(report) == []
    smith = next(r for r in report.reach if (r.team, r.instance_type) == ("smith", "ml.g5.12xlarge"))
    # smith's quota is 1 instance (4 GPUs); 50 % would be 2 more GPUs, the absolute limit says 8, and john's 4 and
    # the 2 unreserved instances (8 GPUs) lend enough: 4 + 8 = 12.
    assert (smith.quota.accelerators, smith.reach.accelerators, smith.capped_by) == (4, 12, "absolute borrow limit")


def test_absolute_limits_on_a_team_that_never_borrows(write_config):
    report = run(write_config, smith_limits("{instance_type: ml.g5.12xlarge, accelerators: 8}", strategy="Lend"))
    assert ("HPK431", "teams[1].absolute_borrow_limits", "absolute_borrow_limits have no effect with "
            "sharing_strategy Lend: such a team never borrows") in found(report)


def test_an_absolute_limit_on_a_type_without_quota_and_with_sharing_disabled(write_config):
    report = run(write_config, mig_group(), smith_limits("{instance_type: ml.p5.48xlarge, vcpu: 8}"),
                 ("cluster_policy:\n", "cluster_policy:\n  idle_resource_sharing: Disabled\n"))
    assert {("HPK432", "teams[1].absolute_borrow_limits[0].instance_type"),
            ("HPK433", "teams[1].absolute_borrow_limits")} <= set(codes(report))


def test_absolute_limits_take_the_schemas_15_items_and_one_per_type(write_config):
    assert LIMIT_ITEMS["maxItems"] == 15
    types = ["ml.g5.12xlarge"] + ["ml.m5.2xlarge"] * 15
    report = run(write_config, smith_limits(*(f"{{instance_type: {t}, vcpu: 1}}" for t in types)))
    assert ("HPK404", "teams[1].absolute_borrow_limits[15]") in codes(report)
    assert ("HPK405", "teams[1].absolute_borrow_limits[2].instance_type") in codes(report)
    assert not [c for c, p in codes(report) if c == "HPK404" and p.endswith("quota[15]")]


def test_a_flexible_groups_geometry_must_suit_each_of_its_types(write_config):
    # Red team (mig3b.yaml): a p5 labelled all-1g.10gb with fallback ml.p4d.24xlarge passed, though an A100
    # 40GB cannot hold 7 x 1g.10gb (the same label on a p4d group is HPK224).
    mig = mig_group()
    report = run(write_config, (mig[0], mig[1].replace("      labels:\n",
                                                        "      fallback_instance_types: [ml.p4d.24xlarge]\n      labels:\n")))
    [finding] = [f for f in report.findings if f.code == "HPK224"]
    assert finding.message.startswith("nvidia.com/mig.config 'all-1g.10gb' of group 'mig' is no MIG geometry of its "
                                      "ml.p4d.24xlarge GPUs: one A100 40GB GPU cannot hold 7 x 1g.10gb")
    assert "no one geometry suits every type" in finding.hint


def test_the_geometry_a_hint_suggests_is_one_the_type_takes(write_config):
    # Red team (mig3c.yaml): HPK533 suggested all-1g.10gb for a p4d, which HPK224 refuses.
    from cdk_app.domain.mig_profiles import geometry_problem

    report = run(write_config, smith_partitions(4, itype="ml.p4d.24xlarge"))
    [finding] = [f for f in report.findings if f.code == "HPK533"]
    suggested = finding.hint.rsplit("e.g. ", 1)[1].rstrip(")")
    assert suggested == "mixed-4-1g.10gb"
    assert geometry_problem("ml.p4d.24xlarge", suggested) is None
    assert geometry_problem("ml.p4d.24xlarge", "all-1g.10gb") is not None
# The issue-31 red team's abl_gpu_on_mig and abl_wrongprof: limits held to what quotas are held to.
def smith_partition_quota_and_limit(limit: str) -> tuple[str, str]:
    return (SMITH, f"  - name: smith\n    absolute_borrow_limits:\n      - {limit}\n    quota:\n"
                   "      - instance_type: ml.p5.48xlarge\n        accelerator_partition: {type: mig-1g.10gb, count: 7}\n")


def test_an_absolute_limit_of_whole_gpus_where_every_gpu_is_partitioned(write_config):
    report = run(write_config, mig_group(),
                 smith_partition_quota_and_limit("{instance_type: ml.p5.48xlarge, accelerators: 8}"))
    assert ("HPK434", "teams[1].absolute_borrow_limits[0].accelerators") in codes(report)
    smith = next(r for r in report.reach if (r.team, r.instance_type) == ("smith", "ml.p5.48xlarge"))
    # 7 of the node's 56 partitions (1/8 of it): the 8 whole GPUs the limit names do not exist, so the reach
    # in instances stays the quota instead of jumping by the limit's 1 instance.
    assert (smith.quota.count, smith.reach.count) == (Fraction(1, 8), Fraction(1, 8))


def test_an_absolute_limit_of_whole_gpus_where_some_stay_whole_is_no_finding(write_config):
    report = run(write_config, mig_group(), (CPU_GROUP, CPU_GROUP + "    - name: whole\n      instance_type: "
                                                                   "ml.p5.48xlarge\n      count: 1\n"),
                 smith_partition_quota_and_limit("{instance_type: ml.p5.48xlarge, accelerators: 8}"))
    assert "HPK434" not in {c for c, _ in codes(report)}


def test_an_absolute_limit_of_a_profile_no_group_gives(write_config):
    report = run(write_config, mig_group(), smith_partition_quota_and_limit(
        "{instance_type: ml.p5.48xlarge, accelerator_partition: {type: mig-7g.80gb, count: 1}}"))
    assert ("HPK435", "teams[1].absolute_borrow_limits[0].accelerator_partition.type") in codes(report)
    smith = next(r for r in report.reach if (r.team, r.instance_type) == ("smith", "ml.p5.48xlarge"))
    assert smith.reach.count == smith.quota.count  # a 7g limit borrows none of the 1g node
