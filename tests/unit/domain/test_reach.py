"""Team reach: quota plus what a team may borrow, on small configs built for each rule."""

from __future__ import annotations

import pytest
import yaml
from support.paths import ROOT

from cdk_app.config.loader import load_config
from cdk_app.domain.kueue_mapping import governance_objects
from cdk_app.domain.reach import SHARING_DISABLED, admissible, borrowers, team_reach, unallocated
from cdk_app.kubernetes.job_templates import JobRequest, JobSpecError, check
from cdk_app.validator.report import check_file

G5 = "ml.g5.12xlarge"

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
    # b's quota is in no queue, so its 6 instances are unallocated: a borrows them only as idle capacity.
    rows = reach(write_config, [team("a", 4, borrow_limit=100), team("b", 6, "Lend", enabled=False)],
                 cluster_policy={"idle_resource_sharing": "Disabled"})
    assert rows == {"a": (4, 4, SHARING_DISABLED)}
    rows = reach(write_config, [team("a", 4, borrow_limit=100), team("b", 6, "Lend", enabled=False)])
    assert rows == {"a": (4, 8, "borrow limit")}


def test_fractions_of_instances_stay_exact(write_config):
    teams = [{"name": "a", "borrow_limit": 50, "quota": [{"instance_type": "ml.p4d.24xlarge", "accelerators": 3}]},
             team("b", 9, "Lend")]
    path = write_config(yaml.safe_dump({**HEAD, "teams": teams}))
    [row] = [r for r in team_reach(load_config(path).config) if r.team == "a"]
    assert (row.reach.accelerators, row.reach.count * 16) == (4.5, 9)


def test_idle_sharing_disabled_means_no_team_borrows(write_config):
    # The SchedulerConfig's IdleResourceSharing Disabled: b lends, yet a borrows none of it.
    rows = reach(write_config, [team("a", 4, borrow_limit=100), team("b", 6, "Lend")],
                 cluster_policy={"idle_resource_sharing": "Disabled"})
    assert rows == {"a": (4, 4, SHARING_DISABLED), "b": (6, 6, None)}


def test_unallocated_capacity_is_lent_when_idle_sharing_is_enabled(write_config):
    # 10 instances, 4 + 1 allocated: "unallocated resources are ... made available for entities to borrow".
    rows = reach(write_config, [team("a", 4, borrow_limit=500), team("b", 1, "DontLend")])
    assert rows == {"a": (4, 9, "lenders"), "b": (1, 1, None)}
    rows = reach(write_config, [team("a", 4, borrow_limit=500), team("b", 1, "DontLend")],
                 cluster_policy={"idle_resource_sharing": "Disabled"})
    assert rows["a"] == (4, 4, SHARING_DISABLED)


def test_a_team_borrows_unallocated_capacity_only_on_types_it_has_a_quota_for(write_config):
    head = {**HEAD, "hyperpod": {"instance_groups": [
        {"name": "gpu", "instance_type": "ml.p4d.24xlarge", "count": 2},
        {"name": "cpu", "instance_type": "ml.m5.2xlarge", "count": 4}]}}
    path = write_config(yaml.safe_dump({**head, "teams": [team("a", 2, borrow_limit=500)]}))
    config = load_config(path).config
    assert [(r.instance_type, r.reach.count) for r in team_reach(config)] == [("ml.p4d.24xlarge", 2)]
    assert borrowers(config, "ml.m5.2xlarge") == [] and unallocated(config)["ml.m5.2xlarge"].count == 4


# --- One rule: validate's reach and HPK503, job's refusals and the Kueue mapping, on configs derived from dev.yaml
DEV_TEXT = (ROOT / "config" / "dev.yaml").read_text()
JOHN_G5 = "      - instance_type: ml.g5.12xlarge\n        count: 3\n"
SMITH = "    sharing_strategy: LendAndBorrow\n    borrow_limit: 100\n"


def _dev(write_config, sharing, john_g5, smith_strategy, smith_limit):
    text = (DEV_TEXT.replace("idle_resource_sharing: Enabled", f"idle_resource_sharing: {sharing}")
            .replace(JOHN_G5, f"      - instance_type: ml.g5.12xlarge\n        count: {john_g5}\n")
            .replace(SMITH, f"    sharing_strategy: {smith_strategy}\n    borrow_limit: {smith_limit}\n"))
    assert text.count(f"idle_resource_sharing: {sharing}") == 1 and f"borrow_limit: {smith_limit}" in text
    return write_config(text)


