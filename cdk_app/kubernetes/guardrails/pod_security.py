"""hyperpod-kit-pod-security: the pods and pod templates of every checked kind."""

from __future__ import annotations

import json
from typing import Any

from cdk_app.config.model import KitConfig
from cdk_app.kubernetes.guardrails.bindings import policy_metadata
from cdk_app.kubernetes.guardrails.cel import (
    container_rule,
    each_item,
    first_bad,
    lit,
    pod_and_container_rules,
    pod_rule,
    security_context,
    validation,
)
from cdk_app.kubernetes.guardrails.constants import (
    ALLOWED_VOLUME_TYPES,
    API_VERSION,
    APPARMOR_ANNOTATION,
    BASELINE_SELINUX_TYPES,
    BASELINE_SYSCTLS,
    CDI_ANNOTATION_PREFIX,
    DEFAULT_SCHEDULER,
    DEFAULT_TOLERATIONS,
    DEVICE_ENV_OFF,
    DEVICE_ENV_VARS,
    DEVICE_LIST_FOLDER,
    DEVICE_RESOURCE_PREFIXES,
    EPHEMERAL_CLAIM_SOURCES,
    GPU_ENV_VAR,
    GUARDED_TAINT_PREFIXES,
    HOST_NAMESPACES,
    HOSTNAME_LABEL,
    MAX_GRACE_SECONDS,
    MAX_UNQUEUED_REPLICAS,
    MAX_UNQUEUED_SURGE,
    MAX_UNQUEUED_SURGE_PERCENT,
    OPERATOR_INIT_IMAGES,
    POD_SECURITY,
    REFUSED_VOLUME_TYPES,
    UNQUEUED_SURGE_PERCENT_PATTERN,
    gpus_hidden_by_manifest,
)
from cdk_app.kubernetes.guardrails.kinds import (
    WORKLOAD_KINDS,
    annotations_of,
    containers_of,
    kind_switch,
    match_rules,
    pods_of,
)
from cdk_app.kubernetes.guardrails.team_scope import capability_variable, priority_variable
from cdk_app.kubernetes.guardrails.unqueued_resources import caps_variable, unqueued_resource_validations
from cdk_app.kubernetes.guardrails.workload_queue import updaters


def baseline_validations() -> list[dict[str, str]]:
    """The remaining Pod Security "baseline" checks: host ports, /proc mount, seccomp, AppArmor, SELinux, sysctls."""
    types = lit(BASELINE_SELINUX_TYPES)
    return [
        container_rule("host-ports", "has(e.c.ports) && e.c.ports.exists(p, has(p.hostPort) && p.hostPort != 0)",
                        "ports", "hostPort is not allowed"),
        container_rule("proc-mount", f"{security_context('procMount')} && e.c.securityContext.procMount != 'Default'",
                        "securityContext.procMount", "only Default is allowed"),
        *pod_and_container_rules("seccomp", "seccompProfile", "x.type == 'Unconfined'", "Unconfined is not allowed"),
        *pod_and_container_rules("apparmor", "appArmorProfile", "x.type == 'Unconfined'", "Unconfined is not allowed"),
        # Kubernetes turns the annotation into appArmorProfile when it creates the pod: refused up front
        # on templates too, with the values baseline allows, so a Job is not left failing to make pods.
        each_item("variables.annotations", "apparmor",
              f"e.a.exists(k, k.startsWith({lit(APPARMOR_ANNOTATION)}) && !(e.a[k] in ['', 'runtime/default']) "
              "&& !e.a[k].startsWith('localhost/'))",
              f"{APPARMOR_ANNOTATION}<container>", "only runtime/default or localhost/<profile> are allowed"),
        *pod_and_container_rules("selinux", "seLinuxOptions",
                                  f"(has(x.user) && x.user != '' || has(x.role) && x.role != '' "
                                  f"|| has(x.type) && x.type != '' && !(x.type in {types}))",
                                  f"user and role may not be set, type only to {', '.join(BASELINE_SELINUX_TYPES)}"),
        pod_rule("sysctls", "has(e.spec.securityContext) && has(e.spec.securityContext.sysctls) && "
                  f"e.spec.securityContext.sysctls.exists(s, !(s.name in {lit(BASELINE_SYSCTLS)}))",
                  "securityContext.sysctls", f"only {', '.join(BASELINE_SYSCTLS)} are allowed"),
    ]


