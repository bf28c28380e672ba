"""Seed 002 end to end: the task-governance walkthrough's FSDP job (an elastic PyTorchJob with an etcd
rendezvous, 2 nodes x 4 GPUs + 1 EFA on ml.g5.12xlarge, for team john and then team smith, which borrows
john's idle GPUs) regenerated from config/dev.yaml with `hyperpod-kit job`, then checked as the cluster
would check it:

- every object against its schema (the PyTorchJob CRD, Kubernetes' own for Service and Deployment);
- the admission guardrails of the team namespaces accept it (their CEL run by cel-python through the
  harness of tests/unit/kubernetes/guardrails/test_cel_verdicts.py), and refuse the walkthrough's hostPath volumes the kit replaced;
- the job mounts the team's own file system (dev's storage section) at /checkpoints, where the walkthrough's
  train.py writes and resumes its checkpoints;
- the team's RBAC lets the team create each object and read what the walkthrough reads afterwards
  (`kubectl get workloads`, its ClusterQueue), decided by the RBAC authorizer of tests/support/rbac_authorizer.py
  - and not in the other team's namespace.
"""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest
import yaml
from support.cel_admission import admit
from support.job_validation import validate
from support.paths import ROOT
from support.rbac_authorizer import Authorizer, Request

from cdk_app.config.loader import load_config
from cdk_app.kubernetes.guardrails import guardrail_manifests
from cdk_app.kubernetes.guardrails.kinds import WORKLOAD_KINDS
from cdk_app.kubernetes.team_rbac import team_group, team_manifests

DEV = load_config(ROOT / "config" / "dev.yaml").config
IMAGE = "123456789012.dkr.ecr.us-west-2.amazonaws.com/hyprpd-tskgvrn-fsdp:pytorch2.2"
# The walkthrough's environment, less the FI_* lines it leaves commented out; NCCL's traces go to the team's file
# system (dev's storage section), which `job` mounts at /checkpoints, instead of a hostPath node disk.
ENV = ["LOGLEVEL=DEBUG", "TORCH_DISTRIBUTED_DEBUG=DETAIL", "TORCH_NCCL_ENABLE_MONITORING=1",
       "TORCH_NCCL_TRACE_BUFFER_SIZE=20000", "TORCH_NCCL_DUMP_ON_TIMEOUT=1",
       "TORCH_NCCL_DEBUG_INFO_TEMP_FILE=/checkpoints/nccl_trace_rank_", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
       "NCCL_DEBUG=INFO", "NCCL_SOCKET_IFNAME=^lo", "TORCH_NCCL_ASYNC_ERROR_HANDLING=1"]
# torchrun without --nproc_per_node/--nnodes: the training operator sets them from the elastic policy.
TRAIN = ["/usr/local/bin/torchrun", "/fsdp/train.py", "--max_context_width=4096", "--num_key_value_heads=32",
         "--intermediate_size=11008", "--hidden_width=4096", "--num_layers=32", "--num_heads=32",
         "--model_type=llama_v2", "--tokenizer=hf-internal-testing/llama-tokenizer", "--checkpoint_freq=5000",
         "--validation_freq=500", "--max_steps=5000", "--checkpoint_dir=/checkpoints", "--dataset=allenai/c4",
         "--dataset_config_name=en", "--resume_from_checkpoint=/checkpoints", "--train_batch_size=1",
         "--val_batch_size=1", "--sharding_strategy=full", "--offload_activation=1"]


def walkthrough_job(team: str) -> list[dict]:
    """`hyperpod-kit job` as the README's walkthrough runs it."""
    args = [sys.executable, "-m", "cdk_app", "job", "--config", "config/dev.yaml", "--team", team, "--name", "fsdp",
            "--image", IMAGE, "--nodes", "2", "--min-nodes", "1", "--max-nodes", "4", "--rdzv-backend", "etcd",
            "--accelerators", "4", "--efa", "1", "--shm", "64Gi", *[a for e in ENV for a in ("--env", e)], "--", *TRAIN]
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return list(yaml.safe_load_all(done.stdout))


@pytest.fixture(scope="module", params=["john", "smith"])
def team_job(request) -> tuple[str, list[dict]]:
    return request.param, walkthrough_job(request.param)


