"""Cumulative team quota against the cluster's capacity, the shared pool and idle capacity."""

from __future__ import annotations

from fractions import Fraction

from cdk_app.config.model import (
    InstanceGroup,
    KitConfig,
    QuotaEntry,
)
from cdk_app.config.yaml_source import PathKey
from cdk_app.domain.capacity import (
    DIMENSIONS,
    Resources,
    cluster_capacity,
    config_shares,
    describe,
    exact_text,
    flexible_reliance,
    group_maximum,
    group_types,
    groups_capacity,
    node_cpus,
    partitioned_gpus,
    per_instances,
    shared_pool_gap,
    spot_backing,
    team_groups,
    team_reservations,
)
from cdk_app.domain.instance_types import CATALOGUE, node_vcpu
from cdk_app.domain.mig_profiles import MIG_CONFIG_LABEL
from cdk_app.domain.reach import allocated, borrowers, sharing_enabled, unallocated
from cdk_app.domain.system_nodes import system_group
from cdk_app.validator.reporter import Reporter


def check_capacity(config: KitConfig, report: Reporter) -> None:
    capacity = cluster_capacity(config)
    totals: dict[str, Resources] = {}
    contributors: dict[str, list[tuple[str, Resources, PathKey, QuotaEntry]]] = {}
    for i, team in enumerate(config.teams):
        first: dict[str, int] = {}
        for j, entry in enumerate(team.quota):
            first.setdefault(entry.instance_type, j)
        for itype, reserved in team_reservations(team, config_shares(config)).items():
            totals[itype] = totals.get(itype, Resources()) + reserved
            j = first[itype]
            contributors.setdefault(itype, []).append((team.name, reserved, ("teams", i, "quota", j), team.quota[j]))
    groups = team_groups(config)
    single_type = groups_capacity(g for g in groups if not g.fallback_instance_types)
    backing = spot_backing(config)
    unknown = [(i, g) for i, g in enumerate(groups) if any(t not in CATALOGUE for t in group_types(g))]
    for itype, entries in contributors.items():
        cap = capacity.get(itype, Resources())
        over = totals[itype].exceeding(cap)
        if over and unknown and itype in CATALOGUE:
            _report_over_any_type(report, itype, totals[itype], cap, entries, config, unknown, itype in capacity)
        elif over:
            _report_over(report, itype, over, totals[itype], cap, entries, present=itype in capacity,
                         partitioned=partitioned_gpus(groups).get(itype, 0))
        elif totals[itype].exceeding(single_type.get(itype, Resources())):
            flexible = [g.name for g in groups if itype in g.fallback_instance_types
                        or (g.fallback_instance_types and g.instance_type == itype)]
            _report_best_effort(report, "HPK530", entries,
                                f"reserve more {itype} than its single-type groups hold, so they count on flexible "
                                f"group(s) {', '.join(flexible)}, which may come up as another of their types",
                                f"add a group of only {itype}, or lower the quotas on it")
        elif not backing.get(itype, True):
            spot = [g.name for g in groups if g.capacity_type == "Spot" and itype in group_types(g)]
            _report_best_effort(report, "HPK531", entries,
                                f"reserve more {itype} than its On-Demand groups hold (fixed, and autoscaled ones at "
                                f"max_count), so they count on Spot group(s) {', '.join(spot)}, whose instances EC2 "
                                "may take back at any time",
                                f"add On-Demand {itype} capacity, or accept that this part of the quotas is best-effort")
        elif itype not in capacity:  # quota entries of zero on a type the cluster lacks
            for _, _, path, _ in entries:
                report.warning("HPK502", path + ("instance_type",),
                               f"the cluster has no {itype} instances, so this quota can never be used",
                               f"add an instance group of {itype} or remove the entry "
                               f"(the cluster has {', '.join(sorted(capacity)) or 'no known types'})")
    _check_flexible_reliance(config, report)
    _check_node_cpus(config, capacity, totals, report)
    _check_unknown_type_counts(config, report)
    if config.shared_pool is not None:
        _check_shared_pool(config, capacity, totals, report)
    else:
        _check_idle(config, capacity, report)


