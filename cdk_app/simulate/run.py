"""One simulation of an environment's task governance: the config's Kueue objects, the in-process Kueue
scheduler, the workload's jobs on the timeline, the summary - and a finding per job that can never run."""

from __future__ import annotations

from typing import Any

from cdk_app.config.model import KitConfig
from cdk_app.domain.capacity import (
    Resources,
    capacity_of,
    cluster_capacity,
    most_accelerators,
    node_partitions,
    partition_capacity,
    team_groups,
)
from cdk_app.domain.kueue_mapping import Choices, flavor_resources
from cdk_app.domain.mig_profiles import RESOURCE_PREFIX
from cdk_app.findings import Finding, Severity, format_path
from cdk_app.simulate.engine import Timeline, simulate, total_requests
from cdk_app.simulate.governance import TERMS, in_terms, kueue_units, pool_quota, queue_quotas, setup_document
from cdk_app.simulate.report import summarize
from cdk_app.simulate.workloads import Job, WorkloadFile
from cdk_app.support.text_table import printable


def in_kueue_units(itype: str, amounts: Resources) -> dict[str, int]:
    """Capacity of a type as Kueue counts it: the mapping's own flavor quantities, in Kueue's units."""
    return {res: kueue_units(res, quantity) for res, quantity in flavor_resources(itype, amounts).items()}


def instance_resources(itype: str) -> dict[str, int]:
    """What one instance of a type holds, in Kueue's units."""
    return in_kueue_units(itype, capacity_of([(itype, 1)])[itype])


def cluster_resources(config: KitConfig) -> dict[str, dict[str, int]]:
    if config.hyperpod is None:
        return {}
    return {itype: in_kueue_units(itype, amounts) for itype, amounts in cluster_capacity(config).items()}


def pod_too_large(job: Job, config: KitConfig, sizes: dict[str, dict[str, int]] | None = None) -> str | None:
    """Why no node could ever hold one of the job's pods (Kueue would admit it, holding the team's quota,
    while its pods stay Pending), or None. `sizes`: instance_resources per type, filled as types are met (a run
    passes one dict for all its jobs)."""
    sizes = {} if sizes is None else sizes
    types = [job.instance_type] if job.instance_type else sorted(cluster_resources(config))
    requests = job.workload.pod_sets[0].requests
    fits = []
    for t in types:
        size = sizes.get(t)
        if size is None:
            # One node's partitions too: a pod of partitions gets them from one node (its group's geometry).
            size = sizes[t] = {**instance_resources(t), **{RESOURCE_PREFIX + p: n
                                                           for p, n in node_partitions(config, t).items()}}
        if all(amount <= size.get(res, 0) for res, amount in requests.items()):
            fits.append(t)
    if fits:
        return None
    where = job.instance_type or "any instance type of the cluster"
    return (f"one pod asks for more than one instance of {where} holds; Kueue would admit it against the team's "
            "quota and its pods would never start")


def running_overcommit(config: KitConfig, file: str, jobs: list[Job], quotas: dict) -> list[Finding]:
    """Jobs already running at the start (running_since, a snapshot) that hold more than the cluster has (an
    error: no simulation can start from there) or more than their team can reach under this config (a warning:
    Kueue keeps running workloads when a quota shrinks, and admits nothing more for the team meanwhile)."""
    capacity = cluster_resources(config)
    held: dict[str, dict[str, int]] = {}
    by_team: dict[tuple[str, str], dict[str, int]] = {}
    for job in jobs:
        if job.running_since is None:
            continue
        flavor = job.instance_type
        for res, amount in total_requests(job).items():
            slot = held.setdefault(flavor, {})
            slot[res] = slot.get(res, 0) + amount
            team = by_team.setdefault((job.team, flavor), {})
            team[res] = team.get(res, 0) + amount
    findings = []
    for flavor, amounts in sorted(held.items()):
        over = [res for res, amount in amounts.items() if amount > capacity.get(flavor, {}).get(res, 0)]
        if over:
            res = over[0]
            findings.append(Finding("HPK806", Severity.ERROR, file, 1, 1, "", f"the running jobs hold "
                                    f"{describe_amount(res, amounts[res])} of {flavor}; the cluster has "
                                    f"{describe_amount(res, capacity.get(flavor, {}).get(res, 0))}",
                                    "the snapshot or the running_since jobs are not of this environment's cluster"))
    for (team, flavor), amounts in sorted(by_team.items()):
        quota = quotas.get(team)
        nominal = quota.nominal.get(flavor, {}) if quota else {}
        limits = quota.borrowing_limit.get(flavor, {}) if quota else {}
        for res, amount in amounts.items():
            reach = nominal.get(res, 0) + limits.get(res, amount)  # no borrowingLimit: the cohort bounds it
            if amount > reach:
                findings.append(Finding("HPK807", Severity.WARNING, file, 1, 1, "", f"team {team}'s running jobs hold "
                                        f"{describe_amount(res, amount)} of {flavor}, above the "
                                        f"{describe_amount(res, reach)} it can reach under this config",
                                        "Kueue leaves running workloads be when a quota shrinks; the team gets "
                                        "nothing more until they finish"))
                break
    return findings


