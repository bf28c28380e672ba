"""The rule catalogue as a whole (the base config is clean; findings word for word): behaviour mutation testing found untested, at the API models' limits."""

from __future__ import annotations

import pytest
from support.rule_runner import (
    WORD_FOR_WORD,
    codes,
    run,
)


def test_base_is_clean(write_config):
    assert codes(run(write_config)) == []

@pytest.mark.parametrize("edits, expected", [c[1:] for c in WORD_FOR_WORD], ids=[c[0] for c in WORD_FOR_WORD])
def test_findings_word_for_word(write_config, edits, expected):
    report = run(write_config, *edits)
    assert [(f.code, f.severity.value, f.path, f.message, f.hint) for f in report.findings] == expected
