"""Builders shared by the translated Kueue v0.19.2 test tables: Kueue v1beta2 objects as plain JSON-able dicts,
and the case document (`case_doc`) every table produces.

These are the hyperpod-kit's own helpers, used to hand-translate Kueue's upstream unit-test tables (read by a
person, not parsed) into kueue-oracle cases. Every builder returns an ordinary Kubernetes-style object, the shape
`kubectl get -o json` prints, so a case input could equally be written as YAML. The names follow the upstream
wrappers they stand for (pkg/util/testing: MakeClusterQueue, MakeWorkload, MakeAdmission, ...).
"""

from __future__ import annotations

import datetime
import re
from typing import Any

NOW = datetime.datetime(2025, 1, 1, 0, 0, 0, tzinfo=datetime.UTC)
V1B2 = "kueue.x-k8s.io/v1beta2"


def ts(delta_seconds=0):
    t = NOW + datetime.timedelta(seconds=delta_seconds)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


# ----------------------------------------------------------------- cluster


def ns(name, **labels):
    o = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    if labels:
        o["metadata"]["labels"] = dict(labels)
    return o


def rf(name, taints=None, node_labels=None):
    spec = {}
    if taints:
        spec["nodeTaints"] = taints
    if node_labels:
        spec["nodeLabels"] = node_labels
    return {"apiVersion": V1B2, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def res(name, nominal=None, borrowing=None, lending=None):
    """One resource quota, like FlavorQuotas.Resource(name, nominal, borrowingLimit, lendingLimit)."""
    r = {"name": name}
    if nominal is not None:
        r["nominalQuota"] = nominal
    else:
        r["nominalQuota"] = "0"
    if borrowing not in (None, ""):
        r["borrowingLimit"] = borrowing
    if lending not in (None, ""):
        r["lendingLimit"] = lending
    return r


def fq(flavor, *resources):
    return {"name": flavor, "resources": list(resources)}


def rg(*flavors):
    covered = [r["name"] for r in flavors[0]["resources"]] if flavors else []
    return {"coveredResources": covered, "flavors": list(flavors)}


def sel_in(key, *values):
    return {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}


def cq(name, *groups, cohort=None, preemption=None, fungibility=None, selector=None,
       strategy="BestEffortFIFO", fair_weight=None, admission_checks=None, stop_policy=None):
    """Like MakeClusterQueue(name): namespaceSelector {}, BestEffortFIFO,
    flavorFungibility {MayStopSearch, TryNextFlavor} unless overridden."""
    spec = {
        "namespaceSelector": {} if selector is None else selector,
        "queueingStrategy": strategy,
        "flavorFungibility": {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"},
        "resourceGroups": list(groups),
    }
    if fungibility is not None:
        spec["flavorFungibility"] = fungibility
    if cohort:
        spec["cohortName"] = cohort
    if preemption is not None:
        spec["preemption"] = preemption
    if fair_weight is not None:
        spec["fairSharing"] = {"weight": fair_weight}
    if admission_checks:
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": a} for a in admission_checks]}
    if stop_policy:
        spec["stopPolicy"] = stop_policy
    return {"apiVersion": V1B2, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def preempt(within=None, reclaim=None, borrow_policy=None, max_prio=None):
    p = {}
    if within:
        p["withinClusterQueue"] = within
    if reclaim:
        p["reclaimWithinCohort"] = reclaim
    if borrow_policy:
        b = {"policy": borrow_policy}
        if max_prio is not None:
            b["maxPriorityThreshold"] = max_prio
        p["borrowWithinCohort"] = b
    return p


def cohort(name, parent=None, *groups, fair_weight=None):
    spec = {}
    if parent:
        spec["parentName"] = parent
    if groups:
        spec["resourceGroups"] = list(groups)
    if fair_weight is not None:
        spec["fairSharing"] = {"weight": fair_weight}
    return {"apiVersion": V1B2, "kind": "Cohort", "metadata": {"name": name}, "spec": spec}


def lq(name, namespace, cluster_queue):
    return {"apiVersion": V1B2, "kind": "LocalQueue",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"clusterQueue": cluster_queue}}


# ----------------------------------------------------------------- workloads


def podset(name="main", count=1, requests=None, limits=None, min_count=None, tolerations=None,
           node_selector=None):
    container = {"name": "c", "resources": {"requests": dict(requests or {})}}
    if limits:
        container["resources"]["limits"] = dict(limits)
    spec = {"restartPolicy": "Never", "containers": [container]}
    if tolerations:
        spec["tolerations"] = tolerations
    if node_selector:
        spec["nodeSelector"] = node_selector
    p = {"name": name, "count": count, "template": {"spec": spec}}
    if min_count is not None:
        p["minCount"] = min_count
    return p


def psa(name="main", assignments=None, count=1):
    """PodSetAssignment: assignments = {resource: (flavor, usage)}."""
    assignments = assignments or {}
    return {
        "name": name,
        "flavors": {r: f for r, (f, _) in assignments.items()},
        "resourceUsage": {r: q for r, (_, q) in assignments.items()},
        "count": count,
    }


def adm(cluster_queue, *podset_assignments):
    if not podset_assignments:
        podset_assignments = (psa(),)
    return {"clusterQueue": cluster_queue, "podSetAssignments": list(podset_assignments)}


def wl(name, namespace="", requests=None, *, podsets=None, prio=None, queue=None, uid=None,
       labels=None, reserve=None, reserve_at=0, admitted=False, creation=None, conditions=None,
       annotations=None, active=None, limits=None):
    """Like MakeWorkload(name, ns) with one podset "main" (count 1) unless podsets given.
    reserve=adm(...) mirrors ReserveQuotaAt(adm, now+reserve_at);
    admitted=True mirrors AdmittedAt(true, now)."""
    meta = {"name": name, "namespace": namespace}
    if uid:
        meta["uid"] = uid
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    if creation is not None:
        meta["creationTimestamp"] = ts(creation)
    spec = {"podSets": podsets if podsets is not None else [podset("main", 1, requests, limits)]}
    if prio is not None:
        spec["priority"] = prio
    if queue:
        spec["queueName"] = queue
    if active is not None:
        spec["active"] = active
    o = {"apiVersion": V1B2, "kind": "Workload", "metadata": meta, "spec": spec}
    status = {}
    conds = []
    if reserve is not None:
        status["admission"] = reserve
        conds.append({"type": "QuotaReserved", "status": "True", "reason": "AdmittedByTest",
                      "message": "Admitted by ClusterQueue " + reserve["clusterQueue"],
                      "lastTransitionTime": ts(reserve_at)})
        if admitted:
            conds.append({"type": "Admitted", "status": "True", "reason": "ByTest",
                          "message": "Admitted by ClusterQueue " + reserve["clusterQueue"],
                          "lastTransitionTime": ts(0)})
    if conditions:
        conds.extend(conditions)
    if conds:
        status["conditions"] = conds
    if status:
        o["status"] = status
    return o


def simple_reserve(w, cluster_queue, flavor, at=0):
    """Like SimpleReserveQuota(cq, flavor, now): all requests of podset 0 in one flavor."""
    ps0 = w["spec"]["podSets"][0]
    reqs = ps0["template"]["spec"]["containers"][0]["resources"]["requests"]
    a = {r: (flavor, mul(q, ps0["count"])) for r, q in reqs.items()}
    r = adm(cluster_queue, psa(ps0["name"], a, ps0["count"]))
    w2 = wl(w["metadata"]["name"], w["metadata"]["namespace"], podsets=w["spec"]["podSets"],
            prio=w["spec"].get("priority"), queue=w["spec"].get("queueName"), reserve=r, reserve_at=at)
    return w2


def mul(q, n):
    if n == 1:
        return q
    m = re.match(r"^(\d+)(.*)$", q)
    return str(int(m.group(1)) * n) + m.group(2)


def victim(name, reason, message=None, namespace=""):
    v = {"workload": namespace + "/" + name, "reason": reason}
    if message:
        v["message"] = message
    return v


# ----------------------------------------------------------------- case documents


def slug(s):
    s = s.lower()
    s = re.sub(r"[^a-z0-9]+", "-", s).strip("-")
    return s[:120]


def case_doc(prefix, name, upstream, inp, expected, note=None, skip=None) -> tuple[str, dict[str, Any]]:
    """One case: (file stem "<prefix>__<slug of the upstream name>", document). The document holds the upstream
    case's name and place, the oracle input and the expected outcome; `skip` (a reason) keeps a case on record
    that the oracle cannot run."""
    doc = {"name": name, "upstream": upstream, "input": inp, "expected": expected}
    if note:
        doc["note"] = note
    if skip:
        doc["skip"] = skip
    return prefix + "__" + slug(name), doc
