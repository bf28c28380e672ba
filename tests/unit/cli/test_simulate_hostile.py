"""Hostile input for simulate and explain (a red team's classes, and cases of our own for each): a malformed
snapshot or workload is refused by field with exit 2 or 1 - never a traceback or exit 3; the plot never blocks
or crashes; impossible starting states are findings; the table keeps the order things happened in."""

from __future__ import annotations

import json
import os

import pytest
from support.paths import ROOT

from cdk_app.config.loader import load_config
from cdk_app.simulate.snapshot import SnapshotError, parse_snapshot

DEV = str(ROOT / "config" / "dev.yaml")
SEED = str(ROOT / "config" / "workloads" / "dev-seed-002.yaml")
DEV_CONFIG = load_config(ROOT / "config" / "dev.yaml").config


def _workload(name="r1", team="john", gpus=4, pods=1, admitted=True, flavor="ml.g5.12xlarge"):
    wl = {"kind": "Workload", "metadata": {"name": name, "namespace": f"hyperpod-ns-{team}",
                                           "creationTimestamp": "2026-11-27T10:00:00Z"},
          "spec": {"queueName": f"hyperpod-ns-{team}-localqueue", "priority": 0, "podSets": [
              {"name": "main", "count": pods, "template": {"spec": {"containers": [
                  {"name": "c", "resources": {"requests": {"nvidia.com/gpu": str(gpus)}}}]}}}]}}
    if admitted:
        wl["status"] = {"conditions": [{"type": "QuotaReserved", "status": "True",
                                        "lastTransitionTime": "2026-11-27T10:01:00Z"}],
                        "admission": {"podSetAssignments": [{"name": "main", "flavors": {"nvidia.com/gpu": flavor}}]}}
    return wl


def _broken(path: tuple, value) -> dict:
    wl = _workload()
    node = wl
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return {"kind": "List", "items": [wl]}


@pytest.mark.parametrize(("document", "words"), [
    (_broken(("metadata",), "x"), "items[0].metadata: expected a mapping"),
    (_broken(("status",), "x"), "items[0].status: expected a mapping"),
    (_broken(("spec",), [1]), "items[0].spec: expected a mapping"),
    (_broken(("spec", "podSets"), {"a": 1}), "spec.podSets: expected a list"),
    (_broken(("spec", "podSets"), ["a"]), "spec.podSets[0]: expected a mapping"),
    (_broken(("spec", "priority"), "high"), "spec.priority: 'high' is not a whole number"),
    (_broken(("spec", "podSets", 0, "count"), True), "count: True is not a whole number"),
    (_broken(("status", "admission"), "x"), "status.admission: expected a mapping"),
    (_broken(("status", "admission", "podSetAssignments", 0, "flavors", "nvidia.com/gpu"), 5),
     "5 is not an instance type of the config's cluster"),
    (_broken(("status", "admission", "podSetAssignments", 0, "flavors", "nvidia.com/gpu"), "ml.p5.48xlarge"),
     "'ml.p5.48xlarge' is not an instance type of the config's cluster"),
    (_broken(("metadata", "creationTimestamp"), "2026-11-27T10:00:00"), "has no time zone"),
    (_broken(("metadata", "creationTimestamp"), 5), "no timestamp"),
    (_broken(("spec", "podSets", 0, "template", "spec", "containers", 0, "resources"), [1]),
     "resources: expected a mapping"),
    (_broken(("spec", "podSets", 0, "template", "spec", "containers", 0, "resources", "requests"),
             {"nvidia.com/gpu": "-4"}), "'-4' is not a quantity of 0 or more"),
    ({"kind": "List", "items": [_workload(), _workload()]}, "hyperpod-ns-john/r1 is listed twice"),
    ({"kind": "List", "items": [_workload(admitted=False), _workload(admitted=False)]}, "is listed twice"),
])
def test_a_malformed_snapshot_is_refused_by_field(document, words):
    with pytest.raises(SnapshotError) as err:
        parse_snapshot(json.dumps(document).encode(), "w.json", DEV_CONFIG, 3600)
    assert words in str(err.value)


def test_what_a_snapshot_leaves_out_is_counted():
    document = {"kind": "List", "items": [_workload(admitted=False), {"kind": "ClusterQueue"}, 7,
                                          _workload("other", team="nobody")]}
    snapshot = parse_snapshot(json.dumps(document).encode(), "w.json", DEV_CONFIG, 3600)
    assert len(snapshot.jobs) == 1
    assert snapshot.left_out == {"not a Workload": 2, "not in a team's namespace and queue": 1}


def _cli(*args, stdin=None):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "cdk_app", *args], cwd=ROOT, capture_output=True, text=True,
                          input=stdin, env={**os.environ})


@pytest.mark.slow
def test_running_jobs_beyond_the_cluster_are_an_error_and_beyond_a_team_s_reach_a_warning(tmp_path):
    over = tmp_path / "over.yaml"
    over.write_text("jobs:\n"
                    "  - {name: r1, team: smith, pods: 4, per_pod: {instance_type: ml.g5.12xlarge, accelerators: 4},"
                    " running_since: -600, runtime: 3600}\n"
                    "  - {name: r2, team: john, pods: 4, per_pod: {instance_type: ml.g5.12xlarge, accelerators: 4},"
                    " running_since: -600, runtime: 3600}\n")
    result = _cli("simulate", DEV, "--workload", str(over))
    assert result.returncode == 1 and "HPK806" in result.stderr and "the cluster has 16 accelerators" in result.stderr
    reach = tmp_path / "reach.yaml"
    reach.write_text("jobs:\n  - {name: r1, team: smith, pods: 3, per_pod: {instance_type: ml.g5.12xlarge,"
                     " accelerators: 4}, running_since: -600, runtime: 3600}\n")
    result = _cli("simulate", DEV, "--workload", str(reach))
    assert result.returncode == 0 and "HPK807 warning" in result.stderr
    assert "above the 8 accelerators it can reach" in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["fifo", "dir", "missing"])
