"""The adversarial corpus (tests/support/adversarial/cases.yaml): each hostile edit of a valid config gives exactly the
listed findings - code, field path and line - and the documented exit code, never a traceback."""

from __future__ import annotations

import pytest
from support.adversarial import BASE, CASES, case_text

from cdk_app.validator.report import check_file

UNREADABLE = {"HPK001", "HPK002", "HPK003", "HPK004", "HPK005"}


def marker_line(text: str, marker: str) -> int:
    """1-based line of `#<marker` (a bare `#<` when the marker is empty), which must be unique."""
    tag = f"#<{marker}"
    lines = [n for n, line in enumerate(text.splitlines(), 1)
             if tag in line and (marker or not line.split(tag, 1)[1][:1].isalnum())]
    assert len(lines) == 1, f"marker {tag!r} is on lines {lines}"
    return lines[0]


def test_corpus_is_large_and_ids_are_unique():
    ids = [case["id"] for case in CASES]
    assert len(ids) >= 150 and len(set(ids)) == len(ids)


def test_base_is_valid_without_findings(write_config):
    assert check_file(write_config(BASE)).findings == []


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(write_config, case):
    text = case_text(case)
    report = check_file(write_config(text))
    got = sorted((f.code, f.path, f.line) for f in report.findings)
    wanted = sorted((code, path, marker_line(text, rest[0] if rest else "")) for code, path, *rest in case["expect"])
    assert got == wanted, "\n".join(f.render() for f in report.findings)
    codes = {code for code, _, _ in wanted}
    errors = [f for f in report.findings if f.severity.value == "error"]
    assert report.exit_code == (2 if codes & UNREADABLE else 1 if errors else 0)
    shown = " ".join(f"{f.message} {f.hint}" for f in report.findings)
    for text_part in case.get("has", []):
        assert text_part in shown
