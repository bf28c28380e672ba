"""What the real-API-server tests share about the guardrail bindings: the admission plugin reads policies and
bindings through an informer, each on its own time, so a test waits until probes show every policy acting."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from cdk_app.kubernetes.guardrails.constants import TOLERATIONS
from support.admission_cases import CLEAN_JOB, ORPHAN, RENDEZVOUS, with_finalizers
from support.realk8s.api import Cluster, wait_until

RULE = re.compile(r"hyperpod-kit guardrail ([a-z0-9-]+):")


def bindings(manifests: list[dict[str, Any]], actions: list[str]) -> list[dict[str, Any]]:
    out = []
    for manifest in manifests:
        if manifest["kind"] == "ValidatingAdmissionPolicyBinding":
            binding = copy.deepcopy(manifest)
            binding["spec"]["validationActions"] = actions
            out.append(binding)
    return out


def _probes(manifests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per policy, a request it refuses: each binding leaves or joins the informer on its own time. A privileged
    Job (pod-security, workload-queue), an otherwise clean Deployment with the orphan finalizer (dependents), a
    Service with an external IP (services: not a LoadBalancer, which the namespace's ResourceQuota refuses
    whatever the bindings) and, where the config has
    administrators' taints, a clean Job tolerating one its namespace may not (tolerations)."""
    binding = bindings(manifests, [])[0]
    namespace = binding["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"][0]["values"][0]
    probes = [{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "probe", "namespace": namespace},
               "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                   {"name": "c", "image": "busybox", "securityContext": {"privileged": True}}]}}}},
              {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "probe", "namespace": namespace},
               "spec": {"externalIPs": ["10.0.0.10"], "ports": [{"port": 80}]}}]
    orphaning = with_finalizers(RENDEZVOUS, ORPHAN)
    probes.append({**orphaning, "metadata": {**orphaning["metadata"], "name": "probe", "namespace": namespace}})
    for policy in manifests:
        if policy["kind"] == "ValidatingAdmissionPolicy" and policy["metadata"]["name"] == TOLERATIONS:
            [taints] = [v["expression"] for v in policy["spec"]["variables"] if v["name"] == "taints"]
            guarded = json.loads(taints.removesuffix("[request.namespace]"))[CLEAN_JOB["metadata"]["namespace"]]
            job = copy.deepcopy(CLEAN_JOB)
            job["spec"]["template"]["spec"]["tolerations"] = [{**{k: guarded[0][k] for k in ("key", "value", "effect")},
                                                              "operator": "Equal"}]
            probes.append(job)
    return probes


def namespaced_quotas(cluster: Cluster) -> list[dict[str, Any]]:
    """The ResourceQuotas of the cluster, as they can be created again."""
    answer = cluster.request("GET", "/api/v1/resourcequotas")
    assert answer.allowed, answer.message
    return [{"apiVersion": "v1", "kind": "ResourceQuota",
             "metadata": {"name": q["metadata"]["name"], "namespace": q["metadata"]["namespace"]}, "spec": q["spec"]}
            for q in answer.body["items"]]


def settle(cluster: Cluster, manifests: list[dict[str, Any]], actions: list[str], timeout: float = 60) -> None:
    """The admission plugin reads bindings through an informer: wait until probes show the new ones act."""
    probes, wanted = _probes(manifests), ("Deny" in actions, "Warn" in actions and "Deny" not in actions)

    def acting() -> bool:
        answers = [cluster.create(probe) for probe in probes]
        return all((not answer.allowed, bool(rules(answer.warnings))) == wanted for answer in answers)

    wait_until(acting, f"bindings {actions}", timeout, interval=0.2)


def rules(texts: list[str] | tuple[str, ...]) -> set[str]:
    return {match for text in texts for match in RULE.findall(text)}
