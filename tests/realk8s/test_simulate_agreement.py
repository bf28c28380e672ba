"""The simulator's scheduler against the real one, decision by decision: random environments and workloads
(support.simulate_scenarios) replayed by the same timeline (cdk_app.simulate.engine) on the in-process Kueue
(cdk_app.simulate.kueue) and on the real Kueue v0.19.2 (kueue-oracle --session). Every admission (when, on which
flavor, borrowing how much), every preemption (when, by whom, with which reason) and the jobs left pending must
be the same, in the same order.

HPK_TIMELINE_SCENARIOS sets how many scenarios run (default 1,000, each 20-60 jobs on 2-8 teams over a day)."""

from __future__ import annotations

import os
import random
import re
from typing import Any

from support.kueue_session import OracleScheduler
from support.simulate_scenarios import random_config, replay, scenario_file

from cdk_app.simulate.governance import setup_document
from cdk_app.simulate.kueue.api import Decision
from cdk_app.simulate.kueue.scheduler import KueueScheduler

SCENARIOS = int(os.environ.get("HPK_TIMELINE_SCENARIOS", "1000"))
DAY = 24 * 3600
UID = re.compile(r"UID: [^,]*,")


def _key(d: Decision) -> tuple[Any, ...]:
    return (d.at, d.event, d.workload, d.cluster_queue,
            tuple(sorted((p, tuple(sorted(r.items()))) for p, r in d.flavors.items())),
            tuple(sorted((f, tuple(sorted((k, v) for k, v in r.items() if v))) for f, r in d.borrowed.items()
                         if any(r.values()))),
            d.preemptor, d.reason)


def _scenario(seed: int):
    rng = random.Random(seed)
    config = random_config(seed, teams=rng.randint(2, 8), nodes=rng.randint(4, 16))
    return config, scenario_file(seed, config, rng.randint(20, 60), DAY)


def _replay(config, workload, scheduler):
    """The decisions, the loop (a moment at which Kueue did not settle) and what was left pending, with Kueue's
    message for each."""
    timeline = replay(config, workload, scheduler)
    # The workloads' UIDs differ (the oracle numbers them, the in-process scheduler uses their keys): a message
    # naming a preemptor's UID is compared without it.
    pending = sorted((key, UID.sub("UID: <uid>,", message)) for key, message in scheduler.pending().items())
    return [_key(d) for d in timeline.decisions], timeline.loop, pending


def test_the_in_process_kueue_decides_as_the_real_one_on_random_timelines(oracle):
    session = None
    compared = disagreements = loops = 0
    first: list[str] = []
    try:
        for seed in range(SCENARIOS):
            config, jobs = _scenario(seed)
            doc = setup_document(config)
            if session is None:
                session = OracleScheduler(doc, binary=oracle)
            else:
                session.reset(doc)
            real, real_loop, real_pending = _replay(config, jobs, session)
            mine, mine_loop, mine_pending = _replay(config, jobs, KueueScheduler(doc))
            compared += len(real)
            loops += real_loop is not None
            if (real, real_loop, real_pending) != (mine, mine_loop, mine_pending):
                disagreements += 1
                at = next((i for i, (a, b) in enumerate(zip(real, mine, strict=False)) if a != b),
                          min(len(real), len(mine)))
                if len(first) < 5:
                    first.append(f"seed {seed}: decision {at}: real {real[at] if at < len(real) else None}, "
                                 f"in-process {mine[at] if at < len(mine) else None}; loop real {real_loop} "
                                 f"in-process {mine_loop}; pending real {real_pending} in-process {mine_pending}")
    finally:
        if session is not None:
            session.close()
    print(f"{SCENARIOS - disagreements}/{SCENARIOS} timelines agree; {compared} decisions compared; "
          f"{loops} scenario(s) end in a preemption loop of Kueue's own, on both")
    assert compared > SCENARIOS * 10  # the scenarios decide something
    assert disagreements == 0, "\n".join(first)
