"""Messages are part of the contract (every message actionable): the exact text of the topology
reader's refusals and of the job command's refusals, the table the topology command prints, and the JSON
shapes of findings and capacity rows that CI tools read."""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import traceback
from pathlib import Path

import pytest
from support.node_lists import CPU, SEVEN, kubectl_list, node
from support.paths import ROOT, SUPPORT

from cdk_app.config.loader import load_config
from cdk_app.config.model import UnqueuedPodResources
from cdk_app.kubernetes.job_templates import (
    JobOptionError,
    JobRequest,
    JobSpecError,
    Volume,
    check,
    check_options,
    parse_env,
    parse_mig_option,
    parse_scratch,
    parse_volume,
    render,
)
from cdk_app.kubernetes.topology import TopologyInputError, as_json, parse_nodes, table

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
    ('{"items": [{"metadata": {"name": "n1"}}, {"metadata": {"name": "n2"}}, {"metadata": {"name": "n1"}}]}',
     f"n.json: node 'n1' is listed twice (items 0 and 2); a node list names each node once - {KUBECTL}, not lists "
     "joined"),
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
        "3 nodes share layer-1 network node nn-1a: hyperpod-i-01, hyperpod-i-02, hyperpod-i-03",
        "3 nodes share layer-2 network node nn-2a: hyperpod-i-01, hyperpod-i-02, hyperpod-i-03",
        "2 nodes share layer-3 network node nn-3a: hyperpod-i-01, hyperpod-i-02",
        "without topology labels (type not supported, or labels not yet set): hyperpod-i-cpu",
    ]
    doc = as_json(nodes)
    assert doc["nodes"][0] == {"name": "hyperpod-i-01", "instance_type": "ml.p5.48xlarge", "health": "Schedulable",
                               "layers": ["nn-1a", "nn-2a", "nn-3a"], "ultraserver": None,
                               "allocatable": {"vpc.amazonaws.com/efa": 32, "nvidia.com/gpu": 8}}
    node_01 = {"name": "hyperpod-i-01", "instance_type": "ml.p5.48xlarge", "health": "Schedulable"}
    assert doc["groups"][0] == {"layer": 1, "layers": ["nn-1a"], "network_node": "nn-1a",
                                "nodes": [node_01, {**node_01, "name": "hyperpod-i-02"}, {**node_01, "name": "hyperpod-i-03"}]}
    assert [(g["layer"], g["network_node"], len(g["nodes"])) for g in doc["groups"]] == [
        (1, "nn-1a", 3), (2, "nn-2a", 3), (3, "nn-3a", 2), (3, "nn-3b", 1)]  # the CPU node is in no domain


