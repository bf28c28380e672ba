"""The queue manager (cdk_app.simulate.kueue.queues): its per-shape lazy heaps behave as the plain model of
Kueue's BestEffortFIFO queue - one heap of every workload not parked, parked workloads (and their identical
siblings on NoFit) out of it until the next requeue - over random sequences of operations."""

from __future__ import annotations

import random

import pytest

from cdk_app.simulate.kueue.api import PodSet, Workload
from cdk_app.simulate.kueue.queues import FAILED_AFTER_NOMINATION, IMMEDIATE, NO_FIT, Info, Queue, make_info

REASONS = [NO_FIT, FAILED_AFTER_NOMINATION, "NamespaceMismatch", "PreemptionNoCandidates"]


class Model:
    """The queue as Kueue describes it, without any laziness."""

    def __init__(self) -> None:
        self.active: dict[str, Info] = {}
        self.parked: dict[str, Info] = {}
        self.bulk_moved: set[tuple] = set()
        self.sticky: str | None = None

    def add(self, info: Info) -> None:
        (self.parked if info.shape in self.bulk_moved else self.active)[info.key] = info

    def pop(self) -> Info | None:
        if self.sticky in self.active:
            return self.active.pop(self.sticky)
        if not self.active:
            return None
        return self.active.pop(min(self.active, key=lambda k: (self.active[k].order(), k)))

    def requeue(self, info: Info, reason: str) -> None:
        if reason in IMMEDIATE:
            self.active[info.key] = info
            return
        self.parked[info.key] = info
        if reason in (NO_FIT, "PreemptionNoCandidates"):
            self.bulk_moved.add(info.shape)
            for key in [k for k, other in self.active.items() if other.shape == info.shape]:
                self.parked[key] = self.active.pop(key)

    def requeue_inadmissible(self) -> None:
        self.bulk_moved.clear()
        self.active.update(self.parked)
        self.parked = {}


def _info(n: int, rng: random.Random) -> Info:
    workload = Workload(f"ns/w{n}", "cq", rng.choice([0, 10]), rng.randrange(20),
                        (PodSet("main", rng.choice([1, 2]), {"nvidia.com/gpu": rng.choice([1, 4])}),))
    return make_info(workload, workload.key)


@pytest.mark.parametrize("seed", range(40))
def test_the_lazy_queue_pops_what_the_plain_model_pops(seed: int) -> None:
    rng = random.Random(seed)
    queue, model = Queue("cq"), Model()
    popped: list[Info] = []
    for n in range(400):
        action = rng.random()
        if action < 0.3:
            info = _info(n, rng)
            queue.add(info)
            model.add(info)
        elif action < 0.6:
            got, want = queue.pop(), model.pop()
            assert (got and got.key) == (want and want.key)
            if got is not None:
                popped.append(got)
        elif action < 0.85 and popped:
            info = popped.pop(rng.randrange(len(popped)))
            reason = rng.choice(REASONS)
            queue.requeue(info, reason)
            model.requeue(info, reason)
            if reason == FAILED_AFTER_NOMINATION and rng.random() < 0.3:
                queue.sticky = model.sticky = info.key
        elif action < 0.95:
            queue.requeue_inadmissible()
            model.requeue_inadmissible()
        else:
            queue.sticky = model.sticky = None
        assert sorted(queue.in_heap) == sorted(model.active)
        assert sorted(queue.inadmissible) == sorted(model.parked)
        assert queue.has_active() == bool(model.active)
