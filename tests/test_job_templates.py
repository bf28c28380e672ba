"""`hyperpod-kit job`: manifests for the team's queue, checked against the config, the Kubernetes
schemas and the Kubeflow PyTorchJob CRD."""

from __future__ import annotations

import copy
import dataclasses
import subprocess
import sys
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
import yaml

from cdk_app.config.loader import load_config
from cdk_app.job_templates import JobRequest, JobSpecError, render

ROOT = Path(__file__).resolve().parent.parent
CRD = yaml.safe_load((ROOT / "tests" / "data" / "kubeflow.org_pytorchjobs.yaml").read_text())
PYTORCHJOB_SCHEMA = next(v for v in CRD["spec"]["versions"] if v["name"] == "v1")["schema"]["openAPIV3Schema"]
PROD = load_config(ROOT / "config" / "prod.yaml").config
BASE = JobRequest(team="research-nlp", priority="training", name="llama-ft", image="repo/train:1",
                  command=("torchrun", "train.py"), nodes=4, efa_per_node=32, topology="required",
                  auto_resume=True, max_retries=5)


def check_pytorchjob(manifest):
    jsonschema.validate(manifest, PYTORCHJOB_SCHEMA)


def test_pytorchjob_carries_queue_priority_topology_and_auto_resume():
    manifest = render(PROD, BASE)
    check_pytorchjob(manifest)
    assert manifest["metadata"]["namespace"] == "hyperpod-ns-research-nlp"
    assert manifest["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "hyperpod-ns-research-nlp-localqueue",
                                              "kueue.x-k8s.io/priority-class": "training-priority"}
    assert manifest["metadata"]["annotations"] == {"sagemaker.amazonaws.com/enable-job-auto-resume": "true",
                                                   "sagemaker.amazonaws.com/job-max-retry-count": "5"}
    specs = manifest["spec"]["pytorchReplicaSpecs"]
    assert specs["Master"]["replicas"] + specs["Worker"]["replicas"] == 4
    for spec in specs.values():
        pod = spec["template"]
        assert pod["metadata"]["annotations"] == {
            "kueue.x-k8s.io/podset-required-topology": "topology.k8s.aws/network-node-layer-3"}
        assert pod["spec"]["nodeSelector"]["sagemaker.amazonaws.com/node-health-status"] == "Schedulable"
        assert pod["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}


def test_schema_checks_catch_a_broken_pytorchjob():
    broken = copy.deepcopy(render(PROD, BASE))
    broken["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = "one"
    with pytest.raises(jsonschema.ValidationError):
        check_pytorchjob(broken)


def test_batch_job_is_valid_for_the_cluster_kubernetes_version():
    prod_job = render(PROD, dataclasses.replace(BASE, kind="job", topology="preferred", topology_layer=2))
    kubernetes_validate.validate(copy.deepcopy(prod_job), PROD.eks.kubernetes_version, strict=True)
    assert prod_job["spec"]["template"]["metadata"]["annotations"] == {
        "kueue.x-k8s.io/podset-preferred-topology": "topology.k8s.aws/network-node-layer-2"}
    assert prod_job["spec"]["parallelism"] == 4


@pytest.mark.parametrize(("change", "message"), [
    ({"team": "marketing"}, "--team 'marketing' is not a team of the prod config"),
    ({"priority": "urgent"}, "--priority 'urgent' is not in the cluster policy"),
    ({"instance_type": "ml.g5.12xlarge"}, "--instance-type 'ml.g5.12xlarge' is not in the cluster"),
    ({"accelerators_per_node": 16}, "--accelerators 16 per node is more than one ml.p5.48xlarge has \\(8\\)"),
    ({"instance_type": "ml.m7i.4xlarge", "accelerators_per_node": 0}, "--topology: ml.m7i.4xlarge nodes have no topology labels"),
    ({"nodes": 0}, "--nodes must be at least 1"),
    ({"efa_per_node": 33}, "--efa 33 per node is more than one ml.p5.48xlarge has \\(32\\)"),
])
def test_refusals_name_the_option(change, message):
    with pytest.raises(JobSpecError, match=message):
        render(PROD, dataclasses.replace(BASE, **change))


def test_topology_needs_a_recent_add_on():
    old = PROD.model_copy(update={"task_governance": PROD.task_governance.model_copy(update={"addon_version": "v1.1.3-eksbuild.1"})})
    with pytest.raises(JobSpecError, match="needs task governance v1.2.2-eksbuild.1 or later; the config has v1.1.3"):
        render(old, BASE)


def test_cli_prints_yaml_and_refuses_without_traceback():
    run = lambda *args: subprocess.run([sys.executable, "-m", "cdk_app", "job", "--config", "config/prod.yaml",
                                        "--name", "j", "--image", "i", *args], cwd=ROOT, capture_output=True, text=True)
    good = run("--team", "research-nlp", "--priority", "training", "--", "python", "train.py")
    assert good.returncode == 0, good.stderr
    check_pytorchjob(yaml.safe_load(good.stdout))
    bad = run("--team", "nobody", "--priority", "training", "--", "python")
    assert bad.returncode == 1 and "is not a team" in bad.stderr and "Traceback" not in bad.stderr


def test_a_config_without_priority_classes_says_so():
    dev = load_config(ROOT / "config" / "dev.yaml").config
    with pytest.raises(JobSpecError, match="none \\(the config defines no priority classes\\)"):
        render(dev, dataclasses.replace(BASE, team="john", topology=None))
