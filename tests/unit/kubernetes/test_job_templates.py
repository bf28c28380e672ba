"""`hyperpod-kit job`: manifests for the team's queue, checked against the config, the Kubernetes
schemas and the Kubeflow PyTorchJob CRD."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
import subprocess
import sys
import urllib.parse

import jsonschema
import kubernetes_validate
import pytest
import yaml
from support.case_configs import UNISOLATED, case_config
from support.crd_schemas import (
    MPIJOB_SCHEMA,
    PORT_PROTOCOLS,
    PYTORCHJOB_SCHEMA,
    check_metadata,
    core_refusals,
    label_refusals,
    mpi_operator_refusals,
)
from support.handlers import layer_binary
from support.node_lists import CPU, M7I_ALLOCATABLE, P5_ALLOCATABLE, SEVEN, kubectl_list, node
from support.paths import ROOT

from cdk_app.config.loader import load_config
from cdk_app.kubernetes.job_templates import JobOptionError, JobRequest, JobSpecError, render
from cdk_app.kubernetes.topology import parse_nodes

PROD = load_config(ROOT / "config" / "prod.yaml").config
BASE = JobRequest(team="research-nlp", priority="training", name="llama-ft", image="repo/train:1",
                  command=("torchrun", "train.py"), nodes=3, efa_per_node=32, topology="required",
                  auto_resume=True, max_retries=5)

# A job on the CPU type: of the team with a quota there, requesting CPU (`job` refuses a job that requests
# nothing: Kueue would admit it without charging any quota).
CPU_ONLY_JOB = {"team": "inference", "priority": None, "cpu": "4"}


def check_pytorchjob(manifest):
    jsonschema.validate(manifest, PYTORCHJOB_SCHEMA)
    check_metadata(manifest, PROD.eks.kubernetes_version)


def check_mpijob(manifest):
    jsonschema.validate(manifest, MPIJOB_SCHEMA)
    check_metadata(manifest, PROD.eks.kubernetes_version)
    assert not mpi_operator_refusals(manifest), mpi_operator_refusals(manifest)


def test_the_mpi_operator_checks_refuse_a_broken_mpijob():
    good = render(PROD, dataclasses.replace(BASE, kind="mpijob", topology=None, auto_resume=False))
    assert not mpi_operator_refusals(good)
    for path, value in ((("mpiReplicaSpecs", "Worker", "restartPolicy"), "onfailure"),
                        (("mpiReplicaSpecs", "Launcher", "replicas"), 2),
                        (("runPolicy", "cleanPodPolicy"), "Always"),
                        (("mpiReplicaSpecs", "Worker", "replicas"), 0)):
        broken = copy.deepcopy(good)
        *parents, leaf = path
        target = broken["spec"]
        for key in parents:
            target = target[key]
        target[leaf] = value
        assert mpi_operator_refusals(broken), path
    # v0.5.0: the last worker's hostname is a DNS-1035 label; values left empty are defaulted, not refused.
    named = copy.deepcopy(good)
    named["metadata"]["name"] = "1job"
    assert mpi_operator_refusals(named) == ["invalid DNS-1035 label '1job-worker-2'"]
    for field in ("ttlSecondsAfterFinished", "activeDeadlineSeconds"):
        negative = copy.deepcopy(good)
        negative["spec"]["runPolicy"][field] = -1
        assert mpi_operator_refusals(negative) == [f"runPolicy.{field} must be non-negative"]
    empty = copy.deepcopy(good)
    empty["spec"]["mpiReplicaSpecs"]["Worker"]["restartPolicy"] = ""
    assert not mpi_operator_refusals(empty)


def test_pytorchjob_carries_queue_priority_topology_and_auto_resume():
    manifest = render(PROD, BASE)
    check_pytorchjob(manifest)
    assert manifest["metadata"]["namespace"] == "hyperpod-ns-research-nlp"
    assert manifest["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "hyperpod-ns-research-nlp-localqueue",
                                              "kueue.x-k8s.io/priority-class": "training-priority"}
    assert manifest["metadata"]["annotations"] == {"sagemaker.amazonaws.com/enable-job-auto-resume": "true",
                                                   "sagemaker.amazonaws.com/job-max-retry-count": "5"}
    specs = manifest["spec"]["pytorchReplicaSpecs"]
    assert specs["Master"]["replicas"] + specs["Worker"]["replicas"] == 3
    for spec in specs.values():
        pod = spec["template"]
        assert pod["metadata"]["annotations"] == {
            "kueue.x-k8s.io/podset-required-topology": "topology.k8s.aws/network-node-layer-3"}
        assert pod["spec"]["nodeSelector"]["sagemaker.amazonaws.com/node-health-status"] == "Schedulable"
        assert pod["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}


@pytest.mark.parametrize("nodes", [1, 2, 3])
def test_a_pytorchjob_has_one_pod_per_node(nodes):
    specs = render(PROD, dataclasses.replace(BASE, nodes=nodes))["spec"]["pytorchReplicaSpecs"]
    assert specs["Master"]["replicas"] == 1 and sum(s["replicas"] for s in specs.values()) == nodes
    assert ("Worker" in specs) is (nodes > 1)  # a one-node job is its Master alone


@pytest.mark.slow
def test_schema_checks_catch_a_broken_pytorchjob():
    misspelt = copy.deepcopy(render(PROD, BASE))
    misspelt["spec"]["pytorchReplicaSpecs"]["Master"]["restartpolicy"] = "OnFailure"
    with pytest.raises(jsonschema.ValidationError, match="restartpolicy"):
        check_pytorchjob(misspelt)
    assert core_refusals({"restartPolicy": "onfailure", "containers": [{"name": "Main", "ports": [{"protocol": "tcp"}]}]}) == [
        "container name 'Main'", "restartPolicy 'onfailure'", "protocol 'tcp'"]
    assert core_refusals({"containers": [{"name": "m", "resources": {"requests": {"CPU": "1", "gpu": 1},
                                                                     "limits": {"nvidia.com/gpu": 1}}}]}) == [
        "resource 'CPU'", "resource 'gpu'"]
    assert core_refusals({"containers": [{"name": "a"}], "initContainers": [{"name": "a", "resources": {
        "limits": {"requests.example.com/gpu": 1}}}]}) == ["container name 'a' twice", "resource 'requests.example.com/gpu'"]
    # A Job's pods: OnFailure or Never, and only Never beside a podFailurePolicy (batch validation).
    assert core_refusals({"containers": [{"name": "a"}]}, job={}) == ["restartPolicy ''"]
    assert core_refusals({"containers": [{"name": "a"}], "restartPolicy": "OnFailure"}, job={"podFailurePolicy": {}}) == [
        "restartPolicy 'OnFailure'"]
    with pytest.raises(jsonschema.ValidationError):
        check_metadata({"metadata": {"name": "x", "labelz": {}}}, PROD.eks.kubernetes_version)
    with pytest.raises(jsonschema.ValidationError):
        check_metadata({"metadata": {"name": "x", "labels": {"a": 1}}}, PROD.eks.kubernetes_version)
    assert label_refusals({"XXapp.kubernetes.io/name": "etcd", "a/b/c": "x", "/x": "y", "ok": "-bad", "fine.io/x": ""}) == [
        "label key 'XXapp.kubernetes.io/name'", "label key 'a/b/c'", "label key '/x'", "label value '-bad'"]
    assert not label_refusals({"app.kubernetes.io/name": "etcd", "hyperpod-kit/job": "llama-ft", "x": "A.b_c"})

    broken = copy.deepcopy(render(PROD, BASE))
    broken["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = "one"
    with pytest.raises(jsonschema.ValidationError):
        check_pytorchjob(broken)


def test_batch_job_is_valid_for_the_cluster_kubernetes_version():
    prod_job = render(PROD, dataclasses.replace(BASE, kind="job", topology="preferred", topology_layer=2, auto_resume=False))
    kubernetes_validate.validate(copy.deepcopy(prod_job), PROD.eks.kubernetes_version, strict=True)
    assert prod_job["spec"]["template"]["metadata"]["annotations"] == {
        "kueue.x-k8s.io/podset-preferred-topology": "topology.k8s.aws/network-node-layer-2"}
    assert prod_job["spec"]["parallelism"] == 3


@pytest.mark.parametrize(("change", "message"), [
    ({"team": "marketing"}, "--team 'marketing' is not a team of the prod config"),
    ({"priority": "urgent"}, "--priority 'urgent' is not in the cluster policy"),
    ({"instance_type": "ml.g5.12xlarge"}, "--instance-type 'ml.g5.12xlarge' is not in the cluster"),
    ({"accelerators_per_node": 16}, "--accelerators 16 per node is more than one ml.p5.48xlarge has \\(8\\)"),
    ({"instance_type": "ml.m7i.4xlarge", "nodes": 2, "accelerators_per_node": 0}, "--topology: ml.m7i.4xlarge nodes have no topology labels"),
    ({"nodes": 0}, "--nodes must be at least 1"),
    ({"name": "Llama_FT"}, "--name 'Llama_FT' is not a DNS-1035 label"),
    ({"name": "9lives"}, "--name '9lives' is not a DNS-1035 label"),
    ({"name": "a" * 64}, "is not a DNS-1035 label: 1-63"),
    ({"max_retries": -1}, "--max-retries must be 0 or more"),
    # Input checks: more nodes than the config holds, an empty image, a Service name past 63.
    ({"nodes": 11}, r"--nodes 11: the config's instance groups have 10 ml.p5.48xlarge node\(s\)"),
    ({"image": ""}, "--image '': give a container image reference"),
    ({"image": "repo/train:1 "}, r"give a container image reference \(not empty, no spaces\)"),
    ({"name": "a" * 55}, "is too long: the training operator's master Service would be 'a{55}-master-0' "
                         "\\(64 characters, at most 63\\)"),
    ({"efa_per_node": 33}, "--efa 33 per node is more than one ml.p5.48xlarge has \\(32\\)"),
    ({"efa_per_node": -1}, "--efa must be 0 or more"),
    ({"accelerators_per_node": -2}, "--accelerators must be 0 or more"),
    ({"instance_type": "ml.m7i.4xlarge", "nodes": 2, "topology": None, "efa_per_node": "all"},
     "--efa all: ml.m7i.4xlarge has no EFA interface .*: drop --efa"),
])
def test_refusals_name_the_option(change, message):
    with pytest.raises(JobSpecError, match=message):
        render(PROD, dataclasses.replace(BASE, **change))


def test_topology_needs_a_recent_add_on():
    old = PROD.model_copy(update={"task_governance": PROD.task_governance.model_copy(update={"addon_version": "v1.1.3-eksbuild.1"})})
    with pytest.raises(JobSpecError, match="needs task governance v1.2.2-eksbuild.1 or later; the config has v1.1.3"):
        render(old, BASE)


@pytest.mark.slow
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


CLUSTER = parse_nodes(kubectl_list(SEVEN + [CPU]), "nodes.json")
ABC = ["nn-a", "nn-b", "nn-c"]  # one network node on each layer


def test_cluster_nodes_confirm_the_request_and_give_the_efa_count():
    manifest = render(PROD, dataclasses.replace(BASE, nodes=3, efa_per_node="all"), CLUSTER, "nodes.json")
    check_pytorchjob(manifest)
    limits = manifest["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}


def test_required_topology_must_fit_under_one_network_node():
    # Six healthy p5 nodes, but no layer-3 network node holds more than three of them (nn-3c).
    # Four GPUs per pod: 4 and 6 pods stay within what research-nlp can reach (24 GPUs).
    half = dataclasses.replace(BASE, nodes=4, accelerators_per_node=4)
    with pytest.raises(JobSpecError, match="--topology required on layer 3: at most 3 of the nodes in nodes.json that "
                                           "fit share one layer-3 network node \\(nn-1a/nn-2b/nn-3c\\), so --nodes 4 "
                                           "would wait "
                                           "forever; ask for fewer nodes, a lower layer number \\(layer 2 holds 3, "
                                           "layer 1 holds 6\\) or --topology preferred"):
        render(PROD, half, CLUSTER, "nodes.json")
    render(PROD, dataclasses.replace(half, topology_layer=1, nodes=6), CLUSTER, "nodes.json")
    render(PROD, dataclasses.replace(half, topology="preferred", nodes=6), CLUSTER, "nodes.json")


def test_efa_all_reads_the_nodes_not_the_table():
    sixteen = parse_nodes(kubectl_list([node(f"n{i}", ABC, allocatable={**P5_ALLOCATABLE, "vpc.amazonaws.com/efa": "16"})
                                        for i in range(4)]), "nodes.json")
    manifest = render(PROD, dataclasses.replace(BASE, efa_per_node="all"), sixteen)
    assert manifest["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["resources"][
        "limits"]["vpc.amazonaws.com/efa"] == 16
    # Nodes that advertise no EFA: --efa all is refused as --efa N is, not turned into 0.
    cpu_only = dataclasses.replace(BASE, instance_type="ml.m7i.4xlarge", topology=None, nodes=1, accelerators_per_node=None)
    for asked in ("all", 1):
        with pytest.raises(JobSpecError, match=f"--efa {asked}: none of the 1 ml.m7i.4xlarge nodes in nodes.json "
                                               "advertises vpc.amazonaws.com/efa \\(they advertise no device\\); drop --efa"):
            render(PROD, dataclasses.replace(cpu_only, efa_per_node=asked), CLUSTER, "nodes.json")


def test_plain_ec2_instance_type_labels_are_matched():
    plain = parse_nodes(kubectl_list([node(f"n{i}", ABC, instance_type="p5.48xlarge") for i in range(4)]), "nodes.json")
    render(PROD, BASE, plain)


@pytest.mark.parametrize(("cluster", "change", "message"), [
    (SEVEN, {"nodes": 7}, "--nodes 7: 6 of the 7 ml.p5.48xlarge nodes in nodes.json can give one pod "
                          "32 vpc.amazonaws.com/efa and 8 nvidia.com/gpu \\(hyperpod-i-07 "
                          "UnschedulablePendingReplacement\\)$"),
    ([node(f"n{i}", ABC, allocatable={**P5_ALLOCATABLE, "vpc.amazonaws.com/efa": "0"}) for i in range(4)], {},
     "--efa 32: none of the 4 ml.p5.48xlarge nodes in nodes.json advertises vpc.amazonaws.com/efa \\(they advertise "
     "8 nvidia.com/gpu\\); is the HyperPod chart's EFA device plugin running on them\\?$"),
    ([node("n0", ABC), node("n1", ABC, allocatable=M7I_ALLOCATABLE | {"nvidia.com/gpu": "4"})], {"nodes": 2},
     "1 of the 2 .* \\(n1 has 0 vpc.amazonaws.com/efa, 4 nvidia.com/gpu\\)$"),
    ([CPU], {}, "--cluster-nodes: nodes.json has no ml.p5.48xlarge node; it has ml.m7i.4xlarge"),
    ([CPU], {"instance_type": "ml.m7i.4xlarge", "topology": None, "nodes": 2, "efa_per_node": 0},
     "--nodes 2: nodes.json has only 1 ml.m7i.4xlarge node\\(s\\)$"),
    ([CPU, node("cpu-2", [], "ml.m7i.4xlarge", health="UnschedulablePendingReboot")],
     {"instance_type": "ml.m7i.4xlarge", "topology": None, "nodes": 2, "efa_per_node": 0},
     "--nodes 2: 1 of the 2 ml.m7i.4xlarge nodes in nodes.json can take a pod \\(cpu-2 UnschedulablePendingReboot\\)$"),
])
def test_cluster_nodes_refuse_what_they_cannot_run(cluster, change, message):
    with pytest.raises(JobSpecError, match=message):
        render(PROD, dataclasses.replace(BASE, **change), parse_nodes(kubectl_list(cluster), "nodes.json"), "nodes.json")


@pytest.mark.slow
def test_cli_reads_cluster_nodes_and_refuses_bad_options(tmp_path):
    nodes_file = tmp_path / "nodes.json"
    nodes_file.write_text(kubectl_list(SEVEN + [CPU]))
    run = lambda *args: subprocess.run([sys.executable, "-m", "cdk_app", "job", "--config", "config/prod.yaml",
                                        "--team", "research-nlp", "--priority", "training", "--name", "j",
                                        "--image", "i", *args, "--", "python"], cwd=ROOT, capture_output=True, text=True)
    good = run("--cluster-nodes", str(nodes_file), "--efa", "all", "--nodes", "2")
    assert good.returncode == 0, good.stderr
    assert "vpc.amazonaws.com/efa: 32" in good.stdout
    too_many = run("--cluster-nodes", str(nodes_file), "--nodes", "9")
    assert too_many.returncode == 1 and "--nodes 9: 6 of the 7" in too_many.stderr
    bad_efa = run("--efa", "lots")
    assert bad_efa.returncode == 2 and "'lots' is neither a whole number nor 'all'" in bad_efa.stderr
    pods = tmp_path / "pods.json"
    pods.write_text(kubectl_list([{"kind": "Pod", "metadata": {"name": "p"}}]))
    bad_nodes = run("--cluster-nodes", str(pods))
    assert bad_nodes.returncode == 2 and "not a Node" in bad_nodes.stderr
    assert all("Traceback" not in r.stderr for r in (too_many, bad_efa, bad_nodes))


@pytest.mark.parametrize("kind", ["pytorchjob", "mpijob", "job"])
@pytest.mark.parametrize(("instance_type", "topology", "efa"), [
    ("ml.p5.48xlarge", "required", "all"), ("ml.p5.48xlarge", "preferred", 8), ("ml.p5.48xlarge", None, 0),
    ("ml.m7i.4xlarge", None, 0),
])
@pytest.mark.slow
@pytest.mark.parametrize("auto_resume", [True, False])
def test_every_rendered_manifest_passes_its_schema(kind, instance_type, topology, efa, auto_resume):
    request = dataclasses.replace(BASE, kind=kind, instance_type=instance_type, topology=topology, efa_per_node=efa,
                                  auto_resume=auto_resume and kind == "pytorchjob",
                                  nodes=1 if instance_type == "ml.m7i.4xlarge" else 3,
                                  **CPU_ONLY_JOB if instance_type == "ml.m7i.4xlarge" else {})
    manifest = render(PROD, request, CLUSTER, "nodes.json")
    version = PROD.eks.kubernetes_version
    if kind == "job":
        kubernetes_validate.validate(copy.deepcopy(manifest), version, strict=True)
        templates = [manifest["spec"]["template"]]
    elif kind == "mpijob":
        check_mpijob(manifest)
        templates = [spec["template"] for spec in manifest["spec"]["mpiReplicaSpecs"].values()]
    else:
        check_pytorchjob(manifest)
        templates = [spec["template"] for spec in manifest["spec"]["pytorchReplicaSpecs"].values()]
    for template in templates:
        assert not core_refusals(template["spec"], job=manifest["spec"] if kind == "job" else None), template["spec"]
        # The pod template inside a PyTorchJob against the core schema too (strict: no unknown fields).
        kubernetes_validate.validate({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t"},
                                      "template": copy.deepcopy(template)}, version, strict=True)


@pytest.mark.synth
@pytest.mark.parametrize("env", ["prod", UNISOLATED])
@pytest.mark.parametrize("kind", ["pytorchjob", "mpijob", "job"])
@pytest.mark.parametrize("instance_type", ["ml.p5.48xlarge", "ml.m7i.4xlarge"])
def test_every_container_without_gpus_hides_them_and_the_guardrails_admit_the_job(kind, instance_type, env):
    """Where the nodes do not isolate GPUs (UNISOLATED), a container that gets no GPU from the device plugin sets
    NVIDIA_VISIBLE_DEVICES=void (else its CUDA image's `all` gives it every GPU of the node); where they do
    (prod), nothing needs hiding. Either way the synthesized admission policies, run by a CEL evaluator, admit
    what `job` writes (gpu-visibility and every other rule)."""
    from support.cel_admission import admit

    from cdk_app.kubernetes.guardrails import guardrail_manifests
    config = case_config(env)
    request = dataclasses.replace(BASE, kind=kind, instance_type=instance_type, topology=None, efa_per_node=0,
                                  auto_resume=False, nodes=1, **CPU_ONLY_JOB if instance_type == "ml.m7i.4xlarge" else {})
    manifest = render(config, request)
    specs = {"job": lambda m: [m["spec"]["template"]],
             "mpijob": lambda m: [s["template"] for s in m["spec"]["mpiReplicaSpecs"].values()],
             "pytorchjob": lambda m: [s["template"] for s in m["spec"]["pytorchReplicaSpecs"].values()]}[kind](manifest)
    containers = [c for t in specs for c in t["spec"]["containers"]]
    for container in containers:
        gpus = container.get("resources", {}).get("limits", {}).get("nvidia.com/gpu", 0)
        hidden = [e for e in container.get("env", []) if e["name"] == "NVIDIA_VISIBLE_DEVICES"]
        hides = not gpus and not config.hyperpod.lifecycle.gpu_device_isolation
        assert hidden == ([{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}] if hides else []), container
    group_version, _, version = manifest["apiVersion"].rpartition("/")
    resource = {"Job": "jobs", "MPIJob": "mpijobs", "PyTorchJob": "pytorchjobs"}[manifest["kind"]]
    review = {"kind": {"group": group_version, "version": version, "kind": manifest["kind"]},
              "resource": {"group": group_version, "version": version, "resource": resource}, "subResource": "",
              "name": manifest["metadata"]["name"], "namespace": manifest["metadata"]["namespace"],
              "operation": "CREATE", "userInfo": {"username": "alice", "groups": []}, "dryRun": False}
    verdict = admit(guardrail_manifests(config), review, manifest, None)
    assert verdict.allowed and not verdict.errors, verdict


def test_the_default_priority_is_the_requesting_teams_own():
    """Each team's default_priority_class as prod.yaml writes it: a job without --priority takes its own team's
    class, never another team's (prod's teams have different defaults)."""
    from cdk_app.kubernetes.job_templates import job_priority
    for team in PROD.teams:
        request = dataclasses.replace(BASE, team=team.name, priority=None)
        assert job_priority(PROD, request) == team.default_priority_class, team.name


def test_a_required_priority_without_a_default_lists_the_teams_classes():
    """prod.yaml sets require_priority_class: a team without a default gets the classes its guardrail admits."""
    from cdk_app.kubernetes.job_templates import allowed_priority_classes, job_priority
    team = next(t for t in PROD.teams if t.name == "research-nlp")
    config = PROD.model_copy(update={"teams": tuple(
        t.model_copy(update={"default_priority_class": None}) if t is team else t for t in PROD.teams)})
    allowed = allowed_priority_classes(config, team.name)
    assert allowed, "research-nlp has priority_classes in prod.yaml"
    with pytest.raises(JobSpecError) as refused:
        job_priority(config, dataclasses.replace(BASE, priority=None))
    assert str(refused.value).endswith(f"has no default_priority_class; classes: {', '.join(allowed)}")


def test_a_class_the_team_may_not_use_lists_the_ones_it_may():
    from cdk_app.kubernetes.job_templates import allowed_priority_classes, job_priority
    allowed = allowed_priority_classes(PROD, "research-nlp")
    with pytest.raises(JobSpecError) as refused:
        job_priority(PROD, dataclasses.replace(BASE, priority="inference"))
    assert str(refused.value).endswith(f"priority_classes of team research-nlp; classes: {', '.join(allowed)}")


def test_the_etcd_rendezvous_is_one_member():
    """Every replica started with --initial-cluster-state new and no --initial-cluster peers bootstraps its own
    one-member cluster (etcd's clustering guide), so workers sent to different replicas would never meet: the
    Deployment must hold exactly one."""
    from cdk_app.kubernetes.job_templates import manifests
    request = dataclasses.replace(BASE, topology=None, min_nodes=2, max_nodes=4, rdzv_backend="etcd")
    deployment = next(m for m in manifests(PROD, request) if m["kind"] == "Deployment")
    assert deployment["spec"]["replicas"] == 1
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert "--initial-cluster-state" in container["args"] and "--initial-cluster" not in container["args"]


# etcd v3.5's command line, restated as data from etcd-io/etcd v3.5.17 (server/etcdmain/help.go and config.go,
# server/embed/config.go, client/pkg/types/urls.go, client/pkg/logutil/log_level.go with zap v1.17): the flags the
# rendezvous may use - "bool", a value, a URL list, or the values allowed. Go's flag package matches a name
# exactly (case and all), "--" ends the flags, and etcd stops on an unknown flag or a positional argument.
ETCD_V35_FLAGS = {
    "name": "value", "data-dir": "value", "wal-dir": "value", "listen-peer-urls": "urls",
    "listen-client-urls": "urls", "advertise-client-urls": "urls", "initial-advertise-peer-urls": "urls",
    "initial-cluster": "value", "initial-cluster-token": "value", "initial-cluster-state": ("new", "existing"),
    "enable-v2": "bool", "v2-deprecation": ("not-yet", "write-only", "write-only-drop-data", "gone"),
    "auto-compaction-mode": ("", "periodic", "revision"), "auto-compaction-retention": "value",
    "quota-backend-bytes": "value", "logger": ("zap",), "log-level": "zap-level"}
ZAP_LEVELS = {"debug", "info", "warn", "error", "dpanic", "panic", "fatal", ""}  # zap reads them in any case
GO_BOOLS = {"1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"}  # strconv.ParseBool
# etcd-io/etcd Dockerfile-release.amd64 (v3.5.17): the binaries are added to /usr/local/bin of a distroless
# image, which has no shell to find them on a PATH.
ETCD_RELEASE_BINARY = "/usr/local/bin/etcd"


class EtcdRefuses(Exception):
    pass


def _etcd_url(flag, url):
    """types.NewURLs: http(s) URLs need host:port and no path; unix(s) sockets are not checked further."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme in ("unix", "unixs"):
        return
    if parts.scheme not in ("http", "https"):
        raise EtcdRefuses(f"--{flag} {url!r}: URL scheme must be http, https, unix, or unixs")
    host, colon, port = parts.netloc.rpartition(":")
    if not colon or not host:
        raise EtcdRefuses(f"--{flag} {url!r}: URL address does not have the form \"host:port\"")
    if parts.path:
        raise EtcdRefuses(f"--{flag} {url!r}: URL must not contain a path")


def etcd_flags(argv):
    """{flag: value} as etcd v3.5 parses argv, or EtcdRefuses where it would not start."""
    parsed, rest = {}, list(argv)
    while rest:
        arg = rest.pop(0)
        if arg == "--":
            if rest:
                raise EtcdRefuses(f"{rest[0]!r} is not a valid flag")
            break
        dashes = len(arg) - len(arg.lstrip("-"))
        if dashes not in (1, 2):
            raise EtcdRefuses(f"{arg!r} is not a valid flag")
        name, has_value, value = arg[dashes:].partition("=")
        kind = ETCD_V35_FLAGS.get(name)
        if kind is None:
            raise EtcdRefuses(f"flag provided but not defined: {arg}")
        if kind == "bool":
            value = value if has_value else "true"
            if value not in GO_BOOLS:
                raise EtcdRefuses(f"invalid boolean value {value!r} for {arg}")
        elif not has_value:
            if not rest:
                raise EtcdRefuses(f"flag needs an argument: {arg}")
            value = rest.pop(0)
        if isinstance(kind, tuple) and value not in kind or kind == "zap-level" and value.lower() not in ZAP_LEVELS:
            raise EtcdRefuses(f"invalid value {value!r} for --{name}")
        if kind == "urls":
            for url in value.split(","):
                _etcd_url(name, url)
        parsed[name] = value
    return parsed


@pytest.mark.parametrize("argv", [["--DATA-DIR", "/d"], ["--listen-client-urls"], ["--initial-cluster-state", "NEW"],
                                  ["--enable-v2=yes"], ["data"], ["--listen-client-urls", "0.0.0.0:2379"],
                                  ["--listen-client-urls", "http://0.0.0.0:2379/"], ["--log-level", "verbose"],
                                  ["--", "data"]])
def test_the_etcd_flag_rules_refuse_what_etcd_refuses(argv):
    with pytest.raises(EtcdRefuses):
        etcd_flags(argv)


@pytest.mark.parametrize("argv", [["--listen-client-urls", "unix:///tmp/s"], ["--listen-client-urls", "http://h:"],
                                  ["--log-level", "DPANIC"], ["--auto-compaction-mode", ""], ["--data-dir=/d", "--"]])
def test_the_etcd_flag_rules_accept_what_etcd_accepts(argv):
    etcd_flags(argv)


def test_the_etcd_rendezvous_runs_the_release_image_with_flags_etcd_accepts():
    """The Deployment starts the binary where etcd's release image puts it, with a command line etcd v3.5
    parses, serving the v2 API torch's etcd rendezvous speaks, on the port the Service and the job use."""
    from cdk_app.kubernetes.job_templates import ETCD_IMAGE, manifests
    request = dataclasses.replace(BASE, topology=None, min_nodes=2, max_nodes=4, rdzv_backend="etcd")
    service, deployment, job = manifests(PROD, request)
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert re.fullmatch(r"quay\.io/coreos/etcd:v3\.5\.[0-9]+", ETCD_IMAGE) and container["image"] == ETCD_IMAGE
    assert container["command"] == [ETCD_RELEASE_BINARY]
    flags = etcd_flags(container["args"])
    assert flags["enable-v2"] in {"1", "t", "T", "TRUE", "true", "True"}
    (port,) = service["spec"]["ports"]
    assert [p["containerPort"] for p in container["ports"]] == [port["targetPort"]]
    for name in ("listen-client-urls", "advertise-client-urls"):
        assert urllib.parse.urlsplit(flags[name]).port == port["targetPort"]
    endpoint = job["spec"]["elasticPolicy"]["rdzvHost"], job["spec"]["elasticPolicy"]["rdzvPort"]
    assert endpoint == (service["metadata"]["name"], port["port"])
    assert service["spec"]["selector"] == deployment["spec"]["template"]["metadata"]["labels"]
    assert not core_refusals(deployment["spec"]["template"]["spec"])
    for labels in (service["metadata"]["labels"], service["spec"]["selector"], deployment["metadata"]["labels"],
                   deployment["spec"]["selector"]["matchLabels"], deployment["spec"]["template"]["metadata"]["labels"]):
        assert not label_refusals(labels), labels
    assert all(p.get("protocol", "TCP") in PORT_PROTOCOLS for p in service["spec"]["ports"])
    for manifest in (service, deployment):
        kubernetes_validate.validate(copy.deepcopy(manifest), PROD.eks.kubernetes_version, strict=True)


def test_kubectl_decodes_the_etcd_deployment(tmp_path):
    """kubectl of the cluster's own layer decodes the Deployment into Kubernetes' Go types (resource
    quantities, ports and all): what the API server would do first with it."""
    from cdk_app.kubernetes.job_templates import manifests
    from hyperpod_constructs.private.kubectl_layers import layer_minor
    kubectl = layer_binary("kubectl/kubectl", tmp_path / "layer", layer_minor(PROD.eks.kubernetes_version))
    request = dataclasses.replace(BASE, topology=None, min_nodes=2, max_nodes=4, rdzv_backend="etcd")
    deployment = next(m for m in manifests(PROD, request) if m["kind"] == "Deployment")
    path = tmp_path / "deployment.json"
    for resources, decodes in ((None, True), ({"requests": {"cpu": "250mm"}}, False)):
        shown = copy.deepcopy(deployment)
        if resources is not None:  # the check itself must be able to fail
            shown["spec"]["template"]["spec"]["containers"][0]["resources"] = resources
        path.write_text(json.dumps(shown))
        run = subprocess.run([str(kubectl), "set", "resources", "--local", "-f", str(path), "-c", "etcd",
                              "--limits=memory=1Gi", "-o", "json"], capture_output=True, text=True)
        assert (run.returncode == 0) is decodes, run.stderr
        if decodes:
            requests = json.loads(run.stdout)["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
            assert requests == deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]


def test_a_team_that_may_use_no_class_is_told_so():
    from cdk_app.kubernetes.job_templates import job_priority
    config = PROD.model_copy(update={"teams": tuple(
        t.model_copy(update={"default_priority_class": None, "priority_classes": ()}) if t.name == BASE.team else t
        for t in PROD.teams)})
    with pytest.raises(JobSpecError) as refused:
        job_priority(config, dataclasses.replace(BASE, priority=None))
    assert str(refused.value).endswith("has no default_priority_class; classes: none")


@pytest.mark.parametrize(("change", "service"), [
    ({"nodes": 12, "accelerators_per_node": 1}, "-worker-10"),  # longer than -master-0: the hint must leave room for the longest
    ({"nodes": 2, "min_nodes": 1, "max_nodes": 12}, "-worker-11"),
    ({"kind": "mpijob", "nodes": 12, "accelerators_per_node": 1, "auto_resume": False}, "-worker-11"),
])
def test_a_name_too_long_for_a_derived_name_names_the_longest_and_the_hint_works(change, service):
    groups = tuple(g.model_copy(update={"count": 16}) if g.name == "h100-a" else g for g in PROD.hyperpod.instance_groups)
    config = PROD.model_copy(update={"hyperpod": PROD.hyperpod.model_copy(update={"instance_groups": groups})})
    request = dataclasses.replace(BASE, topology=None, name="a" * 60, **change)
    with pytest.raises(JobSpecError) as refused:
        render(config, request)
    message = str(refused.value)
    assert f"-{service.split('-')[1]}" in message and f"{service}'" in message, message
    what = "the MPI operator's last worker pod hostname" if request.kind == "mpijob" else \
        "the training operator's last worker Service"
    assert f"is too long: {what} would be" in message
    room = int(re.search(r"use at most ([0-9]+) characters", message).group(1))
    render(config, dataclasses.replace(request, name="a" * room))  # the hint's length is accepted


def test_topology_layers_are_the_ones_the_instance_type_carries():
    """p5 nodes carry topology.k8s.aws/network-node-layer-1..3 (EC2 instance topology: 3 network nodes for p5;
    4 only for p6-b200/p6-b300, which HyperPod's topology-aware scheduling does not list)."""
    for layer in (1, 2, 3):
        job = render(PROD, dataclasses.replace(BASE, topology_layer=layer))
        template = job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]
        assert template["metadata"]["annotations"] == {
            "kueue.x-k8s.io/podset-required-topology": f"topology.k8s.aws/network-node-layer-{layer}"}
    for layer in (0, 5):
        with pytest.raises(JobOptionError, match=f"--topology-layer must be 1 to 4, got {layer}"):
            render(PROD, dataclasses.replace(BASE, topology_layer=layer))
    with pytest.raises(JobSpecError, match="--topology-layer 4: ml.p5.48xlarge nodes carry network-node layers 1 "
                                           "to 3 only") as refused:
        render(PROD, dataclasses.replace(BASE, topology_layer=4))
    assert not isinstance(refused.value, JobOptionError)  # a layer the type lacks: refused on its merits


