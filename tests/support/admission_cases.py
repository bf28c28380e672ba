"""The admission matrix: requests a team member, the operators and Kueue make against the guardrails, each with the rules it must be refused by (none: allowed), and the request the API server builds for it."""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any

from cdk_app.kubernetes.guardrails.admission import OTHER_KINDS as ADMISSION_OTHER_KINDS
from cdk_app.kubernetes.guardrails.kinds import WORKLOAD_KINDS
from support.app_synth import governance_manifests
from support.case_configs import TAINTED, UNISOLATED, case_config
from support.cel_admission import (
    Verdict,
    admit,
    labels,
)

MPI_OPERATOR = "system:serviceaccount:kube-system:hyperpod-dependencies-mpi-operator"


MEMBER = "arn:aws:sts::444455556666:assumed-role/hyperpod-team/alice"


def synthesized_manifests(env: str) -> list[dict[str, Any]]:
    """The guardrail objects as the governance stack hands them to the installer."""
    return governance_manifests(case_config(env), "guardrails")


GROUPS = {k.kind: k for k in WORKLOAD_KINDS}


# Kinds a team may create that hold no pods (the Role's other objects).
OTHER_KINDS = {k.kind: k for k in ADMISSION_OTHER_KINDS}


HIDE_GPUS = {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}


# The NVIDIA container toolkit's feature variables (internal/modifier/gated.go, cdi.go): with any GPU, "enabled"
# adds every such device node of the host; NVIDIA_IMEX_CHANNELS lists channels.
FEATURES_OFF = [{"name": "NVIDIA_MOFED", "value": "disabled"}, {"name": "NVIDIA_NVSWITCH", "value": "disabled"},
                {"name": "NVIDIA_GDRCOPY", "value": "disabled"}, {"name": "NVIDIA_GDS", "value": "disabled"},
                {"name": "NVIDIA_IMEX_CHANNELS", "value": "void"}]


def container(name: str = "main", hide_gpus: bool = True, **extra: Any) -> dict[str, Any]:
    """A container that sets what the rules ask of it unless hide_gpus=False: without a GPU it hides the image's
    GPUs (gpu-visibility); with GPUs nothing is asked of it (AWS's and NVIDIA's examples set no variable)."""
    out = {"name": name, "image": "repo/train:1", **extra}
    resources = out.get("resources", {})
    gpus = any(k.startswith("nvidia.com/") and str(q) != "0"
               for part in ("limits", "requests") for k, q in resources.get(part, {}).items())
    if hide_gpus:
        given = {v["name"] for v in out.get("env", [])}
        out["env"] = [*out.get("env", []), *(v for v in ([] if gpus else [HIDE_GPUS]) if v["name"] not in given)]
    return out


def pod_spec(*containers: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"containers": list(containers) or [container()], "restartPolicy": "Never", **extra}


GPU = {"resources": {"limits": {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32},
                     "requests": {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}}}


def workload(kind: str, namespace: str, *specs: dict[str, Any], metadata_labels: dict[str, str] | None = None,
             replica_types: tuple[str, ...] | None = None, **spec_extra: Any) -> dict[str, Any]:
    meta = {"name": "w", "namespace": namespace, "labels": labels(namespace) if metadata_labels is None else metadata_labels}
    known = GROUPS[kind]
    obj = {"apiVersion": f"{known.group}/{known.version}".lstrip("/"), "kind": kind, "metadata": meta}
    if kind == "Pod":
        obj["spec"] = specs[0]
    elif known.replicas:
        types = replica_types or known.replica_types
        # As `hyperpod-kit job` writes them: the pods still running are deleted when the job succeeds.
        obj["spec"] = {"runPolicy": {"cleanPodPolicy": "Running"},
                       known.replicas: {t: {"replicas": 1, "template": {"spec": s}} for t, s in zip(types, specs)},
                       **spec_extra}
    else:
        obj["spec"] = {"template": {"metadata": {"labels": {"app": "w"}}, "spec": specs[0]}, **spec_extra}
        if known.group == "apps":
            # Controllers that keep pods running accept only restartPolicy Always (core validation).
            obj["spec"]["selector"] = {"matchLabels": {"app": "w"}}
            obj["spec"]["template"]["spec"] = {**specs[0], "restartPolicy": "Always"}
    return obj


def request_for(obj: dict[str, Any], operation: str = "CREATE", user: str = MEMBER,
                subresource: str = "") -> dict[str, Any]:
    known = GROUPS.get(obj["kind"]) or OTHER_KINDS[obj["kind"]]
    return {"kind": {"group": known.group, "version": known.version, "kind": known.kind},
            "resource": {"group": known.group, "version": known.version, "resource": known.resource},
            "subResource": subresource, "name": obj["metadata"]["name"], "namespace": obj["metadata"]["namespace"],
            "operation": operation, "userInfo": {"username": user, "groups": ["hyperpod-team-research-nlp"]},
            "dryRun": False}


NLP = "hyperpod-ns-research-nlp"


INF = "hyperpod-ns-inference"


@dataclass(frozen=True)
class Case:
    id: str
    obj: dict[str, Any]
    refused: dict[str, str]  # rule -> text its message must hold (the field); empty: allowed
    env: str = "prod"
    operation: str = "CREATE"
    old: dict[str, Any] | None = None
    user: str = MEMBER
    subresource: str = ""
    options: dict[str, Any] | None = None  # DELETE: the request's DeleteOptions
    # Why the API server of the kit's Kubernetes version drops the refused field before admission (a feature
    # that is off by default there): the real API server then admits the request, with the field gone.
    dropped_by_api_server: str = ""

    @property
    def refused_by_api_server(self) -> dict[str, str]:
        return {} if self.dropped_by_api_server else self.refused


DRA_OFF = "DynamicResourceAllocation is beta and off by default in Kubernetes 1.33"
IMAGE_VOLUMES_OFF = "ImageVolume is beta and off by default in Kubernetes 1.33"
POD_LEVEL_RESOURCES_OFF = "PodLevelResources is alpha and off by default in Kubernetes 1.33"


def relabelled(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"]["labels"] = {**out["metadata"].get("labels", {}), "note": "relabelled"}
    return out


def sc(**fields: Any) -> dict[str, Any]:
    return {"securityContext": fields}


def with_label(obj: dict[str, Any], **changes: str | None) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    for key, value in changes.items():
        name = {"queue": "kueue.x-k8s.io/queue-name", "priority": "kueue.x-k8s.io/priority-class"}[key]
        if value is None:
            out["metadata"]["labels"].pop(name, None)
        else:
            out["metadata"]["labels"][name] = value
    return out


CLEAN_JOB = workload("Job", NLP, pod_spec(container(**GPU)))


# The seed's etcd rendezvous, as a team runs it beside an elastic PyTorchJob.
RENDEZVOUS = workload("Deployment", NLP, pod_spec(container("etcd")), metadata_labels={})


LEGACY_PRIVILEGED = workload("Job", NLP, pod_spec(container(**sc(privileged=True))), metadata_labels={})


BOUND_POD = workload("Pod", NLP, pod_spec(container(**GPU), nodeName="hyperpod-i-0abc"), metadata_labels={})


DEBUGGER = {"name": "debugger", "image": "busybox", "targetContainerName": "main", "env": [HIDE_GPUS]}


def owned_by(obj: dict[str, Any], kind: str = "PyTorchJob", controller: bool = True) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"]["ownerReferences"] = [{"apiVersion": "kubeflow.org/v1" if kind == "PyTorchJob" else "batch/v1",
                                           "kind": kind, "name": "tiny", "controller": controller,
                                           "uid": "5f1c9a8e-0000-4000-8000-000000000001"}]
    return out


# What mpi-operator v0.5 writes: no queue label, owned by its MPIJob, GPUs hidden with empty variables.
LAUNCHER = owned_by(workload("Job", NLP, pod_spec(container("launcher", env=[
    {"name": "K_MPI_JOB_ROLE", "value": "launcher"}, {"name": "NVIDIA_VISIBLE_DEVICES"},
    {"name": "NVIDIA_DRIVER_CAPABILITIES"}])), metadata_labels={}), kind="MPIJob")
LAUNCHER["metadata"]["ownerReferences"][0]["apiVersion"] = "kubeflow.org/v2beta1"


