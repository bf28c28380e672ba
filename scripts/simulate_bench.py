"""The simulator's speed (part of `make bench`): an environment of 100 teams on 1,000 GPU nodes and 10,000 jobs over
a simulated month (tests/support/simulate_scenarios, seeded), replayed by the kit's own path - the workload file
read and checked, the timeline, the in-process Kueue, the summary - and, side by side in the same run, the same
timeline driven on the real Kueue v0.19.2 (kueue-oracle --session, built by `make k8s-build`).

The real Kueue takes tens of minutes for the month, so the side-by-side ratio is taken over the scenario's first
BENCH_SIM_DAYS days (default 2; both schedulers get exactly the same jobs), and the month is timed on the
simulator alone against its absolute target. Growth with jobs and with teams is printed for the README.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "tests", ROOT / "scripts"):
    sys.path.insert(0, str(extra))

from support.simulate_scenarios import MONTH, random_config, replay, scenario_file  # noqa: E402

from cdk_app.domain.kueue_mapping import Choices  # noqa: E402
from cdk_app.simulate.governance import setup_document  # noqa: E402
from cdk_app.simulate.run import simulate_environment  # noqa: E402
from cdk_app.simulate.workloads import WorkloadFile  # noqa: E402

SEED = 7
MONTH_TARGET = 10.0  # seconds: 100 teams, 1,000 nodes, 10,000 jobs over a month (issue: interactive planning)
RATIO_TARGET = 1.0  # the simulator's time / the real Kueue's on the same jobs: never slower than the real thing
DAY = 24 * 3600


def scenario(teams: int, nodes: int, jobs: int, span: int = MONTH):
    config = random_config(SEED, teams, nodes)
    return config, scenario_file(SEED, config, jobs, span)


def timed_simulation(config, workload: WorkloadFile) -> tuple[float, float, dict]:
    """Wall-clock and CPU seconds of the `simulate` path (the CPU time shows what other processes on a shared
    machine took from the wall-clock one), and its summary."""
    start, cpu = time.perf_counter(), time.process_time()
    summary, _, _ = simulate_environment(config, workload, Choices())
    return time.perf_counter() - start, time.process_time() - cpu, summary


def first_days(workload: WorkloadFile, days: int) -> WorkloadFile:
    from dataclasses import replace

    return replace(workload, jobs=tuple(j for j in workload.jobs if j.submit_at < days * DAY))


def side_by_side(config, workload: WorkloadFile) -> tuple[float, float, bool]:
    """Seconds of the in-process and of the real Kueue on the same jobs through the same timeline, and whether
    they decided the same."""
    from support.kueue_session import OracleScheduler

    from cdk_app.simulate.kueue.scheduler import KueueScheduler

    doc = setup_document(config)
    times, decisions = [], []
    for make in (lambda: KueueScheduler(doc), lambda: OracleScheduler(doc)):
        scheduler = make()
        start = time.perf_counter()
        timeline = replay(config, workload, scheduler)
        times.append(time.perf_counter() - start)
        scheduler.close()
        decisions.append([(d.at, d.event, d.workload, d.preemptor, d.reason) for d in timeline.decisions])
    return times[0], times[1], decisions[0] == decisions[1]


def main() -> bool:
    days = int(os.environ.get("BENCH_SIM_DAYS", "2"))
    config, workload = scenario(100, 1000, 10_000)
    part = first_days(workload, days)
    mine, real, same = side_by_side(config, part)
    ratio = mine / real
    ok_ratio = ratio <= RATIO_TARGET and same
    print(f"\nsimulate: {len(part.jobs)} jobs of the first {days} day(s), 100 teams, 1,000 nodes, the same timeline")
    print(f"  in-process Kueue {mine:8.2f} s   real Kueue v0.19.2 {real:8.2f} s   ratio {ratio:.3f} "
          f"(target <= {RATIO_TARGET})   decisions {'identical' if same else 'DIFFER'}   "
          f"{'ok' if ok_ratio else 'MISSED'}")
    month, cpu, summary = timed_simulation(config, workload)
    ok_month = month <= MONTH_TARGET
    print(f"  the month, 10,000 jobs, the whole `simulate` path: {month:.2f} s, {cpu:.2f} s of CPU "
          f"(target <= {MONTH_TARGET:.0f} s) {'ok' if ok_month else 'MISSED'}; "
          f"utilisation {summary['utilization']['ratio']:.2f}")
    print("  growth (seconds, wall / CPU): jobs at 100 teams / teams at 10,000 jobs")
    for jobs in (1_000, 2_500, 5_000, 10_000):
        print("    {:>6} jobs   {:6.2f} {:6.2f}".format(jobs, *timed_simulation(*scenario(100, 1000, jobs))[:2]))
    for teams in (10, 25, 50, 100):
        print("    {:>6} teams  {:6.2f} {:6.2f}".format(teams, *timed_simulation(*scenario(teams, 1000, 10_000))[:2]))
    return ok_ratio and ok_month


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
