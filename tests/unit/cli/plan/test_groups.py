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


def flexible(*types: str):
    """A group made flexible as the construct writes it (constructs/hyperpod_cluster.py): InstanceRequirements in
    place of InstanceType, which botocore says are mutually exclusive."""
    def change(groups):
        del groups[0]["InstanceType"]
        groups[0]["InstanceRequirements"] = {"InstanceTypes": list(types)}
    return change


def test_a_flexible_group_is_named_with_its_types_never_a_question_mark():
    # Red team (pl_flexcount.yaml vs base_fl): "shrunk: 4 -> 3 x ?" - the diff read InstanceType only.
    before = edited(flexible("ml.g5.12xlarge", "ml.g5.24xlarge"))
    after = copy.deepcopy(before)
    groups_of(after)[0]["InstanceCount"] = 3
    [change] = group_changes({STACK: before}, {STACK: after})
    assert change.instance_type == "ml.g5.12xlarge/ml.g5.24xlarge"
    text = render(Plan("test", groups=[change]))
    assert "shrunk: 4 -> 3 x ml.g5.12xlarge/ml.g5.24xlarge" in text and "?" not in text and "None" not in text


def hazards_between(before: dict, after: dict) -> list:
    from cdk_app.cli.plan.hazards import group_hazards

    [old] = [r for r in before["Resources"].values() if r["Type"] == "AWS::SageMaker::Cluster"]
    [new] = [r for r in after["Resources"].values() if r["Type"] == "AWS::SageMaker::Cluster"]
    return group_hazards(STACK, "HyperPod", old["Properties"], new["Properties"])


def test_adding_or_reordering_fallback_types_is_called_out_not_refused():
    # Red team (pl_flex.yaml vs base_dev): "instance type ml.g5.12xlarge -> None ... REFUSED". Neither InstanceType
    # nor InstanceRequirements is create-only in cfn-lint's schema, and a node whose type the group still lists
    # has nothing to be replaced for.
    from cdk_app.domain.resource_schemas import create_only_properties

    assert not any("InstanceGroups" in path for path in create_only_properties("AWS::SageMaker::Cluster"))
    for before, after in ((cluster_template(), edited(flexible("ml.g5.12xlarge", "ml.g5.24xlarge"))),
                          (edited(flexible("ml.g5.12xlarge", "ml.g5.24xlarge")),
                           edited(flexible("ml.g5.24xlarge", "ml.g5.12xlarge")))):
        [hazard] = hazards_between(before, after)
        assert not hazard.refuse
        assert "its nodes keep running" in hazard.text and "None" not in hazard.text


def test_a_type_the_group_no_longer_lists_rebuilds_its_nodes():
    [hazard] = hazards_between(edited(flexible("ml.g5.12xlarge", "ml.g5.24xlarge")), cluster_template())
    assert hazard.refuse
    assert hazard.text.startswith("instance group gpu-workers: instance types ml.g5.12xlarge/ml.g5.24xlarge -> "
                                  "ml.g5.12xlarge (no longer runs ml.g5.24xlarge): its 4 x ml.g5.12xlarge/"
                                  "ml.g5.24xlarge nodes are terminated and re-created")
