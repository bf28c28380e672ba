"""Batch rules behaviour that mutation testing of cdk_app/validator/batch_rules.py found untested (issue 15).

Limits are read from botocore's batch model (the documentation of ShareAttributes.shareIdentifier states the
255-character and 500-identifier limits) and tested on both sides of the edge; the config is
tests/test_batch_bad_inputs.py's valid BASE (two fair-share teams, high and low, on queue fair-q).
"""

from __future__ import annotations

import re

import botocore.session
import pytest

from cdk_app.validator.report import check_file
from test_batch_bad_inputs import BASE, edit

SHARE_DOC = botocore.session.get_session().get_service_model("batch").shape_for("ShareAttributes") \
    .members["shareIdentifier"].documentation
MAX_SHARE_CHARS = int(re.search(r"limited to (\d+) alphanumeric characters", SHARE_DOC)[1])
MAX_ACTIVE_SHARES = int(re.search(r"no more than (\d+) share identifiers active", SHARE_DOC)[1])
HIGH_SHARE = "      share_identifier: HIGHPRI\n"


def codes(write_config, text: str) -> list[tuple[str, str]]:
    return sorted((f.code, f.path) for f in check_file(write_config(text)).findings)


def test_base_is_clean(write_config):
    assert codes(write_config, BASE) == []


@pytest.mark.parametrize("identifier, allowed", [
    ("A" * MAX_SHARE_CHARS, True), ("A" * (MAX_SHARE_CHARS + 1), False), ("a1B2", True), ("HIGH-PRI", False),
    ("HIGH_PRI", False), ("'HIGH PRI'", False), ('"HIGH\\n"', False), ("HIGH*", False),
])
def test_share_identifier_is_letters_and_digits_up_to_the_limit(write_config, identifier, allowed):
    found = codes(write_config, edit(HIGH_SHARE, f"      share_identifier: {identifier}\n"))
    assert found == ([] if allowed else [("HPK707", "batch.teams[2].share_identifier")])


@pytest.mark.parametrize("extra", [0, 1])
def test_active_share_identifiers_per_queue_at_the_limit(write_config, extra):
    # high and low are two; fill the queue to the limit, then one more.
    teams = "".join(f"    - {{name: t{i}, queues: [fair-q], share_identifier: S{i}}}\n"
                    for i in range(MAX_ACTIVE_SHARES - 2 + extra))
    report = check_file(write_config(BASE + teams))
    assert [(f.code, f.path) for f in report.findings] == ([("HPK708", "batch.queues[1].name")] if extra else [])
    if extra:
        assert report.findings[0].message == f"{MAX_ACTIVE_SHARES + 1} share identifiers on queue 'fair-q'"
        assert report.findings[0].hint == f"a queue holds at most {MAX_ACTIVE_SHARES} active share identifiers"
