"""Admission guardrails of the team namespaces: Kubernetes ValidatingAdmissionPolicies (CEL, built into
the API server since 1.30, no controller to run) and their bindings, built from the config.

The policies, each bound to the namespaces of every team and of the shared pool (by the name label the
API server itself sets on every namespace), so a team added to the config is covered by the same synth:

- hyperpod-kit-pod-security: the pods and pod templates of every kind in WORKLOAD_KINDS - no privileged
  containers, privilege escalation, host namespaces, volume types outside an allow-list, capabilities beyond
  the allowed set, spec.nodeName or a chosen node, tolerations of unhealthy or cordoned nodes,
  device-selecting environment variables, a container without GPUs that leaves its image's GPUs visible, unallowed priorityClassName, another runtime, scheduler or
  service account, dynamic resource claims; kinds Kueue does not queue (Deployment, StatefulSet ...) may
  not ask for accelerators or EFA, nor more CPU and memory per container and per pod than the team's caps
  (unqueued_resources.py, CEL's quantity library).
- hyperpod-kit-workload-queue: workloads Kueue admits (Job, PyTorchJob, MPIJob) carry the namespace's own
  queue label and a priority class the team is allowed, and nothing that changes how Kueue accounts them
  (owner references, another managedBy, Kueue's other labels and annotations).
- hyperpod-kit-dependents: no delete or finalizer that orphans the pods (or ReplicaSets) of any kind with pod
  templates, Deployments as much as Jobs: orphans run outside the quota and the namespace's counts.
- hyperpod-kit-services: ClusterIP Services only, without externalIPs.
- hyperpod-kit-network-policies: a team member may not change or delete the kit's NetworkPolicy, nor write egress
  rules (which could reopen instance metadata).
- hyperpod-kit-tolerations (only when the config has administrators' taints): no toleration of a taint of
  hyperpod.instance_groups[].taints unless the taint lists the team.

Kueue and the operators are not checked when they update an object (see pod_security_policy).

What differs per team (allowed capabilities, priority classes, unqueued pods' caps) is a map literal keyed by namespace in
the policy itself: no parameter object a team could edit, one policy whatever the number of teams.

The expressions keep to CEL that both Kubernetes and cel-python evaluate (tests/unit/kubernetes/guardrails/test_cel_verdicts.py runs
them, with cel_libraries.py for Kubernetes' quantity library and lists' sum()): no optional syntax, no string
extensions, no two-variable comprehensions.
"""

from __future__ import annotations

from typing import Any

from cdk_app.config.model import KitConfig
from cdk_app.domain.kueue_mapping import team_namespaces
from cdk_app.kubernetes.guardrails.bindings import binding
from cdk_app.kubernetes.guardrails.dependents import dependents_policy
from cdk_app.kubernetes.guardrails.network_policies import network_policy_policy
from cdk_app.kubernetes.guardrails.pod_security import pod_security_policy
from cdk_app.kubernetes.guardrails.services import service_policy
from cdk_app.kubernetes.guardrails.tolerations import tolerations_policies
from cdk_app.kubernetes.guardrails.workload_queue import workload_queue_policy


def guardrail_manifests(config: KitConfig) -> list[dict[str, Any]]:
    """Every policy and its binding to the team namespaces of the config; none without a team namespace
    (a selector's In needs at least one value)."""
    namespaces = team_namespaces(config)
    if not namespaces:
        return []
    policies = [pod_security_policy(config), workload_queue_policy(config), dependents_policy(config), service_policy(),
                network_policy_policy(config), *tolerations_policies(config)]
    return [*policies, *(binding(p, namespaces) for p in policies)]
