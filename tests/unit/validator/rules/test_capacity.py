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
