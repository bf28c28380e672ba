"""Quota arithmetic of cdk_app.simulate.kueue.objects: borrowing_cap's promise that available() keeps its
answer while the cohort has at least that much unused and the queue's own usage stays, checked against
available() itself on random quotas (borrowing and lending limits or none) and usages."""

from __future__ import annotations

import random

from cdk_app.simulate.kueue import objects as o

FR = ("flavor", "nvidia.com/gpu")


def _cohort(rng: random.Random) -> list[o.ClusterQueue]:
    queues = []
    for i in range(3):
        resource = {"name": FR[1], "nominalQuota": rng.randint(0, 8)}
        if rng.random() < 0.7:
            resource["borrowingLimit"] = rng.randint(0, 8)
        if rng.random() < 0.4:
            resource["lendingLimit"] = rng.randint(0, 8)
        queues.append(o.read_cluster_queue({"metadata": {"name": f"q{i}"}, "spec": {
            "cohortName": "all", "resourceGroups": [{"coveredResources": [FR[1]], "flavors": [
                {"name": FR[0], "resources": [resource]}]}]}}))
    o.build_cohorts(queues, [])
    return [cq for cq, _ in queues]


def test_available_answers_the_same_while_the_cohort_keeps_the_borrowing_cap_unused():
    checked = 0
    for seed in range(400):
        rng = random.Random(seed)
        mine, *others = _cohort(rng)
        o.add_usage(mine, {FR: rng.randint(0, 10)})
        for other in others:
            o.add_usage(other, {FR: rng.randint(0, 6)})
        value, cap = o.available(mine, FR), o.borrowing_cap(mine, FR)
        if cap is None:
            continue
        for _ in range(5):  # the others' usage moves; the queue's own stays
            other, amount = rng.choice(others), rng.randint(1, 4)
            added = rng.random() < 0.5
            (o.add_usage if added else o.remove_usage)(other, {FR: amount if added else min(amount, other.usage[FR])})
            parent = mine.parent
            assert parent is not None
            if parent.subtree.get(FR, 0) - parent.usage.get(FR, 0) >= cap:
                assert o.available(mine, FR) == value, seed
                checked += 1
    assert checked > 100
