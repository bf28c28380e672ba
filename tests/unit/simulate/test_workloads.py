"""The workload file: every bad entry is named by file, line, field and what is allowed; a file that is not YAML
is unreadable (exit 2 for the CLI); a good job becomes the Workload task governance would see."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.paths import ROOT

from cdk_app.config.loader import load_config
from cdk_app.simulate.workloads import WorkloadInvalid, load_workloads

DEV = load_config(ROOT / "config" / "dev.yaml").config


def _load(tmp_path: Path, text: str, config=DEV):
    path = tmp_path / "w.yaml"
    path.write_text(text)
    return load_workloads(str(path), config)


def _findings(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(WorkloadInvalid) as err:
        _load(tmp_path, text)
    assert not err.value.unreadable
    return [f.render() for f in err.value.findings]


def test_a_job_becomes_the_workload_of_its_teams_queue_with_requests_in_kueue_units(tmp_path):
    jobs = _load(tmp_path, "jobs:\n  - {name: a1, team: john, pods: 2, submit_at: 5, runtime: 60,\n"
                           "     per_pod: {instance_type: ml.g5.12xlarge, accelerators: 4, vcpu: 1.5, memory_gib: 2}}\n")
    job = jobs.jobs[0]
    workload = job.workload
    assert workload.key == "hyperpod-ns-john/a1"
    assert workload.cluster_queue == "hyperpod-ns-john-clusterqueue"
    assert workload.created == 5 and workload.priority == 0
    assert workload.pod_sets[0].count == 2
    assert dict(workload.pod_sets[0].requests) == {"nvidia.com/gpu": 4, "cpu": 1500, "memory": 2 * 1024 ** 3}
    assert dict(workload.node_selector) == {"node.kubernetes.io/instance-type": "ml.g5.12xlarge"}


def test_the_shipped_seed_002_workload_reads(tmp_path):
    jobs = load_workloads(str(ROOT / "config" / "workloads" / "dev-seed-002.yaml"), DEV)
    assert [j.name for j in jobs.jobs] == ["john-train", "smith-train", "john-eval"]


@pytest.mark.parametrize(("text", "expected"), [
    ("jobs:\n  - {name: a, team: nobody, runtime: 1, per_pod: {accelerators: 1}}\n",
     "w.yaml:2:15 jobs[0].team: team 'nobody' is not a team of environment dev (one of: john, smith) [HPK802"),
    ("jobs:\n  - {name: a, team: john, runtime: 1, per_pod: {accelerators: 1}, colour: red}\n",
     "jobs[0].colour: unknown key 'colour' (allowed: name, team, priority"),
    ("jobs:\n  - {name: a, team: john, runtime: 0, per_pod: {accelerators: 1}}\n",
     "jobs[0].runtime: 0 is out of range (a whole number from 1 to"),
    ("jobs:\n  - {name: a, team: john, runtime: 1.5, per_pod: {accelerators: 1}}\n",
     "jobs[0].runtime: 1.5 is not a whole number"),
    ("jobs:\n  - {name: a, team: john, runtime: 1, priority: gold, per_pod: {accelerators: 1}}\n",
     "priority class 'gold' is not in the cluster policy (one of: none: the cluster policy has no priority classes"),
    ("jobs:\n  - {name: a, team: john, runtime: 1, per_pod: {instance_type: ml.p5.48xlarge, accelerators: 1}}\n",
     "'ml.p5.48xlarge' is not an instance type of the cluster (one of: ml.g5.12xlarge, ml.m5.2xlarge)"),
    ("jobs:\n  - {name: a, team: john, runtime: 1, per_pod: {instance_type: ml.m5.2xlarge, accelerators: 1}}\n",
     "accelerators on ml.m5.2xlarge, which has none"),
    ("jobs:\n  - {name: A_1, team: john, runtime: 1, per_pod: {vcpu: 1}}\n", "'A_1' is not a valid job name"),
    ("jobs:\n  - {name: a, team: john, runtime: 1, per_pod: {}}\n", "the pod requests nothing"),
    ("jobs:\n  - {name: a, team: john, runtime: 1, per_pod: {vcpu: 0.0001}}\n", "finer than a millicore"),
    ("jobs:\n  - {name: a, team: john, per_pod: {vcpu: 1}}\n", "jobs[0]: the job has no runtime"),
    ("jobs:\n  - {name: a, team: john, runtime: 60, running_since: -60, per_pod: {vcpu: 1,"
     " instance_type: ml.m5.2xlarge}}\n", "it finished before the start"),
    ("jobs:\n  - {name: a, team: john, runtime: 600, running_since: -60, per_pod: {vcpu: 1}}\n",
     "a running job (running_since) has no instance_type"),
    ("jobs:\n  - {name: a, team: john, runtime: 1, per_pod: {vcpu: 1}}\n  - {name: a, team: john, runtime: 1,"
     " per_pod: {vcpu: 1}}\n", "w.yaml:3:6 jobs[1].name: job 'a' of team john is listed twice (also jobs[0])"),
    ("jobs: {a: 1}\n", "jobs: jobs is not a list"),
    ("jobs: []\n", "the file has no jobs"),
    ("jobs:\n  - 7\n", "jobs[0]: a job is not a mapping of keys"),
])
def test_a_bad_entry_is_named_by_line_field_and_what_is_allowed(tmp_path, text, expected):
    rendered = _findings(tmp_path, text)
    assert any(expected in line for line in rendered), rendered


def test_every_bad_field_of_a_file_is_reported_in_one_run(tmp_path):
    rendered = _findings(tmp_path, "jobs:\n  - {name: a, team: nobody, runtime: 1, per_pod: {vcpu: 1}}\n"
                                   "  - {name: b, team: john, runtime: -1, per_pod: {vcpu: 1}}\n")
    assert len(rendered) == 2 and "w.yaml:2:" in rendered[0] and "w.yaml:3:" in rendered[1]


@pytest.mark.parametrize("text", ["jobs: [\n", "- a\n- b\n", ""])
def test_a_file_that_is_not_a_mapping_is_unreadable(tmp_path, text):
    with pytest.raises(WorkloadInvalid) as err:
        _load(tmp_path, text)
    assert err.value.unreadable


def test_a_disabled_team_has_no_queue_to_submit_to(tmp_path):
    text = (ROOT / "config" / "dev.yaml").read_text().replace("  - name: smith\n", "  - name: smith\n    enabled: false\n")
    path = tmp_path / "dev.yaml"
    path.write_text(text)
    config = load_config(path).config
    with pytest.raises(WorkloadInvalid) as err:
        _load(tmp_path, "jobs:\n  - {name: a, team: smith, runtime: 1, per_pod: {vcpu: 1}}\n", config)
    assert "compute allocation is disabled" in err.value.findings[0].message


# --- GPU partitions (per_pod.mig, as `job --mig` takes it) ------------------------------------------------------
def test_a_job_of_partitions_requests_the_profiles_resource(tmp_path):
    from support.mig_config import write_mig_config

    config = load_config(write_mig_config(tmp_path)).config
    jobs = _load(tmp_path, "jobs:\n  - {name: m, team: john, pods: 1, submit_at: 0, runtime: 60,\n"
                           "     per_pod: {instance_type: ml.p5.48xlarge, mig: 'mig-1g.10gb:3', vcpu: 1}}\n", config)
    assert dict(jobs.jobs[0].workload.pod_sets[0].requests) == {"cpu": 1000, "nvidia.com/mig-1g.10gb": 3}


@pytest.mark.parametrize("per_pod, message", [
    ("{instance_type: ml.g5.12xlarge, mig: mig-1g.10gb}",
     "mig-1g.10gb needs an instance_type whose GPU offers it, and no accelerators beside it"),
    ("{instance_type: ml.g5.12xlarge, mig: '1g.10gb'}",
     # The workload's field, not job's option (red team).
     "mig '1g.10gb': give a MIG profile such as mig-1g.10gb, optionally :COUNT per pod"),
    ("{instance_type: ml.g5.12xlarge, mig: 'mig-1g.10gb:0'}",
     "mig 'mig-1g.10gb:0': COUNT is partitions per pod, a whole number from 1 to 56"),
    ("{instance_type: ml.g5.12xlarge, mig: 3}", "3 is not text"),
])
def test_a_bad_mig_entry_is_named_by_line_and_field(tmp_path, per_pod, message):
    [finding] = _findings(tmp_path, f"jobs:\n  - {{name: m, team: john, pods: 1, submit_at: 0, runtime: 60,\n"
                                    f"     per_pod: {per_pod}}}\n")
    assert "jobs[0].per_pod.mig: " + message in finding and "[HPK801 error]" in finding
