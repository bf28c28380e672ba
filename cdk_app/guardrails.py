"""Admission guardrails of the team namespaces: Kubernetes ValidatingAdmissionPolicies (CEL, built into
the API server since 1.30, no controller to run) and their bindings, built from the config.

Two policies, each bound to the namespaces of every team and of the shared pool (by the name label the
API server itself sets on every namespace), so a team added to the config is covered by the same synth:

- hyperpod-kit-pod-security: the pods and pod templates of every kind in WORKLOAD_KINDS - no privileged
  containers, privilege escalation, host namespaces, volume types outside an allow-list, capabilities beyond
  the allowed set, spec.nodeName or a chosen node, tolerations of unhealthy or cordoned nodes,
  device-selecting environment variables, a container without GPUs that leaves its image's GPUs visible, unallowed priorityClassName, another runtime, scheduler or
  service account, dynamic resource claims; kinds Kueue does not queue (Deployment, StatefulSet ...) may
  not ask for accelerators or EFA.
- hyperpod-kit-workload-queue: workloads Kueue admits (Job, PyTorchJob, MPIJob) carry the namespace's own
  queue label and a priority class the team is allowed, and nothing that changes how Kueue accounts them
  (owner references, another managedBy, Kueue's other labels and annotations).

Kueue and the operators are not checked when they update an object (see pod_security_policy).

What differs per team (allowed capabilities and priority classes) is a map literal keyed by namespace in
the policy itself: no parameter object a team could edit, one policy whatever the number of teams.

The expressions keep to CEL that both Kubernetes and cel-python evaluate (tests/test_guardrails_cel.py runs
them): no optional syntax, no string or list extensions, no two-variable comprehensions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from cdk_app.config.model import ExtraCapability, KitConfig
from cdk_app.team_rbac import team_namespace

API_VERSION = "admissionregistration.k8s.io/v1"
NAME_PREFIX = "hyperpod-kit-"
POD_SECURITY = f"{NAME_PREFIX}pod-security"
WORKLOAD_QUEUE = f"{NAME_PREFIX}workload-queue"
SERVICES = f"{NAME_PREFIX}services"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
# Kueue's keys on a queued object that only shape how its own quota is used (max run time, partial
# admission); every other Kueue label or annotation changes how Kueue accounts the object (v0.19: e.g.
# prebuilt-workload-name hands it an existing Workload, multikueue-origin, pod-group-*), so a team may not set it.
KUEUE_KEY = "kueue.x-k8s.io/"
TEAM_KUEUE_LABELS = (QUEUE_LABEL, PRIORITY_LABEL, "kueue.x-k8s.io/max-exec-time-seconds")
TEAM_KUEUE_ANNOTATIONS = ("kueue.x-k8s.io/job-min-parallelism", "kueue.x-k8s.io/job-completions-equal-parallelism")
# Kueue suspends, starts and (topology-aware) ungates what it admits; its service account in kueue-system.
KUEUE_CONTROLLER = "system:serviceaccount:kueue-system:kueue-controller-manager"
# spec field that hands a queued kind to another controller (e.g. Kueue's MultiKueue) and the value of
# the controller that normally runs it. MPIJob's is in mpi-operator 0.6+ (the pinned chart's 0.5 CRD
# prunes it): checked so that a chart update does not open it.
MANAGED_BY = {"batch/Job": ("managedBy", "kubernetes.io/job-controller"),
              "kubeflow.org/PyTorchJob": ("runPolicy.managedBy", "kubeflow.org/training-operator"),
              "kubeflow.org/MPIJob": ("runPolicy.managedBy", "kubeflow.org/mpi-operator")}
# When a PyTorchJob's Master or an MPIJob's launcher succeeds the job is done and Kueue frees its whole quota;
# with the operators' default cleanPodPolicy None its other pods (Workers) keep running on their GPUs. A team's
# job must name a policy that deletes them (job writes Running).
CLEAN_POD_POLICIES = ("Running", "All")
CLEAN_POD_KINDS = ("kubeflow.org/PyTorchJob", "kubeflow.org/MPIJob")
# Set by the API server on every namespace and not editable: binding by it cannot be dodged by relabelling.
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
# Namespace of the HyperPod chart's release (HyperPodHelmReleaseProps' default, which the cluster stack keeps).
HELM_RELEASE_NAMESPACE = "kube-system"

# Pod Security Standards "baseline": the capabilities any container may add.
BASELINE_CAPABILITIES = ("AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                         "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT")
# What a team may be given on top through teams[].allowed_capabilities (the config model says why).
EXTRA_CAPABILITIES = get_args(ExtraCapability)
# Variables that make the NVIDIA container toolkit or the Neuron runtime hook hand devices to a container:
# set by hand they give devices no resource request, and so no quota, counts. The device plugins set them
# themselves for what a pod asks. CUDA_VISIBLE_DEVICES and NVIDIA_DRIVER_CAPABILITIES stay allowed: they
# only narrow or describe the devices the container already has. Each maps to the values that give no device:
# "" and "void" select none (the MPI operator sets NVIDIA_VISIBLE_DEVICES empty on launchers); "none" is not
# one of them, it is a device list of one empty name to the toolkit, which then applies the feature variables.
GPU_ENV_VAR = "NVIDIA_VISIBLE_DEVICES"
# What a container that asks for no GPU sets (the rule gpu-visibility); `job` writes it.
HIDE_GPUS_ENV = {"name": GPU_ENV_VAR, "value": "void"}
# Once a container has any GPU, the toolkit adds every host device node of each feature its env (the image's
# included) sets to "enabled" - all EFAs (/dev/infiniband, MOFED), NVSwitch, GDRCopy, GDS - and the IMEX
# channels NVIDIA_IMEX_CHANNELS lists (nvidia-container-toolkit internal/modifier/gated.go and cdi.go); no
# device plugin counts them. A container with GPUs switches each off itself (gpu-features); `job` writes these.
GPU_FEATURES_OFF_ENV = ({"name": "NVIDIA_MOFED", "value": "disabled"}, {"name": "NVIDIA_NVSWITCH", "value": "disabled"},
                        {"name": "NVIDIA_GDRCOPY", "value": "disabled"}, {"name": "NVIDIA_GDS", "value": "disabled"},
                        {"name": "NVIDIA_IMEX_CHANNELS", "value": "void"})
DEVICE_ENV_OFF: dict[str, tuple[str, ...]] = {
    **{name: ("", "void") for name in (GPU_ENV_VAR, "NVIDIA_MIG_CONFIG_DEVICES", "NVIDIA_MIG_MONITOR_DEVICES",
                                       "AWS_NEURON_VISIBLE_DEVICES", "NEURON_RT_VISIBLE_CORES")},
    **{v["name"]: ("", v["value"]) for v in GPU_FEATURES_OFF_ENV},
    # Read instead of NVIDIA_VISIBLE_DEVICES when a node's toolkit sets swarm-resource (config.toml).
    "DOCKER_RESOURCE_GPU": ("",)}
# The toolkit also takes devices from CDI annotations (when containerd passes pod annotations on) and, in
# its volume-mounts mode before v1.15, from any mount under /var/run/nvidia-container-devices: refused on
# pods and templates (any mount path naming that folder, so no spelling of the path gets around it).
# Any key holding it: runtimes also read vendor prefixes (the NVIDIA device plugin's nvidia.cdi.k8s.io/).
CDI_ANNOTATION_PREFIX = "cdi.k8s.io/"
DEVICE_LIST_FOLDER = "nvidia-container-devices"
# The chart's training operator (kubeflow/training-operator v1-855e096, tests/test_guardrails.py reads the pin)
# adds an init container of this image to every Worker of a PyTorchJob with a Master (it waits for the
# Master's DNS name), with no env at all. gpu-visibility exempts exactly that: an init container of this image
# with no env and no envFrom - never by name (a team names its containers as it likes), and never with env:
# CUDA_VERSION alone makes the toolkit treat a container as a "legacy" CUDA image and give it every GPU of the
# node (attack of 2026-11-22). The image itself sets no NVIDIA or CUDA variable.
OPERATOR_INIT_IMAGES = ("alpine:3.10",)
# Pods keep their devices until they end, Kueue frees the quota when their job stops: a long grace period
# with SIGTERM ignored would hold GPUs past an eviction or delete, outside the quota.
MAX_GRACE_SECONDS = 300
DEVICE_ENV_VARS = tuple(DEVICE_ENV_OFF)
# Extended resources that only a queued workload may ask for (Kueue counts them against the quota).
DEVICE_RESOURCE_PREFIXES = ("nvidia.com/", "aws.amazon.com/neuron", "vpc.amazonaws.com/efa")
# The rest of Pod Security "baseline": the sysctls it calls safe and the SELinux types it allows.
BASELINE_SYSCTLS = ("kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
                    "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
                    "net.ipv4.tcp_keepalive_probes")
BASELINE_SELINUX_TYPES = ("container_t", "container_init_t", "container_kvm_t", "container_engine_t")
CONTAINER_FIELDS = ("containers", "initContainers", "ephemeralContainers")
# Volume types a pod may use (Pod Security "restricted"'s list). Every other type of the Volume schema
# reaches the node or storage outside the namespace: hostPath, awsElasticBlockStore (any EBS volume id,
# attached by the CSI driver's role), nfs/iscsi/rbd/cephfs/glusterfs/fc (mounted by the kubelet as root),
# flexVolume (a node binary), inline csi (whatever a driver's Ephemeral mode does), image, gitRepo ...
# REFUSED_VOLUME_TYPES is the rest of the schema (tests/test_guardrails.py compares both with it): has()
# on each named field is the only test Kubernetes' typed CEL allows on a Volume object.
ALLOWED_VOLUME_TYPES = ("configMap", "secret", "emptyDir", "projected", "downwardAPI", "persistentVolumeClaim",
                        "ephemeral")
REFUSED_VOLUME_TYPES = ("awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "csi", "fc",
                        "flexVolume", "flocker", "gcePersistentDisk", "gitRepo", "glusterfs", "hostPath", "image",
                        "iscsi", "nfs", "photonPersistentDisk", "portworxVolume", "quobyte", "rbd", "scaleIO",
                        "storageos", "vsphereVolume")
# A generic ephemeral volume's claim is provisioned from its StorageClass; these fields would instead bind
# an existing PersistentVolume (another team's data) or clone a volume or snapshot. Without a StorageClass
# name (or with "") the PV controller binds the claim to any Available PersistentVolume that fits, and a
# selector picks one by its labels: a claim must name a StorageClass and no selector.
EPHEMERAL_CLAIM_SOURCES = ("volumeName", "dataSource", "dataSourceRef", "selector")
# Taints that keep work off a node: HyperPod's (node-health-status=Unschedulable while a node fails its
# checks) and Kubernetes' node.kubernetes.io/* (cordoned, out of service, under pressure ...).
GUARDED_TAINT_PREFIXES = ("sagemaker.amazonaws.com/", "node.kubernetes.io/")
# Except the two NoExecute tolerations the DefaultTolerationSeconds admission plugin adds to every pod.
DEFAULT_TOLERATIONS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
HOSTNAME_LABEL = "kubernetes.io/hostname"
DEFAULT_SCHEDULER = "default-scheduler"
# The AppArmor annotation Kubernetes copies into securityContext.appArmorProfile on pod creation.
APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"
HOST_NAMESPACES = ("hostPID", "hostIPC", "hostNetwork")

Role = Literal["pod", "queued", "unqueued"]


@dataclass(frozen=True)
class WorkloadKind:
    """A kind whose pod specs the guardrails check.

    role: "pod" (a Pod itself), "queued" (Kueue admits it: needs the team's queue label) or "unqueued"
    (not queued, so it may not ask for accelerators). replicas: for kinds with a map of replica specs
    (spec.<replicas>.<type>.template), the field and the replica types its operator accepts; other
    non-Pod kinds have one template at spec.template.
    """

    group: str
    version: str
    resource: str
    kind: str
    role: Role
    replicas: str | None = None
    replica_types: tuple[str, ...] = ()
    suspend: str | None = None  # queued kinds: the field under spec that suspends the object (Kueue's switch)

    @property
    def ref(self) -> str:
        """group/Kind, as the policies compare request.kind with it."""
        return f"{self.group}/{self.kind}"

    def pod_specs(self) -> list[tuple[str, str, str | None]]:
        """(field path, CEL expression, CEL guard or None) of each pod spec of an object of this kind."""
        if self.role == "pod":
            return [("spec", "object.spec", None)]
        if self.replicas is None:
            return [("spec.template.spec", "object.spec.template.spec", None)]
        base = f"object.spec.{self.replicas}"
        return [(f"spec.{self.replicas}.{t}.template.spec", f"{base}.{t}.template.spec", f"has({base}.{t})")
                for t in self.replica_types]


# One entry adds a kind: its pods are checked and, when queued, its queue label and priority class.
WORKLOAD_KINDS: tuple[WorkloadKind, ...] = (
    WorkloadKind("", "v1", "pods", "Pod", "pod"),
    WorkloadKind("batch", "v1", "jobs", "Job", "queued", suspend="suspend"),
    WorkloadKind("kubeflow.org", "v1", "pytorchjobs", "PyTorchJob", "queued",
                 replicas="pytorchReplicaSpecs", replica_types=("Master", "Worker"), suspend="runPolicy.suspend"),
    WorkloadKind("kubeflow.org", "v2beta1", "mpijobs", "MPIJob", "queued",
                 replicas="mpiReplicaSpecs", replica_types=("Launcher", "Worker"), suspend="runPolicy.suspend"),
    WorkloadKind("apps", "v1", "deployments", "Deployment", "unqueued"),
    WorkloadKind("apps", "v1", "statefulsets", "StatefulSet", "unqueued"),
    WorkloadKind("apps", "v1", "replicasets", "ReplicaSet", "unqueued"),
    WorkloadKind("apps", "v1", "daemonsets", "DaemonSet", "unqueued"),
)


def _lit(value: Any) -> str:
    """A CEL literal of a string or a list of strings (JSON string syntax is valid CEL)."""
    if isinstance(value, str):
        return json.dumps(value)
    return "[" + ", ".join(json.dumps(v) for v in value) + "]"


def _bound_teams(config: KitConfig) -> list[str]:
    """Every team whose namespace the guardrails bind: the config's teams and the shared pool."""
    names = [team.name for team in config.teams]
    if config.shared_pool is not None:
        names.append(config.shared_pool.name)
    return names


def team_namespaces(config: KitConfig) -> list[str]:
    return [team_namespace(name) for name in _bound_teams(config)]


def allowed_priority_classes(config: KitConfig, team: str) -> list[str]:
    """The classes a team may name: teams[].priority_classes, by default every class of the cluster policy."""
    chosen = next((t.priority_classes for t in config.teams if t.name == team), None)
    if chosen is None:
        chosen = tuple(c.name for c in config.cluster_policy.priority_classes)
    return list(chosen)


def _allowed_by_team(config: KitConfig) -> dict[str, list[str]]:
    """allowed_priority_classes of every bound team, in one pass over the teams (not one per team)."""
    chosen: dict[str, tuple[str, ...] | None] = {}
    for team in config.teams:
        chosen.setdefault(team.name, team.priority_classes)  # the first team of a name, as next() finds it
    default = tuple(c.name for c in config.cluster_policy.priority_classes)
    return {name: list(default if chosen.get(name) is None else chosen[name]) for name in _bound_teams(config)}


def priority_label(priority_class: str) -> str:
    """The label value (and WorkloadPriorityClass name) task governance gives a class."""
    return f"{priority_class}-priority"


def _per_namespace(values: dict[str, str | Iterable[str]]) -> str:
    """CEL: the value of this request's namespace from a map literal of every bound namespace."""
    entries = ", ".join(f"{_lit(team_namespace(team))}: {_lit(v if isinstance(v, str) else list(v))}"
                        for team, v in values.items())
    return "{" + entries + "}[request.namespace]"


def _priority_variable(config: KitConfig) -> dict[str, str]:
    values = {team: [priority_label(c) for c in allowed] for team, allowed in _allowed_by_team(config).items()}
    return {"name": "priorityClasses", "expression": _per_namespace(values)}


def _priority_text(config: KitConfig) -> str:
    """CEL: the request namespace's allowed classes as one string, for messages (CEL has no join here)."""
    return _per_namespace({team: ", ".join(priority_label(c) for c in allowed) or "none"
                           for team, allowed in _allowed_by_team(config).items()})


def _capability_variable(config: KitConfig) -> dict[str, str]:
    extras = {team.name: team.allowed_capabilities for team in config.teams}
    values = {team: extras.get(team, ()) for team in _bound_teams(config)}
    return {"name": "capabilities", "expression": f"{_lit(BASELINE_CAPABILITIES)} + {_per_namespace(values)}"}


def _switch(kinds: Iterable[WorkloadKind], branch: Callable[[WorkloadKind], str]) -> str:
    """CEL: a chain of conditionals on the request's kind, one branch per distinct expression."""
    groups: dict[str, list[str]] = {}
    for kind in kinds:
        groups.setdefault(branch(kind), []).append(kind.ref)
    items = list(groups.items())
    text = items[-1][0]
    for expression, refs in reversed(items[:-1]):
        text = f"variables.kind in {_lit(refs)} ? {expression} : ({text})"
    return text


def _pods_of(kind: WorkloadKind) -> str:
    # {'path': <string>, 'spec': <object field>}: Kubernetes checks literals as homogeneous, and cel-go joins
    # a string and a dyn value to dyn (checker isAssignable), so these maps type-check there too.
    parts = []
    for path, spec, guard in kind.pod_specs():
        item = f"[{{'path': {_lit(path)}, 'spec': {spec}}}]"
        parts.append(item if guard is None else f"({guard} ? {item} : [])")
    return " + ".join(parts)


def _annotations_of(kind: WorkloadKind) -> str:
    """CEL: [{'path', 'a': annotations}] of the object's pods or pod templates that have annotations."""
    parts = []
    for path, spec, guard in kind.pod_specs():
        meta_path, meta = path.removesuffix("spec") + "metadata", spec.removesuffix("spec") + "metadata"
        present = f"has({meta}.annotations)" if kind.role == "pod" else f"has({meta}) && has({meta}.annotations)"
        present = present if guard is None else f"{guard} && {present}"
        parts.append(f"({present} ? [{{'path': {_lit(meta_path + '.annotations')}, 'a': {meta}.annotations}}] : [])")
    return " + ".join(parts)


def _containers_of(kind: WorkloadKind) -> str:
    parts = []
    for path, spec, guard in kind.pod_specs():
        for field in CONTAINER_FIELDS:
            present = f"has({spec}.{field})" if guard is None else f"{guard} && has({spec}.{field})"
            entry = f"{{'path': {_lit(f'{path}.{field}[')} + c.name + ']', 'c': c, 'init': {str(field == 'initContainers').lower()}}}"
            parts.append(f"({present} ? {spec}.{field}.map(c, {entry}) : [])")
    return " + ".join(parts)


def _validation(rule: str, expression: str, message: str, message_expression: str) -> dict[str, str]:
    """One CEL check; its messages name the rule and, through messageExpression, the offending field."""
    lead = f"hyperpod-kit guardrail {rule}: "
    return {"expression": expression, "message": lead + message,
            "messageExpression": f"{_lit(lead)} + {message_expression}", "reason": "Forbidden"}


def _first(items: str, bad: str) -> str:
    """CEL: the first element of a list variable that breaks a rule (only evaluated when one does)."""
    return f"{items}.filter(e, {bad})[0]"


def _each(items: str, rule: str, bad: str, field: str, message: str) -> dict[str, str]:
    """A rule no element of `items` (variables.pods: e.spec; variables.containers: e.c) may break."""
    first = _first(items, bad)
    return _validation(rule, f"!{items}.exists(e, {bad})", message, f"{first}.path + {_lit(f'.{field}: {message}')}")


def _container_rule(rule: str, bad: str, field: str, message: str) -> dict[str, str]:
    return _each("variables.containers", rule, bad, field, message)


def _pod_rule(rule: str, bad: str, field: str, message: str) -> dict[str, str]:
    return _each("variables.pods", rule, bad, field, message)


def _security_context(field: str) -> str:
    return f"has(e.c.securityContext) && has(e.c.securityContext.{field})"


def _pod_and_container_rules(rule: str, field: str, bad: str, message: str) -> list[dict[str, str]]:
    """A securityContext field a pod and each of its containers can set; bad: CEL on `x` (the field)."""
    out = []
    for make, context in ((_pod_rule, "e.spec.securityContext"), (_container_rule, "e.c.securityContext")):
        test = f"has({context}) && has({context}.{field}) && {bad.replace('x.', f'{context}.{field}.')}"
        out.append(make(rule, test, f"securityContext.{field}", message))
    return out


def baseline_validations() -> list[dict[str, str]]:
    """The remaining Pod Security "baseline" checks: host ports, /proc mount, seccomp, AppArmor, SELinux, sysctls."""
    types = _lit(BASELINE_SELINUX_TYPES)
    return [
        _container_rule("host-ports", "has(e.c.ports) && e.c.ports.exists(p, has(p.hostPort) && p.hostPort != 0)",
                        "ports", "hostPort is not allowed"),
        _container_rule("proc-mount", f"{_security_context('procMount')} && e.c.securityContext.procMount != 'Default'",
                        "securityContext.procMount", "only Default is allowed"),
        *_pod_and_container_rules("seccomp", "seccompProfile", "x.type == 'Unconfined'", "Unconfined is not allowed"),
        *_pod_and_container_rules("apparmor", "appArmorProfile", "x.type == 'Unconfined'", "Unconfined is not allowed"),
        # Kubernetes turns the annotation into appArmorProfile when it creates the pod: refused up front
        # on templates too, with the values baseline allows, so a Job is not left failing to make pods.
        _each("variables.annotations", "apparmor",
              f"e.a.exists(k, k.startsWith({_lit(APPARMOR_ANNOTATION)}) && !(e.a[k] in ['', 'runtime/default']) "
              "&& !e.a[k].startsWith('localhost/'))",
              f"{APPARMOR_ANNOTATION}<container>", "only runtime/default or localhost/<profile> are allowed"),
        *_pod_and_container_rules("selinux", "seLinuxOptions",
                                  f"(has(x.user) && x.user != '' || has(x.role) && x.role != '' "
                                  f"|| has(x.type) && x.type != '' && !(x.type in {types}))",
                                  f"user and role may not be set, type only to {', '.join(BASELINE_SELINUX_TYPES)}"),
        _pod_rule("sysctls", "has(e.spec.securityContext) && has(e.spec.securityContext.sysctls) && "
                  f"e.spec.securityContext.sysctls.exists(s, !(s.name in {_lit(BASELINE_SYSCTLS)}))",
                  "securityContext.sysctls", f"only {', '.join(BASELINE_SYSCTLS)} are allowed"),
    ]


# A toleration (t) of every taint, or of a taint that keeps work off unhealthy or cordoned nodes; the
# API server requires operator Exists with an empty key, so the key alone tells.
_BAD_TOLERATION = (f"!has(t.key) || t.key == '' || {_lit(GUARDED_TAINT_PREFIXES)}.exists(p, t.key.startsWith(p)) "
                   f"&& !(t.key in {_lit(DEFAULT_TOLERATIONS)} && has(t.effect) && t.effect == 'NoExecute')")
# A pod (anti-)affinity term (t) that looks at pods of other namespaces: the scheduler keeps an incoming pod
# away from (or next to) existing pods whatever their namespace, so one small unqueued pod with a required
# anti-affinity term on namespaceSelector {} would hold every other team's pods out of its zone.
def _other_namespaces(term: str) -> str:
    return f"has({term}.namespaceSelector) || has({term}.namespaces) && {term}.namespaces.exists(n, n != request.namespace)"


_AFFINITY_ELSEWHERE = "has(e.spec.affinity) && (" + " || ".join(
    f"has(e.spec.affinity.{kind}) && (has(e.spec.affinity.{kind}.requiredDuringSchedulingIgnoredDuringExecution) && "
    f"e.spec.affinity.{kind}.requiredDuringSchedulingIgnoredDuringExecution.exists(t, {_other_namespaces('t')}) || "
    f"has(e.spec.affinity.{kind}.preferredDuringSchedulingIgnoredDuringExecution) && "
    f"e.spec.affinity.{kind}.preferredDuringSchedulingIgnoredDuringExecution.exists(w, "
    f"{_other_namespaces('w.podAffinityTerm')}))"
    for kind in ("podAffinity", "podAntiAffinity")) + ")"
# Probes and lifecycle handlers are run by the kubelet from the node's network: a host would make it
# connect anywhere (Pod Security baseline forbids it from Kubernetes 1.34). gRPC probes have no host.
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_PROBE_HOST = " || ".join(
    [f"has(e.c.{probe}) && has(e.c.{probe}.{action}) && has(e.c.{probe}.{action}.host) && e.c.{probe}.{action}.host != ''"
     for probe in PROBES for action in ("httpGet", "tcpSocket")]
    + [f"has(e.c.lifecycle) && has(e.c.lifecycle.{hook}) && has(e.c.lifecycle.{hook}.{action}) && "
       f"has(e.c.lifecycle.{hook}.{action}.host) && e.c.lifecycle.{hook}.{action}.host != ''"
       for hook in ("postStart", "preStop") for action in ("httpGet", "tcpSocket")])
# A term that picks nodes by name: matchFields (metadata.name), or the hostname label with In (NotIn and
# DoesNotExist keep a job off nodes, e.g. a flaky one; Exists matches every node).
_PICKS_TERM = f"has(x.matchFields) && size(x.matchFields) > 0 || has(x.matchExpressions) && " \
              f"x.matchExpressions.exists(m, m.key == {_lit(HOSTNAME_LABEL)} && m.operator == 'In')"
_NODE_AFFINITY = "e.spec.affinity.nodeAffinity"
# A pod that names its node (kubernetes.io/hostname or matchFields on metadata.name), required or preferred.
_PICKS_A_NODE = (
    f"has(e.spec.nodeSelector) && {_lit(HOSTNAME_LABEL)} in e.spec.nodeSelector || "
    f"has(e.spec.affinity) && has({_NODE_AFFINITY}) && ("
    f"has({_NODE_AFFINITY}.requiredDuringSchedulingIgnoredDuringExecution) && "
    f"{_NODE_AFFINITY}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.exists(x, {_PICKS_TERM}) || "
    f"has({_NODE_AFFINITY}.preferredDuringSchedulingIgnoredDuringExecution) && "
    f"{_NODE_AFFINITY}.preferredDuringSchedulingIgnoredDuringExecution.exists(w, "
    f"{_PICKS_TERM.replace('x.', 'w.preference.')}))")


# A container the NVIDIA device plugin gives GPUs: a nonzero nvidia.com/ request (the API server stores
# quantities in canonical form, so zero is "0").
_ASKS_GPU = " || ".join(f"has(e.c.resources) && has(e.c.resources.{k}) && e.c.resources.{k}.exists(r, "
                        f"r.startsWith('nvidia.com/') && string(e.c.resources.{k}[r]) != '0')"
                        for k in ("limits", "requests"))
# The variable set in the pod's env; device-env refuses every value of it but those that hide the GPUs.
_HIDES_GPUS = f"has(e.c.env) && e.c.env.exists(v, v.name == {_lit(GPU_ENV_VAR)})"

# The training operator's init container as the operator writes it (OPERATOR_INIT_IMAGES).
_OPERATOR_INIT = (f"e.init && e.c.image in {_lit(OPERATOR_INIT_IMAGES)} "
                  "&& (!has(e.c.env) || size(e.c.env) == 0) && (!has(e.c.envFrom) || size(e.c.envFrom) == 0)")
# Each feature variable set in the pod's env; device-env keeps them off.
_SWITCHES_FEATURES_OFF = (f"has(e.c.env) && {_lit([v['name'] for v in GPU_FEATURES_OFF_ENV])}"
                          ".all(n, e.c.env.exists(v, v.name == n))")


def pod_security_validations() -> list[dict[str, str]]:
    devices = _lit(DEVICE_ENV_VARS)
    exposes = (f"v.name in {devices} && (has(v.valueFrom) || has(v.value) && !(v.value in {json.dumps(DEVICE_ENV_OFF)}[v.name]))")
    bad_capability = "!(a in variables.capabilities)"
    has_added = f"{_security_context('capabilities')} && has(e.c.securityContext.capabilities.add)"
    rules = [
        _container_rule("privileged", f"{_security_context('privileged')} && e.c.securityContext.privileged == true",
                        "securityContext.privileged", "privileged containers are not allowed"),
        _container_rule("privilege-escalation",
                        f"{_security_context('allowPrivilegeEscalation')} "
                        "&& e.c.securityContext.allowPrivilegeEscalation == true",
                        "securityContext.allowPrivilegeEscalation", "must not be true"),
        _validation("capabilities",
                    f"!variables.containers.exists(e, {has_added} && e.c.securityContext.capabilities.add.exists(a, {bad_capability}))",
                    "securityContext.capabilities.add holds a capability outside the Pod Security baseline set "
                    "and the team's allowed_capabilities",
                    _first("variables.containers", f"{has_added} && e.c.securityContext.capabilities.add.exists(a, {bad_capability})")
                    + ".path + '.securityContext.capabilities.add: ' + "
                    + _first("variables.containers", f"{has_added} && e.c.securityContext.capabilities.add.exists(a, {bad_capability})")
                    + f".c.securityContext.capabilities.add.filter(a, {bad_capability})[0]"
                    + " + ' is not allowed (the Pod Security baseline set and the team\\'s allowed_capabilities are)'"),
        _validation("device-env",
                    f"!variables.containers.exists(e, has(e.c.env) && e.c.env.exists(v, {exposes}))",
                    f"env sets a variable that selects devices ({', '.join(DEVICE_ENV_VARS)}); ask for the devices "
                    "in resources instead",
                    _first("variables.containers", f"has(e.c.env) && e.c.env.exists(v, {exposes})")
                    + ".path + '.env: ' + "
                    + _first("variables.containers", f"has(e.c.env) && e.c.env.exists(v, {exposes})")
                    + f".c.env.filter(v, {exposes})[0].name"
                    + " + ' selects devices no resource request counts; ask for the devices in resources instead'"),
        # A ConfigMap or Secret could carry the same variables: envFrom needs a prefix no such name starts with.
        _container_rule("device-env",
                        f"has(e.c.envFrom) && e.c.envFrom.exists(s, !has(s.prefix) || {devices}.exists(n, n.startsWith(s.prefix)))",
                        "envFrom", f"each source needs a prefix that none of {', '.join(DEVICE_ENV_VARS)} starts with"),
        # The toolkit reads the image's environment too (every CUDA image sets NVIDIA_VISIBLE_DEVICES=all, and one
        # with CUDA_VERSION and no such variable counts as "legacy" and gets every GPU): a container that asks for
        # no GPU must hide them itself. The pod's env overrides the image's; device-env keeps it a hiding value.
        _container_rule("gpu-visibility",
                        f"!({_ASKS_GPU}) && !({_HIDES_GPUS}) && !({_OPERATOR_INIT})", "env",
                        "a container that requests no nvidia.com GPU must set NVIDIA_VISIBLE_DEVICES=void (its "
                        "image may expose every GPU of the node otherwise; kubectl debug: --env "
                        "NVIDIA_VISIBLE_DEVICES=void)"),
        _container_rule("gpu-features", f"({_ASKS_GPU}) && !({_SWITCHES_FEATURES_OFF})", "env",
                        "a container that requests nvidia.com GPUs must set "
                        + ", ".join(f"{v['name']}={v['value']}" for v in GPU_FEATURES_OFF_ENV)
                        + " (its image may give it every EFA, NVSwitch, GDRCopy or GDS device of the node otherwise)"),
    ]
    rules += baseline_validations()
    claim = "v.ephemeral.volumeClaimTemplate.spec"
    bad_volume = " || ".join([*(f"has(v.{t})" for t in REFUSED_VOLUME_TYPES),
                              f"has(v.ephemeral) && has(v.ephemeral.volumeClaimTemplate) && ("
                              + " || ".join(f"has({claim}.{f})" for f in EPHEMERAL_CLAIM_SOURCES)
                              + f" || !has({claim}.storageClassName) || {claim}.storageClassName == '')"])
    volume_message = (f"only {', '.join(ALLOWED_VOLUME_TYPES)} volumes are allowed, and an ephemeral claim must "
                      f"name a storageClassName and may not set {', '.join(EPHEMERAL_CLAIM_SOURCES)}")
    for field in HOST_NAMESPACES:
        rules.append(_pod_rule("host-namespaces", f"has(e.spec.{field}) && e.spec.{field} == true", field,
                               "sharing the node's namespaces is not allowed"))
    rules += [
        _validation("volumes", f"!variables.pods.exists(e, has(e.spec.volumes) && e.spec.volumes.exists(v, {bad_volume}))",
                    volume_message,
                    _first("variables.pods", f"has(e.spec.volumes) && e.spec.volumes.exists(v, {bad_volume})")
                    + ".path + '.volumes[' + "
                    + _first("variables.pods", f"has(e.spec.volumes) && e.spec.volumes.exists(v, {bad_volume})")
                    + f".spec.volumes.filter(v, {bad_volume})[0].name + ']: ' + {_lit(volume_message)}"),
        # A bound Pod has spec.nodeName from the scheduler (pods/binding); its later updates keep it.
        _validation("node-name",
                    "(request.kind.kind == 'Pod' && request.operation == 'UPDATE') || "
                    "!variables.pods.exists(e, has(e.spec.nodeName) && e.spec.nodeName != '')",
                    "spec.nodeName bypasses the scheduler and the queue; use a nodeSelector",
                    _first("variables.pods", "has(e.spec.nodeName) && e.spec.nodeName != ''")
                    + ".path + '.nodeName: bypasses the scheduler and the queue; use a nodeSelector'"),
        # Kubernetes PriorityClasses (system-node-critical ...) let the scheduler evict other teams' pods.
        _pod_rule("priority-class",
                  "has(e.spec.priorityClassName) && e.spec.priorityClassName != '' "
                  "&& !(e.spec.priorityClassName in variables.priorityClasses)",
                  "priorityClassName", "only the team's priority classes (<class>-priority) are allowed"),
        _pod_rule("tolerations", f"has(e.spec.tolerations) && e.spec.tolerations.exists(t, {_BAD_TOLERATION})",
                  "tolerations", "a toleration of every taint (no key), or of "
                  f"{' or '.join(p + '*' for p in GUARDED_TAINT_PREFIXES)} (unhealthy, cordoned nodes) is not allowed; "
                  f"only {' and '.join(DEFAULT_TOLERATIONS)} with effect NoExecute"),
        _pod_rule("node-selection", _PICKS_A_NODE, "nodeSelector/affinity",
                  f"choosing a node ({HOSTNAME_LABEL} or matchFields) is not allowed; select by instance type "
                  "or topology labels"),
        _pod_rule("pod-affinity-namespaces", _AFFINITY_ELSEWHERE, "affinity",
                  "pod affinity and anti-affinity terms apply to the pod's own namespace only (namespaces and "
                  "namespaceSelector would let a pod keep other teams' pods off nodes, or follow them)"),
        _container_rule("probe-host", _PROBE_HOST, "probes/lifecycle",
                        "a probe or lifecycle handler may not set host (the kubelet would connect from the node "
                        "to any address); it checks the pod's own IP"),
        _pod_rule("grace-period", f"has(e.spec.terminationGracePeriodSeconds) && e.spec.terminationGracePeriodSeconds > {MAX_GRACE_SECONDS}",
                  "terminationGracePeriodSeconds", f"at most {MAX_GRACE_SECONDS} (a pod that outlives its job's "
                  "eviction keeps its devices outside the quota)"),
        _each("variables.annotations", "device-annotations",
              f"e.a.exists(k, k.contains({_lit(CDI_ANNOTATION_PREFIX)}))", f"*{CDI_ANNOTATION_PREFIX}*",
              "CDI annotations select devices no resource request counts; ask for them in resources"),
        _container_rule("device-annotations",
                        f"has(e.c.volumeMounts) && e.c.volumeMounts.exists(m, m.mountPath.contains({_lit(DEVICE_LIST_FOLDER)}))",
                        "volumeMounts", f"a mount path naming {DEVICE_LIST_FOLDER} selects devices no resource "
                        "request counts"),
        _pod_rule("runtime-class", "has(e.spec.runtimeClassName) && e.spec.runtimeClassName != ''",
                  "runtimeClassName", "must be unset (the node's default runtime)"),
        _pod_rule("scheduler-name", "has(e.spec.schedulerName) && "
                  f"!(e.spec.schedulerName in ['', {_lit(DEFAULT_SCHEDULER)}])",
                  "schedulerName", f"only {DEFAULT_SCHEDULER} is allowed (Kueue and the quota rely on it)"),
        _pod_rule("service-account", "has(e.spec.serviceAccountName) && !(e.spec.serviceAccountName in ['', 'default']) "
                  "|| has(e.spec.serviceAccount) && !(e.spec.serviceAccount in ['', 'default'])",
                  "serviceAccountName", "only the namespace's default service account is allowed"),
        _pod_rule("resource-claims", "has(e.spec.resourceClaims) && size(e.spec.resourceClaims) > 0",
                  "resourceClaims", "dynamic resource claims are not counted by the quota"),
        _container_rule("resource-claims",
                        "has(e.c.resources) && has(e.c.resources.claims) && size(e.c.resources.claims) > 0",
                        "resources.claims", "dynamic resource claims are not counted by the quota"),
    ]
    unqueued = [k.ref for k in WORKLOAD_KINDS if k.role == "unqueued"]
    # has() per field: ResourceRequirements is an object in Kubernetes' typed CEL, where `in` and [] are map-only.
    device = f"exists(r, {_lit(DEVICE_RESOURCE_PREFIXES)}.exists(p, r.startsWith(p)))"
    asks_devices = " || ".join(f"has(e.c.resources) && has(e.c.resources.{k}) && e.c.resources.{k}.{device}"
                               for k in ("limits", "requests"))
    rules.append(_validation(
        "unqueued-devices", f"!(variables.kind in {_lit(unqueued)}) || !variables.containers.exists(e, {asks_devices})",
        "only queued workloads (Job, PyTorchJob, MPIJob) may ask for accelerators or EFA",
        _first("variables.containers", asks_devices)
        + ".path + '.resources: only queued workloads (Job, PyTorchJob, MPIJob) may ask for accelerators or EFA'"))
    for kind in WORKLOAD_KINDS:
        if kind.replicas:
            rules.append(_validation(
                "replica-specs", f"variables.kind != {_lit(kind.ref)} || has(object.spec.{kind.replicas}) "
                f"&& size(object.spec.{kind.replicas}) > 0", f"spec.{kind.replicas} needs at least one replica type",
                f"'spec.{kind.replicas}: needs at least one replica type'"))
            types = _lit(kind.replica_types)
            rules.append(_validation(
                "replica-types",
                f"variables.kind != {_lit(kind.ref)} || !has(object.spec.{kind.replicas}) "
                f"|| object.spec.{kind.replicas}.all(t, t in {types})",
                f"{kind.kind} replica types are {', '.join(kind.replica_types)}",
                f"'spec.{kind.replicas}.' + object.spec.{kind.replicas}.filter(t, !(t in {types}))[0] "
                f"+ ': {kind.kind} replica types are {', '.join(kind.replica_types)}'"))
    return rules


def _match_rules(kinds: Iterable[WorkloadKind], subresources: bool, delete: bool = False) -> list[dict[str, Any]]:
    rules = []
    for kind in kinds:
        resources = [kind.resource]
        if subresources and kind.role == "pod":
            resources.append("pods/ephemeralcontainers")  # kubectl debug adds containers through it
        rules.append({"apiGroups": [kind.group], "apiVersions": [kind.version], "resources": resources,
                      "operations": ["CREATE", "UPDATE", *(["DELETE"] if delete else [])]})
    return rules


def _metadata(name: str) -> dict[str, Any]:
    return {"name": name, "labels": {"app.kubernetes.io/managed-by": "hyperpod-kit"}}


def pod_security_policy(config: KitConfig) -> dict[str, Any]:
    kinds = WORKLOAD_KINDS
    return {
        "apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicy", "metadata": _metadata(POD_SECURITY),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": _match_rules(kinds, subresources=True)},
            # Metadata-only updates (finalizers, labels) of objects made before the policy stay possible. So
            # do the updates of Kueue and the operators: they suspend, start, inject flavors' node selectors
            # and ungate what was admitted already (an object made before the guardrails, or before the
            # config narrowed, included); what they write comes from admitted objects and admin config.
            "matchConditions": [{"name": "created-or-spec-changed-by-a-team",
                                 "expression": "request.operation == 'CREATE' || object.spec != oldObject.spec && "
                                               f"!(request.userInfo.username in {_lit(updaters(config))})"}],
            "variables": [
                {"name": "kind", "expression": "request.kind.group + '/' + request.kind.kind"},
                {"name": "pods", "expression": _switch(kinds, _pods_of)},
                {"name": "annotations", "expression": _switch(kinds, _annotations_of)},
                {"name": "containers", "expression": _switch(kinds, _containers_of)},
                _capability_variable(config),
                _priority_variable(config),
            ],
            "validations": pod_security_validations(),
        },
    }


