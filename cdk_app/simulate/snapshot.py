"""A live cluster as a workload: `kubectl get workloads -A -o json` (a List; ClusterQueues and other kinds in it
are ignored - the queues come from the config being tried) turned into the simulator's jobs, so "what would this
quota cut preempt right now" has an answer.

- A Workload with a QuotaReserved=True condition and an admission is running: restored on the flavor it was
  admitted on, as if admitted `now - QuotaReserved time` seconds ago.
- A Workload without one is pending: submitted at 0, queued in its creation order.
- A finished or deactivated Workload, or one outside the teams' namespaces and queues, is left out (counted).
A snapshot does not say how long a job will still run: every job is given `remaining` seconds (running ones
from the start, pending ones once admitted).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from typing import Any

from cdk_app.config.model import KitConfig
from cdk_app.config.names import local_queue, team_cluster_queue, team_namespace
from cdk_app.domain.kueue_mapping import INSTANCE_TYPE_LABEL, governed_teams
from cdk_app.kubernetes.quantity import parse_quantity
from cdk_app.simulate.governance import TERMS, in_terms, kueue_units
from cdk_app.simulate.kueue.api import PodSet, Workload
from cdk_app.simulate.workloads import Job

MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024


class SnapshotError(Exception):
    """The snapshot is not a `kubectl get workloads -A -o json` document (says what is wrong and where)."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    jobs: tuple[Job, ...]
    now: datetime
    left_out: dict[str, int]  # why -> how many workloads


def _time(text: Any, where: str) -> datetime:
    if not isinstance(text, str):
        raise SnapshotError(f"{where}: no timestamp")
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise SnapshotError(f"{where}: {text!r} is not an RFC 3339 time") from None


def _condition(workload: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for condition in (workload.get("status") or {}).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == kind and condition.get("status") == "True":
            return condition
    return None


def _requests(pod_set: dict[str, Any], where: str) -> dict[str, int]:
    """Per pod: the containers' requests summed (limits stand in where a request is missing, as the API server
    defaults them), in Kueue's units."""
    spec = ((pod_set.get("template") or {}).get("spec")) or {}
    total: dict[str, int] = {}
    for index, container in enumerate(spec.get("containers") or []):
        resources = container.get("resources") or {}
        amounts = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
        for name, quantity in amounts.items():
            if parse_quantity(str(quantity)) is None:
                raise SnapshotError(f"{where}.containers[{index}].resources: {quantity!r} is not a quantity")
            total[name] = total.get(name, 0) + kueue_units(name, str(quantity))
    return total


def parse_snapshot(data: bytes, file: str, config: KitConfig, remaining: int) -> Snapshot:
    try:
        document = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise SnapshotError(f"{file}: not JSON ({err}); give the output of `kubectl get workloads -A -o json`") from None
    if not isinstance(document, dict) or not isinstance(document.get("items"), list):
        raise SnapshotError(f"{file}: not a Kubernetes List (no items); give the output of "
                            "`kubectl get workloads -A -o json`")
    workloads = [item for item in document["items"] if isinstance(item, dict) and item.get("kind") == "Workload"]
    queues = {(team_namespace(team), local_queue(team)): team for team in governed_teams(config)}
    stamps = [_time(w.get("metadata", {}).get("creationTimestamp"), f"{file}: items[{i}]")
              for i, w in enumerate(workloads)]
    for w in workloads:
        reserved = _condition(w, "QuotaReserved")
        if reserved:
            stamps.append(_time(reserved.get("lastTransitionTime"), f"{file}: {w['metadata'].get('name')}"))
    now = max(stamps) if stamps else datetime.fromisoformat("1970-01-01T00:00:00+00:00")
    jobs: list[Job] = []
    left_out: dict[str, int] = {}
    for index, w in enumerate(workloads):
        meta, spec = w.get("metadata") or {}, w.get("spec") or {}
        where = f"{file}: items[{index}] ({meta.get('namespace')}/{meta.get('name')})"
        team = queues.get((meta.get("namespace"), spec.get("queueName")))
        why = ("not in a team's namespace and queue" if team is None else
               "finished" if _condition(w, "Finished") else
               "deactivated" if spec.get("active") is False else None)
        if why:
            left_out[why] = left_out.get(why, 0) + 1
            continue
        pod_sets = []
        for i, pod_set in enumerate(spec.get("podSets") or []):
            count = pod_set.get("count", 1)
            if not isinstance(count, int) or count < 1:
                raise SnapshotError(f"{where}: podSets[{i}].count {count!r} is not a positive whole number")
            pod_sets.append(PodSet(str(pod_set.get("name", "main")), count, _requests(pod_set, f"{where}.podSets[{i}]")))
        if not pod_sets:
            raise SnapshotError(f"{where}: the workload has no podSets")
        template = (((spec.get("podSets") or [{}])[0].get("template") or {}).get("spec")) or {}
        selector = {k: str(v) for k, v in (template.get("nodeSelector") or {}).items()}
        admission = (w.get("status") or {}).get("admission")
        reserved = _condition(w, "QuotaReserved")
        flavor = None
        if reserved and admission:
            for assignment in admission.get("podSetAssignments") or []:
                flavor = next(iter((assignment.get("flavors") or {}).values()), None) or flavor
        created = int((stamps[index] - now).total_seconds())
        running_since = int((_time(reserved.get("lastTransitionTime"), where) - now).total_seconds()) \
            if reserved and flavor else None
        name = str(meta.get("name"))
        workload = Workload(key=f"{meta.get('namespace')}/{name}", cluster_queue=team_cluster_queue(team),
                            priority=int(spec.get("priority") or 0), created=created, pod_sets=tuple(pod_sets),
                            node_selector=selector)
        per_pod = {TERMS.get(res, res): in_terms(res, amount) for res, amount in pod_sets[0].requests.items()}
        jobs.append(Job(name=name, team=team, priority_class=spec.get("priorityClassName"),
                        priority=workload.priority, pods=sum(p.count for p in pod_sets),
                        instance_type=flavor or selector.get(INSTANCE_TYPE_LABEL),
                        per_pod={k: v for k, v in per_pod.items() if isinstance(v, int | Fraction)},
                        submit_at=0 if running_since is None else running_since,
                        runtime=remaining - (running_since or 0) if running_since is not None else remaining,
                        running_since=running_since, workload=workload, line=1))
    return Snapshot(tuple(jobs), now, left_out)
