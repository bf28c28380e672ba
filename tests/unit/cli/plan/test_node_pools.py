"""plan's NodePool lines, read from the cluster stack's autoscaling set as the kit writes it (autoscaling_manifests of
a config): a pool removed takes the nodes it launched with it (refused unless allowed), a pool added or with other
limits is said, not refused."""

from __future__ import annotations

import json

from support.paths import ROOT

from cdk_app.cli.plan.compare import compare
from cdk_app.cli.plan.node_pools import node_pool_hazards
from cdk_app.config.loader import load_config
from cdk_app.kubernetes.autoscaling import autoscaling_manifests

STACK = "HyperPod-dev-cluster"
G5, G5_24 = "ml.g5.12xlarge", "ml.g5.24xlarge"


def template(write_config, *groups: tuple[str, str, int]) -> dict:
    """The cluster stack's autoscaling set for dev.yaml with autoscaled groups (name, type, max_count)."""
    text = (ROOT / "config" / "dev.yaml").read_text()
    text = text.replace("  node_recovery: Automatic\n", "  node_recovery: Automatic\n  autoscaling: true\n", 1)
    # Two threads per core, as dev's fixed g5 group: the limits then follow the quotas' GPUs and memory.
    extra = "".join(f"    - name: {name}\n      instance_type: {itype}\n      count: 0\n      max_count: {most}\n"
                    "      threads_per_core: 2\n" for name, itype, most in groups)
    text = text.replace("        workload: cpu\n", "        workload: cpu\n" + extra, 1)
    manifests = autoscaling_manifests(load_config(write_config(text)).config)
    return {"Resources": {"Autoscaling": {"Type": "Custom::KubernetesManifests",
                                          "Properties": {"Name": "autoscaling", "Manifests": json.dumps(manifests)}}}}


def test_a_removed_pool_is_refused_and_says_its_nodes_go(write_config):
    before = template(write_config, ("a", G5, 4), ("b", G5_24, 2))
    after = template(write_config, ("a", G5, 4))
    [hazard] = node_pool_hazards({STACK: before}, {STACK: after})
    assert hazard.refuse and hazard.name == f"Autoscaling/hyperpod-kit-autoscaling-{G5_24}"
    assert "removed: Kubernetes deletes the nodes it launched with it" in hazard.text


def test_another_types_pool_is_added_beside_the_kept_one(write_config):
    before = template(write_config, ("a", G5, 4))
    after = template(write_config, ("a", G5, 4), ("b", G5_24, 2))
    hazards = node_pool_hazards({STACK: before}, {STACK: after})
    # dev's quotas hold no g5.24xlarge: the new pool may launch nothing, and the g5.12xlarge one is left as it was.
    assert [(h.name, h.refuse) for h in hazards] == [(f"Autoscaling/hyperpod-kit-autoscaling-{G5_24}", False)]
    assert "added: it may launch nodes up to 0 x ml.g5.24xlarge (memory 0Mi, nvidia.com/gpu 0)" in hazards[0].text


def test_lowered_limits_are_said_with_what_they_do_to_running_nodes(write_config):
    # dev's teams hold the fixed 4 g5 and may borrow 2.5 more of the autoscaled ones (john 50 % of 3, smith 100 % of
    # 1): 3 whole nodes past the fixed 4; a max_count of 1 caps it.
    before = template(write_config, ("a", G5, 4))
    after = template(write_config, ("a", G5, 1))
    [hazard] = node_pool_hazards({STACK: before}, {STACK: after})
    assert not hazard.refuse
    assert "limits 3 x ml.g5.12xlarge (memory 589824Mi, nvidia.com/gpu 12) -> 1 x ml.g5.12xlarge" in hazard.text
    assert "a lowered limit removes no running node; Karpenter launches none past it" in hazard.text


def test_compare_carries_the_pool_lines(write_config):
    before = template(write_config, ("a", G5, 4), ("b", G5_24, 2))
    after = template(write_config, ("a", G5, 4))
    plan = compare({STACK: before}, {STACK: after}, "test")
    assert [h.name for h in plan.hazards if "NodePool" in h.text] == [f"Autoscaling/hyperpod-kit-autoscaling-{G5_24}"]


def test_a_hand_edited_set_is_no_crash(write_config):
    broken = {"Resources": {"Autoscaling": {"Type": "Custom::KubernetesManifests",
                                            "Properties": {"Name": "autoscaling", "Manifests": "{not json"}}}}
    odd = {"Resources": {"Autoscaling": {"Type": "Custom::KubernetesManifests",
                                         "Properties": {"Name": "autoscaling", "Manifests": json.dumps([1, {"kind": "NodePool"}])}}}}
    assert node_pool_hazards({STACK: broken}, {STACK: odd}) == []
