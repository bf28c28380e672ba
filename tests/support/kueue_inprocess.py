"""Runs a kueue-oracle input document (support.kueue_oracle's format) through the kit's in-process scheduler
(cdk_app.simulate.kueue.KueueScheduler) and answers with the oracle's output keys that support.kueue_oracle.compare
reads (workloads, assignments, left, inadmissibleLeft, preemption), so the same upstream expectation or the same
comparison judges both.

A document that uses something the HyperPod mapping cannot express (hierarchical cohorts, admission checks,
tolerations, node affinity, partial admission, ...) raises OutOfScope with the feature named.
"""

from __future__ import annotations

import datetime
from typing import Any

from cdk_app.simulate.kueue.api import PodSet, Workload
from cdk_app.simulate.kueue.flavors import NO_FIT, PREEMPT, Assignment, PodSetAssignment
from cdk_app.simulate.kueue.objects import OutOfScope, amount
from cdk_app.simulate.kueue.preemption import Preemptor
from cdk_app.simulate.kueue.queues import make_info
from cdk_app.simulate.kueue.scheduler import KueueScheduler

JOB_UID = "kueue.x-k8s.io/job-uid"
# a workload without creationTimestamp (Go's zero time) is older than any dated one
ZERO_TIME = -(10 ** 12)
DEFAULT_NOW = "2025-01-01T00:00:00Z"


def seconds(timestamp: str | None) -> int:
    if not timestamp:
        return ZERO_TIME
    parsed = datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    return int(parsed.timestamp())


def _condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == kind), None)


def _pod_requests(template: dict[str, Any], key: str) -> dict[str, int]:
    spec = template.get("spec") or {}
    for unsupported in ("tolerations", "affinity", "initContainers", "overhead", "resourceClaims"):
        if spec.get(unsupported):
            raise OutOfScope(f"{key}: pod {unsupported}")
    total: dict[str, int] = {}
    for container in spec.get("containers") or []:
        resources = container.get("resources") or {}
        requests = dict(resources.get("limits") or {})
        requests.update(resources.get("requests") or {})
        for name, quantity in requests.items():
            total[name] = total.get(name, 0) + amount(name, quantity)
    return total


def workload_of(obj: dict[str, Any], doc: dict[str, Any], cluster_queue: str | None = None) -> Workload:
    meta, spec = obj["metadata"], obj.get("spec") or {}
    key = f"{meta.get('namespace', '')}/{meta['name']}"
    pod_sets, selector = [], {}
    for ps in spec.get("podSets") or []:
        for unsupported in ("minCount", "topologyRequest"):
            if ps.get(unsupported) is not None:
                raise OutOfScope(f"{key}: pod set {unsupported}")
        template = ps.get("template") or {}
        selector.update((template.get("spec") or {}).get("nodeSelector") or {})
        pod_sets.append(PodSet(ps.get("name", "main"), ps.get("count", 1), _pod_requests(template, key)))
    if cluster_queue is None:
        local = f"{meta.get('namespace', '')}/{spec.get('queueName', '')}"
        cluster_queue = {f"{lq['metadata'].get('namespace', '')}/{lq['metadata']['name']}": lq["spec"]["clusterQueue"]
                         for lq in doc.get("localQueues") or []}.get(local, "")
        admission = (obj.get("status") or {}).get("admission")
        if admission:
            cluster_queue = admission["clusterQueue"]
    priority = spec.get("priority")
    if priority is None and spec.get("priorityClassRef"):
        values = {c["metadata"]["name"]: c["value"] for c in doc.get("workloadPriorityClasses") or []}
        priority = values[spec["priorityClassRef"]["name"]]
    return Workload(key, cluster_queue, priority or 0, seconds(meta.get("creationTimestamp")), tuple(pod_sets),
                    selector)