def test_the_plot_never_blocks_or_crashes(tmp_path, kind):
    target = {"fifo": tmp_path / "f.svg", "dir": tmp_path, "missing": tmp_path / "no" / "x.svg"}[kind]
    if kind == "fifo":
        os.mkfifo(target)
    result = _cli("simulate", DEV, "--workload", SEED, "--plot", str(target))
    assert result.returncode == 2 and "--plot" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_the_plot_of_a_run_without_task_governance_jobs_is_refused():
    result = _cli("simulate", str(ROOT / "config" / "batch-example.yaml"), "--workload",
                  str(ROOT / "config" / "workloads" / "batch-seed-004.yaml"), "--plot", "/tmp/never-written.svg")
    assert result.returncode == 2 and "nothing to draw" in result.stderr


@pytest.mark.slow
def test_standard_input_is_read_once_for_a_comparison():
    with open(SEED) as seed:
        result = _cli("simulate", DEV, "--workload", "-", "--against-ref", "HEAD", stdin=seed.read())
    assert result.returncode == 0, result.stderr
    assert "against HEAD" in result.stdout


@pytest.mark.slow
def test_the_table_shows_a_preemption_after_its_cause():
    lines = _cli("simulate", DEV, "--workload", SEED).stdout.splitlines()
    submitted = next(i for i, line in enumerate(lines) if "john-eval" in line and "submitted" in line)
    preempted = next(i for i, line in enumerate(lines) if "preempted by john-eval" in line)
    assert submitted < preempted


@pytest.mark.slow
def test_a_job_too_large_for_any_node_is_in_the_report_too(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text("jobs:\n  - {name: wide, team: john, per_pod: {instance_type: ml.g5.12xlarge, accelerators: 8},"
                    " runtime: 60}\n  - {name: ok, team: john, per_pod: {instance_type: ml.g5.12xlarge,"
                    " accelerators: 4}, runtime: 60}\n")
    result = _cli("simulate", DEV, "--workload", str(path), "--format", "json")
    doc = json.loads(result.stdout)
    wide = next(j for j in doc["jobs"] if j["name"] == "wide")
    assert [e["event"] for e in wide["events"]] == ["submitted", "unschedulable"]
    assert next(t for t in doc["teams"] if t["team"] == "john")["unschedulable"] == 1


@pytest.mark.slow
def test_explain_of_a_batch_job_says_where_its_story_is():
    result = _cli("explain", str(ROOT / "config" / "batch-example.yaml"), "--workload",
                  str(ROOT / "config" / "workloads" / "batch-seed-004.yaml"), "--job", "exp1-p10")
    assert result.returncode == 2 and "is an AWS Batch job" in result.stderr


BATCH = str(ROOT / "config" / "batch-example.yaml")


def _batch(item: str) -> str:
    return f"batch_jobs:\n  - {{{item}}}\n"


@pytest.mark.slow
@pytest.mark.parametrize(("config", "text", "words"), [
    (DEV, "jobs:\n  - {name: a, team: john, per_pod: {memory_gib: .inf}, runtime: 10}\n", "is not a finite number"),
    (DEV, "jobs:\n  - {name: a, team: john, per_pod: {vcpu: .nan}, runtime: 10}\n", "is not a finite number"),
    (DEV, "jobs: {}\n", "jobs is not a list"),
    (DEV, "jobs: 0\n", "jobs is not a list"),
    (DEV, 'jobs:\n  - {name: a, team: john, "\\e]0;pwn\\ak": 1, per_pod: {vcpu: 1}, runtime: 1}\n', "\\x1b]0;pwn\\x07k"),
    (BATCH, _batch("name: a, queue: prod-p4d, share: ProdExp1, instances: 1, submit_at: 0, runtime: 99999999999999999999"),
     "runtime: 99999999999999999999 is not allowed"),
    (BATCH, _batch("name: a, queue: prod-p4d, share: ProdExp1, instances: 100000, submit_at: 0, runtime: 60"),
     "instances: 100000 is not allowed (1-10000)"),
    (BATCH, _batch("name: '  ', queue: prod-p4d, share: ProdExp1, instances: 1, submit_at: 0, runtime: 60"),
     "is not a Batch job name"),
])
def test_a_bad_entry_is_a_finding_never_a_crash(tmp_path, config, text, words):
    path = tmp_path / "w.yaml"
    path.write_text(text)
    result = _cli("simulate", config, "--workload", str(path))
    assert result.returncode == 1, result.stderr
    assert words in result.stderr and "\x1b" not in result.stderr


def test_prod_s_required_priority_class_is_required_of_simulated_jobs(tmp_path):
    from cdk_app.simulate.workloads import WorkloadInvalid, load_workloads

    prod = load_config(ROOT / "config" / "prod.yaml").config
    assert prod.cluster_policy.require_priority_class
    team = prod.teams[0].name
    path = tmp_path / "w.yaml"
    path.write_text(f"jobs:\n  - {{name: a, team: {team}, per_pod: {{vcpu: 1}}, runtime: 10}}\n")
    with pytest.raises(WorkloadInvalid) as err:
        load_workloads(str(path), prod)
    assert "the cluster policy requires a priority class" in err.value.findings[0].message
