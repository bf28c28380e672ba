"""`hyperpod-kit topology` on node lists at the edges of what `kubectl get nodes -o json` writes: device counts
as JSON numbers, nodes without the labels HyperPod and EC2 set (yet), UltraServer ids, several unlabelled
nodes, and hostile values that must be named briefly.

Sources of truth: the node labels HyperPod and EC2 set (/work/shared/reference/hyperpod-facts.md:
sagemaker.amazonaws.com/node-health-status, topology.k8s.aws/network-node-layer-1 to -4,
topology.k8s.aws/ultraserver-id); Kubernetes' Quantity JSON form (apimachinery's Quantity.UnmarshalJSON
parses a bare JSON number as well as a quoted one, so both forms must read alike); the README's promise
that the table names each node's instance type and health and lists unlabelled nodes apart; the
rule that hostile input gets one short actionable line (exit 2), not a page."""

from __future__ import annotations

import json
import re

import pytest
from support.node_lists import CPU, kubectl_list, node

from cdk_app.kubernetes.topology import TopologyInputError, as_json, mermaid, parse_nodes, table

KUBECTL = "give the output of `kubectl get nodes -o json`"
ULTRASERVER = "topology.k8s.aws/ultraserver-id"


@pytest.mark.parametrize("count", [0, 1, 100, 999_999_999])
def test_a_device_count_reads_the_same_as_a_json_number_and_as_text(count):
    as_text = parse_nodes(kubectl_list([node("n", [], allocatable={"nvidia.com/gpu": str(count)})]), "n.json")
    as_number = parse_nodes(kubectl_list([node("n", [], allocatable={"nvidia.com/gpu": count})]), "n.json")
    assert as_text[0].devices == as_number[0].devices == {"nvidia.com/gpu": count}


@pytest.mark.parametrize("count", [10**9, "1000000000"])
def test_a_device_count_past_nine_digits_is_refused_in_either_form(count):
    with pytest.raises(TopologyInputError, match="a device count must be a whole number"):
        parse_nodes(kubectl_list([node("n", [], allocatable={"vpc.amazonaws.com/efa": count})]), "n.json")


def test_hostile_values_are_quoted_short():
    """A 10,000-character value is cut to its first 40 characters: one readable line, whatever the input."""
    long_label = kubectl_list([{"kind": "Node", "metadata": {"name": "n1", "labels": {"a": ["x" * 10_000]}}}])
    with pytest.raises(TopologyInputError) as err:
        parse_nodes(long_label, "n.json")
    assert str(err.value) == f"n.json: node n1 label a is [\"{'x' * 38}, not text; {KUBECTL}"
    long_kind = kubectl_list([{"kind": "P" * 10_000, "metadata": {"name": "p"}}])
    with pytest.raises(TopologyInputError) as err:
        parse_nodes(long_kind, "n.json")
    assert str(err.value) == f"n.json: item 0 is a {'P' * 40}, not a Node; {KUBECTL}"


@pytest.mark.parametrize("metadata", [None, {}, {"name": None}, {"name": ""}])
def test_a_node_without_a_name_is_refused_not_given_one(metadata):
    """Kubernetes requires every node's name, so a nameless entry is a list edited by hand; a made-up stand-in
    (item-1) could be a real node's name, and would merge two nodes or count one twice."""
    real = node("item-1", ["x", "b", "c"])
    nameless = {"kind": "Node", **({} if metadata is None else {"metadata": metadata})}
    with pytest.raises(TopologyInputError) as err:
        parse_nodes(kubectl_list([nameless, real]), "n.json")
    assert str(err.value) == f"n.json: item 0 has no metadata.name; every node kubectl returns has one - {KUBECTL}"


def test_a_node_without_type_and_health_labels_shows_unknown():
    """A node HyperPod's health agent (or EC2) has not labelled yet: shown as unknown, not left blank or 'None'."""
    nodes = parse_nodes(kubectl_list([{"kind": "Node", "metadata": {"name": "fresh", "labels": {}}}]), "n.json")
    assert as_json(nodes)["nodes"][0] == {"name": "fresh", "instance_type": "unknown", "health": "unknown",
                                          "layers": [], "ultraserver": None, "allocatable": {}}
    assert table(nodes).splitlines()[1].split() == ["-", "-", "-", "-", "fresh", "unknown", "unknown", "-", "-"]


def test_ultraserver_ids_are_carried_to_the_json():
    """Nodes of an UltraServer (p6e-gb200) carry topology.k8s.aws/ultraserver-id beside the layer labels."""
    first, second = (node(name, ["x1", "x2", "x3", "x4"], "ml.p6e-gb200.36xlarge", allocatable={}) for name in "ab")
    first["metadata"]["labels"][ULTRASERVER] = "us-0a1"
    document = as_json(parse_nodes(kubectl_list([first, second]), "n.json"))
    assert [n["ultraserver"] for n in document["nodes"]] == ["us-0a1", None]
    assert [g["layer"] for g in document["groups"]] == [1, 2, 3, 4]  # one domain per layer, both nodes in each
    group = document["groups"][-1]
    assert group["nodes"] == [
        {"name": "a", "instance_type": "ml.p6e-gb200.36xlarge", "health": "Schedulable", "ultraserver": "us-0a1"},
        {"name": "b", "instance_type": "ml.p6e-gb200.36xlarge", "health": "Schedulable"}]
    assert json.loads(json.dumps(document)) == document


def test_mermaid_declares_each_network_node_once_with_its_layer():
    nodes = parse_nodes(kubectl_list([node("a", ["s1", "s2", "s3"]), node("b", ["s1", "s2", "t3"]),
                                      node("c", ["s1", "u2", "u3"])]), "n.json")
    declarations = [re.fullmatch(r'  (\S+)\["(.*)"\]', line).groups() for line in mermaid(nodes).splitlines()
                    if "[" in line]
    idents = [ident for ident, _ in declarations]
    assert len(idents) == len(set(idents))
    labels = dict(declarations)
    assert (labels["L1_s1"], labels["L2_s2"], labels["L2_u2"], labels["L3_t3"]) == (
        "layer 1: s1", "layer 2: s2", "layer 2: u2", "layer 3: t3")
    assert labels["node_a"] == "a<br/>ml.p5.48xlarge<br/>Schedulable"


def test_several_unlabelled_nodes_are_listed_apart_comma_separated():
    second_cpu = node("hyperpod-i-cpu2", [], instance_type="ml.m7i.4xlarge")
    nodes = parse_nodes(kubectl_list([CPU, second_cpu]), "n.json")
    assert table(nodes).splitlines()[-1] == ("without topology labels (type not supported, or labels not yet set): "
                                              "hyperpod-i-cpu, hyperpod-i-cpu2")
    assert mermaid(nodes).splitlines()[3] == "  %% 2 node(s) without topology labels: hyperpod-i-cpu, hyperpod-i-cpu2"
