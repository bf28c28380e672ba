"""Team reach: quota plus what a team may borrow, on small configs built for each rule."""

from __future__ import annotations

import yaml

from cdk_app.config.loader import load_config
from cdk_app.domain.reach import team_reach

HEAD = {"environment": "t", "account": "111122223333", "region": "us-east-1",
        "availability_zone_ids": ["use1-az4", "use1-az6"],
        "hyperpod": {"instance_groups": [{"name": "gpu", "instance_type": "ml.p4d.24xlarge", "count": 10}]}}


def team(name, count, strategy="LendAndBorrow", **extra):
    return {"name": name, "sharing_strategy": strategy,
            "quota": [{"instance_type": "ml.p4d.24xlarge", "count": count}], **extra}


def reach(write_config, teams, **top):
    path = write_config(yaml.safe_dump({**HEAD, "teams": teams, **top}))
    return {r.team: (r.quota.count, r.reach.count, r.capped_by) for r in team_reach(load_config(path).config)}


def test_default_borrow_limit_is_half_the_quota(write_config):
    assert reach(write_config, [team("a", 4), team("b", 6, "Lend")])["a"] == (4, 6, "borrow limit")


def test_lend_and_dont_lend_never_borrow(write_config):
    rows = reach(write_config, [team("a", 2, "Lend"), team("b", 2, "DontLend"), team("c", 6)])
    assert rows["a"] == (2, 2, None) and rows["b"] == (2, 2, None)


def test_dont_lend_quota_is_not_borrowable(write_config):
    rows = reach(write_config, [team("a", 4, borrow_limit=500), team("b", 6, "DontLend")])
    assert rows["a"] == (4, 4, "lenders")


def test_shared_pool_lends_the_gap(write_config):
    rows = reach(write_config, [team("a", 4, borrow_limit=500), team("b", 2, "DontLend")],
                 shared_pool={"name": "pool"})
    assert rows == {"a": (4, 8, "lenders"), "b": (2, 2, None)}


def test_disabled_allocations_count_neither_way(write_config):
    rows = reach(write_config, [team("a", 4, borrow_limit=100), team("b", 6, "Lend", enabled=False)])
    assert rows == {"a": (4, 4, "lenders")}


def test_fractions_of_instances_stay_exact(write_config):
    teams = [{"name": "a", "borrow_limit": 50, "quota": [{"instance_type": "ml.p4d.24xlarge", "accelerators": 3}]},
             team("b", 9, "Lend")]
    path = write_config(yaml.safe_dump({**HEAD, "teams": teams}))
    [row] = [r for r in team_reach(load_config(path).config) if r.team == "a"]
    assert (row.reach.accelerators, row.reach.count * 16) == (4.5, 9)
