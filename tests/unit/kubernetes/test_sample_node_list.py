"""config/nodes/prod.json, the sample `kubectl get nodes -o json` a team can try `topology` and
`job --cluster-nodes` on (its role cannot read the nodes): valid Node objects for Kubernetes' own schema, one node
per instance of prod's groups with the group's type, labels and taints, and topology labels exactly where the
type carries them."""

from __future__ import annotations

import copy
import json
from collections import Counter

import kubernetes_validate
from support.cli_runner import invoke
from support.paths import ROOT

from cdk_app.config.loader import load_config
from cdk_app.kubernetes.topology import INSTANCE_TYPE_LABELS, LAYER_LABEL, type_topology_labels

SAMPLE = ROOT / "config" / "nodes" / "prod.json"
CONFIG = load_config(ROOT / "config" / "prod.yaml").config


def nodes() -> list[dict]:
    return json.loads(SAMPLE.read_text())["items"]


def test_every_item_is_a_node_for_the_clusters_kubernetes():
    for node in nodes():
        kubernetes_validate.validate(copy.deepcopy(node), CONFIG.eks.kubernetes_version, strict=True)


def test_the_sample_holds_prods_instance_groups_as_hyperpod_labels_them():
    groups = CONFIG.hyperpod.instance_groups
    expected: Counter[str] = Counter()
    for group in groups:
        expected[group.instance_type] += group.count
    assert Counter(n["metadata"]["labels"][INSTANCE_TYPE_LABELS[0]] for n in nodes()) == expected
    for node in nodes():
        labels = node["metadata"]["labels"]
        group = next(g for g in groups if g.instance_type == labels[INSTANCE_TYPE_LABELS[0]])
        assert dict(group.labels) == {k: labels.get(k) for k in group.labels}
        assert sorted(k for k in labels if k.startswith(LAYER_LABEL.format(""))) == type_topology_labels(
            group.instance_type)
        assert node["spec"].get("taints", []) == [
            {"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect} for t in group.taints]


def test_topology_and_job_read_it():
    table = invoke("topology", str(SAMPLE), "--format", "table")
    assert table.exit_code == 0, table.output
    assert "4 nodes share layer-3 network node" in table.output
    fits = invoke("job", "--config", "config/prod.yaml", "--team", "research-nlp", "--name", "near", "--image",
                  "repo/train:1", "--nodes", "3", "--topology", "required", "--cluster-nodes", str(SAMPLE), "--",
                  "python", "train.py")
    assert fits.exit_code == 0, fits.output
