"""Kueue's own scheduler and preemption unit-test tables (v0.19.2), translated by hand (support.kueue_cases), run
through the real Kueue scheduler in-process (kueue-oracle, tests/k8s/kueue): the oracle must reproduce every
upstream expectation. This checks the oracle and the translation against each other, so that the oracle can be
trusted as the judge of what Kueue does with the kit's own queues.

The cases are built in memory at collection; nothing is read from disk. A case the translation marks `skip` (one
the oracle cannot run) is skipped with the translation's reason, and only such a case.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support import kueue_cases
from support.kueue_oracle import compare, run_oracle

CASES: dict[str, dict[str, Any]] = dict(kueue_cases.cases())
RUNNABLE = sorted(name for name, case in CASES.items() if not case.get("skip"))


@pytest.fixture(scope="module")
def outputs() -> dict[str, dict[str, Any]]:
    """The oracle's output per case name, each case run once and shared by the tests below."""
    return {}


def output_of(name: str, oracle: Path, outputs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    if name not in outputs:
        outputs[name] = run_oracle(oracle, CASES[name])
    return outputs[name]


def case_param(name: str) -> Any:
    skip = CASES[name].get("skip")
    return pytest.param(name, id=name, marks=[pytest.mark.skip(reason=skip)] if skip else [])


@pytest.mark.parametrize("name", [case_param(name) for name in sorted(CASES)])
def test_oracle_reproduces_the_upstream_expectation(name: str, oracle: Path,
                                                    outputs: dict[str, dict[str, Any]]) -> None:
    case = CASES[name]
    upstream = case["upstream"]
    where = f"{upstream['file']}:{upstream['line']} {upstream['test']} {case['name']!r}"
    assert compare(case, output_of(name, oracle, outputs)) == [], where


def test_every_table_is_translated(tmp_path_factory: pytest.TempPathFactory) -> None:
    assert len(CASES) >= 60
    per_table = Counter(case["upstream"]["test"] for case in CASES.values())
    assert set(per_table) == set(kueue_cases.TABLES)
    assert all(count > 0 for count in per_table.values()), per_table
    # a skip is the exception, each one argued in its case: "error during admission" needs an injected API error
    assert [name for name, case in CASES.items() if case.get("skip")] == ["schedule__error-during-admission"]
    # write_cases writes the same cases as files
    folder = tmp_path_factory.mktemp("kueue-cases")
    paths = kueue_cases.write_cases(folder)
    assert sorted(p.stem for p in paths) == sorted(CASES)
    assert all(json.loads(p.read_text()) == CASES[p.stem] for p in paths)


def test_oracle_is_deterministic(oracle: Path, outputs: dict[str, dict[str, Any]]) -> None:
    # the first case of each table: both modes, with and without fair sharing
    names = [next(n for n in RUNNABLE if CASES[n]["upstream"]["test"] == test) for test in kueue_cases.TABLES]
    for name in names:
        first = output_of(name, oracle, outputs)
        assert run_oracle(oracle, CASES[name]) == first, name


def test_a_wrong_expectation_is_detected(oracle: Path, outputs: dict[str, dict[str, Any]]) -> None:
    name = "schedule__assign-multiple-resources-and-flavors"
    case = copy.deepcopy(CASES[name])
    out = output_of(name, oracle, outputs)
    assert compare(case, out) == []
    # eng-beta/new's pod set "two" runs on spot; claim on-demand instead
    two = case["expected"]["assignments"]["eng-beta/new"]["podSetAssignments"][1]
    assert two["flavors"] == {"cpu": "spot"}
    two["flavors"]["cpu"] = "on-demand"
    diffs = compare(case, out)
    assert len(diffs) == 1 and diffs[0].startswith("assignments in cache"), diffs