def _label(var: str, name: str) -> str:
    """CEL: a label of object or oldObject, '' when absent (oldObject exists on UPDATE only)."""
    present = f"has({var}.metadata.labels) && {_lit(name)} in {var}.metadata.labels"
    if var == "oldObject":
        present = f"request.operation == 'UPDATE' && {present}"
    return f"{present} ? {var}.metadata.labels[{_lit(name)}] : ''"


def helm_fullname(release: str, chart: str) -> str:
    """What a chart's usual `<chart>.fullname` helper renders with no fullnameOverride or nameOverride
    (the kit sets neither): the release name when it holds the chart name, else <release>-<chart>, cut to
    63 characters and then one trailing "-" removed (Helm's trunc 63 | trimSuffix "-")."""
    name = release if chart in release else f"{release}-{chart}"
    name = name[:63]
    return name[:-1] if name.endswith("-") else name


def controller_identities(config: KitConfig) -> list[str]:
    """Operators that create queued kinds for a team's workload: the MPI operator makes each MPIJob's
    launcher a batch Job without the queue label (Kueue admits the MPIJob, not the Job), owned by the MPIJob.
    Its service account is named by the subchart's mpi-operator.fullname, in the release's namespace."""
    if not config.hyperpod.helm_chart.components.mpi_operator:
        return []
    name = helm_fullname(config.hyperpod.helm_chart.release_name, "mpi-operator")
    return [f"system:serviceaccount:{HELM_RELEASE_NAMESPACE}:{name}"]