def _check_scope(doc: dict[str, Any]) -> None:
    # PartialAdmission only acts on a pod set with minCount, which is refused below
    gates = sorted(set(doc.get("featureGates") or {}) - {"PartialAdmission"})
    if gates:
        raise OutOfScope(f"feature gates {gates}")
    for key in ("admissionFairSharing", "objects", "priorityClasses"):
        if doc.get(key):
            raise OutOfScope(key)
    for obj in doc.get("workloads") or []:
        if obj.get("spec", {}).get("active") is False:
            raise OutOfScope("an inactive workload")
        for kind in ("Evicted", "Finished", "Requeued", "PodsReady"):
            if _condition(obj, kind):
                raise OutOfScope(f"a workload with a {kind} condition")
        if obj.get("spec", {}).get("preemptionGates") or (obj.get("status") or {}).get("admissionChecks"):
            raise OutOfScope("preemption gates / admission checks on a workload")


def build(doc: dict[str, Any]) -> tuple[KueueScheduler, dict[str, Workload]]:
    _check_scope(doc)
    objects = [*(doc.get("workloads") or [])]
    incoming = (doc.get("preemption") or {}).get("incoming")
    uids = {f"{w['metadata'].get('namespace', '')}/{w['metadata']['name']}": w["metadata"].get("uid", "")
            for w in [*objects, *([incoming] if incoming else [])]}
    jobs = {f"{w['metadata'].get('namespace', '')}/{w['metadata']['name']}":
            (w["metadata"].get("labels") or {}).get(JOB_UID, "") for w in [*objects, *([incoming] if incoming else [])]}
    scheduler = KueueScheduler(doc, uids=uids, job_uids=jobs)
    workloads: dict[str, Workload] = {}
    for obj in objects:
        workload = workload_of(obj, doc)
        workloads[workload.key] = workload
        reserved = _condition(obj, "QuotaReserved")
        admission = (obj.get("status") or {}).get("admission")
        if admission and reserved and reserved.get("status") == "True":
            scheduler.restore(*_admitted(workload, admission), seconds(reserved.get("lastTransitionTime")))
        elif admission or (reserved and reserved.get("status") == "True"):
            raise OutOfScope(f"{workload.key}: an admission without quota reservation")
        elif workload.cluster_queue in scheduler.cqs:
            scheduler.submit(workload)
        else:
            raise OutOfScope(f"{workload.key}: a LocalQueue or ClusterQueue that does not exist")
    return scheduler, workloads