@pytest.mark.parametrize("sharing", ["Enabled", "Disabled"])
@pytest.mark.parametrize("john_g5", [0, 1, 3])
@pytest.mark.parametrize("smith_strategy, smith_limit", [("LendAndBorrow", 100), ("LendAndBorrow", 300),
                                                          ("Lend", 100), ("DontLend", 100)])
def test_validate_job_and_the_kueue_mapping_follow_one_reach_rule(write_config, sharing, john_g5, smith_strategy,
                                                                  smith_limit):
    report = check_file(_dev(write_config, sharing, john_g5, smith_strategy, smith_limit), "dev.yaml")
    config = report.loaded.config
    [row] = [r for r in report.reach if r.team == "smith" and r.instance_type == G5]
    # job admits exactly the node counts within the reach validate shows (4 GPUs a node, 4 nodes in the cluster).
    for nodes in range(1, 5):
        request = JobRequest(team="smith", priority=None, name="t", image="i", command=("true",), nodes=nodes)
        fits = nodes * 4 <= row.reach.accelerators
        try:
            check(config, request)
            assert fits, (nodes, row)
        except JobSpecError as err:
            assert not fits and "can ever get" in str(err), (nodes, row, err)
    # HPK503 about the free g5 exactly when some are unallocated and no team's reach can take them.
    free = unallocated(config)[G5].count
    usable = any(r.reach.count > r.quota.count for r in report.reach if r.instance_type == G5)
    flagged = any(f.code == "HPK503" and G5 in f.message for f in report.findings)
    assert flagged == (free > 0 and not borrowers(config, G5)), (free, report.findings)
    if free > 0 and usable:
        assert not flagged
    # Kueue: borrowing limits only while sharing is on; the unallocated g5 as the cohort's own quota.
    objects = governance_objects(config)
    limits = {r["borrowingLimit"] for q in objects if q["kind"] == "ClusterQueue"
              for f in q["spec"]["resourceGroups"][0]["flavors"] for r in f["resources"]}
    if sharing == "Disabled":
        assert limits == {"0"} and row.reach == row.quota
    cohorts = [o for o in objects if o["kind"] == "Cohort"]
    assert bool(cohorts) == (sharing == "Enabled" and free > 0)
    for cohort in cohorts:
        [g5] = [f for f in cohort["spec"]["resourceGroups"][0]["flavors"] if f["name"] == G5]
        assert {r["name"]: r["nominalQuota"] for r in g5["resources"]}["nvidia.com/gpu"] == str(4 * free)


def test_a_flexible_group_is_lent_once_not_under_each_of_its_types():
    # The issue-31 red team's fl.yaml: group gpu = 4 x ml.g5.12xlarge, falling back to ml.g5.24xlarge; john
    # reserves 2 of the first type, smith 2 of the second - all 4 instances. Nothing is left to lend, so
    # validate's reach, job's node counts and the Kueue objects (simulate, explain) all stop at each quota; the
    # red team's wl_fl.yaml (4 nodes for each team at once: 8 nodes on a 4-node group) admits neither job.
    from support.paths import SUPPORT

    from cdk_app.config.yaml_source import parse_yaml
    from cdk_app.domain.kueue_mapping import Choices
    from cdk_app.simulate.run import simulate_environment
    from cdk_app.simulate.workloads import parse_workloads

    red_team = SUPPORT / "adversarial" / "issue31"
    report = check_file(red_team / "fl.yaml")
    config = report.loaded.config
    free = unallocated(config)
    assert free["ml.g5.12xlarge"].is_zero() and free["ml.g5.24xlarge"].is_zero()
    reach = {(r.team, r.instance_type): r for r in report.reach}
    assert reach[("john", "ml.g5.12xlarge")].reach.count == 2 and reach[("smith", "ml.g5.24xlarge")].reach.count == 2
    smith = JobRequest(team="smith", priority=None, name="t", image="i", command=("true",), nodes=4,
                       instance_type="ml.g5.24xlarge")
    with pytest.raises(JobSpecError, match="can ever get"):
        check(config, smith)
    assert not [o for o in governance_objects(config) if o["kind"] == "Cohort"]  # no unallocated quota to lend
    data, source = parse_yaml((red_team / "wl_fl.yaml").read_text(), "wl_fl.yaml")
    _, _, timeline = simulate_environment(config, parse_workloads(data, source, config), Choices())
    assert not [e for r in timeline.jobs for e in r.events if e.event == "admitted"]


