"""Kueue v0.19.2's own scheduler and preemption unit-test tables, translated by hand into kueue-oracle cases
(tests/k8s/kueue): each case is the cluster state an upstream test case sets up, as oracle input, and the
outcome the upstream test expects. tests/realk8s/test_kueue_upstream_cases.py runs every case through the
real Kueue scheduler (support.kueue_oracle) and compares.

    schedule         pkg/scheduler/scheduler_test.go TestSchedule
    preemption       pkg/scheduler/preemption/preemption_test.go TestPreemption
    fair_preemption  pkg/scheduler/preemption/preemption_fair_test.go TestFairPreemptions (first 15 cases)

A case is a (name, document) pair; the name, "<table>__<slug of the upstream case name>", is also the stem of
its file when written. A document holds `name` (the upstream case name), `upstream` ({file, test, case, line}),
`input` (what the oracle reads on stdin), `expected` (the upstream expectation, in the keys
support.kueue_oracle.compare checks), and optionally `note` (where the translation had to choose) and `skip` (why
the oracle cannot run the case).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from . import fair_preemption, preemption, schedule

TABLES = {
    "TestSchedule": schedule,
    "TestPreemption": preemption,
    "TestFairPreemptions": fair_preemption,
}


def cases() -> list[tuple[str, dict[str, Any]]]:
    """Every translated case of every table, built in memory (nothing is written). The documents are the
    caller's own: they share no objects with one another or with a later call."""
    out: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    for table in TABLES.values():
        for name, doc in table.cases():
            if name in seen:
                raise ValueError(f"two Kueue cases are named {name}")
            seen.add(name)
            out.append((name, copy.deepcopy(doc)))
    return out


def write_cases(folder: Path) -> list[Path]:
    """Write every case as <folder>/<name>.json; the paths written, in the order of cases()."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, doc in cases():
        path = folder / f"{name}.json"
        path.write_text(json.dumps(doc, indent=1) + "\n")
        paths.append(path)
    return paths
