"""Configs for the Batch simulator's tests, as YAML a user would write (loaded through the kit's loader), and the
helpers that load them and read a result."""

from __future__ import annotations

from pathlib import Path

from cdk_app.config.loader import load_config
from cdk_app.config.model import KitConfig
from cdk_app.simulate.batch import BatchJob, BatchResult, ParsedBatchJobs, parse_batch_jobs

HEAD = """\
environment: sim
account: "111122223333"
region: us-east-1
"""

# Seed 004 (scenario 10): 100 p4d instances split by quota shares ProdExp1 (60) and ProdExp2 (40), both lending
# and borrowing without limit, in-share preemption on.
QUOTA = HEAD + """\
batch:
  service_environments:
    - {name: p4d, capacity_limits: [{unit: ml.p4d.24xlarge, max_capacity: 100}]}
  queues:
    - name: prod-p4d
      service_environment: p4d
      scheduling: quota_share
  teams:
    - name: ProdExp1
      queues: [prod-p4d]
      quota: [{instance_type: ml.p4d.24xlarge, count: 60}]
      sharing_strategy: LendAndBorrow
      preempt_team_tasks: LowerPriority
      max_priority: 99
    - name: ProdExp2
      queues: [prod-p4d]
      quota: [{instance_type: ml.p4d.24xlarge, count: 40}]
      sharing_strategy: LendAndBorrow
      preempt_team_tasks: LowerPriority
      max_priority: 99
"""

# Seed 004's queues: a FIFO queue for CPU work and a fair-share queue with HIGHPRI/MIDPRI/LOWPRI at weights 1/3/5.
# 23 GPU instances: 1/1 : 1/3 : 1/5 of them is 15 : 5 : 3.
FAIR_FIFO = HEAD + """\
batch:
  service_environments:
    - {name: cpu, capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 4}]}
    - {name: g6, capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 23}]}
  queues:
    - name: ml-c5-xlarge-queue
      service_environment: cpu
      scheduling: fifo
      priority: 2
    - name: ml-g6-12xlarge-queue
      service_environment: g6
      scheduling: fair_share
      priority: 1
  teams:
    - name: production
      queues: [ml-g6-12xlarge-queue, ml-c5-xlarge-queue]
      share_identifier: HIGHPRI
      weight_factor: 1
    - name: exploration
      queues: [ml-g6-12xlarge-queue]
      share_identifier: MIDPRI
      weight_factor: 3
    - name: sweeps
      queues: [ml-g6-12xlarge-queue]
      share_identifier: LOWPRI
      weight_factor: 5
"""


def load(tmp_path: Path, text: str) -> KitConfig:
    path = tmp_path / "sim.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path).config


def jobs(config: KitConfig, *items: dict) -> ParsedBatchJobs:
    return parse_batch_jobs(config.batch, [dict(item) for item in items])


def job(name: str, queue: str, instances: int, submit_at: int, runtime: int, share: str | None = None,
        priority: int | None = None) -> dict:
    item: dict = {"name": name, "queue": queue, "instances": instances, "submit_at": submit_at, "runtime": runtime}
    if share is not None:
        item["share"] = share
    if priority is not None:
        item["priority"] = priority
    return item


def usage_at(result: BatchResult, share: str | None, t: int, queue: str | None = None) -> int:
    """A share's instances in use at time t (after everything at t)."""
    [stats] = [s for s in result.shares if s.share == share and (queue is None or s.queue == queue)]
    return next((n for at, n in reversed(stats.usage) if at <= t), 0)


def kinds(result: BatchResult, name: str) -> list[str]:
    return [e.kind for e in result.events if e.job == name]


def assert_all_settled(batch_jobs: tuple[BatchJob, ...], result: BatchResult) -> None:
    """Every job ends finished or reported unschedulable, once."""
    ends = [e.job for e in result.events if e.kind in ("finished", "unschedulable")]
    assert sorted(ends) == sorted(j.name for j in batch_jobs)
