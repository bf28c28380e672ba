"""`hyperpod-kit topology`: grouping nodes by network node, on realistic node lists."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from support.node_lists import CPU, SEVEN, kubectl_list, node
from support.paths import ROOT

from cdk_app.kubernetes.topology import TopologyInputError, as_json, mermaid, parse_nodes, table


def test_groups_are_the_domains_of_every_layer():
    """Each layer's network nodes and the nodes under them: what a required topology of that layer can pack
    (the unlabelled CPU node is in none)."""
    nodes = parse_nodes(kubectl_list(SEVEN + [CPU]), "nodes.json")
    grouped = {(g["layer"], g["network_node"]): [n["name"] for n in g["nodes"]] for g in as_json(nodes)["groups"]}
    first = [f"hyperpod-i-0{i}" for i in range(1, 8)]
    assert grouped == {(1, "nn-1a"): first, (2, "nn-2a"): first[:3], (2, "nn-2b"): first[3:],
                       (3, "nn-3a"): first[:2], (3, "nn-3b"): first[2:3], (3, "nn-3c"): first[3:6],
                       (3, "nn-3d"): first[6:]}


def test_mermaid_is_a_tree_layer_by_layer():
    text = mermaid(parse_nodes(kubectl_list(SEVEN + [CPU]), "nodes.json"))
    lines = text.splitlines()
    assert lines[0] == "flowchart TD"
    edges = [tuple(re.fullmatch(r"\s+(\S+) --> (\S+)", line).groups()) for line in lines if "-->" in line]
    declared = {re.match(r"\s+(\S+)\[", line).group(1) for line in lines if re.match(r"\s+\S+\[\"", line)}
    assert all(a in declared and b in declared for a, b in edges)
    assert len(edges) == len(set(edges))
    parents: dict[str, str] = {}
    for parent, child in edges:
        assert child not in parents, f"{child} has two parents"
        parents[child] = parent
    # Ids encode every character but ASCII letters and digits as _<hex>_ ('-' is 2d): one id per name.
    assert {c for c in parents if c.startswith("L2_")} == {"L2_nn_2d_2a", "L2_nn_2d_2b"}
    assert all(parents[c] == "L1_nn_2d_1a" for c in parents if c.startswith("L2_"))
    assert parents["node_hyperpod_2d_i_2d_05"] == "L3_nn_2d_3c" and parents["L3_nn_2d_3c"] == "L2_nn_2d_2b"
    assert "UnschedulablePendingReplacement" in text
    assert "1 node(s) without topology labels: hyperpod-i-cpu" in text


def test_table_names_shared_network_nodes_and_unlabelled_nodes():
    text = table(parse_nodes(kubectl_list(SEVEN + [CPU]), "nodes.json"))
    assert "3 nodes share layer-3 network node nn-3c: hyperpod-i-04, hyperpod-i-05, hyperpod-i-06" in text
    assert "without topology labels (type not supported, or labels not yet set): hyperpod-i-cpu" in text
    assert "ml.m7i.4xlarge" in text


def test_fourth_layer_is_shown_where_present():
    nodes = parse_nodes(kubectl_list([node("a", ["x1", "x2", "x3", "x4"], "ml.p6e-gb200.36xlarge"),
                                      node("b", ["x1", "x2", "x3", "x4"], "ml.p6e-gb200.36xlarge")]), "nodes.json")
    assert [(g["layer"], g["layers"]) for g in as_json(nodes)["groups"]] == [
        (1, ["x1"]), (2, ["x1", "x2"]), (3, ["x1", "x2", "x3"]), (4, ["x1", "x2", "x3", "x4"])]
    assert "L4_x4 --> node_a" in mermaid(nodes)


@pytest.mark.parametrize(("text", "message"), [
    ("not json", "not JSON"),
    (json.dumps({"kind": "Node"}), "not a Kubernetes list"),
    (kubectl_list([{"kind": "Pod", "metadata": {"name": "p"}}]), "item 0 is a Pod, not a Node"),
    (kubectl_list([]), "has no nodes"),
])
def test_bad_input_is_named(text, message):
    with pytest.raises(TopologyInputError, match=message):
        parse_nodes(text, "nodes.json")


@pytest.mark.slow
def test_cli_reads_stdin_and_reports_bad_input_without_traceback(tmp_path):
    run = lambda *args, **kw: subprocess.run([sys.executable, "-m", "cdk_app", "topology", *args], cwd=ROOT,
                                             capture_output=True, text=True, **kw)
    good = run("-", "--format", "mermaid", input=kubectl_list(SEVEN))
    assert good.returncode == 0 and good.stdout.startswith("flowchart TD")
    as_json_out = run("-", "--format", "json", input=kubectl_list(SEVEN))
    assert len(json.loads(as_json_out.stdout)["nodes"]) == 7
    bad = tmp_path / "pods.json"
    bad.write_text(kubectl_list([{"kind": "Pod", "metadata": {"name": "p"}}]))
    result = run(str(bad))
    assert result.returncode == 2 and "not a Node" in result.stderr and "Traceback" not in result.stderr
    binary = tmp_path / "x.bin"
    binary.write_bytes(b"\xff\xfe\x00")
    result = run(str(binary))
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_table_and_json_show_what_each_node_advertises():
    nodes = parse_nodes(kubectl_list(SEVEN + [CPU]), "nodes.json")
    rows = {line.split()[4]: line.split() for line in table(nodes).splitlines()[1:9]}
    assert rows["hyperpod-i-01"][-2:] == ["8", "32"]
    assert rows["hyperpod-i-cpu"][-2:] == ["-", "-"]
    by_name = {n["name"]: n for n in as_json(nodes)["nodes"]}
    assert by_name["hyperpod-i-01"]["allocatable"] == {"vpc.amazonaws.com/efa": 32, "nvidia.com/gpu": 8}
    assert by_name["hyperpod-i-cpu"]["allocatable"] == {}


def test_a_device_count_that_is_not_a_whole_number_is_named():
    broken = node("hyperpod-i-01", ["nn-1a"], allocatable={"vpc.amazonaws.com/efa": "lots"})
    with pytest.raises(TopologyInputError, match="nodes.json: node hyperpod-i-01 has vpc.amazonaws.com/efa "
                                                 "allocatable 'lots'; a device count must be a whole number"):
        parse_nodes(kubectl_list([broken]), "nodes.json")


# --- label syntax: what the API server stores is all a node list can hold ---------------------------------------

LAYER_1 = "topology.k8s.aws/network-node-layer-1"


@pytest.mark.parametrize("key, value, refused", [
    (LAYER_1, "a/b", "value"),  # '/' would also make two paths read as one (a/b under x vs b under x/a)
    (LAYER_1, "-a", "value"),
    (LAYER_1, "a" * 64, "value"),
    (LAYER_1, "a b", "value"),
    (LAYER_1, "ä", "value"),
    ("", "x", "name"),
    ("/x", "x", "name"),
    ("a/b/c", "x", "name"),
    ("Upper.Case/x", "x", "name"),
    ("x" * 64, "x", "name"),
    ("p" * 254 + "/x", "x", "name"),
    ("k" * 100_000, "x", "name"),  # long text is refused by its length, before any pattern runs
])
def test_labels_kubernetes_refuses_are_refused(key, value, refused):
    item = node("n", ["x"])
    item["metadata"]["labels"][key] = value
    with pytest.raises(TopologyInputError, match=f"has label {'name' if refused == 'name' else '.* = '}.*"
                                                 "Kubernetes refuses"):
        parse_nodes(kubectl_list([item]), "nodes.json")


@pytest.mark.parametrize("key, value", [
    (LAYER_1, ""), (LAYER_1, "a" * 63), (LAYER_1, "A.b_c-9"), ("p" * 253 + "/x", "v"), ("x" * 63, "v"),
    ("example.com/a.b", ""),
])
def test_labels_kubernetes_allows_are_read(key, value):
    item = node("n", [])
    item["metadata"]["labels"][key] = value
    [read] = parse_nodes(kubectl_list([item]), "nodes.json")
    assert read.layers == ((value,) if key == LAYER_1 else ())


def test_an_empty_layer_value_is_a_domain_shown_apart_from_no_label():
    """Kubernetes allows an empty value and Kueue keys a domain by it; the table shows it as "" ("-": no label)."""
    nodes = parse_nodes(kubectl_list([node("a", ["x", ""]), node("b", ["x", ""]), node("c", ["x"])]), "nodes.json")
    assert [(g["layer"], g["layers"], len(g["nodes"])) for g in as_json(nodes)["groups"]] == [
        (1, ["x"], 3), (2, ["x", ""], 2)]
    rows = {line.split()[4]: line.split()[:4] for line in table(nodes).splitlines()[1:4]}
    assert rows == {"a": ["x", '""', "-", "-"], "b": ["x", '""', "-", "-"], "c": ["x", "-", "-", "-"]}


def test_a_large_group_names_ten_nodes_and_counts_the_rest():
    nodes = parse_nodes(kubectl_list([node(f"n{i:02}", ["x"]) for i in range(25)]), "nodes.json")
    [line] = [line for line in table(nodes).splitlines() if "share" in line]
    assert line == "25 nodes share layer-1 network node x: " + ", ".join(f"n{i:02}" for i in range(10)) + " and 15 more"
