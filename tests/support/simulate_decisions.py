"""The decisions of seeded simulate scenarios as one digest each: scripts/simulate_decisions.py recorded them from
the scheduler before its speed work (tests/support/data/simulate_decisions.json), and the tests hold today's
scheduler to them - every admission and preemption (when, which workload, flavors, borrowed amounts, preemptor,
reason, message) and every job's last pending message, in order."""

from __future__ import annotations

import hashlib
import json

from cdk_app.domain.kueue_mapping import Choices
from cdk_app.simulate.engine import simulate
from cdk_app.simulate.governance import pool_quota, queue_quotas, setup_document
from cdk_app.simulate.kueue.scheduler import KueueScheduler
from cdk_app.simulate.run import cluster_resources
from support.paths import ROOT
from support.simulate_scenarios import MONTH, random_config, scenario_file

RECORDED = ROOT / "tests" / "support" / "data" / "simulate_decisions.json"
DAY = 24 * 3600
# name -> (seed, teams, nodes, jobs, span in seconds, reclaimWithinCohort); seed 7 draws classic queueing (the
# benchmark's month), seed 3 fair sharing
SCENARIOS = {
    "month": (7, 100, 1000, 10_000, MONTH, "Any"),
    "classic-3000": (7, 100, 1000, 3_000, MONTH, "Any"),
    "classic-reserving": (7, 40, 300, 2_000, 10 * DAY, "LowerPriority"),
    "fair-2000": (3, 60, 500, 2_000, 10 * DAY, "Any"),
    "fair-reserving": (3, 20, 120, 800, 3 * DAY, "LowerPriority"),
}


def digest(name: str) -> dict[str, object]:
    """The scenario's decisions and final pending messages as a SHA-256, with their counts."""
    seed, teams, nodes, jobs, span, reclaim = SCENARIOS[name]
    config = random_config(seed, teams, nodes)
    workload = scenario_file(seed, config, jobs, span)
    doc = setup_document(config, Choices(reclaim_within_cohort=reclaim))
    scheduler = KueueScheduler(doc)
    timeline = simulate(workload.jobs, scheduler, queue_quotas(config, doc), pool_quota(doc),
                        cluster_resources(config))
    pending = dict(scheduler.pending())
    h = hashlib.sha256()
    for d in timeline.decisions:
        h.update(json.dumps([d.at, d.event, d.workload, d.cluster_queue,
                             {p: dict(r) for p, r in d.flavors.items()}, {f: dict(r) for f, r in d.borrowed.items()},
                             d.preemptor, d.reason, d.message], sort_keys=True).encode())
    h.update(json.dumps(sorted(pending.items())).encode())
    h.update(json.dumps(timeline.loop).encode())
    return {"fair_sharing": scheduler.fair, "decisions": len(timeline.decisions), "pending": len(pending),
            "sha256": h.hexdigest()}


def recorded() -> dict[str, dict[str, object]]:
    return json.loads(RECORDED.read_text())
