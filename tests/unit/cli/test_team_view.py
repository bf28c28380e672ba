"""`hyperpod-kit team CONFIG NAME`: one team's view agrees with what `job` writes, the Kueue objects task
governance makes, and validate's reach and Batch tables - the same functions, seen from the team."""

from __future__ import annotations

import json

import yaml
from support.cli_runner import invoke
from support.paths import ROOT

from cdk_app.config.loader import load_config
from cdk_app.domain.kueue_mapping import governance_objects


def view(config: str, name: str) -> dict:
    result = invoke("team", config, name, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_the_queue_is_the_one_job_labels_and_task_governance_makes():
    john = view("config/dev.yaml", "john")["hyperpod"]
    job = invoke("job", "--config", "config/dev.yaml", "--team", "john", "--name", "t", "--image", "repo/t:1",
                 "--", "python", "t.py")
    metadata = next(yaml.safe_load_all(job.output))["metadata"]
    assert (metadata["namespace"], metadata["labels"]["kueue.x-k8s.io/queue-name"]) == (
        john["namespace"], john["local_queue"])
    local = [o["metadata"] for o in governance_objects(load_config(ROOT / "config/dev.yaml").config)
             if o["kind"] == "LocalQueue" and o["metadata"]["namespace"] == john["namespace"]]
    assert local == [{"name": john["local_queue"], "namespace": john["namespace"]}]


def test_quota_and_reach_are_validates_rows_of_the_team():
    reach = json.loads(invoke("validate", "config/dev.yaml", "--format", "json").output)["reach"]
    for name in ("john", "smith"):
        mine = view("config/dev.yaml", name)["hyperpod"]["quota"]
        theirs = [r for r in reach if r["team"] == name]
        assert [(q["instance_type"], q["quota"], q["reach"], q["capped_by"]) for q in mine] == [
            (r["instance_type"], r["quota"], r["reach"], r["capped_by"]) for r in theirs]


def test_priority_classes_and_default_are_the_teams_own():
    prod = yaml.safe_load((ROOT / "config/prod.yaml").read_text())
    written = next(t for t in prod["teams"] if t["name"] == "research-nlp")
    nlp = view("config/prod.yaml", "research-nlp")["hyperpod"]
    assert nlp["priority_classes"] == written["priority_classes"]
    assert nlp["default_priority_class"] == written["default_priority_class"]
    assert nlp["priority_class_required"] is True and nlp["lends_idle_quota"] is True
    text = invoke("team", "config/prod.yaml", "research-nlp").output
    assert f"default: {written['default_priority_class']} (label {written['default_priority_class']}-priority)" in text


def test_priority_weights_are_the_kueue_priority_values_and_say_what_they_do(tmp_path):
    config = load_config(ROOT / "config/prod.yaml").config
    values = {o["metadata"]["name"]: o["value"] for o in governance_objects(config) if o["kind"] == "WorkloadPriorityClass"}
    nlp = view("config/prod.yaml", "research-nlp")["hyperpod"]
    # only the classes the team may name, each with the value Kueue orders and preempts by
    assert {f"{name}-priority": weight for name, weight in nlp["priority_class_weights"].items()} == {
        f"{name}-priority": values[f"{name}-priority"] for name in nlp["priority_classes"]}
    assert "inference" not in nlp["priority_class_weights"]
    text = invoke("team", "config/prod.yaml", "research-nlp").output
    assert "priority classes (weight): fine-tuning 80, training 50, experimentation 10;" in text
    assert "may preempt the team's own running jobs of a lower weight" in text
    never = tmp_path / "prod.yaml"
    never.write_text((ROOT / "config/prod.yaml").read_text().replace("preempt_team_tasks: LowerPriority",
                                                                     "preempt_team_tasks: Never"))
    result = invoke("team", str(never), "research-nlp")
    assert result.exit_code == 0, result.output
    assert "it never preempts the team's own running jobs (preempt_team_tasks: Never)" in result.output


def test_batch_queues_and_quota_share_are_validates():
    queues = json.loads(invoke("validate", "config/batch-example.yaml", "--format", "json").output)["batch_queues"]
    share = next(s for q in queues for s in q["shares"] if s["team"] == "ProdExp1")
    batch = view("config/batch-example.yaml", "ProdExp1")["batch"]
    assert batch["quota_share_queue"] == "prod-p4d"
    assert batch["quota"] == [{"instance_type": share["unit"], "quota": share["quota"], "reach": share["reach"]}]
    production = view("config/batch-example.yaml", "production")
    assert production["hyperpod"] is None
    assert (production["batch"]["share_identifier"], production["batch"]["weight_factor"]) == ("HIGHPRI", 1.0)
    assert production["batch"]["fifo_queues"] == ["ml-c5-xlarge-queue"]


def test_a_name_that_is_no_team_exits_2_listing_the_teams():
    result = invoke("team", "config/dev.yaml", "jon")
    assert result.exit_code == 2 and "'jon' is not a team of config/dev.yaml (teams: john, smith)" in result.output


def test_a_config_with_errors_is_shown_as_validate_shows_it(tmp_path):
    bad = tmp_path / "dev.yaml"
    bad.write_text((ROOT / "config/dev.yaml").read_text().replace("count: 3", "count: 4"))
    result = invoke("team", str(bad), "john")
    assert result.exit_code == 1 and "[HPK501 error]" in result.output


def test_a_disabled_team_is_told_it_has_no_queue(tmp_path):
    disabled = tmp_path / "dev.yaml"
    disabled.write_text((ROOT / "config/dev.yaml").read_text().replace(
        "  - name: smith\n", "  - name: smith\n    enabled: false\n"))
    result = invoke("team", str(disabled), "smith")
    assert result.exit_code == 0, result.output
    assert "disabled (enabled: false): task governance makes no queue for it" in result.output
    assert view(str(disabled), "smith")["hyperpod"]["quota"] == []


def test_a_fair_share_weight_of_0_is_explained_as_kueue_reads_it():
    """dev's john has fair_share_weight 0, which the kit writes as Kueue's fairSharing.weight "0" (the governance
    objects), and Kueue's FairSharing API reads a zero weight as always at a disadvantage."""
    objects = governance_objects(load_config(ROOT / "config/dev.yaml").config)
    john = next(o for o in objects if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == "hyperpod-ns-john-clusterqueue")
    assert john["spec"]["fairSharing"] == {"weight": "0"}
    line = next(line for line in invoke("team", "config/dev.yaml", "john").output.splitlines() if "fair-share weight" in line)
    assert "fair-share weight 0 (the default and the lowest" in line and "borrows last" in line
    assert "preempted first" in line and "its own quota is not affected" in line
    smith = next(line for line in invoke("team", "config/dev.yaml", "smith").output.splitlines() if "fair-share weight" in line)
    assert "fair-share weight 100 (0-100: a higher weight gets idle compute sooner" in smith


def test_a_fair_share_teams_part_of_each_queue_is_validates():
    """The percentages `team` prints are the ones validate's queue table gives the team's share identifier."""
    queues = json.loads(invoke("validate", "config/batch-example.yaml", "--format", "json").output)["batch_queues"]
    for name in ("production", "exploration", "sweeps"):
        batch = view("config/batch-example.yaml", name)["batch"]
        theirs = {q["queue"]: s["percent"] for q in queues for s in q["shares"] if s["team"] == name}
        assert batch["fair_share_percent"] == theirs and len(theirs) == 1
        text = invoke("team", "config/batch-example.yaml", name).output
        queue, percent = next(iter(theirs.items()))
        assert f"its part: {percent:g} % of {queue} - while every share identifier on the queue has jobs waiting" in text
