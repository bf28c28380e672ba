"""simulate and explain as a user runs them: exit codes (0 ran, 1 findings, 2 unreadable or usage, never a
traceback), the JSON document's shape, the plot, a live snapshot, and a comparison against a git ref."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from support.cli_runner import invoke, run
from support.paths import ROOT

pytestmark = pytest.mark.slow  # a subprocess per case

DEV = str(ROOT / "config" / "dev.yaml")
SEED = str(ROOT / "config" / "workloads" / "dev-seed-002.yaml")


def test_the_json_document_holds_every_job_s_events_teams_and_utilisation():
    result = run("simulate", DEV, "--workload", SEED, "--format", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert {"jobs", "teams", "utilization", "choices", "findings"} <= set(doc)
    smith = next(j for j in doc["jobs"] if j["name"] == "smith-train")
    assert [e["event"] for e in smith["events"]] == ["submitted", "admitted", "preempted", "admitted", "finished"]
    assert doc["choices"]["reclaim_within_cohort"] == "Any"
    assert 0 < doc["utilization"]["ratio"] <= 1
    for team in doc["teams"]:
        assert {"quota", "accelerator_hours", "waits", "preemptions", "usage"} <= set(team)


def test_the_table_names_the_borrowing_and_the_preemption():
    result = run("simulate", DEV, "--workload", SEED)
    assert result.returncode == 0, result.stderr
    assert "borrowing 4 accelerators from john" in result.stdout
    assert "preempted by john-eval (InCohortReclamation)" in result.stdout


def test_the_team_table_names_each_column_s_unit():
    """Issue 30: `quota 12` (accelerators) stood beside `used 20` (accelerator-hours) with one unit for both."""
    lines = run("simulate", DEV, "--workload", SEED).stdout.split("\n")
    header = lines[lines.index("teams (waits from submission to first admission)") + 1].split("  ")
    assert [cell.strip() for cell in header if cell.strip()][:5] == [
        "team", "quota (accelerators)", "used (acc-hours)", "borrowed (acc-hours)", "lent (acc-hours)"]


def test_a_job_that_can_never_be_admitted_is_a_finding(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text("jobs:\n  - {name: huge, team: smith, pods: 5, per_pod: {instance_type: ml.g5.12xlarge,"
                    " accelerators: 4}, runtime: 60}\n")
    result = run("simulate", DEV, "--workload", str(path))
    assert result.returncode == 1, result.stderr
    assert "job huge of team smith can never be admitted" in result.stderr and "HPK803" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_pod_larger_than_any_instance_is_a_finding(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text("jobs:\n  - {name: wide, team: john, per_pod: {instance_type: ml.g5.12xlarge,"
                    " accelerators: 8}, runtime: 60}\n")
    result = run("simulate", DEV, "--workload", str(path))
    assert result.returncode == 1
    assert "more than one instance of ml.g5.12xlarge holds" in result.stderr


@pytest.mark.parametrize(("args", "code", "text"), [
    (["--workload", "/nonexistent/w.yaml"], 2, "HPK001"),
    (["--workload", "{w}", "--plot", "out.png"], 2, "written as SVG"),
    ([], 2, "give --workload FILE, --from-cluster FILE, or both"),
])
def test_unreadable_input_and_usage_errors_exit_2(tmp_path, args, code, text):
    path = tmp_path / "w.yaml"
    path.write_text("jobs:\n  - {name: a, team: john, per_pod: {vcpu: 1}, runtime: 60}\n")
    result = run("simulate", DEV, *[a.format(w=path) for a in args])
    assert result.returncode == code, result.stderr
    assert text in result.stderr and "Traceback" not in result.stderr


def test_a_bad_workload_entry_exits_1_with_its_location(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text("jobs:\n  - {name: a, team: john, per_pod: {vcpu: 1}, runtime: soon}\n")
    result = run("simulate", DEV, "--workload", str(path))
    assert result.returncode == 1
    assert "w.yaml:2:" in result.stderr and "jobs[0].runtime: 'soon' is not a whole number" in result.stderr


def test_the_plot_is_an_svg_with_a_panel_per_team_and_the_preemption_marked(tmp_path):
    out = tmp_path / "usage.svg"
    result = run("simulate", DEV, "--workload", SEED, "--plot", str(out))
    assert result.returncode == 0, result.stderr
    root = ET.fromstring(out.read_text())
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "john" in texts and "smith" in texts
    marks = [line for line in root.iter("{http://www.w3.org/2000/svg}line") if line.get("stroke") == "#d62728"]
    assert len(marks) == 1  # smith-train's one preemption


def test_explain_says_why_the_job_waits_in_the_team_s_terms():
    result = run("explain", DEV, "--workload", SEED, "--job", "smith-train")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "1200 s: preempted by john-eval of team john (InCohortReclamation" in text
    assert "needs 8 accelerators of ml.g5.12xlarge (2 pods); team smith has 4 accelerators of quota there" in text
    assert "borrow_limit 100 %" in text
    # Kueue's message at that moment names only the CPU flavor: it is not quoted as the reason.
    kueue = next(line for line in text.splitlines() if line.startswith("  Kueue: "))
    assert "doesn't match node affinity - only flavors this job cannot use were tried" in kueue


def test_explain_of_an_unknown_job_lists_the_jobs():
    result = run("explain", DEV, "--workload", SEED, "--job", "nope")
    assert result.returncode == 2 and "john-train (john)" in result.stderr


def _snapshot_workload(name, team, gpus, pods, admitted_at=None):
    wl = {"kind": "Workload", "metadata": {"name": name, "namespace": f"hyperpod-ns-{team}",
                                           "creationTimestamp": "2026-11-27T10:00:00Z"},
          "spec": {"queueName": f"hyperpod-ns-{team}-localqueue", "priority": 0, "podSets": [
              {"name": "main", "count": pods, "template": {"spec": {
                  "nodeSelector": {"node.kubernetes.io/instance-type": "ml.g5.12xlarge"},
                  "containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": str(gpus)}}}]}}}]}}
    if admitted_at:
        wl["status"] = {"conditions": [{"type": "QuotaReserved", "status": "True", "lastTransitionTime": admitted_at}],
                        "admission": {"clusterQueue": f"hyperpod-ns-{team}-clusterqueue", "podSetAssignments": [
                            {"name": "main", "count": pods, "flavors": {"nvidia.com/gpu": "ml.g5.12xlarge"}}]}}
    return wl


def test_from_cluster_a_new_job_of_the_lender_reclaims_what_a_running_borrower_holds(tmp_path):
    snapshot = {"apiVersion": "v1", "kind": "List", "items": [
        _snapshot_workload("smith-big", "smith", 4, 2, admitted_at="2026-11-27T10:05:00Z"),
        {"kind": "ClusterQueue", "metadata": {"name": "ignored"}}]}
    snap = tmp_path / "workloads.json"
    snap.write_text(json.dumps(snapshot))
    new = tmp_path / "w.yaml"
    new.write_text("jobs:\n  - {name: john-all, team: john, pods: 3, per_pod: {instance_type: ml.g5.12xlarge,"
                   " accelerators: 4}, runtime: 600}\n")
    result = run("simulate", DEV, "--from-cluster", str(snap), "--workload", str(new), "--format", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    smith = next(j for j in doc["jobs"] if j["name"] == "smith-big")
    # admitted at the snapshot's latest timestamp, which is the simulation's start
    assert [{k: v for k, v in e.items() if k != "seq"} for e in smith["events"][:2]] == [{"at": 0, "event": "submitted"},
                                   {"at": 0, "event": "admitted", "flavor": "ml.g5.12xlarge",
                                    "borrowed": {"accelerators": 4}, "from": ["john"]}]
    preempted = next(e for e in smith["events"] if e["event"] == "preempted")
    assert (preempted["at"], preempted["by"], preempted["reason"]) == (0, "john-all", "InCohortReclamation")


def test_from_cluster_refuses_what_is_not_a_kubectl_list(tmp_path):
    snap = tmp_path / "workloads.json"
    snap.write_text('{"kind": "Workload"}')
    result = run("simulate", DEV, "--from-cluster", str(snap))
    assert result.returncode == 2 and "not a Kubernetes List" in result.stderr


def test_against_the_same_ref_nothing_moves():
    result = run("simulate", DEV, "--workload", SEED, "--against-ref", "HEAD", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # no progress line that a reader sees after the results (issue 30)
    rows = json.loads(result.stdout)["against"]["teams"]
    for row in rows:
        for cell in row.values():
            if isinstance(cell, dict):
                assert cell["before"] == cell["after"], row


def test_batch_jobs_replay_seed_004_on_the_batch_example():
    result = run("simulate", str(ROOT / "config" / "batch-example.yaml"), "--workload",
                 str(ROOT / "config" / "workloads" / "batch-seed-004.yaml"), "--format", "json")
    assert result.returncode == 0, result.stderr
    batch = json.loads(result.stdout)["batch"]
    exp1 = next(s for s in batch["shares"] if s["share"] == "ProdExp1")
    assert exp1["peak"] == 75  # 60 of its own and ProdExp2's idle 15
    burst = [e for e in batch["events"] if e["job"] == "exp1-burst"]
    assert [(e["at"], e["event"]) for e in burst][:3] == [(60, "submitted"), (60, "admitted"), (3600, "preempted")]
    assert burst[2]["by"] == "exp2-b"
    p10 = next(e for e in batch["events"] if e["job"] == "exp1-p10" and e["event"] == "preempted")
    assert (p10["at"], p10["by"]) == (7200, "exp1-p90")


def test_a_bad_batch_entry_is_located(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text("batch_jobs:\n  - {name: a, queue: nope, instances: 1, submit_at: 0, runtime: 60}\n")
    result = run("simulate", str(ROOT / "config" / "batch-example.yaml"), "--workload", str(path))
    assert result.returncode == 1, result.stderr
    assert "w.yaml:2:" in result.stderr and "batch_jobs[0].queue" in result.stderr and "HPK801" in result.stderr


def test_explain_tells_a_live_workload_s_story(tmp_path):
    snap = tmp_path / "workloads.json"
    snap.write_text(json.dumps({"kind": "List", "items": [
        _snapshot_workload("smith-big", "smith", 4, 2, admitted_at="2026-11-27T10:05:00Z")]}))
    new = tmp_path / "w.yaml"
    new.write_text("jobs:\n  - {name: john-all, team: john, pods: 3, per_pod: {instance_type: ml.g5.12xlarge,"
                   " accelerators: 4}, runtime: 600}\n")
    result = run("explain", DEV, "--from-cluster", str(snap), "--workload", str(new), "--job", "smith-big")
    assert result.returncode == 0, result.stderr
    assert "0 s: preempted by john-all of team john (InCohortReclamation" in result.stdout


def test_the_dont_lend_option_says_what_it_does_and_why_it_is_one():
    for command in ("simulate", "explain"):
        text = " ".join(invoke(command, "--help").output.split())
        assert "(undocumented)" not in text
        assert "Let a DontLend team borrow others' idle compute in the simulation" in text
        assert "AWS documents only that such a team lends nothing, not whether it may borrow" in text


def test_partitions_wait_for_what_the_lenders_hold_and_a_pod_fits_one_nodes_geometry(tmp_path):
    """support.mig_config (56 mig-1g.10gb; john 20 with borrow_limit 50, smith 30): john's second job of 10 would
    borrow 10 while only the 6 unallocated are idle, so it waits for his first (the real Kueue admits john up to
    30 and no more: tests/realk8s/test_kueue_partitions.py); a pod of a profile no node's geometry has fits none."""
    from support.mig_config import write_mig_config

    config = write_mig_config(tmp_path)
    path = tmp_path / "w.yaml"
    job = "  - {{name: {}, team: {}, submit_at: {}, runtime: 600, per_pod: {{instance_type: ml.p5.48xlarge, mig: '{}'}}}}\n"
    path.write_text("jobs:\n" + job.format("j1", "john", 0, "mig-1g.10gb:20") + job.format("s1", "smith", 0, "mig-1g.10gb:30")
                    + job.format("j2", "john", 10, "mig-1g.10gb:10"))
    result = run("explain", str(config), "--workload", str(path), "--job", "j2")
    assert result.returncode == 0, result.stderr
    assert ("needs 10 nvidia.com/mig-1g.10gb of ml.p5.48xlarge (1 pod); team john has 20 nvidia.com/mig-1g.10gb of "
            "quota there, 20 nvidia.com/mig-1g.10gb in use by j1.") in result.stdout
    assert "600 s: admitted on ml.p5.48xlarge after waiting 590 s." in result.stdout
    path.write_text("jobs:\n" + job.format("wide", "john", 0, "mig-2g.20gb:1"))
    result = run("simulate", str(config), "--workload", str(path))
    assert result.returncode == 1 and "more than one instance of ml.p5.48xlarge holds" in result.stderr