# --- job refusals, word for word ---------------------------------------------------------------------
PROD = load_config(ROOT / "config" / "prod.yaml").config
DEV = load_config(ROOT / "config" / "dev.yaml").config
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
    # The options first (a usage error needs no config): the name too long for 12 nodes before the 12 nodes.
    ({"name": "a" * 54, "nodes": 12}, f"--name '{'a' * 54}' is too long: the training operator's last worker Service "
                                      f"would be '{'a' * 54}-worker-10' (64 characters, at most 63); use at most 53 "
                                      "characters"),
    # a*54-worker-1 is 63 characters: allowed (3 nodes x 8 GPUs is what research-nlp can reach at most)
    ({"name": "a" * 54, "nodes": 3}, None),
    ({"name": "a" * 55, "nodes": 1},
     f"--name '{'a' * 55}' is too long: the training operator's master Service would be '{'a' * 55}-master-0' "
     "(64 characters, at most 63); use at most 54 characters"),
    ({"name": "a" * 53, "nodes": 12, "instance_type": "ml.p5.48xlarge"},
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


def _teams(**update_of):
    """PROD with some teams' fields changed: {team: {field: value}}."""
    return PROD.model_copy(update={"teams": tuple(t.model_copy(update=update_of[t.name]) if t.name in update_of else t
                                                  for t in PROD.teams)})


CLUSTER = parse_nodes(kubectl_list(SEVEN + [CPU]), "nodes.json")
FLAT = parse_nodes(kubectl_list([node(f"p{i}", []) for i in range(3)]), "flat.json")  # no topology labels
BARE = parse_nodes(kubectl_list([node(f"p{i}", ["a", "b", "c"], allocatable={"cpu": "191450m", "memory": "2027323936Ki"})
                                 for i in range(3)]), "bare.json")  # no device plugin resources at all
BARE_ONE_DOWN = parse_nodes(kubectl_list([node(f"p{i}", ["a", "b", "c"], health="UnschedulablePendingReboot" if i == 2 else
                                              "Schedulable", allocatable={"cpu": "191450m", "memory": "2027323936Ki"})
                                         for i in range(3)]), "bare.json")
ONLY_CPU = parse_nodes(kubectl_list([CPU]), "cpu.json")
BARE_GPU = parse_nodes(kubectl_list([node(f"p{i}", ["a", "b", "c"], allocatable={"nvidia.com/gpu": str(4 + 2 * i)})
                                     for i in range(3)]), "bare.json")  # GPUs, but no EFA device plugin
M7I_48 = PROD.model_copy(update={"hyperpod": PROD.hyperpod.model_copy(update={"instance_groups": tuple(
    g.model_copy(update={"instance_type": "ml.m7i.48xlarge"}) if g.instance_type == "ml.m7i.4xlarge" else g
    for g in PROD.hyperpod.instance_groups)})})  # an EFA type without a documented count
NO_DEFAULTS = _teams(**{t.name: {"default_priority_class": None} for t in PROD.teams})
OLD_ADDON = PROD.model_copy(update={"task_governance": PROD.task_governance.model_copy(
    update={"addon_version": "v1.1.3-eksbuild.1"})})
# research-nlp's unqueued pods capped below the etcd rendezvous' 256Mi (by the pod cap; its CPU fits).
SMALL_CAPS = _teams(**{"research-nlp": {"unqueued_pods": UnqueuedPodResources(container_memory="1Gi", pod_memory="200Mi")}})
MPI_ADDON = "--auto-resume: HyperPod job auto-resume works for PyTorchJob only (through the Kubeflow training operator); "
A60 = "a" * 60
# Every p5 group partitioned; the flexible one comes up as p5 or p4de, partitioned as either (the label is the
# group's): no whole GPU on either type.
ALL_MIG = PROD.model_copy(update={"hyperpod": PROD.hyperpod.model_copy(update={"instance_groups": tuple(
    g.model_copy(update={"labels": {**g.labels, "nvidia.com/mig.config": "all-1g.10gb"}}
                 | ({"fallback_instance_types": ("ml.p4de.24xlarge",)} if g.name == "h100-b" else {}))
    if g.instance_type == "ml.p5.48xlarge" else g for g in PROD.hyperpod.instance_groups)})})

# One case per refusal `job` can give (test_every_refusal_has_a_case_word_for_word checks that none is missing):
# (request change, config, node list, the message). The node list is passed without a source name, so the
# message says "the node list".
REFUSALS = [
    ({"instance_type": "ml.p5.48xlarge"}, PROD, ONLY_CPU,
     "--cluster-nodes: the node list has no ml.p5.48xlarge node; it has ml.m7i.4xlarge"),
    ({"efa_per_node": -1}, PROD, None, "--efa must be 0 or more, got -1"),
    ({"instance_type": "ml.m7i.48xlarge", "efa_per_node": "all", "accelerators_per_node": 0}, M7I_48, None,
     "--efa all: the kit has no documented EFA count for ml.m7i.48xlarge; pass --efa N, or --cluster-nodes with "
     "`kubectl get nodes -o json` output to read it from the nodes"),
    # --efa all and --efa N follow one rule: nodes that advertise no EFA are refused either way, naming what they have.
    ({"instance_type": "ml.m7i.4xlarge", "efa_per_node": "all", "accelerators_per_node": 0}, PROD, ONLY_CPU,
     "--efa all: none of the 1 ml.m7i.4xlarge nodes in the node list advertises vpc.amazonaws.com/efa (they "
     "advertise no device); drop --efa (ml.m7i.4xlarge has no EFA interface (the EFA device plugin advertises "
     "vpc.amazonaws.com/efa only on EFA instance types))"),
    ({"efa_per_node": "all", "nodes": 3}, PROD, BARE_GPU, "--efa all: none of the 3 ml.p5.48xlarge nodes in the node "
     "list advertises vpc.amazonaws.com/efa (they advertise 4 to 8 nvidia.com/gpu); is the HyperPod chart's EFA "
     "device plugin running on them?"),
    ({"nodes": 4}, PROD, FLAT, "--nodes 4: the node list has only 3 ml.p5.48xlarge node(s)"),
    ({"nodes": 7}, PROD, CLUSTER, "--nodes 7: 6 of the 7 ml.p5.48xlarge nodes in the node list can give one pod 8 "
     "nvidia.com/gpu (hyperpod-i-07 UnschedulablePendingReplacement)"),
    # A resource a node does not advertise at all counts as 0 of it, however little is asked.
    ({"nodes": 3, "accelerators_per_node": 1}, PROD, BARE, "--nodes 3: 0 of the 3 ml.p5.48xlarge nodes in the node "
     "list can give one pod 1 nvidia.com/gpu (p0 has 0 nvidia.com/gpu; p1 has 0 nvidia.com/gpu; p2 has 0 "
     "nvidia.com/gpu); no node advertises nvidia.com/gpu - is the HyperPod chart's device plugin for it running?"),
    # A pod that asks for no GPU is not told about the GPU device plugin, even on nodes without one.
    ({"nodes": 3, "accelerators_per_node": 0}, PROD, BARE_ONE_DOWN, "--nodes 3: 2 of the 3 ml.p5.48xlarge nodes in the "
     "node list can take a pod (p2 UnschedulablePendingReboot)"),
    ({"nodes": 3, "topology": "required", "topology_layer": 1}, PROD, FLAT, "--topology required on layer 1: at most 0 "
     "of the nodes in the node list that fit share one layer-1 network node (none), so --nodes 3 would wait forever; "
     "ask for fewer nodes, a lower layer number (none) or --topology preferred"),
    ({"priority": None}, NO_DEFAULTS, None, "--priority is required: the config sets cluster_policy.require_priority_class "
     "and team 'research-nlp' has no default_priority_class; classes: fine-tuning, training, experimentation"),
    ({"priority": "x"}, PROD, None,
     "--priority 'x' is not in the cluster policy; classes: inference, fine-tuning, training, experimentation"),
    ({"priority": "inference"}, PROD, None, "--priority 'inference' is not one of the "
     "priority_classes of team research-nlp; classes: fine-tuning, training, experimentation"),
    ({"priority": "training"}, _teams(**{"research-nlp": {"priority_classes": ()}}), None, "--priority 'training' is "
     "not one of the priority_classes of team research-nlp; classes: none"),
    ({"image": ""}, PROD, None, "--image '': give a container image reference (not empty, no spaces)"),
    ({"image": "Repo/Train:1"}, PROD, None, "--image 'Repo/Train:1': give a container image reference (not empty, "
     "no spaces) the kubelet can pull: the repository must be lower-case"),
    ({"name": "Llama"}, PROD, None, "--name 'Llama' is not a DNS-1035 label: 1-63 lower-case letters, digits and "
     "'-', starting with a letter and ending with a letter or digit"),
    ({"name": A60, "kind": "mpijob"}, PROD, None, f"--name '{A60}' is too long: the MPI operator's launcher Job "
     f"would be '{A60}-launcher' (69 characters, at most 63); use at most 54 characters"),
    ({"nodes": 0}, PROD, None, "--nodes must be at least 1, got 0"),
    ({"max_retries": -1}, PROD, None, "--max-retries must be 0 or more, got -1"),
    ({"max_retries": 2**31}, PROD, None, "--max-retries 2147483648: at most 2147483647 (backoffLimit is an int32)"),
    ({"auto_resume": True, "kind": "mpijob"}, PROD, None,
     f"{MPI_ADDON}an MPIJob would not be resumed - drop --auto-resume or use --kind pytorchjob"),
    ({"rdzv_backend": "etcd"}, PROD, None,
     "--rdzv-backend etcd: only an elastic PyTorchJob (--min-nodes/--max-nodes) has a rendezvous backend"),
    ({"min_nodes": 1, "kind": "job"}, PROD, None, "--min-nodes/--max-nodes: only a PyTorchJob is elastic, not a Job"),
    ({"min_nodes": 1, "rdzv_backend": "etcd"}, SMALL_CAPS, None, "--rdzv-backend etcd: the rendezvous Deployment asks "
     "for 256Mi memory, above team 'research-nlp''s cap of 200Mi (teams[].unqueued_pods), so the team namespace's "
     "guardrail refuses it; use --rdzv-backend c10d or raise the cap"),
    ({"min_nodes": 3, "nodes": 2, "max_nodes": 4}, PROD, None, "--min-nodes 3, --nodes 2, --max-nodes 4: need 1 <= "
     "min-nodes <= nodes <= max-nodes (--nodes, 1 when not given, is the size the job starts at; a bound not given "
     "is --nodes)"),
    ({"min_nodes": 1, "max_nodes": 11}, PROD, None, "--max-nodes 11: the config's instance groups have 10 "
     "ml.p5.48xlarge node(s) (h100-a: 6, h100-b: 4); one pod runs per node"),
    ({"env": (("1X", "y"),)}, PROD, None,
     "--env 1X=...: a variable name is letters, digits, '_', '-' and '.', not starting with a digit"),
    ({"env": (("A", "1"), ("A", "2"))}, PROD, None, "--env A: given twice"),
    ({"env": (("NVIDIA_VISIBLE_DEVICES", "all"),)}, PROD, None, "--env NVIDIA_VISIBLE_DEVICES: selects devices no "
     "resource request counts, so the team namespace's guardrail (device-env) refuses it (it may only be '' or "
     "'void'); ask for devices with --accelerators and --efa"),
    ({"volumes": (Volume("Bad", "/x"),)}, PROD, None, "--volume Bad:...: the claim must be a PersistentVolumeClaim "
     "name (lower-case letters, digits, '-' and '.')"),
    ({"volumes": (Volume("data", "x"),)}, PROD, None, "--volume data:x: the mount path must be an absolute path without '.' or '..', not / and outside /dev, /proc, /sys"),
    ({"volumes": (Volume("data", "/dev/shm"),)}, PROD, None, "--volume data:/dev/shm: use --shm SIZE for shared memory"),
    ({"scratch": "1Gi", "scratch_path": "/dev//shm"}, PROD, None, "--scratch 1Gi:/dev//shm: use --shm SIZE for shared "
                                                                  "memory"),
    ({"scratch": "1Gi", "scratch_path": "/sys/x"}, PROD, None, "--scratch 1Gi:/sys/x: the mount path must be an absolute "
                                                               "path without '.' or '..', not / and outside /dev, /proc, /sys"),
    ({"scratch": "1Gi", "scratch_path": "/data", "volumes": (Volume("c", "/data/"),)}, PROD, None,
     "--volume c:/data/: something is already mounted there (--scratch)"),
    ({"team": "john", "priority": None, "scratch": "1Gi", "scratch_path": "/checkpoints/"}, DEV, None,
     "--scratch 1Gi: team john's file system checkpoints is mounted at /checkpoints (storage.file_systems); give the "
     "scratch space another path: --scratch 1Gi:/local-scratch"),
    # Red team: scratch nested in a mount hides that directory of the volume and keeps the writes on the node.
    ({"team": "john", "priority": None, "scratch": "100Gi", "scratch_path": "/checkpoints/sub"}, DEV, None,
     "--scratch 100Gi:/checkpoints/sub: the path is inside another volume's mount, where node-local scratch would "
     "hide that directory of the volume and what the job writes there would be lost with the pod (team john's file "
     "system checkpoints at /checkpoints, storage.file_systems); give it a path of its own, e.g. --scratch "
     "100Gi:/local-scratch"),
    ({"scratch": "1Gi", "scratch_path": "/data/tmp", "volumes": (Volume("c", "/data"),)}, PROD, None,
     "--scratch 1Gi:/data/tmp: the path is inside another volume's mount, where node-local scratch would hide that "
     "directory of the volume and what the job writes there would be lost with the pod (--volume c:/data); give it "
     "a path of its own, e.g. --scratch 1Gi:/scratch"),
    ({"volumes": (Volume("data", "/x"), Volume("more", "/x/"))}, PROD, None,
     "--volume more:/x/: something is already mounted there"),
    # config/dev.yaml's storage section mounts john's file system at /checkpoints.
    ({"team": "john", "priority": None, "volumes": (Volume("other", "/checkpoints/"),)}, DEV, None,
     "--volume other:/checkpoints/: team john's file system checkpoints is mounted there (storage.file_systems); "
     "mount other elsewhere, or give --volume checkpoints:PATH to mount the file system elsewhere"),
    ({"cpu": "lots"}, PROD, None, "--cpu 'lots' is not a positive Kubernetes quantity (e.g. 500m or 4 for CPU, 512Mi "
     "or 16Gi for memory; no spaces)"),
    # Kueue admits a workload with no requests without charging any quota: `job` never writes one.
    ({"accelerators_per_node": 0}, PROD, None, "the job requests no accelerators, CPU or memory on ml.p5.48xlarge, so "
     "Kueue would admit it without counting it against the team's quota; pass --cpu and --memory (one "
     "ml.p5.48xlarge node has 96 vCPU and 2048Gi)"),
    ({"cpu": "1e99999999"}, PROD, None, "--cpu '1e99999999' is more than 10^40: no node has anything near that much"),
    ({"cpu": "1e-50"}, PROD, None, "--cpu '1e-50' is less than 10^-40, far below 1m (a thousandth of a CPU), the "
                                   "smallest amount Kubernetes represents"),
    ({"shm": "1E-99999999"}, PROD, None, "--shm '1E-99999999' is less than 10^-40, far below 1 byte, the smallest "
                                         "amount Kubernetes represents"),
    ({"cpu": "1e-31"}, PROD, None, "--cpu 1e-31 is not a whole number of 1m (a thousandth of a CPU), the smallest "
     "amount Kubernetes represents; round it"),
    ({"memory": "0.5"}, PROD, None, "--memory 0.5 is not a whole number of 1 byte, the smallest amount Kubernetes "
     "represents; round it"),
    ({"shm": "1m"}, PROD, None, "--shm 1m is not a whole number of 1 byte, the smallest amount Kubernetes represents; "
     "round it"),
    ({"memory": "3000Gi"}, PROD, None, "--memory 3000Gi per pod is more than one ml.p5.48xlarge has (2048Gi)"),
    ({"shm": "3000Gi"}, PROD, None, "--shm 3000Gi per pod is more than one ml.p5.48xlarge has (2048Gi)"),
    ({"nodes": 4, "accelerators_per_node": 8}, PROD, None, "--nodes 4 x 8 accelerators per pod = 32 accelerators of "
     "ml.p5.48xlarge, more than team 'research-nlp' can ever get: its quota 12 accelerators + at most 12 accelerators "
     "borrowed (borrow_limit 100%) = 24 accelerators; Kueue would keep the job pending forever"),
    ({"nodes": 6}, _teams(**{"research-nlp": {"borrow_limit": 500}}), None, "--nodes 6 x 8 accelerators per pod = 48 "
     "accelerators of ml.p5.48xlarge, more than team 'research-nlp' can ever get: its quota 12 accelerators + at "
     "most 28 accelerators borrowed (all that the lending teams and the unallocated capacity hold) = 40 accelerators; "
     "Kueue would keep the job "
     "pending forever"),
    ({"team": "inference", "nodes": 10}, PROD, None, "--nodes 10 x 8 accelerators per pod = 80 accelerators of "
     "ml.p5.48xlarge, more than team 'inference' can ever get: its quota is 16 accelerators and a DontLend team does "
     "not borrow; Kueue would keep the job pending forever"),
    ({"instance_type": "ml.m7i.4xlarge", "accelerators_per_node": 0, "cpu": "1"}, PROD, None, "--nodes 2 x 1 vCPU per "
     "pod = 2 vCPU of ml.m7i.4xlarge, more than team 'research-nlp' can ever get: team 'research-nlp' has no quota "
     "for ml.m7i.4xlarge, and a team borrows only on instance types it has a quota for (its borrow_limit is a percent "
     "of that quota); Kueue would keep the job pending forever"),
    ({"nodes": 2}, PROD.model_copy(update={"cluster_policy": PROD.cluster_policy.model_copy(
        update={"idle_resource_sharing": "Disabled"})}), None, "--nodes 2 x 8 accelerators per pod = 16 accelerators "
     "of ml.p5.48xlarge, more than team 'research-nlp' can ever get: its quota is 12 accelerators and no team borrows "
     "while cluster_policy.idle_resource_sharing is Disabled; Kueue would keep the job pending forever"),
    ({}, _teams(**{"research-nlp": {"enabled": False}}), None, "team 'research-nlp' is disabled (enabled: false): task "
     "governance makes no queue for a disabled compute allocation, so Kueue admits none of its jobs; enable the team "
     "first"),
    ({"team": "x"}, PROD, None, "--team 'x' is not a team of the prod config; teams: applied-science, inference, "
     "production-training, research-nlp, research-vision"),
    ({}, _teams(**{"research-nlp": {"quota": ()}}), None, "team 'research-nlp' has no quota on an instance type of the "
     "cluster, so there is no default; pass --instance-type (instance groups have: ml.m7i.4xlarge, ml.p5.48xlarge)"),
    ({"instance_type": "ml.g5.12xlarge"}, PROD, None,
     "--instance-type 'ml.g5.12xlarge' is not in the cluster; instance groups have: ml.m7i.4xlarge, ml.p5.48xlarge"),
    # prod's system group (ml.m7i.2xlarge) is tainted against every team: not a type for a team's job.
    ({"instance_type": "ml.m7i.2xlarge", "accelerators_per_node": 0}, PROD, None,
     "--instance-type 'ml.m7i.2xlarge': only the administrators' system group 'system' has it, whose taint keeps "
     "team pods off; instance groups for teams have: ml.m7i.4xlarge, ml.p5.48xlarge"),
    ({"accelerators_per_node": -1}, PROD, None, "--accelerators must be 0 or more, got -1"),
    ({"accelerators_per_node": 9}, PROD, None, "--accelerators 9 per node is more than one ml.p5.48xlarge has (8)"),
    ({"efa_per_node": 33}, PROD, None, "--efa 33 per node is more than one ml.p5.48xlarge has (32)"),
    ({"instance_type": "ml.m7i.4xlarge", "topology": "required", "accelerators_per_node": 0}, PROD, None,
     "--topology: ml.m7i.4xlarge nodes have no topology labels; supported families: p3dn, p4d, p4de, p5, p5e, p5en, "
     "p6e-gb200, trn1, trn1n, trn2, trn2u"),
    ({"topology": "required"}, OLD_ADDON, None,
     "--topology needs task governance v1.2.2-eksbuild.1 or later; the config has v1.1.3-eksbuild.1"),
    ({"topology": "required", "topology_layer": 5}, PROD, None, "--topology-layer must be 1 to 4, got 5"),
    # p5 nodes carry layers 1-3 (EC2 instance topology of the type): a fourth is refused, naming the allowed ones.
    ({"topology": "required", "topology_layer": 4}, PROD, None, "--topology-layer 4: ml.p5.48xlarge nodes carry "
     "network-node layers 1 to 3 only (EC2 instance topology of the type); use 1 to 3"),
    ({"instance_type": "ml.m7i.4xlarge", "efa_per_node": 1, "accelerators_per_node": 0}, PROD, None,
     "--efa 1: ml.m7i.4xlarge has no EFA interface (the EFA device plugin advertises vpc.amazonaws.com/efa only on "
     "EFA instance types): drop --efa"),
    ({"env": (("NVIDIA_VISIBLE_DEVICES", "void"),)}, PROD, None, "--env NVIDIA_VISIBLE_DEVICES: the containers ask "
     "for GPUs, which the device plugin selects; hiding them would leave the job charged for GPUs it cannot see"),
    # prod partitions no GPU and no team holds partitions (tests/unit/kubernetes/test_job_partitions.py has the rest).
    ({"mig": ("mig-1g.10gb", 1)}, PROD, None, "--mig mig-1g.10gb: team 'research-nlp' has no quota of mig-1g.10gb "
     "partitions on ml.p5.48xlarge, and a team borrows only what it has a quota for, so Kueue would never admit the "
     "job; give the team an accelerator_partition entry of mig-1g.10gb on ml.p5.48xlarge and an ml.p5.48xlarge group "
     "a nvidia.com/mig.config geometry with it"),
    ({"instance_type": "ml.p4de.24xlarge"}, ALL_MIG, None, "--instance-type ml.p4de.24xlarge: every instance group "
     "that may run it partitions its GPUs (nvidia.com/mig.config), so its nodes offer no whole GPU and the job's pods "
     "would never start; ask for partitions (--mig with mig-1g.10gb), or give the type unpartitioned instances"),
    ({"mig": ("mig-1g.10gb", 2), "accelerators_per_node": 2}, PROD, None, "--mig mig-1g.10gb with --accelerators 2: "
     "a pod asks for whole GPUs or for partitions, not both (a partitioned GPU is offered only as its partitions); "
     "leave out one of them"),
]
OPTION_REFUSALS = [(parse_env, "NOVALUE", "--env 'NOVALUE': give KEY=VALUE"),
                   (parse_mig_option, "1g.10gb", "--mig '1g.10gb': give a MIG profile such as mig-1g.10gb, optionally "
                                                 ":COUNT per pod"),
                   (parse_volume, "claim", "--volume 'claim': give PVC:MOUNT_PATH or PVC:MOUNT_PATH:ro"),
                   (parse_scratch, "1Gi:", "--scratch '1Gi:': give SIZE or SIZE:MOUNT_PATH (e.g. 500Gi or "
                                           "500Gi:/tmp/work)")]
JOB_SOURCE = ROOT / "cdk_app" / "kubernetes" / "job_templates.py"


def _raised_at(error: JobSpecError) -> int:
    """The line of job_templates.py that raised the error."""
    frames = traceback.extract_tb(error.__traceback__)
    return next(f.lineno for f in reversed(frames) if Path(f.filename) == JOB_SOURCE)


@pytest.mark.parametrize("change, config, nodes, message", REFUSALS)
def test_job_refusal_word_for_word(change, config, nodes, message):
    with pytest.raises(JobSpecError) as err:
        render(config, dataclasses.replace(BASE, **change), nodes)
    assert str(err.value) == message


@pytest.mark.parametrize("change, nodes", [
    ({"min_nodes": 2, "nodes": 2, "max_nodes": 3}, None),  # min-nodes may equal nodes
    # no accelerator to check; every CPU of a node: 8 cores of the type's 16 vCPU with prod's threads_per_core 1
    ({"instance_type": "ml.m7i.4xlarge", "accelerators_per_node": 0, "nodes": 1, "cpu": "8", "team": "inference",
      "priority": None}, CLUSTER),
    ({"nodes": 3, "topology": "required", "topology_layer": 3, "accelerators_per_node": 8}, CLUSTER),
])
def test_jobs_at_the_edges_are_accepted(change, nodes):
    render(PROD, dataclasses.replace(BASE, **change), nodes)


def test_every_refusal_has_a_case_word_for_word():
    """Each `raise JobSpecError` (or JobOptionError) of job_templates.py is reached by one case above, so no refusal's text goes
    unread. (Under mutmut the module is its mutated copy, whose raise sites are the mutants': skipped there.)"""
    source = JOB_SOURCE.read_text()
    if "mutmut" in source:
        pytest.skip("mutmut's copy of the module")
    sites = {n.lineno for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Raise) and isinstance(n.exc, ast.Call)
             and getattr(n.exc.func, "id", "") in ("JobSpecError", "JobOptionError")}
    reached = set()
    for change, config, nodes, _ in REFUSALS:
        with pytest.raises(JobSpecError) as err:
            render(config, dataclasses.replace(BASE, **change), nodes)
        reached.add(_raised_at(err.value))
    for parse, text, message in OPTION_REFUSALS:
        with pytest.raises(JobSpecError) as err:
            parse(text)
        assert str(err.value) == message
        reached.add(_raised_at(err.value))
    assert sites - reached == set(), "refusals without a word-for-word case (lines of job_templates.py)"


