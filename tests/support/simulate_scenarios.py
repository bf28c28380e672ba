"""Random simulate scenarios, seeded: an environment (a kit config of `teams` teams sharing `nodes` GPU nodes) and
jobs submitted over a span of time with runtimes, as cdk_app.simulate.kueue.api Workloads. The real-Kueue oracle
(support.kueue_session), the in-process scheduler and the benchmark read the same scenarios, written as workload
files (scenario_file) and replayed by the kit's own timeline (replay).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import yaml

from cdk_app.config.loader import load_config
from cdk_app.config.model import KitConfig
from cdk_app.config.names import team_cluster_queue, team_namespace
from cdk_app.config.yaml_source import parse_yaml
from cdk_app.simulate.engine import Timeline, simulate
from cdk_app.simulate.governance import pool_quota, queue_quotas, setup_document
from cdk_app.simulate.kueue.api import PodSet, Scheduler, Workload
from cdk_app.simulate.run import cluster_resources
from cdk_app.simulate.workloads import WorkloadFile, parse_workloads
from support.paths import ROOT

GPU_NODE = "ml.g5.12xlarge"  # 4 GPUs, 48 vCPU, 192 GiB
GPUS_PER_NODE = 4
MONTH = 30 * 24 * 3600
GIB = 2**30
PRIORITY_CLASSES = ({"name": "low", "weight": 10}, {"name": "normal", "weight": 50}, {"name": "high", "weight": 90})


def random_environment(seed: int, teams: int, nodes: int) -> dict[str, Any]:
    """A KitConfig-compatible dict: config/dev.yaml with one GPU instance group of `nodes` ml.g5.12xlarge and
    `teams` teams whose quotas (1 to 3 nodes each, while nodes last; the rest no team holds) and sharing settings
    are drawn from `seed`, with three priority classes. Validate it with KitConfig.model_validate."""
    rng = random.Random(seed)
    base = load_config(ROOT / "config" / "dev.yaml").config.model_dump(mode="json", exclude_none=True)
    gpu_group = next(g for g in base["hyperpod"]["instance_groups"] if g["instance_type"] == GPU_NODE)
    base["hyperpod"]["instance_groups"] = [{**gpu_group, "count": nodes}]
    base["cluster_policy"] = {"priority_classes": list(PRIORITY_CLASSES),
                              "fair_share": rng.choice(["Enabled", "Disabled"]), "idle_resource_sharing": "Enabled"}
    left = nodes
    team_list = []
    for i in range(teams):
        count = min(left, rng.randint(1, 3))
        left -= count
        team_list.append({
            "name": f"team-{i:03d}", "fair_share_weight": rng.randint(0, 100),
            "sharing_strategy": rng.choice(["LendAndBorrow", "LendAndBorrow", "Lend", "DontLend"]),
            "borrow_limit": rng.choice([25, 50, 100, 200]),
            "preempt_team_tasks": rng.choice(["Never", "LowerPriority"]),
            "quota": [{"instance_type": GPU_NODE, "count": count}]})
    base["teams"] = team_list
    return base


def random_config(seed: int, teams: int, nodes: int) -> KitConfig:
    return KitConfig.model_validate(random_environment(seed, teams, nodes))


@dataclass(frozen=True, slots=True)
class Job:
    workload: Workload  # workload.created is the submission time
    runtime: int  # seconds, from each admission (a preempted job starts over)


def random_jobs(seed: int, config: KitConfig, count: int, span: int = MONTH) -> list[Job]:
    """`count` jobs of the config's teams with a GPU quota, submitted uniformly over `span` seconds (in
    submission order): 1 to 4 pods of 1, 2 or 4 GPUs (with 8 vCPU and 32 GiB per GPU) within the team's nominal
    GPUs (so every job can run), a priority class value or 0, running 10 minutes to 2 days (log-uniform)."""
    rng = random.Random(seed)
    nominal = {t.name: sum(q.count or 0 for q in t.quota if q.instance_type == GPU_NODE) * GPUS_PER_NODE
               for t in config.teams if t.enabled}
    teams = [name for name, gpus in nominal.items() if gpus > 0]
    values = [0, *(pc.weight for pc in config.cluster_policy.priority_classes)]
    times = sorted(rng.randrange(span) for _ in range(count))
    jobs = []
    for i, created in enumerate(times):
        team = rng.choice(teams)
        gpus = rng.choice([g for g in (1, 2, 4) if g <= nominal[team]])
        pods = rng.choice([p for p in (1, 1, 2, 4) if p * gpus <= nominal[team]])
        requests = {"nvidia.com/gpu": gpus, "cpu": gpus * 8000, "memory": gpus * 32 * GIB}
        workload = Workload(key=f"{team_namespace(team)}/job-{i:05d}", cluster_queue=team_cluster_queue(team),
                            priority=rng.choice(values), created=created,
                            pod_sets=(PodSet("main", pods, requests),))
        jobs.append(Job(workload, int(600 * (288 ** rng.random()))))
    return jobs


def random_workload(seed: int, config: KitConfig, count: int, span: int) -> dict[str, Any]:
    """A workload file's document (jobs:) for `config`: random_jobs' jobs written as a user writes them (team,
    priority class by name, pods, per_pod, submit_at, runtime), each submitted at a second of its own so no two
    are tied in Kueue's queue order (Kueue breaks such ties by UID, which a file does not carry)."""
    names = {pc.weight: pc.name for pc in config.cluster_policy.priority_classes}
    jobs, used = [], set()
    for job in random_jobs(seed, config, count, span):
        at = job.workload.created
        while at in used:
            at += 1
        used.add(at)
        pod_set = job.workload.pod_sets[0]
        entry: dict[str, Any] = {"name": job.workload.key.split("/")[1], "team": job.workload.key.split("/")[0]
                                 .removeprefix("hyperpod-ns-"), "pods": pod_set.count,
                                 "per_pod": {"instance_type": GPU_NODE, "accelerators": pod_set.requests["nvidia.com/gpu"],
                                             "vcpu": pod_set.requests["cpu"] // 1000,
                                             "memory_gib": pod_set.requests["memory"] // GIB},
                                 "submit_at": at, "runtime": job.runtime}
        if job.workload.priority:
            entry["priority"] = names[job.workload.priority]
        jobs.append(entry)
    return {"jobs": jobs}


def scenario_file(seed: int, config: KitConfig, count: int, span: int) -> WorkloadFile:
    """random_workload's document read as a user's workload file is (the kit's reader, located findings)."""
    data, source = parse_yaml(yaml.safe_dump(random_workload(seed, config, count, span)), f"scenario-{seed}.yaml")
    return parse_workloads(data, source, config)


def replay(config: KitConfig, workload: WorkloadFile, scheduler: Scheduler) -> Timeline:
    """The jobs through the kit's own timeline (cdk_app.simulate.engine) on `scheduler`."""
    doc = setup_document(config)
    return simulate(workload.jobs, scheduler, queue_quotas(config, doc), pool_quota(doc), cluster_resources(config))