def updaters(config: KitConfig) -> list[str]:
    """Who may update a team's workloads without the checks: Kueue and the operators (see the policies)."""
    return [KUEUE_CONTROLLER, *controller_identities(config)]


def _managed_by(present: bool) -> str:
    """CEL: (present) whether the object hands itself to a controller other than its kind's own, or
    (not present) the field that does, for the message."""
    branches = []
    for ref, (field, default) in MANAGED_BY.items():
        *parents, _ = field.split(".")
        guards = [f"has(object.spec.{'.'.join(field.split('.')[:i + 1])})" for i in range(len(parents) + 1)]
        test = " && ".join([*guards, f"object.spec.{field} != {_lit(default)}"])
        branches.append((ref, f"({test})" if present else _lit(f"spec.{field}: must be unset or {default}")))
    text = "false" if present else "'spec.managedBy'"
    for ref, expression in reversed(branches):
        text = f"(variables.kind == {_lit(ref)} ? {expression} : {text})"
    return text


def _kueue_keys(field: str, allowed: str) -> str:
    """CEL: the Kueue keys of object.metadata.<field> a team may not set, except those an update leaves as they were."""
    meta, old = f"object.metadata.{field}", f"oldObject.metadata.{field}"
    kept = f"request.operation == 'UPDATE' && has({old}) && k in {old} && {old}[k] == {meta}[k]"
    return (f"(has({meta}) ? {meta}.filter(k, k.contains({_lit(KUEUE_KEY)}) && !({allowed}) && !({kept})) : [])")


