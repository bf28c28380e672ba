"""The IAM principal rules: behaviour mutation testing found untested, at the API models' limits."""

from __future__ import annotations

import pytest
from support.rule_runner import (
    IAM,
    codes,
    limit,
    run,
)


@pytest.mark.parametrize("kind, shape", [("role", "roleNameType"), ("user", "userNameType")])
@pytest.mark.parametrize("extra", [0, 1])
def test_principal_name_at_the_iam_limit(write_config, kind, shape, extra):
    # The name is what follows the last slash of the path; the path itself does not count.
    name = "r" * (limit(IAM, shape) + extra)
    arn = f"arn:aws:iam::111122223333:{kind}/team/path/{name}"
    report = run(write_config, ("      - arn:aws:iam::111122223333:role/TeamJohn\n", f"      - {arn}\n"))
    assert codes(report) == ([("HPK111", "teams[0].principals[0]")] if extra else [])
    if extra:
        assert f"the {kind} name is longer than {limit(IAM, shape)} characters" in report.findings[0].message