CASES = [
    # ---- allowed -----------------------------------------------------------------------------------
    Case("job-clean-own-queue", CLEAN_JOB, {}),
    Case("pytorchjob-master-worker-gpu-efa", workload("PyTorchJob", NLP, pod_spec(container("pytorch", **GPU)),
                                                      pod_spec(container("pytorch", **GPU))), {}),
    Case("pytorchjob-elastic-workers-only", workload("PyTorchJob", NLP, pod_spec(container("pytorch", **GPU)),
                                                     replica_types=("Worker",),
                                                     elasticPolicy={"rdzvBackend": "c10d", "minReplicas": 1, "maxReplicas": 4}), {}),
    Case("mpijob-launcher-worker", workload("MPIJob", NLP, pod_spec(container("launcher")),
                                            pod_spec(container("worker", **GPU))), {}),
    Case("pod-from-job-controller-with-gpus", workload("Pod", NLP, pod_spec(container(**GPU)), metadata_labels={}), {}),
    # The scheduler binds through pods/binding; any later update of the pod keeps the nodeName it set.
    Case("pod-update-keeps-scheduler-node-name", relabelled(BOUND_POD), {}, operation="UPDATE", old=BOUND_POD),
    Case("ephemeral-debug-container-clean", workload("Pod", NLP, pod_spec(container(**GPU), nodeName="hyperpod-i-0abc",
                                                                         ephemeralContainers=[DEBUGGER]), metadata_labels={}),
         {}, operation="UPDATE", old=BOUND_POD, subresource="ephemeralcontainers"),
    Case("ipc-lock-where-team-allows-it", workload("Job", NLP, pod_spec(container(**sc(capabilities={"add": ["IPC_LOCK"]})))), {}),
    Case("baseline-capabilities", workload("Job", INF, pod_spec(container(**sc(capabilities={"add": ["NET_BIND_SERVICE", "CHOWN"], "drop": ["ALL"]}))),
                                           metadata_labels=labels(INF, priority="inference-priority")), {}),
    Case("cuda-visible-devices-and-driver-capabilities", workload("Job", NLP, pod_spec(container(
        env=[{"name": "CUDA_VISIBLE_DEVICES", "value": "0,1"}, {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"}], **GPU))), {}),
    Case("env-from-with-safe-prefix", workload("Job", NLP, pod_spec(container(envFrom=[{"configMapRef": {"name": "cfg"}, "prefix": "CFG_"}]))), {}),
    Case("explicit-false-flags", workload("Job", NLP, pod_spec(container(**sc(privileged=False, allowPrivilegeEscalation=False)),
                                                               hostNetwork=False, hostPID=False, hostIPC=False)), {}),
    Case("pvc-and-empty-dir-volumes", workload("Job", NLP, pod_spec(container(), volumes=[
        {"name": "data", "persistentVolumeClaim": {"claimName": "fsx"}}, {"name": "shm", "emptyDir": {"medium": "Memory"}}])), {}),
    Case("priority-class-name-of-the-team", workload("Job", NLP, pod_spec(container(), priorityClassName="training-priority")), {}),
    Case("rendezvous-deployment-without-devices", workload("Deployment", NLP, pod_spec(container("etcd")),
                                                          metadata_labels={}, replicas=1), {}),
    Case("legacy-object-metadata-only-update", with_label(LEGACY_PRIVILEGED), {}, operation="UPDATE", old=LEGACY_PRIVILEGED),
    Case("legacy-foreign-queue-left-as-it-was", with_label(CLEAN_JOB, queue="hyperpod-ns-inference-localqueue"), {},
         operation="UPDATE", old=with_label(CLEAN_JOB, queue="hyperpod-ns-inference-localqueue")),
    # What mpi-operator v0.5 writes: no queue label, and GPUs hidden from the launcher with empty variables.
    Case("mpi-operator-creates-launcher-job", LAUNCHER, {}, user=MPI_OPERATOR),
    Case("device-variable-set-to-hide-devices", workload("Job", NLP, pod_spec(container(env=[
        {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}, {"name": "AWS_NEURON_VISIBLE_DEVICES", "value": ""}]))), {}),
    Case("dev-no-priority-label-not-required", workload("Job", "hyperpod-ns-john", pod_spec(container()),
                                                       metadata_labels=labels("hyperpod-ns-john", priority=None)), {}, env="dev"),
    Case("namespace-outside-the-teams", workload("Pod", "kube-system", pod_spec(container(**sc(privileged=True)), hostPID=True),
                                                 metadata_labels={}), {}),
    Case("shared-pool-namespace-own-queue", workload("Job", "hyperpod-ns-shared", pod_spec(container()),
                                                     metadata_labels=labels("hyperpod-ns-shared")), {}),
    Case("mig-slice-without-hiding", workload("Job", NLP, pod_spec(container(resources={
        "limits": {"nvidia.com/mig-1g.10gb": 1}, "requests": {"nvidia.com/mig-1g.10gb": 1}}))), {}),
    Case("empty-value-hides-gpus", workload("Job", NLP, pod_spec(container(hide_gpus=False, env=[
        {"name": "NVIDIA_VISIBLE_DEVICES"}]))), {}),
    Case("gpu-container-switches-features-off-with-empty-values", workload("Job", NLP, pod_spec(container(
        hide_gpus=False, **GPU, env=[{"name": v["name"]} for v in FEATURES_OFF]))), {}),
    # A container with GPUs and no variable of its own, as every AWS and NVIDIA example writes it: admitted
    # (its image's feature variables are the runtime's matter; the README says what stays open).
    Case("gpu-worker-as-the-docs-write-it", workload("Job", NLP, pod_spec(container(hide_gpus=False, **GPU))), {}),
    Case("pytorchjob-workers-as-the-docs-write-them", workload("PyTorchJob", NLP, pod_spec(container("pytorch", hide_gpus=False, **GPU)),
                                                              pod_spec(container("pytorch", hide_gpus=False, **GPU))), {}),
    # The MPI operator empties NVIDIA_VISIBLE_DEVICES on the launcher's first container (v0.5.0
    # newLauncherPodTemplate), so a GPU-less launcher as the nccl-tests examples write it needs no env of its own.
    Case("mpijob-launcher-hidden-by-the-operator", workload("MPIJob", NLP, pod_spec(container("launcher", hide_gpus=False)),
                                                            pod_spec(container("worker", **GPU))), {}),
    # ---- refused -----------------------------------------------------------------------------------
    # Only the first container, and not when the launcher also works: then the operator leaves the env alone.
    Case("mpijob-launcher-second-container-not-hidden", workload("MPIJob", NLP, pod_spec(
        container("launcher", hide_gpus=False), container("sidecar", hide_gpus=False)), pod_spec(container("worker", **GPU))),
         {"gpu-visibility": "Launcher.template.spec.containers[sidecar].env"}),
    Case("mpijob-launcher-as-worker-not-hidden", workload("MPIJob", NLP, pod_spec(container("launcher", hide_gpus=False)),
                                                          pod_spec(container("worker", **GPU)), runLauncherAsWorker=True),
         {"gpu-visibility": "Launcher.template.spec.containers[launcher].env"}),
    # "none" is a device list of one empty name to the toolkit: no GPU, but the feature variables then apply.
    Case("none-does-not-hide-gpus", workload("Job", NLP, pod_spec(container(env=[
        {"name": "NVIDIA_VISIBLE_DEVICES", "value": "none"}]))), {"device-env": "containers[main].env: NVIDIA_VISIBLE_DEVICES"}),
    # Every EFA and NVSwitch device of a shared node from a Deployment with no device request.
    Case("deployment-takes-every-efa-through-mofed", workload("Deployment", NLP, pod_spec(container("efa", env=[
        {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}, {"name": "NVIDIA_MOFED", "value": "enabled"},
        {"name": "NVIDIA_NVSWITCH", "value": "enabled"}])), metadata_labels={}, replicas=1),
         {"device-env": "spec.template.spec.containers[efa].env: NVIDIA_MOFED"}),
    Case("gpu-worker-enables-mofed", workload("Job", NLP, pod_spec(container(**GPU, env=[
        {"name": "NVIDIA_MOFED", "value": "enabled"}]))), {"device-env": "env: NVIDIA_MOFED"}),
    Case("gpu-worker-asks-imex-channels", workload("Job", NLP, pod_spec(container(**GPU, env=[
        {"name": "NVIDIA_IMEX_CHANNELS", "value": "0"}]))), {"device-env": "env: NVIDIA_IMEX_CHANNELS"}),
    Case("gpu-worker-gds-from-a-configmap", workload("Job", NLP, pod_spec(container(**GPU, env=[
        {"name": "NVIDIA_GDS", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "gds"}}}]))),
         {"device-env": "env: NVIDIA_GDS"}),
    Case("envfrom-prefix-of-a-feature-variable", workload("Job", NLP, pod_spec(container(
        envFrom=[{"configMapRef": {"name": "c"}, "prefix": "NVIDIA_G"}]))), {"device-env": "envFrom"}),
    # A CUDA image sets NVIDIA_VISIBLE_DEVICES=all: without its own value the container would see every GPU.
    Case("gpu-less-container-keeps-the-image-gpus", workload("Job", NLP, pod_spec(container(hide_gpus=False))),
         {"gpu-visibility": "spec.template.spec.containers[main].env"}),
    Case("zero-gpu-request-is-no-gpu", workload("Job", NLP, pod_spec(container(hide_gpus=False, resources={
        "limits": {"nvidia.com/gpu": 0}, "requests": {"nvidia.com/gpu": 0}}))),
         {"gpu-visibility": "containers[main].env"}),
    Case("efa-only-container-keeps-the-image-gpus", workload("Job", NLP, pod_spec(container(hide_gpus=False, resources={
        "limits": {"vpc.amazonaws.com/efa": 1}, "requests": {"vpc.amazonaws.com/efa": 1}}))),
         {"gpu-visibility": "containers[main].env"}),
    Case("init-container-of-a-gpu-worker-keeps-the-image-gpus", workload("PyTorchJob", NLP, pod_spec(container("pytorch", **GPU)),
                                                                       pod_spec(container("pytorch", **GPU), initContainers=[
                                                                           container("init", hide_gpus=False)])),
         {"gpu-visibility": "spec.pytorchReplicaSpecs.Worker.template.spec.initContainers[init].env"}),
    Case("debug-container-keeps-the-image-gpus", workload("Pod", NLP, pod_spec(container(**GPU), nodeName="hyperpod-i-0abc",
                                                                              ephemeralContainers=[{**DEBUGGER, "env": []}]),
                                                          metadata_labels={}),
         {"gpu-visibility": "spec.ephemeralContainers[debugger].env"}, operation="UPDATE", old=BOUND_POD,
         subresource="ephemeralcontainers"),
    Case("deployment-keeps-the-image-gpus", workload("Deployment", NLP, pod_spec(container("etcd", hide_gpus=False)),
                                                     metadata_labels={}, replicas=1),
         {"gpu-visibility": "spec.template.spec.containers[etcd].env"}),
    Case("only-the-last-of-three-containers-privileged", workload("Job", NLP, pod_spec(
        container("a"), container("b"), container("c", **sc(privileged=True)))),
         {"privileged": "spec.template.spec.containers[c].securityContext.privileged"}),
    Case("privileged-init-container-of-a-worker", workload("PyTorchJob", NLP, pod_spec(container("pytorch")), pod_spec(
        container("pytorch"), initContainers=[container("init", **sc(privileged=True))])),
         {"privileged": "spec.pytorchReplicaSpecs.Worker.template.spec.initContainers[init]"}),
    Case("privileged-ephemeral-container", workload("Pod", NLP, pod_spec(container(**GPU), nodeName="hyperpod-i-0abc",
                                                                        ephemeralContainers=[{**DEBUGGER, **sc(privileged=True)}]), metadata_labels={}),
         {"privileged": "spec.ephemeralContainers[debugger]"}, operation="UPDATE", old=BOUND_POD,
         subresource="ephemeralcontainers"),
    Case("privilege-escalation", workload("Job", NLP, pod_spec(container(**sc(allowPrivilegeEscalation=True)))),
         {"privilege-escalation": "containers[main].securityContext.allowPrivilegeEscalation"}),
    Case("sys-admin-capability", workload("Job", NLP, pod_spec(container(**sc(capabilities={"add": ["CHOWN", "SYS_ADMIN"]})))),
         {"capabilities": "containers[main].securityContext.capabilities.add: SYS_ADMIN"}),
    Case("ipc-lock-where-team-does-not-allow-it", workload("Job", INF, pod_spec(container(**sc(capabilities={"add": ["IPC_LOCK"]}))),
                                                          metadata_labels=labels(INF, priority="inference-priority")),
         {"capabilities": "IPC_LOCK is not allowed"}),
    Case("lower-case-capability", workload("Job", NLP, pod_spec(container(**sc(capabilities={"add": ["sys_admin"]})))),
         {"capabilities": "sys_admin"}),
    Case("host-pid", workload("Job", NLP, pod_spec(container(), hostPID=True)), {"host-namespaces": "spec.template.spec.hostPID"}),
    Case("host-ipc", workload("Job", NLP, pod_spec(container(), hostIPC=True)), {"host-namespaces": "spec.template.spec.hostIPC"}),
    Case("host-network-mpi-worker", workload("MPIJob", NLP, pod_spec(container("launcher")), pod_spec(container("worker"), hostNetwork=True)),
         {"host-namespaces": "spec.mpiReplicaSpecs.Worker.template.spec.hostNetwork"}),
    Case("host-path-volume", workload("Job", NLP, pod_spec(container(), volumes=[
        {"name": "scratch", "emptyDir": {}}, {"name": "root", "hostPath": {"path": "/"}}])),
         {"volumes": "spec.template.spec.volumes[root]: only configMap"}),
    Case("node-name-in-a-job-template", workload("Job", NLP, pod_spec(container(), nodeName="hyperpod-i-0abc")),
         {"node-name": "spec.template.spec.nodeName"}),
    Case("node-name-on-pod-create", workload("Pod", NLP, pod_spec(container(), nodeName="hyperpod-i-0abc"), metadata_labels={}),
         {"node-name": "spec.nodeName"}),
    Case("nvidia-visible-devices-all-without-request", workload("Job", NLP, pod_spec(container(
        env=[{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]))), {"device-env": "env: NVIDIA_VISIBLE_DEVICES"}),
    Case("neuron-visible-cores", workload("PyTorchJob", NLP, pod_spec(container("pytorch", env=[
        {"name": "NEURON_RT_VISIBLE_CORES", "value": "0-31"}])), pod_spec(container("pytorch"))),
         {"device-env": "spec.pytorchReplicaSpecs.Master.template.spec.containers[pytorch].env: NEURON_RT_VISIBLE_CORES"}),
    Case("device-variable-from-a-config-map", workload("Job", NLP, pod_spec(container(env=[{"name": "NVIDIA_VISIBLE_DEVICES",
        "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "gpus"}}}]))), {"device-env": "env: NVIDIA_VISIBLE_DEVICES"}),
    Case("env-from-without-prefix", workload("Job", NLP, pod_spec(container(envFrom=[{"configMapRef": {"name": "cfg"}}]))),
         {"device-env": "containers[main].envFrom"}),
    Case("env-from-prefix-that-spells-a-device-variable", workload("Job", NLP, pod_spec(container(
        envFrom=[{"secretRef": {"name": "s"}, "prefix": "NVIDIA_"}]))), {"device-env": "envFrom"}),
    Case("system-node-critical-priority-class-name", workload("Job", NLP, pod_spec(container(), priorityClassName="system-node-critical")),
         {"priority-class": "spec.template.spec.priorityClassName"}),
    Case("inference-priority-class-name-for-research", workload("Pod", NLP, pod_spec(container(), priorityClassName="inference-priority"),
                                                               metadata_labels={}), {"priority-class": "spec.priorityClassName"}),
    Case("gpus-in-a-deployment", workload("Deployment", NLP, pod_spec(container(**GPU)), metadata_labels={}),
         {"unqueued-devices": "spec.template.spec.containers[main].resources"}),
    Case("efa-in-a-statefulset", workload("StatefulSet", NLP, pod_spec(container(resources={"limits": {"vpc.amazonaws.com/efa": 1}})),
                                          metadata_labels={}, serviceName="w"), {"unqueued-devices": "resources"}),
    # Red team F4 (issue 28): Deployments are outside every Kueue quota; many replicas with a team's priority
    # class would hold nodes and let the scheduler evict queued pods.
    Case("priority-class-on-a-deployment", workload("Deployment", NLP, pod_spec(container(), priorityClassName="fine-tuning-priority"),
                                                    metadata_labels={}), {"unqueued-priority": "spec.template.spec.priorityClassName"}),
    Case("ten-deployment-replicas", workload("Deployment", NLP, pod_spec(container()), metadata_labels={}, replicas=10),
         {"unqueued-replicas": "spec.replicas: at most 3"}),
    # Red team round 2, F2: a rollout that never becomes ready keeps replicas + maxSurge pods.
    Case("deployment-surging-a-thousand-pods", workload("Deployment", NLP, pod_spec(container()), metadata_labels={}, replicas=3,
                                                        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1000, "maxUnavailable": 0}}),
         {"unqueued-surge": "spec.strategy.rollingUpdate.maxSurge: at most 1 or 25%"}),
    Case("deployment-surging-by-percent", workload("Deployment", NLP, pod_spec(container()), metadata_labels={}, replicas=3,
                                                   strategy={"rollingUpdate": {"maxSurge": "026%"}}), {"unqueued-surge": "maxSurge"}),
    Case("deployment-surging-by-the-default-percent", workload("Deployment", NLP, pod_spec(container()), metadata_labels={},
                                                               replicas=3, strategy={"rollingUpdate": {"maxSurge": "025%", "maxUnavailable": 0}}), {}),
    Case("deployment-surging-by-one", workload("Deployment", NLP, pod_spec(container()), metadata_labels={}, replicas=3,
                                               strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}), {}),
    Case("deployment-recreated", workload("Deployment", NLP, pod_spec(container()), metadata_labels={}, strategy={"type": "Recreate"}), {}),
    Case("deployment-surge-raised-by-an-update", workload("Deployment", NLP, pod_spec(container()), metadata_labels={},
                                                          strategy={"rollingUpdate": {"maxSurge": "100%"}}),
         {"unqueued-surge": "maxSurge"}, operation="UPDATE", old=RENDEZVOUS),
    Case("three-deployment-replicas", workload("Deployment", NLP, pod_spec(container()), metadata_labels={}, replicas=3), {}),
    # Red team F4: unqueued pods' CPU and memory, capped per container and per pod (prod's teams keep the
    # defaults: 2 CPUs and 8Gi each), compared with CEL's quantity library.
    Case("deployment-cpu-request-above-the-cap", workload("Deployment", NLP, pod_spec(container("etcd", resources={
        "requests": {"cpu": "3"}})), metadata_labels={}),
         {"unqueued-resources": "spec.template.spec.containers[etcd].resources.requests.cpu",
          "unqueued-pod-resources": "spec.template.spec.containers[*].resources.requests.cpu"}),
    Case("deployment-memory-limit-above-the-cap", workload("Deployment", NLP, pod_spec(container("etcd", resources={
        "limits": {"memory": "9Gi"}})), metadata_labels={}),
         {"unqueued-resources": "containers[etcd].resources.limits.memory",
          "unqueued-pod-resources": "containers[*].resources.requests.memory"}),
    Case("deployment-exactly-at-the-caps", workload("Deployment", NLP, pod_spec(container("etcd", resources={
        "requests": {"cpu": "2000m", "memory": "8Gi"}, "limits": {"cpu": "2", "memory": "8192Mi"}})), metadata_labels={}), {}),
    # 8e9 bytes is less than 8Gi (8589934592), 9e9 more: the exponent form is read as a number, not as text.
    Case("statefulset-memory-in-exponent-form-below-the-cap", workload("StatefulSet", NLP, pod_spec(container(resources={
        "requests": {"memory": "8e9"}})), metadata_labels={}, serviceName="w"), {}),
    Case("statefulset-memory-in-exponent-form-above-the-cap", workload("StatefulSet", NLP, pod_spec(container(resources={
        "requests": {"memory": "9e9"}})), metadata_labels={}, serviceName="w"),
         {"unqueued-resources": "containers[main].resources.requests.memory",
          "unqueued-pod-resources": "containers[*].resources.requests.memory"}),
    Case("deployment-containers-together-above-the-pod-cap", workload("Deployment", NLP, pod_spec(
        container("etcd", resources={"requests": {"cpu": "1500m"}}), container("sidecar", resources={"limits": {"cpu": "1"}})),
        metadata_labels={}), {"unqueued-pod-resources": "spec.template.spec.containers[*].resources.requests.cpu"}),
    Case("deployment-init-container-counts-toward-the-pod-cap", workload("Deployment", NLP, pod_spec(
        container("etcd", resources={"requests": {"memory": "4Gi"}}),
        initContainers=[container("fetch", resources={"requests": {"memory": "5Gi"}})]), metadata_labels={}),
         {"unqueued-pod-resources": "containers[*].resources.requests.memory"}),
    # 0.1 + 1.1 + 0.35 + 0.45 is 2.0000000000000004 in float64: the sum's margin admits a pod exactly at its cap.
    Case("deployment-decimal-requests-summing-to-the-cap", workload("Deployment", NLP, pod_spec(
        *(container(f"c{i}", resources={"requests": {"cpu": cpu}}) for i, cpu in enumerate(("0.1", "1.1", "0.35", "0.45")))),
        metadata_labels={}), {}),
    # A device taint on GPU groups keeps unqueued pods off them (ExtendedResourceToleration tolerates it only for
    # pods that request GPUs); their own toleration of it is refused, a Job's is not.
    Case("deployment-tolerating-the-gpu-taint", workload("Deployment", NLP, pod_spec(container(), tolerations=[
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]), metadata_labels={}),
         {"unqueued-devices": "spec.template.spec.tolerations"}),
    Case("job-tolerating-the-gpu-taint", workload("Job", NLP, pod_spec(container(**GPU), tolerations=[
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])), {}),
    # Pod-level resources (the scheduler reserves them where set) are capped as the containers' sum is; the
    # API server of the kit's version drops the field before admission.
    Case("deployment-pod-level-cpu-above-the-pod-cap", workload("Deployment", NLP, pod_spec(container(), resources={
        "requests": {"cpu": "8"}}), metadata_labels={}),
         {"unqueued-pod-resources": "spec.template.spec.resources.cpu: the pod-level resources are above"},
         dropped_by_api_server=POD_LEVEL_RESOURCES_OFF),
    # Red team round 2, F6: local disk is capped as CPU and memory are (default 20Gi), hugepages are refused.
    Case("deployment-ephemeral-storage-above-the-cap", workload("Deployment", NLP, pod_spec(container("etcd", resources={
        "requests": {"ephemeral-storage": "100Ti"}})), metadata_labels={}),
         {"unqueued-resources": "containers[etcd].resources.requests.ephemeral-storage: 100Ti is above the team's cap of 20Gi",
          "unqueued-pod-resources": "containers[*].resources.requests.ephemeral-storage"}),
    Case("deployment-ephemeral-storage-limit-in-two-containers-above-the-pod-cap", workload("Deployment", NLP, pod_spec(
        container("etcd", resources={"limits": {"ephemeral-storage": "20Gi"}}),
        container("sidecar", resources={"limits": {"ephemeral-storage": "1Gi"}})), metadata_labels={}),
         {"unqueued-pod-resources": "ephemeral-storage"}),
    Case("deployment-ephemeral-storage-at-the-cap", workload("Deployment", NLP, pod_spec(container("etcd", resources={
        "requests": {"ephemeral-storage": "20Gi"}, "limits": {"ephemeral-storage": "21474836480"}})), metadata_labels={}), {}),
    Case("deployment-asking-for-hugepages", workload("Deployment", NLP, pod_spec(container("etcd", resources={
        "requests": {"hugepages-2Mi": "1Gi", "memory": "1Gi"}, "limits": {"hugepages-2Mi": "1Gi", "memory": "1Gi"}})),
        metadata_labels={}), {"unqueued-hugepages": "spec.template.spec.containers[etcd].resources: hugepages-*"}),
    Case("job-asking-for-hugepages", workload("Job", NLP, pod_spec(container(resources={
        "requests": {"hugepages-1Gi": "8Gi", "memory": "8Gi"}, "limits": {"hugepages-1Gi": "8Gi", "memory": "8Gi"}}))), {}),
    Case("job-cpu-above-the-unqueued-cap", workload("Job", NLP, pod_spec(container(resources={
        "requests": {"cpu": "64", "memory": "512Gi"}}))), {}),
    Case("statefulset-replicas-scaled-up", workload("StatefulSet", NLP, pod_spec(container()), metadata_labels={},
                                                    serviceName="w", replicas=4),
         {"unqueued-replicas": "spec.replicas"}, operation="UPDATE",
         old=workload("StatefulSet", NLP, pod_spec(container()), metadata_labels={}, serviceName="w", replicas=1)),
    Case("unknown-replica-type", workload("PyTorchJob", NLP, pod_spec(container("pytorch")), pod_spec(container("pytorch")),
                                          replica_types=("Master", "Chief")), {"replica-types": "spec.pytorchReplicaSpecs.Chief"}),
    Case("missing-queue-label", with_label(CLEAN_JOB, queue=None), {"queue": "queue-name]: missing"}),
    Case("another-teams-queue", with_label(CLEAN_JOB, queue="hyperpod-ns-inference-localqueue"),
         {"queue": "'hyperpod-ns-inference-localqueue' is not this namespace's queue; set it to hyperpod-ns-research-nlp-localqueue"}),
    Case("queue-relabelled-to-another-team", with_label(CLEAN_JOB, queue="hyperpod-ns-inference-localqueue"),
         {"queue": "hyperpod-ns-inference-localqueue"}, operation="UPDATE", old=CLEAN_JOB),
    Case("member-posing-without-queue", workload("Job", NLP, pod_spec(container("launcher")), metadata_labels={}),
         {"queue": "missing", "priority-class": "missing"}),
    Case("priority-class-the-team-may-not-use", with_label(CLEAN_JOB, priority="inference-priority"),
         {"priority-class": "'inference-priority' is not allowed; allowed: fine-tuning-priority, training-priority, experimentation-priority"}),
    Case("priority-label-missing-where-required", with_label(CLEAN_JOB, priority=None),
         {"priority-class": "missing (the config requires a priority class)"}),
    Case("unknown-priority-class", with_label(CLEAN_JOB, priority="urgent-priority"), {"priority-class": "urgent-priority"}),
    Case("dev-priority-class-that-does-not-exist", workload("Job", "hyperpod-ns-john", pod_spec(container()),
                                                           metadata_labels=labels("hyperpod-ns-john")),
         {"priority-class": "allowed: none"}, env="dev"),
    Case("issue-12-attack-privileged-hostpid-hostpath", workload("Job", NLP, pod_spec(
        container(**sc(privileged=True)), hostPID=True, volumes=[{"name": "host", "hostPath": {"path": "/"}}])),
         {"privileged": "securityContext.privileged", "host-namespaces": "hostPID", "volumes": "volumes[host]"}),
    Case("baseline-safe-settings", workload("Job", NLP, pod_spec(
        container(ports=[{"containerPort": 29500}], **sc(procMount="Default", seccompProfile={"type": "RuntimeDefault"},
                                                         seLinuxOptions={"type": "container_t", "level": "s0:c1,c2"})),
        securityContext={"sysctls": [{"name": "net.ipv4.tcp_keepalive_time", "value": "60"}],
                         "seccompProfile": {"type": "RuntimeDefault"}, "appArmorProfile": {"type": "RuntimeDefault"}})), {}),
    Case("host-port", workload("Job", NLP, pod_spec(container(ports=[{"containerPort": 22, "hostPort": 2222}]))),
         {"host-ports": "containers[main].ports"}),
    Case("unmasked-proc", workload("Job", NLP, pod_spec(container(**sc(procMount="Unmasked")))),
         {"proc-mount": "containers[main].securityContext.procMount"}),
    Case("seccomp-unconfined-pod", workload("Job", NLP, pod_spec(container(), securityContext={"seccompProfile": {"type": "Unconfined"}})),
         {"seccomp": "spec.template.spec.securityContext.seccompProfile"}),
    Case("seccomp-unconfined-container", workload("Job", NLP, pod_spec(container(**sc(seccompProfile={"type": "Unconfined"})))),
         {"seccomp": "containers[main].securityContext.seccompProfile"}),
    Case("apparmor-unconfined", workload("Job", NLP, pod_spec(container(**sc(appArmorProfile={"type": "Unconfined"})))),
         {"apparmor": "containers[main].securityContext.appArmorProfile"}),
    Case("selinux-spc-type", workload("Job", NLP, pod_spec(container(), securityContext={"seLinuxOptions": {"type": "spc_t"}})),
         {"selinux": "spec.template.spec.securityContext.seLinuxOptions"}),
    Case("selinux-user", workload("Job", NLP, pod_spec(container(**sc(seLinuxOptions={"user": "system_u"})))),
         {"selinux": "containers[main].securityContext.seLinuxOptions"}),
    Case("unsafe-sysctl", workload("Job", NLP, pod_spec(container(), securityContext={"sysctls": [{"name": "kernel.msgmax", "value": "1"}]})),
         {"sysctls": "spec.template.spec.securityContext.sysctls"}),
    Case("clean-job-updated-to-privileged", workload("Job", NLP, pod_spec(container(**GPU, **sc(privileged=True)))),
         {"privileged": "containers[main]"}, operation="UPDATE", old=CLEAN_JOB),
]


def run(case: Case, manifests: list[dict[str, Any]]) -> Verdict:
    request = request_for(case.obj, case.operation, case.user, case.subresource)
    if case.operation == "DELETE":  # the API server sends the deleted object as oldObject, and the options
        request["options"] = {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", **(case.options or {})}
        return admit(manifests, request, None, case.obj)
    return admit(manifests, request, case.obj, case.old)


KUEUE = "system:serviceaccount:kueue-system:kueue-controller-manager"
GC = "system:serviceaccount:kube-system:generic-garbage-collector"


def spec_of(obj: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["spec"].update(changes)
    return out


def with_meta(obj: dict[str, Any], field_name: str, values: dict[str, str] | None = None) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"].setdefault(field_name, {}).update(values or {})
    return out


ORPHAN = "orphan"


def with_finalizers(obj: dict[str, Any], *names: str) -> dict[str, Any]:
    return {**obj, "metadata": {**obj["metadata"], "finalizers": list(names)}}


def with_template_finalizers(obj: dict[str, Any], *names: str, replica_type: str | None = None) -> dict[str, Any]:
    """The object with `names` as the finalizers of its pod template (a replica spec's, given its type)."""
    out = copy.deepcopy(obj)
    spec = out["spec"]
    template = spec["template"] if replica_type is None else next(
        v for k, v in spec.items() if k.endswith("ReplicaSpecs"))[replica_type]["template"]
    template.setdefault("metadata", {})["finalizers"] = list(names)
    return out


def with_template_annotations(obj: dict[str, Any], values: dict[str, str]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["spec"]["template"].setdefault("metadata", {}).setdefault("annotations", {}).update(values)
    return out


def network_policy(name: str = "allow-from-ingress-x", **spec: Any) -> dict[str, Any]:
    body = {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": [{"from": [{"podSelector": {}}]}], **spec}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": name, "namespace": NLP},
            "spec": body}


def service(**spec: Any) -> dict[str, Any]:
    body = {"selector": {"app": "w"}, "ports": [{"port": 29500}], **spec}
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "w", "namespace": NLP},
            "spec": {k: v for k, v in body.items() if v is not None}}


PYTORCH_JOB = workload("PyTorchJob", NLP, pod_spec(container("pytorch", **GPU)), pod_spec(container("pytorch", **GPU)))


def job(**pod_extra: Any) -> dict[str, Any]:
    return workload("Job", NLP, pod_spec(container(**GPU), **pod_extra))


def volume(name: str, **source: Any) -> dict[str, Any]:
    return job(volumes=[{"name": "scratch", "emptyDir": {}}, {"name": name, **source}])


# A minimal valid source of every volume type the guardrails refuse (the schema's required fields).
REFUSED_SOURCES = {
    "awsElasticBlockStore": {"volumeID": "vol-0123456789abcdef0"}, "azureDisk": {"diskName": "d", "diskURI": "u"},
    "azureFile": {"secretName": "s", "shareName": "s"}, "cephfs": {"monitors": ["10.0.0.1:6789"]},
    "cinder": {"volumeID": "v"}, "csi": {"driver": "efs.csi.aws.com", "volumeAttributes": {"fsid": "fs-1"}},
    "fc": {"wwids": ["w"]}, "flexVolume": {"driver": "example/driver"}, "flocker": {"datasetName": "d"},
    "gcePersistentDisk": {"pdName": "p"}, "gitRepo": {"repository": "https://example.com/r.git"},
    "glusterfs": {"endpoints": "e", "path": "p"}, "hostPath": {"path": "/"}, "image": {"reference": "repo/data:1"},
    "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:t", "lun": 0},
    "nfs": {"server": "fs-123.efs.us-west-2.amazonaws.com", "path": "/"}, "photonPersistentDisk": {"pdID": "p"},
    "portworxVolume": {"volumeID": "v"}, "quobyte": {"registry": "r", "volume": "v"},
    "rbd": {"monitors": ["10.0.0.1:6789"], "image": "i"},
    "scaleIO": {"gateway": "g", "system": "s", "secretRef": {"name": "s"}}, "storageos": {"volumeName": "v"},
    "vsphereVolume": {"volumePath": "p"},
}


def claim(**spec: Any) -> dict[str, Any]:
    return {"ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"],
                                                           "resources": {"requests": {"storage": "1Gi"}}, **spec}}}}


HEALTHY = {"sagemaker.amazonaws.com/node-health-status": "Schedulable", "node.kubernetes.io/instance-type": "ml.p5.48xlarge"}
# What DefaultTolerationSeconds and ExtendedResourceToleration add to every GPU pod before validation.
ADMITTED_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
DEDICATED_NLP = {"key": "example.com/dedicated", "operator": "Equal", "value": "research-nlp", "effect": "NoSchedule"}
HOSTNAME_AFFINITY = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["hyperpod-i-0abc"]}]}]}}}
MATCH_FIELDS_AFFINITY = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["hyperpod-i-0abc"]}]}]}}}
PREFERRED_HOSTNAME = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {
    "matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["hyperpod-i-0abc"]}]}}]}}
TOPOLOGY_AFFINITY = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "topology.k8s.aws/network-node-layer-3", "operator": "In", "values": ["nn-1"]},
                          {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["ml.p5.48xlarge"]}]}]}}}
