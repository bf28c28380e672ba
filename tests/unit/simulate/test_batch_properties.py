"""Invariants of the Batch simulator on random workloads, from what AWS documents: a quota share never runs above
its quota plus what it may borrow, borrowed capacity is only ever lenders' idle quota, a service environment
never runs above its capacity, every job ends finished or reported unschedulable, and equal input gives equal
output."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.batch_simulation import FAIR_FIFO, QUOTA, assert_all_settled, job, load

from cdk_app.domain.batch_shares import quota_share_reach
from cdk_app.simulate.batch import BatchOptions, BatchResult, parse_batch_jobs, simulate_batch

VARIANTS = {
    "seed": QUOTA,
    # ProdExp1 borrows at most 25 % of its 60 (15).
    "limited": QUOTA.replace("max_priority: 99\n", "max_priority: 99\n      borrow_limit: 25\n", 1),
    # ProdExp2 only lends.
    "lend-only": QUOTA.replace("count: 40}]\n      sharing_strategy: LendAndBorrow",
                               "count: 40}]\n      sharing_strategy: Lend"),
    "reserve": QUOTA.replace("sharing_strategy: LendAndBorrow", "sharing_strategy: DontLend"),
    "no-in-share": QUOTA.replace("preempt_team_tasks: LowerPriority", "preempt_team_tasks: Never"),
    # ProdExp1 may borrow but ProdExp2 keeps its idle 40: ProdExp1 never goes above 60 although 40 are free.
    "reserve-lender": QUOTA.replace("count: 40}]\n      sharing_strategy: LendAndBorrow",
                                    "count: 40}]\n      sharing_strategy: DontLend"),
    # 20 instances no quota share holds: not lent (the kit's reading), so the shares still reach 100 at most.
    "unallocated": QUOTA.replace("max_capacity: 100", "max_capacity: 120"),
}
SETTINGS = settings(max_examples=80, deadline=None)


@pytest.fixture(scope="module")
def configs(tmp_path_factory):
    loaded = {name: load(tmp_path_factory.mktemp(name), text) for name, text in VARIANTS.items()}
    loaded["fair"] = load(tmp_path_factory.mktemp("fair"), FAIR_FIFO)
    return loaded


def _quota_items(draws):
    return [job(f"j{i}", "prod-p4d", n, at, runtime, share, priority)
            for i, (share, n, at, runtime, priority) in enumerate(draws)]


QUOTA_JOBS = st.lists(st.tuples(st.sampled_from(["ProdExp1", "ProdExp2"]), st.integers(1, 70), st.integers(0, 500),
                                st.integers(1, 400), st.integers(0, 99)), max_size=40)
OPTIONS = st.builds(BatchOptions, reclaim_victims=st.sampled_from(["lowest_priority", "newest"]),
                    preempted_runtime=st.sampled_from(["restart", "resume"]), backfill=st.booleans())


def _usage_over_time(result: BatchResult, queue: str) -> list[dict[str, int]]:
    """Each share's usage at every time any share of `queue` changed."""
    stats = [s for s in result.shares if s.queue == queue]
    times = sorted({t for s in stats for t, _ in s.usage})
    return [{s.share: next((n for at, n in reversed(s.usage) if at <= t), 0) for s in stats} for t in times]


@SETTINGS
@given(variant=st.sampled_from(sorted(VARIANTS)), draws=QUOTA_JOBS, options=OPTIONS)
def test_quota_shares_stay_within_quota_plus_borrowing_and_borrow_only_idle_lent_capacity(configs, variant, draws,
                                                                                         options):
    config = configs[variant]
    parsed = parse_batch_jobs(config.batch, _quota_items(draws))
    result = simulate_batch(config, parsed.jobs, options)
    if result.loop is None:  # a loop (hypothesis found one with reclaim_victims newest) stops the run: reported
        assert_all_settled(parsed.jobs, result)
    reach = {r.team: r for r in quota_share_reach(config.batch, "prod-p4d")}
    teams = {t.name: t for t in config.batch.teams}
    lenders = {name for name, t in teams.items() if t.sharing_strategy in ("Lend", "LendAndBorrow")}
    for usage in _usage_over_time(result, "prod-p4d"):
        assert sum(usage.values()) <= result.environments["p4d"]["ml.p4d.24xlarge"][0]
        for share, n in usage.items():
            assert n <= reach[share].reach
            limit = next(s.limit for s in result.shares if s.share == share)
            assert limit is None or n <= limit
        borrowed = sum(max(0, n - reach[s].quota) for s, n in usage.items())
        idle = sum(max(0, reach[s].quota - n) for s, n in usage.items() if s in lenders)
        assert borrowed <= idle
    capacity, peak = result.environments["p4d"]["ml.p4d.24xlarge"]
    assert peak <= capacity
    never = {n.job for n in parsed.never_runs}
    assert not [e for e in result.events if e.kind == "admitted" and e.job in never]
    # Preemption only in quota shares that allow it, or to reclaim lent capacity.
    for event in result.events:
        if event.kind == "preempted" and "in-share" in event.reason:
            assert teams[event.share].preempt_team_tasks == "LowerPriority"


