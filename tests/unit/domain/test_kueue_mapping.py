"""The config in Kueue terms, against the worked example of the task-governance mapping reference (AWS's
observed nominal quota: Count x the whole instance; BorrowLimit read as a percentage of it) and Kueue's own
naming rules for what task governance creates."""

from __future__ import annotations

from support.paths import ROOT

from cdk_app.config.loader import load_config
from cdk_app.config.model import QuotaEntry
from cdk_app.domain.kueue_mapping import Choices, governance_objects, quantity

PROD = load_config(ROOT / "config" / "prod.yaml").config


def _with_team(**team) -> list[dict]:
    base = PROD.teams[0].model_copy(update={"name": "a", "quota": (QuotaEntry(instance_type="ml.p5.48xlarge", count=2),),
                                            **team})
    return governance_objects(PROD.model_copy(update={"teams": (base,), "shared_pool": None}))


def _p5(objects: list[dict]) -> dict[str, dict[str, str]]:
    [queue] = [o for o in objects if o["kind"] == "ClusterQueue"]
    [flavor] = [f for f in queue["spec"]["resourceGroups"][0]["flavors"] if f["name"] == "ml.p5.48xlarge"]
    return {r["name"]: {k: v for k, v in r.items() if k != "name"} for r in flavor["resources"]}


def test_the_worked_example_two_p5_with_borrow_limit_50():
    p5 = _p5(_with_team(sharing_strategy="LendAndBorrow", borrow_limit=50))
    assert p5["nvidia.com/gpu"] == {"nominalQuota": "16", "borrowingLimit": "8"}
    assert p5["cpu"] == {"nominalQuota": "384", "borrowingLimit": "192"}
    assert p5["memory"] == {"nominalQuota": "4096Gi", "borrowingLimit": "2048Gi"}


def test_lend_never_borrows_and_dont_lend_lends_nothing():
    assert _p5(_with_team(sharing_strategy="Lend"))["nvidia.com/gpu"] == {"nominalQuota": "16", "borrowingLimit": "0"}
    assert _p5(_with_team(sharing_strategy="DontLend"))["nvidia.com/gpu"] == {
        "nominalQuota": "16", "borrowingLimit": "0", "lendingLimit": "0"}


def test_names_are_task_governances():
    objects = _with_team()
    names = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objects}
    assert ("ClusterQueue", None, "hyperpod-ns-a-clusterqueue") in names
    assert ("LocalQueue", "hyperpod-ns-a", "hyperpod-ns-a-localqueue") in names
    assert ("ResourceFlavor", None, "ml.p5.48xlarge") in names
    assert {n for k, _, n in names if k == "WorkloadPriorityClass"} == {
        f"{pc.name}-priority" for pc in PROD.cluster_policy.priority_classes}


def test_the_choices_are_reported_and_change_the_objects():
    assert Choices().describe()["reclaim_within_cohort"] == "Any"
    strict = governance_objects(PROD, Choices(reclaim_within_cohort="Never", cohort="other"))
    queue = next(o for o in strict if o["kind"] == "ClusterQueue")
    assert queue["spec"]["preemption"]["reclaimWithinCohort"] == "Never" and queue["spec"]["cohortName"] == "other"


def test_quantities_never_round_up():
    assert quantity(3) == "3" and quantity(1.5) == "1500m" and quantity(0.5, "Gi") == "512Mi"


def test_idle_resource_sharing_enabled_puts_the_unallocated_capacity_in_the_cohort():
    # One team of 2 of prod's 10 p5: 8 are unallocated, the cohort's own quota, which the team borrows.
    [cohort] = [o for o in _with_team(sharing_strategy="LendAndBorrow") if o["kind"] == "Cohort"]
    assert cohort["metadata"]["name"] == Choices().cohort
    [p5] = [f for f in cohort["spec"]["resourceGroups"][0]["flavors"] if f["name"] == "ml.p5.48xlarge"]
    assert {r["name"]: r["nominalQuota"] for r in p5["resources"]}["nvidia.com/gpu"] == "64"


def test_idle_resource_sharing_disabled_lends_and_borrows_nothing():
    policy = PROD.cluster_policy.model_copy(update={"idle_resource_sharing": "Disabled"})
    objects = governance_objects(PROD.model_copy(update={"cluster_policy": policy}))
    assert not [o for o in objects if o["kind"] == "Cohort"]
    assert {r["borrowingLimit"] for q in objects if q["kind"] == "ClusterQueue"
            for f in q["spec"]["resourceGroups"][0]["flavors"] for r in f["resources"]} == {"0"}


# --- GPU partitions -----------------------------------------------------------------------------------------------
def test_partitions_become_the_profiles_resource_on_the_types_flavor(tmp_path):
    """john 20 (borrow_limit 50: 10 more), smith 30 with an absolute limit of 2, of the 56 the p5 gives: every queue
    covers nvidia.com/mig-1g.10gb (the device plugin's mixed-strategy name), the cohort lends the 6 nobody holds."""
    from support.mig_config import P5, RESOURCE, write_mig_config

    from cdk_app.config.loader import load_config as load
    objects = governance_objects(load(write_mig_config(tmp_path)).config)

    def on_p5(queue_name: str) -> dict[str, dict[str, str]]:
        [obj] = [o for o in objects if o["metadata"]["name"] == queue_name]
        [group] = obj["spec"]["resourceGroups"]
        assert RESOURCE in group["coveredResources"]
        [flavor] = [f for f in group["flavors"] if f["name"] == P5]
        return {r["name"]: {k: v for k, v in r.items() if k != "name"} for r in flavor["resources"]}

    assert on_p5("hyperpod-ns-john-clusterqueue")[RESOURCE] == {"nominalQuota": "20", "borrowingLimit": "10"}
    assert on_p5("hyperpod-ns-smith-clusterqueue")[RESOURCE] == {"nominalQuota": "30", "borrowingLimit": "2"}
    assert on_p5("hyperpod-teams")[RESOURCE] == {"nominalQuota": "6"}
    # A partitioned GPU is no whole GPU: the cohort lends none of the p5's 8 (the device plugin offers none).
    assert on_p5("hyperpod-teams")["nvidia.com/gpu"] == {"nominalQuota": "0"}


def test_without_partitions_the_queues_cover_what_they_did():
    objects = governance_objects(PROD)
    assert not [r for o in objects if o["kind"] == "ClusterQueue"
                for r in o["spec"]["resourceGroups"][0]["coveredResources"] if "mig-" in r]
