"""The in-process scheduler's shortcuts (cdk_app.simulate.kueue.scheduler and what it calls) against the full
computation they skip, which the real-Kueue agreement tests hold to Kueue v0.19.2: on random contended timelines,
classic and fair sharing, reclaimWithinCohort Any and LowerPriority, every decision, every job's events and every
pending message are the same with the shortcuts as without them - and the shortcuts were taken."""

from __future__ import annotations

from support.simulate_scenarios import random_config, scenario_file

from cdk_app.domain.kueue_mapping import Choices
from cdk_app.simulate.engine import simulate
from cdk_app.simulate.governance import pool_quota, queue_quotas, setup_document
from cdk_app.simulate.kueue import fair_sharing as fs
from cdk_app.simulate.kueue import objects as o
from cdk_app.simulate.kueue.flavors import PREEMPT, FlavorAssigner
from cdk_app.simulate.kueue.preemption import Preemption
from cdk_app.simulate.kueue.scheduler import KueueScheduler, Nomination
from cdk_app.simulate.run import cluster_resources

DAY = 24 * 3600
# (seed, teams, nodes, jobs): a day of more work than the nodes hold; the seed draws fair sharing on or off
CASES = [(1, 6, 8, 80), (2, 6, 10, 90), (5, 6, 10, 90), (11, 6, 8, 90)]


def _run(seed: int, teams: int, nodes: int, jobs: int, reclaim: str):
    config = random_config(seed, teams, nodes)
    workload = scenario_file(seed, config, jobs, DAY)
    doc = setup_document(config, Choices(reclaim_within_cohort=reclaim))
    scheduler = KueueScheduler(doc)
    timeline = simulate(workload.jobs, scheduler, queue_quotas(config, doc), pool_quota(doc),
                        cluster_resources(config), trace=True)
    events = [(r.job.name, [(e.at, e.event, e.flavor, tuple(sorted(e.borrowed.items())), e.by, e.reason, e.seq)
                            for e in r.events], r.pending) for r in timeline.jobs]
    return timeline.decisions, events, dict(scheduler.pending()), timeline.loop


def _drs_by_removal(cq: o.ClusterQueue, usage):
    o.remove_usage(cq, usage)
    share = fs.drs(cq)
    o.add_usage(cq, usage)
    return share


def test_skipped_preemption_work_changes_no_decision_event_or_message(monkeypatch):
    taken = {"settled by one resource": 0, "deferred": 0, "resolved": 0, "share without": 0, "reused": 0,
             "settled on own terms": 0, "hopeless_as asked": 0}
    hopeless_as, resolve, fits = Preemption.hopeless_as, FlavorAssigner.resolve, FlavorAssigner._fits
    drs_without, holds, hopeless, targets = fs.drs_without, Nomination.holds, KueueScheduler._hopeless, Preemption.targets
    nominate = KueueScheduler._nominate

    def counting_hopeless_as(p, fr):
        taken["hopeless_as asked"] += 1
        settled = hopeless_as(p, fr)
        taken["settled by one resource"] += settled
        return settled

    def counting_fits(self, fr, assumed, request, defer=None):
        before = len(self.deferred)
        out = fits(self, fr, assumed, request, defer)
        taken["deferred"] += len(self.deferred) - before
        return out

    def counting_resolve(self, result):
        taken["resolved"] += len(self.deferred)
        resolve(self, result)

    def counting_drs_without(cq, usage):
        taken["share without"] += 1
        share = drs_without(cq, usage)
        assert share == _drs_by_removal(cq, usage)
        return share

    def counting_holds(self, cq, tried):
        held = holds(self, cq, tried)
        taken["reused"] += held
        return held

    def counting_nominate(self, cq, info):
        # a nomination in Preempt mode that neither reused an outcome nor reached hopeless_as or targets()
        calls = {"targets": 0}
        reused, asked = taken["reused"], taken["hopeless_as asked"]

        def counting_targets(preemption, p):
            calls["targets"] += 1
            return targets(preemption, p)

        with monkeypatch.context() as inner:
            inner.setattr(Preemption, "targets", counting_targets)
            entry = nominate(self, cq, info)
        if entry.mode == PREEMPT and taken["reused"] == reused and taken["hopeless_as asked"] == asked \
                and not calls["targets"]:
            taken["settled on own terms"] += 1
        return entry

    def full_fits(self, fr, assumed, request, defer=None):
        return fits(self, fr, assumed, request, None)

    def bound_reading_the_cohort(self, cq, info, fr, value, available):
        self.preemption.cohort_reads += 1  # as if every bound had read the other queues: none settles on own terms
        return hopeless(self, cq, info, fr, value, available)

    fair = set()
    for seed, teams, nodes, jobs in CASES:
        if KueueScheduler(setup_document(random_config(seed, teams, nodes))).fair:
            fair.add(seed)
        for reclaim in ("Any", "LowerPriority"):
            with monkeypatch.context() as patch:
                patch.setattr(Preemption, "hopeless_as", staticmethod(counting_hopeless_as))
                patch.setattr(FlavorAssigner, "_fits", counting_fits)
                patch.setattr(FlavorAssigner, "resolve", counting_resolve)
                patch.setattr(fs, "drs_without", counting_drs_without)
                patch.setattr(Nomination, "holds", counting_holds)
                patch.setattr(KueueScheduler, "_nominate", counting_nominate)
                fast = _run(seed, teams, nodes, jobs, reclaim)
            # the full computation: every nomination computed afresh, every multi-resource bound computed, every
            # simulation run where the flavor assigner meets it, every share computed on the snapshot with the
            # candidate removed
            with monkeypatch.context() as patch:
                patch.setattr(Preemption, "hopeless_as", staticmethod(lambda p, fr: False))
                patch.setattr(FlavorAssigner, "_fits", full_fits)
                patch.setattr(fs, "drs_without", _drs_by_removal)
                patch.setattr(Nomination, "holds", lambda self, cq, tried: False)
                patch.setattr(KueueScheduler, "_hopeless", bound_reading_the_cohort)
                full = _run(seed, teams, nodes, jobs, reclaim)
            assert fast == full, (seed, reclaim)
    assert fair and fair != {seed for seed, *_ in CASES}  # both kinds of environment were run
    assert taken["settled by one resource"] > 0
    assert taken["deferred"] > taken["resolved"] > 0  # some deferred simulations never ran, some did
    assert taken["share without"] > 0
    assert taken["reused"] > 0
    assert taken["settled on own terms"] > 0