def _admitted(workload: Workload, admission: dict[str, Any]) -> tuple[Workload, dict[str, dict[str, str]]]:
    """The workload as its admission records it (Kueue reads an admitted workload's usage from the admission's
    resourceUsage, not from its pod sets)."""
    pod_sets, flavors = [], {}
    for psa in admission.get("podSetAssignments") or []:
        count = psa.get("count", 1)
        usage = {r: amount(r, q) for r, q in (psa.get("resourceUsage") or {}).items()}
        if any(v % count for v in usage.values()):
            raise OutOfScope(f"{workload.key}: resource usage not a multiple of the pod count")
        pod_sets.append(PodSet(psa.get("name", "main"), count, {r: v // count for r, v in usage.items()}))
        flavors[psa.get("name", "main")] = dict(psa.get("flavors") or {})
    return Workload(workload.key, admission["clusterQueue"], workload.priority, workload.created, tuple(pod_sets),
                    workload.node_selector), flavors


def _quantity(resource: str, value: int) -> str:
    return f"{value}m" if resource == "cpu" else str(value)


def run(doc: dict[str, Any]) -> dict[str, Any]:
    """The in-process scheduler's answer to an oracle document, in the oracle's output keys."""
    scheduler, workloads = build(doc)
    now = seconds(doc.get("now") or DEFAULT_NOW)
    preempted: dict[str, dict[str, str]] = {}
    out: dict[str, Any] = {"cycles": []}
    if doc.get("mode") == "preempt":
        out["preemption"] = _preempt(scheduler, doc, preempted)
    else:
        max_cycles = doc.get("maxCycles") or 50 if doc.get("untilStable") else doc.get("cycles") or 1
        for n in range(max_cycles):
            if n:
                scheduler.between_cycles()
            if not any(q.in_heap for q in scheduler.queues.values()):
                break
            decisions = scheduler.run_cycle(now + n)
            victims = []
            for d in decisions:
                if d.event == "preempted":
                    preempted[d.workload] = {"reason": d.reason or "", "message": d.message}
                    victims.append({"workload": d.workload, "preemptor": d.preemptor, "reason": d.reason,
                                    "message": d.message})
            out["cycles"].append({"cycle": n + 1, "preempted": victims,
                                  "admitted": sorted(d.workload for d in decisions if d.event == "admitted")})
            if doc.get("untilStable") and not decisions:
                break
    return {**out, **_final(scheduler, workloads, preempted)}


def _preempt(scheduler: KueueScheduler, doc: dict[str, Any], preempted: dict[str, dict[str, str]]
             ) -> dict[str, Any]:
    spec = doc["preemption"]
    workload = workload_of(spec["incoming"], doc, spec["clusterQueue"])
    cq = scheduler.cqs[spec["clusterQueue"]]
    assignment = Assignment()
    for ps_in, ps in zip(spec["assignment"]["podSets"], workload.pod_sets, strict=False):
        count = ps_in.get("count") or 1
        psa = PodSetAssignment(ps_in.get("name") or "main", count, {r: v * count for r, v in ps.requests.items()})
        modes = {"fit": 3, "preempt": PREEMPT, "": PREEMPT, "nofit": NO_FIT}
        psa.flavors = {r: (f["name"], modes[(f.get("mode") or "").lower()], 0, -1) for r, f in ps_in["flavors"].items()}
        assignment.pod_sets.append(psa)
        for r, (flavor, *_rest) in psa.flavors.items():
            if psa.requests.get(r):
                assignment.usage[(flavor, r)] = assignment.usage.get((flavor, r), 0) + psa.requests[r]
    info = make_info(workload, scheduler._uid(workload.key), scheduler.job_uids.get(workload.key, ""))
    targets = scheduler.preemption.targets(Preemptor(workload.key, cq, workload.priority, workload.created,
                                                     assignment.usage, assignment.frs_need_preemption()))
    from cdk_app.simulate.kueue.scheduler import Entry
    entry = Entry(info, cq, assignment, targets, assignment.mode())
    decisions: list[Any] = []
    scheduler._issue(entry, seconds(doc.get("now") or DEFAULT_NOW), decisions)
    for d in decisions:
        preempted[d.workload] = {"reason": d.reason or "", "message": d.message}
    return {"targets": sorted(({"workload": t.workload.key, "preemptor": workload.key, "reason": t.reason}
                               for t in targets), key=lambda t: t["workload"]), "preempted": len(targets)}


def _final(scheduler: KueueScheduler, workloads: dict[str, Workload], preempted: dict[str, dict[str, str]]
           ) -> dict[str, Any]:
    assignments, states = {}, []
    for name, admitted in scheduler.admitted.items():
        for key, w in admitted.items():
            pod_sets = []
            for ps in scheduler.workloads[key].pod_sets:
                flv = w.flavors.get(ps.name, {})
                pod_sets.append({"name": ps.name, "flavors": dict(flv), "count": ps.count,
                                 "resourceUsage": {r: _quantity(r, ps.count * ps.requests.get(r, 0)) for r in flv}})
            assignments[key] = {"clusterQueue": name, "podSetAssignments": pod_sets}
    pending = scheduler.pending()
    for key in sorted(workloads):
        state: dict[str, Any] = {"name": key}
        where = scheduler.where.get(key)
        if where is not None:
            state["state"] = "QuotaReserved"
            state["clusterQueue"] = where
            state["flavors"] = {f"{p}/{r}": f for p, rs in scheduler.admitted[where][key].flavors.items()
                                for r, f in rs.items()}
        else:
            state["state"] = "Pending"
            state["pendingMessage"] = pending.get(key, "")
        if key in preempted:
            state["preempted"] = {"workload": key, **preempted[key]}
        states.append(state)
    left = {name: sorted(q.in_heap) for name, q in scheduler.queues.items() if q.in_heap}
    inadmissible = {name: sorted(q.inadmissible) for name, q in scheduler.queues.items() if q.inadmissible}
    return {"workloads": states, "assignments": assignments, "left": left, "inadmissibleLeft": inadmissible}