def _suspended(var: str, kind: WorkloadKind) -> str:
    """CEL: whether object or oldObject (var) of a queued kind is suspended."""
    assert kind.suspend is not None, kind
    parts = kind.suspend.split(".")
    guards = [f"has({var}.spec.{'.'.join(parts[:i + 1])})" for i in range(len(parts))]
    return "(" + " && ".join([*guards, f"{var}.spec.{kind.suspend} == true"]) + ")"


# What a delete may leave behind: orphaned pods keep running on their devices after Kueue has freed the job's
# quota. A batch/v1 Job orphans when the client names no policy (its legacy default), so a team's delete of one
# must name Background or Foreground (kubectl does). A custom resource (PyTorchJob, MPIJob) deletes its
# dependents by default and orphans them only when asked: Orphan, orphanDependents, or, with no policy named,
# the "orphan" finalizer on the object (which orphan-finalizer keeps teams from adding). Kubernetes' own
# controllers (system: users: garbage collector, namespace deletion, TTL) are not checked.
ORPHAN_FINALIZER = "orphan"
_OPTIONS = "has(request.options)"
_NAMES_CASCADE = (f"{_OPTIONS} && has(request.options.propagationPolicy) "
                  "&& request.options.propagationPolicy in ['Background', 'Foreground']")
