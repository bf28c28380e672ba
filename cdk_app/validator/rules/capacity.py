"""Cumulative team quota against the cluster's capacity, the shared pool and idle capacity."""

from __future__ import annotations

from fractions import Fraction

from cdk_app.config.model import (
    KitConfig,
    QuotaEntry,
)
from cdk_app.config.yaml_source import PathKey
from cdk_app.domain.capacity import (
    DIMENSIONS,
    Resources,
    cluster_capacity,
    describe,
    exact_text,
    shared_pool_gap,
    team_reservations,
)
from cdk_app.domain.reach import allocated, borrowers, sharing_enabled, unallocated
from cdk_app.validator.reporter import Reporter


def check_capacity(config: KitConfig, report: Reporter) -> None:
    capacity = cluster_capacity(config)
    totals: dict[str, Resources] = {}
    contributors: dict[str, list[tuple[str, Resources, PathKey, QuotaEntry]]] = {}
    for i, team in enumerate(config.teams):
        first: dict[str, int] = {}
        for j, entry in enumerate(team.quota):
            first.setdefault(entry.instance_type, j)
        for itype, reserved in team_reservations(team).items():
            totals[itype] = totals.get(itype, Resources()) + reserved
            j = first[itype]
            contributors.setdefault(itype, []).append((team.name, reserved, ("teams", i, "quota", j), team.quota[j]))
    for itype, entries in contributors.items():
        cap = capacity.get(itype, Resources())
        over = totals[itype].exceeding(cap)
        if over:
            _report_over(report, itype, over, totals[itype], cap, entries, present=itype in capacity)
        elif itype not in capacity:  # quota entries of zero on a type the cluster lacks
            for _, _, path, _ in entries:
                report.warning("HPK502", path + ("instance_type",),
                               f"the cluster has no {itype} instances, so this quota can never be used",
                               f"add an instance group of {itype} or remove the entry "
                               f"(the cluster has {', '.join(sorted(capacity)) or 'no known types'})")
    if config.shared_pool is not None:
        _check_shared_pool(config, capacity, totals, report)
    else:
        _check_idle(config, capacity, report)


def _unit(entry: QuotaEntry, over: list[str]) -> str:
    """The dimension to talk about for an entry: the one the admin wrote it in, if that one is over."""
    written = [d for d in ("count", "accelerators", "vcpu", "memory_gib") if getattr(entry, d) is not None]
    return next((d for d in written if d in over), over[0])


def _report_over(report: Reporter, itype: str, over: list[str], total: Resources, cap: Resources,
                 entries: list[tuple[str, Resources, PathKey, QuotaEntry]], present: bool) -> None:
    """One finding at each entry that reserves some of the type, naming every team's share in the entry's unit."""
    for _, reserved, path, entry in entries:
        if reserved.is_zero():
            continue
        dim = _unit(entry, over)
        shares = ", ".join(f"{name} {_amount(getattr(res, dim))}" for name, res, _, _ in entries)
        has = f"{describe(getattr(cap, dim), dim)}" if present else f"no {itype} instance group"
        report.error("HPK501", path,
                     f"teams reserve {describe(getattr(total, dim), dim)} of {itype} but the cluster has {has} "
                     f"(shares: {shares}; this entry {describe(getattr(reserved, dim), dim)})",
                     f"lower the quotas by {describe(getattr(total, dim) - getattr(cap, dim), dim)} "
                     f"or add {itype} capacity")


def _amount(value: Fraction) -> str:
    return exact_text(value)


def _check_shared_pool(config: KitConfig, capacity: dict[str, Resources], totals: dict[str, Resources],
                       report: Reporter) -> None:
    gaps = shared_pool_gap(capacity, totals)
    negative = sorted(t for t, gap in gaps.items() if any(getattr(gap, d) < 0 for d in DIMENSIONS))
    for itype in negative:
        dim = next(d for d in DIMENSIONS if getattr(gaps[itype], d) < 0)
        report.error("HPK504", ("shared_pool",),
                     f"the shared pool's {itype} quota would be {describe(getattr(gaps[itype], dim), dim)}",
                     "the other teams reserve more than the cluster has: lower their quotas first")
    if not negative and all(gap.is_zero() for gap in gaps.values()):
        report.warning("HPK505", ("shared_pool",), "the shared pool would hold nothing",
                       "the other teams reserve all capacity: lower their quotas or remove shared_pool")


def _check_idle(config: KitConfig, capacity: dict[str, Resources], report: Reporter) -> None:
    """Capacity no enabled allocation holds is usable only by a team that may borrow it (the reach rule,
    cdk_app.domain.reach: idle_resource_sharing Enabled, a LendAndBorrow team with a quota on the type)."""
    held = allocated(config)
    free = unallocated(config)
    sharing = sharing_enabled(config)
    for itype, gap in sorted(free.items()):
        if gap.count <= 0 or borrowers(config, itype):
            continue
        if held.get(itype, Resources()).is_zero():
            # Nobody holds any of the type: a team borrows only on types it has a quota for.
            for i, group in enumerate(config.hyperpod.instance_groups):
                if group.instance_type == itype and group.count > 0:
                    sharing_note = "" if sharing else " (and idle_resource_sharing is Disabled)"
                    report.warning("HPK503", ("hyperpod", "instance_groups", i, "instance_type"),
                                   f"no enabled team has a quota on {itype} and there is no shared pool, so no "
                                   f"team's job can use the {group.count} instance(s) of group '{group.name}'"
                                   f"{sharing_note}: a team borrows only on instance types it has a quota for",
                                   f"give a team a quota on {itype}, or add a shared_pool")
            continue
        why = ("idle_resource_sharing is Disabled" if not sharing
               else f"no enabled team with a quota on {itype} uses LendAndBorrow")
        path: PathKey = ("cluster_policy", "idle_resource_sharing") if not sharing else ("teams",)
        verb = "is" if gap.count == 1 else "are"
        report.warning("HPK503", path,
                       f"{describe(gap.count, 'count')} of {itype} {verb} held by no enabled team and {why}, "
                       "so no team can use them",
                       "give the capacity to teams, add a shared_pool, or let teams borrow")