def test_a_config_whose_groups_all_have_count_zero_names_that():
    config = PROD.model_copy(update={"hyperpod": PROD.hyperpod.model_copy(update={"instance_groups": tuple(
        g.model_copy(update={"count": 0}) for g in PROD.hyperpod.instance_groups)})})
    with pytest.raises(JobSpecError) as err:
        check(config, dataclasses.replace(BASE, instance_type="ml.p5.48xlarge"))
    assert str(err.value) == ("--instance-type 'ml.p5.48xlarge' is not in the cluster; instance groups have: "
                              "none (every group has count 0 and no max_count)")


def test_an_autoscaled_group_holds_up_to_its_max_count():
    # Karpenter scales the group from 0: the job may ask for as many nodes as max_count allows, not one more.
    groups = tuple(g.model_copy(update={"count": 0, "max_count": 3}) if g.instance_type == "ml.p5.48xlarge" else g
                   for g in PROD.hyperpod.instance_groups)
    config = PROD.model_copy(update={"hyperpod": PROD.hyperpod.model_copy(update={"instance_groups": groups})})
    largest = 3 * sum(1 for g in groups if g.instance_type == "ml.p5.48xlarge")
    assert check(config, dataclasses.replace(BASE, nodes=2)).instance_type == "ml.p5.48xlarge"
    with pytest.raises(JobSpecError, match=f"--nodes {largest + 1}: the config's instance groups have {largest} "):
        check(config, dataclasses.replace(BASE, nodes=largest + 1))


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
                   "reserved": {"count": 5, "accelerators": 20, "vcpu": 240, "memory_gib": 960},
                   # dev has no shared pool, and 5 reserved of 4 leave nothing unreserved (never below zero)
                   "shared_pool": None, "unreserved": {"count": 0, "accelerators": 0, "vcpu": 0, "memory_gib": 0},
                   # dev's groups are fixed On-Demand groups of one type: all of it guaranteed
                   "guaranteed": {"count": 4, "accelerators": 16, "vcpu": 192, "memory_gib": 768},
                   "best_effort": {"count": 0, "accelerators": 0, "vcpu": 0, "memory_gib": 0},
                   # dev's g5 group runs two threads per core: a node has every vCPU of the type
                   "node_vcpu": 48}
    reach = next(r for r in report.reach if r.team == "smith" and r.instance_type == "ml.g5.12xlarge").to_json()
    assert reach == {"team": "smith", "instance_type": "ml.g5.12xlarge", "strategy": "LendAndBorrow",
                     "borrow_limit": 100, "quota": {"count": 1, "accelerators": 4, "vcpu": 48, "memory_gib": 192},
                     "reach": reach["reach"], "capped_by": reach["capped_by"], "absolute_limit": None}
    assert json.dumps(report.reach[0].to_json())