_ORPHANS = (f"{_OPTIONS} && (has(request.options.propagationPolicy) && request.options.propagationPolicy == 'Orphan' "
            "|| has(request.options.orphanDependents) && request.options.orphanDependents == true)")
_HAS_ORPHAN_FINALIZER = f"has(oldObject.metadata.finalizers) && {_lit(ORPHAN_FINALIZER)} in oldObject.metadata.finalizers"
_DELETES_PODS = (f"request.userInfo.username.startsWith('system:') || (request.kind.group == 'batch' ? {_NAMES_CASCADE} "
                 f": !({_ORPHANS}) && ({_NAMES_CASCADE} || !({_HAS_ORPHAN_FINALIZER})))")
# Removing owners detaches an object from the one Kueue admitted (an MPI launcher from its MPIJob): only the
# garbage collector does that, when it orphans dependents.
GARBAGE_COLLECTORS = ("system:serviceaccount:kube-system:generic-garbage-collector", "system:kube-controller-manager")


def workload_queue_policy(config: KitConfig) -> dict[str, Any]:
    kinds = [k for k in WORKLOAD_KINDS if k.role == "queued"]
    own = "request.namespace + '-localqueue'"
    # An update that changes nothing but metadata may keep a label as it was: objects made before the
    # policy stay manageable. A spec change needs the labels right, and is refused on an object made
    # without the queue label (an operator's launcher Job, or one older than the guardrails).
    unchanged = "!variables.specChanged && variables.{0} == variables.old{1}"
    required = config.cluster_policy.require_priority_class
    priority_ok = "variables.priority in variables.priorityClasses"
    if not required:
        priority_ok = f"variables.priority == '' || {priority_ok}"
    owners, old_owners = "variables.owners", "variables.oldOwners"
    labels = _kueue_keys("labels", f"k in {_lit(TEAM_KUEUE_LABELS)}")
    annotations = _kueue_keys("annotations", f"k in {_lit(TEAM_KUEUE_ANNOTATIONS)} || "
                                             f"k == {_lit(QUEUE_LABEL)} && object.metadata.annotations[k] == {own}")
    spec: dict[str, Any] = {
        "failurePolicy": "Fail",
        "matchConstraints": {"resourceRules": _match_rules(kinds, subresources=False, delete=True)},
        # Kueue and the operators: the MPI operator creates launcher Jobs without the queue label, owned by
        # their MPIJob; Kueue suspends and starts what it admitted.
        "matchConditions": [{"name": "not-kueue-or-a-workload-operator",
                             "expression": f"!(request.userInfo.username in {_lit(updaters(config))})"}],
        "variables": [
            {"name": "kind", "expression": "request.kind.group + '/' + request.kind.kind"},
            {"name": "specChanged", "expression": "request.operation == 'CREATE' || object.spec != oldObject.spec"},
            {"name": "queue", "expression": _label("object", QUEUE_LABEL)},
            {"name": "oldQueue", "expression": _label("oldObject", QUEUE_LABEL)},
            {"name": "priority", "expression": _label("object", PRIORITY_LABEL)},
            {"name": "oldPriority", "expression": _label("oldObject", PRIORITY_LABEL)},
            {"name": "kueueLabels", "expression": labels},
            {"name": "kueueAnnotations", "expression": annotations},
            {"name": "owners", "expression": "has(object.metadata.ownerReferences) ? object.metadata.ownerReferences : []"},
            {"name": "oldOwners", "expression": "request.operation == 'UPDATE' && has(oldObject.metadata.ownerReferences) "
                                                "? oldObject.metadata.ownerReferences : []"},
            {"name": "resumed", "expression": "request.operation == 'UPDATE' && "
                                              + _switch(kinds, lambda k: f"{_suspended('oldObject', k)} && !{_suspended('object', k)}")},
            _priority_variable(config),
        ],
        "validations": [
            _validation("queue", f"variables.queue == {own} || {unchanged.format('queue', 'Queue')}",
                        f"metadata.labels[{QUEUE_LABEL}] must be the namespace's own queue, <namespace>-localqueue",
                        f"'metadata.labels[{QUEUE_LABEL}]: ' + (variables.queue == '' ? 'missing' : "
                        f"'\\'' + variables.queue + '\\' is not this namespace\\'s queue') + '; set it to ' + {own}"),
            _validation("priority-class", f"{priority_ok} || {unchanged.format('priority', 'Priority')}",
                        f"metadata.labels[{PRIORITY_LABEL}] must be one of the team's priority classes"
                        + (" and is required" if required else ""),
                        f"'metadata.labels[{PRIORITY_LABEL}]: ' + (variables.priority == '' ? 'missing (the config "
                        f"requires a priority class)' : '\\'' + variables.priority + '\\' is not allowed') + "
                        f"'; allowed: ' + {_priority_text(config)}"),
            _validation("unqueued-object", "!variables.specChanged || request.operation == 'CREATE' || variables.oldQueue != ''",
                        "the object was made without the queue label (by an operator, or before the guardrails): "
                        "its spec may not change",
                        "'spec: this object was made without the queue label (by an operator, or before the "
                        "guardrails); its spec may not change'"),
            # Kueue treats an object with a controller owner it manages as that owner's child: no Workload of
            # its own, so no quota. Only an update that keeps the spec may keep the owners it had; only the
            # garbage collector removes them.
            _validation("owner-references",
                        f"size({owners}) == 0 && size({old_owners}) == 0 || !variables.specChanged "
                        f"&& {owners}.all(r, r in {old_owners}) && (size({owners}) == size({old_owners}) "
                        f"|| request.userInfo.username in {_lit(GARBAGE_COLLECTORS)})",
                        "metadata.ownerReferences may not be set, and only the garbage collector removes them (Kueue "
                        "would count the object as its owner's, or lose track of it)",
                        f"'metadata.ownerReferences: ' + (size({owners}) > 0 ? {owners}[0].kind + '/' + {owners}[0].name "
                        "+ ' may not be set (Kueue would count the object as its owner\\'s)' : 'only the garbage "
                        "collector removes owners (Kueue would lose track of the object)')"),
            _validation("orphan-finalizer",
                        f"!has(object.metadata.finalizers) || !({_lit(ORPHAN_FINALIZER)} in object.metadata.finalizers) "
                        f"|| request.operation == 'UPDATE' && {_HAS_ORPHAN_FINALIZER}",
                        "metadata.finalizers may not hold orphan (a delete would leave the pods running after the "
                        "quota is freed)",
                        "'metadata.finalizers: orphan is not allowed (a delete would leave the pods running after "
                        "Kueue frees the quota)'"),
            _validation("resume", "!variables.resumed",
                        "a suspended job may not be resumed by hand: Kueue starts it when it admits it",
                        "'spec: a suspended job may not be resumed by hand (" + ", ".join(
                            sorted({f"{k.kind} spec.{k.suspend}" for k in kinds})) + "); Kueue starts it when it admits it'"),
            _validation("managed-by", f"!variables.specChanged || !{_managed_by(True)}",
                        "a managedBy that hands the object to another controller is not allowed",
                        f"{_managed_by(False)} + ' (another controller would run it outside the queue)'"),
            _validation("clean-pod-policy",
                        f"!variables.specChanged || !(variables.kind in {_lit(CLEAN_POD_KINDS)}) || "
                        "has(object.spec.runPolicy) && has(object.spec.runPolicy.cleanPodPolicy) && "
                        f"object.spec.runPolicy.cleanPodPolicy in {_lit(CLEAN_POD_POLICIES)}",
                        f"a PyTorchJob or MPIJob must set spec.runPolicy.cleanPodPolicy to {' or '.join(CLEAN_POD_POLICIES)}",
                        f"'spec.runPolicy.cleanPodPolicy: must be {' or '.join(CLEAN_POD_POLICIES)} (with None, the "
                        "operators\\' default, Workers keep running on their GPUs after the job succeeds and Kueue "
                        "frees its quota)'"),
            _validation("kueue-keys", "size(variables.kueueLabels) == 0 && size(variables.kueueAnnotations) == 0",
                        f"Kueue labels other than {', '.join(TEAM_KUEUE_LABELS)} and annotations other than "
                        f"{', '.join(TEAM_KUEUE_ANNOTATIONS)} (and the own queue) are not allowed",
                        "'metadata: ' + (size(variables.kueueLabels) > 0 ? 'label ' + variables.kueueLabels[0] : "
                        "'annotation ' + variables.kueueAnnotations[0]) + ' changes how Kueue accounts the object; "
                        f"allowed: {', '.join(TEAM_KUEUE_LABELS + TEAM_KUEUE_ANNOTATIONS)}'"),
        ],
    }
    # A delete has no object: the checks above are for creates and updates; it gets its own.
    spec["validations"] = [{**v, "expression": f"request.operation == 'DELETE' || ({v['expression']})"}
                           for v in spec["validations"]]
    spec["validations"].append(_validation(
        "delete-propagation", f"request.operation != 'DELETE' || {_DELETES_PODS}",
        "a delete may not orphan the pods: a Job's must name propagationPolicy Background or Foreground, a "
        "PyTorchJob's or MPIJob's may not name Orphan (orphaned pods keep running on their devices after the "
        "quota is freed; kubectl delete sends Background)",
        "'DeleteOptions.propagationPolicy: ' + (request.kind.group == 'batch' ? 'a Job\\'s delete must name "
        "Background or Foreground' : 'may not be Orphan (nor orphanDependents, nor a delete naming none of an object "
        "with the orphan finalizer)') + ' - orphaned pods keep running after Kueue frees the quota; kubectl delete "
        "sends Background unless --cascade=orphan'"))
    return {"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicy", "metadata": _metadata(WORKLOAD_QUEUE),
            "spec": spec}