@SETTINGS
@given(variant=st.sampled_from(sorted(VARIANTS)), draws=QUOTA_JOBS, options=OPTIONS)
def test_equal_input_gives_equal_output(configs, variant, draws, options):
    config = configs[variant]
    batch_jobs = parse_batch_jobs(config.batch, _quota_items(draws)).jobs
    assert simulate_batch(config, batch_jobs, options).to_json() == simulate_batch(config, batch_jobs, options).to_json()


FAIR_JOBS = st.lists(st.tuples(st.sampled_from(["HIGHPRI", "MIDPRI", "LOWPRI", None]), st.integers(1, 25),
                               st.integers(0, 300), st.integers(1, 200), st.integers(0, 9)), max_size=40)


@SETTINGS
@given(draws=FAIR_JOBS, backfill=st.booleans())
def test_fair_share_and_fifo_never_preempt_nor_exceed_their_environments(configs, draws, backfill):
    config = configs["fair"]
    items = [job(f"j{i}", "ml-g6-12xlarge-queue", n, at, runtime, share, priority) if share else
             job(f"j{i}", "ml-c5-xlarge-queue", min(n, 6), at, runtime)
             for i, (share, n, at, runtime, priority) in enumerate(draws)]
    parsed = parse_batch_jobs(config.batch, items)
    result = simulate_batch(config, parsed.jobs, BatchOptions(backfill=backfill))
    assert_all_settled(parsed.jobs, result)
    assert not [e for e in result.events if e.kind == "preempted"]
    for env, units in result.environments.items():
        for capacity, peak in units.values():
            assert peak <= capacity, env
    for queue, capacity in (("ml-g6-12xlarge-queue", 23), ("ml-c5-xlarge-queue", 4)):
        assert all(sum(u.values()) <= capacity for u in _usage_over_time(result, queue))
    # What ends unschedulable is a job that never runs or one held behind such a job, nothing else.
    never = {n.job for n in parsed.never_runs}
    for event in result.unschedulable():
        assert event.job in never or "which never runs" in event.reason, event


# Found by hypothesis (seed 1) in a `make test` that then ran for many minutes: on the 25 % borrow-limit variant
# with reclaim_victims newest, resume and backfill, the quota-share passes undo each other at one moment.
LOOPING = [("ProdExp1", 1, 0, 1, 0)] * 23 + [
    ("ProdExp2", 39, 0, 112, 99), ("ProdExp1", 22, 2, 129, 0), ("ProdExp1", 2, 1, 129, 1), ("ProdExp1", 38, 128, 1, 1),
    ("ProdExp1", 63, 1, 1, 2), ("ProdExp2", 3, 0, 129, 0), ("ProdExp1", 1, 0, 1, 0), ("ProdExp2", 38, 1, 2, 9),
    ("ProdExp2", 70, 43, 33, 99)]


def test_queues_that_never_settle_stop_the_run_and_say_so(configs):
    config = configs["limited"]
    parsed = parse_batch_jobs(config.batch, _quota_items(LOOPING))
    result = simulate_batch(config, parsed.jobs,
                            BatchOptions(reclaim_victims="newest", preempted_runtime="resume", backfill=True))
    assert result.loop is not None and result.loop[1]
    assert result.to_json()["loop"]["at"] == result.loop[0]
