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
from cdk_app.domain.capacity import cluster_capacity
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
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise SnapshotError(f"{where}: {text!r} is not an RFC 3339 time") from None
    if value.tzinfo is None:  # RFC 3339 always has an offset; the API server writes Z
        raise SnapshotError(f"{where}: {text!r} has no time zone (the API server writes times like "
                            "2026-11-27T10:00:00Z)")
    return value


def _mapping(value: Any, where: str, required: bool = False) -> dict[str, Any]:
    """`value` as a mapping ({} when absent); anything else is not what kubectl writes."""
    if value is None and not required:
        return {}
    if not isinstance(value, dict):
        raise SnapshotError(f"{where}: expected a mapping, found {type(value).__name__}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise SnapshotError(f"{where}: expected a list, found {type(value).__name__}")
    return value


def _condition(workload: dict[str, Any], kind: str, where: str) -> dict[str, Any] | None:
    status = _mapping(workload.get("status"), f"{where}.status")
    for i, condition in enumerate(_list(status.get("conditions"), f"{where}.status.conditions")):
        condition = _mapping(condition, f"{where}.status.conditions[{i}]", required=True)
        if condition.get("type") == kind and condition.get("status") == "True":
            return condition
    return None


def _requests(pod_set: dict[str, Any], where: str) -> dict[str, int]:
    """Per pod: the containers' requests summed (limits stand in where a request is missing, as the API server
    defaults them), in Kueue's units."""
    template = _mapping(pod_set.get("template"), f"{where}.template")
    spec = _mapping(template.get("spec"), f"{where}.template.spec")
    total: dict[str, int] = {}
    for index, container in enumerate(_list(spec.get("containers"), f"{where}.template.spec.containers")):
        here = f"{where}.template.spec.containers[{index}]"
        resources = _mapping(_mapping(container, here, required=True).get("resources"), f"{here}.resources")
        amounts = {**_mapping(resources.get("limits"), f"{here}.resources.limits"),
                   **_mapping(resources.get("requests"), f"{here}.resources.requests")}
        for name, quantity in amounts.items():
            value = parse_quantity(str(quantity)) if isinstance(quantity, str | int) else None
            if value is None or value < 0:
                raise SnapshotError(f"{here}.resources: {name} {quantity!r} is not a quantity of 0 or more")
            total[name] = total.get(name, 0) + kueue_units(name, str(quantity))
    return total


def _whole(value: Any, where: str, default: int, low: int) -> int:
    value = default if value is None else value
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise SnapshotError(f"{where}: {value!r} is not a whole number of at least {low}")
    return value


def parse_snapshot(data: bytes, file: str, config: KitConfig, remaining: int) -> Snapshot:
    try:
        document = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise SnapshotError(f"{file}: not JSON ({err}); give the output of `kubectl get workloads -A -o json`") from None
    if not isinstance(document, dict) or not isinstance(document.get("items"), list):
        raise SnapshotError(f"{file}: not a Kubernetes List (no items); give the output of "
                            "`kubectl get workloads -A -o json`")
    left_out: dict[str, int] = {}
    workloads: list[tuple[int, dict[str, Any]]] = []
    for index, item in enumerate(document["items"]):
        if isinstance(item, dict) and item.get("kind") == "Workload":
            workloads.append((index, item))
        else:
            left_out["not a Workload"] = left_out.get("not a Workload", 0) + 1
    queues = {(team_namespace(team), local_queue(team)): team for team in governed_teams(config)}
    flavors = set(cluster_capacity(config)) if config.hyperpod is not None else set()
    created: dict[int, datetime] = {}
    reserved_at: dict[int, datetime] = {}
    for index, w in workloads:
        where = f"{file}: items[{index}]"
        meta = _mapping(w.get("metadata"), f"{where}.metadata", required=True)
        created[index] = _time(meta.get("creationTimestamp"), f"{where}.metadata.creationTimestamp")
        reserved = _condition(w, "QuotaReserved", where)
        if reserved:
            reserved_at[index] = _time(reserved.get("lastTransitionTime"), f"{where} QuotaReserved lastTransitionTime")
    stamps = [*created.values(), *reserved_at.values()]
    now = max(stamps) if stamps else datetime.fromisoformat("1970-01-01T00:00:00+00:00")
    jobs: list[Job] = []
    seen: dict[str, int] = {}
    for index, w in workloads:
        where = f"{file}: items[{index}]"
        meta, spec = _mapping(w.get("metadata"), f"{where}.metadata"), _mapping(w.get("spec"), f"{where}.spec")
        name, namespace = meta.get("name"), meta.get("namespace")
        if not isinstance(name, str) or not name or not isinstance(namespace, str):
            raise SnapshotError(f"{where}.metadata: a Workload has a name and a namespace")
        team = queues.get((namespace, spec.get("queueName")))
        why = ("not in a team's namespace and queue" if team is None else
               "finished" if _condition(w, "Finished", where) else
               "deactivated" if spec.get("active") is False else None)
        if why:
            left_out[why] = left_out.get(why, 0) + 1
            continue
        key = f"{namespace}/{name}"
        if key in seen:
            raise SnapshotError(f"{where}: workload {key} is listed twice (also items[{seen[key]}])")
        seen[key] = index
        pod_sets = []
        for i, pod_set in enumerate(_list(spec.get("podSets"), f"{where}.spec.podSets")):
            here = f"{where}.spec.podSets[{i}]"
            pod_set = _mapping(pod_set, here, required=True)
            pod_sets.append(PodSet(str(pod_set.get("name", "main")), _whole(pod_set.get("count"), f"{here}.count", 1, 1),
                                   _requests(pod_set, here)))
        if not pod_sets:
            raise SnapshotError(f"{where}: the workload has no podSets")
        first = _mapping(spec["podSets"][0], f"{where}.spec.podSets[0]")
        template = _mapping(_mapping(first.get("template"), f"{where}.spec.podSets[0].template").get("spec"),
                            f"{where}.spec.podSets[0].template.spec")
        selector = {str(k): str(v) for k, v in
                    _mapping(template.get("nodeSelector"), f"{where}.spec.podSets[0].template.spec.nodeSelector").items()}
        flavor = None
        if index in reserved_at:
            admission = _mapping((_mapping(w.get("status"), f"{where}.status")).get("admission"),
                                 f"{where}.status.admission")
            for j, assignment in enumerate(_list(admission.get("podSetAssignments"),
                                                 f"{where}.status.admission.podSetAssignments")):
                here = f"{where}.status.admission.podSetAssignments[{j}]"
                for found in _mapping(_mapping(assignment, here, required=True).get("flavors"), f"{here}.flavors").values():
                    if not isinstance(found, str) or found not in flavors:
                        raise SnapshotError(f"{here}.flavors: {found!r} is not an instance type of the config's cluster "
                                            f"({', '.join(sorted(flavors)) or 'none'}): the snapshot is not of this "
                                            "environment")
                    flavor = found
        running_since = int((reserved_at[index] - now).total_seconds()) if flavor else None
        workload = Workload(key=key, cluster_queue=team_cluster_queue(team),
                            priority=_whole(spec.get("priority"), f"{where}.spec.priority", 0, -(2 ** 31)),
                            created=int((created[index] - now).total_seconds()), pod_sets=tuple(pod_sets),
                            node_selector=selector)
        per_pod = {TERMS.get(res, res): in_terms(res, amount) for res, amount in pod_sets[0].requests.items()}
        priority_class = spec.get("priorityClassName")
        jobs.append(Job(name=name, team=team, priority_class=priority_class if isinstance(priority_class, str) else None,
                        priority=workload.priority, pods=sum(p.count for p in pod_sets),
                        instance_type=flavor or selector.get(INSTANCE_TYPE_LABEL),
                        per_pod={k: v for k, v in per_pod.items() if isinstance(v, int | Fraction)},
                        submit_at=0 if running_since is None else running_since,
                        runtime=remaining - (running_since or 0) if running_since is not None else remaining,
                        running_since=running_since, workload=workload, line=1))
    return Snapshot(tuple(jobs), now, left_out)
