"""The workload file of `hyperpod-kit simulate`: the jobs a simulation replays, checked against the environment
they run in, with the config's treatment of bad input (file, line, field, what is allowed).

    jobs:
      - name: a1
        team: john
        priority: training          # optional: a class of the cluster policy; none = the lowest (0)
        pods: 2                     # pods of one pod set, admitted together (gang)
        per_pod: {instance_type: ml.g5.12xlarge, accelerators: 4}   # and/or vcpu, memory_gib, efa, or
                                    # mig: mig-1g.10gb:2 (MIG partitions instead of accelerators, as job --mig)
        submit_at: 0                # seconds from the start
        runtime: 3600               # seconds of work once admitted; a preempted job starts again
        running_since: -600         # optional: already admitted at the start (a snapshot of a live cluster)

A job becomes the Workload task governance would see (cdk_app.simulate.kueue.api): its team's ClusterQueue,
the priority class's weight as its priority (kueue_mapping.priority_classes), per pod the requests in Kueue's
units, and the node selector the HyperPod CLI writes for an instance type.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from cdk_app.config.model import KitConfig
from cdk_app.config.names import team_cluster_queue, team_namespace
from cdk_app.config.yaml_source import ConfigReadError, SourceMap, parse_yaml, read_text
from cdk_app.domain.capacity import cluster_capacity
from cdk_app.domain.instance_types import ACCELERATOR_RESOURCES, CATALOGUE, EFA_RESOURCE
from cdk_app.domain.kueue_mapping import INSTANCE_TYPE_LABEL
from cdk_app.domain.mig_profiles import INSTANCE_GPUS, profiles_of
from cdk_app.findings import Finding, Severity, format_path
from cdk_app.kubernetes.job_partitions import parse_mig, partition_limits
from cdk_app.simulate.kueue.api import PodSet, Workload

JOB_KEYS = ("name", "team", "priority", "pods", "per_pod", "submit_at", "runtime", "running_since")
PER_POD_KEYS = ("instance_type", "accelerators", "vcpu", "memory_gib", "efa", "mig")
# A month and a day of simulated seconds is what the simulator is built for; a year bounds what a typo can ask.
MAX_SECONDS = 366 * 24 * 3600
MAX_PODS = 10_000
MAX_JOBS = 100_000
GIB = 1024 ** 3
# Kubernetes object names: the job's name becomes a Workload's.
NAME_PATTERN = "lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters"


class WorkloadInvalid(Exception):
    """The workload file cannot be used: `findings` say where and why; `unreadable` for a file that is not
    even YAML (exit 2), otherwise its entries are wrong (exit 1)."""

    def __init__(self, findings: list[Finding], unreadable: bool) -> None:
        super().__init__("; ".join(f.render() for f in findings))
        self.findings = findings
        self.unreadable = unreadable


@dataclass(frozen=True, slots=True)
class Job:
    name: str
    team: str
    priority_class: str | None
    priority: int
    pods: int
    instance_type: str | None
    # Per pod, in the config's terms (what reports speak): accelerators, vcpu, memory_gib, efa.
    per_pod: dict[str, Fraction | int]
    submit_at: int
    runtime: int
    running_since: int | None
    workload: Workload
    line: int  # where the job is written, for findings about it


@dataclass(frozen=True, slots=True)
class WorkloadFile:
    file: str
    jobs: tuple[Job, ...]
    batch_items: list[Any]  # the `batch_jobs:` entries, read by cdk_app.simulate.batch
    source: SourceMap | None  # None for a live snapshot


def read_workload_file(path: str, display_name: str | None = None) -> tuple[Any, SourceMap]:
    """The file's data and source map; WorkloadInvalid(unreadable) when it is not one YAML document."""
    name = display_name or path
    try:
        data, source = parse_yaml(read_text(Path(path), name), name)
    except ConfigReadError as err:
        raise WorkloadInvalid([err.finding], unreadable=True) from None
    return data, source


def load_workloads(path: str, config: KitConfig, display_name: str | None = None) -> WorkloadFile:
    data, source = read_workload_file(path, display_name)
    return parse_workloads(data, source, config)