def never_admitted(file: str, job: Job, reason: str) -> Finding:
    return Finding("HPK803", Severity.ERROR, file, job.line, 1, "", f"job {printable(job.name)} of team {job.team} "
                   f"can never be admitted: {reason}", "make it smaller, or give the team the quota it needs")


def simulate_batch_jobs(config: KitConfig, workloads: WorkloadFile) -> tuple[dict[str, Any] | None, list[Finding]]:
    """The workload's AWS Batch jobs on the environment's batch: queues (None without any), and findings: a bad
    entry (HPK801, nothing simulated) or a job the queues can never run (HPK803, still simulated)."""
    from cdk_app.simulate.batch import parse_batch_jobs, simulate_batch
    from cdk_app.simulate.errors import WorkloadError

    if not workloads.batch_items:
        return None, []

    def finding(code: str, path: tuple[str | int, ...], message: str, hint: str) -> Finding:
        where = workloads.source.locate(path) if workloads.source is not None else None
        return Finding(code, Severity.ERROR, workloads.file, where.line if where else 1, where.column if where else 1,
                       format_path(path), message, hint)

    try:
        parsed = parse_batch_jobs(config.batch, workloads.batch_items)
    except WorkloadError as err:
        return None, [finding("HPK801", err.path, err.message, "see the batch_jobs format in the README")]
    findings = [finding("HPK803", ("batch_jobs", never.index), f"Batch job {printable(never.job)} can never run: "
                        f"{never.reason}", "make it smaller, or give its share the capacity it needs")
                for never in parsed.never_runs]
    result = simulate_batch(config, parsed.jobs)
    if result.loop is not None:
        findings.append(Finding("HPK805", Severity.ERROR, workloads.file, 1, 1, "", f"at {result.loop[0]} s the Batch "
                                f"queues admit and preempt {', '.join(result.loop[1])} again and again without "
                                "settling (the kit's reading of quota-share reclaim); the run stopped there",
                                "change the jobs' priorities or sizes, or the shares' borrow limits"))
    return result.to_json(), findings


def not_simulated(choices: Choices) -> dict[str, Any]:
    """The summary of a run that simulated nothing (no task-governance jobs, or a start that cannot be)."""
    return {"choices": choices.describe(), "window": {"start": 0, "end": 0}, "loop": None, "jobs": [], "teams": [],
            "utilization": None}


def describe_amount(resource: str, amount: int) -> str:
    return f"{in_terms(resource, amount)} {TERMS.get(resource, resource)}"


def simulate_environment(config: KitConfig, workloads: WorkloadFile, choices: Choices,
                         trace: bool = False) -> tuple[dict[str, Any], list[Finding], Timeline | None]:
    from cdk_app.simulate.kueue.scheduler import KueueScheduler

    findings, runnable, too_large = [], [], []
    sizes: dict[str, dict[str, int]] = {}
    for job in workloads.jobs:
        reason = pod_too_large(job, config, sizes)
        if reason is None:
            runnable.append(job)
        else:
            too_large.append((job, reason))
            findings.append(never_admitted(workloads.file, job, reason))
    doc = setup_document(config, choices)
    quotas = queue_quotas(config, doc)
    overcommit = running_overcommit(config, workloads.file, runnable, quotas)
    if any(f.severity == Severity.ERROR for f in overcommit):
        return not_simulated(choices), findings + overcommit, None
    findings += overcommit
    scheduler = KueueScheduler(doc)
    try:
        timeline = simulate(runnable, scheduler, quotas, pool_quota(doc), cluster_resources(config),
                            trace)
    finally:
        scheduler.close()
    partitions = {f"{profile} on {itype}": n for (itype, profile), n in sorted(partition_capacity(config).items())}
    summary = summarize(timeline, choices.describe(), most_accelerators(team_groups(config)), partitions)
    # Jobs left out of the timeline still belong in the report: submitted, and never admitted for that reason.
    teams = {team["team"]: team for team in summary["teams"]}
    for job, reason in too_large:
        at = job.submit_at
        summary["jobs"].append({"name": job.name, "team": job.team, "priority": job.priority_class, "events": [
            {"at": at, "seq": 0, "event": "submitted"}, {"at": at, "seq": 0, "event": "unschedulable", "reason": reason}]})
        if job.team in teams:
            teams[job.team]["unschedulable"] += 1
    if summary["loop"] is not None:
        findings.append(Finding("HPK805", Severity.ERROR, workloads.file, 1, 1, "",
                                f"at {summary['loop']['at']} s Kueue admits and preempts "
                                f"{', '.join(summary['loop']['jobs'])} again and again without settling",
                                "a preemption loop of Kueue's own (the real Kueue v0.19.2 does the same): change "
                                "the fair-share weights, borrow limits or priorities of the teams involved"))
    for record in timeline.jobs:
        for event in record.events:
            if event.event == "unschedulable":
                findings.append(never_admitted(workloads.file, record.job, f"Kueue leaves it pending: {event.reason}"))
    return summary, findings, timeline