def test_required_topology_fits_exactly_the_largest_group_topology_shows():
    """`topology` (its groups, per layer) and `job --topology required` agree for random node lists: at each
    layer a job of as many nodes as topology's largest group fits, one more does not. The lists mix paths
    that share a value under two parents, and nodes labelled only down to layer 1 or 2."""
    import random

    from support.node_lists import kubectl_list, node

    from cdk_app.kubernetes.topology import as_json

    rng = random.Random(20240611)
    for _ in range(60):
        items = []
        for i in range(rng.randint(1, 7)):
            path = [rng.choice("xy"), rng.choice("bc"), rng.choice("de")][:rng.choice((1, 2, 3, 3, 3))]
            items.append(node(f"n{i}", path))
        nodes = parse_nodes(kubectl_list(items), "nodes.json")
        shown = as_json(nodes)["groups"]
        for layer in (1, 2, 3):
            largest = max((len(g["nodes"]) for g in shown if g["layer"] == layer), default=0)
            request = dataclasses.replace(BASE, topology_layer=layer, accelerators_per_node=4, efa_per_node=0,
                                          auto_resume=False, max_retries=3)
            if largest:  # research-nlp reaches 6 pods of 4 GPUs: every list here is within it
                render(PROD, dataclasses.replace(request, nodes=largest), nodes, "nodes.json")
            if largest < len(nodes):
                with pytest.raises(JobSpecError, match=f"at most {largest} of the nodes in nodes.json that fit "
                                                       f"share one layer-{layer} network node"):
                    render(PROD, dataclasses.replace(request, nodes=largest + 1), nodes, "nodes.json")


