"""Manifests written outside the kit, as a team would submit them: each labelled for its team's queue in the
team's namespace, hostPath volumes replaced by emptyDir (that refusal is right), nothing else changed. Each
carries the guardrails' verdict per environment: None (admitted unchanged) or the rules that refuse it with
the one field each names. Both environments isolate GPUs at the node (hyperpod.lifecycle.gpu_device_isolation),
so no manifest has to hide the GPUs of a GPU-less container (no gpu-visibility rule there)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

# Seed 002 (/work/shared/seeds/002_fe2ac7381aff7e59.txt, "fsbp-john.yaml"): the task-governance walkthrough's
# FSDP job after AWS's HyperPod EKS workshop (catalog.workshops.aws/sagemaker-hyperpod-eks, 02-fsdp): an etcd
# rendezvous Service and Deployment and an elastic PyTorchJob, as the author labelled them for team john.
SEED_SOURCE = "seed 002 fsbp-john.yaml (HyperPod EKS workshop 02-fsdp)"

ETCD_SERVICE = {
    "apiVersion": "v1", "kind": "Service", "metadata": {"name": "etcd"},
    "spec": {"ports": [{"name": "etcd-client-port", "port": 2379, "protocol": "TCP", "targetPort": 2379}],
             "selector": {"app": "etcd"}}}

ETCD_ARGS = ["--data-dir", "/var/lib/etcd", "--enable-v2", "--listen-client-urls", "http://0.0.0.0:2379",
             "--advertise-client-urls", "http://0.0.0.0:2379", "--initial-cluster-state", "new"]

ETCD_DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"labels": {"app": "etcd"}, "name": "etcd"},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "etcd"}}, "template": {
        "metadata": {"labels": {"app": "etcd", "kueue.x-k8s.io/queue-name": "{queue}"}},
        "spec": {"containers": [{"name": "etcd", "command": ["/usr/local/bin/etcd"], "args": ETCD_ARGS,
                                 "image": "quay.io/coreos/etcd:latest",
                                 "ports": [{"containerPort": 2379, "name": "client", "protocol": "TCP"},
                                           {"containerPort": 2380, "name": "server", "protocol": "TCP"}]}],
                 "restartPolicy": "Always"}}}}

FSDP_ENV = [{"name": "LOGLEVEL", "value": "DEBUG"}, {"name": "TORCH_DISTRIBUTED_DEBUG", "value": "DETAIL"},
            {"name": "TORCH_NCCL_ENABLE_MONITORING", "value": "1"}, {"name": "TORCH_NCCL_TRACE_BUFFER_SIZE", "value": "20000"},
            {"name": "TORCH_NCCL_DUMP_ON_TIMEOUT", "value": "1"},
            {"name": "TORCH_NCCL_DEBUG_INFO_TEMP_FILE", "value": "/local/nccl_trace_rank_"},
            {"name": "PYTORCH_CUDA_ALLOC_CONF", "value": "expandable_segments:True"}, {"name": "NCCL_DEBUG", "value": "INFO"},
            {"name": "NCCL_SOCKET_IFNAME", "value": "^lo"}, {"name": "TORCH_NCCL_ASYNC_ERROR_HANDLING", "value": "1"}]

FSDP_ARGS = ["/usr/local/bin/torchrun", "--nproc_per_node=4", "--nnodes=2", "/fsdp/train.py", "--max_context_width=4096",
             "--model_type=llama_v2", "--checkpoint_dir=/checkpoints", "--dataset=allenai/c4", "--sharding_strategy=full"]

GPUS_AND_EFA = {"nvidia.com/gpu": 4, "vpc.amazonaws.com/efa": 1}

FSDP_PYTORCHJOB = {
    "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
    "metadata": {"name": "fsdp", "labels": {"kueue.x-k8s.io/queue-name": "{queue}"}},
    "spec": {
        "elasticPolicy": {"rdzvBackend": "etcd", "rdzvHost": "etcd", "rdzvPort": 2379, "minReplicas": 1,
                          "maxReplicas": 64, "maxRestarts": 100,
                          "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                              "type": "Utilization", "averageUtilization": 90}}}]},
        "pytorchReplicaSpecs": {"Worker": {"replicas": 2, "restartPolicy": "OnFailure", "template": {
            "metadata": {"labels": {"app": "fsdp", "kueue.x-k8s.io/queue-name": "{queue}"}},
            "spec": {
                # hostPath /dev/shm and /mnt/k8s-disks/0 in the seed: node folders, replaced.
                "volumes": [{"name": "shmem", "emptyDir": {"medium": "Memory"}}, {"name": "local", "emptyDir": {}}],
                "containers": [{"name": "pytorch", "image": "123456789012.dkr.ecr.us-west-2.amazonaws.com/hyprpd-tskgvrn-fsdp:pytorch2.2",
                                "imagePullPolicy": "Always",
                                "resources": {"requests": dict(GPUS_AND_EFA), "limits": dict(GPUS_AND_EFA)},
                                "env": FSDP_ENV, "command": FSDP_ARGS,
                                "volumeMounts": [{"name": "shmem", "mountPath": "/dev/shm"},
                                                 {"name": "local", "mountPath": "/local"}]}]}}}}}}

# The plain GPU Job of AWS's HyperPod EKS documentation and of the NVIDIA device plugin's README: one container
# asking for GPUs, nothing else (the shape the issue names).
GPU_JOB_SOURCE = "NVIDIA k8s-device-plugin README gpu-pod, as a Job (v0.16.1)"

GPU_JOB = {
    "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "gpu-job", "labels": {"kueue.x-k8s.io/queue-name": "{queue}"}},
    "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{
        "name": "cuda-container", "image": "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda10.2",
        "resources": {"limits": {"nvidia.com/gpu": 1}}}],
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}}}}


# The nccl-tests MPIJob shape of aws-samples/awsome-distributed-training (micro-benchmarks/nccl-tests, kubeflow
# MPIJob v2beta1): a launcher with no resources that runs mpirun, GPU workers with EFA.
NCCL_SOURCE = "awsome-distributed-training micro-benchmarks/nccl-tests MPIJob (its shape)"

NCCL_MPIJOB = {
    "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
    "metadata": {"name": "test-nccl", "labels": {"kueue.x-k8s.io/queue-name": "{queue}"}},
    "spec": {"runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 20}, "slotsPerWorker": 8,
             "mpiReplicaSpecs": {
                 "Launcher": {"replicas": 1, "template": {"spec": {"restartPolicy": "OnFailure", "containers": [{
                     "name": "test-nccl-launcher", "image": "public.ecr.aws/hpc-cloud/nccl-tests:latest",
                     "command": ["/opt/amazon/openmpi/bin/mpirun", "--allow-run-as-root", "-np", "16",
                                 "/opt/nccl-tests/build/all_reduce_perf", "-b", "8", "-e", "2G", "-f", "2"]}]}}},
                 "Worker": {"replicas": 2, "template": {"spec": {"containers": [{
                     "name": "test-nccl-worker", "image": "public.ecr.aws/hpc-cloud/nccl-tests:latest",
                     "resources": {"limits": {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32},
                                   "requests": {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}}}]}}}}}}


@dataclass(frozen=True)
class Standard:
    id: str
    source: str
    manifest: dict[str, Any]
    refused: dict[str, dict[str, str]]  # env -> rule -> the field its message names; an env not listed: admitted


# The team of each environment the collection is labelled for, and the priority class prod requires.
TEAMS = {"dev": ("john", None), "prod": ("research-nlp", "training-priority")}

STANDARD = [
    Standard("seed-etcd-service", SEED_SOURCE, ETCD_SERVICE, {}),
    Standard("seed-etcd-deployment", SEED_SOURCE, ETCD_DEPLOYMENT, {}),
    Standard("seed-fsdp-pytorchjob", SEED_SOURCE, FSDP_PYTORCHJOB,
             {env: {"clean-pod-policy": "spec.runPolicy.cleanPodPolicy"} for env in TEAMS}),
    Standard("device-plugin-gpu-job", GPU_JOB_SOURCE, GPU_JOB, {}),
    Standard("nccl-tests-mpijob", NCCL_SOURCE, NCCL_MPIJOB, {}),
]


def _fill(value: Any, queue: str) -> Any:
    if isinstance(value, dict):
        return {k: _fill(v, queue) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, queue) for v in value]
    return queue if value == "{queue}" else value


def for_team(standard: Standard, env: str) -> dict[str, Any]:
    """The manifest in the env's team namespace, its queue (and, where the env requires one, priority) labelled."""
    team, priority = TEAMS[env]
    namespace = f"hyperpod-ns-{team}"
    out = _fill(copy.deepcopy(standard.manifest), f"{namespace}-localqueue")
    out["metadata"]["namespace"] = namespace
    if priority and "kueue.x-k8s.io/queue-name" in out["metadata"].get("labels", {}):
        out["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = priority
    return out
