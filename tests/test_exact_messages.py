"""Messages are part of the contract (issue 15: every message actionable): the exact text of the topology
reader's refusals and of the job command's refusals, the table the topology command prints, and the JSON
shapes of findings and capacity rows that CI tools read."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from cdk_app.config.loader import load_config
from cdk_app.job_templates import JobRequest, JobSpecError, check, render
from cdk_app.topology import TopologyInputError, as_json, parse_nodes, table
from node_lists import CPU, SEVEN, kubectl_list, node

ROOT = Path(__file__).resolve().parent.parent
KUBECTL = "give the output of `kubectl get nodes -o json`"


@pytest.mark.parametrize("document, message", [
    ("[1]", f"n.json: not a Kubernetes list; {KUBECTL}"),
    ('{"items": [' + "9" * 5000 + "]}",
     f"n.json: not a node list (a number of more than 4300 digits); {KUBECTL}"),
    ('{"items": [{"kind": "Pod"}]}', f"n.json: item 0 is a Pod, not a Node; {KUBECTL}"),
    ('{"items": [7]}', f"n.json: item 0 is a int, not a Node; {KUBECTL}"),
    ('{"items": [{"metadata": {"name": "n1"}}]}', None),  # kind may be left out
    ('{"items": [{"kind": "Node", "metadata": []}]}', f"n.json: item 0 metadata is list, not a mapping; {KUBECTL}"),
    ('{"items": [{"kind": "Node", "metadata": {"name": 5}}]}',
     f"n.json: item 0 metadata.name is 5, not text; {KUBECTL}"),
    ('{"items": [{"kind": "Node", "metadata": {"name": "n1", "labels": [1]}}]}',
     f"n.json: node n1 metadata.labels is list, not a mapping; {KUBECTL}"),
    ('{"items": [{"kind": "Node", "metadata": {"name": "n1", "labels": {"a": null}}}]}',
     f"n.json: node n1 label a is null, not text; {KUBECTL}"),
    ('{"items": [{"kind": "Node", "metadata": {"name": "n1"}, "status": 3}]}',
     f"n.json: node n1 status is int, not a mapping; {KUBECTL}"),
    ('{"items": [{"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": "x"}}]}',
     f"n.json: node n1 status.allocatable is str, not a mapping; {KUBECTL}"),
    ('{"items": [{"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"nvidia.com/gpu": "8x"}}}]}',
     "n.json: node n1 has nvidia.com/gpu allocatable '8x'; a device count must be a whole number"),
    ('{"items": [{"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"nvidia.com/gpu": -1}}}]}',
     "n.json: node n1 has nvidia.com/gpu allocatable -1; a device count must be a whole number"),
    ('{"items": [{"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"nvidia.com/gpu": 1000000000}}}]}',
     "n.json: node n1 has nvidia.com/gpu allocatable 1000000000; a device count must be a whole number"),
    ('{"items": []}', "n.json: the list has no nodes"),
])
def test_topology_input_errors_word_for_word(document, message):
    if message is None:
        assert [n.name for n in parse_nodes(document, "n.json")] == ["n1"]
        return
    with pytest.raises(TopologyInputError) as err:
        parse_nodes(document, "n.json")
    assert str(err.value) == message


def test_device_counts_as_numbers_and_text():
    nodes = parse_nodes(kubectl_list([node("a", [], allocatable={"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": "0"}),
                                      node("b", [], allocatable={"aws.amazon.com/neuron": "999999999"})]), "n")
    assert [n.devices for n in nodes] == [{"vpc.amazonaws.com/efa": 0, "nvidia.com/gpu": 8},
                                          {"aws.amazon.com/neuron": 999999999}]


def test_topology_table_and_json_exactly():
    nodes = parse_nodes(kubectl_list(SEVEN[:3] + [CPU]), "n")
    assert table(nodes).splitlines() == [
        "layer 1  layer 2  layer 3  layer 4  node            instance type   health       accelerators  efa",
        "-        -        -        -        hyperpod-i-cpu  ml.m7i.4xlarge  Schedulable  -             -",
        "nn-1a    nn-2a    nn-3a    -        hyperpod-i-01   ml.p5.48xlarge  Schedulable  8             32",
        "nn-1a    nn-2a    nn-3a    -        hyperpod-i-02   ml.p5.48xlarge  Schedulable  8             32",
        "nn-1a    nn-2a    nn-3b    -        hyperpod-i-03   ml.p5.48xlarge  Schedulable  8             32",
        "2 nodes share layer-3 network node nn-3a: hyperpod-i-01, hyperpod-i-02",
        "without topology labels (type not supported, or labels not yet set): hyperpod-i-cpu",
    ]
    doc = as_json(nodes)
    assert doc["nodes"][0] == {"name": "hyperpod-i-01", "instance_type": "ml.p5.48xlarge", "health": "Schedulable",
                               "layers": ["nn-1a", "nn-2a", "nn-3a"], "ultraserver": None,
                               "allocatable": {"vpc.amazonaws.com/efa": 32, "nvidia.com/gpu": 8}}
    assert doc["groups"][0] == {"layers": [], "deepest_layer": 0, "network_node": None,
                                "nodes": [{"name": "hyperpod-i-cpu", "instance_type": "ml.m7i.4xlarge",
                                           "health": "Schedulable"}]}
    assert doc["groups"][1]["network_node"] == "nn-3a" and doc["groups"][1]["deepest_layer"] == 3


# --- job refusals, word for word ---------------------------------------------------------------------
PROD = load_config(ROOT / "config" / "prod.yaml").config
BASE = JobRequest(team="research-nlp", priority="training", name="llama-ft", image="repo/train:1",
                  command=("torchrun", "train.py"), nodes=2)


@pytest.mark.parametrize("change, message", [
    ({"team": "x"}, "--team 'x' is not a team of the prod config; teams: applied-science, inference, production-training, "
                   "research-nlp, research-vision"),
    ({"priority": "x"}, "--priority 'x' is not in the cluster policy; classes: inference, fine-tuning, training, experimentation"),
    ({"instance_type": "ml.g5.12xlarge"},
     "--instance-type 'ml.g5.12xlarge' is not in the cluster; instance groups have: ml.m7i.4xlarge, ml.p5.48xlarge"),
    ({"image": " repo"}, "--image ' repo': give a container image reference (not empty, no spaces)"),
    ({"image": "re po"}, "--image 're po': give a container image reference (not empty, no spaces)"),
    ({"nodes": 11}, "--nodes 11: the config's instance groups have 10 ml.p5.48xlarge node(s) (h100-a: 6, h100-b: 4); "
                    "one pod runs per node"),
    ({"name": "a" * 54, "nodes": 12}, "--nodes 12: the config's instance groups have 10 ml.p5.48xlarge node(s) "
                                      "(h100-a: 6, h100-b: 4); one pod runs per node"),
    # a*54-worker-1 is 63 characters: allowed (3 nodes x 8 GPUs is what research-nlp can reach at most)
    ({"name": "a" * 54, "nodes": 3}, None),
    ({"name": "a" * 55, "nodes": 1},
     f"--name '{'a' * 55}' is too long: the training operator's master Service would be '{'a' * 55}-master-0' "
     "(64 characters, at most 63); use at most 54 characters"),
    ({"name": "a" * 54, "nodes": 12, "instance_type": "ml.p5.48xlarge"},
     "--nodes 12: the config's instance groups have 10 ml.p5.48xlarge node(s) (h100-a: 6, h100-b: 4); "
     "one pod runs per node"),
    ({"name": "a" * 55, "nodes": 1, "kind": "job"}, None),  # a batch Job has no per-replica Service
])
def test_job_refusals_word_for_word(change, message):
    request = dataclasses.replace(BASE, **change)
    if message is None:
        check(PROD, request)
        return
    with pytest.raises(JobSpecError) as err:
        check(PROD, request)
    assert str(err.value) == message


def test_a_config_whose_groups_all_have_count_zero_names_that():
    config = PROD.model_copy(update={"hyperpod": PROD.hyperpod.model_copy(update={"instance_groups": tuple(
        g.model_copy(update={"count": 0}) for g in PROD.hyperpod.instance_groups)})})
    with pytest.raises(JobSpecError) as err:
        check(config, dataclasses.replace(BASE, instance_type="ml.p5.48xlarge"))
    assert str(err.value) == ("--instance-type 'ml.p5.48xlarge' is not in the cluster; instance groups have: "
                              "none (every group has count 0)")


def test_a_one_instance_group_is_in_the_cluster():
    config = PROD.model_copy(update={"hyperpod": PROD.hyperpod.model_copy(update={"instance_groups": tuple(
        g.model_copy(update={"count": 1}) for g in PROD.hyperpod.instance_groups)})})
    assert check(config, dataclasses.replace(BASE, nodes=1, efa_per_node=0)).instance_type == "ml.p5.48xlarge"


def test_render_writes_what_the_request_says():
    manifest = render(PROD, dataclasses.replace(BASE, nodes=3, auto_resume=True, max_retries=7))
    assert manifest["metadata"] == {
        "name": "llama-ft", "namespace": "hyperpod-ns-research-nlp",
        "labels": {"kueue.x-k8s.io/queue-name": "hyperpod-ns-research-nlp-localqueue",
                   "kueue.x-k8s.io/priority-class": "training-priority"},
        "annotations": {"sagemaker.amazonaws.com/enable-job-auto-resume": "true",
                        "sagemaker.amazonaws.com/job-max-retry-count": "7"}}
    replicas = manifest["spec"]["pytorchReplicaSpecs"]
    assert (replicas["Master"]["replicas"], replicas["Worker"]["replicas"]) == (1, 2)
    for spec in replicas.values():  # the training operator restarts failed pods in place
        assert spec["restartPolicy"] == "OnFailure" and spec["template"]["spec"]["restartPolicy"] == "OnFailure"
        assert spec["template"]["spec"]["containers"][0]["name"] == "pytorch"
    single = render(PROD, dataclasses.replace(BASE, nodes=1))["spec"]["pytorchReplicaSpecs"]
    assert list(single) == ["Master"]
    pod = replicas["Worker"]["template"]["spec"]
    assert pod["nodeSelector"] == {"node.kubernetes.io/instance-type": "ml.p5.48xlarge",
                                   "sagemaker.amazonaws.com/node-health-status": "Schedulable"}
    assert pod["restartPolicy"] == "OnFailure" and pod["containers"][0]["name"] == "pytorch"
    assert pod["containers"][0]["resources"] == {"requests": {"nvidia.com/gpu": 8}, "limits": {"nvidia.com/gpu": 8}}
    batch = render(PROD, dataclasses.replace(BASE, kind="job", nodes=2, max_retries=4))
    assert batch["spec"]["parallelism"] == batch["spec"]["completions"] == 2 and batch["spec"]["backoffLimit"] == 4
    assert batch["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert batch["spec"]["template"]["spec"]["containers"][0]["name"] == "main"
    assert "annotations" not in batch["metadata"]


def test_findings_and_capacity_rows_as_json(tmp_path):
    from cdk_app.validator.report import check_file

    config = tmp_path / "c.yaml"
    config.write_text((ROOT / "config" / "dev.yaml").read_text().replace("count: 3", "count: 4"))
    report = check_file(config, "c.yaml")
    error = report.errors[0].to_json()
    assert error == {"code": "HPK501", "severity": "error", "path": "teams[0].quota[0]", "file": "c.yaml",
                     "line": error["line"], "column": 9, "message": error["message"], "hint": error["hint"]}
    row = next(r for r in report.capacity if r.instance_type == "ml.g5.12xlarge").to_json()
    assert row == {"instance_type": "ml.g5.12xlarge",
                   "capacity": {"count": 4, "accelerators": 16, "vcpu": 192, "memory_gib": 768},
                   "reserved": {"count": 5, "accelerators": 20, "vcpu": 240, "memory_gib": 960}}
    reach = next(r for r in report.reach if r.team == "smith" and r.instance_type == "ml.g5.12xlarge").to_json()
    assert reach == {"team": "smith", "instance_type": "ml.g5.12xlarge", "strategy": "LendAndBorrow",
                     "borrow_limit": 100, "quota": {"count": 1, "accelerators": 4, "vcpu": 48, "memory_gib": 192},
                     "reach": reach["reach"], "capped_by": reach["capped_by"]}
    assert json.dumps(report.reach[0].to_json())


# --- loader messages, word for word (what the admin typed, what YAML made of it, what to write) ----------
ADV = (ROOT / "tests" / "adversarial" / "base.yaml").read_text()
LONG = "1" * 70


@pytest.mark.parametrize("old, new, message, hint", [
    ("  kubernetes_version: \"1.33\"", f"  kubernetes_version: {LONG}",
     f"the number {'1' * 60}... has the wrong type", f"expected text; YAML read this as a number: write it in quotes, "
     f"e.g. kubernetes_version: \"{LONG}\""),
    ("  kubernetes_version: \"1.33\"", "  kubernetes_version: 1.30",
     "the number 1.30 has the wrong type",
     "expected text; YAML read this as a number: write it in quotes, e.g. kubernetes_version: \"1.30\""),
    ("  - name: smith", "  - name: No", "No (YAML reads it as false) has the wrong type",
     "expected text; YAML reads No as false: write name in quotes, e.g. name: \"No\""),
    ("      count: 4", "      count: On", "On (YAML reads it as true) has the wrong type",
     "expected a whole number; YAML reads On as true"),
    ("      count: 4", "      count: \"4\"", "text '4' has the wrong type", "expected a whole number; write it without quotes: 4"),
    ("      count: 4", "      count: [4]", "a list has the wrong type", "expected a whole number"),
    ("      count: 4", "      count: {a: 4}", "a mapping of keys has the wrong type", "expected a whole number"),
    ("      count: 4", "      count: ~", "nothing (null) ~ has the wrong type", "expected a whole number"),
    ("      count: 4", f"      count: \"{'x' * 70}\"", f"text '{'x' * 59}... has the wrong type", "expected a whole number"),
    ("  endpoint_access: public_and_private", "  endpoint_access: Public",
     "text 'Public' is not allowed", "did you mean 'public'? allowed: 'public', 'private' or 'public_and_private'"),
    ("  endpoint_access: public_and_private", "  endpoint_access: yes",
     "yes (YAML reads it as true) is not allowed",
     "YAML reads yes as a boolean, and endpoint_access takes a word: allowed: 'public', 'private' or 'public_and_private'"),
    ("      count: 4", "      count: 7000", "the number 7000 is above the maximum", "allowed: at most 6758"),
    ("  admin_principals:", "  admin_principals: []\n  admin_principalz:",
     "unknown key 'admin_principalz'",
     "did you mean 'admin_principals'? allowed keys: admin_principals, endpoint_access, kubernetes_version, "
     "public_access_cidrs"),
    ("availability_zone_ids: [use1-az4, use1-az6]", "availability_zone_ids: []",
     "0 items has too few items", "allowed: at least 1 (the HyperPod cluster, EKS and their network need "
     "availability zones; a Batch-only environment lists none)"),
])
def test_loader_messages_word_for_word(tmp_path, old, new, message, hint):
    path = tmp_path / "c.yaml"
    assert old in ADV
    path.write_text(ADV.replace(old, new, 1))
    findings = [f for f in check_file_quiet(path) if f.code.startswith("HPK01")]
    assert [(f.message, f.hint) for f in findings] == [(message, hint)]


def check_file_quiet(path):
    from cdk_app.validator.report import check_file

    return check_file(path).findings