def test_no_label_without_a_default_is_said_out_loud_naming_the_classes():
    """prod.yaml requires a class; without the requirement a team without default gets no label - and a note."""
    from cdk_app.kubernetes.job_templates import allowed_priority_classes, job_priority, priority_note
    config = PROD.model_copy(update={
        "cluster_policy": PROD.cluster_policy.model_copy(update={"require_priority_class": False}),
        "teams": tuple(t.model_copy(update={"default_priority_class": None}) if t.name == BASE.team else t
                       for t in PROD.teams)})
    request = dataclasses.replace(BASE, priority=None)
    assert job_priority(config, request) is None
    note = priority_note(config, request)
    assert note.startswith(f"note: no priority label written: team {BASE.team} has no default_priority_class")
    assert f"({', '.join(allowed_priority_classes(config, BASE.team))})" in note and "--priority" in note
    assert priority_note(config, BASE) is None  # --priority given
    assert priority_note(PROD, request) is None  # the team's default applies


def test_no_note_where_there_is_no_class_to_choose():
    from cdk_app.kubernetes.job_templates import priority_note
    dev = load_config(ROOT / "config" / "dev.yaml").config  # no priority classes
    assert priority_note(dev, dataclasses.replace(BASE, team="john", priority=None)) is None


# --- CPUs per node with threads_per_core (EC2 "Rules for specifying CPU options": "The number of vCPUs for the
# instance is the number of CPU cores multiplied by the threads per core") --------------------------------------
DEV_CONFIG = load_config(ROOT / "config" / "dev.yaml").config
M5_JOB = JobRequest(team="john", priority=None, name="cpu", image="repo/x:1", command=("python", "x.py"), nodes=1,
                    instance_type="ml.m5.2xlarge", memory="1Gi")