# --- loader messages, word for word (what the admin typed, what YAML made of it, what to write) ----------
ADV = (SUPPORT / "adversarial" / "base.yaml").read_text()
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


@pytest.mark.parametrize("change, config, nodes, message", REFUSALS)
def test_a_usage_error_is_judged_without_the_config(change, config, nodes, message):
    """Every refusal is one of two kinds: JobOptionError (exit 2) is what check_options finds from the request
    alone, word for word; any other refusal (exit 1) needs the config or the nodes, so check_options passes."""
    request = dataclasses.replace(BASE, **change)
    with pytest.raises(JobSpecError) as err:
        render(config, request, nodes)
    if isinstance(err.value, JobOptionError):
        with pytest.raises(JobOptionError, match=re.escape(message)):
            check_options(request)
    else:
        check_options(request)


def test_an_mpijob_s_launcher_counts_on_the_team_s_quota():
    # Hostile round 4: 2 workers x 48 vCPU fit smith's reach of 96 vCPU on dev, but the MPI operator's launcher
    # pod asks the same 48 vCPU on the same instance type, and Kueue counts all three pods.
    import dataclasses

    from cdk_app.kubernetes.job_templates import check

    dev = load_config(ROOT / "config" / "dev.yaml").config
    request = JobRequest(team="smith", priority=None, name="t1", image="img:1", command=("x",), kind="mpijob",
                         nodes=2, cpu="48")
    with pytest.raises(JobSpecError, match=r"2 x 48 vCPU per pod \+ the MPI launcher's = 144 vCPU"):
        check(dev, request)
    check(dev, dataclasses.replace(request, kind="pytorchjob"))  # the same workers alone fit