# A toleration (t) of every taint, or of a taint that keeps work off unhealthy or cordoned nodes; the
# API server requires operator Exists with an empty key, so the key alone tells.
_BAD_TOLERATION = (f"!has(t.key) || t.key == '' || {lit(GUARDED_TAINT_PREFIXES)}.exists(p, t.key.startsWith(p)) "
                   f"&& !(t.key in {lit(DEFAULT_TOLERATIONS)} && has(t.effect) && t.effect == 'NoExecute')")


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
              f"x.matchExpressions.exists(m, m.key == {lit(HOSTNAME_LABEL)} && m.operator == 'In')"


_NODE_AFFINITY = "e.spec.affinity.nodeAffinity"


# A pod that names its node (kubernetes.io/hostname or matchFields on metadata.name), required or preferred.
_PICKS_A_NODE = (
    f"has(e.spec.nodeSelector) && {lit(HOSTNAME_LABEL)} in e.spec.nodeSelector || "
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
_HIDES_GPUS = f"has(e.c.env) && e.c.env.exists(v, v.name == {lit(GPU_ENV_VAR)})"


# The training operator's init container as the operator writes it (OPERATOR_INIT_IMAGES).
_OPERATOR_INIT = (f"e.init && e.c.image in {lit(OPERATOR_INIT_IMAGES)} "
                  "&& (!has(e.c.env) || size(e.c.env) == 0) && (!has(e.c.envFrom) || size(e.c.envFrom) == 0)")


def pod_security_validations(config: KitConfig) -> list[dict[str, str]]:
    devices = lit(DEVICE_ENV_VARS)
    exposes = (f"v.name in {devices} && (has(v.valueFrom) || has(v.value) && !(v.value in {json.dumps(DEVICE_ENV_OFF)}[v.name]))")
    bad_capability = "!(a in variables.capabilities)"
    has_added = f"{security_context('capabilities')} && has(e.c.securityContext.capabilities.add)"
    rules = [
        container_rule("privileged", f"{security_context('privileged')} && e.c.securityContext.privileged == true",
                        "securityContext.privileged", "privileged containers are not allowed"),
        container_rule("privilege-escalation",
                        f"{security_context('allowPrivilegeEscalation')} "
                        "&& e.c.securityContext.allowPrivilegeEscalation == true",
                        "securityContext.allowPrivilegeEscalation", "must not be true"),
        validation("capabilities",
                    f"!variables.containers.exists(e, {has_added} && e.c.securityContext.capabilities.add.exists(a, {bad_capability}))",
                    "securityContext.capabilities.add holds a capability outside the Pod Security baseline set "
                    "and the team's allowed_capabilities",
                    first_bad("variables.containers", f"{has_added} && e.c.securityContext.capabilities.add.exists(a, {bad_capability})")
                    + ".path + '.securityContext.capabilities.add: ' + "
                    + first_bad("variables.containers", f"{has_added} && e.c.securityContext.capabilities.add.exists(a, {bad_capability})")
                    + f".c.securityContext.capabilities.add.filter(a, {bad_capability})[0]"
                    + " + ' is not allowed (the Pod Security baseline set and the team\\'s allowed_capabilities are)'"),
        validation("device-env",
                    f"!variables.containers.exists(e, has(e.c.env) && e.c.env.exists(v, {exposes}))",
                    f"env sets a variable that selects devices ({', '.join(DEVICE_ENV_VARS)}); ask for the devices "
                    "in resources instead",
                    first_bad("variables.containers", f"has(e.c.env) && e.c.env.exists(v, {exposes})")
                    + ".path + '.env: ' + "
                    + first_bad("variables.containers", f"has(e.c.env) && e.c.env.exists(v, {exposes})")
                    + f".c.env.filter(v, {exposes})[0].name"
                    + " + ' selects devices no resource request counts; ask for the devices in resources instead'"),
        # A ConfigMap or Secret could carry the same variables: envFrom needs a prefix no such name starts with.
        container_rule("device-env",
                        f"has(e.c.envFrom) && e.c.envFrom.exists(s, !has(s.prefix) || {devices}.exists(n, n.startsWith(s.prefix)))",
                        "envFrom", f"each source needs a prefix that none of {', '.join(DEVICE_ENV_VARS)} starts with"),
    ]
    if gpus_hidden_by_manifest(config):
        # Without node-level isolation the toolkit reads the image's environment (every CUDA image sets
        # NVIDIA_VISIBLE_DEVICES=all, and one with CUDA_VERSION and no such variable counts as "legacy" and gets
        # every GPU): a container that asks for no GPU must hide them itself. The pod's env overrides the
        # image's; device-env keeps it a hiding value.
        rules.append(container_rule(
            "gpu-visibility", f"!({_ASKS_GPU}) && !({_HIDES_GPUS}) && !({_OPERATOR_INIT}) && !e.hidden", "env",
            "a container that requests no nvidia.com GPU must set NVIDIA_VISIBLE_DEVICES=void (its image may "
            "expose every GPU of the node otherwise)"))
    rules += baseline_validations()
    claim = "v.ephemeral.volumeClaimTemplate.spec"
    bad_volume = " || ".join([*(f"has(v.{t})" for t in REFUSED_VOLUME_TYPES),
                              "has(v.ephemeral) && has(v.ephemeral.volumeClaimTemplate) && ("
                              + " || ".join(f"has({claim}.{f})" for f in EPHEMERAL_CLAIM_SOURCES)
                              + f" || !has({claim}.storageClassName) || {claim}.storageClassName == '')"])
    volume_message = (f"only {', '.join(ALLOWED_VOLUME_TYPES)} volumes are allowed, and an ephemeral claim must "
                      f"name a storageClassName and may not set {', '.join(EPHEMERAL_CLAIM_SOURCES)}")
    for field in HOST_NAMESPACES:
        rules.append(pod_rule("host-namespaces", f"has(e.spec.{field}) && e.spec.{field} == true", field,
                               "sharing the node's namespaces is not allowed"))
    rules += [
        validation("volumes", f"!variables.pods.exists(e, has(e.spec.volumes) && e.spec.volumes.exists(v, {bad_volume}))",
                    volume_message,
                    first_bad("variables.pods", f"has(e.spec.volumes) && e.spec.volumes.exists(v, {bad_volume})")
                    + ".path + '.volumes[' + "
                    + first_bad("variables.pods", f"has(e.spec.volumes) && e.spec.volumes.exists(v, {bad_volume})")
                    + f".spec.volumes.filter(v, {bad_volume})[0].name + ']: ' + {lit(volume_message)}"),
        # A bound Pod has spec.nodeName from the scheduler (pods/binding); its later updates keep it.
        validation("node-name",
                    "(request.kind.kind == 'Pod' && request.operation == 'UPDATE') || "
                    "!variables.pods.exists(e, has(e.spec.nodeName) && e.spec.nodeName != '')",
                    "spec.nodeName bypasses the scheduler and the queue; use a nodeSelector",
                    first_bad("variables.pods", "has(e.spec.nodeName) && e.spec.nodeName != ''")
                    + ".path + '.nodeName: bypasses the scheduler and the queue; use a nodeSelector'"),
        # Kubernetes PriorityClasses (system-node-critical ...) let the scheduler evict other teams' pods.
        pod_rule("priority-class",
                  "has(e.spec.priorityClassName) && e.spec.priorityClassName != '' "
                  "&& !(e.spec.priorityClassName in variables.priorityClasses)",
                  "priorityClassName", "only the team's priority classes (<class>-priority) are allowed"),
        pod_rule("tolerations", f"has(e.spec.tolerations) && e.spec.tolerations.exists(t, {_BAD_TOLERATION})",
                  "tolerations", "a toleration of every taint (no key), or of "
                  f"{' or '.join(p + '*' for p in GUARDED_TAINT_PREFIXES)} (unhealthy, cordoned nodes) is not allowed; "
                  f"only {' and '.join(DEFAULT_TOLERATIONS)} with effect NoExecute"),
        pod_rule("node-selection", _PICKS_A_NODE, "nodeSelector/affinity",
                  f"choosing a node ({HOSTNAME_LABEL} or matchFields) is not allowed; select by instance type "
                  "or topology labels"),
        pod_rule("pod-affinity-namespaces", _AFFINITY_ELSEWHERE, "affinity",
                  "pod affinity and anti-affinity terms apply to the pod's own namespace only (namespaces and "
                  "namespaceSelector would let a pod keep other teams' pods off nodes, or follow them)"),
        container_rule("probe-host", _PROBE_HOST, "probes/lifecycle",
                        "a probe or lifecycle handler may not set host (the kubelet would connect from the node "
                        "to any address); it checks the pod's own IP"),
        pod_rule("grace-period", f"has(e.spec.terminationGracePeriodSeconds) && e.spec.terminationGracePeriodSeconds > {MAX_GRACE_SECONDS}",
                  "terminationGracePeriodSeconds", f"at most {MAX_GRACE_SECONDS} (a pod that outlives its job's "
                  "eviction keeps its devices outside the quota)"),
        each_item("variables.annotations", "device-annotations",
              f"e.a.exists(k, k.contains({lit(CDI_ANNOTATION_PREFIX)}))", f"*{CDI_ANNOTATION_PREFIX}*",
              "CDI annotations select devices no resource request counts; ask for them in resources"),
        container_rule("device-annotations",
                        f"has(e.c.volumeMounts) && e.c.volumeMounts.exists(m, m.mountPath.contains({lit(DEVICE_LIST_FOLDER)}))",
                        "volumeMounts", f"a mount path naming {DEVICE_LIST_FOLDER} selects devices no resource "
                        "request counts"),
        pod_rule("runtime-class", "has(e.spec.runtimeClassName) && e.spec.runtimeClassName != ''",
                  "runtimeClassName", "must be unset (the node's default runtime)"),
        pod_rule("scheduler-name", "has(e.spec.schedulerName) && "
                  f"!(e.spec.schedulerName in ['', {lit(DEFAULT_SCHEDULER)}])",
                  "schedulerName", f"only {DEFAULT_SCHEDULER} is allowed (Kueue and the quota rely on it)"),
        pod_rule("service-account", "has(e.spec.serviceAccountName) && !(e.spec.serviceAccountName in ['', 'default']) "
                  "|| has(e.spec.serviceAccount) && !(e.spec.serviceAccount in ['', 'default'])",
                  "serviceAccountName", "only the namespace's default service account is allowed"),
        pod_rule("resource-claims", "has(e.spec.resourceClaims) && size(e.spec.resourceClaims) > 0",
                  "resourceClaims", "dynamic resource claims are not counted by the quota"),
        container_rule("resource-claims",
                        "has(e.c.resources) && has(e.c.resources.claims) && size(e.c.resources.claims) > 0",
                        "resources.claims", "dynamic resource claims are not counted by the quota"),
    ]
    unqueued = [k.ref for k in WORKLOAD_KINDS if k.role == "unqueued"]
    # has() per field: ResourceRequirements is an object in Kubernetes' typed CEL, where `in` and [] are map-only.
    device = f"exists(r, {lit(DEVICE_RESOURCE_PREFIXES)}.exists(p, r.startsWith(p)))"
    asks_devices = " || ".join(f"has(e.c.resources) && has(e.c.resources.{k}) && e.c.resources.{k}.{device}"
                               for k in ("limits", "requests"))
    rules.append(validation(
        "unqueued-devices", f"!(variables.kind in {lit(unqueued)}) || !variables.containers.exists(e, {asks_devices})",
        "only queued workloads (Job, PyTorchJob, MPIJob) may ask for accelerators or EFA",
        first_bad("variables.containers", asks_devices)
        + ".path + '.resources: only queued workloads (Job, PyTorchJob, MPIJob) may ask for accelerators or EFA'"))
    rules.append(pod_rule(
        "unqueued-priority", f"variables.kind in {lit(unqueued)} && has(e.spec.priorityClassName) "
        "&& e.spec.priorityClassName != ''", "priorityClassName",
        "only queued workloads (Job, PyTorchJob, MPIJob) may name a priority class: an unqueued pod is outside "
        "every quota, and a priority would let the scheduler evict queued pods for it"))
    rules += unqueued_resource_validations()
    rules.append(validation(
        "unqueued-replicas", f"!(variables.kind in {lit(unqueued)}) || !has(object.spec.replicas) "
        f"|| object.spec.replicas <= {MAX_UNQUEUED_REPLICAS}",
        f"an unqueued workload runs at most {MAX_UNQUEUED_REPLICAS} replicas (it is outside every quota)",
        f"'spec.replicas: at most {MAX_UNQUEUED_REPLICAS} for an unqueued workload (it is outside every quota); "
        "run the work as a Job, PyTorchJob or MPIJob'"))
    surge = "object.spec.strategy.rollingUpdate.maxSurge"
    rules.append(validation(
        "unqueued-surge", "variables.kind != 'apps/Deployment' || !has(object.spec.strategy) "
        "|| !has(object.spec.strategy.rollingUpdate) || !has(object.spec.strategy.rollingUpdate.maxSurge) "
        f"|| (type({surge}) == int ? {surge} <= {MAX_UNQUEUED_SURGE} : "
        f"string({surge}).matches({lit(UNQUEUED_SURGE_PERCENT_PATTERN)}))",
        f"a Deployment's rollout may add at most {MAX_UNQUEUED_SURGE} pod or {MAX_UNQUEUED_SURGE_PERCENT}% (old and "
        "new pods run together while it is not ready)",
        f"'spec.strategy.rollingUpdate.maxSurge: at most {MAX_UNQUEUED_SURGE} or {MAX_UNQUEUED_SURGE_PERCENT}% for an "
        "unqueued workload (a rollout that never becomes ready keeps replicas + maxSurge pods, outside every quota)'"))
    for kind in WORKLOAD_KINDS:
        if kind.replicas:
            rules.append(validation(
                "replica-specs", f"variables.kind != {lit(kind.ref)} || has(object.spec.{kind.replicas}) "
                f"&& size(object.spec.{kind.replicas}) > 0", f"spec.{kind.replicas} needs at least one replica type",
                f"'spec.{kind.replicas}: needs at least one replica type'"))
            types = lit(kind.replica_types)
            rules.append(validation(
                "replica-types",
                f"variables.kind != {lit(kind.ref)} || !has(object.spec.{kind.replicas}) "
                f"|| object.spec.{kind.replicas}.all(t, t in {types})",
                f"{kind.kind} replica types are {', '.join(kind.replica_types)}",
                f"'spec.{kind.replicas}.' + object.spec.{kind.replicas}.filter(t, !(t in {types}))[0] "
                f"+ ': {kind.kind} replica types are {', '.join(kind.replica_types)}'"))
    return rules


def pod_policy(config: KitConfig, name: str, variables: list[dict[str, str]],
               validations: list[dict[str, str]]) -> dict[str, Any]:
    """A policy on the pods and pod templates of every kind in WORKLOAD_KINDS (variables.kind and .pods given)."""
    kinds = WORKLOAD_KINDS
    return {
        "apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicy", "metadata": policy_metadata(name),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": match_rules(kinds, subresources=True)},
            # Metadata-only updates (finalizers, labels) of objects made before the policy stay possible. So
            # do the updates of Kueue and the operators: they suspend, start, inject flavors' node selectors
            # and ungate what was admitted already (an object made before the guardrails, or before the
            # config narrowed, included); what they write comes from admitted objects and admin config.
            "matchConditions": [{"name": "created-or-spec-changed-by-a-team",
                                 "expression": "request.operation == 'CREATE' || object.spec != oldObject.spec && "
                                               f"!(request.userInfo.username in {lit(updaters(config))})"}],
            "variables": [
                {"name": "kind", "expression": "request.kind.group + '/' + request.kind.kind"},
                {"name": "pods", "expression": kind_switch(kinds, pods_of)},
                *variables,
            ],
            "validations": validations,
        },
    }


def pod_security_policy(config: KitConfig) -> dict[str, Any]:
    return pod_policy(config, POD_SECURITY, [
        {"name": "annotations", "expression": kind_switch(WORKLOAD_KINDS, annotations_of)},
        {"name": "containers", "expression": kind_switch(WORKLOAD_KINDS, containers_of)},
        capability_variable(config),
        priority_variable(config),
        caps_variable(config),
    ], pod_security_validations(config))
