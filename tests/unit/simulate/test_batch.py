"""The Batch simulator on seed 004's worked example (scenario 10): quota shares ProdExp1 60 / ProdExp2 40 of 100
p4d instances lending and borrowing, reclaim by preemption, in-share priority preemption; a fair-share queue with
HIGHPRI/MIDPRI/LOWPRI at weights 1/3/5 and a FIFO queue. Plus the workload reader's refusals and "never runs"."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from support.batch_simulation import FAIR_FIFO, QUOTA, assert_all_settled, job, jobs, kinds, load, usage_at

from cdk_app.simulate.batch import BatchOptions, parse_batch_jobs, simulate_batch
from cdk_app.simulate.errors import WorkloadError

Q = "prod-p4d"
GPU = "ml-g6-12xlarge-queue"
CPU = "ml-c5-xlarge-queue"


def _run(config, *items, options: BatchOptions | None = None):
    parsed = jobs(config, *items)
    result = simulate_batch(config, parsed.jobs, options or BatchOptions())
    assert_all_settled(parsed.jobs, result)
    return result


def _event(result, name, kind):
    [event] = [e for e in result.events if e.job == name and e.kind == kind]
    return event


# --------------------------------------------------------------------------------------------- quota shares

def _prodexp1_four_jobs_and_prodexp2(tmp_path, text=QUOTA):
    """ProdExp1 fills its 60 with four 15-instance jobs; ProdExp2 runs 25 of its 40."""
    config = load(tmp_path, text)
    p1 = [job(f"p1-{i}", Q, 15, 0, 1000, "ProdExp1") for i in range(4)]
    return config, p1 + [job("p2-a", Q, 25, 0, 5000, "ProdExp2")]


def test_prodexp1_borrows_prodexp2s_idle_15_and_reaches_75(tmp_path):
    config, items = _prodexp1_four_jobs_and_prodexp2(tmp_path)
    result = _run(config, *items, job("p1-extra", Q, 15, 10, 1000, "ProdExp1"))
    admitted = _event(result, "p1-extra", "admitted")
    assert (admitted.at, admitted.borrowed, admitted.lenders) == (10, 15, (("ProdExp2", 15),))
    assert (usage_at(result, "ProdExp1", 10), usage_at(result, "ProdExp2", 10)) == (75, 25)
    stats = {s.share: s for s in result.shares}
    # Borrowing is the share's usage above its quota: 15 from t=10 until its four own jobs end at t=1000 (then
    # p1-extra runs on to 1010 within the quota).
    assert stats["ProdExp1"].borrowed_instance_hours == pytest.approx(15 * 990 / 3600)
    assert stats["ProdExp2"].lent_instance_hours == pytest.approx(15 * 990 / 3600)
    assert (stats["ProdExp1"].quota, stats["ProdExp1"].limit, stats["ProdExp1"].peak) == (60, None, 75)


def test_prodexp2_needing_its_40_back_preempts_prodexp1_back_to_60(tmp_path):
    config, items = _prodexp1_four_jobs_and_prodexp2(tmp_path)
    result = _run(config, *items, job("p1-extra", Q, 15, 10, 1000, "ProdExp1"), job("p2-b", Q, 15, 100, 1000,
                                                                                    "ProdExp2"))
    preempted = _event(result, "p1-extra", "preempted")
    assert (preempted.at, preempted.by) == (100, "p2-b")
    assert "reclaimed" in preempted.reason and "'ProdExp2' needs its own back" in preempted.reason
    assert _event(result, "p2-b", "admitted").at == 100
    assert (usage_at(result, "ProdExp1", 100), usage_at(result, "ProdExp2", 100)) == (60, 40)
    # Re-queued RUNNABLE, it runs again (from the start) once ProdExp1's own jobs finish at 1000.
    assert kinds(result, "p1-extra") == ["submitted", "admitted", "preempted", "admitted", "finished"]
    assert _event(result, "p1-extra", "finished").at == 2000
    for name in ("p1-0", "p1-1", "p1-2", "p1-3"):
        assert "preempted" not in kinds(result, name)  # only the borrowing job gives capacity back


def test_a_preempted_job_resumes_where_it_stopped_when_asked(tmp_path):
    config, items = _prodexp1_four_jobs_and_prodexp2(tmp_path)
    result = _run(config, *items, job("p1-extra", Q, 15, 10, 1000, "ProdExp1"),
                  job("p2-b", Q, 15, 100, 1000, "ProdExp2"), options=BatchOptions(preempted_runtime="resume"))
    assert _event(result, "p1-extra", "finished").at == 1000 + (1000 - 90)  # 90 s ran before the preemption


def _priorities(tmp_path, text=QUOTA):
    """Seed 004's figure 2: ProdExp1's 60 held by jobs A-D at priorities 80, 50, 30, 10; ProdExp2 uses its 40."""
    config = load(tmp_path, text)
    return config, [job("A", Q, 15, 0, 3000, "ProdExp1", 80), job("B", Q, 15, 1, 3000, "ProdExp1", 50),
                    job("C", Q, 15, 2, 3000, "ProdExp1", 30), job("D", Q, 15, 3, 3000, "ProdExp1", 10),
                    job("p2", Q, 40, 0, 9000, "ProdExp2")]


def test_a_priority_90_job_preempts_the_lowest_priority_job_of_full_prodexp1(tmp_path):
    config, items = _priorities(tmp_path)
    result = _run(config, *items, job("E", Q, 15, 100, 500, "ProdExp1", 90))
    preempted = _event(result, "D", "preempted")
    assert (preempted.at, preempted.by) == (100, "E")
    assert "in-share preemption" in preempted.reason and "priority 90 > 10" in preempted.reason
    assert all("preempted" not in kinds(result, name) for name in ("A", "B", "C", "p2"))
    assert usage_at(result, "ProdExp1", 100) == 60  # the share keeps its 60
    assert _event(result, "E", "admitted").borrowed == 0
    assert _event(result, "D", "finished").at == 600 + 3000  # back once E finishes, from the start


def test_a_high_priority_job_preempts_as_many_lower_ones_as_it_needs_lowest_first(tmp_path):
    config, items = _priorities(tmp_path)
    result = _run(config, *items, job("E", Q, 30, 100, 500, "ProdExp1", 90))
    assert [e.job for e in result.events if e.kind == "preempted"] == ["D", "C"]


def test_one_priority_step_above_is_enough_to_preempt(tmp_path):
    config, items = _priorities(tmp_path)
    result = _run(config, *items, job("E", Q, 15, 100, 500, "ProdExp1", 11))
    assert [(e.job, e.by) for e in result.events if e.kind == "preempted"] == [("D", "E")]


def test_a_job_of_no_higher_priority_than_any_running_one_waits(tmp_path):
    config, items = _priorities(tmp_path)
    result = _run(config, *items, job("E", Q, 15, 100, 500, "ProdExp1", 10))
    assert not [e for e in result.events if e.kind == "preempted"]
    assert _event(result, "E", "admitted").at == 3000


def test_without_in_share_preemption_the_priority_90_job_waits_for_room(tmp_path):
    text = QUOTA.replace("preempt_team_tasks: LowerPriority", "preempt_team_tasks: Never")
    config, items = _priorities(tmp_path, text)
    result = _run(config, *items, job("E", Q, 15, 100, 500, "ProdExp1", 90))
    assert not [e for e in result.events if e.kind == "preempted"]
    assert _event(result, "E", "admitted").at == 3000  # when A finishes (0 + 3000)


def test_a_full_share_borrows_idle_capacity_before_it_preempts_its_own_jobs(tmp_path):
    config, items = _priorities(tmp_path)
    items[-1] = job("p2", Q, 25, 0, 9000, "ProdExp2")  # ProdExp2 leaves 15 idle
    result = _run(config, *items, job("E", Q, 15, 100, 500, "ProdExp1", 90))
    assert not [e for e in result.events if e.kind == "preempted"]
    assert _event(result, "E", "admitted").borrowed == 15


def test_borrow_limit_caps_what_a_share_borrows(tmp_path):
    # 10 % of 60: ProdExp1 borrows at most 6 although ProdExp2 leaves 40 idle.
    text = QUOTA.replace("max_priority: 99\n", "max_priority: 99\n      borrow_limit: 10\n", 1)
    config = load(tmp_path, text)
    result = _run(config, job("big", Q, 60, 0, 100, "ProdExp1"), job("six", Q, 6, 0, 100, "ProdExp1"),
                  job("seven", Q, 7, 0, 100, "ProdExp1"))
    assert _event(result, "six", "admitted").at == 0 and _event(result, "seven", "admitted").at == 100
    assert {s.share: s.limit for s in result.shares}["ProdExp1"] == 66


def test_a_reserve_share_lends_nothing(tmp_path):
    text = QUOTA.replace("sharing_strategy: LendAndBorrow", "sharing_strategy: DontLend")
    config = load(tmp_path, text)
    result = _run(config, job("big", Q, 60, 0, 100, "ProdExp1"), job("one-more", Q, 1, 0, 100, "ProdExp1"))
    assert _event(result, "one-more", "admitted").at == 100
    assert usage_at(result, "ProdExp2", 0) == 0


def test_idle_capacity_goes_to_borrowing_jobs_in_submission_order(tmp_path):
    # Both shares full; ProdExp1's borrowing job was submitted first, so it gets ProdExp2's idle 10 first.
    config = load(tmp_path, QUOTA)
    result = _run(config, job("p1", Q, 60, 0, 1000, "ProdExp1"), job("p2", Q, 30, 0, 1000, "ProdExp2"),
                  job("p1-borrow", Q, 10, 5, 100, "ProdExp1"))
    assert _event(result, "p1-borrow", "admitted").lenders == (("ProdExp2", 10),)


def test_a_job_within_its_quota_goes_before_a_borrowing_one_so_nothing_is_preempted_needlessly(tmp_path):
    # At t=5 ProdExp1's borrowing job (submitted first) and ProdExp2's own 40 both wait: ProdExp2's goes first,
    # instead of ProdExp1 borrowing the 40 and being preempted for them at once.
    config = load(tmp_path, QUOTA)
    result = _run(config, job("p1", Q, 60, 0, 1000, "ProdExp1"), job("p1-borrow", Q, 40, 5, 100, "ProdExp1"),
                  job("p2", Q, 40, 5, 100, "ProdExp2"))
    assert _event(result, "p2", "admitted").at == 5 and _event(result, "p1-borrow", "admitted").at == 105
    assert not [e for e in result.events if e.kind == "preempted"]


def test_quota_share_waits_have_median_and_p95(tmp_path):
    config = load(tmp_path, QUOTA)
    items = [job(f"j{i}", Q, 60, 0, 100, "ProdExp1") for i in range(5)]
    stats = {s.share: s for s in _run(config, *items).shares}["ProdExp1"]
    # ProdExp2 lends 40 only: each 60-job waits for the one before it.
    assert stats.waits == (0, 100, 200, 300, 400)
    assert (stats.median_wait, stats.p95_wait) == (200.0, 400.0)


# --------------------------------------------------------------------------------------------- fair share and FIFO

def test_weights_1_3_5_give_highpri_midpri_lowpri_15_5_and_3_of_23_instances(tmp_path):
    config = load(tmp_path, FAIR_FIFO)
    items = [job(f"{share}-{i}", GPU, 1, 0, 1000, share) for share in ("LOWPRI", "MIDPRI", "HIGHPRI")
             for i in range(30)]
    result = _run(config, *items)
    assert [usage_at(result, s, 0) for s in ("HIGHPRI", "MIDPRI", "LOWPRI")] == [15, 5, 3]
    fractions = {s.share: s.fraction for s in result.shares if s.queue == GPU}
    assert fractions == {"HIGHPRI": Fraction(15, 23), "MIDPRI": Fraction(5, 23), "LOWPRI": Fraction(3, 23)}
    assert not [e for e in result.events if e.kind == "preempted"]  # fair share never preempts


def test_midpri_runs_before_lowpri_submitted_together_and_a_later_highpri_overtakes_lowpri(tmp_path):
    # The seed's walkthrough: LOW and MID submitted together, MID runs first; HIGH, submitted later, runs before LOW.
    config = load(tmp_path, FAIR_FIFO)
    result = _run(config, job("low", GPU, 23, 0, 100, "LOWPRI"), job("mid", GPU, 23, 0, 100, "MIDPRI"),
                  job("high", GPU, 23, 10, 100, "HIGHPRI"))
    assert [e.job for e in result.events if e.kind == "admitted"] == ["mid", "high", "low"]


def test_within_a_share_identifier_higher_priority_runs_first(tmp_path):
    config = load(tmp_path, FAIR_FIFO)
    result = _run(config, job("first", GPU, 23, 0, 100, "HIGHPRI", 1), job("later-low", GPU, 23, 1, 100, "HIGHPRI", 1),
                  job("later-high", GPU, 23, 2, 100, "HIGHPRI", 9))
    assert [e.job for e in result.events if e.kind == "admitted"] == ["first", "later-high", "later-low"]


def test_the_share_whose_turn_it_is_holds_the_fair_share_queue_unless_backfill(tmp_path):
    # With HIGHPRI's 20 in use, MIDPRI and LOWPRI both use nothing: MIDPRI (lower weight) is next, and its 23 do not
    # fit the 3 free, so LOWPRI's 3 wait too (until MIDPRI's job ends at 200) - unless backfill starts them around it.
    config = load(tmp_path, FAIR_FIFO)
    items = [job("first", GPU, 20, 0, 100, "HIGHPRI"), job("mid", GPU, 23, 1, 100, "MIDPRI"),
             job("low", GPU, 3, 2, 100, "LOWPRI")]
    assert _event(_run(config, *items), "low", "admitted").at == 200
    assert _event(_run(config, *items, options=BatchOptions(backfill=True)), "low", "admitted").at == 2


def test_compute_reservation_keeps_instances_for_share_identifiers_not_in_use(tmp_path):
    # 50 % with one active identifier: (50/100)^1 of 23 = 11.5 reserved, so 11 usable.
    config = load(tmp_path, FAIR_FIFO.replace("      priority: 1\n", "      priority: 1\n      compute_reservation: 50\n"))
    result = _run(config, *[job(f"h{i}", GPU, 1, 0, 100, "HIGHPRI") for i in range(20)])
    assert usage_at(result, "HIGHPRI", 0) == 11


def test_fifo_runs_in_submission_order_and_its_head_holds_back_smaller_jobs(tmp_path):
    config = load(tmp_path, FAIR_FIFO)
    items = [job("a", CPU, 3, 0, 100), job("b", CPU, 3, 1, 100), job("c", CPU, 1, 2, 100)]
    result = _run(config, *items)
    assert [(e.job, e.at) for e in result.events if e.kind == "admitted"] == [("a", 0), ("b", 100), ("c", 100)]
    backfilled = _run(config, *items, options=BatchOptions(backfill=True))
    assert [(e.job, e.at) for e in backfilled.events if e.kind == "admitted"] == [("a", 0), ("c", 2), ("b", 100)]


def test_a_job_too_large_for_a_fifo_queue_blocks_it_until_the_runnable_timeout_ends_it(tmp_path):
    text = FAIR_FIFO.replace("      priority: 2\n", "      priority: 2\n      runnable_timeout_seconds: 600\n")
    config = load(tmp_path, text)
    parsed = jobs(config, job("huge", CPU, 5, 0, 100), job("next", CPU, 1, 10, 100))
    [never] = parsed.never_runs
    assert (never.index, never.job) == (0, "huge")
    assert "needs 5 instances of NUM_INSTANCES; service environment 'cpu' has at most 4" in never.reason
    result = simulate_batch(config, parsed.jobs)
    ended = _event(result, "huge", "unschedulable")
    assert ended.at == 600 and "runnable_timeout_seconds" in ended.reason
    assert _event(result, "next", "admitted").at == 600


def test_without_a_runnable_timeout_the_jobs_behind_a_job_that_never_runs_are_unschedulable(tmp_path):
    config = load(tmp_path, FAIR_FIFO)
    parsed = jobs(config, job("huge", CPU, 5, 0, 100), job("next", CPU, 1, 10, 100))
    result = simulate_batch(config, parsed.jobs)
    assert_all_settled(parsed.jobs, result)
    assert "has at most 4" in _event(result, "huge", "unschedulable").reason
    assert "behind job 'huge'" in _event(result, "next", "unschedulable").reason


def test_queues_on_one_environment_are_served_higher_priority_first(tmp_path):
    text = FAIR_FIFO.replace("    - name: ml-c5-xlarge-queue\n      service_environment: cpu\n",
                             "    - name: backlog\n      service_environment: cpu\n      scheduling: fifo\n"
                             "    - name: ml-c5-xlarge-queue\n      service_environment: cpu\n")
    config = load(tmp_path, text)  # backlog has priority 1, ml-c5-xlarge-queue 2
    result = _run(config, job("blocker", CPU, 4, 0, 100), job("low", "backlog", 4, 1, 100), job("high", CPU, 4, 2, 100))
    assert [e.job for e in result.events if e.kind == "admitted"] == ["blocker", "high", "low"]


# --------------------------------------------------------------------------------------------- the workload reader

@pytest.mark.parametrize(("item", "path", "words"), [
    ({"nmae": "x"}, (0, "nmae"), "unknown key 'nmae' (did you mean name?)"),
    ({"name": "x", "queue": Q, "instances": 1, "submit_at": 0}, (0,), "missing runtime"),
    ({"name": "x", "queue": "nope", "instances": 1, "submit_at": 0, "runtime": 1}, (0, "queue"),
     "job queue 'nope' is not in the environment; use one of: prod-p4d"),
    ({"name": "x", "queue": Q, "share": "ProdExp3", "instances": 1, "submit_at": 0, "runtime": 1}, (0, "share"),
     "'ProdExp3' is not a quota share of queue 'prod-p4d'; use one of: ProdExp1, ProdExp2"),
    ({"name": "x", "queue": Q, "instances": 1, "submit_at": 0, "runtime": 1}, (0,), "missing share"),
    ({"name": "x", "queue": Q, "share": "ProdExp1", "instances": 1.0, "submit_at": 0, "runtime": 1},
     (0, "instances"), "expected a whole number, got a number 1.0"),
    ({"name": "x", "queue": Q, "share": "ProdExp1", "instances": 1, "submit_at": -1, "runtime": 1},
     (0, "submit_at"), "-1 is not allowed (0-31622400)"),
    ({"name": "x", "queue": Q, "share": "ProdExp1", "instances": 1, "submit_at": 0, "runtime": True},
     (0, "runtime"), "expected a whole number, got true/false"),
    ({"name": "x", "queue": Q, "share": "ProdExp1", "instances": 0, "submit_at": 0, "runtime": 1},
     (0, "instances"), "0 is not allowed (1-10000)"),
    ({"name": "x", "queue": Q, "share": "ProdExp1", "priority": 100, "instances": 1, "submit_at": 0, "runtime": 1},
     (0, "priority"), "100 is not allowed (0-99)"),  # the team's max_priority
    ({"name": "x", "queue": Q, "share": "ProdExp1", "instance_type": "ml.p4d.24xlarg", "instances": 1,
      "submit_at": 0, "runtime": 1}, (0, "instance_type"), "did you mean ml.p4d.24xlarge?"),
    ("x", (0,), "expected a mapping"),
])
def test_the_reader_refuses_a_bad_quota_share_job_by_index_and_field(tmp_path, item, path, words):
    config = load(tmp_path, QUOTA)
    with pytest.raises(WorkloadError) as caught:
        parse_batch_jobs(config.batch, [item])
    assert caught.value.path == ("batch_jobs",) + path
    assert words in caught.value.message


@pytest.mark.parametrize(("item", "field", "words"), [
    ({"share": "HIGHPRI"}, "share", "queue 'ml-c5-xlarge-queue' is FIFO: it has no shares"),
    ({"priority": 3}, "priority", "schedulingPriority only affects quota-share and fair-share queues"),
])
def test_the_reader_refuses_shares_and_priorities_on_a_fifo_queue(tmp_path, item, field, words):
    config = load(tmp_path, FAIR_FIFO)
    with pytest.raises(WorkloadError) as caught:
        parse_batch_jobs(config.batch, [job("x", CPU, 1, 0, 1) | item], where=("workload", "batch"))
    assert caught.value.path == ("workload", "batch", 0, field) and words in caught.value.message
    assert str(caught.value).startswith(f"workload.batch[0].{field}: ")


def test_the_reader_refuses_a_disabled_queue_and_a_disabled_quota_share(tmp_path):
    config = load(tmp_path, QUOTA.replace("      scheduling: quota_share\n", "      scheduling: quota_share\n"
                                                                                "      enabled: false\n"))
    with pytest.raises(WorkloadError, match=r"queue 'prod-p4d' is disabled \(batch.queues\[0\].enabled: false\)"):
        parse_batch_jobs(config.batch, [job("x", Q, 1, 0, 1, "ProdExp1")])
    config = load(tmp_path, QUOTA.replace("      max_priority: 99\n", "      max_priority: 99\n      enabled: false\n", 1))
    with pytest.raises(WorkloadError, match=r"quota share 'ProdExp1' is disabled") as caught:
        parse_batch_jobs(config.batch, [job("x", Q, 1, 0, 1, "ProdExp2"), job("y", Q, 1, 0, 1, "ProdExp1")])
    assert caught.value.path == ("batch_jobs", 1, "share")


def test_the_reader_refuses_a_name_used_twice_and_a_workload_without_batch(tmp_path):
    config = load(tmp_path, QUOTA)
    with pytest.raises(WorkloadError, match="job name 'x' is used twice") as caught:
        parse_batch_jobs(config.batch, [job("x", Q, 1, 0, 1, "ProdExp1"), job("x", Q, 1, 0, 1, "ProdExp1")])
    assert caught.value.path == ("batch_jobs", 1, "name")
    with pytest.raises(WorkloadError, match="expected a list of jobs"):
        parse_batch_jobs(config.batch, {"name": "x"})
    with pytest.raises(WorkloadError, match="no batch: section"):
        parse_batch_jobs(None, [])


@pytest.mark.parametrize(("edit", "item", "words"), [
    (("", ""), job("x", Q, 101, 0, 1, "ProdExp1"),
     "needs 101 instances of ml.p4d.24xlarge; service environment 'p4d' has at most 100"),
    (("max_priority: 99\n", "max_priority: 99\n      borrow_limit: 10\n"), job("x", Q, 67, 0, 1, "ProdExp1"),
     "quota share 'ProdExp1' holds 60 and may borrow at most 6 more while every other share is idle (66)"),
    (("sharing_strategy: LendAndBorrow", "sharing_strategy: Lend"), job("x", Q, 61, 0, 1, "ProdExp1"),
     "may borrow at most 0 more"),
    (("", ""), job("x", Q, 1, 0, 1, "ProdExp1") | {"instance_type": "ml.p5.48xlarge"},
     "service environment 'p4d' has no ml.p5.48xlarge capacity"),
])
def test_a_job_the_environment_can_never_serve_is_a_never_runs_reason_and_is_reported_unschedulable(
        tmp_path, edit, item, words):
    config = load(tmp_path, QUOTA.replace(*edit, 1))
    parsed = parse_batch_jobs(config.batch, [job("fine", Q, 1, 0, 1, "ProdExp2"), item])
    [never] = parsed.never_runs
    assert (never.index, never.job) == (1, "x") and words in never.reason
    result = simulate_batch(config, parsed.jobs)
    assert_all_settled(parsed.jobs, result)
    assert [e.job for e in result.unschedulable()] == ["x"] and words in result.unschedulable()[0].reason


def test_no_job_runs_on_a_disabled_service_environment(tmp_path):
    config = load(tmp_path, QUOTA.replace("{name: p4d, capacity", "{name: p4d, enabled: false, capacity"))
    parsed = parse_batch_jobs(config.batch, [job("x", Q, 1, 0, 1, "ProdExp1"), job("y", Q, 1, 5, 1, "ProdExp2")])
    assert [n.job for n in parsed.never_runs] == ["x", "y"]
    assert "service environment 'p4d' of queue 'prod-p4d' is disabled" in parsed.never_runs[0].reason
    result = simulate_batch(config, parsed.jobs)
    assert [(e.job, e.at) for e in result.unschedulable()] == [("x", 5), ("y", 5)]
    assert not [e for e in result.events if e.kind == "admitted"]


# --------------------------------------------------------------------------------------------- scale

def _mixed(n: int, seed: int) -> list[dict]:
    rnd = random.Random(seed)
    return [job(f"j{i}", Q, rnd.choice([1, 2, 4, 8, 15]), rnd.randrange(0, n * 30), rnd.randrange(60, 7200),
                rnd.choice(["ProdExp1", "ProdExp2"]), rnd.randrange(0, 100)) for i in range(n)]


def test_ten_thousand_jobs_with_preemptions_all_settle(tmp_path):
    """Every one of 10,000 jobs ends finished or unschedulable (how long it takes is make bench's: timed unit tests
    flake on a loaded machine)."""
    config = load(tmp_path, QUOTA)
    batch_jobs = jobs(config, *_mixed(10000, 7)).jobs
    result = simulate_batch(config, batch_jobs)
    assert_all_settled(batch_jobs, result)
    assert any(e.kind == "preempted" for e in result.events)
