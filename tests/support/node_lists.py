"""`kubectl get nodes -o json` fixtures shaped like a HyperPod EKS cluster's nodes."""

from __future__ import annotations

import json

# What the device plugins of the HyperPod chart advertise on a p5.48xlarge and an m7i.4xlarge,
# beside the core resources the kubelet always reports (which the kit ignores).
P5_ALLOCATABLE = {"cpu": "191450m", "memory": "2027323936Ki", "pods": "737",
                  "nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"}
M7I_ALLOCATABLE = {"cpu": "15890m", "memory": "62732316Ki", "pods": "110"}


def node(name, layers, instance_type="ml.p5.48xlarge", health="Schedulable", allocatable=None):
    labels = {"node.kubernetes.io/instance-type": instance_type, "sagemaker.amazonaws.com/node-health-status": health}
    labels.update({f"topology.k8s.aws/network-node-layer-{i + 1}": nn for i, nn in enumerate(layers)})
    if allocatable is None:
        allocatable = P5_ALLOCATABLE if "p5" in instance_type else M7I_ALLOCATABLE
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": dict(allocatable), "capacity": dict(allocatable)}}


# Seven p5 nodes under one layer-1 network node, two layer-2 nodes and four layer-3 nodes,
# plus a CPU node without topology labels: the shape of the topology walkthrough.
SEVEN = [
    node("hyperpod-i-01", ["nn-1a", "nn-2a", "nn-3a"]), node("hyperpod-i-02", ["nn-1a", "nn-2a", "nn-3a"]),
    node("hyperpod-i-03", ["nn-1a", "nn-2a", "nn-3b"]), node("hyperpod-i-04", ["nn-1a", "nn-2b", "nn-3c"]),
    node("hyperpod-i-05", ["nn-1a", "nn-2b", "nn-3c"]), node("hyperpod-i-06", ["nn-1a", "nn-2b", "nn-3c"]),
    node("hyperpod-i-07", ["nn-1a", "nn-2b", "nn-3d"], health="UnschedulablePendingReplacement"),
]
CPU = node("hyperpod-i-cpu", [], instance_type="ml.m7i.4xlarge")


def kubectl_list(items):
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