def _check_node_cpus(config: KitConfig, capacity: dict[str, Resources], totals: dict[str, Resources],
                     report: Reporter) -> None:
    """HPK540: a team's quota holds more vCPU of a type than all the type's nodes have. SageMaker counts a quota
    in the catalogue's vCPU whatever the groups' threads_per_core (Kueue's cpu nominalQuota is "Count x the full
    instance spec", task governance's mapping), while threads_per_core 1 leaves a node half of them
    (instance_types.node_vcpu): Kueue may then admit CPU requests no node can hold, whose pods stay pending
    while they hold the team's quota. Quotas above the full capacity are HPK501's, not this."""
    cpus = node_cpus(config)
    for i, team in enumerate(config.teams):
        if not team.enabled:
            continue  # no queue: Kueue admits nothing of it
        for itype, reserved in team_reservations(team, config_shares(config)).items():
            least, total = cpus.get(itype, (0, 0))
            if not total or not total < reserved.vcpu or totals[itype].exceeding(capacity.get(itype, Resources())):
                continue
            j = next(j for j, entry in enumerate(team.quota) if entry.instance_type == itype)
            halved = [g.name for g in team_groups(config) if itype in group_types(g) and group_maximum(g)
                      and node_vcpu(itype, g.threads_per_core) < CATALOGUE[itype].vcpu]
            report.warning("HPK540", ("teams", i, "quota", j),
                           f"team {team.name}'s quota holds {exact_text(reserved.vcpu)} vCPU of {itype} as SageMaker "
                           f"counts it (the type's full {CATALOGUE[itype].vcpu} vCPU per instance), but its nodes have "
                           f"{total} in all: threads_per_core 1 leaves a node {least} of them, so Kueue may admit CPU "
                           "requests no node can hold and their pods stay pending",
                           f"set threads_per_core: 2 on group(s) {', '.join(halved)}, or give the entry's vcpu "
                           f"itself, {total} or less (with accelerators or memory_gib instead of count)",
                           # Any group may run the type or be one whose threads_per_core was left out as broken.
                           reads=(("teams", i, "quota"), ("hyperpod", "instance_groups")))


def _check_unknown_type_counts(config: KitConfig, report: Reporter) -> None:
    """HPK501 for an instance type the catalogue lacks (a typo, reported as HPK201), where the quotas on it are
    whole instances: more instances reserved than its groups have is over capacity whatever the type turns out
    to be. The finding reads only those counts, so the typo does not hold it back (a quota in accelerators,
    vCPU or memory needs the type's sizes: nothing is said of it)."""
    groups: dict[str, list[PathKey]] = {}
    for i, group in enumerate(config.hyperpod.instance_groups):
        if group.instance_type not in CATALOGUE:
            groups.setdefault(group.instance_type, []).append(("hyperpod", "instance_groups", i))
    for itype, group_paths in groups.items():
        entries = [(team.name, entry, ("teams", i, "quota", j)) for i, team in enumerate(config.teams)
                   for j, entry in enumerate(team.quota) if entry.instance_type == itype]
        if not entries or any(entry.count is None or entry.accelerators is not None or entry.vcpu is not None
                              or entry.memory_gib is not None for _, entry, _ in entries):
            continue
        capacity = sum(config.hyperpod.instance_groups[path[2]].count for path in group_paths)
        reserved = sum(entry.count for _, entry, _ in entries)
        if reserved <= capacity:
            continue
        reads = tuple(path + ("count",) for path in group_paths) + tuple(path + ("count",) for _, _, path in entries)
        shares = ", ".join(f"{name} {entry.count}" for name, entry, _ in entries)
        for _, entry, path in entries:
            if entry.count:
                report.error("HPK501", path + ("count",),
                             f"teams reserve {describe(reserved, 'count')} of {itype} but its instance groups have "
                             f"{describe(capacity, 'count')} (shares: {shares}; this entry {entry.count})",
                             f"lower the quotas by {describe(reserved - capacity, 'count')} or add {itype} "
                             "capacity (whatever the type's right name, see HPK201 above)", reads)


def _unit(entry: QuotaEntry, over: list[str]) -> str:
    """The dimension to talk about for an entry: the one the admin wrote it in, if that one is over."""
    written = [d for d in ("count", "accelerators", "vcpu", "memory_gib") if getattr(entry, d) is not None]
    return next((d for d in written if d in over), over[0])


def _report_over(report: Reporter, itype: str, over: list[str], total: Resources, cap: Resources,
                 entries: list[tuple[str, Resources, PathKey, QuotaEntry]], present: bool, partitioned: int = 0) -> None:
    """One finding at each entry that reserves some of the type, naming every team's share in the entry's unit;
    `partitioned`: the type's GPUs MIG partitions, which are no whole ones (capacity.groups_capacity)."""
    for _, reserved, path, entry in entries:
        if reserved.is_zero():
            continue
        dim = _unit(entry, over)
        shares = ", ".join(f"{name} {_amount(getattr(res, dim))}" for name, res, _, _ in entries)
        has = f"{describe(getattr(cap, dim), dim)}" if present else f"no {itype} instance group"
        if dim == "accelerators" and partitioned:
            has += (f" ({partitioned} more of its GPUs are partitioned by their groups' {MIG_CONFIG_LABEL} label - "
                    "whichever of its types a flexible group comes up as - and offered only as MIG partitions)")
        report.error("HPK501", path,
                     f"teams reserve {describe(getattr(total, dim), dim)} of {itype} but the cluster has {has} "
                     f"(shares: {shares}; this entry {describe(getattr(reserved, dim), dim)})",
                     f"lower the quotas by {describe(getattr(total, dim) - getattr(cap, dim), dim)} "
                     f"or add {itype} capacity")


