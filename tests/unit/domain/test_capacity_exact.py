"""Capacity amounts stay exact while whole amounts stay ints (summing thousands of teams is integer
arithmetic); the source of truth is Python's own exact Fraction arithmetic on the YAML texts."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from cdk_app.config.model import QuotaEntry, Team
from cdk_app.config.scalars import ScalarFloat
from cdk_app.domain.capacity import DIMENSIONS, Resources, per_instances, plain_number, quota_resources, teams_total
from cdk_app.domain.instance_types import CATALOGUE


def _team(name: str, *entries: QuotaEntry) -> Team:
    return Team.model_validate({"name": name, "quota": [e.model_dump(exclude_none=True) for e in entries]})


def test_decimal_texts_sum_exactly_and_come_out_whole():
    spec = CATALOGUE["ml.m7i.4xlarge"]
    a = quota_resources(QuotaEntry(instance_type=spec.name, vcpu=ScalarFloat(1.1, "1.1")), spec)
    b = quota_resources(QuotaEntry(instance_type=spec.name, vcpu=ScalarFloat(14.9, "14.9")), spec)
    total = a + b
    assert a.vcpu == Fraction("1.1") and b.vcpu == Fraction("14.9")
    assert total.vcpu == 16 and type(total.vcpu) is int
    assert total.count == Fraction(16, spec.vcpu) == 1 and type(total.count) is int
    assert (total - b).vcpu == Fraction("1.1")


def test_thirds_add_up_to_one_whole_instance():
    spec = CATALOGUE["ml.g5.12xlarge"]
    third = per_instances(spec, Fraction(1, 3))
    whole = third + third + third
    assert whole == per_instances(spec, 1)
    assert all(type(getattr(whole, d)) is int for d in DIMENSIONS)


def test_whole_quotas_of_many_teams_are_summed_as_ints():
    spec = CATALOGUE["ml.p5.48xlarge"]
    teams = tuple(_team(f"t{i}", QuotaEntry(instance_type=spec.name, count=2),
                        QuotaEntry(instance_type="ml.g5.12xlarge", accelerators=2)) for i in range(300))
    totals = teams_total(teams)
    p5, g5 = totals[spec.name], totals["ml.g5.12xlarge"]
    assert p5 == Resources(600, 600 * spec.accelerators, 600 * spec.vcpu, Fraction(600) * Fraction(str(spec.memory_gib)))
    g5_spec = CATALOGUE["ml.g5.12xlarge"]
    assert g5.count == Fraction(600, g5_spec.accelerators) and g5.accelerators == 600
    assert all(type(getattr(p5, d)) is int for d in DIMENSIONS)
    assert type(g5.accelerators) is int and type(g5.count) is int
    assert p5.to_json() == {"count": 600, "accelerators": 600 * spec.accelerators, "vcpu": 600 * spec.vcpu,
                            "memory_gib": int(600 * spec.memory_gib)}


def test_scaling_by_a_percent_is_exact_and_whole_where_it_can_be():
    half = Resources(3, 4, Fraction(1, 3), 10).scaled(Fraction(50, 100))
    assert half == Resources(Fraction(3, 2), 2, Fraction(1, 6), 5)
    assert type(half.accelerators) is int and type(half.memory_gib) is int and type(half.count) is Fraction


@pytest.mark.parametrize("value,expected", [(Fraction(160002, 10000), 16.0002), (Fraction(4, 3), 4 / 3),
                                            (Fraction(1, 10**6), 0.000001), (Fraction(9), 9)])
def test_json_amounts_are_not_rounded(value, expected):
    """validate --format json: 16.0002 reads 16.0002 (not 16.0 beside a capacity of 16), a third to the
    double's full precision, a whole amount as an integer."""
    amount = plain_number(value)
    assert amount == expected and type(amount) is type(expected)
    assert json.loads(json.dumps(amount)) == expected