class _Checker:
    """Collects located findings while the entries are read, so one run names every bad field."""

    def __init__(self, source: SourceMap) -> None:
        self.source = source
        self.findings: list[Finding] = []

    def fail(self, path: tuple[str | int, ...], message: str, hint: str, code: str = "HPK801") -> None:
        where = self.source.locate(path)
        self.findings.append(Finding(code, Severity.ERROR, self.source.file, where.line, where.column,
                                     format_path(path), message, hint))

    def whole(self, item: dict, path: tuple, key: str, low: int, high: int, default: int | None = None) -> int | None:
        value = item.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail((*path, key), f"{_shown(value)} is not a whole number", f"a whole number from {low} to {high}")
            return None
        if not low <= value <= high:
            self.fail((*path, key), f"{value} is out of range", f"a whole number from {low} to {high}", "HPK801")
            return None
        return value

    def amount(self, item: dict, path: tuple, key: str, high: int) -> Fraction | None:
        """A positive amount written as a number (vcpu 0.5, memory_gib 1.5), exactly as written."""
        value = item.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail((*path, key), f"{_shown(value)} is not a number", f"a number above 0, at most {high}")
            return None
        if isinstance(value, float) and not math.isfinite(value):
            self.fail((*path, key), f"{value} is not a finite number", f"a number above 0, at most {high}")
            return None
        exact = Fraction(str(value)) if isinstance(value, float) else Fraction(value)
        if not 0 < exact <= high:
            self.fail((*path, key), f"{value} is out of range", f"a number above 0, at most {high}")
            return None
        return exact

    def unknown_keys(self, item: dict, path: tuple, allowed: tuple[str, ...]) -> None:
        for key in item:
            if key not in allowed:
                self.fail((*path, key), f"unknown key {_shown(key)}", f"allowed: {', '.join(allowed)}")


