"""Times the in-process Kueue scheduler at the size `hyperpod-kit simulate` is built for: 100 teams, 1,000 nodes of
three GPU instance types, 10,000 jobs over a simulated month, driven as a timeline drives it (submit, schedule,
finish, schedule). Prints the number of schedule() calls and the wall time.

    .venv/bin/python scripts/kueue_sim_bench.py [--teams 100] [--nodes 1000] [--jobs 10000] [--seed 1] [--fair]
"""

from __future__ import annotations

import argparse
import heapq
import random
import time

from cdk_app.simulate.kueue.api import PodSet, Workload
from cdk_app.simulate.kueue.scheduler import KueueScheduler

TYPES = {"ml.g5.12xlarge": (48, 192, 4), "ml.p4d.24xlarge": (96, 1152, 8), "ml.p5.48xlarge": (192, 2048, 8)}
COVERED = ["cpu", "memory", "nvidia.com/gpu"]
GI = 1024 ** 3
MONTH = 30 * 24 * 3600


def setup(teams: int, nodes: int, fair: bool, rng: random.Random) -> dict:
    per_type = {t: nodes // len(TYPES) for t in TYPES}
    queues = []
    for i in range(teams):
        flavors = []
        for t, (cpu, mem, gpu) in TYPES.items():
            count = per_type[t] // teams
            flavors.append({"name": t, "resources": [
                {"name": "cpu", "nominalQuota": str(cpu * count), "borrowingLimit": str(cpu * count)},
                {"name": "memory", "nominalQuota": f"{mem * count}Gi", "borrowingLimit": f"{mem * count}Gi"},
                {"name": "nvidia.com/gpu", "nominalQuota": str(gpu * count), "borrowingLimit": str(gpu * count)}]})
        spec = {"cohortName": "hyperpod-teams", "namespaceSelector": {},
                "resourceGroups": [{"coveredResources": COVERED, "flavors": flavors}],
                "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"}}
        if fair:
            spec["fairSharing"] = {"weight": str(rng.choice((0, 1, 10, 100)))}
        queues.append({"metadata": {"name": f"t{i}"}, "spec": spec})
    doc = {"resourceFlavors": [{"metadata": {"name": t}, "spec": {"nodeLabels": {"node.kubernetes.io/instance-type": t}}}
                               for t in TYPES], "clusterQueues": queues}
    if fair:
        doc["fairSharing"] = {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}
    return doc


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--teams", type=int, default=100)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fair", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    scheduler = KueueScheduler(setup(args.teams, args.nodes, args.fair, rng))
    events: list[tuple[int, int, str, Workload | None]] = []
    for n in range(args.jobs):
        itype = rng.choice(list(TYPES))
        cpu, mem, gpu = TYPES[itype]
        gpus = rng.choice([g for g in (1, 2, 4, 8) if g <= gpu])
        share = gpus / gpu
        pods = rng.choice((1, 1, 2, 4))
        w = Workload(f"ns-t{n % args.teams}/job{n}", f"t{rng.randrange(args.teams)}", rng.choice((0, 10, 100)),
                     rng.randrange(MONTH), (PodSet("main", pods, {"cpu": int(cpu * share) * 1000,
                                                                   "memory": int(mem * share) * GI,
                                                                   "nvidia.com/gpu": gpus}),),
                     {"node.kubernetes.io/instance-type": itype})
        heapq.heappush(events, (w.created, 1, w.key, w))
    runtime = {}
    calls = admitted = preempted = 0
    start = time.perf_counter()
    while events:
        at, kind, key, w = heapq.heappop(events)
        if kind == 0:
            if key not in scheduler.where or runtime.get(key) != at:
                continue  # preempted meanwhile: this completion is stale
            scheduler.finish(key, at)
        else:
            scheduler.submit(w)
        while events and events[0][0] == at:  # batch what happens in the same second
            _, k2, key2, w2 = heapq.heappop(events)
            if k2 == 1:
                scheduler.submit(w2)
            elif key2 in scheduler.where and runtime.get(key2) == at:
                scheduler.finish(key2, at)
        calls += 1
        for d in scheduler.schedule(at):
            if d.event == "admitted":
                admitted += 1
                end = at + rng.randint(600, 3 * 24 * 3600)
                runtime[d.workload] = end
                heapq.heappush(events, (end, 0, d.workload, None))
            else:
                preempted += 1
    elapsed = time.perf_counter() - start
    print(f"{args.teams} teams, {args.nodes} nodes, {args.jobs} jobs, fair sharing {'on' if args.fair else 'off'}: "
          f"{calls} schedule() calls, {admitted} admissions, {preempted} preemptions, "
          f"{len(scheduler.pending())} pending at the end, {elapsed:.2f} s")


if __name__ == "__main__":
    main()