def test_a_flexible_groups_idle_instances_are_lent_as_its_first_type(write_config):
    from support.paths import SUPPORT
    text = (SUPPORT / "adversarial" / "issue31" / "fl.yaml").read_text()
    old = "  - instance_type: ml.g5.24xlarge\n    count: 2\n"
    assert text.count(old) == 1
    config = check_file(write_config(text.replace(old, old.replace("count: 2", "count: 1")))).loaded.config
    free = unallocated(config)
    # smith now holds 1 of the group's 4 instances and john 2: the one left is lent once, as ml.g5.12xlarge.
    assert (free["ml.g5.12xlarge"].count, free["ml.g5.24xlarge"].count) == (1, 0)


# --- admissible: what Kueue may admit on a type at once (the autoscaled NodePools' size) ----------------------


def admitted(write_config, teams, **top):
    path = write_config(yaml.safe_dump({**HEAD, "teams": teams, **top}))
    return admissible(load_config(path).config)["ml.p4d.24xlarge"].count


def test_the_unallocated_capacity_adds_what_the_borrowers_may_take_of_it(write_config):
    # 10 instances, 4 held: a's 50 % borrow limit takes 2 of the 6 unallocated; with 500 % it would take 20 but
    # only 6 are there.
    assert admitted(write_config, [team("a", 4)]) == 6
    assert admitted(write_config, [team("a", 4, borrow_limit=500)]) == 10
    # Borrowing a lender's idle quota moves use within what the allocations hold: it adds nothing.
    assert admitted(write_config, [team("a", 4, borrow_limit=500), team("b", 6, "Lend")]) == 10
    assert admitted(write_config, [team("a", 4, "Lend")]) == 4
    assert admitted(write_config, [team("a", 4, borrow_limit=500)],
                    cluster_policy={"idle_resource_sharing": "Disabled"}) == 4


def test_a_shared_pool_that_borrows_adds_its_borrowing_limit(write_config):
    # The pool holds the 6 instances of the single-type group the team leaves; a flexible group's 2 instances are
    # no allocation's (the pool holds none of a flexible group) and are lent as the group's first type. Only the
    # pool may borrow them (the team lends): 50 % of its 6 is 3, of which the 2 are there.
    groups = {"instance_groups": [*HEAD["hyperpod"]["instance_groups"], {
        "name": "flex", "instance_type": "ml.p4d.24xlarge", "fallback_instance_types": ["ml.p5.48xlarge"], "count": 2}]}
    teams = [team("a", 4, "Lend")]
    assert admitted(write_config, teams, hyperpod=groups, shared_pool={"name": "pool", "sharing_strategy": "LendAndBorrow"}) == 12
    assert admitted(write_config, teams, hyperpod=groups, shared_pool={"name": "pool"}) == 10
def test_a_partitioned_flexible_groups_idle_nodes_are_lent_once():
    # r3_f3_partitions_only.yaml: flexmig is 2 x p5 or p4de, all-1g.10gb (56 mig-1g.10gb a node, NVIDIA's MIG
    # profiles x 8 GPUs); miggy holds 56 of p4de, one node. The other node is lent once, as the group's first
    # type (p5), not as 56 more p4de as well: miggy cannot borrow it as p4de while another team borrows it as p5.
    from support.paths import SUPPORT

    from cdk_app.domain.reach import partition_reach, unallocated_partitions
    config = load_config(SUPPORT / "adversarial" / "issue31" / "r3_f3_partitions_only.yaml").config
    assert unallocated_partitions(config) == {("ml.p5.48xlarge", "mig-1g.10gb"): 56,
                                              ("ml.p4de.24xlarge", "mig-1g.10gb"): 0}
    [row] = [r for r in partition_reach(config) if r.team == "miggy"]
    assert (row.quota, row.reach) == (56, 56)
    assert unallocated(config)["ml.p5.48xlarge"].count == 1 and unallocated(config)["ml.p4de.24xlarge"].count == 0