def _shown(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _valid_name(name: str) -> bool:
    if not 0 < len(name) <= 63 or not name[0].isalnum() or not name[-1].isalnum():
        return False
    return all(c.islower() or c.isdigit() or c == "-" for c in name) and name.isascii()


def parse_workloads(data: Any, source: SourceMap, config: KitConfig) -> WorkloadFile:
    """The jobs of a workload document for `config`'s task governance; WorkloadInvalid naming every bad field."""
    check = _Checker(source)
    if not isinstance(data, dict):
        what = "empty" if data is None else "not a mapping of keys"
        raise WorkloadInvalid([Finding("HPK003", Severity.ERROR, source.file, 1, 1, "", f"the document is {what}",
                                       "a workload file is a mapping with `jobs:` (and `batch_jobs:`), a list of "
                                       "jobs each with name, team, pods, per_pod, submit_at and runtime")],
                              unreadable=True)
    check.unknown_keys(data, (), ("jobs", "batch_jobs"))
    items = data.get("jobs", [])
    items = [] if items is None else items  # `jobs:` with nothing under it
    if not isinstance(items, list):
        check.fail(("jobs",), "jobs is not a list", "a list of jobs, each a mapping with name, team, pods, ...")
        items = []
    if len(items) > MAX_JOBS:
        check.fail(("jobs",), f"{len(items)} jobs", f"at most {MAX_JOBS:,} jobs in one file")
        items = []
    batch_items = data.get("batch_jobs", [])
    batch_items = [] if batch_items is None else batch_items
    if not isinstance(batch_items, list):
        check.fail(("batch_jobs",), "batch_jobs is not a list", "a list of AWS Batch jobs")
        batch_items = []
    if not items and not batch_items and not check.findings:
        check.fail((), "the file has no jobs", "list at least one job under `jobs:` (or `batch_jobs:`)")
    teams = {team.name: team for team in config.teams}
    if config.shared_pool is not None:
        teams.setdefault(config.shared_pool.name, None)
    classes = {pc.name: pc.weight for pc in config.cluster_policy.priority_classes}
    types = sorted(cluster_capacity(config)) if config.hyperpod is not None else []
    jobs: list[Job] = []
    seen: dict[tuple[str, str], int] = {}
    for index, item in enumerate(items):
        job = _job(check, item, ("jobs", index), config, teams, classes, types)
        if job is None:
            continue
        if (job.team, job.name) in seen:
            check.fail(("jobs", index, "name"), f"job {job.name!r} of team {job.team} is listed twice "
                       f"(also jobs[{seen[job.team, job.name]}])", "give each job of a team its own name", "HPK804")
            continue
        seen[job.team, job.name] = index
        jobs.append(job)
    if check.findings:
        raise WorkloadInvalid(sorted(check.findings, key=lambda f: (f.line, f.column, f.path)), unreadable=False)
    return WorkloadFile(source.file, tuple(jobs), batch_items, source)


def _job(check: _Checker, item: Any, path: tuple, config: KitConfig, teams: dict, classes: dict[str, int],
         types: list[str]) -> Job | None:
    if not isinstance(item, dict):
        check.fail(path, "a job is not a mapping of keys", "name, team, pods, per_pod, submit_at, runtime")
        return None
    before = len(check.findings)
    check.unknown_keys(item, path, JOB_KEYS)
    for key in ("name", "team", "per_pod", "runtime"):
        if key not in item:
            check.fail(path, f"the job has no {key}", f"every job has {key}", "HPK801")
    name, team_name = item.get("name"), item.get("team")
    if name is not None and not (isinstance(name, str) and _valid_name(name)):
        check.fail((*path, "name"), f"{_shown(name)} is not a valid job name", NAME_PATTERN)
    team = None
    if team_name is not None:
        if not isinstance(team_name, str) or team_name not in teams:
            known = ", ".join(sorted(teams)) or "none: the config has no teams"
            check.fail((*path, "team"), f"team {_shown(team_name)} is not a team of environment {config.environment}",
                       f"one of: {known}", "HPK802")
        else:
            team = teams[team_name]
            if team is not None and not team.enabled:
                check.fail((*path, "team"), f"team {team_name}'s compute allocation is disabled (enabled: false): "
                           "task governance makes no queue for it", "pick an enabled team", "HPK802")
    priority_class, priority = item.get("priority"), 0
    if priority_class is None and config.cluster_policy.require_priority_class and classes:
        check.fail(path, "the job has no priority, and the cluster policy requires a priority class "
                   "(require_priority_class: the admission guardrail refuses such a job)",
                   f"give priority: one of {', '.join(classes)}", "HPK802")
    if priority_class is not None:
        if not isinstance(priority_class, str) or priority_class not in classes:
            known = ", ".join(classes) or "none: the cluster policy has no priority classes"
            check.fail((*path, "priority"), f"priority class {_shown(priority_class)} is not in the cluster policy",
                       f"one of: {known}; leave it out for the lowest priority", "HPK802")
        else:
            priority = classes[priority_class]
            allowed = team.priority_classes if team is not None else None
            if allowed is not None and priority_class not in allowed:
                check.fail((*path, "priority"), f"team {team_name} may not use priority class {priority_class} "
                           "(the admission guardrail refuses it)", f"one of: {', '.join(allowed) or 'none'}", "HPK802")
    pods = check.whole(item, path, "pods", 1, MAX_PODS, default=1)
    submit_at = check.whole(item, path, "submit_at", 0, MAX_SECONDS, default=0)
    runtime = check.whole(item, path, "runtime", 1, MAX_SECONDS)
    running_since = check.whole(item, path, "running_since", -MAX_SECONDS, 0)
    if running_since is not None and "submit_at" in item:
        check.fail((*path, "running_since"), "a job has either running_since (already admitted at the start) or "
                   "submit_at (submitted during the simulation), not both", "leave out one of them")
    if running_since is not None and runtime is not None and running_since + runtime <= 0:
        check.fail((*path, "running_since"), f"the job ran since {running_since} s for {runtime} s: it finished "
                   "before the start", "leave it out, or give a runtime beyond -running_since")
    per_pod = _per_pod(check, item.get("per_pod"), (*path, "per_pod"), types, running_since is not None)
    if len(check.findings) > before or per_pod is None or team_name is None or name is None:
        return None
    requests, selector, amounts, itype = per_pod
    workload = Workload(key=f"{team_namespace(team_name)}/{name}", cluster_queue=team_cluster_queue(team_name),
                        priority=priority, created=running_since if running_since is not None else submit_at,
                        pod_sets=(PodSet("main", pods, requests),), node_selector=selector)
    return Job(name, team_name, priority_class, priority, pods, itype, amounts,
               submit_at if running_since is None else running_since, runtime, running_since, workload,
               check.source.locate(path).line)


def _per_pod(check: _Checker, per_pod: Any, path: tuple, types: list[str], running: bool):
    """Requests in Kueue's units, node selector, amounts in the config's terms and instance type of one pod."""
    if per_pod is None:
        return None
    if not isinstance(per_pod, dict):
        check.fail(path, "per_pod is not a mapping", f"a mapping of {', '.join(PER_POD_KEYS)}")
        return None
    before = len(check.findings)
    check.unknown_keys(per_pod, path, PER_POD_KEYS)
    itype = per_pod.get("instance_type")
    if itype is not None and (not isinstance(itype, str) or itype not in types):
        check.fail((*path, "instance_type"), f"{_shown(itype)} is not an instance type of the cluster",
                   f"one of: {', '.join(types) or 'none: the environment has no HyperPod cluster'}", "HPK802")
        itype = None
    if running and itype is None and "instance_type" not in per_pod:
        check.fail(path, "a running job (running_since) has no instance_type", "say which instance type it runs on")
    accelerators = check.whole(per_pod, path, "accelerators", 1, 64)
    efa = check.whole(per_pod, path, "efa", 1, 64)
    vcpu = check.amount(per_pod, path, "vcpu", 4096)
    memory = check.amount(per_pod, path, "memory_gib", 65536)
    mig = _mig(check, per_pod, path, itype, accelerators)
    if (accelerators is None and vcpu is None and memory is None and mig is None
            and len(check.findings) == before):
        check.fail(path, "the pod requests nothing", "give accelerators, vcpu or memory_gib (or several)")
    if len(check.findings) > before:
        return None
    requests: dict[str, int] = {}
    amounts: dict[str, Fraction | int] = {}
    if accelerators is not None:
        kinds = {CATALOGUE[t].accelerator_kind for t in ([itype] if itype else types)} - {None}
        if len(kinds) != 1:
            check.fail((*path, "accelerators"), "accelerators on " + (f"{itype}, which has none" if itype else
                       "a cluster with no single accelerator kind"),
                       "give an instance_type with accelerators" if not itype else "leave out accelerators")
            return None
        requests[ACCELERATOR_RESOURCES[kinds.pop()]] = accelerators
        amounts["accelerators"] = accelerators
    if vcpu is not None:
        requests["cpu"] = int(vcpu * 1000)
        amounts["vcpu"] = vcpu
        if vcpu * 1000 != requests["cpu"]:
            check.fail((*path, "vcpu"), f"{float(vcpu)} is finer than a millicore", "at most 3 decimals")
            return None
    if memory is not None:
        requests["memory"] = int(memory * GIB)
        amounts["memory_gib"] = memory
        if memory * GIB != requests["memory"]:
            check.fail((*path, "memory_gib"), "not a whole number of bytes", "a number of GiB in whole bytes")
            return None
    if efa is not None:
        requests[EFA_RESOURCE] = efa
        amounts["efa"] = efa
    requests.update(partition_limits(mig))
    selector = {INSTANCE_TYPE_LABEL: itype} if itype else {}
    return requests, selector, amounts, itype


def _mig(check: _Checker, per_pod: dict, path: tuple, itype: str | None, accelerators: int | None):
    """per_pod.mig, PROFILE[:COUNT] as `job --mig` takes it, on an instance type whose GPU offers the profile."""
    text = per_pod.get("mig")
    if text is None:
        return None
    where = (*path, "mig")
    try:
        profile, count = parse_mig(text if isinstance(text, str) else "", "mig")
    except ValueError as err:
        check.fail(where, str(err) if isinstance(text, str) else f"{_shown(text)} is not text",
                   "a MIG profile and partitions per pod, e.g. mig-1g.10gb or mig-1g.10gb:2")
        return None
    if itype is None or profile not in profiles_of(itype) or accelerators is not None:
        check.fail(where, f"{profile} needs an instance_type whose GPU offers it, and no accelerators beside it",
                   f"give instance_type (MIG types: {', '.join(sorted(INSTANCE_GPUS))}) and leave out accelerators")
        return None
    return profile, count
