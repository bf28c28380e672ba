"""Capacity arithmetic: what the cluster has and what the teams reserve, per instance type.

Amounts are Fractions so that 3 x 1/3 of an instance sums to exactly 1 and a quota equal to the
capacity never reads as 0.0000001 over it.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction

from cdk_app.config.model import KitConfig, QuotaEntry, Team
from cdk_app.config.scalars import exact
from cdk_app.instance_types import CATALOGUE, InstanceSpec

DIMENSIONS = ("count", "accelerators", "vcpu", "memory_gib")
_UNITS = {"count": "instances", "accelerators": "accelerators", "vcpu": "vCPU", "memory_gib": "GiB memory"}


@dataclass(frozen=True, slots=True)
class Resources:
    count: Fraction = Fraction(0)
    accelerators: Fraction = Fraction(0)
    vcpu: Fraction = Fraction(0)
    memory_gib: Fraction = Fraction(0)

    def _pairwise(self, other: Resources, op: Callable[[Fraction, Fraction], Fraction]) -> Resources:
        return Resources(*(op(getattr(self, d), getattr(other, d)) for d in DIMENSIONS))

    def __add__(self, other: Resources) -> Resources:
        return self._pairwise(other, operator.add)

    def __sub__(self, other: Resources) -> Resources:
        return self._pairwise(other, operator.sub)

    def smaller(self, other: Resources) -> Resources:
        """Per dimension, the smaller of the two."""
        return self._pairwise(other, min)

    def larger(self, other: Resources) -> Resources:
        """Per dimension, the larger of the two."""
        return self._pairwise(other, max)

    def scaled(self, factor: Fraction) -> Resources:
        return Resources(*(getattr(self, d) * factor for d in DIMENSIONS))

    def exceeding(self, limit: Resources) -> list[str]:
        """Dimensions in which self is above limit."""
        return [d for d in DIMENSIONS if getattr(self, d) > getattr(limit, d)]

    def is_zero(self) -> bool:
        return all(getattr(self, d) == 0 for d in DIMENSIONS)

    def to_json(self) -> dict[str, float]:
        return {d: _number(getattr(self, d)) for d in DIMENSIONS}


def _number(value: Fraction) -> float | int:
    return int(value) if value.denominator == 1 else round(float(value), 3)


def describe(value: Fraction, dimension: str) -> str:
    return f"{_number(value)} {_UNITS[dimension]}"


def per_instances(spec: InstanceSpec, instances: Fraction) -> Resources:
    return Resources(
        instances,
        instances * spec.accelerators,
        instances * spec.vcpu,
        instances * exact(spec.memory_gib),
    )


def quota_resources(entry: QuotaEntry, spec: InstanceSpec) -> Resources:
    """A quota entry on the instance scale; amounts left out are filled in the instance's ratio. A count
    stands for whole instances: other amounts next to it must agree (the validator's HPK408), so the count
    alone is summed; accelerators on a type without any (HPK407) add nothing."""
    if entry.count is not None:
        return per_instances(spec, Fraction(entry.count))
    if entry.accelerators is not None and spec.accelerators:
        share = Fraction(entry.accelerators, spec.accelerators)
    elif entry.vcpu is not None:
        share = exact(entry.vcpu) / spec.vcpu
    elif entry.memory_gib is not None:
        share = exact(entry.memory_gib) / exact(spec.memory_gib)
    else:
        share = Fraction(0)
    filled = per_instances(spec, share)
    return Resources(
        share,
        Fraction(entry.accelerators) if entry.accelerators is not None and spec.accelerators else filled.accelerators,
        exact(entry.vcpu) if entry.vcpu is not None else filled.vcpu,
        exact(entry.memory_gib) if entry.memory_gib is not None else filled.memory_gib,
    )


def capacity_of(groups: Iterable[tuple[str, int]]) -> dict[str, Resources]:
    """Per known instance type, the resources of (instance type, count) pairs summed."""
    capacity: dict[str, Resources] = {}
    for instance_type, count in groups:
        spec = CATALOGUE.get(instance_type)
        if spec is not None:
            capacity[instance_type] = capacity.get(instance_type, Resources()) + per_instances(spec, Fraction(count))
    return capacity


def cluster_capacity(config: KitConfig) -> dict[str, Resources]:
    """Per known instance type, the resources of all instance groups of that type."""
    return capacity_of((group.instance_type, group.count) for group in config.hyperpod.instance_groups)


def reservations(quota: Iterable[QuotaEntry]) -> dict[str, Resources]:
    """Per known instance type, what quota entries reserve (duplicate entries add up)."""
    reserved: dict[str, Resources] = {}
    for entry in quota:
        spec = CATALOGUE.get(entry.instance_type)
        if spec is not None:
            reserved[entry.instance_type] = reserved.get(entry.instance_type, Resources()) + quota_resources(entry, spec)
    return reserved


def team_reservations(team: Team) -> dict[str, Resources]:
    """Per known instance type, what one team reserves."""
    return reservations(team.quota)


def teams_total(teams: tuple[Team, ...]) -> dict[str, Resources]:
    """Per known instance type, what all the given teams reserve together."""
    totals: dict[str, Resources] = {}
    for team in teams:
        for itype, res in team_reservations(team).items():
            totals[itype] = totals.get(itype, Resources()) + res
    return totals


def shared_pool_gap(capacity: dict[str, Resources], reserved: dict[str, Resources]) -> dict[str, Resources]:
    """What a shared pool would hold per cluster instance type: capacity minus the teams' sum."""
    return {itype: cap - reserved.get(itype, Resources()) for itype, cap in capacity.items()}


def shared_pool_quota(config: KitConfig) -> list[QuotaEntry]:
    """The shared pool's quota entries: whole instances where the gap is whole, else accelerators or vCPU."""
    entries: list[QuotaEntry] = []
    for itype, gap in shared_pool_gap(cluster_capacity(config), teams_total(config.teams)).items():
        # Nothing left, or the teams already over capacity in some dimension (the validator's HPK504).
        if gap.count <= 0 or any(getattr(gap, d) < 0 for d in DIMENSIONS):
            continue
        spec = CATALOGUE[itype]
        # Amounts computed here from a validated config are not validated again (model_construct): `validate`
        # would otherwise build QuotaEntry's own validator for these alone.
        if gap.count.denominator == 1:
            entries.append(QuotaEntry.model_construct(instance_type=itype, count=int(gap.count)))
        elif spec.accelerators and gap.accelerators.denominator == 1:
            entries.append(QuotaEntry.model_construct(instance_type=itype, accelerators=int(gap.accelerators)))
        else:
            entries.append(QuotaEntry.model_construct(instance_type=itype, vcpu=float(gap.vcpu),
                                                      memory_gib=float(gap.memory_gib)))
    return entries
