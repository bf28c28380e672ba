"""Random kit-like task-governance snapshots for judging the in-process Kueue scheduler against the real one:
a random environment (2-12 teams, 1-3 GPU instance types, quotas, sharing strategies and borrow limits, fair
share on or off with weights including 0, priority classes, team preemption settings, idle resource sharing)
turned into Kueue objects by the kit's own mapping (cdk_app.domain.kueue_mapping), plus admitted and pending
workloads of random shapes, as one kueue-oracle document run until stable.

`observe` reduces an output (the oracle's, or support.kueue_inprocess's) to what both must agree on: per
workload its state, flavors and pending message, and every preemption with its preemptor, reason and message.
"""

from __future__ import annotations

import random
from typing import Any

from cdk_app.config.loader import load_config
from cdk_app.config.model import KitConfig, PriorityClass, QuotaEntry, Team
from cdk_app.config.names import local_queue, team_cluster_queue, team_namespace
from cdk_app.domain.instance_types import CATALOGUE
from cdk_app.domain.kueue_mapping import INSTANCE_TYPE_LABEL, governance_objects, kueue_configuration
from support.kueue_cases.common import ts
from support.paths import ROOT

TYPES = ("ml.g5.12xlarge", "ml.g5.48xlarge", "ml.p4d.24xlarge", "ml.p5.48xlarge")
LISTS = {"ResourceFlavor": "resourceFlavors", "ClusterQueue": "clusterQueues", "LocalQueue": "localQueues",
         "WorkloadPriorityClass": "workloadPriorityClasses", "Cohort": "cohorts"}
MAX_CYCLES = 200
_BASE: KitConfig | None = None


def _base() -> KitConfig:
    global _BASE
    if _BASE is None:
        _BASE = load_config(ROOT / "config" / "dev.yaml").config
    return _BASE


def random_config(rng: random.Random) -> KitConfig:
    base = _base()
    types = rng.sample(TYPES, rng.randint(1, 3))
    nodes = {t: rng.randint(1, 6) for t in types}
    groups = tuple(base.hyperpod.instance_groups[0].model_copy(update={"name": f"g{i}", "instance_type": t,
                                                                       "count": nodes[t]})
                   for i, t in enumerate(types))
    classes = tuple(PriorityClass(name=n, weight=w) for n, w in
                    zip(("low", "mid", "high"), sorted(rng.sample(range(101), 3)), strict=True)
                    ) if rng.random() < 0.7 else ()
    teams = []
    left = dict(nodes)
    for i in range(rng.randint(2, 12)):
        quota = []
        for t in types:
            count = rng.randint(0, min(left[t], 3)) if left[t] and rng.random() < 0.7 else 0
            left[t] -= count
            if count:
                quota.append(QuotaEntry(instance_type=t, count=count))
        teams.append(Team(name=f"t{i}", fair_share_weight=rng.choice((0, 0, 1, 10, 50, 100)),
                          sharing_strategy=rng.choice(("LendAndBorrow", "LendAndBorrow", "Lend", "DontLend")),
                          borrow_limit=rng.choice((None, 1, 50, 100, 200, 500)),
                          preempt_team_tasks=rng.choice(("LowerPriority", "Never")), quota=tuple(quota)))
    policy = base.cluster_policy.model_copy(update={
        "priority_classes": classes, "fair_share": rng.choice(("Enabled", "Disabled")),
        "idle_resource_sharing": rng.choice(("Enabled", "Enabled", "Disabled"))})
    hyperpod = base.hyperpod.model_copy(update={"instance_groups": groups})
    return base.model_copy(update={"hyperpod": hyperpod, "teams": tuple(teams), "cluster_policy": policy,
                                   "shared_pool": None})


