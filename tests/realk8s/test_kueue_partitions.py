"""GPU partitions in Kueue terms, judged by the real Kueue v0.19.2: the queues the mapping makes for a partitioned
group (support.mig_config: 56 mig-1g.10gb, john 20 with borrow_limit 50, smith 30 with an absolute limit of 2)
pass its webhook validation, and its scheduler admits a job of partitions exactly up to the reach `validate`
shows and `job` accepts (cdk_app.domain.reach.partition_reach), no further."""

from __future__ import annotations

from typing import Any

import pytest
from support.kueue_oracle import oracle_bin, run_oracle
from support.kueue_session import setup_document
from support.mig_config import P5, PROFILE, RESOURCE, write_mig_config

from cdk_app.config.loader import load_config
from cdk_app.config.names import local_queue, team_namespace
from cdk_app.domain.reach import partition_reach


@pytest.fixture(scope="module")
def oracle():
    return oracle_bin() / "kueue-oracle"


@pytest.fixture
def config(tmp_path):
    return load_config(write_mig_config(tmp_path)).config


def _job(team: str, partitions: int) -> dict[str, Any]:
    """One pod of `partitions` partitions, 1 vCPU and 1Gi (what `job --mig ... --cpu 1 --memory 1Gi` writes)."""
    container = {"name": "c", "resources": {"requests": {RESOURCE: str(partitions), "cpu": "1", "memory": "1Gi"}}}
    return {"metadata": {"name": f"{team}-{partitions}", "namespace": team_namespace(team), "uid": f"{team}-{partitions}"},
            "spec": {"queueName": local_queue(team), "priority": 0,
                     "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [container]}}}]}}


def _state(oracle, config, job: dict[str, Any]) -> dict[str, Any]:
    output = run_oracle(oracle, {"name": job["metadata"]["name"],
                                 "input": {**setup_document(config), "cycles": 1, "workloads": [job]}})
    assert not output.get("validationErrors"), output["validationErrors"]
    [workload] = output["workloads"]
    return workload


@pytest.mark.parametrize("team", ["john", "smith"])
def test_kueue_admits_a_teams_partitions_up_to_its_reach_and_not_one_more(oracle, config, team):
    [row] = [r for r in partition_reach(config) if r.team == team and (r.instance_type, r.profile) == (P5, PROFILE)]
    assert (row.quota, row.reach) == {"john": (20, 30), "smith": (30, 32)}[team]
    admitted = _state(oracle, config, _job(team, row.reach))
    assert admitted["state"] in ("Admitted", "QuotaReserved"), admitted
    assert admitted["flavors"][f"main/{RESOURCE}"] == P5 and admitted["borrowing"]
    assert _state(oracle, config, _job(team, row.reach + 1))["state"] == "Pending"
