"""The timeline: a moment at which Kueue does not settle ends the simulation with a finding, never a hang; jobs
left waiting when nothing more happens are reported; restored jobs hold their quota from the start."""

from __future__ import annotations

import yaml
from support.paths import ROOT
from support.simulate_scenarios import random_config, scenario_file

from cdk_app.config.loader import load_config
from cdk_app.config.yaml_source import parse_yaml
from cdk_app.domain.kueue_mapping import Choices
from cdk_app.simulate.run import simulate_environment
from cdk_app.simulate.workloads import parse_workloads

# Random scenario 122 of tests/realk8s/test_simulate_agreement.py (6 teams, 7 nodes, fair sharing): at 60044 s
# team-001's job-00039 preempts team-002's job-00037, which is re-admitted ahead of it, again and again. The real
# Kueue v0.19.2 (kueue-oracle --session) does not settle there either; that test compares the two on it.
LOOP_SEED = 122


def _workload(config, document, name="w.yaml"):
    data, source = parse_yaml(yaml.safe_dump(document), name)
    return parse_workloads(data, source, config)


def test_a_preemption_loop_stops_the_simulation_with_a_finding():
    import random

    rng = random.Random(LOOP_SEED)
    config = random_config(LOOP_SEED, teams=rng.randint(2, 8), nodes=rng.randint(4, 16))
    workload = scenario_file(LOOP_SEED, config, rng.randint(20, 60), 24 * 3600)
    summary, findings, timeline = simulate_environment(config, workload, Choices())
    assert summary["loop"]["at"] == 60044
    assert {"job-00037 (team-002)", "job-00039 (team-001)"} <= set(summary["loop"]["jobs"])
    assert [f.code for f in findings] == ["HPK805"]
    assert timeline.end == 60044


def test_a_restored_job_holds_its_quota_and_a_new_one_waits_for_it():
    config = load_config(ROOT / "config" / "dev.yaml").config
    per_pod = {"instance_type": "ml.g5.12xlarge", "accelerators": 4}
    workload = _workload(config, {"jobs": [
        {"name": "old", "team": "smith", "pods": 1, "per_pod": per_pod, "running_since": -100, "runtime": 400},
        {"name": "new", "team": "smith", "pods": 1, "per_pod": {**per_pod, "accelerators": 4}, "submit_at": 10,
         "runtime": 60},
        {"name": "john-all", "team": "john", "pods": 3, "per_pod": per_pod, "submit_at": 0, "runtime": 1000}]})
    summary, findings, _ = simulate_environment(config, workload, Choices())
    new = next(j for j in summary["jobs"] if j["name"] == "new")
    # smith's 4 are held by `old` until 300 s (it ran 100 s of its 400 before the start); john holds his 12
    assert [(e["at"], e["event"]) for e in new["events"]] == [(10, "submitted"), (300, "admitted"), (360, "finished")]
    assert findings == []