def test_the_walkthrough_job_is_what_the_walkthrough_asks(team_job):
    team, objects = team_job
    assert [o["kind"] for o in objects] == ["Service", "Deployment", "PyTorchJob"]
    job = objects[-1]
    assert job["metadata"]["namespace"] == f"hyperpod-ns-{team}"
    assert job["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": f"hyperpod-ns-{team}-localqueue"}  # no classes in dev
    assert job["spec"]["elasticPolicy"]["rdzvBackend"] == "etcd"
    worker = job["spec"]["pytorchReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 2
    [container] = worker["template"]["spec"]["containers"]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 4, "vpc.amazonaws.com/efa": 1}
    assert container["command"] == TRAIN
    # The checkpoints survive the pods: the team's own file system, through the claim the kit made for it.
    assert container["volumeMounts"][0] == {"name": "pvc-0", "mountPath": "/checkpoints"}
    assert worker["template"]["spec"]["volumes"][0] == {"name": "pvc-0",
                                                        "persistentVolumeClaim": {"claimName": "checkpoints"}}
    [file_system] = [fs for fs in DEV.storage.file_systems if fs.team == team]
    assert (file_system.name, file_system.job_mount_path) == ("checkpoints", "/checkpoints")


def test_every_object_passes_its_schema(team_job):
    validate(team_job[1])


def _request(obj: dict, user: str = "alice") -> dict:
    group, _, version = obj["apiVersion"].rpartition("/")
    resource = {"Service": "services", "Deployment": "deployments", "PyTorchJob": "pytorchjobs"}[obj["kind"]]
    return {"kind": {"group": group, "version": version, "kind": obj["kind"]},
            "resource": {"group": group, "version": version, "resource": resource}, "subResource": "",
            "name": obj["metadata"]["name"], "namespace": obj["metadata"]["namespace"], "operation": "CREATE",
            "userInfo": {"username": user, "groups": []}, "dryRun": False}


def test_the_guardrails_admit_every_object(team_job):
    guardrails = guardrail_manifests(DEV)
    checked = 0
    for obj in team_job[1]:
        verdict = admit(guardrails, _request(obj), obj, None)
        assert verdict.allowed, (obj["kind"], verdict)
        checked += obj["kind"] in {k.kind for k in WORKLOAD_KINDS}
    assert checked == 2  # the Deployment and the PyTorchJob were really matched by the policies


def test_the_walkthrough_hostpath_volumes_would_be_refused(team_job):
    """What the walkthrough had and the kit replaced (--shm, --volume): hostPath /dev/shm and a node disk."""
    job = copy.deepcopy(team_job[1][-1])
    spec = job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    spec["volumes"] = [{"name": "shmem", "hostPath": {"path": "/dev/shm"}},
                       {"name": "local", "hostPath": {"path": "/mnt/k8s-disks/0"}}]
    verdict = admit(guardrail_manifests(DEV), _request(job), job, None)
    assert verdict.rules == {"volumes"}  # hostPath is outside the volume allow-list


def _rbac_request(obj: dict, verb: str = "create") -> Request:
    group = obj["apiVersion"].rpartition("/")[0]
    resource = {"Service": "services", "Deployment": "deployments", "PyTorchJob": "pytorchjobs"}[obj["kind"]]
    return Request(verb, group, resource, obj["metadata"]["namespace"], "" if verb == "create" else obj["metadata"]["name"])


def test_the_team_role_allows_every_step_of_the_walkthrough(team_job):
    team, objects = team_job
    rbac = Authorizer([m for t in DEV.teams for m in team_manifests(t.name)])
    member, other = {team_group(team)}, {team_group(next(t.name for t in DEV.teams if t.name != team))}
    namespace = f"hyperpod-ns-{team}"
    steps = [_rbac_request(o) for o in objects]  # kubectl apply -f job.yaml (a create each, no object yet)
    steps += [_rbac_request(o, "patch") for o in objects]  # kubectl apply again after an edit
    steps += [
        Request("list", "kueue.x-k8s.io", "workloads", namespace),  # kubectl get workloads -n <ns>
        Request("list", "kubeflow.org", "pytorchjobs", namespace),  # kubectl get pytorchjobs
        Request("list", "", "pods", namespace), Request("get", "", "pods/log", namespace, "fsdp-worker-0"),
        Request("get", "kueue.x-k8s.io", "clusterqueues", "", f"{namespace}-clusterqueue"),  # the borrowed GPUs
        Request("delete", "kubeflow.org", "pytorchjobs", namespace, "fsdp"),  # kubectl delete -f job.yaml
        Request("delete", "apps", "deployments", namespace, "fsdp-etcd"),
        Request("delete", "", "services", namespace, "fsdp-etcd"),
    ]
    for step in steps:
        assert rbac.allows(step, member), step
        assert not rbac.allows(step, other), step  # the other team can do none of it here
