"""Live checks of the `batch:` section (`hyperpod-kit validate CONFIG --live`), read-only.

Reads the deployed service environments, job queues, their scheduling policies and the quota shares on
the kit's quota-share queues (Describe and List calls only, every page), then reports next to the offline
findings: a queue whose scheduling type differs from the config (HPK716: Batch never adds a policy to a
FIFO queue, never removes one, and never turns a fair-share policy into a quota-share one, so CloudFormation's
update would fail - the queue has to be replaced under a new name), settings that drifted (HPK717), and
quota shares or share identifiers made outside the kit (HPK718).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cdk_app.cli.live import LiveResult, call_api, live_finding, with_part
from cdk_app.cli.live import pages as live_pages
from cdk_app.config.model import KitConfig
from cdk_app.config.yaml_source import SourceMap
from cdk_app.domain.batch_shares import queue_scheduling, quota_share_request, teams_on
from cdk_app.findings import Severity

# The IAM actions the Batch part of --live needs; docs/how-to/batch.md names them.
ACTIONS = ("batch:DescribeServiceEnvironments", "batch:DescribeJobQueues", "batch:DescribeSchedulingPolicies",
           "batch:ListQuotaShares")
ACTIVE = {"CREATING", "UPDATING", "VALID"}


@dataclass
class BatchLiveState:
    environments: dict[str, dict[str, Any]]  # name -> ServiceEnvironmentDetail
    queues: dict[str, dict[str, Any]]  # name -> JobQueueDetail
    policies: dict[str, dict[str, Any]]  # ARN -> SchedulingPolicyDetail
    quota_shares: dict[str, list[dict[str, Any]]]  # queue name -> QuotaShareDetail list


def _pages(client: Any, operation: str, key: str, **params: Any) -> list[dict[str, Any]]:
    return live_pages(client, operation, key, token_key="nextToken", **params)


def gather_batch(config: KitConfig, client: Any) -> BatchLiveState:
    batch = config.batch
    environments = {e["serviceEnvironmentName"]: e for e in _pages(
        client, "describe_service_environments", "serviceEnvironments",
        serviceEnvironments=[e.name for e in batch.service_environments])}
    queues = {q["jobQueueName"]: q for q in _pages(client, "describe_job_queues", "jobQueues",
                                                   jobQueues=[q.name for q in batch.queues])}
    arns = sorted({q["schedulingPolicyArn"] for q in queues.values() if q.get("schedulingPolicyArn")})
    policies = {}
    if arns:
        found = call_api(client, "describe_scheduling_policies", arns=arns)["schedulingPolicies"]
        policies = {p["arn"]: p for p in found}
    shares = {name: _pages(client, "list_quota_shares", "quotaShares", jobQueue=queue["jobQueueArn"])
              for name, queue in queues.items() if _deployed_kind(queue, policies) == "quota_share"}
    return BatchLiveState(environments, queues, policies, shares)


def _deployed_kind(queue: dict[str, Any], policies: dict[str, dict[str, Any]]) -> str:
    arn = queue.get("schedulingPolicyArn")
    return queue_scheduling(arn, policies.get(arn) if arn else None)


def compare_batch(config: KitConfig, source: SourceMap, state: BatchLiveState) -> LiveResult:
    batch = config.batch
    result = LiveResult()

    def add(code: str, severity: Severity, path: tuple[str | int, ...], message: str, hint: str) -> None:
        result.findings.append(live_finding(source, code, severity, ("batch", *path), message, hint))

    for i, env in enumerate(batch.service_environments):
        live = state.environments.get(env.name)
        if live is None:
            add("HPK717", Severity.WARNING, ("service_environments", i, "name"),
                f"service environment '{env.name}' is not deployed", "deploy the Batch stack")
            continue
        wanted = sorted((c.unit, c.max_capacity) for c in env.capacity_limits)
        actual = sorted((c.get("capacityUnit"), c.get("maxCapacity")) for c in live.get("capacityLimits", []))
        if wanted != actual:
            add("HPK717", Severity.WARNING, ("service_environments", i, "capacity_limits"),
                f"service environment '{env.name}' has capacity {actual} deployed, the config says {wanted}",
                "deploy the Batch stack, or bring the config in line with the change")
    queues_section = []
    for i, queue in enumerate(batch.queues):
        live = state.queues.get(queue.name)
        if live is None:
            add("HPK717", Severity.WARNING, ("queues", i, "name"), f"job queue '{queue.name}' is not deployed",
                "deploy the Batch stack")
            continue
        kind = _deployed_kind(live, state.policies)
        queues_section.append({"name": queue.name, "scheduling": kind, "priority": live.get("priority"),
                               "state": live.get("state"), "status": live.get("status")})
        if kind != queue.scheduling:
            add("HPK716", Severity.ERROR, ("queues", i, "scheduling"),
                f"job queue '{queue.name}' is deployed as {kind}, the config makes it {queue.scheduling}: Batch cannot "
                "change a queue's scheduling type, so the deployment would fail",
                f"give the {queue.scheduling} queue a new name (a new queue is created, the old one removed) and move "
                f"its teams, or keep scheduling: {kind}")
            continue
        if live.get("priority") != queue.priority:
            add("HPK717", Severity.WARNING, ("queues", i, "priority"),
                f"job queue '{queue.name}' has priority {live.get('priority')} deployed, the config says {queue.priority}",
                "deploy the Batch stack, or bring the config in line with the change")
        timeouts = [a.get("maxTimeSeconds") for a in live.get("jobStateTimeLimitActions", []) if a.get("state") == "RUNNABLE"]
        if timeouts != ([queue.runnable_timeout_seconds] if queue.runnable_timeout_seconds else []):
            add("HPK717", Severity.WARNING, ("queues", i, "runnable_timeout_seconds"),
                f"job queue '{queue.name}' has runnable timeout {timeouts[0] if timeouts else 'none'} deployed, the "
                f"config says {queue.runnable_timeout_seconds or 'none'}",
                "deploy the Batch stack, or bring the config in line with the change")
        if kind == "fair_share":
            _compare_fair_share(queue, i, batch, state.policies.get(live["schedulingPolicyArn"], {}), add)
        elif kind == "quota_share":
            _compare_quota_shares(queue, i, batch, state.quota_shares.get(queue.name, []), add)
    result.section = {"service_environments": sorted(state.environments), "queues": queues_section,
                      "quota_shares": {q: sorted(s["quotaShareName"] for s in shares)
                                       for q, shares in sorted(state.quota_shares.items())}}
    return result


def _compare_fair_share(queue: Any, index: int, batch: Any, policy: dict[str, Any], add: Any) -> None:
    fair = policy.get("fairsharePolicy", {})
    live_shares = {s["shareIdentifier"]: s.get("weightFactor") for s in fair.get("shareDistribution", [])}
    wanted = {t.share_identifier: t.weight_factor for t in teams_on(batch, queue.name) if t.share_identifier}
    for identifier, weight in sorted(live_shares.items()):
        if identifier not in wanted:
            add("HPK718", Severity.WARNING, ("queues", index, "name"),
                f"share identifier '{identifier}' (weight factor {weight}) on queue '{queue.name}' was made outside the kit",
                "add a team with that share identifier to the config, or remove it from the policy")
        elif wanted[identifier] is not None and weight != wanted[identifier]:
            add("HPK717", Severity.WARNING, ("queues", index, "name"),
                f"share '{identifier}' on queue '{queue.name}' has weight factor {weight} deployed, the config says "
                f"{wanted[identifier]}", "deploy the Batch stack, or bring the config in line with the change")
    for field, key in (("share_decay_seconds", "shareDecaySeconds"), ("compute_reservation", "computeReservation")):
        configured = getattr(queue, field)
        if configured is not None and fair.get(key) != configured:
            add("HPK717", Severity.WARNING, ("queues", index, field),
                f"queue '{queue.name}' has {key} {fair.get(key)} deployed, the config says {configured}",
                "deploy the Batch stack, or bring the config in line with the change")


def _compare_quota_shares(queue: Any, queue_index: int, batch: Any, live_shares: list[dict[str, Any]], add: Any) -> None:
    teams = {t.name: (i, t) for i, t in enumerate(batch.teams) if queue.name in t.queues}
    for share in live_shares:
        name = share["quotaShareName"]
        if name not in teams:
            held = ", ".join(f"{c['maxCapacity']} {c['capacityUnit']}" for c in share.get("capacityLimits", []))
            add("HPK718", Severity.WARNING, ("queues", queue_index, "name"),
                f"quota share '{name}' on queue '{queue.name}' was made outside the kit and holds {held or 'nothing'}",
                "add the team to the config, or delete the quota share, so one place decides the split")
            continue
        index, team = teams[name]
        wanted = quota_share_request(team, share.get("jobQueueArn", ""))
        for key in ("capacityLimits", "resourceSharingConfiguration", "preemptionConfiguration", "state"):
            if _normal(share.get(key)) != _normal(wanted[key]):
                add("HPK717", Severity.WARNING, ("teams", index),
                    f"quota share '{name}' has {key} {share.get(key)} deployed, the config says {wanted[key]}",
                    "deploy the Batch stack, or bring the config in line with the change")
    deployed = {s["quotaShareName"] for s in live_shares}
    for name, (index, _) in teams.items():
        if name not in deployed:
            add("HPK717", Severity.WARNING, ("teams", index, "name"),
                f"quota share '{name}' is not deployed on queue '{queue.name}'", "deploy the Batch stack")


def _normal(value: Any) -> Any:
    """Compare lists of limits in any order; a LEND_AND_BORROW share without borrowLimit has Batch's -1."""
    if isinstance(value, list):
        return sorted((_normal(v) for v in value), key=repr)
    if isinstance(value, dict):
        normal = {k: _normal(v) for k, v in value.items()}
        if normal.get("strategy") == "LEND_AND_BORROW":
            normal.setdefault("borrowLimit", -1)
        return normal
    return value


def with_batch(result: LiveResult, config: KitConfig, source: SourceMap, session: Any, client_config: Any) -> LiveResult:
    """The HyperPod live result plus the Batch checks (under section "batch")."""
    if config.batch is None:
        return result
    return with_part(result, source, "batch", "AWS Batch", lambda: compare_batch(
        config, source, gather_batch(config, session.client("batch", config=client_config))))
