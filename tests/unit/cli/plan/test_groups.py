"""plan's instance-group lines, on the dev cluster template as the app synthesizes it (the reviewed synth
snapshot): a group added, removed, grown or shrunk is named with its nodes from -> to."""

from __future__ import annotations

import copy
import json

from support.paths import ROOT

from cdk_app.cli.plan import render
from cdk_app.cli.plan.groups import group_changes
from cdk_app.cli.plan.model import Plan

SNAPSHOT = ROOT / "tests/stacks/__snapshots__/test_synth/test_template_matches_snapshot[cluster-dev].json"
STACK = "HyperPod-dev-cluster"


def cluster_template() -> dict:
    return json.loads(SNAPSHOT.read_text())


def groups_of(template: dict) -> list[dict]:
    [cluster] = [r for r in template["Resources"].values() if r["Type"] == "AWS::SageMaker::Cluster"]
    return cluster["Properties"]["InstanceGroups"]


def edited(change) -> dict:
    template = copy.deepcopy(cluster_template())
    change(groups_of(template))
    return template


def test_the_snapshot_holds_devs_groups():
    assert [(g["InstanceGroupName"], g["InstanceCount"]) for g in groups_of(cluster_template())] == [
        ("gpu-workers", 4), ("cpu-workers", 2)]


def test_unchanged_groups_are_no_change():
    assert group_changes({STACK: cluster_template()}, {STACK: cluster_template()}) == []


def test_a_grown_group_is_named_with_its_nodes_from_and_to():
    def grow(groups):
        groups[0]["InstanceCount"] = 5
    [change] = group_changes({STACK: cluster_template()}, {STACK: edited(grow)})
    assert change.to_json() == {"group": "gpu-workers", "instance_type": "ml.g5.12xlarge", "change": "grown",
                                "before": 4, "after": 5}
    text = render(Plan("test", groups=[change]))
    assert "  ~ instance group gpu-workers grown: 4 -> 5 x ml.g5.12xlarge (1 node(s) added)" in text


def test_added_removed_and_shrunk_groups():
    def reshape(groups):
        added = copy.deepcopy(groups[1])
        added["InstanceGroupName"] = "cpu-large"
        groups[0]["InstanceCount"] = 2
        groups[1] = added
    changes = group_changes({STACK: cluster_template()}, {STACK: edited(reshape)})
    assert [(c.group, c.change, c.before, c.after) for c in changes] == [
        ("cpu-large", "added", None, 2), ("cpu-workers", "removed", 2, None), ("gpu-workers", "shrunk", 4, 2)]
    text = render(Plan("test", groups=changes))
    assert "  + instance group cpu-large added: 2 x ml.m5.2xlarge" in text
    assert "  - instance group cpu-workers removed: 2 x ml.m5.2xlarge" in text
    assert "  ~ instance group gpu-workers shrunk: 4 -> 2 x ml.g5.12xlarge (2 node(s) removed" in text


def test_every_group_of_a_new_cluster_is_added():
    changes = group_changes({}, {STACK: cluster_template()})
    assert [(c.group, c.change, c.after) for c in changes] == [("cpu-workers", "added", 2), ("gpu-workers", "added", 4)]


def test_a_hand_edited_cluster_without_a_group_list_is_no_change_and_no_crash():
    broken = copy.deepcopy(cluster_template())
    [cluster] = [r for r in broken["Resources"].values() if r["Type"] == "AWS::SageMaker::Cluster"]
    cluster["Properties"]["InstanceGroups"] = None
    changes = group_changes({STACK: cluster_template()}, {STACK: broken})
    assert [(c.group, c.change) for c in changes] == [("cpu-workers", "removed"), ("gpu-workers", "removed")]
