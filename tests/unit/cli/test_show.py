"""`hyperpod-kit show CONFIG`: what it lists is what the app synthesizes (stacks and their descriptions, the
HyperPod cluster's name and instance groups, an EKS cluster named by CloudFormation), what task governance makes
of the teams (Kueue queues), and validate's own tables; bad input ends with the standard exit codes."""

from __future__ import annotations

import json

import pytest
import yaml
from support.cli_runner import invoke
from support.paths import ROOT
from support.synthesis import env_assembly

from cdk_app.config.loader import load_config
from cdk_app.domain.kueue_mapping import governance_objects


def view(config: str) -> dict:
    result = invoke("show", config, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def synthesized(tmp_path_factory, env: str) -> dict[str, dict]:
    """Stack name -> template, of config/<env>.yaml synthesized by the real CDK CLI."""
    out = env_assembly(tmp_path_factory, env)
    manifest = json.loads((out / "manifest.json").read_text())
    return {name: json.loads((out / artifact["properties"]["templateFile"]).read_text())
            for name, artifact in manifest["artifacts"].items() if artifact["type"] == "aws:cloudformation:stack"}


def resources(templates: dict[str, dict], kind: str) -> list[dict]:
    return [r for t in templates.values() for r in t.get("Resources", {}).values() if r["Type"] == kind]


@pytest.mark.slow
@pytest.mark.synth
@pytest.mark.parametrize("env", ["dev", "prod", "batch-only-example"])
def test_stacks_and_clusters_are_what_the_app_synthesizes(tmp_path_factory, env):
    shown = view(f"config/{env}.yaml")
    templates = synthesized(tmp_path_factory, env)
    assert sorted(s["name"] for s in shown["stacks"]) == sorted(templates)
    for stack in shown["stacks"]:
        assert templates[stack["name"]]["Description"] == f"hyperpod-kit {env}: {stack['holds']}"
    clusters = resources(templates, "AWS::SageMaker::Cluster")
    if shown["hyperpod_cluster"] is None:
        assert clusters == []
        return
    [cluster] = clusters
    assert cluster["Properties"]["ClusterName"] == shown["hyperpod_cluster"]["name"]
    groups = [{"name": g["InstanceGroupName"], "instance_type": g["InstanceType"], "count": g["InstanceCount"],
               "labels": g.get("KubernetesConfig", {}).get("Labels", {}),
               "taints": [(t["Key"], t.get("Value"), t["Effect"]) for t in g.get("KubernetesConfig", {}).get("Taints", [])]}
              for g in cluster["Properties"]["InstanceGroups"]]
    assert groups == [{"name": g["name"], "instance_type": g["instance_type"], "count": g["count"], "labels": g["labels"],
                       "taints": [(t["key"], t["value"], t["effect"]) for t in g["taints"]]}
                      for g in shown["instance_groups"]]
    # No Name given: CloudFormation names the cluster at deploy, as show says.
    [eks] = resources(templates, "AWS::EKS::Cluster")
    assert "Name" not in eks["Properties"]
    cluster_stack = next(t for name, t in templates.items() if name.endswith("-cluster"))
    assert shown["eks_cluster"]["output"].split(".")[1] in cluster_stack["Outputs"]


def test_teams_have_the_queues_task_governance_makes():
    shown = view("config/prod.yaml")
    local = sorted((o["metadata"]["namespace"], o["metadata"]["name"])
                   for o in governance_objects(load_config(ROOT / "config/prod.yaml").config) if o["kind"] == "LocalQueue")
    pool = shown["shared_pool"]
    assert sorted([*((t["namespace"], t["local_queue"]) for t in shown["teams"]),
                   (pool["namespace"], pool["local_queue"])]) == local


def test_capacity_reach_and_batch_are_validates_rows():
    for config in ("config/dev.yaml", "config/batch-example.yaml"):
        validated = json.loads(invoke("validate", config, "--format", "json").output)
        shown = view(config)
        assert shown["capacity"] == [{k: v for k, v in row.items() if k not in {"file", "environment"}}
                                     for row in validated["capacity"]]
        assert [r for t in shown["teams"] for r in t["reach"]] == [
            {k: v for k, v in row.items() if k not in {"file", "environment"}} for row in validated["reach"]]
        assert shown["batch_queues"] == [{k: v for k, v in row.items() if k not in {"file", "environment"}}
                                         for row in validated["batch_queues"]]


def test_topology_labels_are_those_of_the_type():
    groups = {g["name"]: g for g in view("config/prod.yaml")["instance_groups"]}
    assert groups["h100-a"]["topology_labels"] == [f"topology.k8s.aws/network-node-layer-{n}" for n in (1, 2, 3)]
    assert groups["system"]["topology_labels"] == []
    text = invoke("show", "config/prod.yaml").output
    assert "none (m7i has no EC2 instance topology)" in text


def test_a_fractional_reach_is_explained_where_it_is_shown():
    note = "a fraction of an instance (1.5) is instances' worth of resources"
    assert note in invoke("show", "config/dev.yaml").output
    assert note in invoke("validate", "config/dev.yaml").output
    assert note in invoke("team", "config/dev.yaml", "john").output
    assert view("config/dev.yaml")["reach_note"].startswith(note)


def test_whole_instances_need_no_note(tmp_path):
    text = (ROOT / "config/dev.yaml").read_text().replace("    borrow_limit: 50\n", "    borrow_limit: 100\n")
    (tmp_path / "whole.yaml").write_text(text)
    result = invoke("show", str(tmp_path / "whole.yaml"))
    assert result.exit_code == 0, result.output
    assert "a fraction of an instance" not in result.output


@pytest.mark.parametrize(("text", "code", "says"), [
    ("teams: [", 2, "unreadable"),
    (None, 2, "unreadable"),
    ("{}", 1, "required key 'environment' is missing"),
])
def test_bad_input_exits_as_validate_does_without_a_traceback(tmp_path, text, code, says):
    path = tmp_path / "env.yaml"
    if text is not None:
        path.write_text(text)
    result = invoke("show", str(path))
    assert result.exit_code == code, result.output
    assert says in result.output and "Traceback" not in result.output


def test_an_invalid_config_shows_validates_findings_and_exits_1(tmp_path):
    config = yaml.safe_load((ROOT / "config/dev.yaml").read_text())
    config["teams"][0]["quota"][0]["count"] = 9
    (tmp_path / "big.yaml").write_text(yaml.safe_dump(config))
    result = invoke("show", str(tmp_path / "big.yaml"))
    assert result.exit_code == 1
    assert "[HPK501 error]" in result.output and "stacks, in deploy order" not in result.output


def test_the_fractional_reach_note_names_a_fraction_its_table_shows(tmp_path):
    """Issue 30: the note said "(1.5)" under a table whose fractions were 4.5 - it names the table's first one."""
    data = yaml.safe_load((ROOT / "config" / "dev.yaml").read_text())
    next(group for group in data["hyperpod"]["instance_groups"] if group["name"] == "gpu-workers")["count"] = 6
    john = next(team for team in data["teams"] if team["name"] == "john")
    john["quota"] = [{"instance_type": "ml.g5.12xlarge", "count": 3}]  # reach 4.5 at borrow limit 50 %, nothing else
    smith = next(team for team in data["teams"] if team["name"] == "smith")
    smith["quota"] = [{"instance_type": "ml.g5.12xlarge", "count": 1}, {"instance_type": "ml.m5.2xlarge", "count": 2}]
    path = tmp_path / "dev.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    text = invoke("validate", str(path)).output
    assert "  john   ml.g5.12xlarge  LendAndBorrow  3 (12)  4.5 (18)" in text
    assert "a fraction of an instance (4.5) is instances' worth" in text and "(1.5)" not in text


def test_the_capacity_tables_have_a_heading_of_their_own():
    lines = invoke("show", "config/dev.yaml").output.split("\n")
    heading = lines.index("capacity and team reach (as validate prints them):")
    assert lines[heading - 1].startswith("priority classes: ") and lines[heading + 1].startswith("  reserved/capacity")


def test_a_groups_capacity_and_ami_fields_are_shown(tmp_path):
    # Red team: show listed a flexible group without its fallback type and an autoscaled one without max_count,
    # and its JSON had no capacity_type. Each field the config gives comes back as given.
    config = yaml.safe_load((ROOT / "config/dev.yaml").read_text())
    gpu = config["hyperpod"]["instance_groups"][0]
    gpu.update({"fallback_instance_types": ["ml.g5.24xlarge"], "capacity_type": "Spot", "min_count": 3,
                "image_release_version": "1.2.3", "scheduled_update": {"schedule_expression": "cron(0 4 ? * SUN *)"},
                "auto_patch": {"patching_strategy": "WhenIdle"}})
    (tmp_path / "flex.yaml").write_text(yaml.safe_dump(config))
    [shown, cpu] = view(str(tmp_path / "flex.yaml"))["instance_groups"]
    assert {k: shown[k] for k in ("fallback_instance_types", "capacity_type", "min_count", "max_count",
                                  "image_id", "image_release_version", "scheduled_update", "auto_patch")} == {
        "fallback_instance_types": ["ml.g5.24xlarge"], "capacity_type": "Spot", "min_count": 3, "max_count": None,
        "image_id": None, "image_release_version": "1.2.3", "scheduled_update": "cron(0 4 ? * SUN *)",
        "auto_patch": "WhenIdle"}
    assert (cpu["fallback_instance_types"], cpu["capacity_type"]) == ([], None)
    text = invoke("show", str(tmp_path / "flex.yaml")).output
    assert "ml.g5.12xlarge, then ml.g5.24xlarge" in text and "4 (InService from min_count 3)" in text
    assert "SageMaker's default, release 1.2.3, updates cron(0 4 ? * SUN *), patches WhenIdle" in text


def test_an_autoscaled_groups_max_count_is_shown(tmp_path):
    config = yaml.safe_load((ROOT / "config/dev.yaml").read_text())
    config["hyperpod"]["autoscaling"] = True
    config["hyperpod"]["instance_groups"][0].update({"count": 0, "max_count": 4})
    (tmp_path / "auto.yaml").write_text(yaml.safe_dump(config))
    result = invoke("show", str(tmp_path / "auto.yaml"))
    assert result.exit_code == 0, result.output
    assert "0 (autoscaled up to max_count 4)" in result.output
    assert view(str(tmp_path / "auto.yaml"))["instance_groups"][0]["max_count"] == 4