def _with_threads(config, group: int, threads: int):
    groups = list(config.hyperpod.instance_groups)
    groups[group] = groups[group].model_copy(update={"threads_per_core": threads})
    return config.model_copy(update={"hyperpod": config.hyperpod.model_copy(update={"instance_groups": tuple(groups)})})


def test_a_pod_gets_at_most_the_cores_of_a_node_without_hyper_threading():
    # dev's ml.m5.2xlarge group leaves threads_per_core at 1: 4 cores of the type's 8 vCPU.
    assert DEV_CONFIG.hyperpod.instance_groups[1].threads_per_core == 1
    render(DEV_CONFIG, dataclasses.replace(M5_JOB, cpu="4"))
    with pytest.raises(JobSpecError, match=re.escape(
            "--cpu 4001m per pod is more than one ml.m5.2xlarge has (4: its group's threads_per_core 1 leaves "
            "half the type's 8 vCPU)")):
        render(DEV_CONFIG, dataclasses.replace(M5_JOB, cpu="4001m"))


def test_with_two_threads_per_core_a_pod_may_ask_for_every_vcpu():
    render(_with_threads(DEV_CONFIG, 1, 2), dataclasses.replace(M5_JOB, cpu="8"))
    with pytest.raises(JobSpecError, match=re.escape("--cpu 9 per pod is more than one ml.m5.2xlarge has (8)")):
        render(_with_threads(DEV_CONFIG, 1, 2), dataclasses.replace(M5_JOB, cpu="9"))


def test_the_gpu_type_is_held_to_its_cores_too():
    job = dataclasses.replace(M5_JOB, instance_type="ml.g5.12xlarge", cpu="40")
    render(DEV_CONFIG, job)  # dev's g5 group runs two threads per core: 48
    with pytest.raises(JobSpecError, match=re.escape("more than one ml.g5.12xlarge has (24: its group's")):
        render(_with_threads(DEV_CONFIG, 0, 1), job)


def test_a_job_asking_for_no_resources_names_what_one_node_really_has():
    with pytest.raises(JobSpecError, match=re.escape("(one ml.m5.2xlarge node has 4 vCPU and 32Gi)")):
        render(DEV_CONFIG, dataclasses.replace(M5_JOB, memory=None))
