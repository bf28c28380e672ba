"""The installer's wait for a schedulable HyperPod node (helm_release_handler is_complete, Kind
WaitForSchedulableNode), run with the installer's own kubectl against the real API server: the nodes are real Node
objects as the API server stores and serves them - labels, taints, cordon and the Ready condition - so the handler
reads the shape Kubernetes gives it, not one the tests made up."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from support.handlers import layer_binary, load_handler
from support.realk8s.api import Cluster

handler = load_handler("helm_release_handler")
import installer_tools as tools  # noqa: E402 (the handler's sibling, as Lambda imports it)

HEALTH = "sagemaker.amazonaws.com/node-health-status"
SCOPE = {"ClusterName": "hyperpod-eks", "Release": {}, "Stacks": {}}


def node(name: str, health: str, ready: str = "True", **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HEALTH: health, "sagemaker.amazonaws.com/deep-health-check":
                                                  "InProgress" if health == "Unschedulable" else "Passed"}},
            "spec": spec,
            "status": {"conditions": [{"type": "Ready", "status": ready, "reason": "KubeletReady" if ready == "True"
                                       else "KubeletNotReady", "message": "-", "lastHeartbeatTime": "2026-11-27T10:00:00Z",
                                       "lastTransitionTime": "2026-11-27T10:00:00Z"}]}}


@pytest.fixture(scope="module")
def dev(start_cluster) -> Cluster:
    return start_cluster("dev")


@pytest.fixture
def installer(dev, monkeypatch, tmp_path):
    """The installer's scope, its kubectl (the layer's, 1.33 for the 1.33 API server), and the real API server in
    place of EKS."""
    monkeypatch.setenv("INSTALLER_SCOPE", json.dumps(SCOPE))
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setattr(tools, "KUBECTL", str(layer_binary("kubectl/kubectl", tmp_path / "layer", minor=33)))

    def kubeconfig(workdir: Path, _cluster: str, _region: str, budget: tools.Budget) -> Path:
        tools.await_access(dev.admin_kubeconfig, workdir, budget)
        return dev.admin_kubeconfig

    monkeypatch.setattr(tools, "write_kubeconfig", kubeconfig)
    return dev


def event(started: float) -> dict:
    return {"RequestType": "Create", "PhysicalResourceId": "hyperpod-eks/wait/schedulable-node",
            "Data": {"WaitStartedAt": f"{started:.0f}"},
            "ResourceProperties": {"Kind": "WaitForSchedulableNode", "ClusterName": "hyperpod-eks",
                                   "Region": "us-east-1", "TimeoutSeconds": "3300"}}


def add(cluster: Cluster, obj: dict) -> None:
    """Create the node as a kubelet registers it. The API server's TaintNodesByCondition admission gives every
    new node node.kubernetes.io/not-ready:NoSchedule; once the kubelet reports Ready the node lifecycle
    controller lifts it - done here by hand, keeping the node's own taints."""
    answer = cluster.create(obj, dry_run=False)
    assert answer.allowed, answer.message
    stored = answer.body
    assert {t["key"] for t in stored["spec"]["taints"]} >= {"node.kubernetes.io/not-ready"}
    if obj["status"]["conditions"][0]["status"] == "True":
        stored["spec"]["taints"] = obj["spec"].get("taints") or []
        answer = cluster.update(stored, dry_run=False)
        assert answer.allowed, answer.message


def test_a_newly_registered_node_is_not_schedulable_until_its_not_ready_taint_goes(installer):
    """What the real API server adds on its own: a Ready node still carrying the not-ready taint keeps waiting."""
    answer = installer.create(node("cpu-registering", "Schedulable"), dry_run=False)
    assert answer.allowed, answer.message
    assert handler.node_refusal(answer.body) == "tainted node.kubernetes.io/not-ready=:NoSchedule"
    assert installer.delete(answer.body, dry_run=False).allowed


def test_only_a_ready_healthy_uncordoned_untainted_node_ends_the_wait(installer):
    cluster = installer
    add(cluster, node("gpu-in-deep-health-check", "Unschedulable", taints=[
        {"key": HEALTH, "value": "Unschedulable", "effect": "NoSchedule"}]))
    add(cluster, node("cpu-not-ready", "Schedulable", ready="False"))
    add(cluster, node("cpu-cordoned", "Schedulable", unschedulable=True))
    add(cluster, node("cpu-admin-taint", "Schedulable", taints=[{"key": "dedicated", "value": "system",
                                                                  "effect": "NoSchedule"}]))
    assert handler.is_complete(event(time.time())) == {"IsComplete": False}
    with pytest.raises(tools.HelmReleaseError) as failure:
        handler.is_complete(event(time.time() - 3400))
    assert ("4 node(s): 1 Unschedulable (deep health check InProgress), 1 cordoned, 1 not Ready, "
            "1 tainted dedicated=system:NoSchedule") in str(failure.value)
    add(cluster, node("cpu-ready", "Schedulable", taints=[{"key": "x", "effect": "PreferNoSchedule"}]))
    assert handler.is_complete(event(time.time())) == {"IsComplete": True, "Data": {"SchedulableNode": "cpu-ready"}}
