"""Today's in-process scheduler decides, scenario by scenario, exactly what it decided before its speed work: the
digests of every decision and pending message recorded by scripts/simulate_decisions.py
(tests/support/simulate_decisions.py) from that scheduler."""

from __future__ import annotations

import pytest
from support.simulate_decisions import SCENARIOS, digest, recorded

FAST = ("classic-3000",)


@pytest.mark.parametrize("name", FAST)
def test_decisions_are_those_recorded_before_the_speed_work(name):
    assert digest(name) == recorded()[name]


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in SCENARIOS if n not in FAST])
def test_larger_scenarios_decide_as_recorded(name):
    assert digest(name) == recorded()[name]


def test_every_scenario_is_recorded():
    assert set(recorded()) == set(SCENARIOS)