def _report_over_any_type(report: Reporter, itype: str, total: Resources, cap: Resources,
                           entries: list[tuple[str, Resources, PathKey, QuotaEntry]], config: KitConfig,
                           unknown: list[tuple[int, InstanceGroup]], present: bool) -> None:
    """HPK501 while some group's type is unknown (HPK201): that group may be meant as `itype`, so the capacity is
    only known to lie between what the other groups give and that plus every unknown group at its maximum as
    `itype`. Quotas over even the upper bound are over capacity whatever the typo turns out to be, and the
    finding reads only the counts (so it is not held back); quotas between the bounds are reported as over the
    known groups and held back by the validator until the type is fixed."""
    names = ", ".join(g.name for _, g in unknown)
    upper = cap + per_instances(CATALOGUE[itype], sum(group_maximum(g) for _, g in unknown))
    over = total.exceeding(upper)
    if not over:
        _report_over(report, itype, total.exceeding(cap), total, cap, entries, present)
        return
    groups = config.hyperpod.instance_groups
    reads = tuple(path for _, _, path, _ in entries) + tuple(
        ("hyperpod", "instance_groups", i, key) for i in range(len(groups)) for key in ("count", "max_count"))
    for _, reserved, path, entry in entries:
        if reserved.is_zero():
            continue
        dim = _unit(entry, over)
        shares = ", ".join(f"{name} {_amount(getattr(res, dim))}" for name, res, _, _ in entries)
        report.error("HPK501", path,
                     f"teams reserve {describe(getattr(total, dim), dim)} of {itype}, more than the cluster could "
                     f"have even if group(s) {names}, whose instance type is not known (HPK201), were {itype}: "
                     f"{describe(getattr(upper, dim), dim)} at most (shares: {shares}; this entry "
                     f"{describe(getattr(reserved, dim), dim)})",
                     f"lower the quotas by at least {describe(getattr(total, dim) - getattr(upper, dim), dim)} "
                     f"or add {itype} capacity (fix the type in HPK201 first: the exact amount depends on it)", reads)


def _check_flexible_reliance(config: KitConfig, report: Reporter) -> None:
    """Each type's quotas may fit a flexible group on their own (HPK530) while all of them together need more
    instances than the flexible groups have (capacity.GroupsCover)."""
    cover = flexible_reliance(config)
    if not cover.short:
        return
    serving = [i for i, g in enumerate(config.hyperpod.instance_groups) if g.name in cover.groups]
    first = serving[0] if serving else next(i for i, g in enumerate(config.hyperpod.instance_groups)
                                            if g.fallback_instance_types)
    report.error("HPK532", ("hyperpod", "instance_groups", first, "fallback_instance_types"),
                 f"the teams' quotas need {sum(cover.need.values())} instances from flexible group(s) "
                 f"{', '.join(cover.groups)} ({cover.needs_text()}) beyond the single-type groups, but those groups "
                 f"can give {cover.given} of them at once",
                 "add single-type groups for those types, make the flexible groups larger, or lower the quotas")


def _report_best_effort(report: Reporter, code: str, entries: list[tuple[str, Resources, PathKey, QuotaEntry]],
                        why: str, hint: str) -> None:
    """A warning at each entry that reserves some of a type whose quotas fit only with best-effort capacity."""
    for _, reserved, path, _ in entries:
        if not reserved.is_zero():
            report.warning(code, path, f"the teams' quotas {why}", hint)


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
            # Nobody holds any of the type: a team borrows only on types it has a quota for. The system group's
            # nodes are meant for no team (hyperpod.system_instance_group).
            system = system_group(config)
            for i, group in enumerate(config.hyperpod.instance_groups):
                # A flexible group is idle only when none of its types is held; reported once, at its first.
                types = group_types(group)
                unheld = all(held.get(t, Resources()).is_zero() for t in types)
                if (unheld and itype in types and itype == next(t for t in types if t in free)
                        and group_maximum(group) > 0 and group is not system):
                    sharing_note = "" if sharing else " (and idle_resource_sharing is Disabled)"
                    report.warning("HPK503", ("hyperpod", "instance_groups", i, "instance_type"),
                                   f"no enabled team has a quota on {itype} and there is no shared pool, so no "
                                   f"team's job can use the {group_maximum(group)} instance(s) of group '{group.name}'"
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