def _job(rng: random.Random, team: str, name: str, itype: str, priorities: dict[str, int], created: int
         ) -> dict[str, Any]:
    spec = CATALOGUE[itype]
    gpus = rng.choice([g for g in (1, 2, 4, 8) if g <= spec.accelerators])
    pods = rng.choice((1, 1, 1, 2, 3, 4))
    share = gpus / spec.accelerators
    requests = {"nvidia.com/gpu": str(gpus), "cpu": str(max(1, int(spec.vcpu * share) - rng.randint(0, 2))),
                "memory": f"{max(1, int(spec.memory_gib * share) - rng.randint(0, 8))}Gi"}
    pod_spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": requests}}]}
    if rng.random() < 0.85:  # the HyperPod CLI pins the instance type
        pod_spec["nodeSelector"] = {INSTANCE_TYPE_LABEL: itype}
    klass = rng.choice([None, *priorities])
    wl: dict[str, Any] = {
        "metadata": {"name": name, "namespace": team_namespace(team), "uid": f"uid-{team}-{name}",
                     "creationTimestamp": ts(created)},
        "spec": {"queueName": local_queue(team), "priority": priorities.get(klass, 0) if klass else 0,
                 "podSets": [{"name": "main", "count": pods, "template": {"spec": pod_spec}}]}}
    return wl


def _admit(wl: dict[str, Any], team: str, itype: str, at: int) -> dict[str, Any]:
    ps = wl["spec"]["podSets"][0]
    requests = ps["template"]["spec"]["containers"][0]["resources"]["requests"]
    usage = {}
    for r, q in requests.items():
        if r == "memory":
            usage[r] = f"{int(q[:-2]) * ps['count']}Gi"
        else:
            usage[r] = str(int(q) * ps["count"])
    conditions = [{"type": kind, "status": "True", "reason": kind, "message": "",
                   "lastTransitionTime": ts(at)} for kind in ("QuotaReserved", "Admitted")]
    wl["status"] = {"conditions": conditions, "admission": {
        "clusterQueue": team_cluster_queue(team),
        "podSetAssignments": [{"name": "main", "count": ps["count"], "flavors": dict.fromkeys(requests, itype),
                               "resourceUsage": usage}]}}
    return wl


def scenario(seed: int) -> dict[str, Any]:
    """One oracle document: a random environment and workloads, run until stable."""
    rng = random.Random(seed)
    config = random_config(rng)
    doc: dict[str, Any] = {"untilStable": True, "maxCycles": MAX_CYCLES,
                           "namespaces": [{"metadata": {"name": team_namespace(t.name)}} for t in config.teams],
                           "workloads": []}
    for obj in governance_objects(config):
        doc.setdefault(LISTS[obj["kind"]], []).append(obj)
    fair = kueue_configuration(config)["fairSharing"]
    if fair["enable"]:
        doc["fairSharing"] = {"preemptionStrategies": fair["preemptionStrategies"]}
    priorities = {f"{pc.name}-priority": pc.weight for pc in config.cluster_policy.priority_classes}
    types = [g.instance_type for g in config.hyperpod.instance_groups]
    capacity = {t: CATALOGUE[t].accelerators * g.count for t, g in
                ((g.instance_type, g) for g in config.hyperpod.instance_groups)}
    used = dict.fromkeys(types, 0)
    clock = -10_000
    for team in config.teams:
        for n in range(rng.randint(0, 4)):
            itype = rng.choice(types)
            clock += rng.randint(1, 60)
            wl = _job(rng, team.name, f"run{n}", itype, priorities, clock)
            ps = wl["spec"]["podSets"][0]
            gpus = int(ps["template"]["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"]) * ps["count"]
            if used[itype] + gpus <= capacity[itype]:
                used[itype] += gpus
                doc["workloads"].append(_admit(wl, team.name, itype, clock + rng.randint(1, 30)))
    for team in config.teams:
        for n in range(rng.randint(0, 4)):
            clock += rng.randint(1, 60)
            doc["workloads"].append(_job(rng, team.name, f"job{n}", rng.choice(types), priorities, clock))
    return doc


def observe(output: dict[str, Any]) -> dict[str, Any]:
    """What an oracle-shaped output decided, in comparable form."""
    workloads = {}
    for w in output.get("workloads") or []:
        admitted = w["state"] in ("Admitted", "QuotaReserved")
        workloads[w["name"]] = {"admitted": admitted, "flavors": w.get("flavors") or {} if admitted else {},
                                "pending": "" if admitted else w.get("pendingMessage", "")}
    # the oracle names as preemptor the last entry listing the victim among its targets, even one skipped for
    # overlapping targets; the message names the real preemptor by UID, so it alone is compared
    preemptions = sorted((p["workload"], p["reason"], p.get("message", ""))
                         for c in output.get("cycles") or [] for p in c.get("preempted") or [])
    return {"workloads": workloads, "preemptions": preemptions}
