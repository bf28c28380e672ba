"""The capacity rules (free capacity, borrowing): behaviour mutation testing found untested, at the API models' limits."""

from __future__ import annotations

import pytest
from support.rule_runner import (
    IDLE_ENUM,
    JOHN_ONE_G5,
    codes,
    run,
)


def test_free_capacity_is_usable_while_a_team_borrows(write_config):
    assert codes(run(write_config, JOHN_ONE_G5)) == []

def test_free_capacity_with_idle_sharing_disabled(write_config):
    assert "Disabled" in IDLE_ENUM
    report = run(write_config, JOHN_ONE_G5,
                 ("cluster_policy:\n", "cluster_policy:\n  idle_resource_sharing: Disabled\n"))
    assert [(f.code, f.path, f.message) for f in report.findings] == [
        ("HPK503", "cluster_policy.idle_resource_sharing",
         "2 instances of ml.g5.12xlarge are held by no enabled team and idle_resource_sharing is Disabled, "
         "so no team can use them")]

@pytest.mark.parametrize("strategy", ["Lend", "DontLend"])
def test_free_capacity_without_a_borrowing_team(write_config, strategy):
    # Both teams lend or keep their quota; neither borrows, so the free g5 stay idle.
    report = run(write_config, JOHN_ONE_G5, ("    borrow_limit: 50\n", f"    sharing_strategy: {strategy}\n"),
                 ("  - name: smith\n", f"  - name: smith\n    sharing_strategy: {strategy}\n"))
    assert [(f.code, f.path, f.message) for f in report.findings] == [
        ("HPK503", "teams", "2 instances of ml.g5.12xlarge are held by no enabled team and no enabled team with a "
                            "quota on ml.g5.12xlarge uses LendAndBorrow, so no team can use them")]
    assert report.findings[0].hint == "give the capacity to teams, add a shared_pool, or let teams borrow"

def test_a_disabled_borrower_does_not_count(write_config):
    report = run(write_config, JOHN_ONE_G5, ("  - name: smith\n", "  - name: smith\n    sharing_strategy: Lend\n"),
                 ("    borrow_limit: 50\n", "    borrow_limit: 50\n    enabled: false\n"))
    assert ("HPK503", "teams") in codes(report)


def test_partition_quotas_need_the_partitioned_flexible_groups_nodes():
    # The red team's r3_f2 (tests/support/adversarial/issue31): 112 mig-1g.10gb of p5 are both nodes of flexmig
    # (all-1g.10gb: 7 per GPU, 8 GPUs a node), and 16 whole p4d GPUs two more nodes of it: 4 of 2, not 3.
    from support.paths import SUPPORT

    from cdk_app.validator.report import check_file
    report = check_file(SUPPORT / "adversarial" / "issue31" / "r3_f2.yaml")
    [finding] = [f for f in report.findings if f.code == "HPK532"]
    assert finding.path == "hyperpod.instance_groups[3].fallback_instance_types"
    assert finding.message == (
        "the teams' quotas need 4 instances from flexible group(s) flexmig (ml.p4d.24xlarge: 2, ml.p5.48xlarge "
        "partitions (all-1g.10gb): 2) beyond the single-type groups, but those groups can give 2 of them at once")
# --- HPK540: a quota's vCPU (SageMaker's full count) against the CPUs the type's nodes have ----------------------
# The base's g5 group runs two threads per core; threads_per_core 1 leaves each node 24 of the type's 48 vCPU
# (EC2 "Rules for specifying CPU options": vCPUs = cores x threads per core), so its four nodes have 96.
G5_ONE_THREAD = ("      threads_per_core: 2\n", "      threads_per_core: 1\n")


def test_a_quota_above_the_nodes_real_cpus_is_a_warning_at_the_entry(write_config):
    report = run(write_config, G5_ONE_THREAD)
    assert codes(report) == [("HPK540", "teams[0].quota[0]")]
    finding = report.findings[0]
    assert "holds 144 vCPU of ml.g5.12xlarge" in finding.message and "its nodes have 96 in all" in finding.message
    assert "leaves a node 24 of them" in finding.message
    assert finding.hint.startswith("set threads_per_core: 2 on group(s) gpu,")


def test_a_quota_within_the_nodes_real_cpus_is_fine(write_config):
    # smith's one instance (48 vCPU) fits the 96 CPUs; john's two (96) just do.
    assert codes(run(write_config, G5_ONE_THREAD, ("        count: 3\n", "        count: 2\n"))) == []


def test_a_disabled_team_has_no_queue_and_no_warning(write_config):
    report = run(write_config, G5_ONE_THREAD, ("    borrow_limit: 50\n", "    borrow_limit: 50\n    enabled: false\n"))
    assert "HPK540" not in [code for code, _ in codes(report)]


def test_quotas_over_the_full_capacity_are_hpk501_alone(write_config):
    report = run(write_config, G5_ONE_THREAD, ("        count: 3\n", "        count: 4\n"))
    assert {code for code, _ in codes(report)} == {"HPK501"}


def test_a_broken_threads_per_core_holds_the_warning_back(write_config):
    report = run(write_config, ("      threads_per_core: 2\n", "      threads_per_core: 7\n"))
    assert [f.code for f in report.findings] == ["HPK014"]
    assert [f.code for f in report.held_back] == ["HPK540"]