def service_policy() -> dict[str, Any]:
    """Services reach past the namespace: NodePort opens a port on every node, LoadBalancer an AWS load balancer,
    ExternalName aliases any DNS name, and externalIPs make every node's kube-proxy hand that IP's traffic to
    the team's pods (CVE-2020-8554). A team's Services are ClusterIP (headless too), as the operators make them."""
    spec = "object.spec"
    return {
        "apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicy", "metadata": _metadata(SERVICES),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["services"],
                                                    "operations": ["CREATE", "UPDATE"]}]},
            # Metadata-only updates (a finalizer removed while an old load balancer is deleted) stay possible.
            "matchConditions": [{"name": "created-or-spec-changed",
                                 "expression": "request.operation == 'CREATE' || object.spec != oldObject.spec"}],
            "validations": [
                _validation("service-type", f"!has({spec}.type) || {spec}.type == 'ClusterIP'",
                            "only ClusterIP Services (headless too) are allowed",
                            f"'spec.type: ' + {spec}.type + ' reaches past the namespace; only ClusterIP is allowed'"),
                _validation("service-type", f"!has({spec}.externalIPs) || size({spec}.externalIPs) == 0",
                            "spec.externalIPs is not allowed (every node would send that IP's traffic to the pods)",
                            "'spec.externalIPs: not allowed (every node would send that IP\\'s traffic to the pods)'"),
            ],
        },
    }


def binding(policy: dict[str, Any], namespaces: list[str]) -> dict[str, Any]:
    name = policy["metadata"]["name"]
    return {
        "apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicyBinding", "metadata": _metadata(name),
        "spec": {
            "policyName": name,
            # Deny refuses the request; Audit also records the violation in the API server's audit log.
            "validationActions": ["Deny", "Audit"],
            "matchResources": {"namespaceSelector": {"matchExpressions": [
                {"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": sorted(namespaces)}]}},
        },
    }


def guardrail_manifests(config: KitConfig) -> list[dict[str, Any]]:
    """Every policy and its binding to the team namespaces of the config; none without a team namespace
    (a selector's In needs at least one value)."""
    namespaces = team_namespaces(config)
    if not namespaces:
        return []
    policies = [pod_security_policy(config), workload_queue_policy(config), service_policy()]
    return [*policies, *(binding(p, namespaces) for p in policies)]