# A Job made before the guardrails (or before the inference team lost a capability): Kueue must still stop it.
LEGACY_INFERENCE = workload("Job", INF, pod_spec(container(**sc(capabilities={"add": ["IPC_LOCK"]}))),
                            metadata_labels=labels(INF, priority="inference-priority"), suspend=False)
GATED_POD = workload("Pod", NLP, pod_spec(container(**GPU), schedulingGates=[{"name": "kueue.x-k8s.io/topology"}]),
                     metadata_labels={})
UNGATED_POD = spec_of(GATED_POD, schedulingGates=[], nodeSelector={"kubernetes.io/hostname": "hyperpod-i-0abc"})

CASES += [
    # 1. ownership and management: how Kueue accounts the object
    Case("attack-1-child-job-with-controller-owner-reference", owned_by(CLEAN_JOB),
         {"owner-references": "metadata.ownerReferences: PyTorchJob/tiny may not be set"}),
    Case("owner-reference-to-a-job-not-a-controller", owned_by(CLEAN_JOB, kind="Job", controller=False),
         {"owner-references": "Job/tiny"}),
    Case("pytorchjob-as-a-child", owned_by(workload("PyTorchJob", NLP, pod_spec(container("pytorch", **GPU)),
                                                    pod_spec(container("pytorch", **GPU))), kind="Job"),
         {"owner-references": "metadata.ownerReferences"}),
    Case("owner-reference-added-by-update", owned_by(CLEAN_JOB), {"owner-references": "ownerReferences"},
         operation="UPDATE", old=CLEAN_JOB),
    Case("garbage-collector-orphans-a-launcher", {**LAUNCHER, "metadata": {**LAUNCHER["metadata"], "ownerReferences": []}},
         {}, operation="UPDATE", old=LAUNCHER, user=GC),
    Case("job-managed-by-multikueue", spec_of(CLEAN_JOB, managedBy="kueue.x-k8s.io/multikueue"),
         {"managed-by": "spec.managedBy: must be unset or kubernetes.io/job-controller"}),
    Case("job-managed-by-its-own-controller", spec_of(CLEAN_JOB, managedBy="kubernetes.io/job-controller"), {}),
    Case("pytorchjob-managed-by-multikueue", spec_of(workload("PyTorchJob", NLP, pod_spec(container("pytorch")),
                                                              pod_spec(container("pytorch"))),
                                                     runPolicy={"cleanPodPolicy": "Running", "managedBy": "kueue.x-k8s.io/multikueue"}),
         {"managed-by": "spec.runPolicy.managedBy: must be unset or kubeflow.org/training-operator"}),
    Case("prebuilt-workload-label", with_meta(CLEAN_JOB, "labels", {"kueue.x-k8s.io/prebuilt-workload-name": "w1"}),
         {"kueue-keys": "label kueue.x-k8s.io/prebuilt-workload-name changes how Kueue accounts the object"}),
    Case("pod-group-label-on-a-job", with_meta(CLEAN_JOB, "labels", {"kueue.x-k8s.io/pod-group-name": "g"}),
         {"kueue-keys": "kueue.x-k8s.io/pod-group-name"}),
    Case("multikueue-origin-label", with_meta(CLEAN_JOB, "labels", {"kueue.x-k8s.io/multikueue-origin": "c"}),
         {"kueue-keys": "multikueue-origin"}),
    Case("queue-annotation-of-another-team", with_meta(CLEAN_JOB, "annotations",
                                                       {"kueue.x-k8s.io/queue-name": "hyperpod-ns-inference-localqueue"}),
         {"kueue-keys": "annotation kueue.x-k8s.io/queue-name"}),
    Case("provisioning-request-annotation", with_meta(CLEAN_JOB, "annotations",
                                                      {"provreq.kueue.x-k8s.io/ValidUntilSeconds": "60"}),
         {"kueue-keys": "provreq.kueue.x-k8s.io/"}),
    Case("kueue-keys-a-team-may-set", with_meta(with_meta(CLEAN_JOB, "labels", {"kueue.x-k8s.io/max-exec-time-seconds": "3600"}),
                                                "annotations", {"kueue.x-k8s.io/job-min-parallelism": "1",
                                                                "kueue.x-k8s.io/queue-name": f"{NLP}-localqueue"}), {}),
    Case("prebuilt-label-kept-by-a-metadata-update", with_meta(with_meta(CLEAN_JOB, "labels", {"kueue.x-k8s.io/prebuilt-workload-name": "w1"}), "labels", {"team": "a"}),
         {}, operation="UPDATE", old=with_meta(CLEAN_JOB, "labels", {"kueue.x-k8s.io/prebuilt-workload-name": "w1"})),
    Case("mpi-operator-updates-its-launcher", spec_of(LAUNCHER, suspend=True), {}, operation="UPDATE", old=LAUNCHER,
         user=MPI_OPERATOR),
    # Detaching the MPI launcher from its MPIJob (metadata only) would leave it outside Kueue.
    Case("team-detaches-a-launcher-from-its-mpijob", {**LAUNCHER, "metadata": {**LAUNCHER["metadata"], "ownerReferences": []}},
         {"owner-references": "only the garbage collector removes owners"}, operation="UPDATE", old=LAUNCHER),
    Case("team-drops-one-of-two-owners", owned_by(CLEAN_JOB), {"owner-references": "PyTorchJob/tiny may not be set"},
         operation="UPDATE", old={**owned_by(CLEAN_JOB), "metadata": {**owned_by(CLEAN_JOB)["metadata"], "ownerReferences": [
             *owned_by(CLEAN_JOB)["metadata"]["ownerReferences"],
             {**owned_by(CLEAN_JOB)["metadata"]["ownerReferences"][0], "name": "other", "controller": False}]}}),
    # Only Kueue starts a suspended job (it admits it against the quota first).
    Case("team-suspends-its-job", spec_of(CLEAN_JOB, suspend=True), {}, operation="UPDATE", old=CLEAN_JOB),
    Case("team-resumes-a-suspended-job", spec_of(CLEAN_JOB, suspend=False), {"resume": "Job spec.suspend"},
         operation="UPDATE", old=spec_of(CLEAN_JOB, suspend=True)),
    Case("team-drops-suspend-from-a-suspended-job", CLEAN_JOB, {"resume": "may not be resumed by hand"},
         operation="UPDATE", old=spec_of(CLEAN_JOB, suspend=True)),
    Case("team-resumes-a-pytorchjob", spec_of(PYTORCH_JOB, runPolicy={"cleanPodPolicy": "Running", "suspend": False}),
         {"resume": "PyTorchJob spec.runPolicy.suspend"}, operation="UPDATE",
         old=spec_of(PYTORCH_JOB, runPolicy={"cleanPodPolicy": "Running", "suspend": True})),
    Case("kueue-resumes-what-it-admitted", spec_of(CLEAN_JOB, suspend=False), {}, operation="UPDATE",
         old=spec_of(CLEAN_JOB, suspend=True), user=KUEUE),
    # Deletes: an orphaning delete leaves the pods on their devices after Kueue frees the quota.
    Case("kubectl-delete-a-job", CLEAN_JOB, {}, operation="DELETE", options={"propagationPolicy": "Background"}),
    Case("foreground-delete-of-a-pytorchjob", PYTORCH_JOB, {}, operation="DELETE", options={"propagationPolicy": "Foreground"}),
    Case("orphaning-delete-of-a-job", CLEAN_JOB, {"delete-propagation": "propagationPolicy: a Job's delete must name Background or Foreground"},
         operation="DELETE", options={"propagationPolicy": "Orphan"}),
    Case("api-delete-of-a-job-naming-no-policy", CLEAN_JOB, {"delete-propagation": "propagationPolicy"},
         operation="DELETE", options={}),
    # The deprecated form of a cascading delete: no policy named, orphanDependents false.
    Case("api-delete-of-a-job-with-orphan-dependents-false", CLEAN_JOB, {}, operation="DELETE",
         options={"orphanDependents": False}),
    Case("api-delete-of-a-job-with-orphan-dependents-true", CLEAN_JOB, {"delete-propagation": "propagationPolicy"},
         operation="DELETE", options={"orphanDependents": True}),
    Case("orphan-dependents-delete-of-an-mpijob", workload("MPIJob", NLP, pod_spec(container("launcher")),
                                                           pod_spec(container("worker", **GPU))),
         {"delete-propagation": "propagationPolicy"}, operation="DELETE", options={"orphanDependents": True}),
    Case("garbage-collector-deletes-a-launcher", LAUNCHER, {}, operation="DELETE", options={}, user=GC),
    Case("delete-of-an-object-made-before-the-guardrails", LEGACY_PRIVILEGED, {}, operation="DELETE",
         options={"propagationPolicy": "Background"}),
    # The training operator's init container on every Worker of a PyTorchJob with a Master: its image has no
    # NVIDIA variable, so it is exempt by image; any other image is not, whatever the container's name.
    Case("training-operator-worker-pod-with-its-init-container", owned_by(workload("Pod", NLP, pod_spec(
        container("pytorch", **GPU), initContainers=[{"name": "init-pytorch", "image": "alpine:3.10",
                                                      "command": ["sh", "-c", "until nslookup w-master-0; do sleep 2; done"]}]),
        metadata_labels={})), {}, user="system:serviceaccount:kubeflow:training-operator"),
    Case("init-container-named-like-the-operators-of-another-image", owned_by(workload("Pod", NLP, pod_spec(
        container("pytorch", **GPU), initContainers=[{"name": "init-pytorch", "image": "repo/cuda:12"}]),
        metadata_labels={})), {"gpu-visibility": "initContainers[init-pytorch].env"}),
    # Only the operator's init container as the operator writes it (no env): CUDA_VERSION alone makes the NVIDIA
    # toolkit treat a container as a legacy CUDA image and give it every GPU.
    Case("operator-init-image-with-cuda-version", workload("Deployment", NLP, pod_spec(
        container(), initContainers=[{"name": "w", "image": "alpine:3.10", "env": [{"name": "CUDA_VERSION", "value": "12.4.1"}]}]),
        metadata_labels={}, replicas=1), {"gpu-visibility": "initContainers[w].env"}),
    Case("operator-init-image-with-env-from", job(initContainers=[{"name": "w", "image": "alpine:3.10",
                                                                   "envFrom": [{"configMapRef": {"name": "c"}, "prefix": "X_"}]}]),
         {"gpu-visibility": "initContainers[w].env"}),
    Case("operator-init-image-as-a-main-container", workload("Deployment", NLP, pod_spec(
        container(), {"name": "miner", "image": "alpine:3.10", "command": ["sh"]}), metadata_labels={}, replicas=1),
         {"gpu-visibility": "containers[miner].env"}),
    # Pod (anti-)affinity reaches other namespaces' pods: one small pod could hold another team out of a zone (F2).
    *[Case(f"pod-{kind.lower()}-{how}", workload("Deployment", NLP, pod_spec(container(), affinity={kind: terms}),
                                                 metadata_labels={}, replicas=1),
           {"pod-affinity-namespaces": "spec.template.spec.affinity"})
      for kind in ("podAntiAffinity", "podAffinity") for how, terms in (
          ("required-namespace-selector", {"requiredDuringSchedulingIgnoredDuringExecution": [
              {"topologyKey": "topology.kubernetes.io/zone", "namespaceSelector": {},
               "labelSelector": {"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}}]}),
          ("preferred-other-namespace", {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {
              "topologyKey": "kubernetes.io/hostname", "namespaces": [INF], "labelSelector": {"matchLabels": {"a": "b"}}}}]}))],
    Case("pod-anti-affinity-within-the-namespace", job(affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "namespaces": [NLP], "labelSelector": {"matchLabels": {"app": "w"}}},
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "w"}}}]}}), {}),
    # The kubelet runs probes and hooks from the node: a host would let it connect anywhere (F7).
    *[Case(f"{where}-{action}-host", job(containers=[container(**GPU, **body)]), {"probe-host": "containers[main].probes/lifecycle"})
      for where, action, body in (
          ("liveness", "tcp", {"livenessProbe": {"tcpSocket": {"port": 2379, "host": "10.64.12.34"}}}),
          ("readiness", "http", {"readinessProbe": {"httpGet": {"port": 80, "host": "169.254.169.254", "path": "/"}}}),
          ("startup", "http", {"startupProbe": {"httpGet": {"port": 80, "host": "etcd.hyperpod-ns-inference"}}}),
          ("post-start", "http", {"lifecycle": {"postStart": {"httpGet": {"port": 2379, "host": "10.0.0.1"}}}}),
          ("pre-stop", "tcp", {"lifecycle": {"preStop": {"tcpSocket": {"port": 22, "host": "10.0.0.1"}}}}))],
    Case("probes-of-the-pods-own-ip", job(containers=[container(**GPU, livenessProbe={"httpGet": {"port": 8080, "path": "/health"}},
                                                                readinessProbe={"tcpSocket": {"port": 29500}},
                                                                startupProbe={"grpc": {"port": 9000}},
                                                                lifecycle={"preStop": {"exec": {"command": ["sleep", "5"]}}})]), {}),
    # Keeping a job off a bad node is not choosing one (F6).
    Case("hostname-not-in-keeps-a-job-off-a-node", job(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "NotIn",
                                                     "values": ["hyperpod-i-0bad"]}]}]}}}), {}),
    # Deletes of custom resources default to deleting their pods; only an explicit orphaning is refused (F5).
    Case("client-delete-of-a-pytorchjob-naming-no-policy", PYTORCH_JOB, {}, operation="DELETE", options={}),
    Case("orphaning-delete-of-a-pytorchjob", PYTORCH_JOB, {"delete-propagation": "may not be Orphan"},
         operation="DELETE", options={"propagationPolicy": "Orphan"}),
    Case("option-less-delete-of-a-pytorchjob-with-the-orphan-finalizer", with_finalizers(PYTORCH_JOB, ORPHAN),
         {"delete-propagation": "may not be Orphan"}, operation="DELETE", options={}),
    Case("background-delete-of-a-pytorchjob-with-the-orphan-finalizer", with_finalizers(PYTORCH_JOB, ORPHAN), {},
         operation="DELETE", options={"propagationPolicy": "Background"}),
    Case("team-adds-the-orphan-finalizer", with_finalizers(PYTORCH_JOB, ORPHAN),
         {"orphan-finalizer": "metadata.finalizers: orphan"}, operation="UPDATE", old=PYTORCH_JOB),
    Case("job-created-with-the-orphan-finalizer", with_finalizers(CLEAN_JOB, ORPHAN), {"orphan-finalizer": "orphan"}),
    Case("team-keeps-its-own-finalizer", with_finalizers(CLEAN_JOB, "example.com/cleanup"), {}),
    # Red team round 2, F1 (issue 28): an orphaned ReplicaSet keeps its pods after its Deployment, the only thing the
    # namespace's quota counts, is gone; deleted with --cascade=orphan and created again, in a loop, without bound.
    Case("orphaning-delete-of-a-deployment", RENDEZVOUS, {"delete-propagation": "may not be Orphan"},
         operation="DELETE", options={"propagationPolicy": "Orphan"}),
    Case("orphan-dependents-delete-of-a-deployment", RENDEZVOUS, {"delete-propagation": "propagationPolicy"},
         operation="DELETE", options={"orphanDependents": True}),
    # apps/v1 deletes its dependents when no policy is named; kubectl sends Background.
    Case("client-delete-of-a-deployment-naming-no-policy", RENDEZVOUS, {}, operation="DELETE", options={}),
    Case("kubectl-delete-of-a-deployment", RENDEZVOUS, {}, operation="DELETE", options={"propagationPolicy": "Background"}),
    Case("deployment-created-with-the-orphan-finalizer", with_finalizers(RENDEZVOUS, ORPHAN),
         {"orphan-finalizer": "metadata.finalizers: orphan"}),
    Case("team-adds-the-orphan-finalizer-to-a-deployment", with_finalizers(RENDEZVOUS, ORPHAN),
         {"orphan-finalizer": "metadata.finalizers: orphan"}, operation="UPDATE", old=RENDEZVOUS),
    Case("option-less-delete-of-a-deployment-with-the-orphan-finalizer", with_finalizers(RENDEZVOUS, ORPHAN),
         {"delete-propagation": "may not be Orphan"}, operation="DELETE", options={}),
    Case("orphaning-delete-of-a-statefulset", workload("StatefulSet", NLP, pod_spec(container()), metadata_labels={},
                                                       serviceName="w"),
         {"delete-propagation": "may not be Orphan"}, operation="DELETE", options={"propagationPolicy": "Orphan"}),
    Case("replicaset-created-with-the-orphan-finalizer", with_finalizers(
        workload("ReplicaSet", NLP, pod_spec(container()), metadata_labels={}), ORPHAN), {"orphan-finalizer": "orphan"}),
    # The Deployment controller deletes old ReplicaSets naming no policy; Kubernetes' controllers are not checked.
    Case("deployment-controller-deletes-an-old-replicaset", workload("ReplicaSet", NLP, pod_spec(container()), metadata_labels={}),
         {}, operation="DELETE", options={}, user="system:serviceaccount:kube-system:deployment-controller"),
    # Only kube-system's service accounts are Kubernetes' controllers: a team namespace's own is checked.
    Case("team-service-account-orphans-a-deployment", RENDEZVOUS, {"delete-propagation": "may not be Orphan"},
         operation="DELETE", options={"propagationPolicy": "Orphan"},
         user="system:serviceaccount:hyperpod-ns-research-nlp:default"),
    # Red team round 3, F1 (issue 28): the controllers copy a pod template's finalizers onto every pod, which then
    # stays in the API for good once deleted (the team has no patch on pods): each rollout adds more, without bound.
    Case("deployment-with-a-template-finalizer", with_template_finalizers(RENDEZVOUS, "example.com/never"),
         {"template-finalizers": "spec.template.metadata.finalizers: a pod template may not list finalizers"}),
    Case("job-with-a-template-finalizer", with_template_finalizers(CLEAN_JOB, "example.com/never"),
         {"template-finalizers": "spec.template.metadata.finalizers"}),
    Case("statefulset-with-a-template-finalizer", with_template_finalizers(
        workload("StatefulSet", NLP, pod_spec(container()), metadata_labels={}, serviceName="w"), "example.com/never"),
         {"template-finalizers": "spec.template.metadata.finalizers"}),
    Case("pytorchjob-with-a-worker-template-finalizer",
         with_template_finalizers(PYTORCH_JOB, "example.com/never", replica_type="Worker"),
         {"template-finalizers": "spec.pytorchReplicaSpecs.Worker.template.metadata.finalizers"}),
    Case("mpijob-with-a-launcher-template-finalizer", with_template_finalizers(
        workload("MPIJob", NLP, pod_spec(container("launcher")), pod_spec(container("worker", **GPU))),
        "example.com/never", replica_type="Launcher"),
         {"template-finalizers": "spec.mpiReplicaSpecs.Launcher.template.metadata.finalizers"}),
    Case("rollout-adding-a-template-finalizer", with_template_finalizers(RENDEZVOUS, "example.com/never"),
         {"template-finalizers": "spec.template.metadata.finalizers"}, operation="UPDATE", old=RENDEZVOUS),
    # A template change of an object that already held one (made before the rule) is refused: it is a rollout.
    Case("rollout-of-a-deployment-keeping-its-template-finalizer",
         spec_of(with_template_finalizers(RENDEZVOUS, "example.com/never"), minReadySeconds=5),
         {"template-finalizers": "spec.template.metadata.finalizers"}, operation="UPDATE",
         old=with_template_finalizers(RENDEZVOUS, "example.com/never")),
    # Taking it off, or a metadata-only update, stays possible.
    Case("rollout-removing-a-template-finalizer", RENDEZVOUS, {}, operation="UPDATE",
         old=with_template_finalizers(RENDEZVOUS, "example.com/never")),
    Case("relabelling-a-deployment-with-a-template-finalizer",
         relabelled(with_template_finalizers(RENDEZVOUS, "example.com/never")), {}, operation="UPDATE",
         old=with_template_finalizers(RENDEZVOUS, "example.com/never")),
    Case("deployment-with-an-empty-template-finalizer-list", with_template_finalizers(RENDEZVOUS), {}),
    Case("team-service-account-with-a-template-finalizer", with_template_finalizers(RENDEZVOUS, "example.com/never"),
         {"template-finalizers": "spec.template.metadata.finalizers"},
         user="system:serviceaccount:hyperpod-ns-research-nlp:default"),
    # Kueue is not checked: its start of a suspended Job holding one (made before the rule) goes through.
    Case("kueue-starts-a-job-with-a-template-finalizer",
         spec_of(with_template_finalizers(CLEAN_JOB, "example.com/never"), suspend=False), {}, operation="UPDATE",
         old=spec_of(with_template_finalizers(CLEAN_JOB, "example.com/never"), suspend=True), user=KUEUE),
    # With cleanPodPolicy None (the operators' default) Workers outlive a succeeded job and its freed quota (F11).
    Case("pytorchjob-keeping-its-workers", spec_of(PYTORCH_JOB, runPolicy={"cleanPodPolicy": "None"}),
         {"clean-pod-policy": "spec.runPolicy.cleanPodPolicy: must be Running or All"}),
    Case("pytorchjob-with-the-default-clean-pod-policy", spec_of(PYTORCH_JOB, runPolicy={}), {"clean-pod-policy": "cleanPodPolicy"}),
    Case("mpijob-without-run-policy", {**(m := workload("MPIJob", NLP, pod_spec(container("launcher")), pod_spec(container("worker", **GPU)))),
                                       "spec": {k: v for k, v in m["spec"].items() if k != "runPolicy"}},
         {"clean-pod-policy": "cleanPodPolicy"}),
    Case("pytorchjob-cleaning-all-pods", spec_of(PYTORCH_JOB, runPolicy={"cleanPodPolicy": "All"}), {}),
    Case("legacy-pytorchjob-relabelled", with_meta(spec_of(PYTORCH_JOB, runPolicy={}), "labels", {"a": "b"}), {},
         operation="UPDATE", old=spec_of(PYTORCH_JOB, runPolicy={})),
    # Pods hold their devices until they end: a long grace period outlives an eviction.
    Case("grace-period-of-ten-years", workload("Job", NLP, pod_spec(container(**GPU), terminationGracePeriodSeconds=315360000)),
         {"grace-period": "spec.template.spec.terminationGracePeriodSeconds: at most 300"}),
    Case("grace-period-of-five-minutes", workload("Job", NLP, pod_spec(container(**GPU), terminationGracePeriodSeconds=300)), {}),
    # Other ways the NVIDIA toolkit selects devices: CDI annotations, the device-list mount folder, swarm's variable.
    Case("cdi-annotation-on-a-template", with_template_annotations(CLEAN_JOB, {"cdi.k8s.io/gpu": "nvidia.com/gpu=all"}),
         {"device-annotations": "spec.template.metadata.annotations.*cdi.k8s.io/*: CDI annotations"}),
    Case("vendor-cdi-annotation-on-a-pod", with_meta(workload("Pod", NLP, pod_spec(container()), metadata_labels={}), "annotations",
                                                     {"nvidia.cdi.k8s.io/gpu": "nvidia.com/gpu=all"}),
         {"device-annotations": "metadata.annotations.*cdi.k8s.io/*"}),
    Case("mount-naming-the-device-list-folder", workload("Job", NLP, pod_spec(container(
        volumeMounts=[{"name": "x", "mountPath": "/var/run/../run/nvidia-container-devices/all"}]),
        volumes=[{"name": "x", "emptyDir": {}}])), {"device-annotations": "volumeMounts"}),
    Case("swarm-gpu-variable", workload("Job", NLP, pod_spec(container(env=[{"name": "DOCKER_RESOURCE_GPU", "value": "0,1"}]))),
         {"device-env": "env: DOCKER_RESOURCE_GPU"}),
    # NetworkPolicies: a team may add ingress allowances; the kit's policy and egress rules are not its to write
    # (updates and deletes of the kit's policy: tests/realk8s/test_network_isolation.py).
    Case("team-ingress-network-policy", network_policy(), {}),
    Case("team-egress-reopens-metadata", network_policy(policyTypes=["Ingress", "Egress"], egress=[
        {"to": [{"ipBlock": {"cidr": "169.254.169.254/32"}}]}]), {"network-policy-egress": "spec.egress"}),
    Case("team-takes-the-kit-s-network-policy-name", network_policy("hyperpod-kit-team-isolation-2"),
         {"kit-network-policy": "metadata.name: hyperpod-kit-"}),
    # Services: ClusterIP only, no externalIPs (a NodePort, load balancer or external IP reaches past the namespace).
    Case("headless-service-of-a-job", service(clusterIP="None"), {}),
    Case("cluster-ip-service", service(type="ClusterIP"), {}),
    Case("node-port-service", service(type="NodePort"), {"service-type": "spec.type: NodePort"}),
    Case("load-balancer-service", service(type="LoadBalancer"), {"service-type": "spec.type: LoadBalancer"}),
    Case("external-name-service", service(type="ExternalName", externalName="db.example.com", ports=None),
         {"service-type": "spec.type: ExternalName"}),
    Case("external-ips-intercept-traffic", service(externalIPs=["10.0.0.10"]), {"service-type": "spec.externalIPs"}),
    Case("node-port-made-by-an-update", service(type="NodePort"), {"service-type": "NodePort"}, operation="UPDATE",
         old=service()),
    Case("finalizer-removed-from-an-old-load-balancer", with_meta(service(type="LoadBalancer"), "labels", {"a": "b"}), {},
         operation="UPDATE", old=service(type="LoadBalancer"), user="system:serviceaccount:kube-system:service-controller"),
    # Pods are not queued kinds: the operators' pods carry owner references and are checked as pods only.
    Case("training-operator-creates-a-worker-pod", owned_by(workload("Pod", NLP, pod_spec(
        container("pytorch", env=[{"name": "MASTER_ADDR", "value": "w-master-0"}], **GPU),
        tolerations=ADMITTED_TOLERATIONS), metadata_labels={"training.kubeflow.org/replica-type": "worker"})), {},
         user="system:serviceaccount:kubeflow:training-operator"),
    Case("mpi-launcher-pod-with-its-hostfile-and-ssh-key", owned_by(workload("Pod", NLP, pod_spec(
        container("launcher", volumeMounts=[{"name": "ssh-auth", "mountPath": "/root/.ssh"},
                                            {"name": "mpi-job-config", "mountPath": "/etc/mpi"}]),
        volumes=[{"name": "ssh-auth", "secret": {"secretName": "w-ssh", "defaultMode": 384}},
                 {"name": "mpi-job-config", "configMap": {"name": "w-config"}}]), metadata_labels={}), kind="Job"), {},
         user="system:serviceaccount:kube-system:job-controller"),
    # 3. volumes: an allow-list
    *[Case(f"volume-{kind}", volume("v", **{kind: source}), {"volumes": "spec.template.spec.volumes[v]"},
           dropped_by_api_server=IMAGE_VOLUMES_OFF if kind == "image" else "")
      for kind, source in REFUSED_SOURCES.items()],
    Case("ephemeral-claim-binding-another-teams-volume", volume("v", **claim(storageClassName="", volumeName="pv-x")),
         {"volumes": "volumes[v]: only configMap, secret, emptyDir"}),
    Case("ephemeral-claim-cloned-from-a-snapshot", volume("v", **claim(dataSource={"apiGroup": "snapshot.storage.k8s.io",
                                                                                 "kind": "VolumeSnapshot", "name": "s"})),
         {"volumes": "volumes[v]"}),
    Case("ephemeral-claim-from-a-storage-class", volume("v", **claim(storageClassName="gp3")), {}),
    # Without a StorageClass the claim binds any Available PersistentVolume that fits, a selector picks one (F3).
    Case("ephemeral-claim-of-no-class-and-a-selector", volume("v", **claim(storageClassName="", selector={
        "matchLabels": {"team": "production-training"}})), {"volumes": "must name a storageClassName"}),
    Case("ephemeral-claim-of-no-class", volume("v", **claim(storageClassName="")), {"volumes": "volumes[v]"}),
    Case("ephemeral-claim-without-a-class-name", volume("v", **claim()), {"volumes": "volumes[v]"}),
    Case("ephemeral-claim-of-a-class-with-a-selector", volume("v", **claim(storageClassName="gp3", selector={
        "matchLabels": {"a": "b"}})), {"volumes": "volumes[v]"}),
    Case("allowed-volume-types", job(volumes=[
        {"name": "c", "configMap": {"name": "cfg"}}, {"name": "s", "secret": {"secretName": "s"}},
        {"name": "d", "downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}},
        {"name": "p", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}]), {}),
    # 4. node selection
    Case("attack-4-tolerate-everything-on-a-chosen-node", job(nodeSelector={"kubernetes.io/hostname": "hyperpod-i-0abc"},
                                                              tolerations=[{"operator": "Exists"}]),
         {"tolerations": "spec.template.spec.tolerations", "node-selection": "spec.template.spec.nodeSelector/affinity",
          # prod's system group: a toleration of every taint tolerates its CriticalAddonsOnly taint too
          "admin-taints": "CriticalAddonsOnly=true:NoSchedule (instance group system)"}),
    # A team tolerating the system group's taint by name, as EKS's own add-ons do.
    Case("attack-4-tolerate-the-system-nodes", job(tolerations=[{"key": "CriticalAddonsOnly", "operator": "Exists"}]),
         {"admin-taints": "spec.template.spec.tolerations: tolerates CriticalAddonsOnly=true:NoSchedule"}),
    Case("node-chosen-by-match-fields", job(affinity=MATCH_FIELDS_AFFINITY), {"node-selection": "kubernetes.io/hostname or matchFields"}),
    Case("node-chosen-by-hostname-affinity", job(affinity=HOSTNAME_AFFINITY), {"node-selection": "nodeSelector/affinity"}),
    Case("node-preferred-by-hostname", workload("PyTorchJob", NLP, pod_spec(container("pytorch")),
                                                pod_spec(container("pytorch"), affinity=PREFERRED_HOSTNAME)),
         {"node-selection": "spec.pytorchReplicaSpecs.Worker.template.spec"}),
    Case("toleration-of-unhealthy-hyperpod-nodes", job(tolerations=[{"key": "sagemaker.amazonaws.com/node-health-status",
                                                                     "operator": "Equal", "value": "Unschedulable",
                                                                     "effect": "NoSchedule"}]),
         {"tolerations": "tolerations"}),
    Case("toleration-of-cordoned-nodes", job(tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]),
         {"tolerations": "tolerations"}),
    Case("not-ready-toleration-for-scheduling", job(tolerations=[{"key": "node.kubernetes.io/not-ready",
                                                                  "operator": "Exists", "effect": "NoSchedule"}]),
         {"tolerations": "tolerations"}),
    Case("tolerate-every-effect-of-a-key-less-toleration-in-an-mpi-worker",
         workload("MPIJob", NLP, pod_spec(container("launcher")), pod_spec(container("worker"), tolerations=[
             {"operator": "Exists", "effect": "NoExecute"}])), {"tolerations": "spec.mpiReplicaSpecs.Worker"}),
    Case("what-legitimate-jobs-select", job(nodeSelector=HEALTHY, affinity=TOPOLOGY_AFFINITY,
                                            topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                                                        "whenUnsatisfiable": "DoNotSchedule"}]), {}),
    Case("pod-as-admission-plugins-leave-it", workload("Pod", NLP, pod_spec(container(**GPU), nodeSelector=HEALTHY,
                                                                          tolerations=ADMITTED_TOLERATIONS),
                                                       metadata_labels={}), {}),
    # 4a. Kueue and the operators keep working on what pre-dates the guardrails or a narrowed config
    Case("attack-6-kueue-suspends-a-legacy-job", spec_of(LEGACY_INFERENCE, suspend=True), {}, operation="UPDATE",
         old=LEGACY_INFERENCE, user=KUEUE),
    Case("kueue-starts-a-job-with-its-flavor-selector", job(nodeSelector={"node.kubernetes.io/instance-type": "ml.p5.48xlarge"}),
         {}, operation="UPDATE", old=spec_of(CLEAN_JOB, suspend=True), user=KUEUE),
    Case("kueue-topology-ungater-picks-the-node", UNGATED_POD, {}, operation="UPDATE", old=GATED_POD, user=KUEUE),
    Case("member-changes-the-spec-of-a-legacy-job", spec_of(LEGACY_INFERENCE, suspend=True),
         {"capabilities": "IPC_LOCK is not allowed"}, operation="UPDATE", old=LEGACY_INFERENCE),
    # 4b. objects made without the queue label: a member may not change their spec
    Case("attack-5-member-scales-an-operator-launcher", spec_of(LAUNCHER, parallelism=64, suspend=False),
         {"queue": "missing", "unqueued-object": "spec: this object was made without the queue label",
          "owner-references": "MPIJob/tiny", "priority-class": "missing"}, operation="UPDATE", old=LAUNCHER),
    Case("member-labels-a-launcher-and-scales-it", with_label(spec_of(LAUNCHER, parallelism=64), queue=f"{NLP}-localqueue",
                                                              priority="training-priority"),
         {"unqueued-object": "its spec may not change", "owner-references": "ownerReferences"},
         operation="UPDATE", old=LAUNCHER),
    Case("member-labels-a-launcher-only", with_meta(LAUNCHER, "labels", {"team": "a"}), {}, operation="UPDATE", old=LAUNCHER),
    # 6. fields whose effect depends on the cluster, and checks that must agree between templates and pods
    Case("apparmor-annotation-on-a-template", with_meta(CLEAN_JOB, "labels") | {"spec": {"template": {
        "metadata": {"annotations": {"container.apparmor.security.beta.kubernetes.io/main": "unconfined"}},
        "spec": pod_spec(container())}}},
         {"apparmor": "spec.template.metadata.annotations.container.apparmor.security.beta.kubernetes.io/<container>"}),
    Case("apparmor-annotation-on-a-pod", with_meta(workload("Pod", NLP, pod_spec(container()), metadata_labels={}),
                                                   "annotations", {"container.apparmor.security.beta.kubernetes.io/main": "unconfined"}),
         {"apparmor": "metadata.annotations"}),
    Case("apparmor-annotation-runtime-default", with_meta(workload("Pod", NLP, pod_spec(container()), metadata_labels={}),
                                                          "annotations", {"container.apparmor.security.beta.kubernetes.io/main": "runtime/default"}),
         {}),
    Case("selinux-empty-user-and-role", job(securityContext={"seLinuxOptions": {"user": "", "role": "", "type": "container_t"}}), {}),
    Case("empty-replica-specs", spec_of(workload("PyTorchJob", NLP, pod_spec(container("pytorch"))), pytorchReplicaSpecs={}),
         {"replica-specs": "spec.pytorchReplicaSpecs: needs at least one replica type"}),
    Case("runtime-class", job(runtimeClassName="nvidia"), {"runtime-class": "spec.template.spec.runtimeClassName"}),
    Case("second-scheduler", job(schedulerName="my-scheduler"), {"scheduler-name": "spec.template.spec.schedulerName"}),
    Case("default-scheduler-and-service-account", job(schedulerName="default-scheduler", serviceAccountName="default"), {}),
    Case("another-service-account", job(serviceAccountName="s3-writer"), {"service-account": "serviceAccountName"}),
    Case("dynamic-resource-claim", job(resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "all-gpus"}]),
         {"resource-claims": "spec.template.spec.resourceClaims"}, dropped_by_api_server=DRA_OFF),
    Case("neuron-requests-only-in-a-replicaset", workload("ReplicaSet", NLP, pod_spec(container(resources={
        "requests": {"aws.amazon.com/neuroncore": 2}})), metadata_labels={}), {"unqueued-devices": "resources"}),
    Case("container-resource-claim", job(containers=[container(resources={"claims": [{"name": "gpu"}]})]),
         {"resource-claims": "containers[main].resources.claims"}, dropped_by_api_server=DRA_OFF),
    # 7. administrators' taints (support/case_configs.py TAINTED: h100-a example.com/dedicated=research-nlp for
    # research-nlp, system node-role=system for nobody, h100-a nvidia.com/gpu for every GPU pod)
    Case("toleration-of-the-team-s-own-dedicated-group", job(tolerations=[*ADMITTED_TOLERATIONS, DEDICATED_NLP]), {},
         env=TAINTED),
    Case("toleration-of-another-team-s-dedicated-group", workload("Job", INF, pod_spec(container(**GPU), tolerations=[
        DEDICATED_NLP]), metadata_labels=labels(INF, priority="inference-priority")),
         {"admin-taints": "spec.template.spec.tolerations: tolerates example.com/dedicated=research-nlp:NoSchedule "
                          "(instance group h100-a)"}, env=TAINTED),
    Case("toleration-of-the-system-group", job(tolerations=[{"key": "node-role", "operator": "Equal", "value": "system",
                                                             "effect": "NoSchedule"}]),
         {"admin-taints": "node-role=system:NoSchedule (instance group system)"}, env=TAINTED),
    Case("toleration-of-every-value-of-the-system-key", job(tolerations=[{"key": "node-role", "operator": "Exists"}]),
         {"admin-taints": "node-role=system:NoSchedule"}, env=TAINTED),
    Case("toleration-of-a-dedicated-value-no-group-has", job(tolerations=[
        {"key": "example.com/dedicated", "operator": "Equal", "value": "research-vision", "effect": "NoSchedule"}]), {},
         env=TAINTED),
    Case("toleration-of-the-system-key-with-another-effect", job(tolerations=[
        {"key": "node-role", "operator": "Exists", "effect": "NoExecute"}]), {}, env=TAINTED),
    Case("toleration-of-every-taint-on-a-tainted-cluster", workload("PyTorchJob", INF, pod_spec(container("pytorch")),
                                                                   pod_spec(container("pytorch"), tolerations=[{"operator": "Exists"}]),
                                                                   metadata_labels=labels(INF, priority="inference-priority")),
         {"tolerations": "spec.pytorchReplicaSpecs.Worker.template.spec.tolerations",
          "admin-taints": "spec.pytorchReplicaSpecs.Worker.template.spec.tolerations: tolerates"}, env=TAINTED),
    Case("gpu-pod-as-admission-plugins-leave-it-on-a-tainted-cluster", workload("Pod", NLP, pod_spec(
        container(**GPU), nodeSelector=HEALTHY, tolerations=ADMITTED_TOLERATIONS), metadata_labels={}), {}, env=TAINTED),
    Case("kueue-starts-a-job-on-a-tainted-cluster", job(tolerations=[DEDICATED_NLP]), {}, operation="UPDATE",
         old=spec_of(workload("Job", INF, pod_spec(container(**GPU)), metadata_labels=labels(INF, priority="inference-priority")),
                     suspend=True) | {"metadata": {"name": "w", "namespace": NLP, "labels": labels(NLP)}},
         user=KUEUE, env=TAINTED),
]


# gpu-visibility binds only where the nodes do not isolate GPUs: prod isolates them (hyperpod.lifecycle.
# gpu_device_isolation), so its cases run on prod as deployed before that (UNISOLATED), and on prod itself the same
# objects are admitted unless another rule refuses them - the container runtime holds that line there.
_HIDDEN_BY_THE_MANIFEST = [c for c in CASES if "gpu-visibility" in c.refused and c.env == "prod"]
CASES = [*(replace(c, env=UNISOLATED) if c in _HIDDEN_BY_THE_MANIFEST else c for c in CASES),
         *(replace(c, id=f"{c.id}-on-isolating-nodes", refused={k: v for k, v in c.refused.items() if k != "gpu-visibility"})
           for c in _HIDDEN_BY_THE_MANIFEST)]
